package sim

// Mark is a point in a simulation's registrations: how many handlers and
// timers it had. A component built between two marks owns the handlers and
// timers registered between them.
type Mark struct{ handlers, timers int32 }

// Mark returns the current registration point.
func (s *Sim) Mark() Mark { return Mark{int32(len(s.handlers)), int32(len(s.timers))} }

// Release retires what was registered between from and to, so that a
// finished component's memory can be reclaimed while the run goes on: its
// timers are stopped and dropped (their queued entries are skipped, never
// dispatched, as a stopped timer's are) and its handlers are replaced by
// one that ignores events, dropping the simulation's references to them.
// Events already scheduled for a released handler with Schedule are
// dispatched to nothing. A group of thousands of short flows releases each
// as it finishes, so what stays per finished flow is an index entry.
func (s *Sim) Release(from, to Mark) {
	if from.timers < to.timers && s.retired == nil {
		s.retired = &Timer{s: s, idx: -1, deadline: Never, pending: Never}
	}
	for i := from.timers; i < to.timers; i++ {
		s.timers[i] = s.retired
	}
	for i := from.handlers; i < to.handlers; i++ {
		s.handlers[i] = target{released{}, nil}
		s.names[i] = "released handler"
	}
}

// released is a retired handler.
type released struct{}

func (released) Handle(Event) {}
