package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
)

// CheckpointFormat names the checkpoint layout in its "format" key.
const CheckpointFormat = "ccscope-checkpoint/1"

// Checkpoint is a session's state by reference: everything needed to rebuild
// it by replay from the seed, and the digest that proves the replay right.
type Checkpoint struct {
	Format        string         `msgpack:"format"`
	EngineVersion string         `msgpack:"engine_version"`
	Config        string         `msgpack:"config"`
	ConfigHash    string         `msgpack:"config_hash"`
	Seed          uint64         `msgpack:"seed"`
	At            Position       `msgpack:"at"`
	Digest        string         `msgpack:"digest"`
	Actions       []LoggedAction `msgpack:"actions"`
}

// checkpoint describes s where it stands.
func (s *state) checkpoint() Checkpoint {
	return Checkpoint{Format: CheckpointFormat, EngineVersion: engine.Version, Config: string(s.config),
		ConfigHash: s.hash, Seed: s.seed, At: s.position(), Digest: s.digest(),
		Actions: append([]LoggedAction{}, s.actions...)}
}

// parsedCheckpoint is a checkpoint read from a request, its actions parsed.
type parsedCheckpoint struct {
	Checkpoint
	actions []engine.Action
}

// The keys of a checkpoint map, of an entry of its action log, and of a
// position (proto/README.md, "Checkpoints").
var (
	checkpointKeys   = []string{"format", "engine_version", "config", "config_hash", "seed", "digest", "at", "actions"}
	loggedActionKeys = []string{"at", "action"}
	positionKeys     = []string{"events", "sim_time_ps", "drained"}
)

// parseCheckpoint reads a checkpoint map; prefix is its argument path.
func parseCheckpoint(m map[string]any, prefix string) (*parsedCheckpoint, *Error) {
	a := newArgs(m, prefix, checkpointKeys)
	var cp parsedCheckpoint
	var err *Error
	if cp.Format, err = a.str("format"); err != nil {
		return nil, err
	}
	if cp.Format != CheckpointFormat {
		return nil, errorf(CodeBadArgs, a.path("format"), "%s is %q, want %q", a.path("format"), cp.Format, CheckpointFormat)
	}
	if cp.EngineVersion, err = a.str("engine_version"); err != nil {
		return nil, err
	}
	if cp.Config, err = a.str("config"); err != nil {
		return nil, err
	}
	if cp.ConfigHash, err = a.str("config_hash"); err != nil {
		return nil, err
	}
	if cp.Seed, err = a.uint("seed"); err != nil {
		return nil, err
	}
	if cp.Digest, err = a.str("digest"); err != nil {
		return nil, err
	}
	if !isDigest(cp.Digest) {
		return nil, errorf(CodeBadArgs, a.path("digest"), "%s is %q, want 16 hex digits", a.path("digest"), cp.Digest)
	}
	at, err := a.mapArg("at")
	if err != nil {
		return nil, err
	}
	if cp.At, err = parsePosition(at, a.path("at.")); err != nil {
		return nil, err
	}
	v, _ := a.get("actions")
	list, ok := v.([]any)
	if v != nil && !ok {
		return nil, a.typeErr("actions", "a list", v)
	}
	for i, e := range list {
		p := fmt.Sprintf("%sactions[%d].", prefix, i)
		em, ok := e.(map[string]any)
		if !ok {
			return nil, errorf(CodeBadArgs, p[:len(p)-1], "%s is %s, want a map", p[:len(p)-1], typeName(e))
		}
		ea := newArgs(em, p, loggedActionKeys)
		am, err := ea.mapArg("action")
		if err != nil {
			return nil, err
		}
		atm, err := ea.mapArg("at")
		if err != nil {
			return nil, err
		}
		if err := ea.done(); err != nil {
			return nil, err
		}
		pos, err := parsePosition(atm, p+"at.")
		if err != nil {
			return nil, err
		}
		act, err := parseAction(am, p+"action.")
		if err != nil {
			return nil, err
		}
		cp.Actions = append(cp.Actions, LoggedAction{At: pos, Action: wireAction(act)})
		cp.actions = append(cp.actions, act)
	}
	if err := a.done(); err != nil {
		return nil, err
	}
	return &cp, nil
}

func parsePosition(m map[string]any, prefix string) (Position, *Error) {
	a := newArgs(m, prefix, positionKeys)
	var p Position
	var err *Error
	if p.Events, err = a.uint("events"); err != nil {
		return p, err
	}
	t, err := a.uint("sim_time_ps")
	if err != nil {
		return p, err
	}
	if t > math.MaxInt64 {
		return p, errorf(CodeBadArgs, a.path("sim_time_ps"), "%s is %d, beyond the largest time (2^63-1 ps)", a.path("sim_time_ps"), t)
	}
	p.SimTimePs = int64(t)
	v, _ := a.get("drained")
	d, ok := v.(bool)
	if !ok {
		return p, a.typeErr("drained", "a bool", v)
	}
	p.Drained = d
	return p, a.done()
}

