package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// Position is where in a run's event sequence something happened
// (proto/README.md, "Checkpoints"). Drained is true when every event at or
// before SimTimePs had been dispatched: replay then finishes the instant
// with RunUntil; false after a step by events, when more events at the same
// instant may still be queued and must not be dispatched.
type Position struct {
	Events    uint64 `msgpack:"events"`
	SimTimePs int64  `msgpack:"sim_time_ps"`
	Drained   bool   `msgpack:"drained"`
}

// LoggedAction is an entry of a session's action log.
type LoggedAction struct {
	At     Position   `msgpack:"at"`
	Action WireAction `msgpack:"action"`
}

// Limits bound what one session may consume. Zero is no limit.
type Limits struct {
	MaxEvents  uint64       // events dispatched per session
	MaxSimTime sim.Duration // horizon per session
	MaxNodes   int          // scenario size, checked before the build
	MaxLinks   int
	MaxFlows   int // after any expansion the scenario format does
	MaxChanges int
	MaxBytes   int64 // SessionBytes, checked before the build
}

// The memory a built session takes, measured on this engine with
// runtime.MemStats (TestSessionBytesBoundsHeap keeps the figures honest):
// about 10 KB per TCP flow (endpoints and CC state; histograms and
// scoreboards grow on first use), 4 KB per link (two directions with
// their queues and models), and next-hop tables of a pointer per node, one
// table for each node that forwards or has several links (a host on one
// link has none: topo's route), with equal-cost sets beside a multipath
// router's. The constants round those up.
const (
	sessionBase      = 512 << 10
	sessionPerFlow   = 16 << 10
	sessionPerLink   = 8 << 10
	sessionPerRoute  = 32 // per node in a next-hop table
	sessionPerChange = 256
)

// SessionBytes estimates the heap a session of scn takes once built, before
// it runs. Trace rows kept for signals come on top, bounded separately by
// max_trace_rows.
func SessionBytes(scn *config.Scenario) int64 {
	degree := map[string]int{}
	for _, l := range scn.Links {
		degree[l.A]++
		degree[l.B]++
	}
	var tables int64
	for _, n := range scn.Nodes {
		if n.Kind != config.Endpoint || degree[n.ID] > 1 {
			tables++
		}
	}
	return sessionBase + sessionPerFlow*int64(len(scn.Flows)) + sessionPerLink*int64(len(scn.Links)) +
		sessionPerRoute*tables*int64(len(scn.Nodes)) + sessionPerChange*int64(len(scn.Changes))
}

// checkSize refuses a scenario over the size limits or the memory
// estimate, before anything is built.
func (l Limits) checkSize(scn *config.Scenario) *Error {
	for _, c := range []struct {
		what  string
		n     int
		limit int
	}{{"nodes", len(scn.Nodes), l.MaxNodes}, {"links", len(scn.Links), l.MaxLinks},
		{"flows", len(scn.Flows), l.MaxFlows}, {"changes", len(scn.Changes), l.MaxChanges}} {
		if c.limit > 0 && c.n > c.limit {
			return errorf(CodeLimit, c.what, "the scenario has %d %s, over the server's limit of %d", c.n, c.what, c.limit)
		}
	}
	if b := SessionBytes(scn); l.MaxBytes > 0 && b > l.MaxBytes {
		return errorf(CodeLimit, "", "the session would take about %d MiB, over the server's limit of %d MiB per session", b>>20, l.MaxBytes>>20)
	}
	return nil
}

// state is a session's simulation: the run, where it stands and how it got
// there. It has no network code and is used by one goroutine at a time.
type state struct {
	run     *engine.Run
	config  []byte // canonical scenario JSON
	hash    string
	seed    uint64
	drained bool
	actions []LoggedAction
	applied []engine.Action // actions[i] as applied
	wall    time.Duration   // spent stepping
	limits  Limits
}

