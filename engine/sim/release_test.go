package sim

import (
	"runtime"
	"testing"
	"weak"
)

type countHandler struct{ n int }

func (c *countHandler) Handle(Event) { c.n++ }

// A released component's timers never fire and its scheduled events reach
// nothing; components registered after it are untouched.
func TestRelease(t *testing.T) {
	s := New()
	a, b := &countHandler{}, &countHandler{}
	from := s.Mark()
	ai := s.Register(a, "a")
	at := s.NewTimer(ai, 1)
	to := s.Mark()
	bi := s.Register(b, "b")
	bt := s.NewTimer(bi, 1)
	at.Arm(10)
	bt.Arm(10)
	s.Schedule(5, ai, 2, 0)
	s.Release(from, to)
	s.Run()
	if a.n != 0 || b.n != 1 {
		t.Errorf("events at released a, live b = %d, %d; want 0, 1", a.n, b.n)
	}
	if s.Events() != 2 {
		t.Errorf("dispatched %d events, want 2 (b's timer and the event scheduled for a)", s.Events())
	}
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
	from := s.Mark()
	h := &hintHandler{}
	hi := s.Register(h, "h")
	// Enough events for the queue's wheel, which hints.
	for i := range wheelAbove + 1 {
		s.Schedule(Time(5+i), hi, 1, 0)
	}
	s.StepUntil(1, 5)
	if h.hints == 0 {
		t.Fatalf("the handler got no hint of its events")
	}
	tm := s.NewTimer(hi, 2)
	tm.Arm(1000)
	w, wt := weak.Make(h), weak.Make(tm)
	s.Release(from, s.Mark())
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
