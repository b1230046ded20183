package cc

// Illinois is TCP-Illinois as the kernel's net/ipv4/tcp_illinois.c
// (mainline 6.x; Liu, Başar & Srikant, "TCP-Illinois: a loss- and
// delay-based congestion control algorithm for high-speed networks",
// Performance Evaluation 65(6–7), 2008). Loss still decides when the
// window shrinks, but the queueing delay decides by how much it grows and
// shrinks. Once per RTT it takes the average queueing delay da (mean RTT
// over the last round − base RTT) against the largest seen,
// dm = max RTT − base RTT, and sets
//
//	α = α_max = 10                  for da ≤ d1 = dm/100,
//	α = k1/(k2 + da) down to α_min = 0.3 at da = dm, otherwise;
//	β = 1/8 for da ≤ d2 = dm/10, 1/2 for da ≥ d3 = 8dm/10, linear between,
//
// growing cwnd by α/cwnd per ACK and cutting it to (1 − β)·cwnd on loss.
// After the delay has been high, α returns to α_max only after theta = 5
// low-delay rounds. Below win_thresh = 15 packets it is Reno (α = 1,
// β = 1/2). The kernel's fixed point is kept: α in 1/128 (α_min = 38/128),
// β in 1/64, delays in µs.
type Illinois struct {
	p IllinoisParams
	// struct illinois.
	sumRTT   uint64 // sum of the RTT samples in the current round, µs
	cntRTT   uint16 // RTT samples in the current round
	baseRTT  uint32 // smallest RTT sample, µs
	maxRTT   uint32 // largest RTT sample, µs
	endSeq   uint64 // snd_nxt when the round began (byte sequence)
	alpha    uint32 // 1/128 packets per RTT
	beta     uint32 // 1/64
	acked    uint16 // packets the last ACK acked
	rttAbove uint8  // the average delay has exceeded d1
	rttLow   uint8  // low-delay rounds since

	// The delays the last update used, µs (signals only).
	da, dm uint32

	s   *Signals
	sig illinoisSignals
}

type illinoisSignals struct {
	alpha, beta, baseRTT, maxRTT, avgDelay, maxDelay, rttAbove, rttLow SignalID
}

// The constants of tcp_illinois.c.
const (
	illinoisAlphaShift = 7
	illinoisAlphaScale = 1 << illinoisAlphaShift
	illinoisAlphaMin   = (3 * illinoisAlphaScale) / 10 // 38: ~0.3
	illinoisAlphaMax   = 10 * illinoisAlphaScale       // 10.0
	illinoisAlphaBase  = illinoisAlphaScale            // 1.0
	illinoisRTTMax     = ^uint32(0) / illinoisAlphaMax // µs, ~3.3 s: keeps the α math in u32

	illinoisBetaShift = 6
	illinoisBetaScale = 1 << illinoisBetaShift
	illinoisBetaMin   = illinoisBetaScale / 8 // 0.125
	illinoisBetaMax   = illinoisBetaScale / 2 // 0.5
	illinoisBetaBase  = illinoisBetaMax
)

// IllinoisParams are tcp_illinois.c's module parameters (ints there).
type IllinoisParams struct {
	WinThresh uint32 // win_thresh: below this cwnd, packets, Reno's α and β
	Theta     int    // theta: low-delay rounds before α returns to α_max
}

// DefaultIllinoisParams are the module's defaults: 15 packets, 5 rounds.
func DefaultIllinoisParams() IllinoisParams { return IllinoisParams{WinThresh: 15, Theta: 5} }

func init() {
	Register("illinois", func() Algorithm { return &Illinois{p: DefaultIllinoisParams()} })
}

// Name returns "illinois".
func (*Illinois) Name() string { return "illinois" }

// rttReset follows rtt_reset: start a new round at snd_nxt.
func (il *Illinois) rttReset(st *State) {
	il.endSeq = st.SndNxt
	il.cntRTT = 0
	il.sumRTT = 0
}

// Init follows tcp_illinois_init and defines Illinois's signals.
func (il *Illinois) Init(st *State) {
	if il.s == nil {
		s := st.Signals
		il.s = s
		il.sig = illinoisSignals{
			alpha:    s.Define("alpha", "pkts", "α: additive increase per RTT, 10 at low delay down to 0.3 at the largest (kernel unit 1/128)"),
			beta:     s.Define("beta", "ratio", "β: fraction of cwnd a loss takes away, 1/8 at low delay up to 1/2 (kernel unit 1/64)"),
			baseRTT:  s.Define("base_rtt", "us", "smallest RTT sample: the propagation delay estimate"),
			maxRTT:   s.Define("max_rtt", "us", "largest RTT sample (at most 3.36 s)"),
			avgDelay: s.Define("avg_delay", "us", "da: mean RTT of the last round − base_rtt, at the last once-per-RTT update"),
			maxDelay: s.Define("max_delay", "us", "dm: max_rtt − base_rtt, at the last once-per-RTT update"),
			rttAbove: s.Define("rtt_above", "enum", "1 once da exceeded d1 = dm/100, until theta = 5 low-delay rounds let α return to 10"),
			rttLow:   s.Define("rtt_low", "count", "low-delay rounds (da ≤ d1) counted towards theta since the delay was high"),
		}
	}
	il.alpha = illinoisAlphaMax
	il.beta = illinoisBetaBase
	il.baseRTT = 0x7fffffff
	il.maxRTT = 0
	il.acked = 0
	il.rttLow = 0
	il.rttAbove = 0
	il.da, il.dm = 0, 0
	il.rttReset(st)
	il.publish()
}

