package link

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// gap is a 1500 B packet's serialisation time at 1 Gbps: the spacing of
// nominal arrivals in the pump benchmarks (engine.BenchmarkPump1GModel).
const gap = 12 * sim.Microsecond

// BenchmarkJitterExtra measures a jitter model's own work per packet: one
// extra delay, drawn as a direction draws it (Dir.jitter), for nominal
// arrivals 12 µs apart, with the parameters of engine.BenchmarkPump1GModel.
// ns/op is ns per packet.
func BenchmarkJitterExtra(b *testing.B) {
	ms, us := sim.Millisecond, sim.Microsecond
	for _, m := range []struct {
		name string
		c    config.Jitter
	}{
		{"gaussian", config.Jitter{Kind: config.Gaussian, Sigma: ms}},
		{"uniform", config.Jitter{Kind: config.Uniform, Max: ms}},
		{"pareto", config.Jitter{Kind: config.Pareto, Scale: 100 * us, Shape: 2, Cap: 5 * ms}},
		{"pareto_1.5", config.Jitter{Kind: config.Pareto, Scale: 100 * us, Shape: 1.5, Cap: 5 * ms}},
		{"burst", config.Jitter{Kind: config.Burst, Period: 100 * ms, Length: 10 * ms, Extra: 2 * ms}},
		{"wifi_txop", config.Jitter{Kind: config.WiFiTXOP, Interval: 3 * ms, BurstSize: 512, Sigma: 100 * us}},
		{"lte_subframe", config.Jitter{Kind: config.LTESubframe, Period: ms}},
		{"reorder", config.Jitter{Kind: config.Reorder, P: 0.01, Delay: ms}},
	} {
		b.Run(m.name, func(b *testing.B) {
			d := &Dir{jit: newJitterModel(m.c, rng.PCG(1, "bench/jitter")), delay: 19 * ms}
			at := sim.Time(sim.Second)
			var sum sim.Duration
			for b.Loop() {
				at = at.Add(gap)
				sum += d.jitter(at)
			}
			if sum < 0 {
				b.Fatal("negative total delay")
			}
		})
	}
}

// BenchmarkOutageCheck measures the outage model's own work per packet:
// Send's and serviceAt's checks at 12 µs spacing, 1 ms down every 2 s.
func BenchmarkOutageCheck(b *testing.B) {
	o := newOutages(&config.Outages{Start: sim.Second, Every: 2 * sim.Second, Duration: sim.Millisecond})
	at := sim.Time(0)
	downs := 0
	for b.Loop() {
		at = at.Add(gap)
		if _, down := o.downUntil(at); down {
			downs++
		}
		if _, down := o.downUntil(at); down {
			downs++
		}
	}
	if downs > b.N {
		b.Fatalf("down for %d of %d checks", downs, 2*b.N)
	}
}

// pacer sends a 1500 B packet into a direction every gap; drain frees what
// arrives without reading it, so that only the direction's own work is
// measured.
type pacer struct {
	s    *sim.Sim
	pool *packet.Pool
	d    *Dir
	self int32
	sent uint64
}

func (p *pacer) Handle(ev sim.Event) {
	id := p.pool.Alloc()
	p.pool.Get(id).Size = 1500
	p.sent++
	p.s.Schedule(ev.At.Add(gap), p.self, 1, 0)
	p.d.Send(id)
}

type drain struct{ pool *packet.Pool }

func (d drain) Receive(id packet.ID) { d.pool.Free(id) }

// dirRun is a 1 Gbps, 19 ms direction fed at its rate by a pacer, as the
// bottleneck of engine.BenchmarkPump1GModel, with the model in c.
type dirRun struct {
	s   *sim.Sim
	d   *Dir
	cpu time.Duration
	n   uint64 // packets delivered while timed
}

