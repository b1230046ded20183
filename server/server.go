// Package server exposes simulation sessions over websocket + msgpack, as
// proto/README.md specifies: one reader and one writer goroutine per
// connection, one goroutine per session, bounded queues everywhere, and
// Arrow IPC streams for trace data.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
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
const ProtocolVersion = "1.4"

// Options configure a Server. Zero values take the defaults noted; New
// refuses negative ones.
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
	ConnIdleTimeout    time.Duration // a connection with no request and no session this long is closed (4001); default IdleTimeout
	WriteTimeout       time.Duration // one frame's write; a client stalled longer is dropped; default 60 s
	PingInterval       time.Duration // websocket pings on a connection, for intermediaries that drop quiet ones; default 30 s
	WriteBudget        int64         // bytes queued per connection before senders wait; default 8 MiB
	ProgressEvery      time.Duration // progress pushes during run; default 100 ms
	MaxTraceRows       int64         // trace rows a session keeps for the signals op; default 4 Mi

	// Scenario size, checked before a session is built: nodes, links,
	// flows (after any expansion the scenario format does) and scheduled
	// changes. Defaults 10,000 nodes, 20,000 links, 10,000 flows, 100,000
	// changes.
	MaxNodes   int
	MaxLinks   int
	MaxFlows   int
	MaxChanges int
	// MaxSessionBytes bounds a session's estimated memory (SessionBytes),
	// checked before it is built; default 1 GiB.
	MaxSessionBytes int64
	// MaxBuilds is how many session builds (open, restore, fork) run at
	// once on the server; default GOMAXPROCS.
	MaxBuilds int
	// MaxReplayTime is the wall-time budget of one restore or fork's
	// replay; default 2 min.
	MaxReplayTime time.Duration
	// MaxDecodedBytes bounds the estimated heap one request's decoded
	// arguments may take; default 4 × MaxMessageBytes. MaxDecodedTotal
	// bounds it over every request the server holds (decoded, not yet
	// answered); default 16 × MaxMessageBytes, and at least MaxDecodedBytes.
	MaxDecodedBytes int64
	MaxDecodedTotal int64

	// Logger receives lifecycle and error lines; default zerolog.Nop().
	Logger *zerolog.Logger
}

// orDefault sets *p to v when it is zero, and notes a negative *p in bad
// under name.
func orDefault[T ~int | ~int64](bad *[]string, name string, p *T, v T) {
	switch {
	case *p < 0:
		*bad = append(*bad, name)
	case *p == 0:
		*p = v
	}
}

// defaults fills in the options left zero, and refuses negative ones: a
// negative limit is a mistake, which a silent default would hide.
func (o *Options) defaults() error {
	var bad []string
	orDefault(&bad, "MaxSessions", &o.MaxSessions, 256)
	orDefault(&bad, "MaxSessionsPerConn", &o.MaxSessionsPerConn, 64)
	if o.MaxEvents == 0 {
		o.MaxEvents = 1e10
	}
	orDefault(&bad, "MaxSimTime", &o.MaxSimTime, 24*3600*sim.Second)
	orDefault(&bad, "MaxMessageBytes", &o.MaxMessageBytes, 16<<20)
	orDefault(&bad, "IdleTimeout", &o.IdleTimeout, 30*time.Minute)
	orDefault(&bad, "ConnIdleTimeout", &o.ConnIdleTimeout, o.IdleTimeout)
	orDefault(&bad, "WriteTimeout", &o.WriteTimeout, 60*time.Second)
	orDefault(&bad, "PingInterval", &o.PingInterval, 30*time.Second)
	orDefault(&bad, "WriteBudget", &o.WriteBudget, 8<<20)
	orDefault(&bad, "MaxTraceRows", &o.MaxTraceRows, 4<<20)
	orDefault(&bad, "MaxNodes", &o.MaxNodes, 10_000)
	orDefault(&bad, "MaxLinks", &o.MaxLinks, 20_000)
	orDefault(&bad, "MaxFlows", &o.MaxFlows, 10_000)
	orDefault(&bad, "MaxChanges", &o.MaxChanges, 100_000)
	orDefault(&bad, "MaxBuilds", &o.MaxBuilds, runtime.GOMAXPROCS(0))
	orDefault(&bad, "MaxSessionBytes", &o.MaxSessionBytes, 1<<30)
	orDefault(&bad, "MaxReplayTime", &o.MaxReplayTime, 2*time.Minute)
	orDefault(&bad, "MaxDecodedBytes", &o.MaxDecodedBytes, 4*o.MaxMessageBytes)
	orDefault(&bad, "MaxDecodedTotal", &o.MaxDecodedTotal, 16*o.MaxMessageBytes)
	o.MaxDecodedTotal = max(o.MaxDecodedTotal, o.MaxDecodedBytes)
	orDefault(&bad, "ProgressEvery", &o.ProgressEvery, 100*time.Millisecond)
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
	if len(bad) > 0 {
		return fmt.Errorf("server: negative options %s; want positive values (0 takes the default)", strings.Join(bad, ", "))
	}
	return nil
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

	decoded    *pool         // decoded request arguments not yet answered
	buildSlots chan struct{} // one per build running
}