// buildScenario turns open's inputs into canonical JSON: raw scenario JSON,
// then the overrides (a map or a list of "path=value"), then the seed, read
// with the trace and CDF files sent with them. The notes name overrides
// that replaced an object and dropped its fields (config.ApplyNoted), those
// the seed overrides, and files sent that the scenario names neither before
// nor after them.
func buildScenario(raw []byte, seed *uint64, set any, files map[string][]byte) ([]byte, []string, *Error) {
	var err error
	given := raw // before the overrides: a client sends the files it names too
	var notes, seedSets []string
	switch s := set.(type) {
	case nil:
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(s)) {
			if e := jsonValue(s[k], "set["+strconv.Quote(k)+"]"); e != nil {
				return nil, nil, e
			}
			if b, err := json.Marshal(s[k]); err == nil && config.OverrideSets(k+"="+string(b), "runtime.seed") {
				seedSets = append(seedSets, k+"="+string(b))
			}
		}
		if raw, notes, err = config.OverrideAllNoted(raw, s); err != nil {
			return nil, nil, configError(err, "set.")
		}
	case []any:
		sets := make([]string, len(s))
		for i, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, nil, errorf(CodeBadArgs, "set", "set[%d] is %s, want \"path=value\"", i, typeName(e))
			}
			sets[i] = str
			if config.OverrideSets(str, "runtime.seed") {
				seedSets = append(seedSets, str)
			}
		}
		if raw, notes, err = config.ApplyNoted(raw, sets); err != nil {
			return nil, nil, configError(err, "set.")
		}
	default:
		return nil, nil, errorf(CodeBadArgs, "set", "set is %s, want a map {path: value} or a list of \"path=value\"", typeName(set))
	}
	// The seed comes after the overrides, so it wins, as --seed does on the
	// command line.
	if seed != nil {
		if raw, err = config.Override(raw, "runtime.seed", *seed); err != nil {
			return nil, nil, configError(err, "")
		}
		for _, s := range seedSets {
			notes = append(notes, fmt.Sprintf("seed %d overrides set %s", *seed, s))
		}
	}
	scn, err := config.Parse(raw, append(engine.CCChecks(), config.WithFiles(files))...)
	if err != nil {
		return nil, nil, configError(err, "")
	}
	if n := unnamedFiles(files, append(config.FileNames(given), config.FileNames(raw)...)); n != "" {
		notes = append(notes, n)
	}
	return scn.Canonical(), notes, nil
}

// unnamedFiles is the note on the files sent with a scenario that it does
// not name (they are not read), the first ten by name; "" when there are
// none.
func unnamedFiles(files map[string][]byte, named []string) string {
	var unnamed []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !slices.Contains(named, name) {
			unnamed = append(unnamed, strconv.Quote(name))
		}
	}
	switch n := len(unnamed); {
	case n == 0:
		return ""
	case n == 1:
		return "files[" + unnamed[0] + "] was sent, but the scenario names no such file; it was not read"
	case n > 10:
		unnamed = append(unnamed[:10], fmt.Sprintf("and %d more", n-10))
	}
	return "files " + strings.Join(unnamed, ", ") + " were sent, but the scenario names no such files; they were not read"
}

// inlineConfig is the JSON of an inline config map.
func inlineConfig(m map[string]any) ([]byte, *Error) {
	if e := jsonValue(m, "config"); e != nil {
		return nil, e
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, errorf(CodeBadArgs, "config", "config cannot be read as scenario JSON: %v", err)
	}
	return b, nil
}

