package rcvpath

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// rig drives one model: a feeder handler that sends a packet per event and
// a sink that records when each packet comes out.
type rig struct {
	s    *sim.Sim
	pool *packet.Pool
	in   Sink
	feed int32
	out  []out
	// make builds the packet a feed event sends (default: a pure ACK
	// whose cumulative ACK is the event's arg).
	make func(p *packet.Packet, arg uint64)
}

type out struct {
	at sim.Time
	id packet.ID
}

func newRig() *rig {
	r := &rig{s: sim.New(), pool: &packet.Pool{}}
	r.feed = r.s.Register(r, "feeder")
	return r
}

func (r *rig) Send(id packet.ID) { r.out = append(r.out, out{at: r.s.Now(), id: id}) }

func (r *rig) Handle(ev sim.Event) {
	id := r.pool.Alloc()
	p := r.pool.Get(id)
	p.Flags, p.Ack = packet.ACK, ev.Arg
	if r.make != nil {
		r.make(p, ev.Arg)
	}
	r.in.Send(id)
}

// at schedules a packet into the model at t, with arg for make.
func (r *rig) at(t sim.Time, arg uint64) { r.s.Schedule(t, r.feed, 0, arg) }

func TestQuantilesDraw(t *testing.T) {
	q := Quantiles{0, 10 * sim.Millisecond, 20 * sim.Millisecond, 40 * sim.Millisecond}
	tests := []struct {
		u    float64
		want sim.Duration
	}{
		{0, 0},
		{1.0 / 3, 10 * sim.Millisecond},
		{0.5, 15 * sim.Millisecond},
		{5.0 / 6, 30 * sim.Millisecond},
		{math.Nextafter(1, 0), 40 * sim.Millisecond},
	}
	for _, tt := range tests {
		got := q.Draw(tt.u)
		if d := got - tt.want; d < -sim.Nanosecond || d > sim.Nanosecond {
			t.Errorf("Draw(%v) = %v, want %v", tt.u, got, tt.want)
		}
	}
}

// TestHold: every packet leaves exactly the hold later, in order.
func TestHold(t *testing.T) {
	r := newRig()
	delay := 120 * sim.Microsecond
	r.in = NewHold(r.s, "hold", delay, r)
	sent := []sim.Time{0, 1000, 1000, sim.Time(50 * sim.Microsecond), sim.Time(500 * sim.Microsecond)}
	for i, at := range sent {
		r.at(at, uint64(i))
	}
	r.s.Run()
	if len(r.out) != len(sent) {
		t.Fatalf("released %d packets, want %d", len(r.out), len(sent))
	}
	for i, o := range r.out {
		if want := sent[i].Add(delay); o.at != want {
			t.Errorf("packet %d left at %v, want %v", i, o.at, want)
		}
		if ack := r.pool.Get(o.id).Ack; ack != uint64(i) {
			t.Errorf("packet %d out of order: got ACK %d", i, ack)
		}
	}
}

// ksD is the Kolmogorov–Smirnov statistic of samples against the
// piecewise-linear CDF that q defines.
func ksD(samples []sim.Duration, q Quantiles) float64 {
	slices.Sort(samples)
	cdf := func(x sim.Duration) float64 {
		n := len(q) - 1
		for i := range n {
			if x < q[i+1] {
				if x < q[i] {
					return float64(i) / float64(n)
				}
				return (float64(i) + float64(x-q[i])/float64(q[i+1]-q[i])) / float64(n)
			}
		}
		return 1
	}
	var d float64
	for i, x := range samples {
		f := cdf(x)
		d = max(d, math.Abs(f-float64(i)/float64(len(samples))), math.Abs(f-float64(i+1)/float64(len(samples))))
	}
	return d
}

// ks1pct is the KS critical value at 1 % for n samples (1.63/sqrt(n)).
func ks1pct(n int) float64 { return 1.63 / math.Sqrt(float64(n)) }

