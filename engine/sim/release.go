package sim

// A component that finishes while the run goes on (a group's short flow)
// is registered as owned, and released when it finishes, so that the
// memory of a run follows the components alive at once rather than all
// it ever had: Own records the handlers and timers registered for it,
// Release retires them, and the next owned registrations take their slots.
//
// An owned handler is reached only through its timers; Schedule panics for
// one. Its timers' entries carry the timer's slot and generation, so an
// entry still queued when the slot is released is skipped, and one queued
// for a timer that has since taken the slot is too: that timer's
// generations continue the released one's.

// Owned is what one component registered between Own(o) and Own(nil).
type Owned struct{ handlers, timers []int32 }

// freeTimer is a released timer's slot and its last generation.
type freeTimer struct {
	idx int32
	gen uint32
}

// Own makes the handlers and timers registered from now on o's, until
// Own(nil).
func (s *Sim) Own(o *Owned) { s.owner = o }

// growOwnedBits keeps a bit for every handler slot.
func (s *Sim) growOwnedBits() {
	if len(s.handlers) > 64*len(s.ownedBits) {
		s.ownedBits = append(s.ownedBits, 0)
	}
}

// owned reports whether handler i belongs to a component that may be
// released.
func (s *Sim) owned(i int32) bool { return s.ownedBits[uint32(i)>>6]>>(i&63)&1 != 0 }

// registerOwned is Register for the owner: in a released slot if there is
// one.
func (s *Sim) registerOwned(t target, name string) int32 {
	var i int32
	if n := len(s.freeSlots); n > 0 {
		i = s.freeSlots[n-1]
		s.freeSlots = s.freeSlots[:n-1]
		s.handlers[i], s.names[i] = t, name
	} else {
		i = int32(len(s.handlers))
		s.handlers = append(s.handlers, t)
		s.names = append(s.names, name)
		s.growOwnedBits()
	}
	s.ownedBits[i>>6] |= 1 << (i & 63)
	s.firstOwned = min(s.firstOwned, i)
	s.owner.handlers = append(s.owner.handlers, i)
	return i
}

// ownTimer is NewTimer for the owner: in a released slot if there is one.
func (s *Sim) ownTimer(t *Timer) {
	if n := len(s.freeTimers); n > 0 {
		f := s.freeTimers[n-1]
		s.freeTimers = s.freeTimers[:n-1]
		t.idx, t.gen = f.idx, f.gen+1 // above every generation the slot has queued
		s.timers[f.idx] = t
	} else {
		s.timers = append(s.timers, t)
	}
	s.owner.timers = append(s.owner.timers, t.idx)
}

// Release retires what o registered, so that a finished component's memory
// can be reclaimed while the run goes on: its timers are stopped and
// dropped (their queued entries are skipped, never dispatched, as a
// stopped timer's are) and its handlers are replaced by one that ignores
// events, dropping the simulation's references to them. Their slots go to
// the next owned registrations. A group of thousands of short flows
// releases each as it finishes, so what the simulation keeps of a finished
// flow is nothing.
func (s *Sim) Release(o *Owned) {
	if len(o.timers) > 0 && s.retired == nil {
		s.retired = &Timer{s: s, idx: -1, deadline: Never, pending: Never}
	}
	for _, i := range o.timers {
		s.freeTimers = append(s.freeTimers, freeTimer{i, s.timers[i].gen})
		s.timers[i] = s.retired
	}
	for _, i := range o.handlers {
		s.handlers[i] = target{released{}, nil}
		s.names[i] = "released handler"
		s.freeSlots = append(s.freeSlots, i)
	}
	*o = Owned{}
}

// released is a retired handler.
type released struct{}

func (released) Handle(Event) {}
