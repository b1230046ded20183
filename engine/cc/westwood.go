package cc

import "github.com/ccscope/ccscope/engine/sim"

// Westwood is TCP Westwood+ as the kernel's net/ipv4/tcp_westwood.c
// (mainline 6.x): Reno's growth, but after a loss ssthresh (and, when fast
// recovery ends, cwnd) is set to the bandwidth estimate times the minimum
// RTT, BWE·RTTmin, instead of half the window. The estimate counts the
// bytes acked over windows of at least one RTT (and 50 ms) and smooths
// the per-window rates twice with a 7/8 low-pass filter. Time is in
// jiffies at HZ = 1000, rates in bytes per jiffy, as the kernel keeps them.
type Westwood struct {
	// struct westwood.
	bwNsEst     uint32 // first, lightly smoothed estimate, bytes/jiffy
	bwEst       uint32 // bandwidth estimate, bytes/jiffy
	rttWinSx    uint32 // jiffies: start of the current sampling window
	bk          uint32 // bytes acked in the current window
	sndUna      uint32 // snd_una at the last ACK (32-bit sequence)
	cumulAck    uint32
	accounted   uint32 // bytes dupACKs accounted before snd_una moved
	rtt         uint32 // last RTT sample, jiffies
	rttMin      uint32 // minimum RTT, jiffies
	firstAck    bool
	resetRTTMin bool

	s   *Signals
	sig westwoodSignals
}

type westwoodSignals struct{ bwEst, rttMin, bwRTTMin SignalID }

// The constants of tcp_westwood.c, in jiffies: TCP_WESTWOOD_RTT_MIN (HZ/20,
// 50 ms) and TCP_WESTWOOD_INIT_RTT (20·HZ, 20 s).
func westwoodRTTMin(st *State) uint32  { return hz(st) / 20 }
func westwoodInitRTT(st *State) uint32 { return 20 * hz(st) }

func init() { Register("westwood", func() Algorithm { return &Westwood{} }) }

// Name returns "westwood".
func (*Westwood) Name() string { return "westwood" }

// Init follows tcp_westwood_init and defines Westwood's signals.
func (w *Westwood) Init(st *State) {
	s := st.Signals
	w.s = s
	w.sig = westwoodSignals{
		bwEst:    s.Define("bw_est", "bps", "BWE: the twice-filtered rate of acked bytes (kernel unit bytes per jiffy)"),
		rttMin:   s.Define("rtt_min", "ms", "RTTmin: the smallest RTT sample since the last RTO, in jiffies"),
		bwRTTMin: s.Define("bw_rtt_min", "pkts", "BWE·RTTmin/MSS (at least 2): the ssthresh a loss sets"),
	}
	w.bk, w.bwNsEst, w.bwEst, w.accounted, w.cumulAck = 0, 0, 0, 0, 0
	w.resetRTTMin = true
	w.rtt, w.rttMin = westwoodInitRTT(st), westwoodInitRTT(st)
	w.rttWinSx = jiffies(st, st.Now)
	w.sndUna = uint32(st.SndUna)
	w.firstAck = true
	w.publish(st)
}

// doFilter is westwood_do_filter: a 7/8 low-pass filter.
func westwoodDoFilter(a, b uint32) uint32 { return (7*a + b) >> 3 }

// filter follows westwood_filter: the first sample fills the filter.
func (w *Westwood) filter(delta uint32) {
	if w.bwNsEst == 0 && w.bwEst == 0 {
		w.bwNsEst = w.bk / delta
		w.bwEst = w.bwNsEst
		return
	}
	w.bwNsEst = westwoodDoFilter(w.bwNsEst, w.bk/delta)
	w.bwEst = westwoodDoFilter(w.bwEst, w.bwNsEst)
}

// PktsAcked follows tcp_westwood_pkts_acked: keep the last RTT sample.
func (w *Westwood) PktsAcked(st *State, s AckSample) {
	if s.RTT > 0 {
		w.rtt = uint32(usecsToJiffies(st, uint32(s.RTT/sim.Microsecond)))
	}
}

