package sim

import (
	"fmt"
	"math"
	"math/bits"
)

// Handler receives the events scheduled for it.
type Handler interface {
	Handle(ev Event)
}

// Hinter is a handler that wants to hear of its events a few microseconds
// ahead, to prefetch what they will touch (a packet that has been on a wire
// for milliseconds, its own state). Hint must change nothing a run
// computes: it is called when the queue reaches the events' bucket, and
// the digest and every result are the same with hints or without.
type Hinter interface {
	Hint(ev Event)
}

// Sim is one run's clock, event queue and digest. It is not safe for
// concurrent use: a run is single-threaded by design.
type Sim struct {
	now      Time
	seq      uint64
	events   uint64
	digest   uint64
	q        queue
	handlers []target // by index, from Register
	names    []string
	timers   []*Timer
	retired  *Timer // stands for every released timer: never armed, so never due
	counting bool   // StepUntil is dispatching a number of events: no Claim

	// Components that may be released (release.go): what is being
	// registered for one, which handlers belong to one (a bit each, from
	// the lowest such handler on: the links and other components built
	// before a run's first owned one are below it, and Schedule tells them
	// apart with one comparison), and the slots released ones left for
	// the next to take.
	owner      *Owned
	firstOwned int32
	ownedBits  []uint64
	freeSlots  []int32
	freeTimers []freeTimer
}

// target is a registered handler and its Hinter (nil if it takes no
// hints), side by side: the hint of a bucket's event brings in the line
// its dispatch reads a few microseconds later.
type target struct {
	h    Handler
	hint Hinter
}

// New returns an empty simulation at time zero.
func New() *Sim { return &Sim{digest: digestSeed, firstOwned: math.MaxInt32} }

// Register adds a handler and returns the index events use to target it.
// name identifies it in panics.
func (s *Sim) Register(h Handler, name string) int32 {
	hi, _ := h.(Hinter)
	if s.owner != nil {
		return s.registerOwned(target{h, hi}, name)
	}
	s.handlers = append(s.handlers, target{h, hi})
	s.names = append(s.names, name)
	s.growOwnedBits()
	return int32(len(s.handlers) - 1)
}

// Now is the current simulated time.
func (s *Sim) Now() Time { return s.now }

// Events is the number of events dispatched so far.
func (s *Sim) Events() uint64 { return s.events }

// Digest is the hash folded over every dispatched event so far. Equal digests
// mean equal runs.
func (s *Sim) Digest() uint64 { return s.digest }

// Pending is the number of entries in the event queue.
func (s *Sim) Pending() int { return s.q.len() }

// NextAt is the time of the next queued entry, or Never. A stale timer entry
// may make it earlier than the next dispatched event.
func (s *Sim) NextAt() Time {
	if s.q.len() == 0 {
		return Never
	}
	return s.q.minAt()
}

// Schedule queues an event of kind for target at time at, carrying arg.
// Scheduling in the past is a broken invariant and panics.
func (s *Sim) Schedule(at Time, target int32, kind Kind, arg uint64) {
	if at < s.now || target >= s.firstOwned && s.owned(target) {
		s.schedulePanic(at, target, kind)
	}
	s.seq++
	e := Event{At: at, seq: s.seq << 1, Arg: arg, addr: addr{target, kind}}
	switch {
	case !s.q.inHeap:
		s.q.pushFew(e)
	case s.q.inWheel:
		s.q.big.push(e)
	default:
		s.q.pushMany(e, s.now)
	}
}

// schedulePanic is Schedule's panic, out of line so that Schedule stays
// small.
func (s *Sim) schedulePanic(at Time, target int32, kind Kind) {
	if at < s.now {
		panic(fmt.Sprintf("sim: %s schedules kind %d at %v, before now %v", s.names[target], kind, at, s.now))
	}
	panic(fmt.Sprintf("sim: kind %d scheduled for %s, a component that may be released: use a timer", kind, s.names[target]))
}

// Claim reports whether an event the running handler would schedule for
// now would be the next one dispatched after it returns: nothing is queued
// for now (an entry queued earlier would come first; what the handler
// queues from here on comes after), and StepUntil is not counting events
// out. If so, Claim takes the event's place in the sequence, and the
// handler, having finished its work, dispatches the event itself with
// Claimed instead of queueing it: the same events in the same order, one
// push and pop fewer. A link direction whose packets arrive in clumps
// (jitter in fifo order, subframe boundaries) delivers a clump so.
func (s *Sim) Claim() bool {
	if s.counting || s.NextAt() <= s.now {
		return false
	}
	s.seq++
	return true
}

