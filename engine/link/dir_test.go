package link

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// source sends n packets of 1500 B into d, one every gap from start; each
// carries its index in Seq.
type source struct {
	s     *sim.Sim
	pool  *packet.Pool
	d     *Dir
	self  int32
	n     uint64
	gap   sim.Duration
	sent  []sim.Time
	onAct func(i uint64) // called before packet i is sent
}

func (src *source) Handle(ev sim.Event) {
	i := ev.Arg
	if src.onAct != nil {
		src.onAct(i)
	}
	id := src.pool.Alloc()
	p := src.pool.Get(id)
	p.Size, p.Seq, p.SentAt = 1500, i, ev.At
	src.sent = append(src.sent, ev.At)
	src.d.Send(id)
	if i+1 < src.n {
		src.s.Schedule(ev.At.Add(src.gap), src.self, 1, i+1)
	}
}

// arrivals records each arrival's time and index.
type arrivals struct {
	s    *sim.Sim
	pool *packet.Pool
	at   []sim.Time
	seq  []uint64
}

func (a *arrivals) Receive(id packet.ID) {
	a.at = append(a.at, a.s.Now())
	a.seq = append(a.seq, a.pool.Get(id).Seq)
	a.pool.Free(id)
}

// testDir builds a direction with a FIFO of limit packets and the seed's
// streams, and a source of n packets every gap.
func testDir(c Config, limit int, n uint64, gap sim.Duration, seed uint64) (*sim.Sim, *Dir, *source, *arrivals) {
	s, pool := sim.New(), &packet.Pool{}
	c.Streams = Streams{
		Loss: rng.Stream(seed, "link/t/ab/loss"), Duplicate: rng.Stream(seed, "link/t/ab/duplicate"),
		Jitter:   rng.PCG(seed, "link/t/ab/jitter"),
		Capacity: rng.PCG(seed, "link/t/ab/capacity"), Dips: rng.PCG(seed, "link/t/ab/capacity/dips"),
	}
	if c.Name == "" {
		c.Name, c.Link, c.AB = "t/ab", "t", true
	}
	d := New(s, pool, c)
	d.SetQdisc(qdisc.NewFIFO(d.QdiscEnv(), 0, limit))
	a := &arrivals{s: s, pool: pool}
	d.Connect(a)
	src := &source{s: s, pool: pool, d: d, n: n, gap: gap}
	src.self = s.Register(src, "source")
	s.Schedule(0, src.self, 1, 0)
	return s, d, src, a
}

// In fifo order a link never reorders, however large the jitter.
func TestFIFOJitterNeverReorders(t *testing.T) {
	for _, j := range []config.Jitter{
		{Kind: config.Gaussian, Sigma: 5 * sim.Millisecond},
		{Kind: config.Pareto, Scale: sim.Millisecond, Shape: 1.2},
		{Kind: config.Uniform, Max: 10 * sim.Millisecond},
		{Kind: config.WiFiTXOP, Interval: 3 * sim.Millisecond, BurstSize: 2, Sigma: sim.Millisecond},
	} {
		s, _, _, a := testDir(Config{Rate: 100 * units.Mbps, Delay: 10 * sim.Millisecond, Jitter: j}, 1000, 20000, 200*sim.Microsecond, 1)
		s.Run()
		if len(a.seq) != 20000 {
			t.Fatalf("%v: %d arrivals, want 20000", j.Kind, len(a.seq))
		}
		for i := 1; i < len(a.seq); i++ {
			if a.seq[i] < a.seq[i-1] || a.at[i] < a.at[i-1] {
				t.Fatalf("%v: packet %d arrived after packet %d", j.Kind, a.seq[i-1], a.seq[i])
			}
		}
	}
}

// order reorder with Gaussian jitter: packets leave g apart and arrive at
// departure + delay + X_i, X_i i.i.d. N(0, σ²) (the delay is far above σ so
// no draw is truncated), so packet i+1 overtakes packet i when D_i = X_i −
// X_{i+1} > g, with probability p = Φ(−h), h = g/(σ√2). D_i and D_{i+1}
// share X_{i+1}: correlation −1/2; D_i and D_{i+2} are independent. The
// count of the m = n−1 adjacent inversions is a 1-dependent sum of
// variance m·p(1−p) + 2(m−1)(P₂ − p²), P₂ = P(D_i > g, D_{i+1} > g) the
// bivariate-normal orthant probability orthant(h, −1/2).
func TestGaussianReorderFraction(t *testing.T) {
	const n = 100_000
	g, sigma := 120*sim.Microsecond, 200*sim.Microsecond
	s, _, _, a := testDir(Config{Rate: units.Gbps, Delay: 20 * sim.Millisecond,
		Jitter: config.Jitter{Kind: config.Gaussian, Sigma: sigma, Order: config.OrderReorder}}, 1000, n, g, 2)
	s.Run()
	if len(a.seq) != n {
		t.Fatalf("%d arrivals, want %d", len(a.seq), n)
	}
	pos := make([]int, n)
	for i, q := range a.seq {
		pos[q] = i
	}
	inv := 0
	for i := 0; i+1 < n; i++ {
		if pos[i+1] < pos[i] {
			inv++
		}
	}
	// The quadrature against the closed form at h = 0: 1/4 + arcsin(ρ)/(2π).
	if got, want := orthant(0, -0.5), 1.0/6; math.Abs(got-want) > 1e-9 {
		t.Fatalf("orthant(0, −1/2) = %v, want %v", got, want)
	}
	h := float64(g) / (float64(sigma) * math.Sqrt2)
	p, p2 := phi(-h), orthant(h, -0.5)
	m := float64(n - 1)
	se := math.Sqrt(m*p*(1-p)+2*(m-1)*(p2-p*p)) / m
	within(t, "adjacent inversions", float64(inv)/m, p, se)
}

