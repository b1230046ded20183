package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A flow's path facts, checked by hand: h1 —1 Gbps, 1 ms— r1 —100 Mbps,
// 19 ms forward, 29 ms back— h2. The bottleneck is the 100 Mbps data
// direction, the base RTT 1+19+29+1 = 50 ms, the BDP 100e6·0.05/8 =
// 625,000 bytes. A scheduled-rate change later in the run does not alter
// them: they describe the path as built.
func TestPathFactsByHand(t *testing.T) {
	scn := pumpScenario(10*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, bdpFIFO(), 100*sim.Millisecond)
	scn.Links[1].BA.Delay = 29 * sim.Millisecond
	r := run(t, scn)
	got := r.Summary("h").Flows[0].PathFacts
	want := PathFacts{BottleneckBps: 100e6, BaseRTTPs: int64(50 * sim.Millisecond), BDPBytes: 625000, Bottleneck: "bottleneck/ab"}
	if got != want {
		t.Errorf("PathFacts = %+v, want %+v", got, want)
	}
	// The slower access link becomes the bottleneck: 50 Mbps · 50 ms / 8.
	scn = pumpScenario(10*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, bdpFIFO(), 100*sim.Millisecond)
	scn.Links[1].BA.Delay = 29 * sim.Millisecond
	scn.Links[0].AB.Rate = 50 * units.Mbps
	r = run(t, scn)
	if got := r.Path(0); got.Bottleneck != "access/ab" || got.BDPBytes != 312500 {
		t.Errorf("Path(0) = %+v, want access/ab with 312500 bytes", got)
	}
}
