package sim

import (
	"math/bits"
	"slices"
)

// cmpEvent orders events by (At, seq).
func cmpEvent(a, b Event) int {
	switch {
	case a.less(&b):
		return -1
	case b.less(&a):
		return 1
	}
	return 0
}

// sortEvents sorts a bucket's events by (At, seq). A bucket holds a few
// events, taken from its list in reverse order of queueing, which is often
// near time order: an insertion sort from the back suits it; a crowded
// bucket (many flows starting at once) gets a general sort.
func sortEvents(es []Event) {
	if len(es) > 32 {
		slices.SortFunc(es, cmpEvent)
		return
	}
	for i := len(es) - 2; i >= 0; i-- {
		e := es[i]
		j := i + 1
		for j < len(es) && es[j].less(&e) {
			es[j-1] = es[j]
			j++
		}
		es[j-1] = e
	}
}

// The wheel's geometry: buckets of 2^22 ps (about 4.2 µs), 2^14 of them, so
// the wheel spans about 69 ms ahead: the propagation and queueing delays of
// most paths. Timeouts and slower paths wait in the radix heap beyond it.
const (
	bucketShift = 22
	wheelBits   = 14
	wheelSize   = 1 << wheelBits
)

// bucketOf is the absolute bucket number of time t.
func bucketOf(t Time) int64 { return int64(t) >> bucketShift }

// wheel holds pending events ordered by (At, seq): a calendar queue, the
// queue's store while many events are pending. It relies on the simulation being monotone: nothing is queued before the
// last event popped (Schedule and Timer.Arm refuse the past).
//
// An event within the wheel's span of base goes, unsorted, into the list of
// its bucket; one further ahead goes to far, a radix heap. When the events
// of the current bucket (cur, sorted) are used up, the next occupied bucket
// (found by bitmaps) becomes base: far's events now within the span move
// into the wheel, and the bucket's few events are sorted into cur. So an
// event is written once or twice and sorted among the handful that share
// its few microseconds, whatever the number queued, where a heap's cost
// grows with the logarithm of that number.
type wheel struct {
	n    int
	base int64   // first bucket the wheel holds; events lie in [base, base+wheelSize)
	cur  []Event // bucket base, sorted, once loaded; cur[head:] are pending
	head int
	// loaded says cur holds bucket base: events for it join cur. fresh
	// says it has just been loaded, for Sim.hint.
	loaded, fresh bool
	first         [wheelSize]int32 // each bucket's list: a node index + 1, 0 when empty
	used          [wheelSize / 64]uint64
	summ          [wheelSize / 64 / 64]uint64 // bit w: used[w] != 0
	nodes         []Event
	next          []int32 // list links, node index + 1
	free          int32   // free nodes, node index + 1
	far           radix
	farAt         Time // far's earliest time, while far holds events
}

func (q *wheel) push(e Event) {
	q.n++
	b := bucketOf(e.At)
	switch {
	case b == q.base && q.loaded:
		q.insert(e)
	case b < q.base+wheelSize:
		q.link(b, e)
	default:
		if q.far.len() == 0 || e.At < q.farAt {
			q.farAt = e.At
		}
		q.far.push(e)
	}
}

// insert puts e into cur in order: e is the latest queued, so it goes
// after every event at its time. With hundreds of flows about two events in
// three are queued in the bucket being dispatched (a link's next
// transmission, a host's next segment), a few before the last pending, so
// the loop keeps its slice and bounds in registers.
func (q *wheel) insert(e Event) {
	if len(q.cur) < cap(q.cur) {
		q.cur = q.cur[:len(q.cur)+1] // the length alone: no write barrier
	} else {
		q.cur = append(q.cur, e)
	}
	cur := q.cur
	i, h, at := len(cur)-1, q.head, e.At
	for i > h && at < cur[i-1].At {
		cur[i] = cur[i-1]
		i--
	}
	cur[i] = e
}

// link adds e to the list of bucket b.
func (q *wheel) link(b int64, e Event) {
	if q.free == 0 {
		q.nodes = append(q.nodes, Event{})
		q.next = append(q.next, 0)
		q.free = int32(len(q.nodes))
	}
	k := q.free
	q.free = q.next[k-1]
	q.nodes[k-1] = e
	i := b & (wheelSize - 1)
	q.next[k-1] = q.first[i]
	q.first[i] = k
	q.used[i>>6] |= 1 << (i & 63)
	q.summ[i>>12] |= 1 << (i >> 6 & 63)
}

// nextBucket is the first occupied bucket of the wheel, in time order from
// base.
func (q *wheel) nextBucket() (int64, bool) {
	i0 := q.base & (wheelSize - 1)
	if i, ok := q.firstUsed(i0); ok {
		return q.base + i - i0, true
	}
	if i, ok := q.firstUsed(0); ok && i < i0 {
		return q.base + wheelSize - i0 + i, true
	}
	return 0, false
}