// orthant is P(Z₁ > h, Z₂ > h) for standard normals of correlation ρ:
// ∫_h^∞ φ(z)·Φ((ρz − h)/√(1−ρ²)) dz (Z₂ given Z₁ = z is N(ρz, 1−ρ²)),
// by Simpson's rule over [h, h+12], beyond which φ is below 10⁻³¹.
func orthant(h, rho float64) float64 {
	const steps = 4000
	f := func(z float64) float64 {
		return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) * phi((rho*z-h)/math.Sqrt(1-rho*rho))
	}
	dz := 12.0 / steps
	sum := f(h) + f(h+12)
	for i := 1; i < steps; i++ {
		sum += float64(2+2*(i%2)) * f(h+float64(i)*dz)
	}
	return sum * dz / 3
}

// The reorder kind holds a fraction p back by delay D; with packets g
// apart and D = 2.5g, a held packet i is overtaken unless packets i+1 and
// i+2 (the ones leaving within D after it) are both held too: a fraction
// p(1 − p²) of packets arrives after a later one.
func TestReorderKindFraction(t *testing.T) {
	const n, p = 100_000, 0.05
	g := 100 * sim.Microsecond
	s, _, _, a := testDir(Config{Rate: units.Gbps, Delay: 5 * sim.Millisecond,
		Jitter: config.Jitter{Kind: config.Reorder, P: p, Delay: 250 * sim.Microsecond}}, 1000, n, g, 3)
	s.Run()
	late := 0
	maxSeen := uint64(0)
	for i, q := range a.seq {
		if i > 0 && q < maxSeen {
			late++
		}
		maxSeen = max(maxSeen, q)
	}
	want := p * (1 - p*p)
	within(t, "fraction overtaken", float64(late)/n, want, math.Sqrt(want*(1-want)/n))
}

// An outage delivers nothing during its window, then resumes: packets sent
// every 200 µs on a 100 Mbps, 5 ms direction down over [100 ms, 300 ms)
// wait in the queue; the first leaves at 300 ms exactly and arrives 120 µs
// + 5 ms later. With drop_on_outage, what arrives in the window is dropped
// and counted as outage drops.
func TestOutageWindow(t *testing.T) {
	for _, drop := range []bool{false, true} {
		out := &config.Outages{Windows: []config.OutageWindow{{At: 100 * sim.Millisecond, Duration: 200 * sim.Millisecond}}, DropOnOutage: drop}
		s, d, _, a := testDir(Config{Rate: 100 * units.Mbps, Delay: 5 * sim.Millisecond, Outages: out}, 10000, 5000, 200*sim.Microsecond, 1)
		s.Run()
		tx := units.TxTime(1500, 100*units.Mbps)
		lastBefore := sim.Time(100*sim.Millisecond - 200*sim.Microsecond).Add(tx + 5*sim.Millisecond)
		firstAfter := sim.Time(300 * sim.Millisecond).Add(tx + 5*sim.Millisecond)
		for i, at := range a.at {
			if at > lastBefore && at < firstAfter {
				t.Fatalf("drop %v: packet %d arrived at %v, inside the outage", drop, a.seq[i], at)
			}
		}
		i := slices.IndexFunc(a.at, func(x sim.Time) bool { return x >= firstAfter })
		if i < 0 || a.at[i] != firstAfter {
			t.Fatalf("drop %v: no arrival at %v after the outage", drop, firstAfter)
		}
		// Packets 500 to 1499 are sent in [100 ms, 300 ms).
		wantDrops, wantFirst := uint64(0), uint64(500)
		if drop {
			wantDrops, wantFirst = 1000, 1500
		}
		if d.Stats.OutageDrops != wantDrops || a.seq[i] != wantFirst {
			t.Errorf("drop %v: outage drops %d, first after %d; want %d, %d", drop, d.Stats.OutageDrops, a.seq[i], wantDrops, wantFirst)
		}
		if got := uint64(len(a.at)) + d.Stats.OutageDrops; got != 5000 {
			t.Errorf("drop %v: delivered + outage drops = %d, want 5000", drop, got)
		}
	}
}

// A periodic outage of 150 ms every 1 s from 500 ms: no packet arrives
// while the direction is down.
func TestPeriodicOutage(t *testing.T) {
	out := &config.Outages{Start: 500 * sim.Millisecond, Every: sim.Second, Duration: 150 * sim.Millisecond, DropOnOutage: true}
	s, d, _, a := testDir(Config{Rate: 100 * units.Mbps, Delay: 0, Outages: out}, 10000, 40000, 100*sim.Microsecond, 1)
	s.Run()
	for _, at := range a.at {
		// Arrival = departure (delay 0) + 120 µs; a departure cannot start
		// in [k+0.5 s, k+0.65 s).
		dep := at.Add(-units.TxTime(1500, 100*units.Mbps))
		if ph := int64(dep) % int64(sim.Second); dep >= sim.Time(500*sim.Millisecond) && ph >= int64(500*sim.Millisecond) && ph < int64(650*sim.Millisecond) {
			t.Fatalf("departure at %v inside a periodic outage", dep)
		}
	}
	// 4 s of sending cross 4 outages of 1500 packets each.
	if d.Stats.OutageDrops != 6000 {
		t.Errorf("outage drops = %d, want 6000", d.Stats.OutageDrops)
	}
}

// traceConfig builds a trace link from opportunity milliseconds.
func traceConfig(ms []uint64) *config.TraceLink {
	return &config.TraceLink{Loop: true, Opportunities: ms}
}

// A constant trace of one opportunity per millisecond is 12 Mbps (1500 B
// per ms). A source offering 24 Mbps keeps it busy: by time T it has
// delivered 12 Mbps·T within one packet.
func TestConstantTraceDelivers12Mbps(t *testing.T) {
	ms := make([]uint64, 1000)
	for i := range ms {
		ms[i] = uint64(i + 1)
	}
	s, _, _, a := testDir(Config{Trace: traceConfig(ms), Delay: 0}, 100000, 10000, 500*sim.Microsecond, 1)
	s.Run()
	for _, T := range []sim.Time{sim.Time(sim.Second), sim.Time(3 * sim.Second), sim.Time(4900 * sim.Millisecond)} {
		n := 0
		for _, at := range a.at {
			if at <= T {
				n++
			}
		}
		want := float64(12*units.Mbps) * T.Seconds() / (1500 * 8)
		if math.Abs(float64(n)-want) > 1 {
			t.Errorf("packets by %v = %d, want %.1f ± 1 (12 Mbps)", T, n, want)
		}
	}
}

