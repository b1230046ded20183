package tcp

import (
	"math/bits"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// resetXmitTimer follows tcp_reset_xmit_timer: arm the write timer for what
// after when (capped at maxWhen), plus the pacing delay so a timer never
// fires before the paced departure it would send.
func (d *DataSender) resetXmitTimer(what pendingTimer, when, maxWhen sim.Duration) {
	d.armXmitTimer(what, d.rtt.hz.paced(when, d.pacingDelay()), maxWhen)
}

// armXmitTimer is inet_csk_reset_xmit_timer: no pacing allowance. when is
// whole ticks, but for a pacing delay, which tcp_pacing_delay truncates to
// ticks (nsecs_to_jiffies); the timer expires that many ticks after the
// current one and fires at its bucket (hzClock.bucket).
func (d *DataSender) armXmitTimer(what pendingTimer, when, maxWhen sim.Duration) {
	d.pending = what
	hz := d.rtt.hz
	ticks := int64(min(when, maxWhen) / hz.jiffy())
	d.xmitTimer.set(hz, d.st.Now, hz.jiffies(d.st.Now)+ticks)
}

// clearXmitTimer is inet_csk_clear_xmit_timer.
func (d *DataSender) clearXmitTimer() {
	d.pending = timeNone
	d.xmitTimer.t.Stop()
}

// rtoDeltaUs is tcp_rto_delta_us: how far in the future the RTO of the
// head segment lies, in µs (it may be negative), from the µs stamps of its
// transmission and of now, as the kernel takes them.
func (d *DataSender) rtoDeltaUs() int64 {
	head := d.sb.seg(d.sb.una)
	return usNow(head.sent) + d.rtt.hz.usecsOf(d.rto) - usNow(d.st.Now)
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
		rto = d.rtt.hz.usToJiffies(max(d.rtoDeltaUs(), 1))
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

// writeTimer is tcp_write_timer_handler: dispatch on what is pending. As
// in the kernel, the reordering and loss-probe handlers run with their
// timer still pending, so that the RTO they re-arm stays anchored to the
// head segment's transmission (rearmRTO); the RTO and zero-window probe
// handlers run with nothing pending.
func (d *DataSender) writeTimer() {
	if d.state == sndSynSent {
		d.synTimer()
		return
	}
	if d.state != sndEstablished {
		return
	}
	if d.hooks.MarkedLost != nil && d.pending != timeNone {
		d.rateCheckAppLimited() // as the v3 kernel's write timer does first
	}
	switch d.pending {
	case timeReoTimeout:
		d.rackReoTimeout()
	case timeLossProbe:
		d.sendLossProbe()
	case timeRetrans:
		d.pending = timeNone
		d.retransmitTimer()
	case timeProbe0:
		d.pending = timeNone
		d.probeTimer()
	}
}

// retransmitTimer follows tcp_retransmit_timer: give up if the
// retransmissions have timed out (tcp_write_timeout, or behind a zero
// window tcp_rtx_probe0_timed_out), else enter Loss, retransmit the head,
// back the RTO off exponentially.
func (d *DataSender) retransmitTimer() {
	if d.sb.packetsOut() == 0 {
		return
	}
	d.Stats.RTOs++
	if d.rec.On() {
		d.event(trace.EvRTO, d.sndUna, 0)
	}
	// With the peer's window shut and data in flight the retransmission
	// probes the window: tcp_retransmit_timer's branch for it does not
	// count the timeout (no tcp_update_rto_stats), so each such RTO in Loss
	// cuts ssthresh again (tcp_enter_loss), and it gives up only once the
	// peer has been silent for 2·TCP_RTO_MAX, not by tcp_write_timeout.
	zeroWnd := d.sndWnd == 0
	switch {
	case zeroWnd && d.rtxProbe0TimedOut():
		d.abort(AbortWindowProbes)
		return
	case !zeroWnd && d.retries2TimedOut():
		d.abort(AbortRetries2)
		return
	}
	d.enterLoss()
	if !zeroWnd {
		d.retransmits++
	}
	d.retransmitSeg(d.sb.una)
	d.rtxHint = d.sb.una + 1
	d.backoff++
	d.rto = min(d.rto<<1, rtoMax)
	d.armXmitTimer(timeRetrans, d.rto, rtoMax)
}

// rtxProbe0TimedOut is tcp_rtx_probe0_timed_out without a user timeout:
// a zero-window RTO gives up once nothing has come from the peer for
// 2·TCP_RTO_MAX by the timer's expiry and the first retransmission (or the
// head's transmission, before any) is as old.
func (d *DataSender) rtxProbe0TimedOut() bool {
	hz := d.rtt.hz
	timeout := 2 * hz.rtoMax()
	if int32(d.xmitTimer.expires-d.rcvTstamp) <= int32(timeout) {
		return false
	}
	since := d.retransStamp
	if since == 0 {
		since = hz.ms(d.sb.seg(d.sb.una).sent) + 1 // tcp_skb_timestamp_ts, on tsNow's clock
	}
	return hz.msecs(int64(d.tsNow()-since)) > timeout
}

// retries2Timeout is tcp_model_timeout(sk, tcp_retries2, TCP_RTO_MIN): the
// time tcp_retries2 timeouts take when the RTO doubles from TCP_RTO_MIN up
// to TCP_RTO_MAX (ilog2(TCP_RTO_MAX / TCP_RTO_MIN) = 9 doublings) and stays
// there: (2<<9 − 1) · 200 ms + (15 − 9) · 120 s = 924.6 s, in ms.
var retries2Timeout = func() uint32 {
	linear := bits.Len64(uint64(rtoMax/rtoMin)) - 1
	t := sim.Duration((2<<tcpRetries2)-1) * rtoMin
	if tcpRetries2 > linear {
		t = sim.Duration((2<<linear)-1)*rtoMin + sim.Duration(tcpRetries2-linear)*rtoMax
	}
	return uint32(t / sim.Millisecond)
}()

// retries2TimedOut is tcp_write_timeout for an established connection:
// retransmits_timed_out(sk, tcp_retries2, 0), true once the RTOs since the
// first retransmission (retrans_stamp, in ms) have taken retries2Timeout.
// The first timeout of a series never expires (icsk_retransmits is 0).
func (d *DataSender) retries2TimedOut() bool {
	return d.retransmits != 0 && int32(d.tsNow()-d.retransStamp-retries2Timeout) >= 0
}