// Claimed dispatches, now, the event a handler claimed (Claim): it is
// counted and folded into the digest as a queued event would be; the
// caller handles it.
func (s *Sim) Claimed(target int32, kind Kind, arg uint64) {
	s.events++
	s.fold(Event{At: s.now, Arg: arg, addr: addr{target, kind}})
}

// Step dispatches at most n events and reports how many it dispatched.
func (s *Sim) Step(n uint64) uint64 { return s.StepUntil(n, Never) }

// StepUntil dispatches at most n events, none later than limit, and reports
// how many it dispatched. Stale timer entries it pops along the way do not
// count, and never let it pass limit.
func (s *Sim) StepUntil(n uint64, limit Time) uint64 {
	s.counting = true
	defer func() { s.counting = false }()
	var done uint64
	for done < n {
		ev, ok := s.q.popBy(limit)
		if !ok {
			break
		}
		if s.dispatch(ev) {
			done++
		}
	}
	return done
}

// RunUntil dispatches every event at or before t, then sets the clock to t.
func (s *Sim) RunUntil(t Time) {
	s.runBy(t)
	if t > s.now {
		s.now = t
	}
}

// Run dispatches events until the queue is empty; the clock stays at the
// last event.
func (s *Sim) Run() { s.runBy(Never) }

// runBy dispatches every event at or before t. While the queue is the
// sorted array (a path or two) it pops and dispatches inline; runMany
// serves the heap and the wheel.
func (s *Sim) runBy(t Time) {
	for {
		if s.q.inHeap {
			if !s.runMany(t) {
				return
			}
			continue
		}
		ev, ok := s.q.popFew(t)
		if !ok {
			return
		}
		// dispatch, inlined for an event that is not a timer entry.
		if ev.seq&1 != 0 {
			s.dispatch(ev)
			continue
		}
		s.now = ev.At
		s.events++
		s.fold(ev)
		s.handlers[ev.Target].h.Handle(ev)
	}
}

// runMany dispatches the events due by t from the heap or the wheel until
// the queue moves back to the sorted array (true) or none is due (false).
func (s *Sim) runMany(t Time) bool {
	for s.q.inHeap {
		if s.q.inWheel {
			if !s.runWheel(t) {
				return false
			}
			continue
		}
		ev, ok := s.q.popBy(t)
		if !ok {
			return false
		}
		s.dispatch(ev)
	}
	return true
}

// runWheel dispatches the events due by t from the wheel until the queue
// moves back to the heap (true) or none is due (false). It is popBy and
// dispatch in one loop: with hundreds of flows every event comes through
// here, and the calls and copies of the general path cost about a hundred
// instructions an event (cachegrind, 1,024-flow dumbbell).
func (s *Sim) runWheel(t Time) bool {
	w := s.q.big
	for {
		if w.head == len(w.cur) {
			if !w.loadBy(t) {
				return false
			}
			s.hint()
		}
		e := w.cur[w.head]
		if e.At > t {
			return false
		}
		w.head++
		w.n--
		if w.n < heapBelow {
			w.drain(&s.q.small)
			s.q.inWheel = false
			s.dispatch(e)
			return true
		}
		s.now = e.At
		if e.seq&1 != 0 && !s.timers[uint32(e.Arg)].due(e) {
			continue
		}
		s.events++
		s.fold(e)
		s.handlers[e.Target].h.Handle(e)
	}
}

// hint tells the hinters of the events of the bucket the queue has just
// reached.
func (s *Sim) hint() {
	for _, ev := range s.q.hints() {
		if h := s.handlers[ev.Target].hint; h != nil {
			h.Hint(ev)
		}
	}
}

// dispatch advances the clock to a popped entry and dispatches it unless it
// is a stale or deferred timer entry. It reports whether an event was
// dispatched.
func (s *Sim) dispatch(ev Event) bool {
	if s.q.inWheel {
		s.hint()
	}
	s.now = ev.At
	if ev.seq&1 != 0 && !s.timers[uint32(ev.Arg)].due(ev) {
		return false
	}
	s.events++
	s.fold(ev)
	s.handlers[ev.Target].h.Handle(ev)
	return true
}

const (
	digestSeed = 0x9e3779b97f4a7c15
	digestMul  = 0xbf58476d1ce4e5b9
)

// fold mixes an event's time, target, kind and argument into the digest
// with one multiply-rotate round: the digest is a fingerprint of the event
// sequence, cheap enough to be always on.
func (s *Sim) fold(ev Event) {
	x := uint64(ev.At) ^ bits.RotateLeft64(ev.Arg, 32) ^ uint64(ev.Target)<<8 ^ uint64(ev.Kind)
	s.digest = bits.RotateLeft64((s.digest^x)*digestMul, 29)
}
