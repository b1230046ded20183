package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// sweepAction draws an action map on s's links or flows, as a client sends
// one: a rate, delay, loss (Bernoulli or a model), jitter model, capacity
// process, outage or queue limit on a link direction, or a flow's cwnd or
// pacing rate.
func sweepAction(r *rand.Rand, s *state) map[string]any {
	links := s.run.Scenario.Links
	if r.IntN(2) == 0 || len(s.run.Trace.Flows) == 0 {
		m := map[string]any{"link": links[r.IntN(len(links))].ID, "dir": []string{"ab", "ba"}[r.IntN(2)]}
		switch r.IntN(8) {
		case 0:
			m["rate"] = fmt.Sprintf("%dMbps", 1+r.IntN(50))
		case 1:
			m["delay"] = fmt.Sprintf("%dus", r.IntN(40000))
		case 2:
			m["loss"] = r.Float64() * 0.05
		case 3:
			m["loss"] = map[string]any{"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.4, "position": []string{"pre", "post"}[r.IntN(2)]}
		case 4:
			m["jitter"] = []map[string]any{
				{"kind": "gaussian", "sigma": "1ms", "order": "reorder"},
				{"kind": "wifi_txop", "interval": "2ms", "burst_size": 32},
				{"kind": "reorder", "p": 0.05, "delay": "2ms"},
				{"kind": "burst", "period": "50ms", "length": "10ms", "extra": "5ms"},
				{"kind": "none"},
			}[r.IntN(5)]
		case 5:
			m["capacity"] = map[string]any{
				"states": []any{map[string]any{"rate": fmt.Sprintf("%dMbps", 1+r.IntN(30)), "dwell": "100ms"},
					map[string]any{"rate": fmt.Sprintf("%dMbps", 1+r.IntN(30)), "dwell": "50ms"}},
				"transitions": []any{[]any{0, 1}, []any{1, 0}},
				"grant":       map[string]any{"start": 0.5, "ramp": "10ms"}}
		case 6:
			m["outage"] = fmt.Sprintf("%dms", 1+r.IntN(300))
			if r.IntN(2) == 0 {
				m["duplicate"] = []float64{0, 0.01, 0.2}[r.IntN(3)]
			}
		default:
			m["queue_limit"] = fmt.Sprintf("%dp", 2+r.IntN(300))
		}
		return m
	}
	flow := s.run.Trace.Flows[r.IntN(len(s.run.Trace.Flows))]
	if r.IntN(2) == 0 {
		return map[string]any{"flow": flow, "cwnd": int64(1 + r.IntN(100))}
	}
	return map[string]any{"flow": flow, "pacing_rate": fmt.Sprintf("%dMbps", 1+r.IntN(30))}
}

// asSent is v encoded as the server sends it and decoded as a request
// carries it back.
func asSent(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	m, err := decodeValue(b)
	if err != nil {
		t.Fatalf("decodeValue: %v", err)
	}
	return m.(map[string]any)
}

// Checkpoints taken anywhere restore exactly. Each built-in, cut to 1–2 s
// with a random seed, is driven as a client drives a session: steps by
// time and by events (leaving instants drained or not), random actions on
// its links and flows (refused ones included), checkpoints between them.
// Every checkpoint, through the wire encoding, restores (replaying to its
// digest), and the restored session, given the original's later actions
// at their logged positions (a fork), ends where the original did, digest
// and event count.
func TestCheckpointSweep(t *testing.T) {
	t.Parallel()
	for bi, b := range config.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			raw, err := config.Builtin(b.Name)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 4 {
				checkpointRound(t, raw, rand.New(rand.NewPCG(uint64(bi), uint64(round))))
			}
		})
	}
}

// checkpointRound is one session of TestCheckpointSweep on built-in raw.
func checkpointRound(t *testing.T, raw []byte, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	dur := 1000 + r.IntN(1000)
	if strings.Contains(string(raw), `"10Gbps"`) {
		dur /= 5 // 10 Gbps links (dumbbell-n: 32 hosts on them) cost millions of events a second
	}
	sets := []any{fmt.Sprintf("runtime.duration=%dms", dur), fmt.Sprintf("runtime.seed=%d", r.Uint64()>>1),
		// leo-handover's changes come every 15 s: none in a run this short
		"changes=[]"}
	for _, g := range []string{"bulk", "incast"} { // dumbbell-n's and dc-incast's groups: a few flows suffice
		if strings.Contains(string(raw), fmt.Sprintf(`"group": %q`, g)) {
			sets = append(sets, fmt.Sprintf("flows.%s.count=%d", g, 2+r.IntN(6)))
		}
	}
	canon, _, e := buildScenario(raw, nil, sets, nil)
	if e != nil {
		t.Fatalf("buildScenario: %v", e)
	}
	s, e := newState(canon, Limits{})
	if e != nil {
		t.Fatalf("newState: %v", e)
	}
	var cps []Checkpoint
	for !s.run.Done() {
		switch r.IntN(6) {
		case 0, 1:
			s.runTo(ctx, s.run.Now().Add(sim.Duration(1+r.Int64N(int64(300*sim.Millisecond)))), nil, nil)
		case 2, 3:
			s.stepEvents(ctx, uint64(1+r.IntN(20000)), nil)
		case 4:
			a, pe := parseAction(sweepAction(r, s), "action.")
			if pe != nil {
				t.Fatalf("parseAction: %v", pe)
			}
			s.act(a, "action.")
		default:
			cps = append(cps, s.checkpoint())
		}
	}
	last := s.checkpoint()
	cps = append(cps, last)
	for i, cp := range cps {
		pc, e := parseCheckpoint(asSent(t, cp), "checkpoint.")
		if e != nil {
			t.Fatalf("checkpoint %d: %v", i, e)
		}
		f, e := restoreState(ctx, pc, Limits{}, time.Minute)
		if e != nil {
			t.Fatalf("checkpoint %d of %d (at %+v, %d actions): restore: %v", i, len(cps), cp.At, len(cp.Actions), e)
		}
		for j := len(cp.Actions); j < len(last.Actions); j++ {
			la := last.Actions[j]
			if e := f.replayTo(ctx, la.At, "at", time.Minute); e != nil {
				t.Fatalf("checkpoint %d: to action %d: %v", i, j, e)
			}
			a, pe := parseAction(asSent(t, la.Action), "action.")
			if pe != nil {
				t.Fatalf("checkpoint %d: logged action %d: %v", i, j, pe)
			}
			if _, e := f.act(a, "action."); e != nil {
				t.Fatalf("checkpoint %d: action %d: %v", i, j, e)
			}
		}
		f.run.RunUntil(f.run.Horizon())
		if f.digest() != s.digest() || f.run.Sim.Events() != s.run.Sim.Events() {
			t.Errorf("checkpoint %d of %d (at %+v): the fork ends with %s after %d events, the original with %s after %d",
				i, len(cps), cp.At, f.digest(), f.run.Sim.Events(), s.digest(), s.run.Sim.Events())
		}
	}
}
