package sim

// Mark is a point in a simulation's registrations: how many handlers and
// timers it had. A component built between two marks owns the handlers and
// timers registered between them.
type Mark struct{ handlers, timers int32 }

// Mark returns the current registration point.
func (s *Sim) Mark() Mark { return Mark{int32(len(s.handlers)), int32(len(s.timers))} }

// Release retires what was registered between from and to, so that a
// finished component's memory can be reclaimed while the run goes on: its
// timers are stopped (their queued entries are skipped, never dispatched)
// and its handlers are replaced by one that ignores events, dropping the
// simulation's references to them. Events already scheduled for a released
// handler with Schedule are dispatched to nothing.
func (s *Sim) Release(from, to Mark) {
	for i := from.timers; i < to.timers; i++ {
		s.timers[i].Stop()
	}
	for i := from.handlers; i < to.handlers; i++ {
		s.handlers[i] = target{released{}, nil}
		s.names[i] += " (released)"
	}
}

// released is a retired handler.
type released struct{}

func (released) Handle(Event) {}
