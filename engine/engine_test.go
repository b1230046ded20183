package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// pumpScenario is h1 —1 Gbps, 1 ms— r1 —bottleneck— h2 with one pump f0.
func pumpScenario(rate, bottleneck units.BitRate, bdelay sim.Duration, q config.Qdisc, dur sim.Duration) *config.Scenario {
	access := config.Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 1000}}}
	bn := config.Direction{Rate: bottleneck, Delay: bdelay, Qdisc: q}
	return &config.Scenario{
		Name:    "test-pump",
		Runtime: config.Runtime{Seed: 1, Duration: dur},
		Nodes:   []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: access, BA: access},
			{ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn},
		},
		Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", CC: "pump", Rate: rate, PacketSize: 1500}},
	}
}

func run(t *testing.T, scn *config.Scenario) *Run {
	t.Helper()
	r, err := New(scn, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunToEnd()
	return r
}

func bdpFIFO() config.Qdisc {
	return config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{MilliBDPs: 1000}}
}

// A pump above the bottleneck rate delivers exactly the bottleneck rate: over
// a run of T seconds the bottleneck serialises floor(T·rate/(8·1500))
// packets, give or take the one in flight. The excess is dropped.
func TestPumpAboveRateDeliversBottleneckRate(t *testing.T) {
	const dur = 10 * sim.Second
	r := run(t, pumpScenario(120*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, bdpFIFO(), dur))
	bn, _ := r.Net.Dir("bottleneck", "ab")
	p := r.Flows[0].(pumpFlow).p
	// Packets reach the bottleneck from t = 1 ms + 12 µs (access delay and
	// serialisation) and need 19 ms more to arrive; the bottleneck is busy
	// from its first packet on.
	start := sim.Time(sim.Millisecond + units.TxTime(1500, units.Gbps))
	busy := dur - sim.Duration(start) - 19*sim.Millisecond
	want := int64(busy) / int64(units.TxTime(1500, 100*units.Mbps))
	got := int64(p.BytesDelivered / 1500)
	if d := got - want; d < -1 || d > 1 {
		t.Errorf("delivered %d packets, want %d ± 1", got, want)
	}
	sent := int64(p.Sent)
	_, queued := bn.Qdisc().Backlog()
	inFlight := sent - got - int64(bn.Stats.Drops) - int64(queued)
	// What was sent but neither delivered, dropped nor queued is on the
	// wire or being serialised: the bottleneck's 19 ms at 100 Mbps, the
	// access link's 1 ms at the pump's 120 Mbps, and the packets being
	// serialised.
	maxWire := int64(units.BytesIn(100*units.Mbps, 19*sim.Millisecond)/1500+units.BytesIn(120*units.Mbps, sim.Millisecond)/1500) + 3
	if inFlight < 0 || inFlight > maxWire {
		t.Errorf("unaccounted packets %d, want 0..%d", inFlight, maxWire)
	}
	if bn.Stats.Drops == 0 {
		t.Errorf("no drops at 120%% load")
	}
}
