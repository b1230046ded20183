package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// benchmarkPump runs a pump at the bottleneck's rate through the pump path
// (access link 10× faster; with, if not nil, applied to the bottleneck's
// forward direction) for one simulated second per iteration, measured in
// steady state: setup and the first 100 ms are outside the timer.
func benchmarkPump(b *testing.B, rate units.BitRate, with func(d *config.Direction)) {
	r := newPumpRun(b, rate, with, poolAsBuilt)
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

// poolOrder is the order in which a benchmark's packet pool hands out
// slots at the start of the run.
type poolOrder uint8

const (
	// poolAsBuilt: in address order, as a new pool does.
	poolAsBuilt poolOrder = iota
	// poolShuffled: in a fixed random order.
	poolShuffled
)

// newPumpRun builds the pump path with with applied to the bottleneck's
// forward direction (nil: none) and runs it to its steady state at 100 ms.
func newPumpRun(b *testing.B, rate units.BitRate, with func(d *config.Direction), order poolOrder) *Run {
	b.Helper()
	scn := pumpScenario(rate, rate, 19*sim.Millisecond, bdpFIFO(), 1000*sim.Second)
	scn.Links[0].AB.Rate, scn.Links[0].BA.Rate = 10*rate, 10*rate
	if with != nil {
		with(&scn.Links[1].AB)
	}
	r, err := New(scn, nil)
	if err != nil {
		b.Fatal(err)
	}
	if order == poolShuffled {
		shufflePool(r.Pool)
	}
	r.RunUntil(sim.Time(100 * sim.Millisecond))
	return r
}

// shufflePool makes p hand out the slots of its first slab in a fixed random
// order: it takes them all and frees them shuffled (p has no live packets).
func shufflePool(p *packet.Pool) {
	ids := make([]packet.ID, 4096)
	for i := range ids {
		ids[i] = p.Alloc()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		p.Free(id)
	}
}

// pumpMeter accumulates one run's cost over the slices it is advanced by.
type pumpMeter struct {
	r         *Run
	cpu, wall time.Duration
	events    uint64
	delivered uint64 // packets that reached the sink
}

// advance runs m.r to t, timing it.
func (m *pumpMeter) advance(t sim.Time) {
	p := m.r.Flows[0].(pumpFlow).p
	ev0, by0 := m.r.Sim.Events(), p.BytesDelivered
	w0, c0 := time.Now(), cpuTime()
	m.r.RunUntil(t)
	m.cpu += cpuTime() - c0
	m.wall += time.Since(w0)
	m.events += m.r.Sim.Events() - ev0
	m.delivered += uint64((p.BytesDelivered - by0) / 1500)
}

func (m *pumpMeter) perPacket(d time.Duration) float64 {
	return float64(d.Nanoseconds()) / float64(m.delivered)
}

// benchmarkPumpModel measures what the model set by with adds per packet to
// the pump at rate. Runs with and without the model advance in turn by
// slices of 200 ms of simulated time (about 17,000 packets at 1 Gbps, some
// 6 ms of CPU), each slice timed on its own, so that all see the same load
// on a shared machine: separate benchmark runs seconds apart differ by more
// than the cost being measured. (With 50 ms slices, the cold caches at the
// start of each slice weighed on the runs whose pool order is scrambled:
// gaussian measured +36% instead of +25%.) Costs are per packet delivered
// to the sink, so a model that loses or drops packets is not credited with
// the work it skipped; added-% compares CPU time.
//
// Two pairs of runs are measured. In the first (added-%) both pools start
// as built: without a model the pump reuses its packet slots in address
// order for good (each packet is freed at the sink just before the next is
// allocated, and the free list is LIFO), so the hardware prefetcher hides
// the cache miss of each packet's first touch at the far end. Any jitter
// scrambles that order permanently (arrivals clump, several packets are
// freed between two allocations and come back reversed), and those misses
// then show, whatever the model's own code costs. In the second pair
// (shuffled-added-%) both pools start shuffled, so both runs reuse slots in
// a random order, as a TCP run does anyway: what remains is the model's own
// work, the events it adds, and what its arrival pattern does to the rest
// of the engine (arrivals in clumps cost more per packet even when nothing
// is drawn: lte_subframe).
func benchmarkPumpModel(b *testing.B, rate units.BitRate, with func(d *config.Direction)) {
	base := &pumpMeter{r: newPumpRun(b, rate, nil, poolAsBuilt)}
	model := &pumpMeter{r: newPumpRun(b, rate, with, poolAsBuilt)}
	sbase := &pumpMeter{r: newPumpRun(b, rate, nil, poolShuffled)}
	smodel := &pumpMeter{r: newPumpRun(b, rate, with, poolShuffled)}
	b.ReportAllocs()
	b.ResetTimer()
	t := model.r.Now()
	for b.Loop() {
		for range 5 {
			t = t.Add(200 * sim.Millisecond)
			for _, m := range []*pumpMeter{base, model, sbase, smodel} {
				m.advance(t)
			}
		}
	}
	b.ReportMetric(model.perPacket(model.wall), "ns/packet")
	b.ReportMetric(base.perPacket(base.wall), "base-ns/packet")
	b.ReportMetric(model.perPacket(model.cpu), "cpu-ns/packet")
	b.ReportMetric(base.perPacket(base.cpu), "base-cpu-ns/packet")
	b.ReportMetric(100*(model.perPacket(model.cpu)/base.perPacket(base.cpu)-1), "added-%")
	b.ReportMetric(smodel.perPacket(smodel.cpu), "shuffled-cpu-ns/packet")
	b.ReportMetric(sbase.perPacket(sbase.cpu), "shuffled-base-cpu-ns/packet")
	b.ReportMetric(100*(smodel.perPacket(smodel.cpu)/sbase.perPacket(sbase.cpu)-1), "shuffled-added-%")
	b.ReportMetric(float64(model.events)/float64(model.delivered), "events/packet")
	b.ReportMetric(float64(base.events)/float64(base.delivered), "base-events/packet")
	b.ReportMetric(float64(b.N), "simsec")
}

func BenchmarkPump1G(b *testing.B) { benchmarkPump(b, units.Gbps, nil) }

// BenchmarkPump1GQdisc is BenchmarkPump1G with each queueing discipline
// (its defaults, as the config gives them) on the bottleneck: what a
// discipline costs per packet where it holds next to nothing, the pump
// at exactly the link's rate.
func BenchmarkPump1GQdisc(b *testing.B) {
	for _, kind := range []string{"fifo", "codel", "fq_codel", "dualpi2", "pie", "fq_pie"} {
		raw, err := config.Apply([]byte(`{"runtime":{"duration":"1s"},"nodes":[{"id":"a","kind":"endpoint"},{"id":"b","kind":"endpoint"}],
			"links":[{"id":"l","a":"a","b":"b","rate":"1Gbps","delay":"1ms"}],
			"flows":[{"id":"p","src":"a","dst":"b","cc":"pump","rate":"1Mbps"}]}`),
			[]string{`links.l.qdisc={"kind":"` + kind + `"}`})
		if err != nil {
			b.Fatal(err)
		}
		scn, err := config.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		q := scn.Links[0].AB.Qdisc
		b.Run(kind, func(b *testing.B) { benchmarkPump(b, units.Gbps, func(d *config.Direction) { d.Qdisc = q }) })
	}
}

// BenchmarkPump1GModel measures what each path model adds per packet to
// BenchmarkPump1G: the same pump, with one model on the bottleneck, timed
// against runs without it (benchmarkPumpModel).
func BenchmarkPump1GModel(b *testing.B) {
	for _, m := range pumpModels() {
		b.Run(m.name, func(b *testing.B) { benchmarkPumpModel(b, units.Gbps, m.with) })
	}
}

// BenchmarkPump1GWith runs the pump of BenchmarkPump1GModel with one model
// (or "none"), pool shuffled, alone: one simulated second per iteration
// from 1.1 s on (past the first outage), setup outside the timer. It is
// for instruction and cache-miss counts, which do not drift with the load
// as times do: run it under cachegrind at two fixed -benchtime Nx and take
// the difference, which leaves out the setup.
func BenchmarkPump1GWith(b *testing.B) {
	for _, m := range append([]pumpModel{{"none", nil}}, pumpModels()...) {
		b.Run(m.name, func(b *testing.B) {
			r := newPumpRun(b, units.Gbps, m.with, poolShuffled)
			r.RunUntil(sim.Time(1100 * sim.Millisecond))
			p := r.Flows[0].(pumpFlow).p
			ev0, by0 := r.Sim.Events(), p.BytesDelivered
			b.ReportAllocs()
			b.ResetTimer()
			t := r.Now()
			for b.Loop() {
				t = t.Add(sim.Second)
				r.RunUntil(t)
			}
			pk := float64((p.BytesDelivered - by0) / 1500)
			b.ReportMetric(b.Elapsed().Seconds()*1e9/pk, "ns/packet")
			b.ReportMetric(float64(r.Sim.Events()-ev0)/pk, "events/packet")
		})
	}
}

// pumpModel is one path model of the pump benchmarks, set on the
// bottleneck's forward direction by with.
type pumpModel struct {
	name string
	with func(d *config.Direction)
}

// pumpModels are the models BenchmarkPump1GModel measures, with the
// parameters its figures in README.md are for.
func pumpModels() []pumpModel {
	// A trace of 1 Gbps: 250 opportunities of 1500 B every 3 ms.
	gig := make([]uint64, 0, 250)
	for range 250 {
		gig = append(gig, 3)
	}
	return []pumpModel{
		{"bernoulli", func(d *config.Direction) { d.Loss = config.Loss{Kind: config.Bernoulli, P: 1e-4} }},
		{"bernoulli_post", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.Bernoulli, P: 1e-4, Position: config.LossPost}
		}},
		{"gilbert_elliott", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.GilbertElliott, PGB: 1e-4, PBG: 0.5, LossBad: 0.5}
		}},
		{"periodic", func(d *config.Direction) { d.Loss = config.Loss{Kind: config.Periodic, Every: 10000} }},
		// Copies at the bottleneck's rate queue behind the pump's packets,
		// as losses at the same rate make room: both at 10^-4.
		{"duplicate", func(d *config.Direction) { d.Duplicate = 1e-4 }},
		{"bernoulli_train", func(d *config.Direction) {
			d.Loss = config.Loss{Kind: config.BernoulliTrain, P: 1e-5, TrainLength: 3}
		}},
		{"gaussian", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: sim.Millisecond} }},
		// The same model with a σ well below the 12 µs packet spacing: the
		// draw's own cost, without the clumped arrivals a 1 ms σ makes in
		// fifo order.
		{"gaussian_1us", func(d *config.Direction) { d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: sim.Microsecond} }},
		{"gaussian_10us", func(d *config.Direction) {
			d.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: 10 * sim.Microsecond}
		}},
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
		// At exactly the pump's rate the backlog an outage leaves never
		// drains: from the first outage on every packet waits in the queue
		// and costs a dequeue event, as any busy link does.
		{"outages", func(d *config.Direction) {
			d.Outages = &config.Outages{Start: sim.Second, Every: 2 * sim.Second, Duration: sim.Millisecond}
		}},
		// The same outages with drop_on_outage: what arrives while the
		// direction is down is dropped (1 ms in 2 s, 0.05% of the packets),
		// no backlog outlives an outage, and only the model's own cost shows.
		{"outages_drop", func(d *config.Direction) {
			d.Outages = &config.Outages{Start: sim.Second, Every: 2 * sim.Second, Duration: sim.Millisecond, DropOnOutage: true}
		}},
	}
}

func BenchmarkPump10G(b *testing.B) { benchmarkPump(b, 10*units.Gbps, nil) }
