package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// rackRecoveryThresh is TCP_RACK_RECOVERY_THRESH: recoveries for which a
// widened reordering window persists.
const rackRecoveryThresh = 16

// rackState is tp->rack. Whether reordering was seen is tp->reord_seen
// (DataSender.reordSeen), as mainline reads it.
type rackState struct {
	mstamp        sim.Time // send time of the most recently sent (s)acked segment
	mstampSet     bool
	endSeq        uint64
	rttUs         int64
	advanced      bool
	dsackSeen     bool
	reoWndSteps   uint32
	reoWndPersist uint32
	lastDelivered uint32
}

// stampUsDelta is tcp_stamp_us_delta(tp->tcp_mstamp, t0): the time since
// t0 in the kernel's microsecond clock (both ends truncated to µs, as
// tcp_mstamp and tcp_skb_timestamp_us are), never negative.
func stampUsDelta(now, t0 sim.Time) int64 { return max(usNow(now)-usNow(t0), 0) }

// rackAdvance follows tcp_rack_advance as in mainline Linux 6.x (since
// 4.18): remember the most recently sent segment that was (s)acked, and
// take the RTT of every (s)acked segment, sent later or not. A
// retransmitted segment acked sooner than min_rtt after its
// retransmission was probably acked by its original transmission, so it
// does not count.
func (d *DataSender) rackAdvance(flags uint8, endSeq uint64, xmit sim.Time) {
	r := &d.rack
	rttUs := stampUsDelta(d.st.Now, xmit)
	if rttUs < d.rtt.minRTTUs() && flags&flagRetrans != 0 {
		return
	}
	r.advanced = true
	r.rttUs = rttUs
	if !r.mstampSet || cc.SentAfter(xmit, r.mstamp, endSeq, r.endSeq) {
		r.mstamp, r.mstampSet = xmit, true
		r.endSeq = endSeq
	}
}

// rackReoWndUs follows tcp_rack_reo_wnd as in mainline Linux 6.x (since
// 4.18): with no reordering seen, no window in recovery, nor once
// sacked_out reaches the dupack threshold (tcp_reordering; the sysctl's
// TCP_RACK_NO_DUPTHRESH bit is off by default); otherwise min_rtt/4 per
// step (steps widen on D-SACKs), at most srtt, with no floor. The
// arithmetic is the kernel's u32: with no min_rtt sample yet
// (tcp_min_rtt = ~0U) the product wraps and srtt bounds it.
func (d *DataSender) rackReoWndUs() int64 {
	if d.reordSeen == 0 {
		if d.st.CA >= cc.CARecovery {
			return 0
		}
		if d.sb.sackedOut >= d.reordering {
			return 0
		}
	}
	steps := uint32(d.rtt.minRTTUs()>>2) * d.rack.reoWndSteps
	return int64(min(steps, uint32(d.rtt.srttUs8>>3)))
}

// rackSkbTimeout is tcp_rack_skb_timeout: how long segment s may still go
// unacknowledged, RACK.rtt + reo_wnd after it was sent (µs, ≤ 0: lost).
func (d *DataSender) rackSkbTimeout(s *txSeg, reoWndUs int64) int64 {
	return d.rack.rttUs + reoWndUs - stampUsDelta(d.st.Now, s.sent)
}

// rackDetectLoss follows tcp_rack_detect_loss (mainline Linux 6.x): walk
// the time-sorted list from the oldest transmission; a segment sent before
// the most recently (s)acked one is lost once RACK.rtt + reo_wnd has
// passed since it was sent (remaining <= 0). It returns the longest
// remaining wait (µs, 0: none) and how many segments it marked. The
// segments the kernel skips, marked lost (by an RTO or the dupthresh rule)
// but not yet retransmitted, are not on the list it walks (parked).
//
// The kernel walks every segment sent before the boundary on each ACK: at
// 10 Gbps, once a retransmission is sacked, tens of thousands still in
// flight. The list is in sending order, so remaining grows along it: the
// lost ones are a prefix, and the longest wait is the last segment's
// before the boundary. So the walk marks the prefix, and finds the last
// segment from where the previous walk's was (the boundary only moves on,
// and the scoreboard keeps that segment as the list changes): the same
// marks and the same timeout, without the walk through the rest.
func (d *DataSender) rackDetectLoss() (reoTimeoutUs int64, marked uint32) {
	b := d.sb
	at, end := d.rack.mstamp, d.rack.endSeq
	b.rackAt, b.rackEnd = at, end
	c := b.rackLast
	for {
		next := b.head
		if c >= 0 {
			next = b.seg(uint64(c)).next
		}
		if next < 0 || !cc.SentAfter(at, b.seg(uint64(next)).sent, end, b.seg(uint64(next)).end) {
			break
		}
		c = next
	}
	b.rackLast = c
	if c < 0 {
		return 0, 0
	}
	reo := d.rackReoWndUs()
	for n := b.head; ; {
		s := b.seg(uint64(n))
		next := s.next
		if remaining := d.rackSkbTimeout(s, reo); remaining > 0 {
			return d.rackSkbTimeout(b.seg(uint64(c)), reo), marked
		}
		// tcp_mark_skb_lost, and off the list.
		d.markLost(uint64(n))
		b.listRemove(uint64(n))
		marked++
		if n == c {
			return 0, marked
		}
		n = next
	}
}

