package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type recorder struct {
	s   *Sim
	got []Event
}

func (r *recorder) Handle(ev Event) { r.got = append(r.got, ev) }

// Events pop in time order and, among equal times, in the order scheduled:
// the queue must agree with a stable sort of the schedule by time.
func TestQueueOrderMatchesStableSort(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	rnd := rand.New(rand.NewPCG(1, 2))
	type item struct {
		at  Time
		arg uint64
	}
	var want []item
	for i := 0; i < 5000; i++ {
		it := item{Time(rnd.IntN(300)), uint64(i)}
		want = append(want, it)
		s.Schedule(it.at, h, 1, it.arg)
	}
	slices.SortStableFunc(want, func(a, b item) int { return int(a.at - b.at) })
	s.Run()
	if len(r.got) != len(want) {
		t.Fatalf("dispatched %d events, want %d", len(r.got), len(want))
	}
	for i, ev := range r.got {
		if ev.At != want[i].at || ev.Arg != want[i].arg {
			t.Fatalf("event %d = (%v, %d), want (%v, %d)", i, ev.At, ev.Arg, want[i].at, want[i].arg)
		}
	}
}

// chain schedules new events from inside handlers, as the engine does:
// each dispatched event queues a few more at now or a random delay ahead,
// over a range of scales (picoseconds to seconds).
type chain struct {
	s    *Sim
	h    int32
	rnd  *rand.Rand
	next uint64
	got  []Event
	left int
	// mode is the queue's store at the last event (0 the sorted array, 1
	// the heap, 2 the wheel); switches counts the changes seen, from, to.
	mode     int
	switches [3][3]int
}

func (q *queue) mode() int {
	switch {
	case q.inWheel:
		return 2
	case q.inHeap:
		return 1
	}
	return 0
}

func (c *chain) Handle(ev Event) {
	c.got = append(c.got, ev)
	if m := c.s.q.mode(); m != c.mode {
		c.switches[c.mode][m]++
		c.mode = m
	}
	// Phases of growth and decline, so the pending count crosses the
	// queue's switches between its heap and its wheel both ways.
	children := c.rnd.IntN(4)
	if len(c.got)/1200%2 == 1 {
		children = c.rnd.IntN(2)
	}
	for range children {
		if c.left == 0 {
			return
		}
		c.left--
		var d Duration
		if c.rnd.IntN(4) > 0 {
			d = Duration(c.rnd.Int64N(1 << c.rnd.IntN(42)))
		}
		c.next++
		c.s.Schedule(c.s.Now().Add(d), c.h, 1, c.next)
	}
}

// Events queued while the simulation runs, at the current time or any
// distance ahead, come out in (time, scheduling order): the order a stable
// sort of all of them by time gives, whichever store holds them as the
// pending count rises and falls through the queue's switches.
func TestQueueOrderWhileRunning(t *testing.T) {
	var switches [3][3]int
	defer func() {
		for _, sw := range [][2]int{{0, 1}, {1, 2}, {2, 1}, {1, 0}} {
			if switches[sw[0]][sw[1]] == 0 {
				t.Errorf("the queue never switched from store %d to %d: the test does not cover it", sw[0], sw[1])
			}
		}
	}()
	for seed := range uint64(20) {
		s := New()
		c := &chain{s: s, rnd: rand.New(rand.NewPCG(seed, 3)), left: 20000}
		c.h = s.Register(c, "chain")
		for range 50 {
			c.next++
			s.Schedule(Time(c.rnd.Int64N(1<<30)), c.h, 1, c.next)
		}
		s.Run()
		for i := range switches {
			for j := range switches[i] {
				switches[i][j] += c.switches[i][j]
			}
		}
		if len(c.got) != int(c.next) {
			t.Fatalf("seed %d: dispatched %d events, scheduled %d", seed, len(c.got), c.next)
		}
		// Reference: scheduling order is Arg; stable-sort by time.
		want := slices.Clone(c.got)
		slices.SortStableFunc(want, func(a, b Event) int {
			if a.At != b.At {
				return cmp.Compare(a.At, b.At)
			}
			return cmp.Compare(a.Arg, b.Arg)
		})
		for i := range want {
			if c.got[i].At != want[i].At || c.got[i].Arg != want[i].Arg {
				t.Fatalf("seed %d: event %d = (%v, %d), want (%v, %d)", seed, i, c.got[i].At, c.got[i].Arg, want[i].At, want[i].Arg)
			}
		}
	}
}

