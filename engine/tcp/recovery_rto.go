package tcp

// RTO recovery: tcp_enter_loss, tcp_timeout_mark_lost and the Loss state's
// ACK processing, tcp_process_loss, with F-RTO (RFC 5682).

import "github.com/ccscope/ccscope/engine/cc"

// enterLoss follows tcp_enter_loss, on an RTO: everything unsacked is lost,
// ssthresh drops once per window, cwnd becomes in-flight + 1, and F-RTO
// starts if enabled.
func (d *DataSender) enterLoss() {
	newRecovery := d.st.CA < cc.CARecovery
	d.timeoutMarkLost()
	if d.st.CA <= cc.CADisorder || d.highSeq <= d.sndUna || d.st.CA == cc.CALoss && d.retransmits == 0 {
		d.undo.priorSSThresh = d.currentSSThresh()
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
	d.tlp.highSeq = 0 // an RTO ends the loss probe's episode
	d.queueECNCWR()
	d.frto = d.cfg.Opts.FRTO && (newRecovery || d.retransmits > 0)
}

// timeoutMarkLost follows tcp_timeout_mark_lost: on an RTO the head skb and
// every unsacked segment sent longer than RACK.rtt ago are lost (without
// RACK, every unsacked segment); segments sent more recently may still be
// acked.
func (d *DataSender) timeoutMarkLost() {
	if !d.isSACK() {
		d.sb.sackedOut = 0 // tcp_reset_reno_sack
	}
	headEnd := d.sb.skbEnd(d.sb.una) // the head skb is lost whole
	for n := d.sb.una; n < d.sb.nxt; n++ {
		s := d.sb.seg(n)
		if s.flags&flagSacked != 0 {
			continue
		}
		// With RACK, tcp_rack_skb_timeout(tp, skb, 0) > 0: sent within
		// RACK.rtt.
		if d.isRACK() && n >= headEnd && d.rackSkbTimeout(s, 0) > 0 {
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
