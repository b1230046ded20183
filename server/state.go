package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/cc"
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

// Limits bound what one session may consume.
type Limits struct {
	MaxEvents  uint64       // events dispatched per session (0: no limit)
	MaxSimTime sim.Duration // horizon per session (0: no limit)
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
// then the seed, then the overrides (a map or a list of "path=value").
func buildScenario(raw []byte, seed *uint64, set any) ([]byte, *Error) {
	var err error
	if seed != nil {
		if raw, err = config.Override(raw, "runtime.seed", *seed); err != nil {
			return nil, configError(err, "")
		}
	}
	switch s := set.(type) {
	case nil:
	case map[string]any:
		if raw, err = config.OverrideAll(raw, s); err != nil {
			return nil, configError(err, "set.")
		}
	case []any:
		sets := make([]string, len(s))
		for i, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, errorf(CodeBadArgs, "set", "set[%d] is a %s, want \"path=value\"", i, typeName(e))
			}
			sets[i] = str
		}
		if raw, err = config.Apply(raw, sets); err != nil {
			return nil, configError(err, "set.")
		}
	default:
		return nil, errorf(CodeBadArgs, "set", "set is a %s, want a map {path: value} or a list of \"path=value\"", typeName(set))
	}
	scn, err := config.Parse(raw, config.WithCCs(cc.Names()))
	if err != nil {
		return nil, configError(err, "")
	}
	return scn.Canonical(), nil
}

// inlineConfig is the JSON of an inline config map.
func inlineConfig(m map[string]any) ([]byte, *Error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, errorf(CodeBadArgs, "config", "config cannot be read as scenario JSON: %v", err)
	}
	return b, nil
}

// newState builds a fresh run of canonical scenario JSON.
func newState(canonical []byte, limits Limits) (*state, *Error) {
	scn, err := config.Parse(canonical, config.WithCCs(cc.Names()))
	if err != nil {
		return nil, configError(err, "")
	}
	if limits.MaxSimTime > 0 && scn.Runtime.Duration > limits.MaxSimTime {
		return nil, errorf(CodeLimit, "", "runtime.duration %v exceeds the server's limit of %v per session", scn.Runtime.Duration, limits.MaxSimTime)
	}
	r, err := engine.New(scn, nil)
	if err != nil {
		return nil, &Error{Code: CodeInvalidConfig, Message: err.Error()}
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

// runTo advances to sim time target (capped at the horizon) in chunks,
// calling tick after each. Chunks end at RunUntil boundaries, and since
// RunUntil(a) then RunUntil(b) dispatches exactly what RunUntil(b) does,
// chunking never changes the run. It stops early, at a chunk boundary, on
// ctx's end, on tick's error or at the events limit.
func (s *state) runTo(ctx context.Context, target sim.Time, tick func() *Error) *Error {
	target = min(target, s.run.Horizon())
	chunk := sim.Duration(sim.Millisecond)
	start := time.Now()
	defer func() { s.wall += time.Since(start) }()
	for s.run.Now() < target {
		t0 := time.Now()
		s.run.RunUntil(min(s.run.Now().Add(chunk), target))
		s.drained = true
		switch d := time.Since(t0); {
		case d < chunkWallLo && chunk < sim.Second:
			chunk *= 2
		case d > chunkWallHi && chunk > sim.Nanosecond:
			chunk /= 2
		}
		if err := s.overLimit(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errorf(CodeInternal, "", "session closed while stepping")
		}
		if tick != nil {
			if err := tick(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepEvents dispatches up to n events (fewer at the horizon or the events
// limit).
func (s *state) stepEvents(n uint64) *Error {
	capped := false
	if m := s.limits.MaxEvents; m > 0 {
		if left := m - min(m, s.run.Sim.Events()); n > left {
			n, capped = left, true
		}
	}
	start := time.Now()
	before := s.run.Sim.Events()
	s.run.StepEvents(n)
	s.wall += time.Since(start)
	if s.run.Sim.Events() != before {
		s.drained = false
	}
	// StepEvents ends with RunUntil(horizon) once no event is left at or
	// before the horizon: the instant is then drained.
	if s.run.Sim.NextAt() > s.run.Horizon() {
		s.drained = true
	}
	if capped {
		return s.overLimit()
	}
	return nil
}

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
		return 0, errorf(CodeBadArgs, prefix[:max(len(prefix)-1, 0)], "%v", err)
	}
	s.actions = append(s.actions, LoggedAction{At: s.position(), Action: wireAction(a)})
	s.applied = append(s.applied, a)
	return len(s.actions) - 1, nil
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
	flows := []string{}
	for _, f := range s.run.Scenario.Flows {
		flows = append(flows, f.ID)
	}
	links := []string{}
	for _, l := range s.run.Scenario.Links {
		links = append(links, l.ID)
	}
	return map[string]any{"session": id, "config_hash": s.hash, "config": string(s.config), "seed": s.seed,
		"horizon_ps": int64(s.run.Horizon()), "sim_time_ps": int64(s.run.Now()), "events": s.run.Sim.Events(),
		"digest": s.digest(), "flows": flows, "links": links}
}
