package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"
)

// Close codes beyond RFC 6455's.
const (
	closeVersion = 4000 // the client's protocol major version is not served
)

// Keep-alive: the writer pings every pingEvery; a peer that answers nothing
// (no message, no pong) for pongWait is gone.
const (
	pingEvery = 30 * time.Second
	pongWait  = 90 * time.Second
)

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
		sessions: map[string]*session{}, done: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// serve runs the connection until it ends, then closes its sessions.
func (c *conn) serve() {
	c.log.Info().Msg("connection opened")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeLoop() }()
	go func() { defer wg.Done(); c.ctlLoop() }()
	c.readLoop()
	c.closeWith(websocket.CloseNormalClosure, "")
	for _, sess := range c.sessionList() {
		sess.stop("connection closed")
	}
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

// readLoop reads frames until the connection fails. A frame over the size
// limit but within 4× of it is drained and answered too_large; beyond that
// gorilla closes the connection (1009).
func (c *conn) readLoop() {
	limit := c.srv.opts.MaxMessageBytes
	c.ws.SetReadLimit(4 * limit)
	_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		typ, rd, err := c.ws.NextReader()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) && !errors.Is(err, io.EOF) {
				c.log.Debug().Err(err).Msg("read ended")
			}
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
		frame, err := io.ReadAll(io.LimitReader(rd, limit+1))
		if err != nil {
			return
		}
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

// sessionOps are the ops that run on a session's goroutine.
var sessionOps = map[string]bool{"step": true, "run": true, "act": true, "subscribe": true, "unsubscribe": true,
	"signals": true, "summary": true, "checkpoint": true, "close": true}

// connOps are the ops the connection worker answers.
var connOps = map[string]bool{"hello": true, "scenarios": true, "open": true, "restore": true, "fork": true, "stats": true}

// route decodes a frame and hands it to its session or the worker.
func (c *conn) route(frame []byte) {
	req, e := DecodeRequest(frame)
	if e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	switch {
	case sessionOps[req.Op]:
		id, ok := req.Args["session"].(string)
		if !ok {
			if req.Args["session"] == nil {
				c.reply(req.ID, nil, errorf(CodeBadArgs, "session", "missing argument session"))
			} else {
				c.reply(req.ID, nil, errorf(CodeBadArgs, "session", "session is a %s, want a string", typeName(req.Args["session"])))
			}
			return
		}
		sess := c.session(id)
		if sess == nil {
			c.reply(req.ID, nil, errorf(CodeNotFound, "session", "no session %q on this connection", id))
			return
		}
		if e := sess.enqueue(sessionReq{req: req}); e != nil {
			c.reply(req.ID, nil, e)
		}
	case connOps[req.Op]:
		select {
		case c.ctl <- req:
		default:
			c.reply(req.ID, nil, errorf(CodeBusy, "", "%d connection-level requests are waiting; wait for their responses", ctlQueue))
		}
	default:
		c.reply(req.ID, nil, errorf(CodeUnknownOp, "op", "unknown op %q", req.Op))
	}
}

// writeLoop owns the socket's write side.
func (c *conn) writeLoop() {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case f := <-c.out:
			if f.closeCode != 0 {
				c.closeWith(f.closeCode, f.reason)
				return
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteTimeout))
			err := c.ws.WriteMessage(websocket.BinaryMessage, f.data)
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
	select {
	case c.out <- f:
		return true
	case <-c.done:
		c.budget.release(n)
		return false
	}
}

// marshal encodes a frame with the smallest integer encodings.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// framePool recycles push frame buffers: a push is megabytes, and a fresh
// buffer each time costs more in zeroing than the encoding itself.
var framePool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 32 << 20

func recycle(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooled {
		framePool.Put(b)
	}
}

// outFrame is a frame for the writer, or (closeCode set) the instruction
// to close the connection once the frames before it are written.
type outFrame struct {
	data      []byte
	pooled    *bytes.Buffer // holds data; recycled after the write
	closeCode int
	reason    string
}

// closeAfterWrites closes the connection after the frames queued so far.
func (c *conn) closeAfterWrites(code int, reason string) {
	select {
	case c.out <- outFrame{closeCode: code, reason: reason}:
	case <-c.done:
	}
}

// response is a response frame.
type response struct {
	ID     any    `msgpack:"id"`
	OK     bool   `msgpack:"ok"`
	Result any    `msgpack:"result,omitempty"`
	Error  *Error `msgpack:"error,omitempty"`
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
		ev := log.Info()
		if e.Code == CodeInternal || e.Code == CodeReplayMismatch {
			ev = log.Error()
		}
		ev.Any("id", id).Str("code", string(e.Code)).Str("path", e.Path).Str("error", e.Message).Msg("request failed")
	}
	b, err := marshal(&r)
	if err != nil {
		b, _ = marshal(&response{ID: id, Error: errorf(CodeInternal, "", "encoding the response: %v", err)})
	}
	return c.send(b)
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
