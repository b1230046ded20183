package server

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// This file is the steps op: one step on each of several sessions of the
// connection, in one request and one response. A vectorised learning
// environment steps its N sessions this way, one round trip and one
// message each way for all N, and the sessions step concurrently, each on
// its own goroutine (proto/README.md, "steps").

// stepsBatch gathers a steps request's results. Each session fills its slot
// on its own goroutine; the one that fills the last sends the response.
type stepsBatch struct {
	c       *conn
	req     Request
	results []batchResult
	pending atomic.Int32
}

// batchResult is one slot: a step's result, or its error.
type batchResult struct {
	res any
	err *Error
}

// batchStep is the part of a steps request one session runs.
type batchStep struct {
	batch *stepsBatch
	slot  int
	args  stepArgs
}

// prefix is the path of the slot's arguments in the request.
func (b *batchStep) prefix() string { return fmt.Sprintf("steps[%d].", b.slot) }

// opSteps reads and checks the whole request, then hands each session its
// step. Nothing runs unless every entry is valid: a structural error, an
// unknown session or a bad argument anywhere fails the request with the
// entry's path (steps[2].time) and steps nothing. What only a session can
// check (the observed flow, the action's target) fails that entry alone.
func (c *conn) opSteps(req Request) {
	steps, e := c.parseSteps(req)
	if e != nil {
		c.finishReq(req)
		c.reply(req.ID, nil, e)
		return
	}
	c.runSteps(req, steps)
}

// runSteps runs a steps request's parsed entries.
func (c *conn) runSteps(req Request, steps []parsedStep) {
	b := &stepsBatch{c: c, req: req, results: make([]batchResult, len(steps))}
	b.pending.Store(int32(len(steps)))
	// The reader runs its share of short steps itself, as runInline does
	// for one (each hand-off to a session's goroutine wakes a thread);
	// the rest go to their sessions' goroutines first, to run meanwhile
	// on the other processors.
	procs := runtime.GOMAXPROCS(0)
	share := len(steps) - len(steps)*(procs-1)/procs
	mine := make([]int, 0, share)
	for i := range steps {
		st := &steps[i]
		st.batch = b
		if len(mine) < share && st.args.byTime && st.sess.claimInline(st.args.time) {
			mine = append(mine, i)
			continue
		}
		if e := st.sess.enqueue(sessionReq{step: &st.batchStep}); e != nil {
			b.done(i, nil, errorf(e.Code, st.prefix()+"session", "%s", e.Message))
		}
	}
	for _, i := range mine {
		steps[i].sess.serveInline(sessionReq{step: &steps[i].batchStep})
	}
}

// parsedStep is an entry of a steps request, read and checked.
type parsedStep struct {
	batchStep
	sess *session
}

// parseSteps reads steps: a non-empty list of maps, each a step's
// arguments with its session, no session twice.
func (c *conn) parseSteps(req Request) ([]parsedStep, *Error) {
	a := newArgs(req.Args, "", req.def.argKeys())
	v, ok := a.get("steps")
	if !ok {
		return nil, a.missing("steps")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, a.typeErr("steps", "a list of maps", v)
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	if len(list) == 0 {
		return nil, errorf(CodeBadArgs, "steps", "steps must list at least one step")
	}
	if limit := c.srv.opts.MaxSessionsPerConn; len(list) > limit {
		return nil, errorf(CodeBadArgs, "steps", "steps has %d entries; a connection has at most %d sessions", len(list), limit)
	}
	out := make([]parsedStep, len(list))
	seen := make(map[string]int, len(list))
	for i, v := range list {
		prefix := fmt.Sprintf("steps[%d].", i)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errorf(CodeBadArgs, prefix[:len(prefix)-1], "%s is %s, want a map", prefix[:len(prefix)-1], typeName(v))
		}
		ea := newArgs(m, prefix, specKeys(stepArgSpecs))
		id, e := ea.str("session")
		if e != nil {
			return nil, e
		}
		sess := c.session(id)
		if sess == nil {
			return nil, errorf(CodeNotFound, prefix+"session", "%ssession: no session %q on this connection", prefix, id)
		}
		if j, dup := seen[id]; dup {
			return nil, errorf(CodeBadArgs, prefix+"session", "%ssession: %q is stepped by steps[%d] too; a batch steps each session once", prefix, id, j)
		}
		seen[id] = i
		p, e := parseStep(ea, nil)
		if e != nil {
			return nil, e
		}
		out[i] = parsedStep{batchStep: batchStep{slot: i, args: p}, sess: sess}
	}
	return out, nil
}

// done fills slot i; the last slot filled sends the response.
func (b *stepsBatch) done(i int, res any, e *Error) {
	b.results[i] = batchResult{res: res, err: e}
	if b.pending.Add(-1) != 0 {
		return
	}
	c := b.c
	defer c.finishReq(b.req)
	data, err := b.encode()
	if err != nil {
		c.reply(b.req.ID, nil, errorf(CodeInternal, "", "encoding the response: %v", err))
		return
	}
	c.sendDirect(data)
}

// encode writes the response: {id, ok: true, result: {results: [{ok,
// result} or {ok, error}, ...]}}, each entry shaped as a response without
// its id. It appends to one buffer; only an error entry goes through the
// msgpack encoder.
func (b *stepsBatch) encode() ([]byte, error) {
	out, ok := appendResponseHead(make([]byte, 0, 32+stepResponseSize*len(b.results)), b.req.ID)
	if !ok {
		return nil, fmt.Errorf("server: steps request id %v is not an integer", b.req.ID)
	}
	out = appendStr(appendMapLen(out, 1), "results")
	out = appendArrayLen(out, len(b.results))
	for _, r := range b.results {
		out = appendMapLen(out, 2)
		out = appendBool(appendStr(out, "ok"), r.err == nil)
		if r.err == nil {
			if out, ok = appendStepResult(appendStr(out, "result"), r.res); !ok {
				return nil, fmt.Errorf("server: steps result of type %T", r.res)
			}
			continue
		}
		e, err := marshal(r.err)
		if err != nil {
			return nil, err
		}
		out = append(appendStr(out, "error"), e...)
	}
	return out, nil
}
