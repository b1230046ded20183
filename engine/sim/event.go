package sim

// Kind identifies what an event means to its target handler.
type Kind uint8

// Event is one scheduled occurrence. Events are small values so the queue
// never boxes them and the hot loop does not allocate.
// An Event is 32 bytes: the timer flag rides in seq's low bit, and a timer
// entry's Arg packs the timer's index and generation.
//
// It has four fields, Target and Kind sharing one: the compiler keeps a
// struct of at most four fields in registers, where a fifth makes every
// pass by value a spill to the stack and a 16-byte reload of it, which
// stalls on store forwarding (BenchmarkQueue: 49 → 42 ns an event with 8
// pending, 163 → 130 with 4,096).
type Event struct {
	At   Time
	seq  uint64 // insertion sequence << 1 | 1 if a Timer owns the entry
	Arg  uint64 // handler-defined: a packet index, ...; for timers idx | gen<<32
	addr        // Target and Kind
}

// addr is whom an event is for and what it means to them.
type addr struct {
	Target int32 // index of the handler, from Sim.Register
	Kind   Kind  // meaning for the handler
}

func (e *Event) less(f *Event) bool {
	return e.At < f.At || e.At == f.At && e.seq < f.seq
}
