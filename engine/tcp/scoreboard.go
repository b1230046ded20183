package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
)

// Segment flags: the kernel's TCP_SKB_CB(skb)->sacked bits.
const (
	flagSacked      uint8                              = 1 << iota // TCPCB_SACKED_ACKED
	flagRetransOut                                                 // TCPCB_SACKED_RETRANS: a retransmission is in flight
	flagLost                                                       // TCPCB_LOST
	flagEverRetrans                                                // TCPCB_EVER_RETRANS
	flagSkbHead                                                    // the first segment of an skb of the queue (sndQueued)
	flagRetrans     = flagRetransOut | flagEverRetrans             // TCPCB_RETRANS
)

// segment is one sent MSS-sized segment of the retransmission queue: the
// fields of its skb's control block the sender uses.
type txSeg struct {
	end  uint64   // end_seq
	sent sim.Time // skb_mstamp: time of the latest (re)transmission

	tx cc.RateTx // tcp_rate.c's per-skb snapshot (TCP_SKB_CB(skb)->tx)

	flags  uint8
	push   bool   // ends an application write: sent with PSH (tcp_push's tcp_mark_push)
	listed bool   // on the kernel's time-sorted list
	parked bool   // listed, but lost with no retransmission in flight, so off the walked list (skippable)
	order  uint32 // when it was listed, in listings (wraps; compared by difference)
	prev   int64  // walked list links (segment numbers, -1: none)
	next   int64
}

// skippable reports whether RACK passes over s: marked lost (by an RTO or
// the dupack rule) and not retransmitted since.
func (s *txSeg) skippable() bool { return s.flags&(flagLost|flagRetransOut) == flagLost }

// rateSkb is what tcp_rate_skb_delivered reads of the segment.
func (s *txSeg) rateSkb() cc.RateSkb {
	return cc.RateSkb{Sent: s.sent, EndSeq: s.end, Retrans: s.flags&flagRetrans != 0, Sacked: s.flags&flagSacked != 0}
}

// scoreboard is the retransmission queue as a ring of segments indexed by
// segment number, n covering [1+n·mss, 1+(n+1)·mss) (the last may be
// shorter), with the counters of struct tcp_sock that describe it
// (packets_out, sacked_out, lost_out, retrans_out) and the kernel's
// tsorted_sent_queue: a list of the unacked segments in transmission order,
// so RACK visits only segments old enough to be loss candidates. The list
// walked leaves out the segments RACK would skip (skippable): after an RTO
// marks a window of tens of thousands lost, each ACK would otherwise pass
// over all of them until they are retransmitted, as the kernel's walk does.
// Such a segment is parked, and goes back in its place by its listing
// order when it stops being skippable.
//
// Per-ACK work is proportional to the newly acked or sacked segments and
// the number of SACK blocks: SACK blocks are compared with the previous
// ACK's (the kernel's recv_sack_cache) so only their new parts are walked.
type scoreboard struct {
	mss  uint64
	ring []txSeg
	mask uint64
	una  uint64 // first unacked segment
	nxt  uint64 // next segment to send (snd_nxt's segment)

	head, tail int64  // walked list ends, -1 when empty
	order      uint32 // listings so far (txSeg.order)
	hint       int64  // the segment last put back by order, a place to start the next search (-1: none)
	// RACK's boundary (rackDetectLoss): every walked segment from the head
	// to rackLast (-1: none) was sent before (rackAt, rackEnd), the most
	// recently (s)acked transmission as of the last detection.
	rackLast int64
	rackAt   sim.Time
	rackEnd  uint64

	// restamp keeps each skb's tx.in_flight as the google/bbr v3 branch's
	// tcp_fragment does when it splits a sent skb (see split): only for a
	// CC that reads it per lost skb (cc.LossMarker).
	restamp bool

	sackedOut  uint32
	lostOut    uint32
	retransOut uint32
	skbs       uint32 // skbs in the queue: segments flagged flagSkbHead

	cache  [4][2]uint64 // previous ACK's SACK blocks, segment numbers [s, e)
	ncache int
}

// newScoreboard returns an empty scoreboard on a ring from rec (nil: a new
// one).
func newScoreboard(mss uint64, rec *Recycler) *scoreboard {
	ring := rec.ring()
	return &scoreboard{mss: mss, ring: ring, mask: uint64(len(ring) - 1), head: -1, tail: -1, hint: -1, rackLast: -1}
}

// initialRing is the length of a new scoreboard's ring (it doubles as the
// window outgrows it).
const initialRing = 64

