package cc

// HTCP is H-TCP as the kernel's net/ipv4/tcp_htcp.c (mainline 6.x; Leith &
// Shorten, "H-TCP: TCP for high-speed and long-distance networks",
// PFLDnet 2004). Its additive increase grows with the time Δ since the end
// of the last congestion event: Reno's one packet per RTT for the first
// Δ_L = 1 s, then
//
//	α(Δ) = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²  packets per RTT,
//
// scaled by 2(1 − β) so that the flow's mean throughput does not depend on
// β, and by minRTT/100 ms (use_rtt_scaling) so that flows with different
// RTTs grow alike in time. The backoff β = minRTT/maxRTT, clamped to
// [0.5, 0.8], lets the window drain the queue it built and no more; it is
// 0.5 until two congestion events have passed with a stable throughput,
// and whenever the achieved throughput changed by more than 20 % between
// them (use_bandwidth_switch). The kernel's fixed point is kept: α and β
// in 1/128, RTTs and Δ in jiffies, throughput in packets per second.
type HTCP struct {
	p HTCPParams
	// struct htcp.
	alpha        uint32 // 1/128 packets per RTT
	beta         uint8  // 1/128
	modeswitch   uint8  // 1 once a congestion event allowed adaptive β
	pktsAcked    uint16 // packets the last ACK in Open acked
	packetcount  uint32 // packets acked since lasttime
	minRTT       uint32 // jiffies; 0 before the first sample
	maxRTT       uint32 // jiffies
	lastCong     uint32 // jiffies: end (in Recovery: start) of the last congestion event
	undoLastCong uint32 // last_cong before the reduction; 0: nothing to undo
	undoMaxRTT   uint32
	undoOldMaxB  uint32
	minB, maxB   uint32 // packets per second
	oldMaxB, bi  uint32 // packets per second
	lasttime     uint32 // jiffies: start of the throughput sample

	s   *Signals
	sig htcpSignals
}

type htcpSignals struct{ alpha, beta, minRTT, maxRTT, congTime, maxB SignalID }

// The constants of tcp_htcp.c: ALPHA_BASE, BETA_MIN and BETA_MAX in 1/128.
const (
	htcpAlphaBase = 1 << 7 // 1.0
	htcpBetaMin   = 1 << 6 // 0.5
	htcpBetaMax   = 102    // 0.8
)

// HTCPParams are tcp_htcp.c's module parameters.
type HTCPParams struct {
	UseRTTScaling      bool // use_rtt_scaling: scale α by minRTT/100 ms
	UseBandwidthSwitch bool // use_bandwidth_switch: β back to 0.5 when the throughput moved
}

// DefaultHTCPParams are the module's defaults: both on.
func DefaultHTCPParams() HTCPParams { return HTCPParams{UseRTTScaling: true, UseBandwidthSwitch: true} }

func init() {
	Register("htcp", func() Algorithm { return &HTCP{p: DefaultHTCPParams()} })
}

// Name returns "htcp".
func (*HTCP) Name() string { return "htcp" }

// Init follows htcp_init and defines H-TCP's signals.
func (h *HTCP) Init(st *State) {
	if h.s == nil {
		s := st.Signals
		h.s = s
		h.sig = htcpSignals{
			alpha:    s.Define("alpha", "pkts", "α: additive increase per RTT (kernel unit 1/128), 2(1−β)·α(Δ) scaled by minRTT/100 ms"),
			beta:     s.Define("beta", "ratio", "β: multiplicative decrease, minRTT/maxRTT clamped to [0.5, 0.8] (kernel unit 1/128)"),
			minRTT:   s.Define("min_rtt", "us", "minRTT: smallest RTT sample (kernel unit jiffies)"),
			maxRTT:   s.Define("max_rtt", "us", "maxRTT: largest RTT sample in Open (at most 20 ms above the last; kernel unit jiffies); fades 5 % towards minRTT at each congestion event"),
			congTime: s.Define("cong_time", "ms", "Δ: time since the end of the last congestion event (its start while in recovery), in jiffies"),
			maxB:     s.Define("max_b", "pkts/s", "maxB: largest smoothed throughput since the last congestion event; a change over 20 % between events resets β to 0.5"),
		}
	}
	*h = HTCP{p: h.p, s: h.s, sig: h.sig}
	h.alpha = htcpAlphaBase
	h.beta = htcpBetaMin
	h.pktsAcked = 1
	h.lastCong = jiffies(st, st.Now)
	h.publish(st)
}

