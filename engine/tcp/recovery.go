package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/trace"
)

// fastretransAlert follows tcp_fastretrans_alert: the Linux NewReno/SACK/ECN
// state machine, run on every ACK that is dubious (a dupack, SACK, ECE,
// D-SACK) or arrives outside Open.
func (d *DataSender) fastretransAlert(priorSndUna uint64, numDupack int, flagp *int, rexmit *int) {
	flag := *flagp
	eceAck := flag&flagECE != 0
	doLost := numDupack > 0 || flag&flagDataSacked != 0 && d.forceFastRetransmit()
	fastRexmit := false

	if d.sb.packetsOut() == 0 && d.sb.sackedOut > 0 {
		d.sb.sackedOut = 0
	}
	// A. ECE: congestion is proven, no undo.
	if eceAck {
		d.priorSSThresh = 0
	}
	// D. State exit when high_seq is acked.
	if d.st.CA == cc.CAOpen {
		d.retransStamp = 0
	} else if d.sndUna >= d.highSeq {
		switch d.st.CA {
		case cc.CACWR:
			// Hold CWR until something above high_seq is acked, so the
			// CWR flag reached the receiver.
			if d.sndUna != d.highSeq {
				d.endCwndReduction()
				d.setCAState(cc.CAOpen)
			}
		case cc.CARecovery:
			if !d.isSACK() {
				d.sb.sackedOut = 0 // tcp_reset_reno_sack
			}
			if d.tryUndoRecovery() {
				return
			}
			d.endCwndReduction()
			if d.rec.On() {
				d.event(trace.EvRecoveryExit, d.sndUna, 0)
			}
		}
	}
	// E. Process state.
	switch d.st.CA {
	case cc.CARecovery:
		if flag&flagSndUnaAdvanced == 0 {
			if !d.isSACK() {
				d.addRenoSack(numDupack, eceAck)
			}
		} else if d.tryUndoPartial(priorSndUna, &doLost) {
			return
		}
		if d.tryUndoDSack() {
			d.tryKeepOpen()
		}
		d.identifyPacketLoss(flagp)
		if d.st.CA != cc.CARecovery {
			if !d.timeToRecover() {
				return
			}
			d.enterRecovery(eceAck)
		}
	case cc.CALoss:
		d.processLoss(flag, numDupack, rexmit)
		d.identifyPacketLoss(flagp)
		if !(d.st.CA == cc.CAOpen || *flagp&flagLostRetrans != 0) {
			return
		}
		d.fastretransDefault(flag, numDupack, eceAck, flagp, &fastRexmit)
		if d.st.CA != cc.CARecovery && !fastRexmit {
			return
		}
	default:
		d.fastretransDefault(flag, numDupack, eceAck, flagp, &fastRexmit)
		if d.st.CA != cc.CARecovery {
			return
		}
	}
	if !d.isRACK() && doLost {
		d.updateScoreboard(fastRexmit)
	}
	*rexmit = rexmitLost
}

// fastretransDefault is the default branch of tcp_fastretrans_alert's state
// switch (Open, Disorder, CWR, and Loss falling through): enter recovery if
// it is time. It leaves CA in Recovery when it did.
func (d *DataSender) fastretransDefault(flag, numDupack int, eceAck bool, flagp *int, fastRexmit *bool) {
	if !d.isSACK() {
		if flag&flagSndUnaAdvanced != 0 {
			d.sb.sackedOut = 0
		}
		d.addRenoSack(numDupack, eceAck)
	}
	if d.st.CA <= cc.CADisorder {
		d.tryUndoDSack()
	}
	d.identifyPacketLoss(flagp)
	if !d.timeToRecover() {
		d.tryToOpen(flag)
		return
	}
	d.enterRecovery(eceAck)
	*fastRexmit = true
}

// forceFastRetransmit is tcp_force_fast_retransmit.
func (d *DataSender) forceFastRetransmit() bool {
	return d.highestSackSeq() > d.sndUna+uint64(d.reordering)*d.mss
}

// timeToRecover is tcp_time_to_recover: loss is proven, or (without RACK)
// more than `reordering` segments are sacked or dupacked.
func (d *DataSender) timeToRecover() bool {
	if d.sb.lostOut > 0 {
		return true
	}
	return !d.isRACK() && d.sb.sackedOut+1 > d.reordering
}

