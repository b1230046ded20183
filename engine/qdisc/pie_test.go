package qdisc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// RFC 8033 §5.2's update, in seconds and probabilities: p += α·(qdelay −
// target) + β·(qdelay − qdelay_old), with α = 0.125 Hz and β = 1.25 Hz
// (the kernel's alpha 2 and beta 20, in 1/16 Hz) divided by the factor of
// the pseudocode's table for the probability before the update.
func rfc8033Step(p, qdelay, old, target float64) float64 {
	delta := 0.125*(qdelay-target) + 1.25*(qdelay-old)
	switch {
	case p < 0.000001:
		delta /= 2048
	case p < 0.00001:
		delta /= 512
	case p < 0.0001:
		delta /= 128
	case p < 0.001:
		delta /= 32
	case p < 0.01:
		delta /= 8
	case p < 0.1:
		delta /= 2
	}
	return p + delta
}

// One update in each of the RFC's probability bands, against the RFC's
// formula in floating point: the kernel's fixed point (56-bit
// probabilities, 64 ns ticks) agrees to a few parts in a million.
func TestPIEUpdateFollowsRFC8033(t *testing.T) {
	const target = 0.015
	for _, c := range []struct{ p, qdelay, old float64 }{
		{0, 0.020, 0.018}, {0.000005, 0.030, 0.020}, {0.00005, 0.016, 0.016},
		{0.0005, 0.040, 0.035}, {0.005, 0.025, 0.030}, {0.05, 0.010, 0.012}, {0.3, 0.020, 0.015},
	} {
		e := &testEnv{}
		q := NewPIE(e.env(), rand.New(rand.NewPCG(1, 2)), PIEParams{})
		q.vars.prob = uint64(c.p * pieMaxProb)
		q.vars.qdelay = pschedTicks(sim.Duration(c.qdelay * float64(sim.Second)))
		q.vars.qdelayOld = pschedTicks(sim.Duration(c.old * float64(sim.Second)))
		q.p.calculateProbability(&q.vars, 100*1500)
		got := float64(q.vars.prob) / pieMaxProb
		want := rfc8033Step(c.p, c.qdelay, c.old, target)
		if math.Abs(got-want) > 1e-5*math.Max(want, 1e-6) {
			t.Errorf("p %g, qdelay %g s, old %g s: p → %.9g, want RFC 8033's %.9g", c.p, c.qdelay, c.old, got, want)
		}
	}
}

// The kernel's safeguards beyond the RFC's table: from 10 % a step adds at
// most 2 %, and a delay over 250 ms adds 2 % more.
func TestPIEUpdateCaps(t *testing.T) {
	e := &testEnv{}
	q := NewPIE(e.env(), rand.New(rand.NewPCG(1, 2)), PIEParams{})
	q.vars.prob = pieMaxProb / 5
	q.vars.qdelay = pschedTicks(200 * sim.Millisecond)
	q.p.calculateProbability(&q.vars, 1000*1500)
	if got, want := q.vars.prob, uint64(pieMaxProb/5+pieMaxProb/100*2); got != want {
		t.Errorf("200 ms at p 0.2: p → %d, want 0.2 + 0.02 = %d", got, want)
	}
	q.vars.qdelay, q.vars.qdelayOld = pschedTicks(300*sim.Millisecond), pschedTicks(300*sim.Millisecond)
	before := q.vars.prob
	q.p.calculateProbability(&q.vars, 1000*1500)
	if got, want := q.vars.prob-before, uint64(pieMaxProb/100*2+pieMaxProb/50); got != want {
		t.Errorf("300 ms: p rose by %d, want 2 %% + 2 %% = %d", got, want)
	}
}

