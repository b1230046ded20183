package server

import "sync"

// pool is a byte budget shared by the server's connections: what decoded
// requests or session estimates hold. It never waits: a request that does
// not fit is refused, so no connection can stall another's reader.
type pool struct {
	mu   sync.Mutex
	used int64
	max  int64
}

func newPool(max int64) *pool { return &pool{max: max} }

// tryAcquire takes n bytes if they fit.
func (p *pool) tryAcquire(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > p.max-p.used {
		return false
	}
	p.used += n
	return true
}

// release returns n bytes.
func (p *pool) release(n int64) {
	p.mu.Lock()
	p.used -= n
	if p.used < 0 {
		p.mu.Unlock()
		panic("server: pool released more than it held")
	}
	p.mu.Unlock()
}

// inUse is the bytes held now.
func (p *pool) inUse() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}