// identifyPacketLoss is tcp_identify_packet_loss.
func (d *DataSender) identifyPacketLoss(flagp *int) {
	if d.sb.packetsOut() == 0 {
		return
	}
	if !d.isSACK() {
		d.newrenoMarkLost(*flagp&flagSndUnaAdvanced != 0)
	} else if d.isRACK() {
		prior := d.sb.retransOut
		if d.rackMarkLost() {
			*flagp &^= flagSetXmitTimer
		}
		if prior > d.sb.retransOut {
			*flagp |= flagLostRetrans
		}
	}
}

// newrenoMarkLost follows tcp_newreno_mark_lost: without SACK, the head is
// lost after `reordering` dupacks, and again on each partial ACK.
func (d *DataSender) newrenoMarkLost(sndUnaAdvanced bool) {
	if d.st.CA < cc.CARecovery && d.sb.sackedOut >= d.reordering ||
		d.st.CA == cc.CARecovery && sndUnaAdvanced {
		if d.sb.seg(d.sb.una).flags&flagLost != 0 {
			return
		}
		d.markLost(d.sb.una)
	}
}

// updateScoreboard follows tcp_update_scoreboard (SACK without RACK):
// segments with at least `reordering` sacked segments above them are lost.
func (d *DataSender) updateScoreboard(fastRexmit bool) {
	if !d.isSACK() {
		return
	}
	sackedUpto := int64(d.sb.sackedOut) - int64(d.reordering)
	if sackedUpto >= 0 {
		d.markHeadLost(uint32(sackedUpto), false)
	} else if fastRexmit {
		d.markHeadLost(1, true)
	}
}

// markHeadLost follows tcp_mark_head_lost: walk from the head, counting
// sacked segments, marking the unsacked ones lost until more than packets
// sacked segments were passed. Like the kernel's lost_skb_hint the walk
// resumes where the previous one stopped.
func (d *DataSender) markHeadLost(packets uint32, markHead bool) {
	n, cnt := d.sb.una, uint32(0)
	if d.lostHint > n {
		if markHead {
			return // the head is already handled
		}
		n, cnt = d.lostHint, d.lostCntHint
	}
	for ; n < d.sb.nxt; n++ {
		d.lostHint, d.lostCntHint = n, cnt
		s := d.sb.seg(n)
		if s.flags&flagSacked != 0 {
			cnt++
		}
		if cnt > packets {
			break
		}
		if s.flags&flagLost == 0 {
			d.markLost(n)
		}
		if markHead {
			break
		}
	}
}

// enterRecovery follows tcp_enter_recovery.
func (d *DataSender) enterRecovery(eceAck bool) {
	d.priorSSThresh = 0
	d.initUndo()
	if !d.inCwndReduction() {
		if !eceAck {
			d.priorSSThresh = d.currentSSThresh()
		}
		d.initCwndReduction()
	}
	d.setCAState(cc.CARecovery)
	d.Stats.Recoveries++
	if d.rec.On() {
		d.event(trace.EvRecoveryEnter, d.sndUna, 0)
	}
}

// initUndo is tcp_init_undo.
func (d *DataSender) initUndo() {
	d.undoMarker = d.sndUna
	d.undoRetrans = int32(d.sb.retransOut)
	if d.undoRetrans == 0 {
		d.undoRetrans = -1
	}
}

// initCwndReduction follows tcp_init_cwnd_reduction (PRR's start).
func (d *DataSender) initCwndReduction() {
	d.highSeq = d.sndNxt
	d.tlpHighSeq = 0
	d.st.CwndCnt = 0
	d.st.PriorCwndPkts = d.st.CwndPkts
	d.prrDelivered, d.prrOut = 0, 0
	d.st.SSThreshPkts = d.ssthresh()
	d.queueECNCWR()
}

// queueECNCWR is tcp_ecn_queue_cwr: the next new segment carries CWR.
func (d *DataSender) queueECNCWR() {
	if d.ecnOK {
		d.queueCWR = true
	}
}

