package server

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// reuseAllocator is an Arrow allocator that keeps the buffers Arrow frees
// and hands them out again. A signals snapshot or a push builds megabytes
// of column buffers that live only until their IPC stream is written;
// fresh ones cost more in zeroing and page faults than filling them.
//
// Reuse is safe because Arrow frees a buffer only when its last reference
// is released, and the tracer releases every record once its stream is
// written. A reused buffer is not zeroed: trace.Recorder.BatchFiltered
// writes every byte of every buffer it asks for, and the IPC writer sends
// only a buffer's length, padding with its own zeros.
type reuseAllocator struct {
	mu   sync.Mutex
	free [][]byte // at full capacity
	kept int      // bytes in free
	max  int      // bytes free may hold; beyond, freed buffers go to the GC
}

// minReused is the smallest buffer worth keeping: below it the Go
// allocator is as cheap as a search of the free list.
const minReused = 4 << 10

func newReuseAllocator(max int) *reuseAllocator { return &reuseAllocator{max: max} }

// Allocate hands out the smallest free buffer that holds size bytes and is
// at most twice that, so a small column does not pin a large buffer; else
// a new one from the Go allocator (64-byte aligned, as Arrow wants).
func (a *reuseAllocator) Allocate(size int) []byte {
	if size >= minReused {
		a.mu.Lock()
		best := -1
		for i, b := range a.free {
			if c := cap(b); c >= size && c <= 2*size && (best < 0 || c < cap(a.free[best])) {
				best = i
			}
		}
		if best >= 0 {
			b := a.free[best]
			last := len(a.free) - 1
			a.free[best], a.free[last] = a.free[last], nil
			a.free = a.free[:last]
			a.kept -= cap(b)
			a.mu.Unlock()
			return b[:size]
		}
		a.mu.Unlock()
	}
	return memory.DefaultAllocator.Allocate(size)
}

// Reallocate grows b to size, keeping its bytes.
func (a *reuseAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free keeps b for reuse while the free list has room.
func (a *reuseAllocator) Free(b []byte) {
	c := cap(b)
	if c < minReused {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kept+c > a.max {
		return
	}
	a.free = append(a.free, b[:c])
	a.kept += c
}