// congTime is htcp_cong_time: jiffies since last_cong.
func (h *HTCP) congTime(st *State) uint32 { return jiffies(st, st.Now) - h.lastCong }

// ccount is htcp_ccount: minRTTs since last_cong.
func (h *HTCP) ccount(st *State) uint32 { return h.congTime(st) / h.minRTT }

// reset is htcp_reset: a congestion event starts now; remember what undo
// restores.
func (h *HTCP) reset(st *State) {
	h.undoLastCong = h.lastCong
	h.undoMaxRTT = h.maxRTT
	h.undoOldMaxB = h.oldMaxB
	h.lastCong = jiffies(st, st.Now)
}

// UndoCwnd follows htcp_cwnd_undo: the congestion event was spurious, so
// Δ, maxRTT and the throughput reference continue from before it; the
// window is tcp_reno_undo_cwnd's.
func (h *HTCP) UndoCwnd(st *State) uint32 {
	if h.undoLastCong != 0 {
		h.lastCong = h.undoLastCong
		h.maxRTT = h.undoMaxRTT
		h.oldMaxB = h.undoOldMaxB
		h.undoLastCong = 0
	}
	h.publish(st)
	return max(st.CwndPkts, st.PriorCwndPkts)
}

// measureRTT follows measure_rtt; rtt is one sample in jiffies (the
// kernel's parameter is named srtt but is the sample).
func (h *HTCP) measureRTT(st *State, rtt uint32) {
	if h.minRTT > rtt || h.minRTT == 0 {
		h.minRTT = rtt
	}
	if st.CA == CAOpen {
		if h.maxRTT < h.minRTT {
			h.maxRTT = h.minRTT
		}
		if h.maxRTT < rtt && rtt <= h.maxRTT+msecsToJiffies(st, 20) {
			h.maxRTT = rtt
		}
	}
}

// PktsAcked follows measure_achieved_throughput: the RTT extremes, and a
// smoothed throughput (packets per second) taken about once per window in
// Open and Disorder, which the bandwidth switch compares across congestion
// events.
func (h *HTCP) PktsAcked(st *State, s AckSample) {
	now := jiffies(st, st.Now)
	if st.CA == CAOpen {
		h.pktsAcked = uint16(s.PktsAcked)
	}
	if s.RTT > 0 {
		h.measureRTT(st, uint32(usecsToJiffies(st, usOf(s.RTT))))
	}
	defer h.publish(st)
	if !h.p.UseBandwidthSwitch {
		return
	}
	if st.CA != CAOpen && st.CA != CADisorder {
		h.packetcount = 0
		h.lasttime = now
		return
	}
	h.packetcount += s.PktsAcked
	step := h.alpha >> 7 // the kernel's "alpha >> 7 ? : 1"
	if step == 0 {
		step = 1
	}
	if h.packetcount >= st.CwndPkts-step && now-h.lasttime >= h.minRTT && h.minRTT > 0 {
		curBi := h.packetcount * hz(st) / (now - h.lasttime)
		if h.ccount(st) <= 3 {
			// Just after a backoff.
			h.minB, h.maxB, h.bi = curBi, curBi, curBi
		} else {
			h.bi = (3*h.bi + curBi) / 4
			if h.bi > h.maxB {
				h.maxB = h.bi
			}
			if h.minB > h.maxB {
				h.minB = h.maxB
			}
		}
		h.packetcount = 0
		h.lasttime = now
	}
}

// between32 is the kernel's between(seq1, seq2, seq3): seq2 ≤ seq1 ≤ seq3
// in u32 sequence space.
func between32(seq1, seq2, seq3 uint32) bool { return seq3-seq2 >= seq1-seq2 }

// betaUpdate follows htcp_beta_update: β = minRTT/maxRTT within
// [0.5, 0.8], but 0.5 if the throughput moved by more than 20 % since the
// last event (5·maxB outside [4, 6]·old_maxB), and 0.5 once more at the
// first event that allows adaptive backoff (modeswitch).
func (h *HTCP) betaUpdate(st *State, minRTT, maxRTT uint32) {
	if h.p.UseBandwidthSwitch {
		maxB, oldMaxB := h.maxB, h.oldMaxB
		h.oldMaxB = h.maxB
		if !between32(5*maxB, 4*oldMaxB, 6*oldMaxB) {
			h.beta = htcpBetaMin
			h.modeswitch = 0
			return
		}
	}
	if h.modeswitch != 0 && minRTT > msecsToJiffies(st, 10) && maxRTT != 0 {
		h.beta = uint8((minRTT << 7) / maxRTT) // u8, as the kernel's field
		if h.beta < htcpBetaMin {
			h.beta = htcpBetaMin
		} else if h.beta > htcpBetaMax {
			h.beta = htcpBetaMax
		}
	} else {
		h.beta = htcpBetaMin
		h.modeswitch = 1
	}
}

