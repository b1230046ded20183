package sim

// heap4 is a 4-ary min-heap of events ordered by (At, seq): the queue's
// store while few events are pending, where it beats the wheel. A 4-ary heap
// halves the depth of a binary one and keeps siblings in one cache line.
type heap4 struct {
	ev []Event
}

func (q *heap4) len() int { return len(q.ev) }

// push and pop move a hole rather than swapping: each step copies one
// 32-byte event instead of two, and the moving event is written once. Both
// work on a local copy of the slice, so the compiler keeps its base and
// length in registers across the stores (q.ev could alias them otherwise).
func (q *heap4) push(e Event) {
	ev := append(q.ev, e)
	q.ev = ev
	i := len(ev) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if !e.less(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

func (q *heap4) pop() Event {
	ev := q.ev
	top := ev[0]
	n := len(ev) - 1
	x := ev[n]
	ev = ev[:n]
	q.ev = q.ev[:n] // the length alone: no write barrier
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		// The least of the up to four children.
		kids := ev[first:min(first+4, n)]
		m := 0
		for c := 1; c < len(kids); c++ {
			if kids[c].less(&kids[m]) {
				m = c
			}
		}
		if !kids[m].less(&x) {
			break
		}
		ev[i] = kids[m]
		i = first + m
	}
	if n > 0 {
		ev[i] = x
	}
	return top
}

// popBy removes and returns the earliest event if it is due at or before
// limit.
func (q *heap4) popBy(limit Time) (Event, bool) {
	if len(q.ev) == 0 || q.ev[0].At > limit {
		return Event{}, false
	}
	return q.pop(), true
}
