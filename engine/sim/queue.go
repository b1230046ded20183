package sim

// Kind identifies what an event means to its target handler.
type Kind uint8

// Event is one scheduled occurrence. Events are small values so the queue
// never boxes them and the hot loop does not allocate.
// An Event is 32 bytes: the timer flag rides in seq's low bit, and a timer
// entry's Arg packs the timer's index and generation.
type Event struct {
	At     Time
	seq    uint64 // insertion sequence << 1 | 1 if a Timer owns the entry
	Arg    uint64 // handler-defined: a packet index, ...; for timers idx | gen<<32
	Target int32  // index of the handler, from Sim.Register
	Kind   Kind   // meaning for the handler
}

// queue is a 4-ary min-heap of events ordered by (At, seq). A 4-ary heap
// halves the depth of a binary one and keeps siblings in one cache line.
type queue struct {
	ev []Event
}

func (e *Event) less(f *Event) bool {
	return e.At < f.At || e.At == f.At && e.seq < f.seq
}

func (q *queue) len() int { return len(q.ev) }

// push and pop move a hole rather than swapping: each step copies one
// 32-byte event instead of two, and the moving event is written once.

func (q *queue) push(e Event) {
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

func (q *queue) pop() Event {
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
