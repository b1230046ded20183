package server

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// sessionQueue bounds a session's waiting requests; beyond it the client
// gets busy.
const sessionQueue = 32

// sessionReq is a wire request for the session, its step of a steps
// request, or an internal call (fork of a live session) run on the
// session's goroutine.
type sessionReq struct {
	req  Request
	step *batchStep
	call func(*session)
	seq  uint64 // the session's count of arrived requests, this one included
}

// session is one simulation, served by its own goroutine: requests to it are
// processed in arrival order.
type session struct {
	id     string
	conn   *conn
	log    zerolog.Logger
	st     *state
	tr     *tracer
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	reqs   chan sessionReq

	// busy is held by whoever runs the session's requests: its goroutine,
	// or the connection's reader running a short step itself (runInline).
	// pending counts requests enqueued and not yet served.
	busy    sync.Mutex
	pending atomic.Int32
	// The last step by time: its simulated and its wall duration (for
	// runInline, under busy); and the wall time of the last request
	// served inline, Unix ns (for the idle timeout).
	lastStepSim  sim.Duration
	lastStepWall time.Duration
	lastInline   atomic.Int64

	// Cancelling (the cancel op): arrived counts the requests handed to
	// the session (queued or run inline), each taking the count as its
	// seq; a cancel sets cancelTo to the count then, and the request
	// being served (serving, its seq) stops stepping if it arrived
	// before (session.cancelled).
	arrived  atomic.Uint64
	cancelTo atomic.Uint64
	serving  uint64 // under busy

	seq       uint64        // pushes sent
	pushEvery time.Duration // push interval while stepping
	lastPush  time.Time
}

// startSession registers st as a new session of c and starts its goroutine.
func startSession(c *conn, st *state, scenario string) (*session, *Error) {
	ctx, cancel := context.WithCancel(c.ctx)
	s := &session{conn: c, st: st, tr: newTracer(c.srv.opts.MaxTraceRows), ctx: ctx, cancel: cancel,
		reqs: make(chan sessionReq, sessionQueue), pushEvery: 100 * time.Millisecond}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		cancel()
		return nil, errorf(CodeInternal, "", "connection closed")
	}
	if e := c.srv.addSession(c, s); e != nil {
		cancel()
		return nil, e
	}
	c.sessions[s.id] = s
	s.log = c.log.With().Str("session_id", s.id).Str("scenario", scenario).Uint64("seed", st.seed).Logger()
	st.run.Trace.SetSink(s.tr)
	s.log.Info().Str("config_hash", st.hash).Uint64("events", st.run.Sim.Events()).Msg("session opened")
	go s.loop()
	return s, nil
}

// enqueue hands a request to the session, or refuses it when the session
// is closed or its queue is full.
func (s *session) enqueue(r sessionReq) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errorf(CodeNotFound, "session", "session %q is closed", s.id)
	}
	s.pending.Add(1)
	r.seq = s.arrived.Add(1)
	select {
	case s.reqs <- r:
		return nil
	default:
		s.pending.Add(-1)
		return errorf(CodeBusy, "session", "session %q has %d requests waiting; wait for their responses", s.id, sessionQueue)
	}
}

// stop ends the session from outside its goroutine (connection closed,
// server shutdown); the goroutine logs and cleans up.
func (s *session) stop(reason string) {
	s.mu.Lock()
	if !s.closed {
		s.log.Info().Str("reason", reason).Msg("session stopping")
	}
	s.mu.Unlock()
	s.cancel()
}

// loop serves requests until close, idleness or cancellation.
func (s *session) loop() {
	srv := s.conn.srv
	defer srv.wg.Done()
	reason := "closed by client"
	idle := time.NewTimer(srv.opts.IdleTimeout)
	defer func() {
		idle.Stop()
		s.finish(reason)
	}()
	for {
		select {
		case r := <-s.reqs:
			s.busy.Lock()
			more := s.serve(r)
			s.pending.Add(-1)
			s.busy.Unlock()
			if !more {
				return
			}
			idle.Reset(srv.opts.IdleTimeout)
		case <-idle.C:
			// Steps run inline do not pass here; they count as activity.
			if since := time.Since(time.Unix(0, s.lastInline.Load())); since < srv.opts.IdleTimeout {
				idle.Reset(srv.opts.IdleTimeout - since)
				continue
			}
			reason = "idle timeout"
			return
		case <-s.ctx.Done():
			reason = "connection closed"
			return
		}
	}
}

