package sim

import "math/bits"

// radix holds events ordered by (At, seq): the queue's store for events
// beyond its wheel (timeouts, slow paths). It is a radix heap with 64-way digits, and relies on the
// simulation being monotone: nothing is queued before the last
// event popped (Schedule and Timer.Arm refuse the past).
//
// Relative to last, an event's level is the 6-bit digit of its time where
// it first differs from last, and its slot that digit's value: every event
// of a lower level, or of a lower slot on the same level, comes earlier.
// Events at last itself wait in now, in seq order. When now is empty, the
// lowest occupied slot (found by bitmaps) is split: its earliest time
// (kept per slot) becomes last and each of the slot's events moves to now
// or to a strictly lower level. An event therefore moves at most once per
// level, through contiguous slices, and a pop costs about the same with ten
// entries queued or ten thousand, where a heap's cost grows with their
// logarithm.
type radix struct {
	last  Time
	now   []Event // events at last, in seq order; now[head:] are pending
	head  int
	slots [levels][64][]Event
	early [levels][64]Time // earliest time in each occupied slot
	used  [levels]uint64   // bit s: slots[l][s] is occupied
	n     int
}

const levels = 11 // 6-bit digits of a 63-bit time

func (q *radix) len() int { return q.n }

func (q *radix) push(e Event) {
	q.n++
	x := uint64(e.At ^ q.last)
	if x == 0 {
		q.now = append(q.now, e) // seq grows, so now stays in seq order
		return
	}
	l := (bits.Len64(x) - 1) / 6
	s := uint64(e.At) >> (6 * l) & 63
	if q.used[l]&(1<<s) == 0 || e.At < q.early[l][s] {
		q.early[l][s] = e.At
	}
	q.slots[l][s] = append(q.slots[l][s], e)
	q.used[l] |= 1 << s
}

// lowest is the lowest occupied slot; the queue must hold events, none at
// last.
func (q *radix) lowest() (l, s int) {
	for q.used[l] == 0 {
		l++
	}
	return l, bits.TrailingZeros64(q.used[l])
}

// minAt is the time of the next event; the queue must not be empty.
func (q *radix) minAt() Time {
	if len(q.now) > 0 {
		return q.now[q.head].At
	}
	l, s := q.lowest()
	return q.early[l][s]
}

// pop removes and returns the earliest event; the heap must not be empty.
func (q *radix) pop() Event {
	if len(q.now) == 0 {
		q.split(q.lowest())
	}
	e := q.now[q.head]
	q.head++
	q.n--
	if q.head == len(q.now) {
		q.now, q.head = q.now[:0], 0
	}
	return e
}

// split empties slot s of level l around its earliest time, which becomes
// last: the events at last go to now, the others to lower levels. now
// stays in seq order without sorting: events with equal times share every
// digit, so they always sit in one slot, in the order queued, and move
// together, in order.
func (q *radix) split(l, s int) {
	es := q.slots[l][s]
	q.last = q.early[l][s]
	q.slots[l][s] = es[:0]
	q.used[l] &^= 1 << s
	q.n -= len(es) // push counts them again
	for _, e := range es {
		q.push(e)
	}
}
