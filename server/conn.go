package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
)

// Close codes beyond RFC 6455's (proto/README.md, "Connecting").
const (
	closeVersion = 4000 // the client's protocol major version is not served
	closeIdle    = 4001 // no request and no session for the idle timeout
)

// Keep-alive: the writer pings every Options.PingInterval, for proxies and
// NATs that drop a quiet connection. A connection is never dropped for
// not answering: a client without a reader thread (the Python client's
// socket transport) answers pings only when it next reads, and a notebook
// may compute for minutes between two requests with sessions open. A peer
// that is gone shows as a failed write, or on TCP as the keep-alive the
// listener enables; a client that stops reading, as the write timeout.

// conn is one client connection: a reader goroutine that decodes requests
// and routes them, a writer goroutine that owns the socket's write side, a
// worker for connection-level ops, and the sessions it opened.
type conn struct {
	srv    *Server
	ws     *websocket.Conn
	log    zerolog.Logger
	out    chan outFrame
	budget *budget
	ctl    chan Request // connection-level ops, answered in order

	mu       sync.Mutex
	sessions map[string]*session

	builds  chan struct{} // one per build under way (startBuild)
	buildWG sync.WaitGroup
	lastReq atomic.Int64 // wall time of the last request, Unix ns

	// The socket's write side: the writer goroutine writes queued frames,
	// and a response may be written directly by the goroutine that made it
	// (sendDirect) when nothing is queued. wmu is held for every data
	// write; queued counts the frames (and close instructions) handed to
	// the writer and not yet written.
	wmu    sync.Mutex
	queued atomic.Int64

	done      chan struct{}   // closed when the connection ends
	ctx       context.Context // cancelled when the connection ends
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// ctlQueue bounds connection-level requests waiting for the worker.
const ctlQueue = 16

func newConn(s *Server, ws *websocket.Conn, remote string) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{srv: s, ws: ws, log: s.log.With().Str("remote", remote).Logger(),
		out: make(chan outFrame, 256), budget: newBudget(s.opts.WriteBudget), ctl: make(chan Request, ctlQueue),
		sessions: map[string]*session{}, done: make(chan struct{}), ctx: ctx, cancel: cancel,
		builds: make(chan struct{}, maxBuildsPerConn)}
}

// touch notes a request's arrival, for the idle check.
func (c *conn) touch() { c.lastReq.Store(time.Now().UnixNano()) }

// idle reports whether c has had no request for d and holds no session or
// build.
func (c *conn) idle(d time.Duration) bool {
	return time.Since(time.Unix(0, c.lastReq.Load())) >= d && c.sessionCount() == 0 && !c.building()
}

// serve runs the connection until it ends, then closes its sessions.
func (c *conn) serve() {
	c.log.Info().Msg("connection opened")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeLoop() }()
	go func() { defer wg.Done(); c.ctlLoop() }()
	c.touch()
	c.readLoop()
	c.closeWith(websocket.CloseNormalClosure, "")
	for _, sess := range c.sessionList() {
		sess.stop("connection closed")
	}
	c.buildWG.Wait()
	wg.Wait()
	c.log.Info().Msg("connection closed")
}

// closeWith ends the connection once, sending a close frame with code and
// reason first (best effort).
func (c *conn) closeWith(code int, reason string) {
	c.closeOnce.Do(func() {
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		close(c.done)
		c.cancel()
		_ = c.ws.Close()
	})
}

// readBufKeep is the largest read buffer readLoop keeps between frames.
const readBufKeep = 1 << 20