// cwndReduction follows tcp_cwnd_reduction, Proportional Rate Reduction
// (RFC 6937): while in flight exceeds ssthresh, send ssthresh/prior_cwnd of
// what is delivered; below it, slow-start back up (PRR-SSRB). Without PRR
// the window drops to ssthresh at once (the pre-PRR rate-halving-free
// behaviour).
func (d *DataSender) cwndReduction(newlyAckedSacked, newlyLost int32, flag int) {
	if newlyAckedSacked <= 0 || d.st.PriorCwndPkts == 0 {
		return
	}
	if !d.cfg.Opts.PRR {
		d.st.CwndPkts = max(d.st.SSThreshPkts, 1)
		return
	}
	inFlight := int64(d.sb.inFlight())
	delta := int64(d.st.SSThreshPkts) - inFlight
	d.prrDelivered += uint32(newlyAckedSacked)
	var sndcnt int64
	if delta < 0 {
		dividend := uint64(d.st.SSThreshPkts)*uint64(d.prrDelivered) + uint64(d.st.PriorCwndPkts) - 1
		sndcnt = int64(dividend/uint64(d.st.PriorCwndPkts)) - int64(d.prrOut)
	} else {
		sndcnt = max(int64(d.prrDelivered)-int64(d.prrOut), int64(newlyAckedSacked))
		if flag&flagSndUnaAdvanced != 0 && newlyLost == 0 {
			sndcnt++
		}
		sndcnt = min(delta, sndcnt)
	}
	// Force a fast retransmit upon entering fast recovery.
	if d.prrOut == 0 {
		sndcnt = max(sndcnt, 1)
	} else {
		sndcnt = max(sndcnt, 0)
	}
	d.st.CwndPkts = uint32(inFlight + sndcnt)
}

// endCwndReduction follows tcp_end_cwnd_reduction.
func (d *DataSender) endCwndReduction() {
	if d.hooks.CongControl != nil {
		return
	}
	if d.st.SSThreshPkts < infiniteSSThresh && (d.st.CA == cc.CACWR || d.undoMarker != 0) {
		d.st.CwndPkts = d.st.SSThreshPkts
		d.cwndStamp = d.st.Now
	}
	d.caEvent(cc.EventCompleteCWR)
}

// enterCWR follows tcp_enter_cwr: an ECN-echo reduces cwnd once per window,
// with no undo.
func (d *DataSender) enterCWR() {
	d.priorSSThresh = 0
	if d.st.CA < cc.CACWR {
		d.undoMarker = 0
		d.initCwndReduction()
		d.setCAState(cc.CACWR)
	}
}

// tryKeepOpen is tcp_try_keep_open.
func (d *DataSender) tryKeepOpen() {
	state := cc.CAOpen
	if d.sb.sackedOut+d.sb.lostOut > 0 || d.anyRetransDone() {
		state = cc.CADisorder
	}
	if d.st.CA != state {
		d.setCAState(state)
		d.highSeq = d.sndNxt
	}
}

// tryToOpen is tcp_try_to_open.
func (d *DataSender) tryToOpen(flag int) {
	if !d.anyRetransDone() {
		d.retransStamp = 0
	}
	if flag&flagECE != 0 {
		d.enterCWR()
	}
	if d.st.CA != cc.CACWR {
		d.tryKeepOpen()
	}
}

// anyRetransDone is tcp_any_retrans_done.
func (d *DataSender) anyRetransDone() bool {
	if d.sb.retransOut > 0 {
		return true
	}
	return d.sb.packetsOut() > 0 && d.sb.seg(d.sb.una).flags&flagEverRetrans != 0
}

// packetDelayed is tcp_packet_delayed: the echoed timestamp predates the
// first retransmission, so the original arrived.
func (d *DataSender) packetDelayed() bool {
	return d.retransStamp != 0 && d.tsecrBefore(d.retransStamp)
}

// mayUndo is tcp_may_undo.
func (d *DataSender) mayUndo() bool {
	return d.undoMarker != 0 && (d.undoRetrans == 0 || d.packetDelayed())
}

