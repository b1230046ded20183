package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// benchmarkPump runs a pump at the bottleneck's rate through the pump path
// (access link 10× faster) for one simulated second per iteration, measured
// in steady state: setup and the first 100 ms are outside the timer.
func benchmarkPump(b *testing.B, rate units.BitRate) {
	scn := pumpScenario(rate, rate, 19*sim.Millisecond, bdpFIFO(), 1000*sim.Second)
	scn.Links[0].AB.Rate, scn.Links[0].BA.Rate = 10*rate, 10*rate
	r, err := New(scn, nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RunUntil(sim.Time(100 * sim.Millisecond))
	ev0, pk0 := r.Sim.Events(), r.Flows[0].(pumpFlow).p.Sent
	b.ReportAllocs()
	b.ResetTimer()
	t := r.Now()
	for b.Loop() {
		t = t.Add(sim.Second)
		r.RunUntil(t)
	}
	ev, pk := r.Sim.Events()-ev0, r.Flows[0].(pumpFlow).p.Sent-pk0
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(ev)/sec, "events/s")
	b.ReportMetric(sec*1e9/float64(pk), "ns/packet")
	b.ReportMetric(float64(b.N), "simsec")
}

func BenchmarkPump1G(b *testing.B)  { benchmarkPump(b, units.Gbps) }
func BenchmarkPump10G(b *testing.B) { benchmarkPump(b, 10*units.Gbps) }
