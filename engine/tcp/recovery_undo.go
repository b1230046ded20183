package tcp

// Undo: the detection of spurious reductions (tcp_may_undo: D-SACK, RFC
// 2883; timestamps, RFC 3522) and tcp_undo_cwnd_reduction.

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/trace"
)

// undoState is the bookkeeping that proves a cwnd reduction spurious
// (struct tcp_sock's undo_marker, undo_retrans and prior_ssthresh), a
// mechanism of its own as gVisor's rackControl is.
type undoState struct {
	// marker is tp->undo_marker: snd_una when the reduction began; 0 when
	// there is nothing to undo.
	marker uint64
	// retrans is tp->undo_retrans: retransmissions since marker not yet
	// shown spurious by a D-SACK; -1 when none were sent yet.
	retrans int32
	// priorSSThresh is tp->prior_ssthresh: the ssthresh an undo restores; 0
	// after ECN, whose reductions are never undone.
	priorSSThresh uint32
}

// start is tcp_init_undo: the reduction that begins now may be undone until
// retransOut retransmissions plus the later ones are all proven spurious;
// a loss probe's retransmission still in flight (tlpRetrans) counts too, as
// its D-SACK is no longer told apart once the episode's tlp_high_seq is
// cleared.
func (u *undoState) start(sndUna uint64, retransOut uint32, tlpRetrans bool) {
	u.marker = sndUna
	u.retrans = int32(retransOut)
	if tlpRetrans {
		u.retrans++
	}
	if u.retrans == 0 {
		u.retrans = -1
	}
}

// retransmitted counts pcount retransmitted segments (tcp_retransmit_skb).
func (u *undoState) retransmitted(pcount int32) {
	if u.retrans < 0 {
		u.retrans = 0
	}
	u.retrans += pcount
}

// initUndo is tcp_init_undo.
func (d *DataSender) initUndo() {
	d.undo.start(d.sndUna, d.sb.retransOut, d.tlp.highSeq != 0 && d.tlp.retrans)
}

// packetDelayed is tcp_packet_delayed (Linux 6.16 on): the echoed timestamp
// predates the first retransmission, so the original arrived; or nothing
// was retransmitted yet (pacing or a full cwnd held the fast retransmit),
// so the packet was merely delayed. Without SACK retrans_stamp is cleared
// at high_seq even after a retransmission (nonSACKPreventingReopen), so
// there a zero proves nothing. (The kernel's other exception, SYN_SENT,
// never reaches here: the handshake's ACK is taken apart.)
func (d *DataSender) packetDelayed() bool {
	if d.retransStamp != 0 {
		return d.tsecrBefore(d.retransStamp)
	}
	return d.isSACK() || d.sndUna < d.highSeq
}

// mayUndo is tcp_may_undo.
func (d *DataSender) mayUndo() bool {
	return d.undo.marker != 0 && (d.undo.retrans == 0 || d.packetDelayed())
}

// undoCwndReduction follows tcp_undo_cwnd_reduction.
func (d *DataSender) undoCwndReduction(unmarkLoss bool) {
	if unmarkLoss {
		for n := d.sb.una; n < d.sb.nxt; n++ {
			d.sb.clearLost(n)
		}
		d.lostHint, d.lostCntHint = 0, 0
	}
	if d.undo.priorSSThresh != 0 {
		d.fillState()
		d.st.CwndPkts = d.hooks.UndoCwnd(&d.st)
		if d.undo.priorSSThresh > d.st.SSThreshPkts {
			d.st.SSThreshPkts = d.undo.priorSSThresh
			d.queueCWR = false // tcp_ecn_withdraw_cwr
		}
	}
	d.cwndStamp = d.st.Now
	d.undo.marker = 0
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
	if d.undo.marker != 0 && d.undo.retrans == 0 {
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
	if d.undo.marker != 0 && d.packetDelayed() {
		// The hole was filled by a delayed original: reordering.
		d.checkSackReordering(priorSndUna)
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