// readLoop reads frames until the connection fails. A frame over the size
// limit but within 4× of it is drained and answered too_large; beyond that
// gorilla closes the connection (1009). Frames are read into one reused
// buffer: nothing a request holds points into its frame (the decoders copy
// every string and bin they keep).
func (c *conn) readLoop() {
	var buf bytes.Buffer
	limit := c.srv.opts.MaxMessageBytes
	c.ws.SetReadLimit(4 * limit)
	for {
		typ, rd, err := c.ws.NextReader()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) && !errors.Is(err, io.EOF) {
				c.log.Info().Err(err).Msg("read ended")
			}
			return
		}
		if buf.Cap() > readBufKeep {
			buf = bytes.Buffer{}
		}
		buf.Reset()
		if _, err := buf.ReadFrom(io.LimitReader(rd, limit+1)); err != nil {
			return
		}
		frame := buf.Bytes()
		if int64(len(frame)) > limit {
			n, err := io.Copy(io.Discard, rd)
			if err != nil {
				c.log.Warn().Int64("bytes", int64(len(frame))+n).Msg("oversized message; connection closed")
				return
			}
			c.log.Warn().Int64("bytes", int64(len(frame))+n).Msg("oversized message refused")
			c.reply(nil, nil, errorf(CodeTooLarge, "", "message of %d bytes exceeds the limit of %d", int64(len(frame))+n, limit))
			continue
		}
		if typ != websocket.BinaryMessage {
			c.reply(nil, nil, errorf(CodeBadRequest, "", "text message; frames are binary msgpack"))
			continue
		}
		c.route(frame)
	}
}

// route decodes a frame and hands it to its session, the worker or a
// builder. The decoded arguments are held in the server's decode pool until
// their op is answered.
func (c *conn) route(frame []byte) {
	if c.routeHot(frame) {
		return
	}
	c.touch()
	pool := c.srv.decoded
	bound := decodeBound(frame, c.srv.opts.MaxDecodedBytes)
	if !pool.tryAcquire(bound) {
		req, _ := decodeRequest(frame, 0)
		c.reply(req.ID, nil, errorf(CodeBusy, "", "the server holds its limit of %d bytes of decoded requests; retry when responses arrive", pool.max))
		return
	}
	req, e := decodeRequest(frame, c.srv.opts.MaxDecodedBytes)
	pool.release(bound - req.cost)
	if e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	switch req.def.scope {
	case scopeSession:
		id, ok := req.Args["session"].(string)
		if !ok {
			c.finishReq(req)
			if req.Args["session"] == nil {
				c.reply(req.ID, nil, errorf(CodeBadArgs, "session", "missing argument session"))
			} else {
				c.reply(req.ID, nil, errorf(CodeBadArgs, "session", "session is %s, want a string", typeName(req.Args["session"])))
			}
			return
		}
		sess := c.session(id)
		if sess == nil {
			c.finishReq(req)
			c.reply(req.ID, nil, errorf(CodeNotFound, "session", "no session %q on this connection", id))
			return
		}
		if req.def.inline && sess.runInline(req) {
			return
		}
		if e := sess.enqueue(sessionReq{req: req}); e != nil {
			c.finishReq(req)
			c.reply(req.ID, nil, e)
		}
	case scopeBuild:
		c.startBuild(req)
	case scopeSessions:
		req.def.batch(c, req)
	case scopeReader:
		c.serveCtl(req)
	default:
		select {
		case c.ctl <- req:
		default:
			c.finishReq(req)
			c.reply(req.ID, nil, errorf(CodeBusy, "", "%d connection-level requests are waiting; wait for their responses", ctlQueue))
		}
	}
}

// finishReq returns a request's decoded arguments to the server's pool.
func (c *conn) finishReq(req Request) {
	c.srv.decoded.release(req.cost)
}

// writeLoop owns the socket's write side.
func (c *conn) writeLoop() {
	ping := time.NewTicker(c.srv.opts.PingInterval)
	defer ping.Stop()
	idleTimeout := c.srv.opts.ConnIdleTimeout
	idleCheck := time.NewTicker(min(max(idleTimeout/8, 10*time.Millisecond), time.Minute))
	defer idleCheck.Stop()
	for {
		select {
		case <-idleCheck.C:
			if c.idle(idleTimeout) {
				c.log.Info().Msg("idle connection closed")
				c.closeWith(closeIdle, "idle timeout")
				return
			}
		case f := <-c.out:
			if f.closeCode != 0 {
				c.closeWith(f.closeCode, f.reason)
				c.queued.Add(-1)
				return
			}
			c.wmu.Lock()
			err := c.write(f.data)
			c.queued.Add(-1)
			c.wmu.Unlock()
			c.budget.release(int64(len(f.data)))
			recycle(f.pooled)
			if err != nil {
				c.log.Warn().Err(err).Msg("write failed; closing the connection")
				c.closeWith(websocket.ClosePolicyViolation, "client stopped reading")
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.opts.WriteTimeout)); err != nil {
				c.closeWith(websocket.CloseGoingAway, "ping failed")
				return
			}
		case <-c.done:
			return
		}
	}
}

