package sim

import (
	"runtime"
	"strings"
	"testing"
	"weak"
)

type countHandler struct{ n int }

func (c *countHandler) Handle(Event) { c.n++ }

// A released component's timers never fire; components registered after
// it are untouched.
func TestRelease(t *testing.T) {
	s := New()
	a, b := &countHandler{}, &countHandler{}
	var own Owned
	s.Own(&own)
	ai := s.Register(a, "a")
	at := s.NewTimer(ai, 1)
	s.Own(nil)
	bi := s.Register(b, "b")
	bt := s.NewTimer(bi, 1)
	at.Arm(10)
	bt.Arm(10)
	s.Release(&own)
	s.Run()
	if a.n != 0 || b.n != 1 {
		t.Errorf("events at released a, live b = %d, %d; want 0, 1", a.n, b.n)
	}
	if s.Events() != 1 {
		t.Errorf("dispatched %d events, want 1 (b's timer)", s.Events())
	}
}

// The next owned component takes a released one's slots. The released
// timer's entries still queued, live or gone stale, never reach it: its
// timer fires once, at its own deadline, and its handler sees nothing else.
func TestReleasedSlotsReused(t *testing.T) {
	s := New()
	var first, second Owned
	s.Own(&first)
	a := &countHandler{}
	ai := s.Register(a, "a")
	at := s.NewTimer(ai, 1)
	s.Own(nil)
	at.Arm(30)
	at.Arm(10) // the entry at 30 goes stale; the live one is at 10
	s.Release(&first)

	s.Own(&second)
	b := &countHandler{}
	bi := s.Register(b, "b")
	bt := s.NewTimer(bi, 1)
	s.Own(nil)
	if bi != ai || bt.idx != at.idx {
		t.Fatalf("second component at handler %d, timer %d; want the released %d, %d", bi, bt.idx, ai, at.idx)
	}
	bt.Arm(20)
	var fired []Time
	for s.Pending() > 0 {
		before := b.n
		s.Step(1)
		if b.n > before {
			fired = append(fired, s.Now())
		}
	}
	if a.n != 0 || len(fired) != 1 || fired[0] != 20 {
		t.Errorf("released a got %d events, b fired at %v; want 0 and [20]", a.n, fired)
	}
}

// An owned handler is reached only through its timers: Schedule refuses it,
// as an event queued for it could reach the component that takes its slot.
func TestScheduleForOwnedPanics(t *testing.T) {
	s := New()
	var own Owned
	s.Own(&own)
	ai := s.Register(&countHandler{}, "flow end")
	s.Own(nil)
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), "flow end") {
			t.Errorf("Schedule for an owned handler: panic %v, want one naming it", p)
		}
	}()
	s.Schedule(5, ai, 2, 0)
}

type hintHandler struct {
	countHandler
	hints int
}

func (h *hintHandler) Hint(Event) { h.hints++ }

// Once released, a component is unreachable from the simulation, hints
// and timers included: the garbage collector reclaims it while the run
// goes on.
func TestReleaseDropsReferences(t *testing.T) {
	s := New()
	var own Owned
	s.Own(&own)
	h := &hintHandler{}
	tm := s.NewTimer(s.Register(h, "h"), 2)
	s.Own(nil)
	// Enough events for the queue's wheel, which hints: the timer's entries
	// (each re-arm earlier than the last queues one) and another handler's.
	other := s.Register(&countHandler{}, "other")
	for i := range wheelAbove + 1 {
		s.Schedule(Time(5+i), other, 1, 0)
	}
	for i := wheelAbove + 1; i > 0; i-- {
		tm.Arm(Time(5 + i))
	}
	s.StepUntil(1, 5)
	if h.hints == 0 {
		t.Fatalf("the handler got no hint of its events")
	}
	tm.Arm(1000)
	w, wt := weak.Make(h), weak.Make(tm)
	s.Release(&own)
	h, tm = nil, nil
	runtime.GC()
	if w.Value() != nil {
		t.Errorf("a released handler is still reachable from the simulation")
	}
	if wt.Value() != nil {
		t.Errorf("a released timer is still reachable from the simulation")
	}
	s.Run()
}