// A trace with a gap stalls the link for exactly the gap: opportunities
// every ms up to 100 ms, then none until 150 ms. A backlogged link's
// departures are 1 ms apart except one 50 ms apart, looping every 200 ms.
func TestTraceGapStallsExactly(t *testing.T) {
	var ms []uint64
	for i := uint64(1); i <= 200; i++ {
		if i <= 100 || i >= 150 {
			ms = append(ms, i)
		}
	}
	s, _, _, a := testDir(Config{Trace: traceConfig(ms), Delay: 3 * sim.Millisecond}, 100000, 1000, 100*sim.Microsecond, 1)
	s.Run()
	gaps := map[sim.Duration]int{}
	for i := 1; i < len(a.at); i++ {
		gaps[a.at[i].Sub(a.at[i-1])]++
	}
	// 1000 packets use 1000 opportunities: 5 passes of 151; the gap
	// inside each pass and none between passes (200 → 201 is 1 ms).
	if len(gaps) != 2 || gaps[50*sim.Millisecond] != 6 || gaps[sim.Millisecond] != 999-6 {
		t.Errorf("inter-arrival gaps = %v, want 993 × 1ms and 6 × 50ms", gaps)
	}
	if a.at[0] != sim.Time(4*sim.Millisecond) {
		t.Errorf("first arrival at %v, want 4ms (opportunity at 1 ms + 3 ms delay)", a.at[0])
	}
}

// Mahimahi shares an opportunity among small packets and spreads a large
// one over several. Each 500-byte packet takes 504 bytes of the 1504 an
// opportunity carries (mahimahi reads the 4-byte tun_pi header with it), so
// by rationalize's arithmetic: at 1 ms packets 1 and 2 (1,008 B) and 496 B
// of packet 3; at 2 ms its last 8 B, packets 4 and 5 and 488 B of packet 6;
// at 3 ms its last 16 B and packet 7.
func TestTraceSharesOpportunities(t *testing.T) {
	tr := newTraceLink(traceConfig([]uint64{1, 2, 3, 4}), 0)
	var got []sim.Time
	now := sim.Time(0)
	for i := 0; i < 7; i++ {
		now = tr.next(now)
		now = tr.take(now, 0, 500) // all queued at 0
		got = append(got, now)
	}
	ms := sim.Time(sim.Millisecond)
	want := []sim.Time{ms, ms, 2 * ms, 2 * ms, 2 * ms, 3 * ms, 3 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("500 B departures = %v, want %v", got, want)
	}
	// Bytes left at 3 ms are lost to a packet that comes later; 4000 B
	// (4004 with the header) then need three opportunities: 4 ms, and 5
	// and 6 ms of the next pass
	// (the trace loops after its last timestamp, 4 ms).
	if end := tr.take(tr.next(now+1), now+1, 4000); end != 6*ms {
		t.Errorf("4000 B after 3 ms left at %v, want 6ms", end)
	}
	// Pure ACKs of 52 B take 56: 26 fit in an opportunity (1,456 B), the
	// 27th finishes in the next.
	tr = newTraceLink(traceConfig([]uint64{1, 2}), 0)
	now = 0
	for i := range 27 {
		now = tr.take(tr.next(now), 0, 52)
		if want := ms + ms*sim.Time(i/26); now != want {
			t.Fatalf("ACK %d left at %v, want %v", i+1, now, want)
		}
	}
}

// mm-link's clock counts whole milliseconds and rationalize runs before a
// packet is enqueued, so an arrival can use only opportunities after the
// millisecond it came in: a packet queued at 0.5 ms leaves at the
// opportunity of 1 ms, one queued at exactly 1 ms at that of 2 ms (its
// instant's opportunity, and the 1,004 bytes the first packet left of it,
// are gone), as does one queued at 1 ms behind others served at 1 ms.
func TestTraceArrivalMissesItsInstant(t *testing.T) {
	ms := sim.Time(sim.Millisecond)
	tr := newTraceLink(traceConfig([]uint64{1, 2, 3, 4}), 0)
	if end := tr.take(tr.next(ms/2), ms/2, 500); end != ms {
		t.Errorf("queued at 0.5 ms: left at %v, want 1ms", end)
	}
	tr.burn(ms) // arrives at 1 ms to the emptied queue
	if end := tr.take(tr.next(ms), ms, 500); end != 2*ms {
		t.Errorf("queued at 1 ms: left at %v, want 2ms", end)
	}
	tr = newTraceLink(traceConfig([]uint64{1, 2, 3, 4}), 0)
	tr.take(tr.next(ms/2), ms/2, 500)
	if end := tr.take(ms, ms, 500); end != 2*ms {
		t.Errorf("queued at 1 ms behind one served then: left at %v, want 2ms", end)
	}
}

// The same through a direction: opportunities every 2 ms, packets sent at
// 0, 4 and 8 ms, 3 ms of delay. The first leaves at 2 ms; the others arrive
// at the instant of an unused opportunity and leave at the next, 6 and 10
// ms, arriving at 5, 9 and 13 ms (they had left at 4 and 8).
func TestTraceDirArrivalMissesItsInstant(t *testing.T) {
	s, _, _, a := testDir(Config{Trace: traceConfig([]uint64{2}), Delay: 3 * sim.Millisecond}, 100, 3, 4*sim.Millisecond, 1)
	s.Run()
	ms := sim.Time(sim.Millisecond)
	if want := []sim.Time{5 * ms, 9 * ms, 13 * ms}; !slices.Equal(a.at, want) {
		t.Errorf("arrivals %v, want %v", a.at, want)
	}
}

