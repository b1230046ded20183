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
//
// Each skb keeps its PSH mark (TCP_SKB_CB(skb)->tcp_flags): tcp_push marks
// the tail at the end of each write call and as the writer waits for
// memory, and a forced push marks it too (tcp_mark_push); a call's first
// copy clears the mark of the tail it tops up. A mark stays with the skb
// until it leaves, behind newer data or not, and goes with what
// tso_fragment leaves of it, not with the part sent.
type writeQueue struct {
	ends []uint64 // ends[head:] ascending
	psh  []bool   // beside ends: the skb's PSH mark
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
// is topped up to the size goal, then new skbs are filled to it. A call's
// first copy (first) clears the mark of the tail it tops up.
func (q *writeQueue) lay(nxt, from, to, goal uint64, first bool) {
	if to <= from {
		return
	}
	if q.n() > 0 {
		if l := q.tailLen(nxt, from); l < goal {
			from = min(to, from+goal-l)
			q.ends[len(q.ends)-1] = from
			q.psh[len(q.psh)-1] = q.psh[len(q.psh)-1] && !first
		}
	}
	for from < to {
		from = min(to, from+goal)
		if q.head > 0 && 2*q.head >= len(q.ends) {
			// Reuse the room the sent skbs left, so that a sender that
			// never drains its queue holds only what is unsent.
			q.ends = q.ends[:copy(q.ends, q.ends[q.head:])]
			q.psh = q.psh[:copy(q.psh, q.psh[q.head:])]
			q.head = 0
		}
		q.ends = append(q.ends, from)
		q.psh = append(q.psh, false)
	}
}

// markTail is tcp_mark_push on the tail skb, if there is one (tcp_push
// returns without an skb).
func (q *writeQueue) markTail() {
	if q.n() > 0 {
		q.psh[len(q.psh)-1] = true
	}
}

// markAfter marks every skb that ends after from: an application writing
// a segment per call pushes at the end of each call, so each skb it wrote
// into was the tail at some call's end, and a top-up's clearing is undone
// by the push that ends the same call.
func (q *writeQueue) markAfter(from uint64) {
	for i := len(q.ends) - 1; i >= q.head && q.ends[i] > from; i-- {
		q.psh[i] = true
	}
}

// markHead marks the send head (tcp_write_wakeup's PSH before it
// fragments the skb).
func (q *writeQueue) markHead() { q.psh[q.head] = true }

// headMarked is whether the send head carries a PSH mark.
func (q *writeQueue) headMarked() bool { return q.psh[q.head] }

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
		q.ends, q.psh, q.head = q.ends[:0], q.psh[:0], 0
	}
}

// headEnd is where the send head's skb ends.
func (q *writeQueue) headEnd() uint64 { return q.ends[q.head] }

// grow follows tcp_grow_skb (6.10+): the send head takes bytes from the skb
// after it, up to want, eating it if it takes it all (tcp_eat_one_skb, which
// ORs in the eaten skb's PSH); one skb at most. The
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
		q.psh[q.head] = q.psh[q.head] || q.psh[q.head-1]
	}
}
