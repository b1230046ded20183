package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

// ctlLoop answers connection-level ops in order.
func (c *conn) ctlLoop() {
	for {
		select {
		case req := <-c.ctl:
			c.serveCtl(req)
		case <-c.done:
			return
		}
	}
}

// serveCtl answers one connection-level or build op, recovering from a
// panic.
func (c *conn) serveCtl(req Request) {
	defer c.finishReq(req)
	defer func() {
		if p := recover(); p != nil {
			c.log.Error().Str("op", req.Op).Str("panic", fmt.Sprint(p)).Msg("request panicked")
			c.reply(req.ID, nil, errorf(CodeInternal, "", "%s failed: %v", req.Op, p))
		}
	}()
	res, e := req.def.conn(c, newArgs(req.Args, "", req.def.argKeys()), req.ID)
	c.reply(req.ID, res, e)
	if e != nil && e.Code == CodeVersion {
		c.closeAfterWrites(closeVersion, "unsupported protocol version")
	}
}

// maxBuildsPerConn bounds the builds (open, restore, fork) one connection
// has running or waiting for a build slot; beyond it the client gets busy.
const maxBuildsPerConn = 4

// startBuild runs a build op on its own goroutine, so that stats, hello
// and the connection's sessions stay responsive while it parses, builds or
// replays. At most Options.MaxBuilds builds run at once on the server;
// the rest wait for a slot (or their connection's end).
func (c *conn) startBuild(req Request) {
	select {
	case c.builds <- struct{}{}:
	default:
		c.finishReq(req)
		c.reply(req.ID, nil, errorf(CodeBusy, "", "%d session builds (open, restore, fork) are under way on this connection; wait for their responses", maxBuildsPerConn))
		return
	}
	c.buildWG.Add(1)
	go func() {
		defer c.buildWG.Done()
		defer func() { <-c.builds }()
		select {
		case c.srv.buildSlots <- struct{}{}:
		case <-c.done:
			c.finishReq(req)
			return
		}
		defer func() { <-c.srv.buildSlots }()
		c.serveCtl(req)
	}()
}

// building reports whether a build is under way on c.
func (c *conn) building() bool { return len(c.builds) > 0 }

func (c *conn) opScenarios(a *args, _ any) (any, *Error) {
	if e := a.done(); e != nil {
		return nil, e
	}
	list := []map[string]string{}
	for _, b := range config.Builtins() {
		list = append(list, map[string]string{"name": b.Name, "description": b.Description})
	}
	// The congestion controls a flow's cc may name (pump and ping are flow
	// kinds, not CCs): those built into this binary, a CC of one's own
	// among them (README, Writing a congestion control).
	return map[string]any{"scenarios": list, "ccs": cc.Names()}, nil
}

func (c *conn) opStats(a *args, _ any) (any, *Error) {
	if e := a.done(); e != nil {
		return nil, e
	}
	st := c.srv.stats(c)
	return &st, nil
}

