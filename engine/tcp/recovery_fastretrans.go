package tcp

// Fast retransmit: tcp_fastretrans_alert's state machine (tcp_input.c, 6.x)
// and the loss marking it drives when RACK is off (RFC 6675's dupthresh
// rule, tcp_mark_head_lost).

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
		d.undo.priorSSThresh = 0
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
			d.tryToOpen(flag)
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
// sacked segments were passed (with markHead, the head skb alone, whole). Like the kernel's lost_skb_hint the walk
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
		if markHead && d.sb.skbEnd(n) == n+1 {
			break // the head skb, whole
		}
	}
}

// enterRecovery follows tcp_enter_recovery. The undo and give-up clock
// (retrans_stamp) starts with this episode's fast retransmit, unless an
// earlier retransmission is still out (tcp_retrans_stamp_cleanup).
func (d *DataSender) enterRecovery(eceAck bool) {
	if !d.anyRetransDone() {
		d.retransStamp = 0
	}
	d.undo.priorSSThresh = 0
	d.initUndo()
	if !d.inCwndReduction() {
		if !eceAck {
			d.undo.priorSSThresh = d.currentSSThresh()
		}
		d.initCwndReduction()
	}
	d.setCAState(cc.CARecovery)
	d.Stats.Recoveries++
	if d.rec.On() {
		d.event(trace.EvRecoveryEnter, d.sndUna, 0)
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