// Recycler keeps the scoreboard rings of senders that have finished
// (DataSender.Recycle) for senders that start after them, last in first
// out, so that a run of thousands of short flows allocates rings for the
// flows alive at once rather than for every flow. It keeps only rings of
// the initial length: a ring grown by a large window, lent to the short
// flows that follow, would hold its size for nothing (10,000 short flows
// peaked 15 % higher when it kept them all). One per run; not safe for
// concurrent use.
type Recycler struct {
	rings  [][]txSeg
	closed bool
}

// Close drops the rings kept, and Recycle keeps no more: no sender will
// start that could use them.
func (rec *Recycler) Close() { rec.rings, rec.closed = nil, true }

// ring returns a ring of initialRing segments: a recycled one, cleared, or
// a new one.
func (rec *Recycler) ring() []txSeg {
	if rec == nil || len(rec.rings) == 0 {
		return make([]txSeg, initialRing)
	}
	r := rec.rings[len(rec.rings)-1]
	rec.rings[len(rec.rings)-1] = nil
	rec.rings = rec.rings[:len(rec.rings)-1]
	clear(r)
	return r
}

// Recycle gives the sender's scoreboard ring to its config's Recycler
// (none, or a ring that grew: it is left to the collector). The sender must
// not be used after.
func (d *DataSender) Recycle() {
	if rec := d.cfg.Recycler; rec != nil && !rec.closed && d.sb != nil && len(d.sb.ring) == initialRing {
		rec.rings = append(rec.rings, d.sb.ring)
		d.sb = nil
	}
}

// seg returns segment n, which must be in [una, nxt).
func (b *scoreboard) seg(n uint64) *txSeg { return &b.ring[n&b.mask] }

// start is the first sequence number of segment n.
func (b *scoreboard) start(n uint64) uint64 { return 1 + n*b.mss }

// segOf is the segment holding sequence number seq (≥ 1).
func (b *scoreboard) segOf(seq uint64) uint64 { return (seq - 1) / b.mss }

// packetsOut is tp->packets_out.
func (b *scoreboard) packetsOut() uint32 { return uint32(b.nxt - b.una) }

// inFlight is tcp_packets_in_flight(): packets_out - left_out + retrans_out.
func (b *scoreboard) inFlight() uint32 {
	return b.packetsOut() - (b.sackedOut + b.lostOut) + b.retransOut
}

// push appends a newly sent segment ending at end and returns its number.
func (b *scoreboard) push(end uint64, now sim.Time) uint64 {
	if b.nxt-b.una == uint64(len(b.ring)) {
		b.grow()
	}
	n := b.nxt
	b.nxt++
	*b.seg(n) = txSeg{end: end, sent: now, prev: -1, next: -1}
	b.listAppend(n)
	return n
}

func (b *scoreboard) grow() {
	ring := make([]txSeg, 2*len(b.ring))
	mask := uint64(len(ring) - 1)
	for n := b.una; n < b.nxt; n++ {
		ring[n&mask] = b.ring[n&b.mask]
	}
	b.ring, b.mask = ring, mask
}

// listAppend puts n at the tail of the time-sorted list (most recent).
func (b *scoreboard) listAppend(n uint64) {
	b.listRemove(n)
	s := b.seg(n)
	b.order++
	s.listed, s.order = true, b.order
	if s.skippable() {
		s.parked = true
		return
	}
	b.linkAfter(n, b.tail)
}

// listRemove takes n off the time-sorted list.
func (b *scoreboard) listRemove(n uint64) {
	s := b.seg(n)
	if s.listed && !s.parked {
		b.unlink(n)
	}
	s.listed, s.parked = false, false
}

// relist parks n or puts it back after its flags changed.
func (b *scoreboard) relist(n uint64) {
	s := b.seg(n)
	if !s.listed || s.parked == s.skippable() {
		return
	}
	if s.parked {
		s.parked = false
		p := b.placeOf(s.order)
		b.linkAfter(n, p)
		b.hint = int64(n)
		// Back inside RACK's prefix but not sent before its boundary: the
		// walk would stop here.
		if c := b.rackLast; c >= 0 && int32(s.order-b.seg(uint64(c)).order) < 0 &&
			!cc.SentAfter(b.rackAt, s.sent, b.rackEnd, s.end) {
			b.rackLast = p
		}
		return
	}
	b.unlink(n)
	s.parked = true
}

