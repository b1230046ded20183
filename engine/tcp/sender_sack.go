package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/trace"
)

// sacktag follows tcp_sacktag_write_queue: detect a D-SACK, then tag the
// segments the SACK blocks newly cover. It starts its state afresh, on an
// old ACK's path too: the lowest newly sacked sequence starts at snd_nxt,
// so a block that tags nothing leaves the reordering metric alone.
func (d *DataSender) sacktag(p *packet.Packet, priorSndUna uint64, ss *sackTagState) int {
	ss.flag, ss.reord = 0, d.sndNxt
	blocks := p.Sack[:p.NSack]
	first := 0
	// The D-SACKed segments still in the queue are tagged with dup_sack
	// (tcp_sacktag_one): those this ACK acks too are still there, as
	// tcp_clean_rtx_queue frees them later, and count against
	// undo_retrans; only blocks at or below prior_snd_una are "very old
	// stuff", counted by checkDSack. The kernel sorts the D-SACK block
	// among the others by its start, so its segments are tagged in
	// sequence order with the rest (inside a block that starts lower, in
	// that block's walk: next_dup).
	var db packet.SackBlock
	dupLo, dupHi := uint64(0), uint64(0)
	inner := false // inside a block that starts lower (sorted after it)
	if d.checkDSack(p, blocks, priorSndUna, ss) {
		first = 1
		db = blocks[0]
		if db.End > priorSndUna && db.Start >= 1 {
			dupLo = max(d.sb.segOf(db.Start), d.sb.una)
			dupHi = min(d.sb.segOf(db.End-1)+1, d.sb.nxt)
		}
		inner = len(blocks) > 1 && db.Start > blocks[1].Start && db.End <= blocks[1].End
	}
	inDup := func(n uint64) bool {
		return n >= dupLo && n < dupHi && d.sb.start(n) >= db.Start && d.sb.seg(n).end <= db.End
	}
	walkDup := func(lo, hi uint64) {
		for n := max(lo, dupLo); n < min(hi, dupHi); n++ {
			if inDup(n) {
				d.sacktagOne(n, true, ss)
			}
		}
	}
	var segBlocks [packet.MaxSack][2]uint64
	nb := 0
	for _, b := range blocks[first:] {
		if b.End <= b.Start || b.Start < 1 {
			continue
		}
		// Whole segments inside [Start, End).
		s := (b.Start - 1 + d.mss - 1) / d.mss
		e := min(d.sb.segOf(b.End-1), d.sb.nxt)
		if e < d.sb.nxt && e >= d.sb.una && d.sb.seg(e).end <= b.End {
			e++
		}
		if e > s {
			// In order of start, as the kernel sorts the blocks "to allow
			// in order walk of the retrans queue": a receiver lists its
			// newest block first, and walking a compressed SACK's new
			// blocks newest first would take each lower one for
			// reordering (tcp_check_sack_reordering).
			i := nb
			for ; i > 0 && segBlocks[i-1][0] > s; i-- {
				segBlocks[i] = segBlocks[i-1]
			}
			segBlocks[i] = [2]uint64{s, e}
			nb++
		}
	}
	d.scratch = d.sb.newSackRanges(segBlocks[:nb], d.scratch)
	next := dupLo // D-SACKed segments below next are tagged
	for _, r := range d.scratch {
		walkDup(next, r[0])
		next = max(next, r[1])
		for n := r[0]; n < r[1]; n++ {
			if inDup(n) {
				d.sacktagOne(n, true, ss)
				continue
			}
			// A segment SACKed before has nothing to give unless it was
			// sent again since (its snapshot valid again: see sacktagOne);
			// the flags share its cache line, the snapshot does not.
			if f := d.sb.seg(n).flags; f&flagSacked == 0 || f&flagRetrans != 0 {
				d.sacktagOne(n, false, ss)
			}
		}
	}
	walkDup(next, dupHi)
	// When the walk of the block holding the D-SACK ran off the end of
	// the queue (skb NULL), tcp_sacktag_write_queue's turn for the D-SACK
	// block finds its first skb again (tcp_sacktag_skip's bsearch) and
	// tags its segments a second time.
	if n := len(d.scratch); inner && n > 0 && d.scratch[n-1][1] == d.sb.nxt && dupLo < dupHi &&
		d.sb.segOf(blocks[1].End-1) >= d.sb.nxt-1 {
		walkDup(dupLo, dupHi)
	}
	// tcp_check_sack_reordering unless in Loss after an undo was ruled out.
	if d.st.CA != cc.CALoss || d.undo.marker != 0 {
		d.checkSackReordering(ss.reord)
	}
	return ss.flag
}