// TestAckHoldQuantiles: with the flow saturating the path, ACKs spaced
// wider than the longest hold each leave after a hold whose distribution
// is the configured one (KS at 1 %); below saturation they pass at once.
func TestAckHoldQuantiles(t *testing.T) {
	r := newRig()
	q := Quantiles{0, 500 * sim.Microsecond, sim.Millisecond, 2 * sim.Millisecond, 8 * sim.Millisecond}
	var st Stats
	h := NewAckHold(r.s, r.pool, "ack_hold", AckHoldConfig{Quantiles: q, Threshold: 90 * units.Mbps,
		Window: 10 * sim.Millisecond, RNG: rand.New(rand.NewPCG(1, 2)), Stats: &st}, r)
	r.in = h
	// One window at 100 Mbps (125 kB in 10 ms), then the next arrival
	// opens the following window: saturated from then on.
	h.NoteArrival(125000)
	r.s.RunUntil(sim.Time(10 * sim.Millisecond))
	h.NoteArrival(1500)
	const n = 20000
	gap := 10 * sim.Millisecond // wider than the 8 ms maximum: no clumping
	start := r.s.Now()
	for i := range n {
		r.at(start.Add(sim.Duration(i)*gap), uint64(i))
	}
	r.s.Run()
	holds := make([]sim.Duration, len(r.out))
	for i, o := range r.out {
		holds[i] = sim.Duration(o.at - start.Add(sim.Duration(i)*gap))
	}
	if len(holds) != n || st.AcksHeld != n {
		t.Fatalf("released %d, held %d; want %d", len(holds), st.AcksHeld, n)
	}
	if d := ksD(holds, q); d > ks1pct(n) {
		t.Errorf("hold distribution KS D = %.4f, want <= %.4f", d, ks1pct(n))
	}

	// A window below the threshold ends the holding.
	r.out = nil
	r.s.RunUntil(r.s.Now().Add(10 * sim.Millisecond))
	h.NoteArrival(1500)
	r.s.RunUntil(r.s.Now().Add(10 * sim.Millisecond))
	h.NoteArrival(1500)
	now := r.s.Now()
	r.at(now, 1)
	r.s.Run()
	if len(r.out) != 1 || r.out[0].at != now {
		t.Errorf("below saturation the ACK left at %v, want at once (%v)", r.out, now)
	}
}

// TestAckHoldOrder: a long hold releases the ACKs behind it as a clump,
// in order, each no earlier than its own draw.
func TestAckHoldOrder(t *testing.T) {
	r := newRig()
	q := Quantiles{sim.Millisecond, 30 * sim.Millisecond}
	var st Stats
	h := NewAckHold(r.s, r.pool, "ack_hold", AckHoldConfig{Quantiles: q, Threshold: 1, Window: sim.Millisecond,
		RNG: rand.New(rand.NewPCG(3, 4)), Stats: &st}, r)
	r.in = h
	h.NoteArrival(1500)
	r.s.RunUntil(sim.Time(sim.Millisecond))
	h.NoteArrival(1500)
	start := r.s.Now()
	for i := range 200 {
		r.at(start.Add(sim.Duration(i)*100*sim.Microsecond), uint64(i))
	}
	r.s.Run()
	clumped := 0
	for i, o := range r.out {
		if ack := r.pool.Get(o.id).Ack; ack != uint64(i) {
			t.Fatalf("ACK %d left in position %d", ack, i)
		}
		if sent := start.Add(sim.Duration(i) * 100 * sim.Microsecond); o.at < sent.Add(q[0]) {
			t.Errorf("ACK %d left %v after it was sent, below the minimum hold %v", i, o.at-sent, q[0])
		}
		if i > 0 && o.at == r.out[i-1].at {
			clumped++
		}
	}
	if clumped < 100 {
		t.Errorf("%d of 200 ACKs left together with the one before, want most (holds up to 30 ms, ACKs every 0.1 ms)", clumped)
	}
}

// TestGrantGaps: with ACKs always waiting, grants come a gap apart whose
// distribution is the profile's (KS at 1 %), each releasing PerGrant ACKs;
// the loss fraction is within 4 standard errors.
func TestGrantGaps(t *testing.T) {
	r := newRig()
	gap := Quantiles{sim.Millisecond, 2 * sim.Millisecond, 4 * sim.Millisecond, 8 * sim.Millisecond, 14 * sim.Millisecond}
	var st Stats
	const per, loss = 4, 0.01
	r.in = NewGrant(r.s, r.pool, "grant", GrantConfig{Gap: gap, PerGrant: per, Loss: loss,
		RNG: rand.New(rand.NewPCG(5, 6)), Stats: &st}, r)
	// An ACK every 100 µs: 40+ per 4 ms grant gap, far more than 4 per
	// grant, so the queue never empties.
	const n = 400000
	for i := range n {
		r.at(sim.Time(sim.Duration(i)*100*sim.Microsecond), uint64(i))
	}
	r.s.RunUntil(sim.Time(n * 100 * sim.Microsecond))
	var grants []sim.Time
	count := map[sim.Time]int{}
	for _, o := range r.out {
		if len(grants) == 0 || grants[len(grants)-1] != o.at {
			grants = append(grants, o.at)
		}
		count[o.at]++
	}
	gaps := make([]sim.Duration, 0, len(grants))
	for i := 1; i < len(grants); i++ {
		gaps = append(gaps, sim.Duration(grants[i]-grants[i-1]))
	}
	if len(gaps) < 5000 {
		t.Fatalf("only %d grant gaps", len(gaps))
	}
	if d := ksD(gaps, gap); d > ks1pct(len(gaps)) {
		t.Errorf("grant gap KS D = %.4f over %d gaps, want <= %.4f", d, len(gaps), ks1pct(len(gaps)))
	}
	for _, c := range count {
		if c > per {
			t.Fatalf("a grant released %d ACKs, more than %d", c, per)
		}
	}
	if released := uint64(len(r.out)) + st.AcksLost; released != st.Grants*per {
		t.Errorf("released %d (sent + lost) over %d grants, want %d each", released, st.Grants, per)
	}
	p := float64(st.AcksLost) / float64(st.Grants*per)
	if se := math.Sqrt(loss * (1 - loss) / float64(st.Grants*per)); math.Abs(p-loss) > 4*se {
		t.Errorf("ACK loss fraction %.5f, want %.3f ± %.5f (4 SE)", p, loss, 4*se)
	}
}

