package tcp

// writeQueue holds where each skb of the write queue (sk_write_queue: the
// data written and not yet sent) ends, in sequence order, the last at
// write_seq. An skb keeps the size it was written to: tcp_sendmsg_locked
// fills a new skb to the size goal of the moment and tops up only the tail
// to the goal of the moment, so a goal that grows with the peer's window
// leaves the skbs before the tail at the old one. tso_fragment splits the
// send head where a chunk ends, and what stays is an skb of its own that
// ends where the head did. A sender bound by its send buffer counts these
// skbs (sk_wmem_queued) and wakes its writer by them, so their sizes set
// when and how much it writes: on a 20 Mbps, 600 ms path (bpftrace on
// tcp:tcp_sendmsg_locked) the writer's first wake-up topped a 22-segment
// tail up to the new 27-segment goal and took one new skb, 32 segments,
// where skbs laid at the current goal from snd_nxt gave 38.
type writeQueue struct {
	ends []uint64 // ends[head:] ascending
	head int
}

// n is the number of unsent skbs.
func (q *writeQueue) n() int { return len(q.ends) - q.head }

// tailLen is the payload of the tail skb, whose data reaches w, with the
// send head at nxt: 0 when nothing is unsent.
func (q *writeQueue) tailLen(nxt, w uint64) uint64 {
	switch n := q.n(); {
	case n == 0:
		return 0
	case n == 1:
		return w - nxt
	default:
		return w - q.ends[len(q.ends)-2]
	}
}

// lay queues the data [from, to) as tcp_sendmsg_locked does: the tail skb
// is topped up to the size goal, then new skbs are filled to it.
func (q *writeQueue) lay(nxt, from, to, goal uint64) {
	if to <= from {
		return
	}
	if q.n() > 0 {
		if l := q.tailLen(nxt, from); l < goal {
			from = min(to, from+goal-l)
			q.ends[len(q.ends)-1] = from
		}
	}
	for from < to {
		from = min(to, from+goal)
		if q.head > 0 && 2*q.head >= len(q.ends) {
			// Reuse the room the sent skbs left, so that a sender that
			// never drains its queue holds only what is unsent.
			q.ends = q.ends[:copy(q.ends, q.ends[q.head:])]
			q.head = 0
		}
		q.ends = append(q.ends, from)
	}
}

// newSkbs is how many skbs writing on from w to to adds, the tail topped
// up first.
func (q *writeQueue) newSkbs(nxt, w, to, goal uint64) uint64 {
	if to <= w {
		return 0
	}
	if q.n() > 0 {
		if l := q.tailLen(nxt, w); l < goal {
			w = min(to, w+goal-l)
		}
	}
	return (to - w + goal - 1) / goal
}

// sent drops the skbs that end at or before nxt, the new snd_nxt.
func (q *writeQueue) sent(nxt uint64) {
	for q.head < len(q.ends) && q.ends[q.head] <= nxt {
		q.head++
	}
	if q.head == len(q.ends) {
		q.ends, q.head = q.ends[:0], 0
	}
}

// headEnd is where the send head's skb ends.
func (q *writeQueue) headEnd() uint64 { return q.ends[q.head] }

// grow follows tcp_grow_skb (6.10+): the send head takes bytes from the skb
// after it, up to want, eating it if it takes it all; one skb at most. The
// skbs keep the growth whether or not the head then leaves: tcp_write_xmit
// grows the head before its window and TSO-deferral tests, so a head grown
// by a push that the receive window or deferral then stopped is the longer
// skb at the next push, and tcp_tso_should_defer reads its length.
func (q *writeQueue) grow(want uint64) {
	switch {
	case q.n() < 2 || q.ends[q.head] >= want:
	case want < q.ends[q.head+1]:
		q.ends[q.head] = want
	default:
		q.head++ // the next skb eaten whole: the head ends where it ended
	}
}