func newDirRun(c Config) *dirRun {
	c.Name, c.Link, c.AB, c.Rate, c.Delay = "t/ab", "t", true, units.Gbps, 19*sim.Millisecond
	c.Streams = Streams{Loss: rng.Stream(1, "link/t/ab/loss"), Jitter: rng.PCG(1, "link/t/ab/jitter"),
		Capacity: rng.PCG(1, "link/t/ab/capacity"), Dips: rng.PCG(1, "link/t/ab/capacity/dips")}
	s, pool := sim.New(), &packet.Pool{}
	// Slots in random order, whether or not the model scrambles them (see
	// engine.benchmarkPumpModel).
	ids := make([]packet.ID, 4096)
	for i := range ids {
		ids[i] = pool.Alloc()
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		pool.Free(id)
	}
	d := New(s, pool, c)
	d.SetQdisc(qdisc.NewFIFO(d.QdiscEnv(), 0, 10000))
	d.Connect(drain{pool})
	p := &pacer{s: s, pool: pool, d: d}
	p.self = s.Register(p, "pacer")
	s.Schedule(0, p.self, 1, 0)
	s.RunUntil(sim.Time(100 * sim.Millisecond)) // steady state: the wire holds 19 ms
	return &dirRun{s: s, d: d}
}

// advance runs r to t, timing it.
func (r *dirRun) advance(t sim.Time) {
	n0, c0 := r.d.Stats.Delivered, cpuTime()
	r.s.RunUntil(t)
	r.cpu += cpuTime() - c0
	r.n += r.d.Stats.Delivered - n0
}

func (r *dirRun) perPacket() float64 { return float64(r.cpu.Nanoseconds()) / float64(r.n) }

// BenchmarkDirModel measures a model's cost to the direction's own work per
// packet: a direction with the model and one without advance in turn by
// 100 ms of simulated time, each timed on its own (CPU time), as in
// engine.BenchmarkPump1GModel. Nothing reads the packets after the
// direction, so the cost leaves out what the model's arrival pattern does to
// the rest of the engine (clumped arrivals at the receiver), and both pools
// hand out slots in random order, so none of it is the cache misses a
// scrambled reuse order brings.
func BenchmarkDirModel(b *testing.B) {
	ms, us := sim.Millisecond, sim.Microsecond
	gig := make([]uint64, 250)
	for i := range gig {
		gig[i] = 3
	}
	for _, m := range []struct {
		name string
		c    Config
	}{
		{"gaussian", Config{Jitter: config.Jitter{Kind: config.Gaussian, Sigma: ms}}},
		{"gaussian_10us", Config{Jitter: config.Jitter{Kind: config.Gaussian, Sigma: 10 * us}}},
		{"gaussian_reorder", Config{Jitter: config.Jitter{Kind: config.Gaussian, Sigma: 10 * us, Order: config.OrderReorder}}},
		{"uniform", Config{Jitter: config.Jitter{Kind: config.Uniform, Max: ms}}},
		{"pareto", Config{Jitter: config.Jitter{Kind: config.Pareto, Scale: 100 * us, Shape: 2, Cap: 5 * ms}}},
		{"wifi_txop", Config{Jitter: config.Jitter{Kind: config.WiFiTXOP, Interval: 3 * ms, BurstSize: 512, Sigma: 100 * us}}},
		{"lte_subframe", Config{Jitter: config.Jitter{Kind: config.LTESubframe, Period: ms}}},
		{"reorder", Config{Jitter: config.Jitter{Kind: config.Reorder, P: 0.01, Delay: ms}}},
		{"trace", Config{Trace: &config.TraceLink{Loop: true, Opportunities: gig}}},
		{"outages_drop", Config{Outages: &config.Outages{Start: sim.Second, Every: 2 * sim.Second, Duration: ms, DropOnOutage: true}}},
	} {
		b.Run(m.name, func(b *testing.B) {
			base, model := newDirRun(Config{}), newDirRun(m.c)
			t := model.s.Now()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t = t.Add(100 * ms)
				base.advance(t)
				model.advance(t)
			}
			b.ReportMetric(model.perPacket(), "ns/packet")
			b.ReportMetric(base.perPacket(), "base-ns/packet")
			b.ReportMetric(100*(model.perPacket()/base.perPacket()-1), "added-%")
		})
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
