package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// retransmitSeg follows tcp_retransmit_skb for one segment (the RTO's
// retransmission of the head).
func (d *DataSender) retransmitSeg(n uint64) { d.retransmitRun(n, 1) }

// retransmitRun follows tcp_retransmit_skb for the k segments from n, one
// skb: they count as in flight (retrans_out) and may be undone. What
// remained of the skb beyond them is split off (tcp_fragment).
func (d *DataSender) retransmitRun(n, k uint64) {
	if n+k < d.sb.nxt {
		d.sb.split(n + k) // before the transmission stamps the run afresh
	}
	d.resendRun(n, k)
	for i := n; i < n+k; i++ {
		d.sb.setRetransOut(i)
	}
	if d.retransStamp == 0 {
		d.retransStamp = d.tsNow()
	}
	d.undo.retransmitted(int32(k))
}

// retransCandidate reports whether tcp_xmit_retransmit_queue retransmits
// segment n: lost, neither sacked nor retransmitted since.
func (d *DataSender) retransCandidate(n uint64) bool {
	return d.sb.seg(n).flags&(flagLost|flagSacked|flagRetransOut) == flagLost
}

// resendSeg follows __tcp_retransmit_skb for one segment. A loss probe
// uses it directly, so the probe is not counted in retrans_out.
func (d *DataSender) resendSeg(n uint64) { d.resendRun(n, 1) }

// resendRun follows __tcp_retransmit_skb: put the k segments from n, one
// skb, on the wire again, together, as one transmission of the skb: one
// rate snapshot (tcp_rate_skb_sent, tx.in_flight counting the whole skb)
// and one pacing slot for its length.
func (d *DataSender) resendRun(n, k uint64) {
	inFlight := d.sb.inFlight()
	if inFlight == 0 {
		d.caEvent(cc.EventTxStart) // tcp_event_data_sent, as for new data
	}
	priorWstamp := d.wstamp
	d.wstamp = max(d.wstamp, d.st.Now)
	var bytes units.Bytes
	for i := n; i < n+k; i++ {
		s := d.sb.seg(i)
		start := d.sb.start(i)
		d.sb.resent(i, d.st.Now)
		d.rate.SkbSent(&s.tx, s.sent, d.sb.packetsOut(), inFlight+uint32(k), d.lost)
		d.emit(start, s.end, true, s.push || k > 1 && i == n+k-1)
		bytes += units.Bytes(s.end - start)
		if d.rec.On() {
			d.event(trace.EvRetransmit, start, uint32(s.end-start))
		}
	}
	d.totalRetrans += uint32(k)
	d.Stats.Retransmits += k
	d.afterSend(bytes, priorWstamp)
}

// xmitRetransmitQueue follows tcp_xmit_retransmit_queue: retransmit lost,
// not yet retransmitted segments in sequence order while cwnd allows. The
// walk starts at the lowest such segment (the kernel's retransmit hint) and
// stops once every lost segment has a retransmission out.
func (d *DataSender) xmitRetransmitQueue() {
	if d.sb.packetsOut() == 0 {
		return
	}
	rearm := false
	maxSegs := d.tsoSegs()
	for n := max(d.rtxHint, d.sb.una); n < d.sb.nxt; n++ {
		if d.pacingCheck() {
			break
		}
		if int64(d.st.CwndPkts)-int64(d.sb.inFlight()) <= 0 {
			break
		}
		if d.sb.retransOut >= d.sb.lostOut {
			break
		}
		if !d.retransCandidate(n) {
			d.rtxHint = n + 1
			continue
		}
		// The skb holding n goes out whole, up to segs segments, as one
		// TSO burst (tcp_retransmit_skb(sk, skb, segs)): one departure
		// time and one pacing slot for all of it.
		segs := min(int64(d.st.CwndPkts)-int64(d.sb.inFlight()), int64(maxSegs))
		k := uint64(1)
		for int64(k) < segs && n+k < d.sb.nxt && d.sb.seg(n+k).flags&flagSkbHead == 0 && d.retransCandidate(n+k) {
			k++
		}
		d.retransmitRun(n, k)
		if d.inCwndReduction() {
			d.prr.Sent(uint32(k))
		}
		if n == d.sb.una && d.pending != timeReoTimeout {
			rearm = true
		}
		n += k - 1
		d.rtxHint = n + 1
	}
	if rearm {
		d.resetXmitTimer(timeRetrans, d.rto, rtoMax)
	}
}

// noteRetransCandidate keeps the retransmit hint at or below segment n,
// which just became lost and unretransmitted.
func (d *DataSender) noteRetransCandidate(n uint64) {
	if n < d.rtxHint {
		d.rtxHint = n
	}
}
