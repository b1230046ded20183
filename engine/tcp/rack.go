package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// rackRecoveryThresh is TCP_RACK_RECOVERY_THRESH: recoveries for which a
// widened reordering window persists.
const rackRecoveryThresh = 16

// rackState is tp->rack.
type rackState struct {
	mstamp        sim.Time // send time of the most recently sent (s)acked segment
	mstampSet     bool
	endSeq        uint64
	rttUs         int64
	advanced      bool
	reord         bool // reordering has been seen
	dsackSeen     bool
	reoWndSteps   uint32
	reoWndPersist uint32
	lastDelivered uint32
}

// rackAdvance follows tcp_rack_advance: remember the most recently sent
// segment that was (s)acked and the RTT it implies. A retransmitted segment
// acked sooner than min_rtt after its retransmission was probably acked by
// its original transmission, so it does not count.
func (d *DataSender) rackAdvance(flags uint8, endSeq uint64, xmit sim.Time) {
	r := &d.rack
	if r.mstampSet && !sentAfter(xmit, r.mstamp, endSeq, r.endSeq) {
		return
	}
	rttUs := toUs(d.st.Now.Sub(xmit))
	if flags&flagRetrans != 0 && rttUs < d.rtt.minRTTUs() {
		return
	}
	r.rttUs = rttUs
	r.mstamp, r.mstampSet = xmit, true
	r.endSeq = endSeq
	r.advanced = true
}

// rackReoWnd is the reordering window of tcp_rack_detect_loss: min_rtt/4
// per step (steps widen on D-SACKs), at least 1 ms, at most srtt; 1 ms in
// recovery unless reordering was seen.
func (d *DataSender) rackReoWndUs() int64 {
	reo := int64(1000)
	minRTT := d.rtt.minRTTUs()
	if (d.rack.reord || d.st.CA < cc.CARecovery) && d.rtt.minRTT.valid {
		reo = max((minRTT>>2)*int64(d.rack.reoWndSteps), reo)
		reo = min(reo, d.rtt.srttUs8>>3)
	}
	return reo
}

// rackDetectLoss follows tcp_rack_detect_loss: walk the time-sorted list
// from the oldest transmission; a segment sent before the most recently
// (s)acked one is lost once RACK.rtt + reo_wnd has passed since it was
// sent. It returns the longest remaining wait (µs, 0: none) and how many
// segments it marked.
func (d *DataSender) rackDetectLoss() (reoTimeoutUs int64, marked uint32) {
	reo := d.rackReoWndUs()
	nowUs := d.st.Now
	for n := d.sb.head; n >= 0; {
		s := d.sb.seg(uint64(n))
		next := s.next
		// Skip segments marked lost (by an RTO or the dupthresh rule)
		// but not yet retransmitted.
		if s.flags&flagLost != 0 && s.flags&flagRetransOut == 0 {
			n = next
			continue
		}
		if !sentAfter(d.rack.mstamp, s.sent, d.rack.endSeq, s.end) {
			break
		}
		remaining := d.rack.rttUs + reo - toUs(nowUs.Sub(s.sent))
		if remaining < 0 {
			// tcp_rack_mark_skb_lost: marked, and off the list.
			d.markLost(uint64(n))
			d.sb.listRemove(uint64(n))
			marked++
		} else {
			reoTimeoutUs = max(reoTimeoutUs, remaining+1)
		}
		n = next
	}
	return reoTimeoutUs, marked
}

// markLost marks segment n lost (tcp_mark_skb_lost) with the loss counter
// and the retransmit hint.
func (d *DataSender) markLost(n uint64) {
	if d.sb.markLost(n) {
		d.lost++
		d.noteRetransCandidate(n)
		if d.hooks.MarkedLost != nil { // tcp_notify_skb_loss_event (BBRv3)
			s := d.sb.seg(n)
			d.fillState()
			d.hooks.MarkedLost.SkbMarkedLost(&d.st, cc.LostPacket{PCount: 1, TxInFlight: s.txInFlight,
				TxLost: s.txLost, TxAppLimited: s.appLimited})
		}
		if d.rec.On() {
			d.event(trace.EvLoss, d.sb.start(n), uint32(d.sb.seg(n).end-d.sb.start(n)))
		}
	}
}

// rackMarkLost follows tcp_rack_mark_lost: run detection if RACK advanced
// and arm the reordering timer for segments still within the window. It
// reports whether it armed the timer.
func (d *DataSender) rackMarkLost() bool {
	if !d.rack.advanced {
		return false
	}
	d.rack.advanced = false
	timeout, _ := d.rackDetectLoss()
	if timeout == 0 {
		return false
	}
	d.armXmitTimer(timeReoTimeout, usToJiffies(timeout)+timeoutMinUs/1000*jiffy, d.rto)
	return true
}

// rackReoTimeout follows tcp_rack_reo_timeout: the reordering window
// expired; mark what is now lost, start recovery and retransmit.
func (d *DataSender) rackReoTimeout() {
	prior := d.sb.inFlight()
	d.rackDetectLoss()
	if prior != d.sb.inFlight() {
		if d.st.CA != cc.CARecovery {
			d.enterRecovery(false)
			if d.hooks.CongControl == nil {
				d.cwndReduction(1, 0, 0)
			}
		}
		d.xmitRetransmitQueue()
	}
	if d.pending != timeRetrans {
		d.rearmRTO()
	}
}

// rackUpdateReoWnd follows tcp_rack_update_reo_wnd: widen the window by a
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
		r.lastDelivered = d.rate.delivered
		r.reoWndPersist = rackRecoveryThresh
	} else if r.reoWndPersist == 0 {
		r.reoWndSteps = 1
	}
}