// write writes one frame, with the write deadline; wmu is held.
func (c *conn) write(data []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteTimeout))
	return c.ws.WriteMessage(websocket.BinaryMessage, data)
}

// sendDirect writes a response on the calling goroutine when the writer
// has nothing queued, saving the hand-off to it (a learning loop's step
// is a request and a response of a few hundred bytes, and the hand-off
// costs more than the write); otherwise it queues the frame as send does.
// Frames the caller queued before are written by then, so none is
// overtaken. It reports false once the connection is gone.
func (c *conn) sendDirect(f []byte) bool {
	if c.queued.Load() != 0 || !c.wmu.TryLock() {
		return c.send(f)
	}
	if c.queued.Load() != 0 {
		c.wmu.Unlock()
		return c.send(f)
	}
	select {
	case <-c.done:
		c.wmu.Unlock()
		return false
	default:
	}
	err := c.write(f)
	c.wmu.Unlock()
	if err != nil {
		c.log.Warn().Err(err).Msg("write failed; closing the connection")
		c.closeWith(websocket.ClosePolicyViolation, "client stopped reading")
		return false
	}
	return true
}

// send queues a frame, waiting while the connection's write budget is spent:
// a client that stops reading stops its sessions here instead of making the
// server buffer. It reports false once the connection is gone.
func (c *conn) send(f []byte) bool { return c.sendFrame(outFrame{data: f}) }

// sendPooled queues a frame held in a pooled buffer; the writer returns
// the buffer to framePool once the frame is written.
func (c *conn) sendPooled(b *bytes.Buffer) bool {
	return c.sendFrame(outFrame{data: b.Bytes(), pooled: b})
}

func (c *conn) sendFrame(f outFrame) bool {
	n := int64(len(f.data))
	if !c.budget.acquire(n, c.done) {
		return false
	}
	c.queued.Add(1)
	select {
	case c.out <- f:
		return true
	case <-c.done:
		c.queued.Add(-1)
		c.budget.release(n)
		return false
	}
}

// closeAfterWrites closes the connection after the frames queued so far.
func (c *conn) closeAfterWrites(code int, reason string) {
	c.queued.Add(1)
	select {
	case c.out <- outFrame{closeCode: code, reason: reason}:
	case <-c.done:
		c.queued.Add(-1)
	}
}

// reply sends the response to request id: result, or e if not nil. An
// error is logged on c's logger.
func (c *conn) reply(id any, result any, e *Error) bool {
	return c.replyLog(c.log, id, result, e)
}

// replyLog is reply, logging an error on log (a session's, with its id).
func (c *conn) replyLog(log zerolog.Logger, id any, result any, e *Error) bool {
	r := response{ID: id, OK: e == nil, Result: result, Error: e}
	if e != nil {
		r.Result = nil
		logFailure(log, id, e)
	}
	b, err := marshalResponse(&r)
	if err != nil {
		b, _ = marshal(&response{ID: id, Error: errorf(CodeInternal, "", "encoding the response: %v", err)})
	}
	return c.sendDirect(b)
}

// logFailure logs a request's (or a batch entry's) error on log.
func logFailure(log zerolog.Logger, id any, e *Error) {
	ev := log.Info()
	if e.Code == CodeInternal || e.Code == CodeReplayMismatch {
		ev = log.Error()
	}
	ev.Any("id", id).Str("code", string(e.Code)).Str("path", e.Path).Str("error", e.Message).Msg("request failed")
}

func (c *conn) session(id string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

func (c *conn) sessionCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

func (c *conn) sessionList() []*session {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		out = append(out, s)
	}
	return out
}

// budget is a byte semaphore: the bytes a connection has queued for its
// writer but not yet written.
type budget struct {
	mu   sync.Mutex
	used int64
	max  int64
	wake chan struct{} // closed and replaced on every release
}

func newBudget(max int64) *budget { return &budget{max: max, wake: make(chan struct{})} }

// acquire takes n bytes, waiting until they fit (a frame larger than the
// whole budget goes alone) or done is closed.
func (b *budget) acquire(n int64, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return true
		}
		w := b.wake
		b.mu.Unlock()
		select {
		case <-w:
		case <-done:
			return false
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}