// A driver that stops the run at arbitrary times (RunUntil, StepUntil) and
// queues events between stops, as the server does, still gets every event
// exactly once, in (time, scheduling order), none past a stop's limit and
// none left behind at or before it.
func TestQueueOrderAcrossStops(t *testing.T) {
	for seed := range uint64(20) {
		s := New()
		c := &chain{s: s, rnd: rand.New(rand.NewPCG(seed, 4)), left: 20000}
		c.h = s.Register(c, "chain")
		for round := 0; s.Pending() > 0 || round < 50; round++ {
			for range c.rnd.IntN(4) {
				c.next++
				s.Schedule(s.Now().Add(Duration(c.rnd.Int64N(1<<c.rnd.IntN(40)))), c.h, 1, c.next)
			}
			from := len(c.got)
			limit := s.Now().Add(Duration(c.rnd.Int64N(1 << c.rnd.IntN(40))))
			if c.rnd.IntN(2) == 0 {
				s.StepUntil(uint64(c.rnd.IntN(50)), limit)
			} else {
				s.RunUntil(limit)
				if s.Pending() > 0 && s.NextAt() <= limit {
					t.Fatalf("seed %d: RunUntil(%v) left an event at %v", seed, limit, s.NextAt())
				}
			}
			for _, ev := range c.got[from:] {
				if ev.At > limit {
					t.Fatalf("seed %d: event at %v dispatched by a stop at %v", seed, ev.At, limit)
				}
			}
		}
		if len(c.got) != int(c.next) {
			t.Fatalf("seed %d: dispatched %d events, scheduled %d", seed, len(c.got), c.next)
		}
		for i := 1; i < len(c.got); i++ {
			a, b := c.got[i-1], c.got[i]
			if b.At < a.At || b.At == a.At && b.Arg < a.Arg {
				t.Fatalf("seed %d: event %d (%v, %d) after (%v, %d)", seed, i, b.At, b.Arg, a.At, a.Arg)
			}
		}
	}
}

func TestTimerRearmAndStop(t *testing.T) {
	cases := []struct {
		name string
		ops  func(tm *Timer, s *Sim)
		want []Time
	}{
		{"fires once at deadline", func(tm *Timer, s *Sim) { tm.Arm(100) }, []Time{100}},
		{"re-armed later fires at the later time only", func(tm *Timer, s *Sim) { tm.Arm(100); tm.Arm(250) }, []Time{250}},
		{"re-armed earlier fires at the earlier time only", func(tm *Timer, s *Sim) { tm.Arm(250); tm.Arm(100) }, []Time{100}},
		{"stopped never fires", func(tm *Timer, s *Sim) { tm.Arm(100); tm.Stop() }, nil},
		{"stop then re-arm", func(tm *Timer, s *Sim) { tm.Arm(100); tm.Stop(); tm.Arm(300) }, []Time{300}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			r := &recorder{s: s}
			h := s.Register(r, "rec")
			tm := s.NewTimer(h, 7)
			c.ops(tm, s)
			s.Run()
			var got []Time
			for _, ev := range r.got {
				got = append(got, ev.At)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("fired at %v, want %v", got, c.want)
			}
			if s.Events() != uint64(len(c.want)) {
				t.Errorf("Events() = %d, want %d (stale entries must not count)", s.Events(), len(c.want))
			}
		})
	}
}

// A timer re-armed on every event to a later deadline keeps one queue entry,
// however often it is re-armed (the kernel's sk_reset_timer pattern).
func TestTimerRearmKeepsQueueSmall(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	tm := s.NewTimer(h, 1)
	for i := 1; i <= 1000; i++ {
		tm.Arm(Time(1000 + i))
	}
	if s.Pending() != 1 {
		t.Errorf("Pending() = %d after 1000 later re-arms, want 1", s.Pending())
	}
}

