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