// jsonValue refuses what in v, a decoded msgpack value bound for scenario
// JSON, JSON cannot say as sent: encoding/json writes a bin as base64 text,
// which the scenario would then read as a string the client never sent
// (a description "hello" sent as bin became "aGVsbG8="), and a str's bytes
// that are not UTF-8 as U+FFFD; JSON has no NaN or infinity. path names v
// in the request.
func jsonValue(v any, path string) *Error {
	switch x := v.(type) {
	case []byte:
		return errorf(CodeBadArgs, path, "is a msgpack bin; a scenario holds no binary values: send text as a str")
	case string:
		if !utf8.ValidString(x) {
			return errorf(CodeBadArgs, path, "is not UTF-8 text")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return errorf(CodeBadArgs, path, "%v is not a number JSON can hold", x)
		}
	case []any:
		for i, e := range x {
			if err := jsonValue(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if !utf8.ValidString(k) {
				return errorf(CodeBadArgs, path, "has a key that is not UTF-8 text, %q", k)
			}
			if err := jsonValue(x[k], path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// newState builds a fresh run of canonical scenario JSON.
func newState(canonical []byte, limits Limits) (*state, *Error) {
	scn, err := config.Parse(canonical, engine.CCChecks()...)
	if err != nil {
		return nil, configError(err, "")
	}
	if limits.MaxSimTime > 0 && scn.Runtime.Duration > limits.MaxSimTime {
		return nil, errorf(CodeLimit, "runtime.duration", "runtime.duration %v exceeds the server's limit of %v per session", scn.Runtime.Duration, limits.MaxSimTime)
	}
	if e := limits.checkSize(scn); e != nil {
		return nil, e
	}
	r, err := engine.New(scn, nil)
	if err != nil {
		return nil, &Error{Code: CodeInvalidConfig, Message: text(err.Error())}
	}
	return &state{run: r, config: canonical, hash: scn.Hash(), seed: scn.Runtime.Seed, limits: limits}, nil
}

// position is where the run stands.
func (s *state) position() Position {
	return Position{Events: s.run.Sim.Events(), SimTimePs: int64(s.run.Now()), Drained: s.drained}
}

// stepResult is step's and run's result.
type stepResult struct {
	SimTimePs int64  `msgpack:"sim_time_ps"`
	Events    uint64 `msgpack:"events"`
	Done      bool   `msgpack:"done"`
	Digest    string `msgpack:"digest,omitempty"`
	// Cancelled: a cancel op stopped the step or run here, short of its
	// target.
	Cancelled bool `msgpack:"cancelled,omitempty"`
}

func (s *state) result() stepResult {
	return stepResult{SimTimePs: int64(s.run.Now()), Events: s.run.Sim.Events(), Done: s.run.Done()}
}

// chunkWall is the wall time one chunk of a time step aims at: short enough
// to notice a cancelled context and push streams, long enough that the
// per-chunk overhead does not show.
const (
	chunkWallLo = 2 * time.Millisecond
	chunkWallHi = 8 * time.Millisecond
)

// runTo advances to sim time target (capped at the horizon), calling tick
// after each chunk. It stops early, at a chunk boundary, on ctx's end, on
// tick's error, at the events limit, or when stop (if not nil) says so
// (a cancel op): it then reports cancelled, having advanced as a step by
// time to the clock it stopped at would have.
func (s *state) runTo(ctx context.Context, target sim.Time, stop func() bool, tick func() *Error) (cancelled bool, e *Error) {
	start := time.Now()
	defer func() { s.wall += time.Since(start) }()
	if cancelled, e = s.runChunked(ctx, min(target, s.run.Horizon()), s.limits.MaxEvents, stop, tick); cancelled || e != nil {
		return cancelled, e
	}
	return false, s.overLimit()
}

// runChunked runs RunUntil(target) as a series of RunUntil calls to
// increasing times. Since RunUntil(a) then RunUntil(b) dispatches exactly
// what RunUntil(b) does, chunking never changes the run; it lets the loop
// look at ctx, stop, tick and the event count between chunks, and a run
// stopped after a chunk stands exactly where a step by time to that
// chunk's end would have left it. Chunks start at a microsecond of sim
// time and double while they are cheap, so a target far away costs few
// chunks and a dense instant cannot run far past maxEvents (0: no limit)
// before the loop stops. stop is looked at before the first chunk too: a
// request cancelled while it waited advances nothing.
func (s *state) runChunked(ctx context.Context, target sim.Time, maxEvents uint64, stop func() bool, tick func() *Error) (cancelled bool, e *Error) {
	chunk := sim.Duration(sim.Microsecond)
	sm := s.run.Sim
	for sm.Now() < target {
		if stop != nil && stop() {
			return true, nil
		}
		t0, ev0 := time.Now(), sm.Events()
		next := target
		if target.Sub(sm.Now()) > chunk {
			next = sm.Now().Add(chunk)
		}
		sm.RunUntil(next)
		s.drained = true
		if maxEvents > 0 && sm.Events() >= maxEvents {
			return false, nil
		}
		dense := maxEvents > 0 && sm.Events()-ev0 > (maxEvents-ev0)/8
		switch d := time.Since(t0); {
		case (d > chunkWallHi || dense) && chunk > sim.Picosecond:
			chunk /= 2
		case d < chunkWallLo && chunk < sim.Duration(math.MaxInt64/4):
			chunk *= 2
		}
		if ctx.Err() != nil {
			return false, errorf(CodeInternal, "", "session closed while stepping")
		}
		if tick != nil {
			if err := tick(); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// stepEvents dispatches up to n events (fewer at the horizon or the events
// limit), in batches so that a closed session stops soon and a cancel op
// (stop, if not nil) takes effect between batches: it then reports
// cancelled, having advanced as a step of the events it dispatched would
// have. Batching does not change the run: StepEvents only ends with
// RunUntil(horizon) when no event is left before the horizon, when a
// further batch would do nothing else.
func (s *state) stepEvents(ctx context.Context, n uint64, stop func() bool) (cancelled bool, e *Error) {
	capped := false
	if m := s.limits.MaxEvents; m > 0 {
		if left := m - min(m, s.run.Sim.Events()); n > left {
			n, capped = left, true
		}
	}
	start := time.Now()
	defer func() { s.wall += time.Since(start) }()
	for n > 0 {
		if stop != nil && stop() {
			return true, nil
		}
		batch := min(n, stepBatch)
		before := s.run.Sim.Events()
		done := s.run.StepEvents(batch)
		if s.run.Sim.Events() != before {
			s.drained = false
		}
		// StepEvents ends with RunUntil(horizon) once no event is left at
		// or before the horizon: the instant is then drained.
		if s.run.Sim.NextAt() > s.run.Horizon() {
			s.drained = true
		}
		if done < batch {
			break
		}
		n -= batch
		if ctx.Err() != nil {
			return false, errorf(CodeInternal, "", "session closed while stepping")
		}
	}
	if capped {
		return false, s.overLimit()
	}
	return false, nil
}

// stepBatch is how many events stepEvents dispatches between looks at its
// context.
const stepBatch = 1 << 16

func (s *state) overLimit() *Error {
	if m := s.limits.MaxEvents; m > 0 && s.run.Sim.Events() >= m {
		return errorf(CodeLimit, "", "the session reached the server's limit of %d events", m)
	}
	return nil
}

// act applies a (already checked by parseAction) now and logs it.
func (s *state) act(a engine.Action, prefix string) (int, *Error) {
	if err := checkTarget(s.run, a, prefix); err != nil {
		return 0, err
	}
	if err := s.run.Act(a); err != nil {
		return 0, errorf(CodeBadArgs, refusedPath(err, prefix), "%v", err)
	}
	s.actions = append(s.actions, LoggedAction{At: s.position(), Action: wireAction(a)})
	s.applied = append(s.applied, a)
	return len(s.actions) - 1, nil
}

// refusedPath is the path of the field an engine refusal names ("engine:
// action.rate: …" under prefix "actions[2]." is "actions[2].rate"), or of
// the action itself.
func refusedPath(err error, prefix string) string {
	if rest, ok := strings.CutPrefix(err.Error(), "engine: action."); ok {
		if field, _, ok := strings.Cut(rest, ":"); ok {
			return prefix + field
		}
	}
	return prefix[:max(len(prefix)-1, 0)]
}

// digest is the run's digest so far.
func (s *state) digest() string { return engine.DigestString(s.run.Sim.Digest()) }

// summary is the run's summary so far.
func (s *state) summary() engine.Summary {
	sum := s.run.Summary(s.hash)
	sum.WallS = s.wall.Seconds()
	return sum
}

// describe is open's and restore's result.
func (s *state) describe(id string) map[string]any {
	flows := append([]string{}, s.run.Trace.Flows...) // a split flow's legs, not its id
	links := []string{}
	for _, l := range s.run.Scenario.Links {
		links = append(links, l.ID)
	}
	paths := []map[string]any{}
	for i, f := range flows {
		p := s.run.Path(i)
		paths = append(paths, map[string]any{"flow": f, "bottleneck": p.Bottleneck, "bottleneck_bps": p.BottleneckBps,
			"base_rtt_ps": p.BaseRTTPs, "bdp_bytes": p.BDPBytes})
	}
	// Each direction's queue limits where the session stands (after a
	// restored checkpoint's actions), a BDP multiple resolved.
	queues := []map[string]any{}
	for _, d := range s.run.Net.Dirs {
		q := map[string]any{"link": d.Link, "dir": d.DirName()}
		b, p := engine.QueueLimit(d)
		if b > 0 {
			q["limit_bytes"] = b
		}
		if p > 0 {
			q["limit_packets"] = p
		}
		queues = append(queues, q)
	}
	return map[string]any{"session": id, "config_hash": s.hash, "config": string(s.config), "seed": s.seed,
		"horizon_ps": int64(s.run.Horizon()), "sim_time_ps": int64(s.run.Now()), "events": s.run.Sim.Events(),
		"digest": s.digest(), "flows": flows, "links": links, "paths": paths, "queues": queues}
}