// Opportunities that share an instant carry a backlog in one pass, as
// mahimahi's rationalize spends every opportunity that is due: three
// packets queued by 0.2 ms leave together at the three opportunities of
// 2 ms and arrive at 3 ms, in order, and the direction needs one event at
// 2 ms for them (3 sends + 1 + 3 arrivals = 7 events), not one per packet.
func TestTraceInstantServedInOnePass(t *testing.T) {
	s, _, _, a := testDir(Config{Trace: traceConfig([]uint64{2, 2, 2, 4}), Delay: sim.Millisecond}, 100, 3, 100*sim.Microsecond, 1)
	s.Run()
	ms := sim.Time(sim.Millisecond)
	if want := []sim.Time{3 * ms, 3 * ms, 3 * ms}; !slices.Equal(a.at, want) {
		t.Errorf("arrivals at %v, want %v", a.at, want)
	}
	if want := []uint64{0, 1, 2}; !slices.Equal(a.seq, want) {
		t.Errorf("arrival order %v, want %v", a.seq, want)
	}
	if got := s.Events(); got != 7 {
		t.Errorf("events = %d, want 7 (3 sends, 1 at the 2 ms opportunities, 3 arrivals)", got)
	}
}

// A change of delay keeps FIFO order: lowering the delay from 50 ms to
// 10 ms mid-stream makes arrivals max(previous arrival, departure + 10 ms),
// so nothing overtakes. (In reorder order departure + delay stays ordered
// the same way, but the jitter on top reorders as it always does.)
func TestDelayChangeKeepsFIFO(t *testing.T) {
	for _, order := range []config.JitterOrder{config.OrderFIFO} {
		j := config.Jitter{Kind: config.Uniform, Max: sim.Microsecond, Order: order}
		s, d, src, a := testDir(Config{Rate: units.Gbps, Delay: 50 * sim.Millisecond, Jitter: j}, 1000, 2000, 100*sim.Microsecond, 1)
		src.onAct = func(i uint64) {
			if i == 1000 {
				d.SetDelay(10 * sim.Millisecond)
			}
		}
		s.Run()
		for i := 1; i < len(a.seq); i++ {
			if a.seq[i] < a.seq[i-1] {
				t.Fatalf("order %v: packet %d overtook %d after the delay change", order, a.seq[i], a.seq[i-1])
			}
		}
		// Packet 1000 leaves at 100 ms + 12 µs; packet 999 arrives at
		// 99.9 ms + 12 µs + 50 ms (+ ≤ 1 µs): 1000 arrives right after.
		if at := a.at[1000]; at < a.at[999] || at > a.at[999].Add(sim.Microsecond) {
			t.Errorf("order %v: packet 1000 arrives at %v, want just after packet 999 at %v", order, at, a.at[999])
		}
	}
}

// Post loss drops after serialisation, so the lost packet used the queue
// and the link; pre loss drops before either.
func TestLossPosition(t *testing.T) {
	for _, pos := range []config.LossPosition{config.LossPre, config.LossPost} {
		l := config.Loss{Kind: config.Periodic, Every: 4, Position: pos}
		s, d, _, a := testDir(Config{Rate: units.Gbps, Delay: sim.Millisecond, Loss: l}, 1000, 1000, 100*sim.Microsecond, 1)
		s.Run()
		wantEnq, wantSent := uint64(750), units.Bytes(750*1500)
		if pos == config.LossPost {
			wantEnq, wantSent = 1000, 1000*1500
		}
		if len(a.at) != 750 || d.Stats.WireLosses != 250 || d.Stats.Enqueued != wantEnq || d.Stats.SentBytes != wantSent {
			t.Errorf("position %v: delivered %d, lost %d, enqueued %d, sent %v; want 750, 250, %d, %v",
				pos, len(a.at), d.Stats.WireLosses, d.Stats.Enqueued, d.Stats.SentBytes, wantEnq, wantSent)
		}
	}
}

// A two-state capacity process with deterministic alternation draws each
// dwell exponential with its state's mean: walked change by change over
// 2·10^4 cycles, the states alternate from the first, each state's dwells
// pass a Kolmogorov-Smirnov test against Exp(mean) at α = 0.001, and the
// fraction of time at the high rate is 3/(3+1) within 4 SEs of batch means
// (100 batches of 200 cycles; cycles are i.i.d.).
func TestCapacityDwellProcess(t *testing.T) {
	means := [2]float64{3, 1} // s
	c := &config.Capacity{
		States:      []config.CapacityState{{Rate: 50 * units.Mbps, Dwell: 3 * sim.Second}, {Rate: 10 * units.Mbps, Dwell: sim.Second}},
		Transitions: [][]float64{{0, 1}, {1, 0}},
	}
	m := newCapacityModel(c, 0, rng.PCG(5, "link/t/ab/capacity"), nil)
	const cycles, k = 20_000, 100
	hi, all := make([]float64, k), make([]float64, k)
	var dwells [2][]float64
	at := sim.Time(0)
	for i := range 2 * cycles {
		r := rateAt(m, at)
		if want := c.States[i%2].Rate; r != want {
			t.Fatalf("dwell %d at %v: rate %v, want %v", i, at, r, want)
		}
		next := m.nextChange(at)
		d := next.Sub(at).Seconds()
		dwells[i%2] = append(dwells[i%2], d)
		b := i * k / (2 * cycles)
		all[b] += d
		if i%2 == 0 {
			hi[b] += d
		}
		at = next
	}
	for s, mean := range means {
		expo := func(x float64) float64 { return max(0, -math.Expm1(-x/mean)) }
		if d := ks(dwells[s], expo); d > ksCritical(cycles) {
			t.Errorf("dwells at %v: KS D against Exp(mean %v s) = %.5f, critical %.5f at α = 0.001", c.States[s].Rate, mean, d, ksCritical(cycles))
		}
	}
	f, se := ratioSE(hi, all)
	within(t, "time fraction at 50 Mbps", f, means[0]/(means[0]+means[1]), se)
}

