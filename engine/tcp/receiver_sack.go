package tcp

import "github.com/ccscope/ccscope/engine/packet"

// ofoQueue is the out-of-order queue as a sorted set of disjoint,
// non-adjacent byte intervals. The kernel's rbtree of skbs coalesces
// contiguous skbs (tcp_ooo_try_coalesce), so one interval stands for what
// the kernel holds as one run. Finding a segment's place is O(log
// intervals), and O(1) at the tail, where most land (the kernel's
// ooo_last_skb fast path). The intervals are a window of a larger buffer,
// and a change moves whichever side of the window is shorter: new data
// lands at the tail and retransmissions fill holes at the head, both cheap
// with thousands of holes. The buffer does not allocate once it has grown
// to the run's largest hole count.
type ofoQueue struct {
	iv    []packet.SackBlock // the intervals: buf[h : h+len(iv)]
	buf   []packet.SackBlock
	h     int
	bytes uint64 // payload bytes held
}

// insert adds [seq, end) and reports the bytes it duplicates to sk: the
// first overlap sets the D-SACK block, later ones extend it, as
// tcp_data_queue_ofo does for "all bits present", partial overlap and
// merge_right. It returns how many bytes were new: 0 when all were
// present already.
func (q *ofoQueue) insert(seq, end uint64, sk *sackState) uint64 {
	iv := q.iv
	i := q.find(seq)
	lo, hi := seq, end
	held := uint64(0)
	first := true
	j := i
	for ; j < len(iv) && iv[j].Start <= end; j++ {
		if s, e := max(seq, iv[j].Start), min(end, iv[j].End); s < e {
			if first {
				sk.dsackSet(s, e)
				first = false
			} else {
				sk.dsackExtend(s, e)
			}
		}
		lo, hi = min(lo, iv[j].Start), max(hi, iv[j].End)
		held += iv[j].End - iv[j].Start
	}
	added := hi - lo - held
	q.bytes += added
	q.replace(i, j, packet.SackBlock{Start: lo, End: hi})
	return added
}

// replace puts nb in place of iv[i:j] (before iv[i] when j == i), moving
// the shorter side of the rest.
func (q *ofoQueue) replace(i, j int, nb packet.SackBlock) {
	n := len(q.iv)
	switch k := j - i - 1; {
	case k > 0 && i < n-j: // the head moves up by k
		copy(q.buf[q.h+k:], q.buf[q.h:q.h+i])
		q.h += k
	case k > 0: // the tail moves down by k
		copy(q.buf[q.h+i+1:], q.buf[q.h+j:q.h+n])
	case k < 0: // one slot more, on the head's side or the tail's
		head := i < n-i
		if head && q.h == 0 || !head && q.h+n == len(q.buf) {
			q.recentre(n + 1)
		}
		if head {
			copy(q.buf[q.h-1:], q.buf[q.h:q.h+i])
			q.h--
		} else {
			copy(q.buf[q.h+i+1:], q.buf[q.h+i:q.h+n])
		}
	}
	n -= j - i - 1
	q.buf[q.h+i] = nb
	q.iv = q.buf[q.h : q.h+n : q.h+n]
}

// recentre places the intervals in the middle of a buffer with room for
// want on either side, growing it when it is more than half full.
func (q *ofoQueue) recentre(want int) {
	n := len(q.iv)
	buf := q.buf
	if 2*want > len(buf) {
		buf = make([]packet.SackBlock, max(16, 2*want))
	}
	h := (len(buf) - n) / 2
	copy(buf[h:], q.buf[q.h:q.h+n])
	q.buf, q.h = buf, h
	q.iv = buf[h : h+n : h+n]
}