// placeOf returns the last segment on the walked list listed before order
// (-1: none). It searches from the last segment put back when that one
// precedes order, as an undo puts back a window's segments in sequence
// order, and from the tail otherwise, as a retransmission comes back
// there.
func (b *scoreboard) placeOf(order uint32) int64 {
	if h := b.hint; h >= 0 && uint64(h) >= b.una && uint64(h) < b.nxt {
		if hs := b.seg(uint64(h)); hs.listed && !hs.parked && int32(order-hs.order) > 0 {
			for {
				q := b.seg(uint64(h)).next
				if q < 0 || int32(b.seg(uint64(q)).order-order) > 0 {
					return h
				}
				h = q
			}
		}
	}
	p := b.tail
	for p >= 0 && int32(b.seg(uint64(p)).order-order) > 0 {
		p = b.seg(uint64(p)).prev
	}
	return p
}

// linkAfter puts n on the walked list after p (-1: at the head).
func (b *scoreboard) linkAfter(n uint64, p int64) {
	s := b.seg(n)
	s.prev = p
	if p >= 0 {
		ps := b.seg(uint64(p))
		s.next, ps.next = ps.next, int64(n)
	} else {
		s.next, b.head = b.head, int64(n)
	}
	if s.next >= 0 {
		b.seg(uint64(s.next)).prev = int64(n)
	} else {
		b.tail = int64(n)
	}
}

// unlink takes n off the walked list.
func (b *scoreboard) unlink(n uint64) {
	s := b.seg(n)
	if b.rackLast == int64(n) {
		b.rackLast = s.prev
	}
	if s.prev >= 0 {
		b.seg(uint64(s.prev)).next = s.next
	} else {
		b.head = s.next
	}
	if s.next >= 0 {
		b.seg(uint64(s.next)).prev = s.prev
	} else {
		b.tail = s.prev
	}
	s.prev, s.next = -1, -1
}

// ackTo removes segments below n from the queue (cumulative ACK), keeping
// the counters; the caller has already inspected them.
func (b *scoreboard) ackTo(n uint64) {
	for ; b.una < n; b.una++ {
		s := b.seg(b.una)
		if s.flags&flagSacked != 0 {
			b.sackedOut--
		}
		if s.flags&flagLost != 0 {
			b.lostOut--
		}
		if s.flags&flagRetransOut != 0 {
			b.retransOut--
		}
		if s.flags&flagSkbHead != 0 {
			b.skbs--
		}
		b.listRemove(b.una)
	}
	if b.una < b.nxt {
		b.skbHead(b.una) // a partly acked skb stays, trimmed (tcp_trim_head)
	}
}

// skbHead marks n as the first segment of an skb.
func (b *scoreboard) skbHead(n uint64) {
	if s := b.seg(n); s.flags&flagSkbHead == 0 {
		s.flags |= flagSkbHead
		b.skbs++
	}
}

// markSacked sets n's SACKED_ACKED bit and takes it off the time-sorted
// list; it reports false if n was already sacked.
func (b *scoreboard) markSacked(n uint64) bool {
	s := b.seg(n)
	if s.flags&flagSacked != 0 {
		return false
	}
	s.flags |= flagSacked
	b.sackedOut++
	b.listRemove(n)
	b.sackSkbs(n)
	return true
}

// skbEnd is where the skb holding segment n ends: the next skb's first
// segment, or nxt.
func (b *scoreboard) skbEnd(n uint64) uint64 {
	e := n + 1
	for e < b.nxt && b.seg(e).flags&flagSkbHead == 0 {
		e++
	}
	return e
}

// split makes n the first segment of an skb of its own: tcp_fragment of
// the sent skb holding it. With restamp it also follows the v3 branch's
// tcp_fragment: an skb's tx.in_flight counts its own segments at their
// first transmission, so the part before n, sent as if an skb of its own
// ahead of the rest, counts the rest's segments no more. The walk back
// stops at the skb's first segment or at a sacked one: what a SACK joined
// to the skb before it (tcp_shift_skb_data) no longer needs a stamp, but
// for the segment being sacked, whose rate sample is yet to be taken.
func (b *scoreboard) split(n uint64) {
	if b.seg(n).flags&flagSkbHead != 0 {
		return
	}
	if b.restamp && n > b.una {
		k := uint32(b.skbEnd(n) - n)
		for i := n - 1; ; i-- {
			p := b.seg(i)
			p.tx.InFlight -= k
			if p.flags&flagSkbHead != 0 || i == b.una || b.seg(i-1).flags&flagSacked != 0 {
				break
			}
		}
	}
	b.skbHead(n)
}