// A dwell drawn past the longest run is held there, not wrapped to a
// negative Time: at a mean of 10^6 s, one draw in e^9 would overflow int64
// picoseconds before the clamp.
func TestCapacityLongDwellsStayAhead(t *testing.T) {
	c := &config.Capacity{
		States:      []config.CapacityState{{Rate: 50 * units.Mbps, Dwell: sim.MaxDuration}, {Rate: 10 * units.Mbps, Dwell: sim.MaxDuration}},
		Transitions: [][]float64{{0, 1}, {1, 0}},
	}
	m := newCapacityModel(c, 0, rng.PCG(3, "link/t/ab/capacity"), nil)
	for i := range 100_000 {
		if d := m.expo(m.rng, sim.MaxDuration); d < 1 || d > sim.MaxDuration {
			t.Fatalf("draw %d: dwell %v outside [1ps, %v]", i, d, sim.MaxDuration)
		}
	}
	if r := rateAt(m, sim.Time(sim.Second)); r != 50*units.Mbps {
		t.Errorf("rate at 1 s = %v, want the first state's 50 Mbps", r)
	}
}

// rateAt is the capacity process's rate at now, for a packet starting
// then after a backlog since busySince.
func rateAt(m *capacityModel, now sim.Time) units.BitRate {
	m.advance(now)
	return m.rateAt(now)
}