// find returns the index of the first interval that ends at or after seq
// (that seq overlaps or touches, or that lies beyond it), len(q.iv) if none.
func (q *ofoQueue) find(seq uint64) int {
	iv := q.iv
	n := len(iv)
	if n == 0 || iv[n-1].End < seq {
		return n
	}
	if n == 1 || iv[n-2].End < seq {
		return n - 1
	}
	lo, hi := 0, n-2 // iv[hi].End >= seq
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if iv[m].End < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// popFront removes the first interval.
func (q *ofoQueue) popFront() {
	q.bytes -= q.iv[0].End - q.iv[0].Start
	q.h++
	q.iv = q.iv[1:]
}

// sackState holds the SACK blocks (tp->selective_acks, up to
// TCP_NUM_SACKS) and the D-SACK block (tp->duplicate_sack[0]).
type sackState struct {
	blocks [tcpNumSacks]packet.SackBlock
	num    int
	dsack  bool
	dup    packet.SackBlock
}

// sackExtend is tcp_sack_extend: grow sp by [seq, end) if they overlap or
// touch.
func sackExtend(sp *packet.SackBlock, seq, end uint64) bool {
	if seq <= sp.End && sp.Start <= end {
		sp.Start = min(sp.Start, seq)
		sp.End = max(sp.End, end)
		return true
	}
	return false
}

// dsackReset clears the D-SACK state at the start of tcp_data_queue.
func (s *sackState) dsackReset() { s.dsack = false }

// dsackSet is tcp_dsack_set.
func (s *sackState) dsackSet(seq, end uint64) {
	s.dsack = true
	s.dup = packet.SackBlock{Start: seq, End: end}
}

// dsackExtend is tcp_dsack_extend.
func (s *sackState) dsackExtend(seq, end uint64) {
	if !s.dsack {
		s.dsackSet(seq, end)
		return
	}
	sackExtend(&s.dup, seq, end)
}

// write fills an ACK's SACK blocks as tcp_established_options does: the
// D-SACK block first, then the most recent blocks, 3 at most beside
// timestamps.
func (s *sackState) write(out *[packet.MaxSack]packet.SackBlock) uint8 {
	n := 0
	if s.dsack {
		out[0] = s.dup
		n = 1
	}
	for i := 0; i < s.num && n < packet.MaxSack; i++ {
		out[n] = s.blocks[i]
		n++
	}
	return uint8(n)
}

// maybeCoalesce is tcp_sack_maybe_coalesce: after the first block grew,
// absorb any block it now overlaps or touches.
func (s *sackState) maybeCoalesce() {
	for i := 1; i < s.num; {
		if sackExtend(&s.blocks[0], s.blocks[i].Start, s.blocks[i].End) {
			s.num--
			copy(s.blocks[i:s.num], s.blocks[i+1:s.num+1])
			continue
		}
		i++
	}
}

// remove is tcp_sack_remove: rcv_nxt advanced; drop the blocks it covers,
// or all of them when the out-of-order queue emptied.
func (s *sackState) remove(rcvNxt uint64, ofoEmpty bool) {
	if ofoEmpty {
		s.num = 0
		return
	}
	for i := 0; i < s.num; {
		if rcvNxt >= s.blocks[i].Start {
			s.num--
			copy(s.blocks[i:s.num], s.blocks[i+1:s.num+1])
			continue
		}
		i++
	}
}

// sackBlocksExpected is TCP_SACK_BLOCKS_EXPECTED: touching a block beyond
// the first two flushes a compressed ACK, since SACKs might be lost.
const sackBlocksExpected = 2

// sackNewOfoSkb follows tcp_sack_new_ofo_skb: the block the segment joins
// (or a new one) moves to the front; when all TCP_NUM_SACKS are in use the
// oldest is forgotten.
func (r *Receiver) sackNewOfoSkb(seq, end uint64) {
	s := &r.sack
	if s.num == 0 {
		s.blocks[0] = packet.SackBlock{Start: seq, End: end}
		s.num = 1
		return
	}
	for i := 0; i < s.num; i++ {
		if sackExtend(&s.blocks[i], seq, end) {
			if i >= sackBlocksExpected {
				r.sackCompressSendAck()
			}
			// Rotate this block to the front.
			for ; i > 0; i-- {
				s.blocks[i], s.blocks[i-1] = s.blocks[i-1], s.blocks[i]
			}
			if s.num > 1 {
				s.maybeCoalesce()
			}
			return
		}
	}
	if s.num >= sackBlocksExpected {
		r.sackCompressSendAck()
	}
	if s.num >= tcpNumSacks {
		s.num--
	}
	copy(s.blocks[1:s.num+1], s.blocks[:s.num])
	s.blocks[0] = packet.SackBlock{Start: seq, End: end}
	s.num++
}
