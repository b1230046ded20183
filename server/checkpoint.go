package server

import (
	"context"
	"fmt"
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

// parseCheckpoint reads a checkpoint map; prefix is its argument path.
func parseCheckpoint(m map[string]any, prefix string) (*parsedCheckpoint, *Error) {
	a := newArgs(m, prefix)
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
			return nil, errorf(CodeBadArgs, p[:len(p)-1], "%s is a %s, want a map", p[:len(p)-1], typeName(e))
		}
		ea := newArgs(em, p)
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
	a := newArgs(m, prefix)
	var p Position
	var err *Error
	if p.Events, err = a.uint("events"); err != nil {
		return p, err
	}
	t, err := a.uint("sim_time_ps")
	if err != nil {
		return p, err
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
// one at a time up to each action's position, the action is applied there,
// and at the checkpoint's own position the digest must match.
func restoreState(ctx context.Context, cp *parsedCheckpoint, limits Limits) (*state, *Error) {
	if cp.EngineVersion != engine.Version {
		return nil, errorf(CodeReplayMismatch, "checkpoint.engine_version",
			"the checkpoint was made by engine %s; this server runs %s and cannot replay it exactly", cp.EngineVersion, engine.Version)
	}
	s, err := newState([]byte(cp.Config), limits)
	if err != nil {
		return nil, err
	}
	if s.hash != cp.ConfigHash {
		return nil, errorf(CodeReplayMismatch, "checkpoint.config_hash", "the config hashes to %s, the checkpoint says %s", s.hash, cp.ConfigHash)
	}
	if s.seed != cp.Seed {
		return nil, errorf(CodeBadArgs, "checkpoint.seed", "checkpoint.seed is %d but the config's runtime.seed is %d", cp.Seed, s.seed)
	}
	if m := limits.MaxEvents; m > 0 && cp.At.Events > m {
		return nil, errorf(CodeLimit, "checkpoint.at.events", "the checkpoint is at event %d, past the server's limit of %d", cp.At.Events, m)
	}
	start := time.Now()
	defer func() { s.wall += time.Since(start) }()
	for i, a := range cp.actions {
		p := fmt.Sprintf("checkpoint.actions[%d]", i)
		if err := s.replayTo(ctx, cp.Actions[i].At, p+".at"); err != nil {
			return nil, err
		}
		if _, err := s.act(a, p+".action."); err != nil {
			return nil, errorf(CodeReplayMismatch, p, "replaying action %d: %s", i, err.Message)
		}
	}
	if err := s.replayTo(ctx, cp.At, "checkpoint.at"); err != nil {
		return nil, err
	}
	if d := s.digest(); d != cp.Digest {
		return nil, errorf(CodeReplayMismatch, "checkpoint.digest",
			"replay reached event %d at %v with digest %s, the checkpoint says %s", cp.At.Events, sim.Time(cp.At.SimTimePs), d, cp.Digest)
	}
	return s, nil
}

// replayTo advances to p exactly: single events up to p.Events, then, if p
// is drained, the rest of its instant without dispatching further events.
func (s *state) replayTo(ctx context.Context, p Position, path string) *Error {
	sm := s.run.Sim
	if sm.Events() > p.Events {
		return errorf(CodeReplayMismatch, path, "position at event %d comes before the replay's event %d; positions must not go back", p.Events, sm.Events())
	}
	for sm.Events() < p.Events {
		if sm.Step(1) == 0 {
			return errorf(CodeReplayMismatch, path, "the run ran out of events at %d, before event %d", sm.Events(), p.Events)
		}
		if sm.Events()%replayCheck == 0 && ctx.Err() != nil {
			return errorf(CodeInternal, "", "connection closed during replay")
		}
	}
	t := sim.Time(p.SimTimePs)
	if p.Drained {
		if sm.Now() > t {
			return errorf(CodeReplayMismatch, path, "replay is at %v after event %d, past the position's %v", sm.Now(), p.Events, t)
		}
		// A bogus position could hide any number of events before t:
		// stop as soon as one more than p.Events is dispatched.
		if err := s.runChunked(ctx, t, p.Events+1, nil); err != nil {
			return err
		}
		if sm.Events() != p.Events {
			return errorf(CodeReplayMismatch, path, "events remained before %v after event %d: the position was not drained", t, p.Events)
		}
	}
	if sm.Now() != t {
		return errorf(CodeReplayMismatch, path, "replay is at %v after event %d, the position says %v", sm.Now(), p.Events, t)
	}
	s.drained = p.Drained
	return nil
}
