package sim

// heap4 is a 4-ary min-heap of events ordered by (At, seq): the queue's
// store while few events are pending, where it beats the wheel. A 4-ary heap
// halves the depth of a binary one and keeps siblings in one cache line.
type heap4 struct {
	ev []Event
}

func (q *heap4) len() int { return len(q.ev) }

// push and pop move a hole rather than swapping: each step copies one
// 32-byte event instead of two, and the moving event is written once.
func (q *heap4) push(e Event) {
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(&q.ev[p]) {
			break
		}
		q.ev[i] = q.ev[p]
		i = p
	}
	q.ev[i] = e
}

func (q *heap4) pop() Event {
	top := q.ev[0]
	n := len(q.ev) - 1
	x := q.ev[n]
	q.ev = q.ev[:n]
	if n == 0 {
		return top
	}
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		m := first
		last := min(first+4, n)
		for c := first + 1; c < last; c++ {
			if q.ev[c].less(&q.ev[m]) {
				m = c
			}
		}
		if !q.ev[m].less(&x) {
			break
		}
		q.ev[i] = q.ev[m]
		i = m
	}
	q.ev[i] = x
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