// PktsAcked follows tcp_illinois_acked: note the packets acked and add the
// RTT sample to the round.
func (il *Illinois) PktsAcked(_ *State, s AckSample) {
	il.acked = uint16(s.PktsAcked)
	if s.RTT < 0 {
		return // no RTT sample (a dupACK, or Karn)
	}
	rttUs := usOf(s.RTT)
	// Ignore bogus values; this prevents wraparound in the α math.
	rttUs = min(rttUs, illinoisRTTMax)
	il.baseRTT = min(il.baseRTT, rttUs)
	il.maxRTT = max(il.maxRTT, rttUs)
	il.cntRTT++
	il.sumRTT += uint64(rttUs)
	il.publish()
}

// maxDelay is max_delay: dm, the largest queueing delay, µs.
func (il *Illinois) maxDelay() uint32 { return il.maxRTT - il.baseRTT }

// avgDelay is avg_delay: da, the round's mean queueing delay, µs.
func (il *Illinois) avgDelay() uint32 {
	return uint32(il.sumRTT/uint64(il.cntRTT)) - il.baseRTT
}

// alphaOf follows alpha(): α_max while da ≤ d1 (after high delay, only
// from the theta-th low round on), else the paper's
//
//	α = k1/(k2 + da), k1 = (dm − d1)·α_min·α_max/(α_max − α_min),
//	k2 = (dm − d1)·α_min/(α_max − α_min) − d1,
//
// which the kernel computes, with dm and da taken relative to d1, as
// (dm·α_max)/(dm + da·(α_max − α_min)/α_min) in 1/128.
func (il *Illinois) alphaOf(da, dm uint32) uint32 {
	d1 := dm / 100
	if da <= d1 {
		// Never out of the low-delay zone: α_max.
		if il.rttAbove == 0 {
			return illinoisAlphaMax
		}
		// Wait for theta good rounds before α_max, so one good RTT
		// does not cause a sudden window increase.
		il.rttLow++
		if int(il.rttLow) < il.p.Theta {
			return il.alpha
		}
		il.rttLow = 0
		il.rttAbove = 0
		return illinoisAlphaMax
	}
	il.rttAbove = 1
	dm -= d1
	da -= d1
	return (dm * illinoisAlphaMax) / (dm + (da*(illinoisAlphaMax-illinoisAlphaMin))/illinoisAlphaMin)
}

// illinoisBeta follows beta(): β_min up to d2 = dm/10, β_max from
// d3 = 8dm/10, and between the line k3 + k4·da through both, in 1/64.
func illinoisBeta(da, dm uint32) uint32 {
	d2 := dm / 10
	if da <= d2 {
		return illinoisBetaMin
	}
	d3 := (8 * dm) / 10
	if da >= d3 || d3 <= d2 {
		return illinoisBetaMax
	}
	return (illinoisBetaMin*d3 - illinoisBetaMax*d2 + (illinoisBetaMax-illinoisBetaMin)*da) / (d3 - d2)
}

// updateParams follows update_params: once per RTT, α and β from the
// last round's delays (Reno's below win_thresh), then a new round.
func (il *Illinois) updateParams(st *State) {
	if st.CwndPkts < il.p.WinThresh {
		il.alpha = illinoisAlphaBase
		il.beta = illinoisBetaBase
	} else if il.cntRTT > 0 {
		dm := il.maxDelay()
		da := il.avgDelay()
		il.alpha = il.alphaOf(da, dm)
		il.beta = illinoisBeta(da, dm)
		il.da, il.dm = da, dm
	}
	il.rttReset(st)
}

// SetState follows tcp_illinois_state: an RTO resets α and β to Reno's.
func (il *Illinois) SetState(st *State, s CAState) {
	if s == CALoss {
		il.alpha = illinoisAlphaBase
		il.beta = illinoisBetaBase
		il.rttLow = 0
		il.rttAbove = 0
		il.rttReset(st)
		il.publish()
	}
}

// CongAvoid follows tcp_illinois_cong_avoid: the once-per-RTT update,
// then Reno's slow start or α/cwnd per ACK.
func (il *Illinois) CongAvoid(st *State, acked uint32) {
	if seqAfter(st.LastAckSeq, il.endSeq) {
		il.updateParams(st)
	}
	defer il.publish()
	// RFC 2861: only increase cwnd if fully used.
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		SlowStart(st, acked)
		return
	}
	// snd_cwnd_cnt counts the packets since the last increment.
	st.CwndCnt += uint32(il.acked)
	il.acked = 1
	// A close approximation of cwnd += α/cwnd.
	delta := (st.CwndCnt * il.alpha) >> illinoisAlphaShift
	if delta >= st.CwndPkts {
		st.CwndPkts = min(st.CwndPkts+delta/st.CwndPkts, st.CwndClampPkts)
		st.CwndCnt = 0
	}
}

// SSThresh follows tcp_illinois_ssthresh: cwnd − β·cwnd, at least 2.
func (il *Illinois) SSThresh(st *State) uint32 {
	decr := (st.CwndPkts * il.beta) >> illinoisBetaShift
	return max(st.CwndPkts-decr, 2)
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_illinois.c uses.
func (*Illinois) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (il *Illinois) publish() {
	il.s.Set(il.sig.alpha, float64(il.alpha)/illinoisAlphaScale)
	il.s.Set(il.sig.beta, float64(il.beta)/illinoisBetaScale)
	if il.baseRTT != 0x7fffffff {
		il.s.Set(il.sig.baseRTT, float64(il.baseRTT))
	}
	il.s.Set(il.sig.maxRTT, float64(il.maxRTT))
	il.s.Set(il.sig.avgDelay, float64(il.da))
	il.s.Set(il.sig.maxDelay, float64(il.dm))
	il.s.Set(il.sig.rttAbove, float64(il.rttAbove))
	il.s.Set(il.sig.rttLow, float64(il.rttLow))
}
