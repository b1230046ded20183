package sim

import "slices"

// queue holds the pending events ordered by (At, seq), in the store that
// suits their number: a sorted array while very few are pending (a path
// or two: a handful of link directions and timers), a 4-ary heap while
// some are, a calendar queue once more than 64 are (a few flows on), whose
// cost per event does not grow with their number. The heap's band is
// narrow: at 32 flows on a 10 Gbps dumbbell (never 512 pending, so all in
// the heap while that was the threshold) its sifts cost 676 instructions
// and 8 branch mispredictions an event where the wheel costs 270 and 2
// (cachegrind). All give the same order, so
// a switch changes nothing a run computes; the gap between each pair of
// thresholds keeps a run near one from switching back and forth.
type queue struct {
	few     []Event // sorted latest first: the next event is the last
	small   heap4
	big     *wheel // allocated at the first switch
	inHeap  bool   // in the heap or the wheel
	inWheel bool
}

const (
	heapAbove  = 32 // from the sorted array to the heap when it holds more
	fewBelow   = 8  // back to the sorted array when the heap holds fewer
	wheelAbove = 64 // to the wheel when the heap holds more
	heapBelow  = 32 // back to the heap when the wheel holds fewer
)

func (q *queue) len() int {
	switch {
	case q.inWheel:
		return q.big.n
	case q.inHeap:
		return q.small.len()
	}
	return len(q.few)
}

// push queues e at the simulation's time now (nothing is queued before
// now).
func (q *queue) push(e Event, now Time) {
	if !q.inHeap {
		q.pushFew(e)
		return
	}
	q.pushMany(e, now)
}

// pushMany is push to the heap or the wheel.
func (q *queue) pushMany(e Event, now Time) {
	if q.inWheel {
		q.big.push(e)
		return
	}
	q.small.push(e)
	if len(q.small.ev) > wheelAbove {
		q.toWheel(now)
	}
}

// pushFew inserts e into the sorted array, which is kept latest first so
// that a pop takes its last event and moves nothing. A new event usually
// goes behind few of those pending (most are timers and arrivals due
// later), so it is appended and moved past the ones due before it, an
// insertion sort's step: with a handful pending that costs less than a
// heap's sift. e is the latest queued (its seq the highest), so it goes
// behind every event at its time: one comparison of times decides, where
// less would compare the times twice and then the sequences.
func (q *queue) pushFew(e Event) {
	q.few = append(q.few, e) // the length alone unless it grows
	ev := q.few
	i := len(ev) - 1
	for i > 0 && ev[i-1].At <= e.At {
		ev[i] = ev[i-1]
		i--
	}
	ev[i] = e
	if len(ev) > heapAbove {
		q.toHeap()
	}
}

// toHeap moves the sorted array's events to the heap: reversed, the array
// is ascending, which is a valid heap.
func (q *queue) toHeap() {
	q.small.ev = append(q.small.ev[:0], q.few...)
	slices.Reverse(q.small.ev)
	q.few = q.few[:0]
	q.inHeap = true
}

// toFew moves the heap's events to the sorted array.
func (q *queue) toFew() {
	q.few = append(q.few[:0], q.small.ev...)
	slices.SortFunc(q.few, func(a, b Event) int { return cmpEvent(b, a) })
	q.small.ev = q.small.ev[:0]
	q.inHeap = false
}

// toWheel moves the heap's events to the wheel, which starts at now.
func (q *queue) toWheel(now Time) {
	if q.big == nil {
		q.big = &wheel{}
	}
	q.big.start(now)
	for _, e := range q.small.ev {
		q.big.push(e)
	}
	q.small.ev = q.small.ev[:0]
	q.inWheel = true
}

// minAt is the time of the next event; the queue must not be empty.
func (q *queue) minAt() Time {
	switch {
	case q.inWheel:
		return q.big.minAt()
	case q.inHeap:
		return q.small.ev[0].At
	}
	return q.few[len(q.few)-1].At
}

// popFew is popBy from the sorted array: ok is false when it holds no
// event due by limit, or when the events are in the heap or the wheel.
// It is small enough to be inlined in the loops of Sim.
func (q *queue) popFew(limit Time) (e Event, ok bool) {
	n := len(q.few) - 1
	if q.inHeap || n < 0 || q.few[n].At > limit {
		return Event{}, false
	}
	e = q.few[n]
	q.few = q.few[:n] // the length alone: no write barrier
	return e, true
}

// popBy removes and returns the next event if it is due at or before
// limit.
func (q *queue) popBy(limit Time) (Event, bool) {
	if !q.inHeap {
		return q.popFew(limit)
	}
	if q.inWheel {
		return q.popWheel(limit)
	}
	e, ok := q.small.popBy(limit)
	if ok && len(q.small.ev) < fewBelow {
		q.toFew()
	}
	return e, ok
}

// popWheel is popBy from the wheel, moving back to the heap when few
// events remain.
func (q *queue) popWheel(limit Time) (Event, bool) {
	e, ok := q.big.popBy(limit)
	if ok && q.big.n < heapBelow {
		q.big.drain(&q.small)
		q.inWheel = false
	}
	return e, ok
}

// hints are the events of the wheel's bucket just reached, once: their
// handlers may prefetch what they will touch (Sim.hint).
func (q *queue) hints() []Event {
	if !q.inWheel || !q.big.fresh {
		return nil
	}
	q.big.fresh = false
	return q.big.cur[q.big.head:]
}
