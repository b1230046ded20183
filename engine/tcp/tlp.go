package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// tlpState is Tail Loss Probe's episode state (RFC 8985 section 7: struct
// tcp_sock's tlp_high_seq and tlp_retrans, and the google/bbr v3 branch's
// tlp_orig_data_app_limited).
type tlpState struct {
	// highSeq is tp->tlp_high_seq: snd_nxt when the probe went out; 0
	// when no probe episode is open.
	highSeq uint64
	// retrans is tp->tlp_retrans: the probe retransmitted the last segment
	// (rather than sending new data).
	retrans bool
	// origAppLimited is tp->tlp_orig_data_app_limited: the probed segment
	// had gone out app-limited.
	origAppLimited bool
}

// scheduleLossProbe follows tcp_schedule_loss_probe: with SACK, in Open or
// CWR, probe after PTO = 2·srtt, plus TCP_RTO_MIN when a single packet is
// out (the peer may delay its ACK) or TCP_TIMEOUT_MIN_US (2 ms) otherwise,
// rounded up to jiffies; never later than the RTO.
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
		timeout = d.rtt.hz.usToJiffies(us)
	} else {
		timeout = timeoutInit
	}
	var rtoDeltaUs int64
	if advancingRTO {
		rtoDeltaUs = d.rtt.hz.usecsOf(d.rto)
	} else {
		rtoDeltaUs = d.rtoDeltaUs()
	}
	if rtoDeltaUs > 0 {
		timeout = min(timeout, d.rtt.hz.usToJiffies(rtoDeltaUs))
	}
	d.resetXmitTimer(timeLossProbe, timeout, rtoMax)
	return true
}

// sendLossProbe follows tcp_send_loss_probe: send one new segment if the
// window allows, else retransmit the last segment, split off its skb; at
// most one probe per tail-loss episode.
func (d *DataSender) sendLossProbe() {
	if d.tlp.highSeq != 0 {
		d.rearmRTO()
		return
	}
	d.tlp.retrans = false
	d.fillWrite()
	sent := false
	if d.writeSeq > d.sndNxt && min(d.sndNxt+d.mss, d.writeSeq) <= d.sndUna+d.sndWnd {
		before := d.sb.packetsOut()
		d.writeXmit(2)
		sent = d.sb.packetsOut() > before
	} else if d.sb.packetsOut() > 0 {
		// The google/bbr v3 branch notes, before the retransmission
		// re-stamps it, whether the probed segment went out app-limited.
		d.tlp.origAppLimited = d.sb.seg(d.sb.nxt - 1).tx.AppLimited
		d.sb.split(d.sb.nxt - 1) // tcp_fragment: the probed segment is an skb of its own
		d.resendSeg(d.sb.nxt - 1)
		d.tlp.retrans = true
		sent = true
	}
	if sent {
		d.tlp.highSeq = d.sndNxt
		d.Stats.TLPs++
		if d.rec.On() {
			d.event(trace.EvTLP, d.sndNxt, 0)
		}
		d.pending = timeNone // tcp_rearm_rto restarts the RTO from now
	}
	d.rearmRTO()
}

// processTLPAck follows tcp_process_tlp_ack: end a TLP episode; if the
// probe repaired a real loss, reduce cwnd once (as CWR). It reports the
// google/bbr v3 branch's is_acking_tlp_retrans_seq: the ACK reaches the
// retransmitted probe's sequence exactly and makes progress, so it may be
// for the original or the probe.
func (d *DataSender) processTLPAck(ackSeq uint64, flag int) bool {
	if ackSeq < d.tlp.highSeq {
		return false
	}
	switch {
	case !d.tlp.retrans:
		d.tlp.highSeq = 0 // a probe of new data was acked
	case flag&flagDSackTLP != 0:
		d.tlp.highSeq = 0 // both original and probe arrived: no loss
	case ackSeq > d.tlp.highSeq:
		// The google/bbr v3 branch tells the CC first
		// (CA_EVENT_TLP_RECOVERY); BBRv3 then judges the loss.
		d.caEvent(cc.EventTLPRecovery)
		d.initCwndReduction()
		d.setCAState(cc.CACWR)
		d.endCwndReduction()
		d.tryKeepOpen()
	case flag&(flagSndUnaAdvanced|flagNotDup|flagDataSacked) == 0:
		d.tlp.highSeq = 0 // a pure dupack: original and probe arrived
	default:
		return true
	}
	return false
}
