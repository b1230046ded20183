package sim

import "testing"

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
