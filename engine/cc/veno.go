package cc

// Veno is TCP Veno as the kernel's net/ipv4/tcp_veno.c (mainline 6.x; Fu &
// Liew, "TCP Veno: TCP enhancement for transmission over wireless access
// networks", IEEE JSAC 21(2), 2003). It is Reno whose loss response and
// linear growth read Vegas's backlog estimate
//
//	N = (Expected − Actual)·BaseRTT = cwnd·(RTT − BaseRTT)/RTT  packets,
//
// the packets the flow keeps queued at the bottleneck. A loss with N below
// β = 3 is taken as random (a wireless error, not congestion) and cuts the
// window to 4/5, otherwise to 1/2; in congestion avoidance with N ≥ β the
// window grows one packet every other RTT instead of every RTT. The
// kernel keeps N doubled (diff, V_PARAM_SHIFT = 1: half packets) and
// recomputes it on every ACK from the RTT samples taken since the previous
// ACK, not once per RTT as Vegas does; so does this port.
type Veno struct {
	// struct veno.
	doingVenoNow bool   // do Veno for this RTT (CA state Open)
	cntRTT       uint16 // RTT samples taken; never reset, so it wraps as the kernel's u16
	minRTT       uint32 // min RTT sample + 1 since the last calculation, us
	baseRTT      uint32 // min of all RTT samples + 1, us
	inc          bool   // in the congestive state, the next snd_cwnd_cnt wrap adds a packet
	diff         uint32 // 2N: the backlog in half packets, as of the last calculation

	lastRTT uint32 // the minRTT the last calculation used, us; kept for its signal
	s       *Signals
	sig     venoSignals
}

type venoSignals struct{ backlog, baseRTT, rtt, inc, enabled SignalID }

// venoParamShift is V_PARAM_SHIFT: diff and beta carry one bit of fraction.
const venoParamShift = 1

// venoBeta is beta: the backlog, in half packets, from which Veno takes the
// path as congested (3 packets).
const venoBeta = 3 << venoParamShift

func init() { Register("veno", func() Algorithm { return &Veno{} }) }

// Name returns "veno".
func (*Veno) Name() string { return "veno" }

// Init follows tcp_veno_init and defines Veno's signals.
func (v *Veno) Init(st *State) {
	if v.s == nil {
		v.define(st.Signals)
	}
	v.init()
	v.publish()
}

// define registers Veno's signals.
func (v *Veno) define(s *Signals) {
	v.s = s
	v.sig = venoSignals{
		backlog: s.Define("backlog", "pkts", "N = cwnd·(rtt − baseRTT)/rtt at the last Veno calculation (kernel diff/2); a loss with N < 3 cuts cwnd to 4/5, else to 1/2"),
		baseRTT: s.Define("base_rtt", "us", "baseRTT: smallest RTT sample + 1 us, the propagation delay estimate"),
		rtt:     s.Define("rtt", "us", "smallest RTT sample + 1 us since the previous ACK's calculation (kernel minrtt), as the last calculation used it"),
		inc:     s.Define("inc", "enum", "1: in the congestive state (N ≥ 3) the next window's worth of ACKs adds a packet; 0: it adds none (growth every other RTT)"),
		enabled: s.Define("doing_veno_now", "enum", "1 while Veno adjusts cwnd (CA state Open), 0 while Reno does"),
	}
}

// init follows tcp_veno_init. It leaves cntRTT alone, as the kernel does:
// the count is zeroed once, when the flow attaches the algorithm.
func (v *Veno) init() {
	v.baseRTT = 0x7fffffff
	v.inc = true
	v.enable()
}

// enable follows veno_enable.
func (v *Veno) enable() {
	v.doingVenoNow = true
	v.minRTT = 0x7fffffff
}