// A packet's bits go at the rate of each instant: when the rate changes
// under it, the bits still to go take the new rate. Hand-computed for a
// 1500 B packet (12,000 bits), the changes placed by hand.
func TestCapacityChangesUnderAPacket(t *testing.T) {
	us, ms := sim.Time(sim.Microsecond), sim.Time(sim.Millisecond)
	steady := []config.CapacityState{{Rate: 100 * units.Mbps, Dwell: 1000 * sim.Second}}
	for _, tc := range []struct {
		name  string
		c     config.Capacity
		set   func(m *capacityModel)
		start sim.Time
		want  sim.Time
	}{{
		// 600 µs at 10 Mbps carry 6,000 bits; the other 6,000 go at 1 Mbps
		// in 6 ms (the rate at the start, held, would have it leave at 1.2 ms).
		name: "state falls", start: 0, want: 6600 * us,
		c: config.Capacity{States: []config.CapacityState{{Rate: 10 * units.Mbps, Dwell: sim.Second}, {Rate: units.Mbps, Dwell: 1000 * sim.Second}},
			Transitions: [][]float64{{0, 1}, {1, 0}}},
		set: func(m *capacityModel) { m.until = 600 * us },
	}, {
		// 100 µs at 100 Mbps carry 10,000 bits; a dip to nothing (1 bps)
		// from then to 5 ms carries 0.0049 of a bit, and the rest,
		// 1,999.9951 bits, goes at 100 Mbps in 19.999951 µs.
		name: "dip to nothing", start: 0, want: 5*ms + 19_999_951,
		c: config.Capacity{States: steady, Transitions: [][]float64{{1}},
			Dips: &config.CapacityDips{Every: sim.Second, Depth: 0, Scale: sim.Millisecond, Shape: 1.5}},
		set: func(m *capacityModel) { m.dipAt, m.dipEnd = 100*us, 5*ms },
	}, {
		// Starting at 1 ms in a dip to 25 Mbps that ends at 1.2 ms: 5,000
		// bits in the dip, 7,000 at 100 Mbps in 70 µs (held, 1.48 ms).
		name: "dip ends", start: ms, want: ms + 270*us,
		c: config.Capacity{States: steady, Transitions: [][]float64{{1}},
			Dips: &config.CapacityDips{Every: sim.Second, Depth: 0.25, Scale: sim.Millisecond, Shape: 1.5}},
		set: func(m *capacityModel) { m.dipAt, m.dipEnd = 0, 1200*us },
	}, {
		// Nothing changes under it: 12,000 bits at 100 Mbps, 120 µs.
		name: "steady", start: ms, want: ms + 120*us,
		c:   config.Capacity{States: steady, Transitions: [][]float64{{1}}},
		set: func(*capacityModel) {},
	}} {
		m := newCapacityModel(&tc.c, 0, rng.PCG(5, "link/t/ab/capacity"), rng.PCG(5, "link/t/ab/capacity/dips"))
		tc.set(m)
		if got := m.finish(tc.start, tc.start, 1500); got != tc.want {
			t.Errorf("%s: the packet leaves at %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A direction kept busy serves, over any stretch, what its rate process
// integrates to, within a bit (each packet leaves at the picosecond its
// last bit is served, rounded up): with dips of any depth, to nothing
// included, and state changes under packets. The integral is summed on a
// copy of the process, stepped from each change of its rate to the next.
// (Held at the rate of its start, a packet that began in a dip to 0.1 left
// the link 18 Mbit short of it over these 9 s.)
func TestCapacityServesItsIntegral(t *testing.T) {
	for _, depth := range []float64{0, 0.1, 0.5} {
		c := config.Capacity{
			States:      []config.CapacityState{{Rate: 40 * units.Mbps, Dwell: 37 * sim.Millisecond}, {Rate: 7 * units.Mbps, Dwell: 11 * sim.Millisecond}},
			Transitions: [][]float64{{0, 1}, {1, 0}},
			Dips:        &config.CapacityDips{Every: 50 * sim.Millisecond, Depth: depth, Scale: 2 * sim.Millisecond, Shape: 1.5, Cap: 40 * sim.Millisecond},
		}
		// 1500 B every 100 µs is 120 Mbps: the queue never empties.
		s, _, _, a := testDir(Config{Rate: 40 * units.Mbps, Delay: sim.Millisecond, Capacity: &c}, 1_000_000, 100_000, 100*sim.Microsecond, 7)
		s.RunUntil(sim.Time(9 * sim.Second))
		ref := newCapacityModel(&c, 0, rng.PCG(7, "link/t/ab/capacity"), rng.PCG(7, "link/t/ab/capacity/dips"))
		// Bits served by the wire up to the last arrival's departure.
		last := a.at[len(a.at)-1].Add(-sim.Millisecond)
		var bits float64
		for t0 := sim.Time(0); t0 < last; {
			ref.advance(t0)
			t1 := min(ref.nextChange(t0), last)
			bits += float64(ref.rateAt(t0)) * t1.Sub(t0).Seconds()
			t0 = t1
		}
		got := float64(len(a.at)) * 12000
		if math.Abs(got-bits) > 1 {
			t.Errorf("depth %v: %.0f bits served by %v, the rate integrates to %.0f", depth, got, last, bits)
		}
		t.Logf("depth %v: %d packets by %v, %.3f bits from the integral", depth, len(a.at), last, got-bits)
	}
}

// The grant ramp: the rate rises linearly from start × rate, when the
// direction starts serving after idle, to the full rate after ramp of
// backlog, and a packet's bits go at the rate of each instant on the way.
// Hand-computed for a 1500 B packet (12,000 bits).
func TestCapacityGrantRamp(t *testing.T) {
	us, ms := sim.Time(sim.Microsecond), sim.Time(sim.Millisecond)
	for _, tc := range []struct {
		name             string
		rate             units.BitRate
		start            float64
		ramp             sim.Duration
		busySince, begin sim.Time
		want             sim.Time
	}{{
		// From 0.2 of 100 Mbps rising by 0.8 in 100 ms: 12,000 bits are
		// served when 0.2·x + 0.8·x²/(2·100 ms) reaches their 120 µs at the
		// full rate, x = 592.967784139... µs, rounded up to the ps (held at
		// the start's 20 Mbps: 600 µs).
		name: "after idle", rate: 100 * units.Mbps, start: 0.2, ramp: 100 * sim.Millisecond,
		want: 592_967_785,
	}, {
		// A ramp from nothing over 10 ms at 10 Mbps: √(2 · 10 ms · 12,000
		// bits / 10 Mbps) = √(24) ms = 4.898979485566... ms.
		name: "from nothing", rate: 10 * units.Mbps, start: 0, ramp: 10 * sim.Millisecond,
		want: 4_898_979_486,
	}, {
		// Halfway up a ramp from 0.5 over 1 ms at 12 Mbps (1 ms a packet
		// at the full rate): by the ramp's end, 0.5 ms later, 0.75·0.5 +
		// 0.5·0.5²/2 = 0.4375 ms of the full rate's bits; the other 0.5625
		// ms go at the full rate.
		name: "past the ramp's end", rate: 12 * units.Mbps, start: 0.5, ramp: sim.Millisecond,
		begin: 500 * us, want: ms + 562_500*sim.Time(sim.Nanosecond),
	}, {
		// Busy since 200 ms, the ramp is over at 300 ms: 120 µs at 100 Mbps.
		name: "ramp over", rate: 100 * units.Mbps, start: 0.2, ramp: 100 * sim.Millisecond,
		busySince: 200 * ms, begin: 300 * ms, want: 300*ms + 120*us,
	}} {
		c := &config.Capacity{States: []config.CapacityState{{Rate: tc.rate, Dwell: 1000 * sim.Second}},
			Transitions: [][]float64{{1}}, Grant: &config.CapacityGrant{Start: tc.start, Ramp: tc.ramp}}
		m := newCapacityModel(c, 0, rng.PCG(5, "c"), nil)
		if got := m.finish(tc.begin, tc.busySince, 1500); got != tc.want {
			t.Errorf("%s: the packet leaves at %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A direction kept busy from idle serves what the ramped rate integrates
// to: by time t ≥ ramp after the backlog began, r·(t − (1 − start)·ramp/2)
// bits, the ramp costing (1 − start)·ramp/2 of the full rate's time. Its
// packets leave within a nanosecond of that line (each packet's end is
// rounded up to the picosecond): at 50 Mbps over a 20 ms ramp from
// nothing, 10 ms behind the link without a ramp.
func TestCapacityGrantRampServesItsIntegral(t *testing.T) {
	const rate = 50 * units.Mbps
	for _, start := range []float64{0, 0.3} {
		ramp := 20 * sim.Millisecond
		c := config.Capacity{States: []config.CapacityState{{Rate: rate, Dwell: 1000 * sim.Second}},
			Transitions: [][]float64{{1}}, Grant: &config.CapacityGrant{Start: start, Ramp: ramp}}
		// 1500 B every 100 µs is 120 Mbps: the queue never empties.
		s, _, _, a := testDir(Config{Rate: rate, Delay: sim.Millisecond, Capacity: &c}, 20_000, 20_000, 100*sim.Microsecond, 3)
		s.RunUntil(sim.Time(sim.Second))
		lag := (1 - start) * ramp.Seconds() / 2
		worst := 0.0
		for i, at := range a.at {
			left := at.Add(-sim.Millisecond).Seconds() // departure
			if left < ramp.Seconds() {
				continue
			}
			want := float64(i+1) * 12000 / float64(rate) // the full rate's time for the bits so far
			worst = max(worst, math.Abs(left-lag-want))
		}
		t.Logf("start %v: %d packets in 1 s, the worst departure %.3g s off the line (lag %.1f ms)", start, len(a.at), worst, lag*1e3)
		if worst > 1e-9 || len(a.at) < 4000 {
			t.Errorf("start %v: %d packets, departures up to %.3g s off r·(t − %.1f ms)", start, len(a.at), worst, lag*1e3)
		}
	}
}

// Every model is deterministic by seed, and the models draw from separate
// streams: adding jitter and a capacity process does not change which
// packets the loss model drops.
func TestModelsDeterministicAndIndependent(t *testing.T) {
	loss := config.Loss{Kind: config.GilbertElliott, PGB: 0.02, PBG: 0.3, LossBad: 0.7}
	full := Config{Delay: 5 * sim.Millisecond, Loss: loss,
		Jitter: config.Jitter{Kind: config.Pareto, Scale: 100 * sim.Microsecond, Shape: 1.5, Order: config.OrderReorder},
		Capacity: &config.Capacity{
			States:      []config.CapacityState{{Rate: 50 * units.Mbps, Dwell: 100 * sim.Millisecond}, {Rate: 200 * units.Mbps, Dwell: 50 * sim.Millisecond}},
			Transitions: [][]float64{{0.2, 0.8}, {0.6, 0.4}},
			Dips:        &config.CapacityDips{Every: 300 * sim.Millisecond, Depth: 0.1, Scale: 5 * sim.Millisecond, Shape: 1.5, Cap: 200 * sim.Millisecond},
		}}
	runWith := func(c Config, seed uint64) ([]uint64, []sim.Time) {
		s, _, _, a := testDir(c, 100000, 20000, 100*sim.Microsecond, seed)
		s.Run()
		return a.seq, a.at
	}
	s1, t1 := runWith(full, 9)
	s2, t2 := runWith(full, 9)
	if !slices.Equal(s1, s2) || !slices.Equal(t1, t2) {
		t.Errorf("seed 9 twice gives two runs")
	}
	s3, _ := runWith(full, 10)
	if slices.Equal(s1, s3) {
		t.Errorf("seeds 9 and 10 give the same run")
	}
	lossOnly := Config{Rate: 100 * units.Mbps, Delay: 5 * sim.Millisecond, Loss: loss}
	s4, _ := runWith(lossOnly, 9)
	a, b := slices.Clone(s1), slices.Clone(s4)
	slices.Sort(a)
	if !slices.Equal(a, b) {
		t.Errorf("adding jitter and capacity changed the set of lost packets (%d vs %d delivered)", len(a), len(b))
	}
}

// The arrival heap pops in (arrival, push order), the order of a stable
// sort, through interleaved pushes and pops; also where the push order
// wraps (heapEntry.tag holds it in 30 bits).
func TestArrivalHeapOrder(t *testing.T) {
	for _, from := range []uint32{0, 1<<30 - 10000} {
		testArrivalHeapOrder(t, from)
	}
}

func testArrivalHeapOrder(t *testing.T, from uint32) {
	r := rng.Stream(1, "test/heap")
	h := arrivalHeap{n: from}
	var want, got []inflight
	var pending []inflight
	for i := 0; i < 20000; i++ {
		x := inflight{packet.ID(i), sim.Time(r.Int64N(500))}
		h.push(x)
		pending = append(pending, x)
		if r.IntN(3) == 0 {
			slices.SortStableFunc(pending, func(a, b inflight) int { return int(a.arrive - b.arrive) })
			want = append(want, pending[0])
			pending = pending[1:]
			got = append(got, h.pop())
		}
	}
	slices.SortStableFunc(pending, func(a, b inflight) int { return int(a.arrive - b.arrive) })
	want = append(want, pending...)
	for len(h.a) > 0 {
		got = append(got, h.pop())
	}
	if !slices.Equal(got, want) {
		t.Errorf("push order from %d: heap order differs from a stable sort", from)
	}
}

// Opportunities that all fall inside periodic outages are all lost: the
// direction delivers nothing and the run still ends (each look at the
// schedule is bounded; the direction looks again later).
func TestTraceInsideOutagesStalls(t *testing.T) {
	out := &config.Outages{Every: sim.Millisecond, Duration: 500 * sim.Microsecond}
	s, _, _, a := testDir(Config{Trace: traceConfig([]uint64{1, 2, 3}), Outages: out}, 100, 10, sim.Millisecond, 1)
	s.RunUntil(sim.Time(10 * sim.Second))
	if len(a.at) != 0 {
		t.Errorf("%d packets delivered through outages covering every opportunity, want 0", len(a.at))
	}
}

// Dips start a Poisson time of mean every after the previous one ends and
// last min(Pareto(x_m, α), cap), with E[min(X, c)] = x_m + x_m/(α−1)·(1 −
// (x_m/c)^(α−1)): the fraction of time in a dip is E[L]/(E[L] + every),
// and the rate in a dip is depth × the state's.
func TestCapacityDipsFraction(t *testing.T) {
	const xm, alpha, capMs, everyMs = 10.0, 1.5, 500.0, 1000.0
	c := &config.Capacity{
		States:      []config.CapacityState{{Rate: 100 * units.Mbps, Dwell: 1000 * sim.Second}},
		Transitions: [][]float64{{1}},
		Dips:        &config.CapacityDips{Every: sim.Second, Depth: 0.25, Scale: 10 * sim.Millisecond, Shape: alpha, Cap: 500 * sim.Millisecond},
	}
	m := newCapacityModel(c, 0, rng.PCG(5, "link/t/ab/capacity"), rng.PCG(5, "link/t/ab/capacity/dips"))
	const n, k = 4_000_000, 100
	in, all := make([]float64, k), make([]float64, k)
	for i := 0; i < n; i++ {
		r := rateAt(m, sim.Time(i)*sim.Time(sim.Millisecond))
		b := i * k / n
		all[b]++
		switch r {
		case 25 * units.Mbps:
			in[b]++
		case 100 * units.Mbps:
		default:
			t.Fatalf("rate %v, want 100 Mbps or 25 Mbps in a dip", r)
		}
	}
	el := xm + xm/(alpha-1)*(1-math.Pow(xm/capMs, alpha-1))
	f, se := ratioSE(in, all)
	within(t, "time fraction in dips", f, el/(el+everyMs), se)
	t.Logf("fraction in dips %.5f, want %.5f (SE %.2g)", f, el/(el+everyMs), se)
}

// An outage schedule is down exactly inside its windows, listed or
// periodic, whatever the order of the queries and with windows added
// between them: each answer matches a scan of every window.
func TestOutageScheduleMatchesWindows(t *testing.T) {
	ms := sim.Millisecond
	o := newOutages(&config.Outages{Windows: []config.OutageWindow{{At: 5 * ms, Duration: 2 * ms}, {At: 40 * ms, Duration: 10 * ms}},
		Start: 20 * ms, Every: 30 * ms, Duration: 3 * ms})
	listed := []window{{sim.Time(5 * ms), sim.Time(7 * ms)}, {sim.Time(40 * ms), sim.Time(50 * ms)}}
	// want is the scan: down at t if some window holds t, until the latest
	// end of those that do.
	want := func(t sim.Time) (sim.Time, bool) {
		end, down := sim.Time(0), false
		for _, w := range listed {
			if w.at <= t && t < w.end {
				end, down = max(end, w.end), true
			}
		}
		for k := int64(0); sim.Time(20*ms+sim.Duration(k)*30*ms) <= t; k++ {
			at := sim.Time(20*ms + sim.Duration(k)*30*ms)
			if t < at.Add(3*ms) {
				end, down = max(end, at.Add(3*ms)), true
			}
		}
		return end, down
	}
	r := rng.Stream(14, "test/outages")
	t0 := sim.Time(0)
	for i := range 30000 {
		switch r.IntN(50) {
		case 0: // a query back in time
			t0 = max(0, t0.Add(-sim.Duration(r.Int64N(int64(20*ms)))))
		case 1: // an outage added from t0, as AddOutage does
			d := sim.Duration(r.Int64N(int64(4 * ms)))
			o.add(t0, d)
			listed = append(listed, window{t0, t0.Add(d)})
		default:
			t0 = t0.Add(sim.Duration(r.Int64N(int64(200 * sim.Microsecond))))
		}
		if t0 > sim.Time(2900*ms) {
			t0 = 0
		}
		gotEnd, gotDown := o.downUntil(t0)
		wantEnd, wantDown := want(t0)
		// Windows that touch or overlap merge, so the end may lie past the
		// scan's, but the direction must be down all the way to it.
		if gotDown != wantDown || gotDown && gotEnd < wantEnd {
			t.Fatalf("step %d: downUntil(%v) = %v, %v; want %v, %v", i, t0, gotEnd, gotDown, wantEnd, wantDown)
		}
		if _, down := want(gotEnd - 1); gotDown && !down {
			t.Fatalf("step %d: downUntil(%v) = %v, but the direction is up at %v", i, t0, gotEnd, gotEnd-1)
		}
	}
}

// In reorder order every packet arrives at its own departure + delay +
// jitter, in that order, ties in the order sent: the delivered sequence is
// the stable sort of those instants, whether a packet overtakes none, a few
// or hundreds of the packets ahead of it.
func TestReorderDeliversInArrivalOrder(t *testing.T) {
	const n, gap, delay = 20_000, 200 * sim.Microsecond, 20 * sim.Millisecond
	tx := units.TxTime(1500, 100*units.Mbps)
	var models []config.Jitter
	for _, sigma := range []sim.Duration{20 * sim.Microsecond, 300 * sim.Microsecond, 10 * sim.Millisecond} {
		models = append(models, config.Jitter{Kind: config.Gaussian, Sigma: sigma, Order: config.OrderReorder})
	}
	// Ties between the ring and the heap: a packet held 1 ms lands at the
	// very instant of the one sent five gaps after it, which is in the
	// ring while the held one, overtaken by the four between, is in the
	// heap; the held one was sent first, so it comes first.
	models = append(models, config.Jitter{Kind: config.Reorder, P: 0.3, Delay: 5 * gap})
	for _, j := range models {
		sigma := j.Sigma
		if j.Kind == config.Reorder {
			sigma = j.Delay
		}
		s, _, _, a := testDir(Config{Rate: 100 * units.Mbps, Delay: delay, Jitter: j}, 1000, n, gap, 3)
		s.Run()
		// The same draws, from a model on the same stream: packet i leaves
		// at i·gap + tx (the link is idle when it comes) and is due at
		// departure + delay + X_i.
		m := newJitterModel(j, rng.PCG(3, "link/t/ab/jitter"))
		type due struct {
			at  sim.Time
			seq uint64
		}
		want := make([]due, n)
		for i := range want {
			base := sim.Time(int64(i) * int64(gap)).Add(tx + delay)
			want[i] = due{base.Add(m.extra(base, delay)), uint64(i)}
		}
		slices.SortStableFunc(want, func(x, y due) int { return cmp.Compare(x.at, y.at) })
		if len(a.seq) != n {
			t.Fatalf("σ %v: %d arrivals, want %d", sigma, len(a.seq), n)
		}
		for i, w := range want {
			if a.seq[i] != w.seq || a.at[i] != w.at {
				t.Fatalf("σ %v: arrival %d is packet %d at %v, want packet %d at %v", sigma, i, a.seq[i], a.at[i], w.seq, w.at)
			}
		}
	}
}

// A direction's overhead is serialised with every packet: at 12 Mbps a
// 1,500-byte packet with Ethernet's 14-byte header takes 1,514·8/12e6 s =
// 1,009.333 µs, so three sent at once arrive that far apart (1 ms without
// it); the delivered IP rate is 1500/1514 of the link's.
func TestOverheadIsSerialised(t *testing.T) {
	for _, tc := range []struct {
		overhead units.Bytes
		gap      float64 // µs
	}{{0, 1000}, {14, 1514.0 * 8 / 12}} {
		for _, eager := range []bool{false, true} { // served lazily, and by events
			s, d, _, a := testDir(Config{Rate: 12 * units.Mbps, Overhead: tc.overhead}, 100, 3, 0, 1)
			if eager {
				d.Eager()
			}
			s.Run()
			for i, at := range a.at {
				want := float64(i+1) * tc.gap * float64(sim.Microsecond)
				if math.Abs(float64(at)-want) > float64(i+1) { // a ps of rounding a packet
					t.Errorf("overhead %v, eager %v: packet %d arrived at %v, want %.0f ps", tc.overhead, eager, i, at, want)
				}
			}
		}
	}
}