// finish unregisters the session and answers requests still queued.
func (s *session) finish(reason string) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// A step running inline on the reader ends first.
	s.busy.Lock()
	defer s.busy.Unlock()
	s.cancel()
	s.unregister()
	c := s.conn
	for {
		select {
		case r := <-s.reqs:
			switch {
			case r.call != nil:
				r.call(nil)
			case r.step != nil:
				r.step.batch.done(r.step.slot, nil, errorf(CodeNotFound, r.step.prefix()+"session", "session %q closed (%s)", s.id, reason))
			default:
				c.finishReq(r.req)
				c.reply(r.req.ID, nil, errorf(CodeNotFound, "session", "session %q closed (%s)", s.id, reason))
			}
		default:
			s.tr.close()
			s.log.Info().Str("reason", reason).Uint64("events", s.st.run.Sim.Events()).
				Int64("sim_time_ps", int64(s.st.run.Now())).Float64("wall_s", s.st.wall.Seconds()).Msg("session closed")
			return
		}
	}
}

// inlineMaxWall bounds the steps a connection's reader runs itself: a
// step by time no longer (in simulated time) than the session's last one,
// which took at most this much wall time.
const inlineMaxWall = 500 * time.Microsecond

// runInline serves a step request on the calling goroutine (the
// connection's reader) instead of handing it to the session's goroutine,
// and reports whether it did. A learning loop steps one session a few
// milliseconds of simulated time per request: the hand-off between
// goroutines, which wakes an idle thread, costs more CPU than the step's
// simulation. It runs only a step that is sure to be short (inlineMaxWall)
// on a session that is idle — nothing queued, no subscription pushing
// Arrow — so that the reader is never held up for long and requests keep
// their order.
func (s *session) runInline(req Request) bool {
	var d sim.Duration
	if p := req.step; p != nil {
		if !p.byTime {
			return false
		}
		d = p.time
	} else {
		str, ok := req.Args["time"].(string)
		var err error
		if d, err = sim.ParseDuration(str); !ok || err != nil || d > sim.MaxDuration {
			return false
		}
	}
	if !s.claimInline(d) {
		return false
	}
	s.serveInline(sessionReq{req: req})
	return true
}

