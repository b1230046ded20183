package server

import (
	"slices"
	"strings"
)

// scope says where an op runs.
type scope uint8

const (
	// scopeConn ops are answered in order by the connection's worker; they
	// are cheap (no simulation).
	scopeConn scope = iota
	// scopeBuild ops build a session (config parsing, engine construction,
	// replay): each runs on its own goroutine, within the server's build
	// slots, so that a large one does not hold up the connection's other
	// requests.
	scopeBuild
	// scopeSession ops run on their session's goroutine, in arrival order.
	scopeSession
	// scopeSessions ops are read on the connection's reader and handed, in
	// parts, to several sessions' goroutines (steps).
	scopeSessions
	// scopeReader ops are answered by the connection's reader at once,
	// ahead of every queue (cancel: it must reach a session busy with a
	// long run).
	scopeReader
)

func (s scope) String() string {
	return [...]string{"connection", "build", "session", "sessions", "reader"}[s]
}

// argSpec is one argument of an op: its key, whether it must be given, and
// the kind of value it takes as the protocol spec words it.
type argSpec struct {
	name     string
	optional bool
	kind     string
}

// opDef is the single definition of an op: its name, where it runs, the
// arguments it takes (any other key is refused before its value is decoded)
// and its handler. Exactly one of conn, sess and batch is set, as scope
// says.
type opDef struct {
	name  string
	scope scope
	args  []argSpec
	conn  func(c *conn, a *args, id any) (any, *Error)
	sess  func(s *session, a *args, id any) (any, *Error)
	// batch reads the request and answers it itself, once its sessions
	// have run their parts.
	batch func(c *conn, req Request)
	// ends: the session ends once the response is sent (close).
	ends bool
	// inline: the connection's reader may run a short one itself
	// (session.runInline).
	inline bool
}

// answered is the result of a handler that sent its response itself.
var answered = &struct{ answered bool }{true}

// ops is the protocol's op table (proto/README.md, "Operations"). The
// dispatcher, the argument check and the spec's summary table all read it.
var ops = []opDef{
	{name: "hello", scope: scopeConn, args: []argSpec{{"version", false, "string"}, {"client", true, "string"}},
		conn: (*conn).opHello},
	{name: "scenarios", scope: scopeConn, conn: (*conn).opScenarios},
	{name: "open", scope: scopeBuild, args: []argSpec{{"scenario", true, "string"}, {"config", true, "map"},
		{"seed", true, "integer"}, {"set", true, "map or list"}, {"files", true, "map"}}, conn: (*conn).opOpen},
	{name: "step", scope: scopeSession, args: stepArgSpecs, sess: (*session).opStep, inline: true},
	{name: "steps", scope: scopeSessions, args: []argSpec{{"steps", false, "list of step arguments"}}, batch: (*conn).opSteps},
	{name: "run", scope: scopeSession, args: []argSpec{sessionArg, {"until", true, "duration"}}, sess: (*session).opRun},
	{name: "act", scope: scopeSession, args: []argSpec{sessionArg, {"action", false, "map"}}, sess: (*session).opAct},
	{name: "subscribe", scope: scopeSession, args: []argSpec{sessionArg, {"tables", false, "list"}, {"flows", true, "list"},
		{"signals", true, "list"}, {"every_ms", true, "integer"}}, sess: (*session).opSubscribe},
	{name: "unsubscribe", scope: scopeSession, args: []argSpec{sessionArg, {"tables", true, "list"}},
		sess: (*session).opUnsubscribe},
	{name: "signals", scope: scopeSession, args: []argSpec{sessionArg, {"table", false, "string"}, {"flows", true, "list"},
		{"signals", true, "list"}}, sess: (*session).opSignals},
	{name: "summary", scope: scopeSession, args: []argSpec{sessionArg}, sess: (*session).opSummary},
	{name: "report", scope: scopeSession, args: []argSpec{sessionArg, {"flows", true, "list"}, {"buckets", true, "integer"}},
		sess: (*session).opReport},
	{name: "checkpoint", scope: scopeSession, args: []argSpec{sessionArg}, sess: (*session).opCheckpoint},
	{name: "restore", scope: scopeBuild, args: []argSpec{{"checkpoint", false, "map"}},
		conn: func(c *conn, a *args, _ any) (any, *Error) { return c.opRestore(a, false) }},
	{name: "fork", scope: scopeBuild, args: []argSpec{{"checkpoint", true, "map"}, {"session", true, "string"},
		{"actions", false, "list"}}, conn: func(c *conn, a *args, _ any) (any, *Error) { return c.opRestore(a, true) }},
	{name: "cancel", scope: scopeReader, args: []argSpec{sessionArg}, conn: (*conn).opCancel},
	{name: "close", scope: scopeSession, args: []argSpec{sessionArg}, sess: (*session).opClose, ends: true},
	{name: "stats", scope: scopeConn, conn: (*conn).opStats},
}

// sessionArg is the argument every session op takes first.
var sessionArg = argSpec{"session", false, "string"}

// stepArgSpecs are step's arguments, and those of an entry of steps.
var stepArgSpecs = []argSpec{sessionArg, {"time", true, "duration"}, {"events", true, "integer"},
	{"action", true, "map"}, {"observe", true, "string"}, {"obs_format", true, "string"}}

// opIndex finds an op by name.
var opIndex = func() map[string]*opDef {
	m := make(map[string]*opDef, len(ops))
	for i := range ops {
		o := &ops[i]
		handlers := 0
		for _, set := range []bool{o.conn != nil, o.sess != nil, o.batch != nil} {
			if set {
				handlers++
			}
		}
		if _, dup := m[o.name]; dup || handlers != 1 || (o.sess != nil) != (o.scope == scopeSession) ||
			(o.batch != nil) != (o.scope == scopeSessions) {
			panic("server: op table entry " + o.name + " is malformed")
		}
		m[o.name] = o
	}
	return m
}()

// lookupOp returns the op named name, or nil.
func lookupOp(name string) *opDef { return opIndex[name] }

// takes reports whether the op has an argument key.
func (o *opDef) takes(key string) bool {
	return slices.ContainsFunc(o.args, func(a argSpec) bool { return a.name == key })
}

// argKeys lists the op's argument keys.
func (o *opDef) argKeys() []string { return specKeys(o.args) }

// specKeys lists the keys of argument specs.
func specKeys(specs []argSpec) []string {
	names := make([]string, len(specs))
	for i, a := range specs {
		names[i] = a.name
	}
	return names
}

// argNames lists the op's argument keys, for error messages.
func (o *opDef) argNames() string {
	if len(o.args) == 0 {
		return "none"
	}
	return strings.Join(o.argKeys(), ", ")
}

// specTable renders the op table as the summary table in proto/README.md.
func specTable() string {
	var b strings.Builder
	b.WriteString("| op | runs on | args |\n|----|---------|------|\n")
	for _, o := range ops {
		var as []string
		for _, a := range o.args {
			n := "`" + a.name
			if a.optional {
				n += "?"
			}
			as = append(as, n+"` ("+a.kind+")")
		}
		if len(as) == 0 {
			as = []string{"none"}
		}
		b.WriteString("| `" + o.name + "` | " + o.scope.String() + " | " + strings.Join(as, ", ") + " |\n")
	}
	return b.String()
}
