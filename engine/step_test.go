package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// stepFIFO is the DCTCP-style marker: a 1000-packet fifo marking at K = 65
// packets (RFC 8257 §3.1 configures K in packets; 65 is the K of a 10 Gbps
// DCTCP deployment).
func stepFIFO() config.Qdisc {
	return config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 1000}, ECNThreshold: config.QueueLimit{Packets: 65}}
}

// A step marker marks exactly the ECT packets that find at least K packets
// queued. Derivation for a 120 Mbps pump into 100 Mbps: packet n arrives at
// the bottleneck at t0 + n·100 µs and the bottleneck starts packet j at
// t0 + j·120 µs, so packet n finds n − (⌊5n/6⌋ + 1) packets waiting (packets
// 0..⌊5n/6⌋ have left the queue). That is ≥ 65 from n = 391 on (n = 390
// finds 64 or 65 depending on whether the dequeue at the tie time 39 ms
// goes first), so every accepted packet but the first 391 (± 1) is marked.
// Below the bottleneck rate the queue never holds more than one packet, and
// Not-ECT packets are never marked, whatever the queue.
func TestStepMarking(t *testing.T) {
	cases := []struct {
		name string
		rate units.BitRate
		ecn  config.ECNField
		// unmarked is the number of accepted packets left unmarked; -1: all.
		unmarked int64
	}{
		{"ect0 at 120%", 120 * units.Mbps, config.ECT0, 391},
		{"ect1 at 120%", 120 * units.Mbps, config.ECT1, 391},
		{"not-ect at 120%", 120 * units.Mbps, config.NotECT, -1},
		{"ect0 at 90%", 90 * units.Mbps, config.ECT0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scn := pumpScenario(c.rate, 100*units.Mbps, 19*sim.Millisecond, stepFIFO(), 2*sim.Second)
			scn.Flows[0].ECN = c.ecn
			r := run(t, scn)
			bn, _ := r.Net.Dir("bottleneck", "ab")
			marks := int64(bn.Stats.Marks)
			if got := int64(bn.Qdisc().(*qdisc.FIFO).Marks); got != marks {
				t.Errorf("FIFO.Marks = %d, link saw %d marks", got, marks)
			}
			want := int64(0)
			if c.unmarked >= 0 {
				want = int64(bn.Stats.Enqueued) - c.unmarked
			}
			if d := marks - want; d < -1 || d > 1 {
				t.Errorf("marks of %d accepted packets = %d, want %d ± 1", bn.Stats.Enqueued, marks, want)
			}
		})
	}
}

// Every qdisc kind, built from its config defaults, is work-conserving
// below the bottleneck rate: a 50 Mbps pump through 100 Mbps loses nothing
// and its median one-way delay is the propagation plus serialisation of
// the two hops (1 ms + 12 µs, 19 ms + 120 µs), to the histogram's 1/64
// resolution.
func TestQdiscKindsBelowRate(t *testing.T) {
	kinds := map[string]config.Qdisc{
		"fifo with step marking": stepFIFO(),
		"fq_codel":               {Kind: config.FQCoDel, Limit: config.QueueLimit{Packets: 10240}, Target: 5 * sim.Millisecond, Interval: 100 * sim.Millisecond, ECN: true, Flows: 1024, Quantum: 1500},
		"dualpi2":                {Kind: config.DualPI2, Limit: config.QueueLimit{Packets: 10000}, Target: 15 * sim.Millisecond, TUpdate: 16 * sim.Millisecond, StepThreshold: sim.Millisecond, Coupling: 2, CProtection: 10},
		"fq_pie":                 {Kind: config.FQPIE, Limit: config.QueueLimit{Packets: 10240}, Target: 15 * sim.Millisecond, TUpdate: 15 * sim.Millisecond, Alpha: 2, Beta: 20, ECNProb: 10, Flows: 1024, Quantum: 1500},
		"pie":                    {Kind: config.PIE, Limit: config.QueueLimit{Packets: 1000}, Target: 15 * sim.Millisecond, TUpdate: 15 * sim.Millisecond, Alpha: 2, Beta: 20},
		"fq":                     {Kind: config.FQ, Limit: config.QueueLimit{Packets: 10000}, Quantum: 3000, InitialQuantum: 15000, FlowLimit: 100, Horizon: 10 * sim.Second},
	}
	want := sim.Millisecond + units.TxTime(1500, units.Gbps) + 19*sim.Millisecond + units.TxTime(1500, 100*units.Mbps)
	for name, q := range kinds {
		t.Run(name, func(t *testing.T) {
			scn := pumpScenario(50*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, q, 2*sim.Second)
			scn.Links[0].AB.Qdisc = q // the host's egress too
			scn.Flows[0].ECN = config.ECT1
			r := run(t, scn)
			for _, name := range []string{"access", "bottleneck"} {
				if d, _ := r.Net.Dir(name, "ab"); d.Stats.Drops != 0 || d.Stats.Marks != 0 {
					t.Errorf("%s: %d drops, %d marks below the rate, want none", name, d.Stats.Drops, d.Stats.Marks)
				}
			}
			got, _ := r.Flows[0].(pumpFlow).p.OneWay.Quantile(0.5)
			if d := got - int64(want); d < -int64(want)/64 || d > int64(want)/64 {
				t.Errorf("median one-way delay = %v, want %v", sim.Duration(got), want)
			}
		})
	}
}