// claimInline takes the session for a step by time of d run by the caller
// (runInline's conditions), reporting whether it did; the caller then
// runs the step with serveInline.
func (s *session) claimInline(d sim.Duration) bool {
	s.mu.Lock()
	if s.closed || !s.busy.TryLock() {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	if s.pending.Load() != 0 || len(s.tr.subs) != 0 || s.lastStepSim <= 0 || s.lastStepWall > inlineMaxWall ||
		d <= 0 || d > s.lastStepSim {
		s.busy.Unlock()
		return false
	}
	return true
}

// serveInline serves r on the calling goroutine, the session claimed by
// claimInline, and gives the claim back.
func (s *session) serveInline(r sessionReq) {
	r.seq = s.arrived.Add(1)
	s.lastInline.Store(time.Now().UnixNano())
	more := s.serve(r)
	s.busy.Unlock()
	if !more {
		s.cancel() // the session failed; its goroutine finishes it
	}
}

// serve handles one request, recovering from a panic in the engine: the
// client gets internal and the session ends, the server goes on. It reports
// whether the session continues.
func (s *session) serve(r sessionReq) (more bool) {
	var id any
	if r.call == nil && r.step == nil {
		id = r.req.ID
	}
	s.serving = r.seq
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("panic", fmt.Sprint(p)).Str("stack", string(debug.Stack())).Msg("session panicked; closing it")
			switch {
			case r.call != nil:
				r.call(nil)
			case r.step != nil:
				r.step.batch.done(r.step.slot, nil, errorf(CodeInternal, "", "the session failed and was closed: %v", p))
			default:
				s.conn.replyLog(s.log, id, nil, errorf(CodeInternal, "", "the session failed and was closed: %v", p))
			}
			more = false
		}
	}()
	if r.call != nil {
		r.call(s)
		return true
	}
	if r.step != nil {
		res, e := s.step(r.step.args, r.step.prefix())
		if e != nil && e.Code == CodeInternal && s.ctx.Err() != nil {
			r.step.batch.done(r.step.slot, nil, e)
			return false // the connection is gone
		}
		if e != nil {
			logFailure(s.log, r.step.batch.req.ID, e)
		}
		r.step.batch.done(r.step.slot, res, e)
		return true
	}
	defer s.conn.finishReq(r.req)
	if p := r.req.step; p != nil {
		res, e := s.step(*p, "")
		if e != nil && e.Code == CodeInternal && s.ctx.Err() != nil {
			return false
		}
		s.conn.replyLog(s.log, id, res, e)
		return true
	}
	a := newArgs(r.req.Args, "", r.req.def.argKeys())
	a.used = append(a.used, "session")
	res, e := r.req.def.sess(s, a, id)
	if res == answered {
		return true
	}
	if e != nil && e.Code == CodeInternal && s.ctx.Err() != nil {
		return false // the connection is gone; nobody to answer
	}
	ends := e == nil && r.req.def.ends
	if ends {
		// Free the slots before answering: a client that opens a session
		// once its close is answered must not meet the limit it held.
		s.unregister()
	}
	s.conn.replyLog(s.log, id, res, e)
	return !ends
}

// cancel stops the stepping of every request the session got so far: the
// step or run being served stops at its next slice boundary, and those
// queued behind it advance nothing (the cancel op; the connection's reader
// calls it, ahead of the session's queue). Requests that arrive later run
// as usual.
func (s *session) cancelArrived() { s.cancelTo.Store(s.arrived.Load()) }

// cancelled reports whether a cancel op came after the request being
// served arrived: its stepping loop then stops at the next slice boundary.
func (s *session) cancelled() bool { return s.serving <= s.cancelTo.Load() }

// unregister marks the session closed and takes it out of its connection's
// and the server's tables, so that it no longer counts against their
// limits. It is idempotent.
func (s *session) unregister() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	c := s.conn
	c.mu.Lock()
	delete(c.sessions, s.id)
	c.mu.Unlock()
	c.srv.removeSession(s.id)
}

func (s *session) opSummary(a *args, _ any) (any, *Error) {
	if e := a.done(); e != nil {
		return nil, e
	}
	sum := s.st.summary()
	return &sum, nil
}

func (s *session) opCheckpoint(a *args, _ any) (any, *Error) {
	if e := a.done(); e != nil {
		return nil, e
	}
	cp := s.st.checkpoint()
	return map[string]any{"checkpoint": &cp}, nil
}

// opClose answers, then the session ends (its op is marked ends).
func (s *session) opClose(a *args, _ any) (any, *Error) {
	if e := a.done(); e != nil {
		return nil, e
	}
	return map[string]any{"session": s.id, "closed": true}, nil
}

func (s *session) opStep(a *args, _ any) (any, *Error) {
	p, e := parseStep(a, s)
	if e != nil {
		return nil, e
	}
	return s.step(p, "")
}