func TestRunUntilAndStep(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	for _, at := range []Time{10, 20, 20, 30} {
		s.Schedule(at, h, 1, 0)
	}
	s.RunUntil(20)
	if len(r.got) != 3 || s.Now() != 20 {
		t.Errorf("RunUntil(20) dispatched %d events, now %v; want 3 and 20", len(r.got), s.Now())
	}
	s.RunUntil(25)
	if s.Now() != 25 {
		t.Errorf("RunUntil(25) left now at %v, want 25", s.Now())
	}
	if n := s.Step(5); n != 1 || s.Now() != 30 {
		t.Errorf("Step(5) = %d at %v, want 1 at 30", n, s.Now())
	}
}

func TestSchedulingInThePastPanics(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	s.RunUntil(100)
	defer func() {
		if recover() == nil {
			t.Errorf("Schedule(50) at time 100 did not panic")
		}
	}()
	s.Schedule(50, h, 1, 0)
}

// BenchmarkQueue measures pop+push at a steady number of pending entries
// (the hold model): 8, the regime of a one-flow path (the sorted array),
// 64, a few flows' (the heap), and 4096, that of a 1,024-flow dumbbell (a
// link direction or timer per entry: the wheel). Each popped
// event is queued again ahead by a delay drawn like the engine's: a
// serialisation time, an access or bottleneck propagation delay, or a
// retransmission timeout.
func BenchmarkQueue(b *testing.B) {
	ahead := []Duration{1200 * Nanosecond, Millisecond, 13 * Millisecond, 200 * Millisecond}
	for _, size := range []int{8, 64, 4096} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			var q queue
			rnd := rand.New(rand.NewPCG(1, 1))
			var seq uint64
			for range size {
				seq++
				q.push(Event{At: Time(rnd.Int64N(int64(13 * Millisecond))), seq: seq << 1}, 0)
			}
			b.ReportAllocs()
			for b.Loop() {
				e, _ := q.popBy(Never)
				now := e.At
				seq++
				e.At = e.At.Add(ahead[rnd.IntN(len(ahead))] + Duration(rnd.IntN(1000)))
				e.seq = seq << 1
				q.push(e, now)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkDigestFold measures the digest's cost per dispatched event; the
// engine keeps it always on, so it must stay a few percent of an event's
// cost (compare with the ns/event of BenchmarkPump1G in package engine:
// 1e9 / events/s). 1024 folds per iteration amortise the loop.
func BenchmarkDigestFold(b *testing.B) {
	s := New()
	ev := Event{At: 12345, Arg: 99, addr: addr{Target: 3, Kind: 2}}
	for b.Loop() {
		for i := 0; i < 1024; i++ {
			ev.At++
			s.fold(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/event")
}

// Run leaves the clock at the last event dispatched (a driver may schedule
// more after it), where RunUntil(t) moves it on to t.
func TestRunLeavesClockAtLastEvent(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	s.Schedule(Time(5*Microsecond), h, 1, 0)
	s.Run()
	if s.Now() != Time(5*Microsecond) {
		t.Fatalf("after Run the clock is %v, want 5us", s.Now())
	}
	s.Schedule(Time(7*Microsecond), h, 1, 0) // not in the past
	s.RunUntil(Time(Millisecond))
	if s.Now() != Time(Millisecond) || len(r.got) != 2 {
		t.Fatalf("after RunUntil(1ms) the clock is %v with %d events, want 1ms with 2", s.Now(), len(r.got))
	}
}

// clumper is a handler whose events come in clumps at one instant: each
// queues a follow-on for now, as a link direction queues the next arrival
// on its wire, and some more events at now or later. With claim it takes
// the follow-on on itself where Sim.Claim lets it, and handles it once the
// rest of its work is done.
type clumper struct {
	s     *Sim
	h     int32
	rnd   *rand.Rand
	claim bool
	left  int // events it may still queue besides follow-ons
	most  int // while fewer than most are pending
	// pending counts its events queued or claimed and not yet handled:
	// Sim.Pending leaves out the claimed one, so the two runs would part.
	pending int
	got     []Event
	// claims, by the queue's store then (Claim reads each), and refusals.
	claims   [3]int
	refusals int
}

func (c *clumper) Handle(ev Event) {
	for {
		c.got = append(c.got, Event{At: ev.At, Arg: ev.Arg, addr: ev.addr})
		c.pending--
		follow := c.left > 0 && c.rnd.IntN(4) != 0
		claimed := follow && c.claim && c.s.Claim()
		if follow && c.claim {
			if claimed {
				c.claims[c.s.q.mode()]++
			} else {
				c.refusals++
			}
		}
		if follow {
			c.pending++
			if !claimed {
				c.s.Schedule(c.s.Now(), c.h, 1, ev.Arg+1)
			}
		}
		for range c.rnd.IntN(3) { // up to two more
			if c.left > 0 && c.pending < c.most {
				c.left--
				c.pending++
				at := c.s.Now() // at times now: then Claim refuses
				if c.rnd.IntN(8) != 0 {
					at += Time(c.rnd.IntN(1000))
				}
				c.s.Schedule(at, c.h, Kind(2+c.rnd.IntN(2)), uint64(c.rnd.Uint32()))
			}
		}
		if !claimed {
			return
		}
		c.s.Claimed(c.h, 1, ev.Arg+1)
		ev = Event{At: c.s.Now(), Arg: ev.Arg + 1, addr: addr{c.h, 1}}
	}
}

// A handler that claims the events it would queue for now dispatches the
// same events in the same order, with the same count and digest, as one
// that queues them, whether few events are pending (the sorted array) or
// thousands (the wheel); and StepUntil, which counts events out one by
// one, lets nothing be claimed.
func TestClaimKeepsTheSequence(t *testing.T) {
	for _, tc := range []struct {
		name         string
		starts, most int
		mode         int // the queue's store most claims must meet
	}{
		{"few pending", 4, 6, 0},
		{"many pending", 50, 1 << 20, 2},
	} {
		run := func(claim, step bool) (*Sim, *clumper) {
			s := New()
			c := &clumper{s: s, rnd: rand.New(rand.NewPCG(7, 8)), claim: claim, left: 20000,
				most: tc.most}
			c.h = s.Register(c, "clumper")
			for i := range tc.starts {
				s.Schedule(Time(i*100), c.h, 1, uint64(i)<<32)
			}
			c.pending = tc.starts
			if step {
				for s.Step(1) == 1 {
				}
			} else {
				s.Run()
			}
			return s, c
		}
		qs, q := run(false, false)
		for _, step := range []bool{false, true} {
			cs, c := run(true, step)
			if cs.Events() != qs.Events() || cs.Digest() != qs.Digest() {
				t.Errorf("%s, step %v: claiming gives %d events, digest %x; queueing %d, %x",
					tc.name, step, cs.Events(), cs.Digest(), qs.Events(), qs.Digest())
			}
			if !slices.Equal(c.got, q.got) {
				t.Errorf("%s, step %v: claiming handles the events in another order", tc.name, step)
			}
			claims := c.claims[0] + c.claims[1] + c.claims[2]
			switch {
			case step && claims != 0:
				t.Errorf("%s: StepUntil let %d events be claimed", tc.name, claims)
			case !step && (c.claims[tc.mode] < 1000 || c.refusals < 100):
				t.Errorf("%s: claims %v (sorted array, heap, wheel) and %d refusals: too few to mean anything",
					tc.name, c.claims, c.refusals)
			}
		}
	}
}

// Claim refuses while an event is queued for now, which would come first.
func TestClaimRefusesWhenSomethingIsDueNow(t *testing.T) {
	s := New()
	r := &recorder{s: s}
	h := s.Register(r, "rec")
	s.RunUntil(10)
	s.Schedule(10, h, 1, 0)
	if s.Claim() {
		t.Errorf("Claim with an event queued for now: true, want false")
	}
	s.Run()
	s.Schedule(11, h, 1, 0)
	if !s.Claim() {
		t.Errorf("Claim with only a later event queued: false, want true")
	}
}
