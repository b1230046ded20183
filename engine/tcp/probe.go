package tcp

import (
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// The zero-window probe (persist) timer of tcp_timer.c and tcp_output.c,
// Linux 6.x: a sender with unsent data, nothing in flight and a receive
// window too small for its next segment probes the receiver so that the
// ACK carrying the reopened window cannot be lost for good.
const (
	rtoMin = 200 * sim.Millisecond // TCP_RTO_MIN
	// tcpRetries2 is sysctl_tcp_retries2: unanswered probes before the
	// connection is aborted, and the cap on icsk_backoff they raise.
	tcpRetries2 = 15
	// probe0MaxBackoff is tcp_probe0_when's cap on the shift,
	// ilog2(TCP_RTO_MAX/TCP_RTO_MIN) + 1 = ilog2(600) + 1.
	probe0MaxBackoff = 10
)

// probe0Base is tcp_probe0_base: the RTO, at least TCP_RTO_MIN.
func (d *DataSender) probe0Base() sim.Duration { return max(d.rto, rtoMin) }

// probe0When is tcp_probe0_when: the base backed off by icsk_backoff
// (capped at 10 doublings), at most maxWhen.
func (d *DataSender) probe0When(maxWhen sim.Duration) sim.Duration {
	return min(d.probe0Base()<<min(d.backoff, probe0MaxBackoff), maxWhen)
}

// sendHeadFits is tcp_write_wakeup's test with one MSS in place of what
// the window takes: the next segment of unsent data (one MSS, or the
// flow's last bytes) fits the receive window. The kernel sends into any
// open window, a sub-MSS segment where less than one MSS is open; the
// retransmission queue numbers segments by MSS (writeWakeup).
func (d *DataSender) sendHeadFits() bool {
	return min(d.sndNxt+d.mss, d.writeSeq) <= d.sndUna+d.sndWnd
}

// checkProbeTimer is tcp_check_probe_timer, called when tcp_write_xmit
// could send nothing with nothing in flight: arm the persist timer unless
// another write timer is pending.
func (d *DataSender) checkProbeTimer() {
	if d.sb.packetsOut() == 0 && d.pending == timeNone {
		d.resetXmitTimer(timeProbe0, d.probe0Base(), rtoMax)
	}
}

// ackProbe follows tcp_ack_probe, run on an ACK that arrives with nothing
// in flight: if the window now takes the send head's skb whole
// (!after(end_seq, tcp_wnd_end)), the backoff the probes used is cleared
// with the timer (tcp_data_snd_check sends next); otherwise the persist
// timer restarts with the current backoff, though tcp_write_xmit may still
// send the part of the skb that fits.
func (d *DataSender) ackProbe() {
	d.fillWrite()
	if d.writeSeq <= d.sndNxt {
		return // tcp_send_head(sk) == NULL
	}
	if d.wq.headEnd() <= d.sndUna+d.sndWnd {
		d.backoff = 0
		if d.pending == timeProbe0 {
			d.clearXmitTimer()
		}
		return
	}
	d.resetXmitTimer(timeProbe0, d.probe0When(rtoMax), rtoMax)
}

// probeTimer follows tcp_probe_timer: the persist timer fired. The peer
// answers every probe it receives (an ACK resets icsk_probes_out), so the
// connection is aborted (tcp_write_err) only after tcp_retries2 probes in
// a row went unanswered.
func (d *DataSender) probeTimer() {
	d.fillWrite()
	if d.sb.packetsOut() > 0 || d.writeSeq <= d.sndNxt {
		d.probesOut = 0
		return
	}
	if d.probesOut >= tcpRetries2 {
		d.abort(AbortWindowProbes)
		return
	}
	d.sendProbe0()
}

// sendProbe0 follows tcp_send_probe0: probe (tcp_write_wakeup); if data
// went out, its RTO takes over; else back off and re-arm the persist
// timer.
func (d *DataSender) sendProbe0() {
	d.writeWakeup()
	if d.sb.packetsOut() > 0 || d.writeSeq <= d.sndNxt {
		d.probesOut = 0
		d.backoff = 0
		return
	}
	d.probesOut++
	if d.backoff < tcpRetries2 {
		d.backoff++
	}
	d.resetXmitTimer(timeProbe0, d.probe0When(rtoMax), rtoMax)
}

// writeWakeup follows tcp_write_wakeup: if the window takes the head
// segment, send it whatever cwnd says (tcp_transmit_skb →
// tcp_event_new_data_sent, which arms the RTO); otherwise send a
// zero-length segment with an old sequence number (tcp_xmit_probe_skb,
// seq = snd_una − 1) that the receiver must answer with an ACK carrying
// its window. The kernel would also send a sub-MSS segment into a window
// smaller than one MSS; the engine's retransmission queue numbers
// segments by MSS, so such a window is probed with the zero-length
// segment, whose ACK returns the same window information.
func (d *DataSender) writeWakeup() {
	if d.sendHeadFits() {
		rearm := d.newDataRearms()
		priorWstamp := d.wstamp
		d.wstamp = max(d.wstamp, d.st.Now)
		// The head skb takes PSH before tcp_fragment cuts the segment
		// off it, so the segment and what stays of the skb both carry it.
		d.pushedSeq = max(d.pushedSeq, d.wq.headEnd())
		d.wq.markHead()
		d.afterSend(d.sendNewSeg(min(d.sndNxt+d.mss, d.writeSeq), false, true), priorWstamp)
		if rearm {
			d.rearmRTO()
		}
		d.checkSpace()
		return
	}
	d.Stats.WindowProbes++
	if d.rec.On() {
		d.event(trace.EvWindowProbe, d.sndUna-1, 0)
	}
	d.sendBareAck(d.sndUna - 1)
}

// abort is tcp_write_err: the connection times out (ETIMEDOUT).
func (d *DataSender) abort(why AbortReason) {
	d.state = sndFailed
	d.Stats.Aborted, d.Stats.AbortedAt = why, d.st.Now
	d.clearXmitTimer()
	d.paceTimer.Stop()
}