func (s *session) opRun(a *args, id any) (any, *Error) {
	target := s.st.run.Horizon()
	if a.has("until") {
		d, e := a.duration("until")
		if e != nil {
			return nil, e
		}
		target = min(target, sim.Time(d))
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	every := s.conn.srv.opts.ProgressEvery
	from := s.st.run.Now()
	last := time.Now()
	progress := func() *Error {
		if time.Since(last) < every {
			return s.pushDue(false)
		}
		last = time.Now()
		frac := 1.0
		if target > from {
			frac = float64(s.st.run.Now()-from) / float64(target-from)
		}
		if !s.push(map[string]any{"stream": "progress", "request": id, "sim_time_ps": int64(s.st.run.Now()),
			"events": s.st.run.Sim.Events(), "fraction": min(frac, 1.0)}) {
			return errorf(CodeInternal, "", "connection closed")
		}
		return s.pushDue(false)
	}
	cancelled, e := s.st.runTo(s.ctx, target, s.cancelled, progress)
	if pe := s.pushDue(true); e == nil {
		e = pe
	}
	if e != nil {
		return nil, e
	}
	res := s.st.result()
	res.Digest, res.Cancelled = s.st.digest(), cancelled
	return res, nil
}

func (s *session) opAct(a *args, _ any) (any, *Error) {
	m, e := a.mapArg("action")
	if e != nil {
		return nil, e
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	act, e := parseAction(m, "action.")
	if e != nil {
		return nil, e
	}
	i, e := s.st.act(act, "action.")
	if e != nil {
		return nil, e
	}
	s.log.Info().Int("index", i).Uint64("events", s.st.run.Sim.Events()).Int64("sim_time_ps", int64(s.st.run.Now())).Msg("action applied")
	return map[string]any{"index": i, "at": s.st.actions[i].At}, s.pushDue(true)
}

// filterArgs reads flows and signals, checking flow ids.
func (s *session) filterArgs(a *args, tables []string) (trace.Filter, *Error) {
	var f trace.Filter
	var e *Error
	if f.Flows, e = a.strList("flows"); e != nil {
		return f, e
	}
	// A filter no table named has the column of selects nothing there: it
	// would pass every row, and be taken for one that worked.
	for _, c := range []struct {
		arg, column string
		given       bool
	}{{"flows", "flow", a.has("flows")}, {"signals", "signal", a.has("signals")}} {
		if c.given && !slices.ContainsFunc(tables, func(t string) bool { return hasColumn(t, c.column) }) {
			var with []string
			for _, t := range trace.Tables {
				if hasColumn(t, c.column) {
					with = append(with, t)
				}
			}
			return f, errorf(CodeBadArgs, c.arg, "%s: no %s column in %s; %s filters the tables %s", c.arg, c.column, strings.Join(tables, ", "), c.arg, strings.Join(with, ", "))
		}
	}
	var names []string
	if f.Flows != nil {
		names = make([]string, 0, len(f.Flows))
	}
	for i, fl := range f.Flows {
		legs := s.st.run.TraceNames(fl) // a split flow's id selects both legs
		if legs == nil {
			return f, errorf(CodeNotFound, fmt.Sprintf("flows[%d]", i), "no flow %q", fl)
		}
		names = append(names, legs...)
	}
	f.Flows = names
	if f.Signals, e = a.strList("signals"); e != nil {
		return f, e
	}
	return f, nil
}

// hasColumn says whether trace table t has a column named name.
func hasColumn(t, name string) bool {
	sc := trace.Schema(t)
	return sc != nil && len(sc.FieldIndices(name)) > 0
}

func tableArg(v string, path string) *Error {
	if trace.Schema(v) == nil {
		return errorf(CodeNotFound, path, "no table %q; tables: %v", v, trace.Tables)
	}
	return nil
}

func (s *session) opSubscribe(a *args, _ any) (any, *Error) {
	tables, e := a.strList("tables")
	if e != nil {
		return nil, e
	}
	if len(tables) == 0 {
		return nil, errorf(CodeBadArgs, "tables", "tables must list at least one table")
	}
	for i, t := range tables {
		if e := tableArg(t, fmt.Sprintf("tables[%d]", i)); e != nil {
			return nil, e
		}
	}
	f, e := s.filterArgs(a, tables)
	if e != nil {
		return nil, e
	}
	if a.has("every_ms") {
		ms, e := a.uint("every_ms")
		if e != nil {
			return nil, e
		}
		if ms > 3600_000 {
			return nil, errorf(CodeBadArgs, "every_ms", "every_ms is %d, want at most an hour", ms)
		}
		s.pushEvery = time.Duration(ms) * time.Millisecond
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	// Rows recorded so far are kept, not pushed: flush them first.
	s.st.run.Trace.FlushAll()
	if err := s.st.run.Trace.Err(); err != nil {
		return nil, errorf(CodeInternal, "", "trace: %v", err)
	}
	// Before the first event, the rows recorded at open (the link table's
	// rates and delays at time 0) are the run's first: a stream from the
	// start has them, as signals does.
	fromStart := s.st.run.Sim.Events() == 0
	for _, t := range tables {
		s.tr.unsubscribe(t)
		s.tr.subs[t] = f
		if fromStart {
			recs, _, err := s.tr.snapshot(s.st.run.Trace, t, f)
			if err != nil {
				return nil, errorf(CodeInternal, "", "trace: %v", err)
			}
			for _, rec := range recs {
				if rec.NumRows() == 0 {
					rec.Release()
					continue
				}
				s.tr.pending[t] = append(s.tr.pending[t], rec)
			}
		}
	}
	return map[string]any{"tables": s.tr.subscribed()}, nil
}

func (s *session) opUnsubscribe(a *args, _ any) (any, *Error) {
	tables, e := a.strList("tables")
	if e != nil {
		return nil, e
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	if tables == nil {
		tables = s.tr.subscribed()
	}
	for i, t := range tables {
		if e := tableArg(t, fmt.Sprintf("tables[%d]", i)); e != nil {
			return nil, e
		}
		s.tr.unsubscribe(t)
	}
	return map[string]any{"tables": s.tr.subscribed()}, nil
}

// opSignals answers signals itself: its response is built around the
// Arrow stream, which is written once, straight into the frame.
func (s *session) opSignals(a *args, id any) (any, *Error) {
	if e := s.signals(a, id); e != nil {
		return nil, e
	}
	return answered, nil
}

func (s *session) signals(a *args, id any) *Error {
	table, e := a.str("table")
	if e != nil {
		return e
	}
	if e := tableArg(table, "table"); e != nil {
		return e
	}
	f, e := s.filterArgs(a, []string{table})
	if e != nil {
		return e
	}
	if e := a.done(); e != nil {
		return e
	}
	recs, rows, err := s.tr.snapshot(s.st.run.Trace, table, f)
	if err != nil {
		return errorf(CodeInternal, "", "building the Arrow stream: %v", err)
	}
	frame, data, err := signalsFrame(id, table, recs, rows, s.tr.dropped[table])
	releaseAll(recs)
	if err != nil {
		return errorf(CodeInternal, "", "encoding Arrow: %v", err)
	}
	if !s.conn.sendFrame(outFrame{data: data, pooled: frame}) {
		return errorf(CodeInternal, "", "connection closed")
	}
	return nil
}

// pushDue pushes subscribed rows: at the end of an op (final), or while
// stepping once the push interval has passed.
func (s *session) pushDue(final bool) *Error {
	if len(s.tr.subs) == 0 {
		return nil
	}
	// Between the intervals, rows the recorder flushed on its own (a full
	// table) still leave at once, so they never pile up during a long op.
	if !final && (s.pushEvery == 0 || time.Since(s.lastPush) < s.pushEvery) && !s.tr.hasPending() {
		return nil
	}
	s.lastPush = time.Now()
	rec := s.st.run.Trace
	for _, t := range s.tr.subscribed() {
		rec.FlushTable(t)
	}
	if err := rec.Err(); err != nil {
		return errorf(CodeInternal, "", "trace: %v", err)
	}
	for _, t := range s.tr.subscribed() {
		for len(s.tr.pending[t]) > 0 {
			recs := s.tr.takePending(t)
			frame, err := s.arrowFrame(t, recs)
			releaseAll(recs)
			if err != nil {
				return errorf(CodeInternal, "", "encoding Arrow: %v", err)
			}
			if !s.conn.sendPooled(frame) {
				return errorf(CodeInternal, "", "connection closed")
			}
		}
	}
	return nil
}
