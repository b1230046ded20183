package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A scheduled change reaches the path models: at 1 s the bottleneck goes
// down for 200 ms and its delay rises to 30 ms (a LEO handover). A 50 Mbps
// pump offers 200 ms × 50 Mbps / 1500 B = 833 packets in the outage; the
// 1-BDP FIFO (100 Mbps × 40 ms = 333 packets) keeps 333 of them and refuses
// the other 500 as outage drops, and the oldest kept packet waits the whole
// outage: the largest one-way delay is 200 ms + 1 ms + 12 µs + 30 ms + 120 µs.
// At 2 s a reorder jitter replaces the (absent) jitter model.
func TestScheduledOutageAndDelayChange(t *testing.T) {
	scn := pumpScenario(50*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, bdpFIFO(), 3*sim.Second)
	outage, delay := 200*sim.Millisecond, 30*sim.Millisecond
	j := config.Jitter{Kind: config.Reorder, Order: config.OrderReorder, P: 0.1, Delay: sim.Millisecond}
	scn.Changes = []config.Change{
		{At: sim.Second, Link: "bottleneck", Dir: "ab", Outage: &outage, Delay: &delay},
		{At: 2 * sim.Second, Link: "bottleneck", Dir: "ab", Jitter: &j},
	}
	r := run(t, scn)
	bn, _ := r.Net.Dir("bottleneck", "ab")
	if d := bn.Stats.OutageDrops; d < 499 || d > 501 {
		t.Errorf("outage drops = %d, want 500 ± 1", d)
	}
	if bn.Stats.Drops != 0 {
		t.Errorf("qdisc drops = %d, want 0 (refusals in the outage count as outage drops)", bn.Stats.Drops)
	}
	p := r.Flows[0].(pumpFlow).p
	got, _ := p.OneWay.Quantile(1)
	want := int64(outage + sim.Millisecond + units.TxTime(1500, units.Gbps) + delay + units.TxTime(1500, 100*units.Mbps))
	// The histogram resolves values to 1/64 of their power of two.
	if d := got - want; d < -want/64 || d > want/64 {
		t.Errorf("largest one-way delay = %v, want %v", sim.Duration(got), sim.Duration(want))
	}
	var found bool
	for _, q := range r.Summary("").Queues {
		if q.Link == "bottleneck" && q.Dir == "ab" {
			found = q.OutageDrops == bn.Stats.OutageDrops
		}
	}
	if !found {
		t.Errorf("summary of bottleneck/ab lacks outage_drops = %d", bn.Stats.OutageDrops)
	}
}