// checkDSack follows tcp_check_dsack and tcp_dsack_seen: the first block is
// a D-SACK if it lies below the cumulative ACK or inside the second block.
func (d *DataSender) checkDSack(p *packet.Packet, blocks []packet.SackBlock, priorSndUna uint64, ss *sackTagState) bool {
	if len(blocks) == 0 {
		return false
	}
	b0 := blocks[0]
	if b0.Start >= p.Ack {
		if len(blocks) < 2 || b0.End > blocks[1].End || b0.Start < blocks[1].Start {
			return false
		}
	}
	if b0.Start >= b0.End {
		return false
	}
	length := b0.End - b0.Start
	if length > d.maxWnd && d.maxWnd > 0 {
		return false // dubious: larger than any window advertised
	}
	dupSegs := uint32(1)
	if length > d.mss {
		dupSegs = uint32((length + d.mss - 1) / d.mss)
	} else if d.tlp.highSeq != 0 && d.tlp.highSeq == b0.End {
		ss.flag |= flagDSackTLP
	}
	d.dsackDups += dupSegs
	if d.dsackDups > d.totalRetrans {
		return false // duplicates the sender never retransmitted
	}
	if d.reordSeen > 0 && ss.flag&flagDSackTLP == 0 {
		d.rack.dsackSeen = true
	}
	ss.flag |= flagDSackingAck
	ss.sackDelivered += dupSegs // a spurious retransmission was delivered
	if d.rec.On() {
		d.event(trace.EvDSack, b0.Start, uint32(length))
	}
	// D-SACK for data already cumulatively acked: dumb counting.
	if d.undo.marker != 0 && d.undo.retrans > 0 && b0.End <= priorSndUna && b0.End > d.undo.marker {
		d.undo.retrans = max(0, d.undo.retrans-int32(dupSegs))
	}
	return true
}

// sacktagOne follows tcp_sacktag_one for segment n.
func (d *DataSender) sacktagOne(n uint64, dup bool, ss *sackTagState) {
	s := d.sb.seg(n)
	start := d.sb.start(n)
	if dup && s.flags&flagRetrans != 0 {
		if d.undo.marker != 0 && d.undo.retrans > 0 && s.end > d.undo.marker {
			d.undo.retrans--
		}
		if s.flags&flagSacked != 0 && start < ss.reord {
			ss.reord = start
		}
	}
	if s.end <= d.sndUna {
		return
	}
	if s.flags&flagSacked == 0 {
		d.rackAdvance(s.flags, s.end, s.sent)
		if s.flags&flagRetransOut != 0 {
			// A retransmission not marked lost is believed in flight.
			if s.flags&flagLost != 0 {
				d.sb.clearLost(n)
				d.sb.clearRetransOut(n)
			}
		} else {
			if s.flags&flagRetrans == 0 {
				// A never-retransmitted segment in a hole: reordering.
				if start < d.highestSackSeq() && start < ss.reord {
					ss.reord = start
				}
				if s.end <= d.highSeq {
					ss.flag |= flagOrigSackAcked
				}
				if !ss.sackedAny {
					ss.firstSackt, ss.sackedAny = s.sent, true
				}
				ss.lastSackt = s.sent
			}
			d.sb.clearLost(n)
		}
		d.sb.markSacked(n)
		if d.lostHint > n && d.lostHint > d.sb.una {
			d.lostCntHint++ // tcp_mark_head_lost's count passes this segment
		}
		ss.flag |= flagDataSacked
		ss.sackDelivered++
		if s.end > d.highestSackEnd {
			d.highestSackEnd = s.end
		}
		d.rate.SkbDelivered(&s.tx, s.rateSkb(), &ss.rate, &ss.hasPrior)
	} else {
		// tcp_sacktag_walk calls tcp_rate_skb_delivered for every skb in
		// the block it walks, sacked before or not: one sacked before and
		// retransmitted since (a loss probe of a sacked tail) has a valid
		// snapshot again, which this sample takes and clears.
		d.rate.SkbDelivered(&s.tx, s.rateSkb(), &ss.rate, &ss.hasPrior)
	}
	if dup && s.flags&flagRetransOut != 0 {
		d.sb.clearRetransOut(n)
	}
}

// checkSackReordering follows tcp_check_sack_reordering: a hole at lowSeq
// filled below the highest SACK means reordering of that many segments. (Its
// kernel form's ts argument only picks the MIB counter.)
func (d *DataSender) checkSackReordering(lowSeq uint64) {
	fack := d.highestSackSeq()
	if lowSeq >= fack {
		return
	}
	metric := fack - lowSeq
	if metric > uint64(d.reordering)*d.mss {
		d.reordering = uint32(min((metric+d.mss-1)/d.mss, reorderingMax))
	}
	d.reordSeen++
}