// firstUsed is the first occupied ring position at or after i.
func (q *wheel) firstUsed(i int64) (int64, bool) {
	w := i >> 6
	if m := q.used[w] >> (i & 63); m != 0 {
		return i + int64(bits.TrailingZeros64(m)), true
	}
	for s := (w + 1) >> 6; s < int64(len(q.summ)); s++ {
		m := q.summ[s]
		if s == (w+1)>>6 {
			m &= ^uint64(0) << ((w + 1) & 63)
		}
		if m != 0 {
			w := s<<6 + int64(bits.TrailingZeros64(m))
			return w<<6 + int64(bits.TrailingZeros64(q.used[w])), true
		}
	}
	return 0, false
}

// bucketMin is the earliest time in bucket b's list.
func (q *wheel) bucketMin(b int64) Time {
	m := Never
	for k := q.first[b&(wheelSize-1)]; k != 0; k = q.next[k-1] {
		m = min(m, q.nodes[k-1].At)
	}
	return m
}

// upcoming is the bucket of the next event (cur being used up) and,
// if it straddles limit, the time of that event; ok is false when empty.
func (q *wheel) upcoming(limit Time) (b int64, at Time, ok bool) {
	b, inWheel := q.nextBucket()
	fb := int64(-1)
	if q.far.len() > 0 {
		fb = bucketOf(q.farAt)
		if !inWheel || fb < b {
			b, inWheel = fb, false
		}
	}
	if !inWheel && fb < 0 {
		return 0, 0, false
	}
	at = Time(b << bucketShift) // the bucket's start: enough if it ends by limit
	if Time((b+1)<<bucketShift-1) > limit {
		at = Never
		if inWheel {
			at = q.bucketMin(b)
		}
		if fb == b {
			at = min(at, q.farAt)
		}
	}
	return b, at, true
}

// load makes bucket b (the next occupied one) base: far's events within
// the new span join the wheel, and the bucket's events are sorted into cur.
func (q *wheel) load(b int64) {
	q.base = b
	for q.far.len() > 0 && bucketOf(q.farAt) < b+wheelSize {
		e := q.far.pop()
		q.link(bucketOf(e.At), e)
		if q.far.len() > 0 {
			q.farAt = q.far.minAt()
		}
	}
	i := b & (wheelSize - 1)
	q.cur, q.head = q.cur[:0], 0
	for k := q.first[i]; k != 0; {
		q.cur = append(q.cur, q.nodes[k-1])
		nk := q.next[k-1]
		q.next[k-1] = q.free
		q.free = k
		k = nk
	}
	q.first[i] = 0
	q.used[i>>6] &^= 1 << (i & 63)
	if q.used[i>>6] == 0 {
		q.summ[i>>12] &^= 1 << (i >> 6 & 63)
	}
	sortEvents(q.cur)
	q.loaded, q.fresh = true, true
}

// minAt is the time of the next event; the queue must not be empty.
func (q *wheel) minAt() Time {
	if q.head < len(q.cur) {
		return q.cur[q.head].At
	}
	_, at, _ := q.upcoming(-1)
	return at
}

// popBy removes and returns the next event if it is due at or before
// limit. It moves base only to the bucket of the event it returns, so
// events may still be queued at any time from the simulation's clock on.
func (q *wheel) popBy(limit Time) (Event, bool) {
	if q.head == len(q.cur) && !q.loadBy(limit) {
		return Event{}, false
	}
	e := q.cur[q.head]
	if e.At > limit {
		return Event{}, false
	}
	q.head++
	q.n--
	return e, true
}

// loadBy loads the next occupied bucket, cur being used up, if its first
// event is due at or before limit, and reports whether it did.
func (q *wheel) loadBy(limit Time) bool {
	if q.n == 0 {
		return false
	}
	b, at, _ := q.upcoming(limit)
	if at > limit {
		return false
	}
	q.load(b)
	return true
}

// start readies an empty wheel to take events from time t on.
func (q *wheel) start(t Time) {
	q.base, q.loaded, q.fresh = bucketOf(t), false, false
	q.cur, q.head = q.cur[:0], 0
	q.far.last = t // far is empty: its floor can move up to t
}

// drain moves every pending event to h and leaves the wheel empty.
func (q *wheel) drain(h *heap4) {
	for _, e := range q.cur[q.head:] {
		h.push(e)
	}
	q.cur, q.head = q.cur[:0], 0
	for w, m := range q.used {
		for ; m != 0; m &= m - 1 {
			i := w<<6 + bits.TrailingZeros64(m)
			for k := q.first[i]; k != 0; {
				h.push(q.nodes[k-1])
				nk := q.next[k-1]
				q.next[k-1] = q.free
				q.free = k
				k = nk
			}
			q.first[i] = 0
		}
		q.used[w] = 0
	}
	q.summ = [len(q.summ)]uint64{}
	for q.far.len() > 0 {
		h.push(q.far.pop())
	}
	q.n = 0
}
