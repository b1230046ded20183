package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// benchmarkPump runs a pump at the bottleneck's rate through the pump path
// (access link 10× faster) for one simulated second per iteration, measured
// in steady state: setup and the first 100 ms are outside the timer.
func benchmarkPump(b *testing.B, rate units.BitRate) { benchmarkPumpWith(b, rate, nil) }

// benchmarkPumpWith is benchmarkPump with a model added to the bottleneck's
// forward direction by with.
func benchmarkPumpWith(b *testing.B, rate units.BitRate, with func(d *config.Direction)) {
	scn := pumpScenario(rate, rate, 19*sim.Millisecond, bdpFIFO(), 1000*sim.Second)
	scn.Links[0].AB.Rate, scn.Links[0].BA.Rate = 10*rate, 10*rate
	if with != nil {
		with(&scn.Links[1].AB)
	}
	r, err := New(scn, nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RunUntil(sim.Time(100 * sim.Millisecond))
	ev0, pk0 := r.Sim.Events(), r.Flows[0].(pumpFlow).p.Sent
	b.ReportAllocs()
	b.ResetTimer()
	t := r.Now()
	cpu0 := cpuTime()
	for b.Loop() {
		t = t.Add(sim.Second)
		r.RunUntil(t)
	}
	cpu := (cpuTime() - cpu0).Nanoseconds()
	ev, pk := r.Sim.Events()-ev0, r.Flows[0].(pumpFlow).p.Sent-pk0
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(ev)/sec, "events/s")
	b.ReportMetric(sec*1e9/float64(pk), "ns/packet")
	b.ReportMetric(float64(cpu)/float64(pk), "cpu-ns/packet")
	b.ReportMetric(float64(ev)/float64(pk), "events/packet")
	b.ReportMetric(float64(b.N), "simsec")
}

func BenchmarkPump1G(b *testing.B) { benchmarkPump(b, units.Gbps) }

// BenchmarkPump1GModel measures what each path model adds per packet to
// BenchmarkPump1G: the same pump, with one model on the bottleneck.
func BenchmarkPump1GModel(b *testing.B) {
	// A trace of 1 Gbps: 250 opportunities of 1500 B every 3 ms.
	gig := make([]uint64, 0, 250)
	for range 250 {
		gig = append(gig, 3)
	}
	for _, m := range []struct {
		name string
		with func(d *config.Direction)
	}{
		{"bernoulli", func(d *config.Direction) { d.Loss = config.Loss{Kind: config.Bernoulli, P: 1e-4} }},
		{"bernoulli_post", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.Bernoulli, P: 1e-4, Position: config.LossPost}
		}},
		{"gilbert_elliott", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.GilbertElliott, PGB: 1e-4, PBG: 0.5, LossBad: 0.5}
		}},
		{"periodic", func(d *config.Direction) { d.Loss = config.Loss{Kind: config.Periodic, Every: 10000} }},
		{"bernoulli_train", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.BernoulliTrain, P: 1e-5, TrainLength: 3}
		}},
		{"gaussian", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: sim.Millisecond} }},
		// The same model with a σ well below the 12 µs packet spacing: the
		// draw's own cost, without the clumped arrivals a 1 ms σ makes in
		// fifo order.
		{"gaussian_1us", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: sim.Microsecond} }},
		{"gaussian_reorder", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: 10 * sim.Microsecond, Order: config.OrderReorder}
		}},
		{"uniform", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.Uniform, Max: sim.Millisecond} }},
		{"pareto", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.Pareto, Scale: 100 * sim.Microsecond, Shape: 2, Cap: 5 * sim.Millisecond}
		}},
		{"burst", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.Burst, Period: 100 * sim.Millisecond, Length: 10 * sim.Millisecond, Extra: 2 * sim.Millisecond}
		}},
		{"wifi_txop", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.WiFiTXOP, Interval: 3 * sim.Millisecond, BurstSize: 512, Sigma: 100 * sim.Microsecond}
		}},
		{"lte_subframe", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.LTESubframe, Period: sim.Millisecond} }},
		{"reorder", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.Reorder, P: 0.01, Delay: sim.Millisecond}
		}},
		// States at or above the pump's rate, so the queue stays as empty as
		// without the model and only the model's own cost shows.
		{"capacity", func(d *config.Direction) {
			d.Capacity = &config.Capacity{
				States:      []config.CapacityState{{Rate: units.Gbps, Dwell: 10 * sim.Millisecond}, {Rate: 1250 * units.Mbps, Dwell: 10 * sim.Millisecond}},
				Transitions: [][]float64{{0, 1}, {1, 0}},
			}
		}},
		{"trace", func(d *config.Direction) { d.Trace = &config.TraceLink{Loop: true, Opportunities: gig} }},
		{"outages", func(d *config.Direction) {
			d.Outages = &config.Outages{Start: sim.Second, Every: 2 * sim.Second, Duration: sim.Millisecond}
		}},
	} {
		b.Run(m.name, func(b *testing.B) { benchmarkPumpWith(b, units.Gbps, m.with) })
	}
}
func BenchmarkPump10G(b *testing.B) { benchmarkPump(b, 10*units.Gbps) }