// updateWindow follows westwood_update_window: once a window of at least
// max(rtt, 50 ms) has passed, filter its rate and start the next.
func (w *Westwood) updateWindow(st *State) {
	now := jiffies(st, st.Now)
	delta := int32(now - w.rttWinSx)
	if w.firstAck {
		w.sndUna = uint32(st.SndUna)
		w.firstAck = false
	}
	if w.rtt != 0 && delta > int32(max(w.rtt, westwoodRTTMin(st))) {
		w.filter(uint32(delta))
		w.bk = 0
		w.rttWinSx = now
	}
}

// updateRTTMin is update_rtt_min.
func (w *Westwood) updateRTTMin() {
	if w.resetRTTMin {
		w.rttMin = w.rtt
		w.resetRTTMin = false
	} else {
		w.rttMin = min(w.rtt, w.rttMin)
	}
}

// ackedCount follows westwood_acked_count: the bytes this ACK stands for,
// counting a dupACK as one MSS and taking those back from the cumulative
// ACK that follows.
func (w *Westwood) ackedCount(st *State) uint32 {
	mss := uint32(st.MSS)
	w.cumulAck = uint32(st.SndUna) - w.sndUna
	if w.cumulAck == 0 {
		w.accounted += mss
		w.cumulAck = mss
	}
	if w.cumulAck > mss {
		if w.accounted >= w.cumulAck {
			w.accounted -= w.cumulAck
			w.cumulAck = mss
		} else {
			w.cumulAck -= w.accounted
			w.accounted = 0
		}
	}
	w.sndUna = uint32(st.SndUna)
	return w.cumulAck
}

// InAckEvent follows tcp_westwood_ack: the slow path counts dupACKs and
// partial ACKs through westwood_acked_count, the fast path
// (westwood_fast_bw) takes the cumulative ACK as it is.
func (w *Westwood) InAckEvent(st *State, flags AckFlags) {
	w.updateWindow(st)
	if flags&AckSlowPath != 0 {
		w.bk += w.ackedCount(st)
	} else {
		w.bk += uint32(st.SndUna) - w.sndUna
		w.sndUna = uint32(st.SndUna)
	}
	w.updateRTTMin()
	w.publish(st)
}

// bwRTTMin follows tcp_westwood_bw_rttmin: BWE·RTTmin in packets, at
// least 2.
func (w *Westwood) bwRTTMin(st *State) uint32 {
	return max(w.bwEst*w.rttMin/uint32(st.MSS), 2)
}

// CwndEvent follows tcp_westwood_event: at the end of fast recovery cwnd
// and ssthresh become BWE·RTTmin; an RTO sets ssthresh to it and takes a
// fresh RTTmin from the next ACK.
func (w *Westwood) CwndEvent(st *State, ev Event) {
	switch ev {
	case EventCompleteCWR:
		st.SSThreshPkts = w.bwRTTMin(st)
		st.CwndPkts = st.SSThreshPkts
	case EventLoss:
		st.SSThreshPkts = w.bwRTTMin(st)
		w.resetRTTMin = true
	}
}

// CongAvoid is tcp_reno_cong_avoid, as tcp_westwood.c uses.
func (*Westwood) CongAvoid(st *State, acked uint32) { renoCongAvoid(st, acked) }

// SSThresh is tcp_reno_ssthresh, as tcp_westwood.c uses: fast recovery
// reduces towards half the window, and the end of recovery then sets
// BWE·RTTmin.
func (*Westwood) SSThresh(st *State) uint32 { return max(st.CwndPkts>>1, 2) }

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_westwood.c uses.
func (*Westwood) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (w *Westwood) publish(st *State) {
	w.s.Set(w.sig.bwEst, float64(w.bwEst)*8*float64(hz(st)))
	w.s.Set(w.sig.rttMin, float64(w.rttMin)*1000/float64(hz(st)))
	w.s.Set(w.sig.bwRTTMin, float64(w.bwRTTMin(st)))
}