// undoCwndReduction follows tcp_undo_cwnd_reduction.
func (d *DataSender) undoCwndReduction(unmarkLoss bool) {
	if unmarkLoss {
		for n := d.sb.una; n < d.sb.nxt; n++ {
			d.sb.clearLost(n)
		}
		d.lostHint, d.lostCntHint = 0, 0
	}
	if d.priorSSThresh != 0 {
		d.fillState()
		d.st.CwndPkts = d.hooks.UndoCwnd(&d.st)
		if d.priorSSThresh > d.st.SSThreshPkts {
			d.st.SSThreshPkts = d.priorSSThresh
			d.queueCWR = false // tcp_ecn_withdraw_cwr
		}
	}
	d.cwndStamp = d.st.Now
	d.undoMarker = 0
	d.rack.advanced = true // force RACK to re-examine losses
	d.Stats.Undos++
	if d.rec.On() {
		d.event(trace.EvUndo, d.sndUna, 0)
	}
}

// nonSACKPreventingReopen is tcp_is_non_sack_preventing_reopen: Reno holds
// the state until something above high_seq is acked (RFC 2582).
func (d *DataSender) nonSACKPreventingReopen() bool {
	if d.sndUna == d.highSeq && !d.isSACK() {
		if !d.anyRetransDone() {
			d.retransStamp = 0
		}
		return true
	}
	return false
}

// tryUndoRecovery follows tcp_try_undo_recovery.
func (d *DataSender) tryUndoRecovery() bool {
	if d.mayUndo() {
		d.undoCwndReduction(false)
	} else if d.rack.reoWndPersist > 0 {
		d.rack.reoWndPersist--
	}
	if d.nonSACKPreventingReopen() {
		return true
	}
	d.setCAState(cc.CAOpen)
	return false
}

// tryUndoDSack follows tcp_try_undo_dsack: D-SACKs covered every
// retransmission.
func (d *DataSender) tryUndoDSack() bool {
	if d.undoMarker != 0 && d.undoRetrans == 0 {
		d.rack.reoWndPersist = min(rackRecoveryThresh, d.rack.reoWndPersist+1)
		d.undoCwndReduction(false)
		return true
	}
	return false
}

// tryUndoLoss follows tcp_try_undo_loss.
func (d *DataSender) tryUndoLoss(frtoUndo bool) bool {
	if frtoUndo || d.mayUndo() {
		d.undoCwndReduction(true)
		d.retransmits = 0
		if d.nonSACKPreventingReopen() {
			return true
		}
		if frtoUndo || d.isSACK() {
			d.setCAState(cc.CAOpen)
		}
		return true
	}
	return false
}

// tryUndoPartial follows tcp_try_undo_partial.
func (d *DataSender) tryUndoPartial(priorSndUna uint64, doLost *bool) bool {
	if d.undoMarker != 0 && d.packetDelayed() {
		// The hole was filled by a delayed original: reordering.
		d.checkSackReordering(priorSndUna, true)
		if d.sb.retransOut > 0 {
			return true
		}
		if !d.anyRetransDone() {
			d.retransStamp = 0
		}
		d.undoCwndReduction(true)
		d.tryKeepOpen()
	} else {
		*doLost = d.forceFastRetransmit()
	}
	return false
}

// enterLoss follows tcp_enter_loss, on an RTO: everything unsacked is lost,
// ssthresh drops once per window, cwnd becomes in-flight + 1, and F-RTO
// starts if enabled.
func (d *DataSender) enterLoss() {
	newRecovery := d.st.CA < cc.CARecovery
	d.timeoutMarkLost()
	if d.st.CA <= cc.CADisorder || d.highSeq <= d.sndUna || d.st.CA == cc.CALoss && d.retransmits == 0 {
		d.priorSSThresh = d.currentSSThresh()
		d.st.PriorCwndPkts = d.st.CwndPkts
		d.st.SSThreshPkts = d.ssthresh()
		d.caEvent(cc.EventLoss)
		d.initUndo()
	}
	d.st.CwndPkts = d.sb.inFlight() + 1
	d.st.CwndCnt = 0
	d.cwndStamp = d.st.Now
	if d.st.CA <= cc.CADisorder && d.sb.sackedOut >= reorderingInit {
		d.reordering = min(d.reordering, reorderingInit)
	}
	d.setCAState(cc.CALoss)
	d.highSeq = d.sndNxt
	d.queueECNCWR()
	d.frto = d.cfg.Opts.FRTO && (newRecovery || d.retransmits > 0)
}