// TestGrantSlots: grants fall on the slot grid.
func TestGrantSlots(t *testing.T) {
	r := newRig()
	slot := 1333333 * sim.Picosecond
	var st Stats
	r.in = NewGrant(r.s, r.pool, "grant", GrantConfig{Gap: Quantiles{sim.Millisecond, 3 * sim.Millisecond}, PerGrant: 2,
		Slot: slot, RNG: rand.New(rand.NewPCG(7, 8)), Stats: &st}, r)
	for i := range 5000 {
		r.at(sim.Time(sim.Duration(i)*317*sim.Microsecond), uint64(i))
	}
	r.s.Run()
	for _, o := range r.out {
		if int64(o.at)%int64(slot) != 0 {
			t.Fatalf("a grant at %v is off the %v slot grid", o.at, slot)
		}
	}
	if len(r.out) != 5000 {
		t.Errorf("released %d of 5000 ACKs (no loss configured)", len(r.out))
	}
}

// TestGrantTie: an ACK queued at the very instant of a grant drawn before
// it waits for the next grant (the uplink builds a grant from what was
// queued before it); one whose own grant is drawn with a gap of zero
// leaves at once. Hand-worked with a fixed gap of 1 ms: a at 0 goes at
// 1 ms; b, queued at 1 ms as that grant fires, and c at 1.5 ms go at 2 ms.
func TestGrantTie(t *testing.T) {
	r := newRig()
	var st Stats
	r.in = NewGrant(r.s, r.pool, "grant", GrantConfig{Gap: Quantiles{sim.Millisecond, sim.Millisecond}, PerGrant: 10,
		RNG: rand.New(rand.NewPCG(1, 2)), Stats: &st}, r)
	r.at(0, 1)
	r.at(sim.Time(sim.Millisecond), 2) // queued before the grant's event at 1 ms runs
	r.at(sim.Time(1500*sim.Microsecond), 3)
	r.s.Run()
	want := []sim.Time{sim.Time(sim.Millisecond), sim.Time(2 * sim.Millisecond), sim.Time(2 * sim.Millisecond)}
	var got []sim.Time
	for _, o := range r.out {
		got = append(got, o.at)
	}
	if !slices.Equal(got, want) {
		t.Errorf("released at %v, want %v", got, want)
	}

	z := newRig()
	z.in = NewGrant(z.s, z.pool, "grant", GrantConfig{Gap: Quantiles{0, 0}, PerGrant: 10,
		RNG: rand.New(rand.NewPCG(1, 2)), Stats: &st}, z)
	z.at(sim.Time(5*sim.Millisecond), 1)
	z.s.Run()
	if len(z.out) != 1 || z.out[0].at != sim.Time(5*sim.Millisecond) {
		t.Errorf("with a gap of zero: released %v, want one ACK at 5ms", z.out)
	}
}

// TestGrantFilter: a pure cumulative ACK drops the queued pure ACKs it
// covers, and stops at one carrying SACK blocks or a different ECN echo.
func TestGrantFilter(t *testing.T) {
	r := newRig()
	var st Stats
	r.in = NewGrant(r.s, r.pool, "grant", GrantConfig{Gap: Quantiles{10 * sim.Millisecond, 10 * sim.Millisecond},
		PerGrant: 100, Filter: true, RNG: rand.New(rand.NewPCG(9, 10)), Stats: &st}, r)
	// arg: ACK number; 1000+: with a SACK block; 2000+: with ECE.
	r.make = func(p *packet.Packet, arg uint64) {
		switch {
		case arg >= 2000:
			p.Ack, p.Flags = arg-2000, packet.ACK|packet.ECE
		case arg >= 1000:
			p.Ack, p.NSack = arg-1000, 1
		}
	}
	for i, arg := range []uint64{1, 2, 3, 1004, 5, 6, 2007, 8} {
		r.at(sim.Time(sim.Duration(i)*sim.Microsecond), arg)
	}
	r.s.Run()
	var got []uint64
	for _, o := range r.out {
		got = append(got, r.pool.Get(o.id).Ack)
	}
	// 2 drops 1, 3 drops 2; 1004 carries SACK, so it drops nothing and
	// stops 5 from reaching 3; 6 drops 5; 2007's ECE differs from 6's and
	// from 8's, so both stay.
	want := []uint64{3, 4, 6, 7, 8}
	if !slices.Equal(got, want) {
		t.Errorf("after filtering the grant released ACKs %v, want %v", got, want)
	}
	if st.AcksFiltered != 3 {
		t.Errorf("filtered %d, want 3", st.AcksFiltered)
	}
}