// replayCheck is how often (in events) a replay looks at its context.
const replayCheck = 1 << 14

// restoreState rebuilds a checkpoint's run by replay: events are dispatched
// up to each action's position, the action is applied there, and at the
// checkpoint's own position the digest must match. Every position is
// checked against the scenario before the replay starts; the replay never
// dispatches an event later than the position it is heading for (so never
// one past the horizon); it stops when ctx ends or after budget of wall
// time. Its errors name what did not match, never the state the replay
// reached: that would help forge a checkpoint.
func restoreState(ctx context.Context, cp *parsedCheckpoint, limits Limits, budget time.Duration) (*state, *Error) {
	if cp.EngineVersion != engine.Version {
		return nil, errorf(CodeReplayMismatch, "checkpoint.engine_version",
			"the checkpoint was made by engine %s; this server runs %s and cannot replay it exactly", cp.EngineVersion, engine.Version)
	}
	s, err := newState([]byte(cp.Config), limits)
	if err != nil {
		if err.Path == "" {
			err.Path = "checkpoint.config" // not JSON, say: the field that is not
		}
		return nil, err
	}
	if s.hash != cp.ConfigHash {
		return nil, errorf(CodeReplayMismatch, "checkpoint.config_hash", "the config hashes to %s, the checkpoint says %s", s.hash, cp.ConfigHash)
	}
	if s.seed != cp.Seed {
		return nil, errorf(CodeBadArgs, "checkpoint.seed", "checkpoint.seed is %d but the config's runtime.seed is %d", cp.Seed, s.seed)
	}
	var prev Position
	for i := range len(cp.actions) + 1 {
		p, path := cp.At, "checkpoint.at"
		if i < len(cp.actions) {
			p, path = cp.Actions[i].At, fmt.Sprintf("checkpoint.actions[%d].at", i)
		}
		if h := s.run.Horizon(); sim.Time(p.SimTimePs) > h {
			return nil, errorf(CodeBadArgs, path+".sim_time_ps", "%s.sim_time_ps %d is past the scenario's horizon of %d ps", path, p.SimTimePs, int64(h))
		}
		if m := limits.MaxEvents; m > 0 && p.Events > m {
			return nil, errorf(CodeLimit, path+".events", "the position is at event %d, past the server's limit of %d", p.Events, m)
		}
		if p.Events < prev.Events || p.SimTimePs < prev.SimTimePs {
			return nil, errorf(CodeBadArgs, path, "%s comes before the position preceding it; positions must not go back", path)
		}
		prev = p
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	start := time.Now()
	defer func() { s.wall += time.Since(start) }()
	for i, a := range cp.actions {
		p := fmt.Sprintf("checkpoint.actions[%d]", i)
		if err := s.replayTo(ctx, cp.Actions[i].At, p+".at", budget); err != nil {
			return nil, err
		}
		if _, err := s.act(a, p+".action."); err != nil {
			return nil, errorf(CodeReplayMismatch, p, "replaying action %d: %s", i, err.Message)
		}
	}
	if err := s.replayTo(ctx, cp.At, "checkpoint.at", budget); err != nil {
		return nil, err
	}
	if s.digest() != cp.Digest {
		return nil, errorf(CodeReplayMismatch, "checkpoint.digest", "the replay does not reproduce the checkpoint's digest")
	}
	return s, nil
}

// replayTo advances to p exactly: events up to p.Events, none later than
// p's time; then, if p is drained, the rest of its instant, which must hold
// no further event.
func (s *state) replayTo(ctx context.Context, p Position, path string, budget time.Duration) *Error {
	sm := s.run.Sim
	t := sim.Time(p.SimTimePs)
	for sm.Events() < p.Events {
		n := min(p.Events-sm.Events(), replayCheck)
		if sm.StepUntil(n, t) < n {
			return errorf(CodeReplayMismatch, path, "the run does not reach the position's event count by its time")
		}
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return errorf(CodeLimit, "", "the replay took longer than the server's budget of %v", budget)
			}
			return errorf(CodeInternal, "", "connection closed during replay")
		}
	}
	if p.Drained {
		if sm.StepUntil(1, t) != 0 {
			return errorf(CodeReplayMismatch, path, "the run has further events at the position's time: the position was not drained")
		}
		sm.RunUntil(t)
	}
	if sm.Now() != t {
		return errorf(CodeReplayMismatch, path, "the run is not at the position's time after its event count")
	}
	s.drained = p.Drained
	return nil
}

// isDigest says whether d is a run digest as the engine writes it: 16
// lower-case hex digits.
func isDigest(d string) bool {
	if len(d) != 16 {
		return false
	}
	for _, c := range d {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