// pie_init's first update comes HZ/2 after init, the next tupdate apart:
// a packet that waits from 0 leaves the probability at 0 until 500 ms,
// then moves it at 500 ms and at 515 ms.
func TestPIEFirstUpdateAtHalfASecond(t *testing.T) {
	e := &testEnv{}
	q := NewPIE(e.env(), rand.New(rand.NewPCG(1, 2)), PIEParams{})
	for range 3 {
		q.Enqueue(e.pkt(0, packet.NotECT), 0)
	}
	// The delay the update reads is the last dequeued packet's sojourn.
	if _, ok := q.Dequeue(sim.Time(400 * sim.Millisecond)); !ok {
		t.Fatal("no packet")
	}
	if p := q.Prob(sim.Time(500*sim.Millisecond) - 1); p != 0 {
		t.Errorf("p before 500 ms = %d, want 0", p)
	}
	p1 := q.Prob(sim.Time(500 * sim.Millisecond))
	// 400 ms of delay is past 250 ms: the update adds 2 % beyond the
	// scaled PI step.
	if p1 < pieMaxProb/50 {
		t.Errorf("p at 500 ms = %g, want at least 0.02", float64(p1)/pieMaxProb)
	}
	if p := q.Prob(sim.Time(515*sim.Millisecond) - 1); p != p1 {
		t.Errorf("p moved before the next update at 515 ms")
	}
	if p := q.Prob(sim.Time(515 * sim.Millisecond)); p <= p1 {
		t.Errorf("p at 515 ms = %d, want above %d (the delay is still 400 ms)", p, p1)
	}
}

// No early drop during the 150 ms burst allowance, counted down by the
// time between dequeues (pie_process_dequeue), however high p is.
func TestPIEBurstAllowance(t *testing.T) {
	e := &testEnv{}
	q := NewPIE(e.env(), rand.New(rand.NewPCG(1, 2)), PIEParams{LimitPkts: 100000})
	q.vars.prob = pieMaxProb // every packet would go
	q.vars.qdelay = q.p.target
	now := sim.Time(0)
	for range 4 {
		q.Enqueue(e.pkt(0, packet.NotECT), now)
	}
	for now < sim.Time(149*sim.Millisecond) {
		now += sim.Time(sim.Millisecond)
		q.Dequeue(now)
		q.vars.qdelay = q.p.target
		if !q.Enqueue(e.pkt(0, packet.NotECT), now) {
			t.Fatalf("early drop at %v, inside the burst allowance", now)
		}
	}
	// The first dequeue only starts the clock: 148 ms have counted.
	now += sim.Time(2 * sim.Millisecond)
	q.Dequeue(now)
	q.vars.qdelay = q.p.target
	if q.Enqueue(e.pkt(0, packet.NotECT), now) {
		t.Errorf("no early drop at p = 1 once the allowance ran out")
	}
}

// De-randomisation (RFC 8033 §5.1, pie_drop_early): at a steady p = 1 %
// the probabilities of the packets since the last drop accumulate; none
// goes below 0.85 (85 packets), one always goes at 8.5, and in between
// each goes with p. In the kernel's fixed point 850 packets of
// MAX_PROB/100 fall 289 units short of (MAX_PROB/2)·17, so the 851st is
// the one that always goes. So the gap between drops is 85 + j with
// probability p(1−p)^j for j ≤ 765, and 851 otherwise: the mean of 60,000
// gaps lies within 4 standard errors of that distribution's.
func TestPIEDerandomisedDrops(t *testing.T) {
	e := &testEnv{}
	q := NewPIE(e.env(), rand.New(rand.NewPCG(3, 4)), PIEParams{LimitPkts: 100})
	p := 0.01
	q.vars.prob = pieMaxProb / 100
	q.vars.burstTime = 0
	for range 3 { // 2 MTU queued
		q.Enqueue(e.pkt(0, packet.NotECT), 0)
	}
	var gaps []int
	n := 0
	for len(gaps) < 60000 {
		n++
		q.vars.qdelay = q.p.target
		id := e.pkt(0, packet.NotECT)
		if !q.Enqueue(id, 0) {
			e.pool.Free(id)
			gaps = append(gaps, n)
			if n < 85 || n > 851 {
				t.Fatalf("a gap of %d packets between drops, want 85..851", n)
			}
			n = 0
			continue
		}
		out, _ := q.Dequeue(0)
		e.pool.Free(out)
	}
	var mean, m2 float64
	for j := 0; j <= 765; j++ {
		w := p * math.Pow(1-p, float64(j))
		mean += w * float64(85+j)
		m2 += w * float64((85+j)*(85+j))
	}
	w := math.Pow(1-p, 766)
	mean += w * 851
	m2 += w * 851 * 851
	sd := math.Sqrt(m2 - mean*mean)
	var got float64
	for _, g := range gaps {
		got += float64(g)
	}
	got /= float64(len(gaps))
	if se := sd / math.Sqrt(float64(len(gaps))); math.Abs(got-mean) > 4*se {
		t.Errorf("mean gap %.2f packets, want %.2f ± %.2f (4 SE)", got, mean, 4*se)
	}
}

