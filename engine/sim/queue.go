package sim

// queue holds the pending events ordered by (At, seq), in the store that
// suits their number: a 4-ary heap while few are pending (a path or two:
// a handful of link directions and timers), a calendar queue once many are
// (hundreds of flows), whose cost per event does not grow with their
// number. Both give the same order, so a switch changes nothing a run
// computes; the gap between the thresholds keeps a run near one from
// switching back and forth.
type queue struct {
	small   heap4
	big     *wheel // allocated at the first switch
	inWheel bool
}

const (
	wheelAbove = 512 // to the wheel when the heap holds more
	heapBelow  = 128 // back to the heap when the wheel holds fewer
)

func (q *queue) len() int {
	if q.inWheel {
		return q.big.n
	}
	return q.small.len()
}

// push queues e at the simulation's time now (nothing is queued before
// now).
func (q *queue) push(e Event, now Time) {
	if q.inWheel {
		q.big.push(e)
		return
	}
	q.small.push(e)
	if len(q.small.ev) > wheelAbove {
		q.toWheel(now)
	}
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
	if q.inWheel {
		return q.big.minAt()
	}
	return q.small.ev[0].At
}

// popBy removes and returns the next event if it is due at or before
// limit.
func (q *queue) popBy(limit Time) (Event, bool) {
	if q.inWheel {
		return q.popWheel(limit)
	}
	return q.small.popBy(limit)
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
