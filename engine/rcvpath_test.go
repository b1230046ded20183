package engine

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// minRTT is the flow's last min_rtt sample in the flows table.
func minRTT(t *testing.T, r *Run) sim.Duration {
	t.Helper()
	rows := r.Trace.FlowsT.Rows
	if len(rows) == 0 {
		t.Fatal("no flows rows (trace.detail must record)")
	}
	return rows[len(rows)-1].MinRTT
}

// TestRcvHoldAddsToMinRTT: a receive hold delays every data segment's
// arrival at the stack, so the sender's min RTT grows by exactly the hold
// (p-rtr-p: 40 ms of propagation plus one segment's serialisation).
func TestRcvHoldAddsToMinRTT(t *testing.T) {
	base := builtinRun(t, "p-rtr-p", "runtime.duration=2s", "trace.detail=change")
	base.RunToEnd()
	held := builtinRun(t, "p-rtr-p", "runtime.duration=2s", "trace.detail=change", "flows.f0.rcv_hold=2.5ms")
	held.RunToEnd()
	got := minRTT(t, held) - minRTT(t, base)
	// The kernel's min RTT is in whole microseconds.
	if want := 2500 * sim.Microsecond; got < want-sim.Microsecond || got > want+sim.Microsecond {
		t.Errorf("min RTT with rcv_hold 2.5ms - without = %v, want %v", got, want)
	}
}

// ackClumps returns the start times of the clumps in which ACKs reach the
// sender: ACKs less than sep apart belong to one clump (one grant).
func ackClumps(r *Run, sep sim.Duration) []sim.Time {
	e := &r.Trace.EventT
	var starts []sim.Time
	var last sim.Time
	for i, k := range e.Kind {
		if k != trace.EvAck {
			continue
		}
		at := sim.Time(e.T[i])
		if len(starts) == 0 || at.Sub(last) >= sep {
			starts = append(starts, at)
		}
		last = at
	}
	return starts
}

// quantileOf is the q-quantile of xs (nearest rank).
func quantileOf(xs []sim.Duration, q float64) sim.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// TestAckGrantInterArrivals: with an ACK grant on the receiver's uplink the
// sender's ACKs arrive in clumps, one per grant, whose spacing follows the
// grant gap's quantiles. p-rtr-p's bulk flow makes an ACK every ~0.2 ms, so
// one waits at almost every grant; the clump gap is the grant gap plus at
// most that wait.
func TestAckGrantInterArrivals(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "runtime.duration=10s", "trace.detail=change",
		`flows.f0.ack_grant={"gap": ["1ms", "2ms", "4ms", "6ms", "10ms"], "per_grant": 64}`)
	r.RunUntil(sim.Time(2 * sim.Second))
	r.Trace.EventT = trace.EventTable{}
	r.RunToEnd()
	clumps := ackClumps(r, 300*sim.Microsecond)
	var gaps []sim.Duration
	for i := 1; i < len(clumps); i++ {
		gaps = append(gaps, clumps[i].Sub(clumps[i-1]))
	}
	if len(gaps) < 1000 {
		t.Fatalf("%d ACK clumps in 8 s, want a grant every ~4.6 ms", len(gaps))
	}
	for _, c := range []struct {
		q    float64
		want sim.Duration
	}{{0.25, 2 * sim.Millisecond}, {0.5, 4 * sim.Millisecond}, {0.75, 6 * sim.Millisecond}} {
		got := quantileOf(gaps, c.q)
		t.Logf("ACK clump gap p%.0f = %v (grant gap quantile %v)", 100*c.q, got, c.want)
		if lo, hi := c.want-c.want/20, c.want+c.want/20+300*sim.Microsecond; got < lo || got > hi {
			t.Errorf("ACK clump gap p%.0f = %v, want %v (within [%v, %v])", 100*c.q, got, c.want, lo, hi)
		}
	}
	if s := r.Flows[0].(*tcpFlow).rcvPath; s == nil || s.Grants == 0 {
		t.Errorf("summary rcv_path = %+v, want grants counted", s)
	}
}

// TestAckHoldSaturation: the ACK hold engages only while the flow's arrival
// rate is at least saturation × the path's bottleneck rate: a bulk CUBIC
// flow on p-rtr-p's 100 Mbps fills it (held ACKs), an application writing
// 20 Mbps does not reach 0.9 × 100 Mbps once slow start has caught up with
// it (none held after 2 s; before, the data its window held back leaves at
// the bottleneck rate, and that does saturate the path).
func TestAckHoldSaturation(t *testing.T) {
	hold := `flows.f0.ack_hold={"quantiles": ["0ms", "1ms", "3ms"]}`
	bulk := builtinRun(t, "p-rtr-p", "runtime.duration=5s", hold)
	bulk.RunToEnd()
	slow := builtinRun(t, "p-rtr-p", "runtime.duration=5s", hold, `flows.f0.app={"kind": "rate", "rate": "20Mbps"}`)
	slow.RunUntil(sim.Time(2 * sim.Second))
	s := slow.Flows[0].(*tcpFlow).rcvPath
	held := s.AcksHeld
	slow.RunToEnd()
	if b := bulk.Flows[0].(*tcpFlow).rcvPath; b.AcksHeld == 0 {
		t.Errorf("bulk flow: %d ACKs held, want some (it saturates the 100 Mbps bottleneck)", b.AcksHeld)
	}
	if n := s.AcksHeld - held; n != 0 {
		t.Errorf("20 Mbps flow: %d ACKs held over 2–5 s, want none (below 0.9 × 100 Mbps)", n)
	}
}

// BenchmarkRcvPath runs p-rtr-p (one CUBIC bulk flow, 100 Mbps, 40 ms, 20 s)
// with each receive-path model in turn, to show what each adds per packet
// against none (the same metrics as BenchmarkDumbbell1G).
func BenchmarkRcvPath(b *testing.B) {
	for _, c := range []struct{ name, set string }{
		{"none", ""},
		{"rcv_hold", "flows.f0.rcv_hold=100us"},
		{"ack_hold", `flows.f0.ack_hold={"quantiles": ["0ms", "0.5ms", "2ms"]}`},
		{"ack_grant", `flows.f0.ack_grant={"profile": "lte"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw, err := config.Builtin("p-rtr-p")
			if err != nil {
				b.Fatal(err)
			}
			var sets []string
			if c.set != "" {
				sets = append(sets, c.set)
			}
			p, err := Prepare(raw, sets)
			if err != nil {
				b.Fatal(err)
			}
			benchDumbbell(b, p.Scenario, "")
		})
	}
}