// alphaUpdate follows htcp_alpha_update: α(Δ) of the paper in whole
// packets, with Δ − Δ_L = diff jiffies,
//
//	factor = 1 + (10·diff + (diff/2)²/HZ)/HZ,
//
// times minRTT/100 ms (as HZ·8/(10·minRTT) in 1/8, clamped to [0.5, 10]),
// at least 1, then α = 2·factor·(1 − β) in 1/128.
func (h *HTCP) alphaUpdate(st *State) {
	minRTT := h.minRTT
	factor := uint32(1)
	diff := h.congTime(st)
	hzv := hz(st)
	if diff > hzv {
		diff -= hzv
		factor = 1 + (10*diff+((diff/2)*(diff/2)/hzv))/hzv
	}
	if h.p.UseRTTScaling && minRTT != 0 {
		scale := (hzv << 3) / (10 * minRTT)
		// Clamp the ratio to [0.5, 10] << 3.
		scale = min(max(scale, 1<<2), 10<<3)
		factor = (factor << 3) / scale
		if factor == 0 {
			factor = 1
		}
	}
	h.alpha = 2 * factor * ((1 << 7) - uint32(h.beta))
	if h.alpha == 0 {
		h.alpha = htcpAlphaBase
	}
}

// paramUpdate follows htcp_param_update: at a congestion event, when the
// queues were full and maxRTT means something, set β and α, then let
// maxRTT fade 5 % towards minRTT to follow route changes.
func (h *HTCP) paramUpdate(st *State) {
	minRTT, maxRTT := h.minRTT, h.maxRTT
	h.betaUpdate(st, minRTT, maxRTT)
	h.alphaUpdate(st)
	if minRTT > 0 && maxRTT > minRTT {
		h.maxRTT = minRTT + ((maxRTT-minRTT)*95)/100
	}
}

// SSThresh follows htcp_recalc_ssthresh: β·cwnd, at least 2, after the
// parameter update the congestion event calls for. It changes H-TCP's
// own state, as the kernel's does, but not st.
func (h *HTCP) SSThresh(st *State) uint32 {
	h.paramUpdate(st)
	h.publish(st)
	return max((st.CwndPkts*uint32(h.beta))>>7, 2)
}

// CongAvoid follows htcp_cong_avoid: slow start as Reno's; in congestion
// avoidance one packet per cwnd·128/α packets acked (α/cwnd per ACK),
// refreshing α with Δ at each increment.
func (h *HTCP) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		SlowStart(st, acked)
	} else {
		if (st.CwndCnt*h.alpha)>>7 >= st.CwndPkts {
			if st.CwndPkts < st.CwndClampPkts {
				st.CwndPkts++
			}
			st.CwndCnt = 0
			h.alphaUpdate(st)
		} else {
			st.CwndCnt += uint32(h.pktsAcked)
		}
		h.pktsAcked = 1
	}
	h.publish(st)
}

// SetState follows htcp_state: a reduction (CWR, Recovery, Loss) starts a
// congestion event; returning to Open after one that was not undone ends
// it, and Δ counts from then.
func (h *HTCP) SetState(st *State, s CAState) {
	switch s {
	case CAOpen:
		if h.undoLastCong != 0 {
			h.lastCong = jiffies(st, st.Now)
			h.undoLastCong = 0
		}
	case CACWR, CARecovery, CALoss:
		h.reset(st)
	}
	h.publish(st)
}

// publish records the signals; Set drops unchanged values.
func (h *HTCP) publish(st *State) {
	msPerJiffy := 1000 / float64(hz(st))
	h.s.Set(h.sig.alpha, float64(h.alpha)/128)
	h.s.Set(h.sig.beta, float64(h.beta)/128)
	// µs, as the other CCs' RTT signals, so plots and reports read one unit.
	h.s.Set(h.sig.minRTT, float64(h.minRTT)*msPerJiffy*1000)
	h.s.Set(h.sig.maxRTT, float64(h.maxRTT)*msPerJiffy*1000)
	h.s.Set(h.sig.congTime, float64(h.congTime(st))*msPerJiffy)
	h.s.Set(h.sig.maxB, float64(h.maxB))
}