// timeoutMarkLost follows tcp_timeout_mark_lost: on an RTO the head and
// every unsacked segment sent longer than RACK.rtt ago are lost (without
// RACK, every unsacked segment); segments sent more recently may still be
// acked.
func (d *DataSender) timeoutMarkLost() {
	if !d.isSACK() {
		d.sb.sackedOut = 0 // tcp_reset_reno_sack
	}
	for n := d.sb.una; n < d.sb.nxt; n++ {
		s := d.sb.seg(n)
		if s.flags&flagSacked != 0 {
			continue
		}
		// With RACK, tcp_rack_skb_timeout(tp, skb, 0) > 0: sent within
		// RACK.rtt.
		if d.isRACK() && n != d.sb.una && d.rackSkbTimeout(s, 0) > 0 {
			continue
		}
		d.markLost(n)
	}
	d.rtxHint = d.sb.una
	d.lostHint, d.lostCntHint = 0, 0
}

// processLoss follows tcp_process_loss: ACKs in Loss; F-RTO (RFC 5682)
// undoes a spurious timeout when never-retransmitted data is acked.
func (d *DataSender) processLoss(flag, numDupack int, rexmit *int) {
	recovered := d.sndUna >= d.highSeq
	if flag&flagSndUnaAdvanced != 0 && d.tryUndoLoss(false) {
		return
	}
	if d.frto {
		// Step 3.b: spurious if never-retransmitted data was (s)acked.
		if flag&flagOrigSackAcked != 0 && d.tryUndoLoss(true) {
			return
		}
		if d.sndNxt > d.highSeq {
			if flag&flagDataSacked != 0 || numDupack > 0 {
				d.frto = false // step 3.a: the loss was real
			}
		} else if flag&flagSndUnaAdvanced != 0 && !recovered {
			d.highSeq = d.sndNxt
			// Step 2.b: send new data, deferred until cwnd is updated.
			d.fillWrite()
			if d.writeSeq > d.sndNxt && d.sndUna+d.sndWnd > d.sndNxt {
				*rexmit = rexmitNew
				return
			}
			d.frto = false
		}
	}
	if recovered {
		d.tryUndoRecovery() // step 2.a and the first part of 3.a
		return
	}
	if !d.isSACK() {
		if d.sndNxt > d.highSeq && numDupack > 0 {
			d.addRenoSack(numDupack, flag&flagECE != 0)
		} else if flag&flagSndUnaAdvanced != 0 {
			d.sb.sackedOut = 0
		}
	}
	*rexmit = rexmitLost
}

// xmitRecovery is tcp_xmit_recovery: after cwnd is updated, send new data
// for F-RTO or retransmit lost segments.
func (d *DataSender) xmitRecovery(rexmit int) {
	if rexmit == rexmitNone {
		return
	}
	if rexmit == rexmitNew {
		d.push()
		if d.sndNxt > d.highSeq {
			return
		}
		d.frto = false
	}
	d.xmitRetransmitQueue()
}

// addRenoSack follows tcp_add_reno_sack: without SACK each dupack counts as
// one segment that left the network.
func (d *DataSender) addRenoSack(numDupack int, eceAck bool) {
	if numDupack == 0 {
		return
	}
	prior := d.sb.sackedOut
	d.sb.sackedOut += uint32(numDupack)
	d.limitRenoSacked()
	if delivered := int32(d.sb.sackedOut - prior); delivered > 0 {
		d.countDelivered(uint32(delivered), eceAck)
	}
}

// limitRenoSacked is tcp_limit_reno_sacked: dupacks cannot exceed what is
// out minus the holes; an excess means reordering.
func (d *DataSender) limitRenoSacked() {
	out := d.sb.packetsOut()
	holes := min(max(d.sb.lostOut, 1), out)
	if d.sb.sackedOut+holes > out {
		d.sb.sackedOut = out - holes
		d.checkSackReordering(d.sndUna+uint64(out)*d.mss, false)
	}
}

// removeRenoSacks follows tcp_remove_reno_sacks: a cumulative ACK consumes
// the dupacks it accounts for.
func (d *DataSender) removeRenoSacks(acked uint32, eceAck bool) {
	if acked == 0 {
		return
	}
	d.countDelivered(max(acked-min(acked, d.sb.sackedOut), 1), eceAck)
	if acked-1 >= d.sb.sackedOut {
		d.sb.sackedOut = 0
	} else {
		d.sb.sackedOut -= acked - 1
	}
}
