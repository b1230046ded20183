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

func (q *queue) push(e Event) {
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !q.ev[i].less(&q.ev[p]) {
			break
		}
		q.ev[i], q.ev[p] = q.ev[p], q.ev[i]
		i = p
	}
}

func (q *queue) pop() Event {
	top := q.ev[0]
	n := len(q.ev) - 1
	q.ev[0] = q.ev[n]
	q.ev = q.ev[:n]
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
		if !q.ev[m].less(&q.ev[i]) {
			break
		}
		q.ev[i], q.ev[m] = q.ev[m], q.ev[i]
		i = m
	}
	return top
}