// sackSkbs follows what tcp_sacktag_walk does to the skbs around newly
// sacked segment n: a sacked segment joins a sacked skb before it
// (tcp_shift_skb_data), or else starts an skb of its own, split off at the
// block's edge (tcp_match_skb_to_sack's tcp_fragment); the segment after
// it starts another unless sacked, when it joins n's.
func (b *scoreboard) sackSkbs(n uint64) {
	if n > b.una && b.seg(n-1).flags&flagSacked != 0 {
		b.skbJoin(n)
	} else {
		b.split(n)
	}
	if n+1 < b.nxt {
		if b.seg(n+1).flags&flagSacked != 0 {
			b.skbJoin(n + 1)
		} else {
			b.split(n + 1)
		}
	}
}

// skbJoin merges the skb n starts, if any, into the one before it.
func (b *scoreboard) skbJoin(n uint64) {
	if s := b.seg(n); s.flags&flagSkbHead != 0 {
		s.flags &^= flagSkbHead
		b.skbs--
	}
}

// clearLost clears n's LOST bit.
func (b *scoreboard) clearLost(n uint64) {
	s := b.seg(n)
	if s.flags&flagLost != 0 {
		s.flags &^= flagLost
		b.lostOut--
		b.relist(n)
	}
}

// clearRetransOut clears n's SACKED_RETRANS bit.
func (b *scoreboard) clearRetransOut(n uint64) {
	s := b.seg(n)
	if s.flags&flagRetransOut != 0 {
		s.flags &^= flagRetransOut
		b.retransOut--
		b.relist(n)
	}
}

// markLost follows tcp_mark_skb_lost: a sacked segment is never lost; a
// lost segment whose retransmission is in flight has that retransmission
// declared lost too. It reports whether the loss counts towards tp->lost
// (tcp_sum_lost: a first loss or a lost retransmission). The segment stays
// on the time-sorted list (parked); only RACK takes the segments it marks
// off.
func (b *scoreboard) markLost(n uint64) bool {
	s := b.seg(n)
	if s.flags&flagSacked != 0 {
		return false
	}
	if s.flags&flagLost != 0 {
		if s.flags&flagRetransOut != 0 {
			b.clearRetransOut(n)
			return true
		}
		return false
	}
	s.flags |= flagLost
	b.lostOut++
	b.relist(n)
	return true
}

// resent records a retransmission of n at now (__tcp_retransmit_skb's
// bookkeeping): EVER_RETRANS set, the segment moves to the tail of the
// time-sorted list.
func (b *scoreboard) resent(n uint64, now sim.Time) {
	s := b.seg(n)
	s.flags |= flagEverRetrans
	s.sent = now
	b.listAppend(n)
}

// setRetransOut marks n's retransmission as in flight (tcp_retransmit_skb:
// sacked |= TCPCB_RETRANS, retrans_out++).
func (b *scoreboard) setRetransOut(n uint64) {
	s := b.seg(n)
	if s.flags&flagRetransOut == 0 {
		b.retransOut++
	}
	s.flags |= flagRetrans
	b.relist(n)
}

// newSackRanges clips blocks (segment numbers [s, e)) to [una, nxt), returns
// in out the parts not covered by the previous call's blocks, and remembers
// blocks for the next call. This is the kernel's recv_sack_cache trick: a
// receiver repeats its SACK blocks, grown by a segment or two, on every ACK,
// so walking only the new parts keeps per-ACK work small.
func (b *scoreboard) newSackRanges(blocks [][2]uint64, out [][2]uint64) [][2]uint64 {
	out = out[:0]
	var next [4][2]uint64
	nn := 0
	for _, blk := range blocks {
		s, e := max(blk[0], b.una), min(blk[1], b.nxt)
		if s >= e {
			continue
		}
		if nn < len(next) {
			next[nn] = [2]uint64{s, e}
			nn++
		}
		out = b.subtractCache(s, e, out)
	}
	b.cache, b.ncache = next, nn
	return out
}

// subtractCache appends [s, e) minus the cached blocks to out.
func (b *scoreboard) subtractCache(s, e uint64, out [][2]uint64) [][2]uint64 {
	for s < e {
		// Find the cached block that starts lowest and ends after s.
		cs, ce, found := e, e, false
		for i := 0; i < b.ncache; i++ {
			c := b.cache[i]
			if c[1] > s && c[0] < cs {
				cs, ce, found = c[0], c[1], true
			}
		}
		if !found || cs >= e {
			return append(out, [2]uint64{s, e})
		}
		if cs > s {
			out = append(out, [2]uint64{s, cs})
		}
		s = ce
	}
	return out
}