// limitsMap is the limits hello reports.
func (o *Options) limitsMap() map[string]any {
	return map[string]any{"max_sessions": o.MaxSessions, "max_sessions_per_connection": o.MaxSessionsPerConn,
		"max_events": o.MaxEvents, "max_sim_time_ps": int64(o.MaxSimTime), "max_message_bytes": o.MaxMessageBytes,
		"idle_timeout_ms": o.IdleTimeout.Milliseconds(), "max_trace_rows": o.MaxTraceRows,
		"max_nodes": o.MaxNodes, "max_links": o.MaxLinks, "max_flows": o.MaxFlows, "max_changes": o.MaxChanges,
		"max_session_bytes": o.MaxSessionBytes, "max_decoded_bytes": o.MaxDecodedBytes,
		"max_replay_ms": o.MaxReplayTime.Milliseconds(), "max_builds": o.MaxBuilds}
}

// New returns a server. It refuses negative limits, and options without a
// token unless InsecureNoToken is set.
func New(opts Options) (*Server, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if opts.Token == "" && !opts.InsecureNoToken {
		return nil, errors.New("server: a token is required (or InsecureNoToken)")
	}
	s := &Server{opts: opts, log: *opts.Logger, start: time.Now(),
		sessions: map[string]*session{}, conns: map[*conn]struct{}{},
		decoded: newPool(opts.MaxDecodedTotal), buildSlots: make(chan struct{}, opts.MaxBuilds)}
	// gorilla's default origin check accepts a request without Origin and
	// one whose Origin host equals Host, and answers others 403.
	s.upgrader = websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	return s, nil
}

// ServeHTTP authenticates and upgrades a connection, then serves it until it
// closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		if s.opts.Token == "" {
			s.log.Warn().Str("remote", r.RemoteAddr).Str("host", r.Host).Msg("connection refused: Host is not loopback")
			http.Error(w, "ccscope: Host must name the loopback interface", http.StatusForbidden)
			return
		}
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

// authorized checks the token in the Authorization header (scheme Bearer,
// in any case, RFC 7235 section 2.1) or the query. Without a token, the
// Host header must name the loopback interface: a page whose DNS name was
// rebound to 127.0.0.1 still sends its own name as Host.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return s.opts.InsecureNoToken && loopbackHost(r.Host)
	}
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, t, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			got = strings.TrimLeft(t, " ")
		}
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// loopbackHost reports whether a Host header (host or host:port) names the
// loopback interface: localhost, a name under .localhost (RFC 6761 section
// 6.3) or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	DecodedBytes       int64   `msgpack:"decoded_bytes"`
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
	st.DecodedBytes = s.decoded.inUse()
	st.UptimeS = time.Since(s.start).Seconds()
	return st
}