// With ECN an ECT packet is marked rather than dropped while p is at most
// 10 %, and dropped above it (pie_qdisc_enqueue).
func TestPIEMarksECTUpToTenPercent(t *testing.T) {
	for _, c := range []struct {
		p    uint64
		mark bool
	}{{pieMaxProb / 10, true}, {pieMaxProb/10 + 1, false}} {
		e := &testEnv{}
		q := NewPIE(e.env(), rand.New(rand.NewPCG(1, 2)), PIEParams{ECN: true})
		q.vars.burstTime = 0
		for range 3 {
			q.Enqueue(e.pkt(0, packet.NotECT), 0)
		}
		q.vars.prob, q.vars.qdelay = c.p, q.p.target
		q.vars.accuProb = pieMaxProb / 2 * 17 // the next one goes for sure
		id := e.pkt(0, packet.ECT0)
		ok := q.Enqueue(id, 0)
		if ok != c.mark || (len(e.marks) == 1) != c.mark || ok && e.pool.Get(id).ECN != packet.CE {
			t.Errorf("p = %g: enqueued %v, marks %d; want marked %v", float64(c.p)/pieMaxProb, ok, len(e.marks), c.mark)
		}
	}
}

// fq_pie_timer updates at most 2048 flows a run and comes back a jiffy
// later for the rest, then tupdate after the last run: with 4096 flows a
// flow below 2048 is updated at 500 ms, 516 ms, …, one above it at 501 ms,
// 517 ms, … (cycle: tupdate 15 ms + one jiffy).
func TestFQPIETimerChunks(t *testing.T) {
	e := &testEnv{}
	q := NewFQPIE(e.env(), rand.New(rand.NewPCG(1, 2)), FQPIEParams{Flows: 4096, HashSeed: 1})
	low, high := int32(-1), int32(-1)
	for f := int32(0); low < 0 || high < 0; f++ {
		switch b := q.Bucket(e.pool.Get(e.pkt(f, packet.NotECT))); {
		case b < fqPIEChunk && low < 0:
			low = f
		case b >= fqPIEChunk && high < 0:
			high = f
		}
	}
	for _, f := range []int32{low, high} {
		for range 2 {
			q.Enqueue(e.pkt(f, packet.NotECT), 0)
		}
	}
	// One packet of each flow leaves at 400 ms, another stays: each flow's
	// delay is 400 ms with packets still queued.
	for range 2 {
		if _, ok := q.Dequeue(sim.Time(400 * sim.Millisecond)); !ok {
			t.Fatal("no packet")
		}
	}
	bl, bh := q.Bucket(e.pool.Get(e.pkt(low, packet.NotECT))), q.Bucket(e.pool.Get(e.pkt(high, packet.NotECT)))
	ms := func(n int64) sim.Time { return sim.Time(n) * sim.Time(sim.Millisecond) }
	// Each step reads both flows at a time, times in order: p rises at a
	// flow's update and holds between them.
	var last [2]uint64
	for _, s := range []struct {
		at     sim.Time
		up     [2]bool // which of (low, high) were updated since the last step
		before string
	}{
		{ms(500) - 1, [2]bool{false, false}, "before the first run"},
		{ms(500), [2]bool{true, false}, "the first run: flows below 2048"},
		{ms(501) - 1, [2]bool{false, false}, "between the runs"},
		{ms(501), [2]bool{false, true}, "a jiffy later: the rest"},
		{ms(516) - 1, [2]bool{false, false}, "before the next cycle"},
		{ms(516), [2]bool{true, false}, "tupdate after the last run"},
		{ms(517), [2]bool{false, true}, "a jiffy later"},
	} {
		for k, b := range []int{bl, bh} {
			p := q.Prob(b, s.at)
			if moved := p != last[k]; moved != s.up[k] || s.up[k] && p < last[k] {
				t.Errorf("%v (%s): flow %d p %d → %d, want it moved up: %v", s.at, s.before, b, last[k], p, s.up[k])
			}
			last[k] = p
		}
	}
}
