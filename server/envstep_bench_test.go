package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// envStepInterval and envStepCwnd are the Python gym benchmark's step
// (client-python/benchmarks/bench_step.py): p-rtr-p's flow f0, its cwnd set
// to 200 packets, then 10 ms of simulated time.
const (
	envStepInterval = 10 * sim.Millisecond
	envStepCwnd     = 200
)

// envState builds a p-rtr-p state with an hour's horizon, past slow start.
func envState(b *testing.B) *state {
	raw, err := config.Builtin("p-rtr-p")
	if err != nil {
		b.Fatalf("Builtin: %v", err)
	}
	canon, _, e := buildScenario(raw, nil, []any{"runtime.duration=3600s"}, nil)
	if e != nil {
		b.Fatalf("buildScenario: %v", e)
	}
	st, e := newState(canon, Limits{})
	if e != nil {
		b.Fatalf("newState: %v", e)
	}
	if _, e := st.runTo(context.Background(), sim.Time(sim.Second), nil, nil); e != nil {
		b.Fatalf("runTo: %v", e)
	}
	return st
}

// BenchmarkEnvStepEngine measures the engine's share of one gym step: the
// cwnd action, 10 ms of p-rtr-p (CUBIC through 100 Mbps, 40 ms RTT) and the
// observation, on the state directly — no protocol, no goroutines.
func BenchmarkEnvStepEngine(b *testing.B) {
	st := envState(b)
	cwnd := uint32(envStepCwnd)
	act := engine.Action{Flow: "f0", CwndPkts: &cwnd}
	ev0 := st.run.Sim.Events()
	b.ReportAllocs()
	for b.Loop() {
		if _, e := st.act(act, "action."); e != nil {
			b.Fatalf("act: %v", e)
		}
		if _, e := st.runTo(context.Background(), st.run.Now().Add(envStepInterval), nil, nil); e != nil {
			b.Fatalf("runTo: %v", e)
		}
		if _, ok := st.run.Observe("f0"); !ok {
			b.Fatal("Observe: no f0")
		}
	}
	b.ReportMetric(float64(st.run.Sim.Events()-ev0)/float64(b.N), "events/op")
}

// BenchmarkEnvStepRoundTrip measures the same step as a Go client's request
// over loopback: step with the action and the observation, to its
// response; p50 and p99 latency.
func BenchmarkEnvStepRoundTrip(b *testing.B) {
	_, url := newTestServer(b, Options{})
	c := dial(b, url)
	id := c.open("p-rtr-p", "runtime.duration=3600s")
	c.call("step", map[string]any{"session": id, "time": "1s"})
	args := map[string]any{"session": id, "time": "10ms", "observe": "f0",
		"action": map[string]any{"flow": "f0", "cwnd": envStepCwnd}}
	var lat []time.Duration
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		c.call("step", args)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
