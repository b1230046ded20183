// Package server exposes simulation sessions over websocket + msgpack, as
// proto/README.md specifies: one reader and one writer goroutine per
// connection, one goroutine per session, bounded queues everywhere, and
// Arrow IPC streams for trace data.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"

	"github.com/ccscope/ccscope/engine/sim"
)

// ProtocolVersion is the wire protocol version this server speaks.
const ProtocolVersion = "1.0"

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	// Token must accompany every connection. Empty is refused unless
	// InsecureNoToken is set.
	Token string
	// InsecureNoToken accepts connections without a token; the command
	// allows it on loopback addresses only.
	InsecureNoToken bool

	MaxSessions        int           // per server; default 256
	MaxSessionsPerConn int           // per connection; default 64
	MaxEvents          uint64        // per session; default 10^10
	MaxSimTime         sim.Duration  // per session horizon; default 24 h
	MaxMessageBytes    int64         // request size; default 16 MiB
	IdleTimeout        time.Duration // a session untouched this long is closed; default 30 min
	WriteTimeout       time.Duration // one frame's write; a client stalled longer is dropped; default 60 s
	WriteBudget        int64         // bytes queued per connection before senders wait; default 8 MiB
	ProgressEvery      time.Duration // progress pushes during run; default 100 ms
	MaxTraceRows       int64         // trace rows a session keeps for the signals op; default 4 Mi

	// Logger receives lifecycle and error lines; default zerolog.Nop().
	Logger *zerolog.Logger
}

func (o *Options) defaults() {
	set := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	set(&o.MaxSessions, 256)
	set(&o.MaxSessionsPerConn, 64)
	if o.MaxEvents == 0 {
		o.MaxEvents = 1e10
	}
	if o.MaxSimTime <= 0 {
		o.MaxSimTime = 24 * 3600 * sim.Second
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 16 << 20
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 60 * time.Second
	}
	if o.WriteBudget <= 0 {
		o.WriteBudget = 8 << 20
	}
	if o.MaxTraceRows <= 0 {
		o.MaxTraceRows = 4 << 20
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 100 * time.Millisecond
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
}

// Server serves sessions. It is an http.Handler for the websocket endpoint.
type Server struct {
	opts     Options
	log      zerolog.Logger
	upgrader websocket.Upgrader
	start    time.Time

	mu       sync.Mutex
	sessions map[string]*session
	conns    map[*conn]struct{}
	nextID   uint64
	closing  bool
	wg       sync.WaitGroup // connections and sessions
}

// New returns a server. It refuses options without a token unless
// InsecureNoToken is set.
func New(opts Options) (*Server, error) {
	opts.defaults()
	if opts.Token == "" && !opts.InsecureNoToken {
		return nil, errors.New("server: a token is required (or InsecureNoToken)")
	}
	s := &Server{opts: opts, log: *opts.Logger, start: time.Now(),
		sessions: map[string]*session{}, conns: map[*conn]struct{}{}}
	// gorilla's default origin check accepts a request without Origin and
	// one whose Origin host equals Host, and answers others 403.
	s.upgrader = websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	return s, nil
}

// ServeHTTP authenticates and upgrades a connection, then serves it until it
// closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.log.Warn().Str("remote", r.RemoteAddr).Msg("connection refused: bad or missing token")
		http.Error(w, "ccscope: missing or wrong token", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closing {
		http.Error(w, "ccscope: shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.log.Warn().Err(err).Str("remote", r.RemoteAddr).Msg("upgrade failed")
		return
	}
	c := newConn(s, ws, r.RemoteAddr)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.closeWith(websocket.CloseGoingAway, "server shutting down")
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	c.serve()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// authorized checks the token in the Authorization header or the query.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return s.opts.InsecureNoToken
	}
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			got = t
		}
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// Shutdown closes every connection (close code 1001) and session, and
// waits for their goroutines or ctx's end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.closeWith(websocket.CloseGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addSession registers a session under a fresh id, within the limits. The
// caller holds c.mu.
func (s *Server) addSession(c *conn, sess *session) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errorf(CodeLimit, "", "the server is shutting down")
	}
	if len(s.sessions) >= s.opts.MaxSessions {
		return errorf(CodeLimit, "", "the server has its maximum of %d sessions", s.opts.MaxSessions)
	}
	if len(c.sessions) >= s.opts.MaxSessionsPerConn {
		return errorf(CodeLimit, "", "this connection has its maximum of %d sessions", s.opts.MaxSessionsPerConn)
	}
	s.nextID++
	sess.id = "s" + strconv.FormatUint(s.nextID, 10)
	s.sessions[sess.id] = sess
	s.wg.Add(1)
	return nil
}

func (s *Server) removeSession(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

// Stats is the stats op's result.
type Stats struct {
	Sessions           int     `msgpack:"sessions"`
	ConnectionSessions int     `msgpack:"connection_sessions"`
	Connections        int     `msgpack:"connections"`
	HeapInuseBytes     uint64  `msgpack:"heap_inuse_bytes"`
	Goroutines         int     `msgpack:"goroutines"`
	UptimeS            float64 `msgpack:"uptime_s"`
}

func (s *Server) stats(c *conn) Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.mu.Lock()
	st := Stats{Sessions: len(s.sessions), Connections: len(s.conns)}
	s.mu.Unlock()
	st.ConnectionSessions = c.sessionCount()
	st.HeapInuseBytes = ms.HeapInuse
	st.Goroutines = runtime.NumGoroutine()
	st.UptimeS = time.Since(s.start).Seconds()
	return st
}