// PktsAcked follows tcp_veno_pkts_acked: min-filter the RTT since the last
// calculation and over all time (+1 us: never zero).
func (v *Veno) PktsAcked(_ *State, s AckSample) {
	if s.RTT < 0 {
		return
	}
	vrtt := usOf(s.RTT) + 1
	v.baseRTT = min(v.baseRTT, vrtt)
	v.minRTT = min(v.minRTT, vrtt)
	v.cntRTT++
	v.publish()
}

// SetState follows tcp_veno_state: Veno runs in Open only.
func (v *Veno) SetState(_ *State, s CAState) {
	if s == CAOpen {
		v.enable()
	} else {
		v.doingVenoNow = false
	}
	v.publish()
}

// CwndEvent follows tcp_veno_cwnd_event: restart from a clean slate after
// idle.
func (v *Veno) CwndEvent(_ *State, ev Event) {
	if ev == EventCwndRestart || ev == EventTxStart {
		v.init()
		v.publish()
	}
}

// CongAvoid follows tcp_veno_cong_avoid.
func (v *Veno) CongAvoid(st *State, acked uint32) {
	if !v.doingVenoNow {
		renoCongAvoid(st, acked)
		return
	}
	if !st.CwndLimited {
		return
	}
	if v.cntRTT <= 2 {
		// Too few samples: behave as Reno.
		renoCongAvoid(st, acked)
	} else {
		v.congAvoid(st, acked)
	}
	v.minRTT = 0x7fffffff // the kernel's slate is wiped on every ACK
	v.publish()
}

// congAvoid is the Veno branch of tcp_veno_cong_avoid: estimate the
// backlog, then slow start or grow by one packet per RTT (N < β) or per
// two RTTs (N ≥ β).
func (v *Veno) congAvoid(st *State, acked uint32) {
	rtt := v.minRTT
	v.lastRTT = rtt
	// Expected·BaseRTT − Actual·BaseRTT in half packets, u32 as the kernel's.
	target := (uint64(st.CwndPkts) * uint64(v.baseRTT)) << venoParamShift / uint64(rtt)
	v.diff = st.CwndPkts<<venoParamShift - uint32(target)

	// Only a slow start that took every packet acked skips the increase
	// (the kernel's goto done): outside it an ACK of none still acts on
	// a full snd_cwnd_cnt.
	grow := true
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		grow = acked != 0
	}
	if grow {
		if v.diff < venoBeta {
			// Non-congestive state: one packet per RTT.
			CongAvoidAI(st, st.CwndPkts, acked)
		} else if st.CwndCnt >= st.CwndPkts {
			// Congestive state: a window of ACKs adds a packet
			// only every other time.
			if v.inc && st.CwndPkts < st.CwndClampPkts {
				st.CwndPkts++
				v.inc = false
			} else {
				v.inc = true
			}
			st.CwndCnt = 0
		} else {
			st.CwndCnt += acked
		}
	}
	if st.CwndPkts < 2 {
		st.CwndPkts = 2
	} else if st.CwndPkts > st.CwndClampPkts {
		st.CwndPkts = st.CwndClampPkts
	}
}

// SSThresh follows tcp_veno_ssthresh: with a backlog below β the loss is
// taken as random and cwnd is cut by 1/5 (u32 cwnd·4/5), else by 1/2.
func (v *Veno) SSThresh(st *State) uint32 {
	if v.diff < venoBeta {
		return max(st.CwndPkts*4/5, 2)
	}
	return max(st.CwndPkts>>1, 2)
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_veno.c uses.
func (*Veno) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (v *Veno) publish() {
	if v.baseRTT != 0x7fffffff {
		v.s.Set(v.sig.baseRTT, float64(v.baseRTT))
	}
	if v.lastRTT != 0 && v.lastRTT != 0x7fffffff { // 0x7fffffff: an ACK without a sample
		v.s.Set(v.sig.rtt, float64(v.lastRTT))
	}
	v.s.Set(v.sig.backlog, float64(v.diff)/(1<<venoParamShift))
	v.s.Set(v.sig.inc, b2f(v.inc))
	v.s.Set(v.sig.enabled, b2f(v.doingVenoNow))
}