// markLost marks segment n lost (tcp_mark_skb_lost) with the loss counter
// and the retransmit hint.
func (d *DataSender) markLost(n uint64) {
	if d.sb.markLost(n) {
		d.lost++
		d.noteRetransCandidate(n)
		if d.hooks.MarkedLost != nil && d.sb.skbEnd(n) == n+1 {
			d.notifySkbLoss(n)
		}
		if d.rec.On() {
			d.event(trace.EvLoss, d.sb.start(n), uint32(d.sb.seg(n).end-d.sb.start(n)))
		}
	}
}

// notifySkbLoss follows the v3 branch's tcp_notify_skb_loss_event for the
// skb that segment n ends, marked lost whole as the kernel marks skbs: the
// hook runs once for it, with its pcount and its tx snapshot (one for the
// skb; see scoreboard.split), after tp->lost counted all of it.
func (d *DataSender) notifySkbLoss(n uint64) {
	pcount := uint32(1)
	for i := n; i > d.sb.una && d.sb.seg(i).flags&flagSkbHead == 0; i-- {
		pcount++
	}
	s := d.sb.seg(n)
	d.fillState()
	d.hooks.MarkedLost.SkbMarkedLost(&d.st, cc.LostPacket{PCount: pcount, TxInFlight: s.tx.InFlight,
		TxLost: s.tx.Lost, TxAppLimited: s.tx.AppLimited})
}

// rackMarkLost follows tcp_rack_mark_lost (mainline Linux 6.x): run
// detection if RACK advanced and arm the reordering timer, rounded up to
// jiffies after adding the TCP_TIMEOUT_MIN_US floor, for segments still
// within the window. It reports whether it armed the timer.
func (d *DataSender) rackMarkLost() bool {
	if !d.rack.advanced {
		return false
	}
	d.rack.advanced = false
	timeout, _ := d.rackDetectLoss()
	if timeout == 0 {
		return false
	}
	d.armXmitTimer(timeReoTimeout, d.rtt.hz.usToJiffies(timeout+timeoutMinUs), d.rto)
	return true
}

// rackReoTimeout follows tcp_rack_reo_timeout (mainline Linux 6.x): the
// reordering window expired; mark what is now lost, start recovery and
// retransmit.
func (d *DataSender) rackReoTimeout() {
	prior, lost := d.sb.inFlight(), d.lost
	d.rackDetectLoss()
	if prior != d.sb.inFlight() {
		if d.st.CA != cc.CARecovery {
			d.enterRecovery(false)
			if d.hooks.CongControl == nil {
				d.cwndReduction(1, int32(d.lost-lost), 0)
			}
		}
		d.xmitRetransmitQueue()
	}
	if d.pending != timeRetrans {
		d.rearmRTO()
	}
}

// rackUpdateReoWnd follows tcp_rack_update_reo_wnd (mainline Linux 6.x,
// unchanged since 4.18): widen the window by a
// step per round trip in which a D-SACK arrived; after 16 recoveries
// without one, return to a single step.
func (d *DataSender) rackUpdateReoWnd(rs *cc.RateSample) {
	r := &d.rack
	if rs.PriorDelivered == 0 {
		return
	}
	if int32(rs.PriorDelivered-r.lastDelivered) < 0 {
		r.dsackSeen = false // a round trip has not passed since the last step
	}
	if r.dsackSeen {
		r.reoWndSteps = min(0xff, r.reoWndSteps+1)
		r.dsackSeen = false
		r.lastDelivered = d.rate.Delivered
		r.reoWndPersist = rackRecoveryThresh
	} else if r.reoWndPersist == 0 {
		r.reoWndSteps = 1
	}
}