func (c *conn) opHello(a *args, _ any) (any, *Error) {
	v, e := a.str("version")
	if e != nil {
		return nil, e
	}
	client, _, e := a.optStr("client")
	if e != nil {
		return nil, e
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	major, minor, dotted := strings.Cut(v, ".")
	want, _, _ := strings.Cut(ProtocolVersion, ".")
	if _, err := strconv.ParseUint(major, 10, 32); err != nil {
		return nil, errorf(CodeBadArgs, "version", "version %q is not a protocol version; want MAJOR.MINOR, e.g. %q", v, ProtocolVersion)
	}
	if _, err := strconv.ParseUint(minor, 10, 32); dotted && err != nil {
		return nil, errorf(CodeBadArgs, "version", "version %q is not a protocol version; want MAJOR.MINOR, e.g. %q", v, ProtocolVersion)
	}
	if major != want {
		return nil, errorf(CodeVersion, "version", "protocol version %q is not served; this server speaks %s (any %s.x)", v, ProtocolVersion, want)
	}
	c.log.Info().Str("client", client).Str("version", v).Msg("hello")
	return map[string]any{"version": ProtocolVersion, "server": "ccscope", "engine_version": engine.Version,
		"limits": c.srv.opts.limitsMap()}, nil
}

func (c *conn) limits() Limits {
	o := &c.srv.opts
	return Limits{MaxEvents: o.MaxEvents, MaxSimTime: o.MaxSimTime, MaxNodes: o.MaxNodes, MaxLinks: o.MaxLinks,
		MaxFlows: o.MaxFlows, MaxChanges: o.MaxChanges, MaxBytes: o.MaxSessionBytes}
}

// precheckInline refuses an inline config whose lists are already over the
// size limits, before it is turned into JSON and parsed. (The parsed
// scenario is checked again: the format may expand entries.)
func (l Limits) precheckInline(m map[string]any) *Error {
	for _, c := range []struct {
		key   string
		limit int
	}{{"nodes", l.MaxNodes}, {"links", l.MaxLinks}, {"flows", l.MaxFlows}, {"changes", l.MaxChanges}} {
		if list, ok := m[c.key].([]any); ok && c.limit > 0 && len(list) > c.limit {
			return errorf(CodeLimit, "config."+c.key, "the scenario has %d %s, over the server's limit of %d", len(list), c.key, c.limit)
		}
	}
	return nil
}

func (c *conn) opOpen(a *args, _ any) (any, *Error) {
	hasName, hasCfg := a.has("scenario"), a.has("config")
	if hasName == hasCfg {
		return nil, errorf(CodeBadArgs, "scenario", "give exactly one of scenario (a built-in name) and config (a scenario map)")
	}
	var raw []byte
	var e *Error
	if hasName {
		name, e := a.str("scenario")
		if e != nil {
			return nil, e
		}
		b, err := config.Builtin(name)
		if err != nil {
			return nil, errorf(CodeNotFound, "scenario", "%v", err)
		}
		raw = b
	} else {
		m, e := a.mapArg("config")
		if e != nil {
			return nil, e
		}
		if e := c.limits().precheckInline(m); e != nil {
			return nil, e
		}
		if raw, e = inlineConfig(m); e != nil {
			return nil, e
		}
	}
	var seed *uint64
	if a.has("seed") {
		v, e := a.uint("seed")
		if e != nil {
			return nil, e
		}
		seed = &v
	}
	set, _ := a.get("set")
	files, e := a.files("files")
	if e != nil {
		return nil, e
	}
	if e = a.done(); e != nil {
		return nil, e
	}
	canon, notes, e := buildScenario(raw, seed, set, files)
	if e != nil {
		return nil, e
	}
	st, e := newState(canon, c.limits())
	if e != nil {
		return nil, e
	}
	sess, e := startSession(c, st, st.run.Scenario.Name)
	if e != nil {
		return nil, e
	}
	res := st.describe(sess.id)
	if len(notes) > 0 {
		res["notes"] = notes
	}
	return res, nil
}

// opCancel stops the stepping of the requests session got before it
// (session.cancelArrived). It runs on the connection's reader, so that it
// reaches a session whose goroutine is busy with a long run.
func (c *conn) opCancel(a *args, _ any) (any, *Error) {
	id, e := a.str("session")
	if e != nil {
		return nil, e
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	sess := c.session(id)
	if sess == nil {
		return nil, errorf(CodeNotFound, "session", "no session %q on this connection", id)
	}
	sess.cancelArrived()
	sess.log.Info().Msg("stepping cancelled")
	return map[string]any{"session": id}, nil
}

// opRestore restores a checkpoint (or, for fork, a live session's) into a
// new session; fork then applies its actions at the restored position.
func (c *conn) opRestore(a *args, fork bool) (any, *Error) {
	var cp *parsedCheckpoint
	if fork && a.has("session") {
		id, e := a.str("session")
		if e != nil {
			return nil, e
		}
		if a.has("checkpoint") {
			return nil, errorf(CodeBadArgs, "checkpoint", "give checkpoint or session, not both")
		}
		if cp, e = c.liveCheckpoint(id); e != nil {
			return nil, e
		}
	} else {
		m, e := a.mapArg("checkpoint")
		if e != nil {
			return nil, e
		}
		if cp, e = parseCheckpoint(m, "checkpoint."); e != nil {
			return nil, e
		}
	}
	var acts []pathAction
	if fork {
		v, _ := a.get("actions")
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return nil, errorf(CodeBadArgs, "actions", "fork needs actions, a non-empty list of action maps")
		}
		for i, e := range list {
			p := fmt.Sprintf("actions[%d]", i)
			m, ok := e.(map[string]any)
			if !ok {
				return nil, errorf(CodeBadArgs, p, "%s is %s, want an action map", p, typeName(e))
			}
			act, err := parseAction(m, p+".")
			if err != nil {
				return nil, err
			}
			acts = append(acts, pathAction{act, p + "."})
		}
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	st, e := restoreState(c.ctx, cp, c.limits(), c.srv.opts.MaxReplayTime)
	if e != nil {
		return nil, e
	}
	for _, act := range acts {
		if _, e := st.act(act.a, act.path); e != nil {
			return nil, e
		}
	}
	sess, e := startSession(c, st, st.run.Scenario.Name)
	if e != nil {
		return nil, e
	}
	res := st.describe(sess.id)
	res["actions"] = len(st.actions)
	return res, nil
}

// pathAction is a parsed action with the argument path it came from.
type pathAction struct {
	a    engine.Action
	path string
}

// liveCheckpoint asks session id for its checkpoint on the session's own
// goroutine and waits for it.
func (c *conn) liveCheckpoint(id string) (*parsedCheckpoint, *Error) {
	sess := c.session(id)
	if sess == nil {
		return nil, errorf(CodeNotFound, "session", "no session %q on this connection", id)
	}
	got := make(chan *parsedCheckpoint, 1)
	e := sess.enqueue(sessionReq{call: func(s *session) {
		if s == nil {
			got <- nil
			return
		}
		cp := s.st.checkpoint()
		got <- &parsedCheckpoint{Checkpoint: cp, actions: slices.Clone(s.st.applied)}
	}})
	if e != nil {
		return nil, e
	}
	select {
	case cp := <-got:
		if cp == nil {
			return nil, errorf(CodeNotFound, "session", "session %q closed", id)
		}
		return cp, nil
	case <-c.done:
		return nil, errorf(CodeInternal, "", "connection closed")
	}
}
