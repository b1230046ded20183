package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// resetXmitTimer follows tcp_reset_xmit_timer: arm the write timer for what
// after when (capped at maxWhen), plus the pacing delay so a timer never
// fires before the paced departure it would send.
func (d *DataSender) resetXmitTimer(what pendingTimer, when, maxWhen sim.Duration) {
	d.armXmitTimer(what, when+d.pacingDelay(), maxWhen)
}

// armXmitTimer is inet_csk_reset_xmit_timer: no pacing allowance.
func (d *DataSender) armXmitTimer(what pendingTimer, when, maxWhen sim.Duration) {
	d.pending = what
	d.xmitTimer.Arm(d.st.Now.Add(min(when, maxWhen)))
}

// clearXmitTimer is inet_csk_clear_xmit_timer.
func (d *DataSender) clearXmitTimer() {
	d.pending = timeNone
	d.xmitTimer.Stop()
}

// rtoDelta is tcp_rto_delta_us: how far in the future the RTO of the head
// segment lies (it may be negative).
func (d *DataSender) rtoDelta() sim.Duration {
	head := d.sb.seg(d.sb.una)
	return head.sent.Add(d.rto).Sub(d.st.Now)
}

// rearmRTO follows tcp_rearm_rto: restart the RTO after forward progress;
// if a TLP or reordering timer was pending, keep the RTO anchored to the
// head segment's transmission.
func (d *DataSender) rearmRTO() {
	if d.sb.packetsOut() == 0 {
		d.clearXmitTimer()
		return
	}
	rto := d.rto
	if d.pending == timeReoTimeout || d.pending == timeLossProbe {
		rto = usToJiffies(max(toUs(d.rtoDelta()), 1))
	}
	d.resetXmitTimer(timeRetrans, rto, rtoMax)
}

// setXmitTimer is tcp_set_xmit_timer: a loss probe if one applies, else the
// RTO.
func (d *DataSender) setXmitTimer() {
	if !d.scheduleLossProbe(true) {
		d.rearmRTO()
	}
}

// scheduleLossProbe follows tcp_schedule_loss_probe: with SACK, in Open or
// CWR, probe after PTO = 2·srtt, plus TCP_RTO_MIN when a single packet is
// out (the peer may delay its ACK) or 2 jiffies otherwise; never later than
// the RTO.
func (d *DataSender) scheduleLossProbe(advancingRTO bool) bool {
	if !d.cfg.Opts.TLP || d.sb.packetsOut() == 0 || !d.isSACK() ||
		d.st.CA != cc.CAOpen && d.st.CA != cc.CACWR {
		return false
	}
	var timeout sim.Duration
	if d.rtt.srttUs8 != 0 {
		us := d.rtt.srttUs8 >> 2
		if d.sb.packetsOut() == 1 {
			us += rtoMinUs
		} else {
			us += timeoutMinUs
		}
		timeout = usToJiffies(us)
	} else {
		timeout = timeoutInit
	}
	var rtoDelta sim.Duration
	if advancingRTO {
		rtoDelta = d.rto
	} else {
		rtoDelta = d.rtoDelta()
	}
	if rtoDelta > 0 {
		timeout = min(timeout, usToJiffies(toUs(rtoDelta)))
	}
	d.resetXmitTimer(timeLossProbe, timeout, rtoMax)
	return true
}

// writeTimer is tcp_write_timer_handler: dispatch on what is pending.
func (d *DataSender) writeTimer() {
	if d.state == sndSynSent {
		d.synTimer()
		return
	}
	if d.state != sndEstablished {
		return
	}
	what := d.pending
	d.pending = timeNone
	switch what {
	case timeReoTimeout:
		d.rackReoTimeout()
	case timeLossProbe:
		d.sendLossProbe()
	case timeRetrans:
		d.retransmitTimer()
	case timeProbe0:
		d.probeTimer()
	}
}

// sendLossProbe follows tcp_send_loss_probe: send one new segment if the
// window allows, else retransmit the last segment; at most one probe per
// tail-loss episode.
func (d *DataSender) sendLossProbe() {
	if d.tlpHighSeq != 0 {
		d.rearmRTO()
		return
	}
	d.tlpRetrans = false
	d.fillWrite()
	sent := false
	if d.writeSeq > d.sndNxt && min(d.sndNxt+d.mss, d.writeSeq) <= d.sndUna+d.sndWnd {
		before := d.sb.packetsOut()
		d.writeXmit(2)
		sent = d.sb.packetsOut() > before
	} else if d.sb.packetsOut() > 0 {
		// The google/bbr v3 branch notes, before the retransmission
		// re-stamps it, whether the probed segment went out app-limited.
		d.tlpOrigAppLim = d.sb.seg(d.sb.nxt - 1).appLimited
		d.resendSeg(d.sb.nxt - 1)
		d.tlpRetrans = true
		sent = true
	}
	if sent {
		d.tlpHighSeq = d.sndNxt
		d.Stats.TLPs++
		if d.rec.On() {
			d.event(trace.EvTLP, d.sndNxt, 0)
		}
		d.pending = timeNone // tcp_rearm_rto restarts the RTO from now
	}
	d.rearmRTO()
}

// retransmitTimer follows tcp_retransmit_timer: enter Loss, retransmit the
// head, back the RTO off exponentially.
func (d *DataSender) retransmitTimer() {
	if d.sb.packetsOut() == 0 {
		return
	}
	d.Stats.RTOs++
	if d.rec.On() {
		d.event(trace.EvRTO, d.sndUna, 0)
	}
	d.enterLoss()
	d.retransmits++
	d.retransmitSeg(d.sb.una)
	d.rtxHint = d.sb.una + 1
	d.backoff++
	d.rto = min(d.rto<<1, rtoMax)
	d.armXmitTimer(timeRetrans, d.rto, rtoMax)
}
