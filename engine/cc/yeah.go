package cc

// YeAH is YeAH-TCP as the kernel's net/ipv4/tcp_yeah.c (mainline 6.x;
// Baiocchi, Castellani & Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
// PFLDnet 2007). Once per RTT it takes Vegas's RTT samples (the kernel
// embeds struct vegas and reuses tcp_vegas.c's hooks; so does this port,
// with a Vegas value) and estimates the packets it keeps queued,
//
//	Q = cwnd·(RTT − BaseRTT)/RTT,
//
// with RTT the smallest sample of the last round. While Q ≤ 80
// (TCP_YEAH_ALPHA) and the queueing delay is at most BaseRTT/8
// (TCP_YEAH_PHY) it is in fast mode and grows as Scalable TCP (one packet
// per 100 acked: cwnd/100 per RTT once cwnd ≥ 100); otherwise it is in
// slow mode, grows as Reno, and when Q > 80 it drains the queue at once
// (precautionary decongestion: cwnd −= min(Q, cwnd/2), not below
// reno_count, the window a competing Reno flow would have). At a loss it
// removes the queue it measured (at least cwnd/8, at most cwnd/2), or half
// the window once it has been in slow mode for 16 RTTs (TCP_YEAH_RHO) and
// so takes itself to compete with Reno flows. reno_count starts at half the
// window on entering slow mode and gains a packet per slow RTT, as a Reno
// window would; a lone flow whose path has a BDP below 8·80 = 640 packets
// enters slow mode on the delay test with Q ≤ 80, its window and
// reno_count then grow alike, and the floor can stop decongestion
// altogether (see TestYeAHQueueBound).
type YeAH struct {
	// struct yeah. The kernel's struct vegas also keeps beg_snd_una and
	// beg_snd_cwnd, which tcp_yeah_cong_avoid writes and nothing reads;
	// Vegas has no such fields and this port leaves them out.
	vegas        Vegas  // struct vegas: the RTT sampling (its signals stay undefined)
	lastQ        uint32 // Q at the last once-per-RTT update, packets
	doingRenoNow uint32 // consecutive RTTs in slow mode; 0 in fast mode
	renoCount    uint32 // Reno-emulation window, packets
	fastCount    uint32 // fast-mode RTTs since reno_count was last reset or the last loss

	lastRTT uint32 // the minRTT the last update used, us; kept for its signal
	s       *Signals
	sig     yeahSignals
}

type yeahSignals struct {
	lastQ, doingRenoNow, fastMode, renoCount, fastCount, baseRTT, rtt SignalID
}

// The constants of tcp_yeah.c.
const (
	yeahAlpha   = 80 // TCP_YEAH_ALPHA: packets queued at the bottleneck
	yeahGamma   = 1  // TCP_YEAH_GAMMA: fraction of queue to be removed per RTT
	yeahDelta   = 3  // TCP_YEAH_DELTA: log2 of the minimum fraction of cwnd removed on loss
	yeahEpsilon = 1  // TCP_YEAH_EPSILON: log2 of the maximum fraction removed on early decongestion
	yeahPhy     = 8  // TCP_YEAH_PHY: maximum queueing delay, as a fraction 1/8 of baseRTT
	yeahRho     = 16 // TCP_YEAH_RHO: consecutive slow RTTs from which a loss is taken as competition
	yeahZeta    = 50 // TCP_YEAH_ZETA: fast RTTs after which reno_count is reset

	yeahScalableAICnt = 100 // TCP_SCALABLE_AI_CNT (tcp_yeah.c's own copy): fast mode adds one packet per this many acked
)

func init() { Register("yeah", func() Algorithm { return &YeAH{} }) }

// Name returns "yeah".
func (*YeAH) Name() string { return "yeah" }

// Init follows tcp_yeah_init and defines YeAH's signals.
func (y *YeAH) Init(st *State) {
	if y.s == nil {
		y.define(st.Signals)
	}
	y.vegas.reset(st) // tcp_vegas_init; Vegas.Init would define its signals too
	y.doingRenoNow = 0
	y.lastQ = 0
	y.renoCount = 2
	// Keep cwnd·128 within a u32 (the kernel's "ensure the MD arithmetic
	// works").
	st.CwndClampPkts = min(st.CwndClampPkts, 0xffffffff/128)
	y.publish()
}

// define registers YeAH's signals.
func (y *YeAH) define(s *Signals) {
	y.s = s
	y.sig = yeahSignals{
		lastQ:        s.Define("last_q", "pkts", "Q = cwnd·(rtt − baseRTT)/rtt at the last once-per-RTT update (kernel lastQ); above 80 (TCP_YEAH_ALPHA) it triggers precautionary decongestion"),
		doingRenoNow: s.Define("doing_reno_now", "rtts", "consecutive RTTs in slow mode (Q > 80 or queueing delay > baseRTT/8), 0 in fast mode; from 16 (TCP_YEAH_RHO) a loss halves cwnd"),
		fastMode:     s.Define("fast_mode", "enum", "1: fast mode, Scalable increase (one packet per min(cwnd, 100) acked); 0: slow mode, Reno increase"),
		renoCount:    s.Define("reno_count", "pkts", "Reno-emulation window: the floor of precautionary decongestion; halved at each loss, reset to 2 after 50 fast RTTs"),
		fastCount:    s.Define("fast_count", "rtts", "RTTs in fast mode since reno_count was last reset or the last loss"),
		baseRTT:      s.Define("base_rtt", "us", "baseRTT: smallest RTT sample + 1 us since the last restart (Vegas's), the propagation delay estimate"),
		rtt:          s.Define("rtt_min_round", "us", "smallest RTT sample + 1 us of the round the last update used (Vegas's minRTT)"),
	}
}

// PktsAcked is tcp_vegas_pkts_acked, as tcp_yeah.c uses.
func (y *YeAH) PktsAcked(st *State, s AckSample) {
	y.vegas.PktsAcked(st, s)
	y.publish()
}

// SetState is tcp_vegas_state, as tcp_yeah.c uses: entering Open restarts
// the round's sampling. YeAH never reads doing_vegas_now.
func (y *YeAH) SetState(st *State, s CAState) { y.vegas.SetState(st, s) }

// CwndEvent is tcp_vegas_cwnd_event, as tcp_yeah.c uses: after idle (and
// after an RTO, whose first send is a TX_START) Vegas's sampling starts
// over, baseRTT included; YeAH's own state is kept.
func (y *YeAH) CwndEvent(st *State, ev Event) {
	if ev == EventCwndRestart || ev == EventTxStart {
		y.vegas.reset(st)
		y.publish()
	}
}

// CongAvoid follows tcp_yeah_cong_avoid: Scalable or Reno growth on every
// ACK, then the once-per-RTT queue estimate.
func (y *YeAH) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	// Only a slow start that took every packet acked skips the increase
	// (the kernel's goto do_vegas).
	grow := true
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		grow = acked != 0
	}
	if grow {
		if y.doingRenoNow == 0 {
			CongAvoidAI(st, min(st.CwndPkts, yeahScalableAICnt), acked) // Scalable
		} else {
			CongAvoidAI(st, st.CwndPkts, acked) // Reno
		}
	}
	v := &y.vegas
	if seqAfter(st.LastAckSeq, v.begSndNxt) {
		// Three samples or more: at least one not from a delayed ACK.
		if v.cntRTT > 2 {
			y.update(st)
		}
		v.begSndNxt = st.SndNxt
		v.cntRTT = 0
		v.minRTT = 0x7fffffff
	}
	y.publish()
}

// update is the once-per-RTT block of tcp_yeah_cong_avoid: estimate the
// queue, choose the mode, and decongest when the queue exceeds alpha.
func (y *YeAH) update(st *State) {
	v := &y.vegas
	rtt := v.minRTT
	y.lastRTT = rtt
	queue := uint32(uint64(st.CwndPkts) * uint64(rtt-v.baseRTT) / uint64(rtt))

	if queue > yeahAlpha || rtt-v.baseRTT > v.baseRTT/yeahPhy {
		if queue > yeahAlpha && st.CwndPkts > y.renoCount {
			// Precautionary decongestion: drain the queue, but at
			// most half the window and not below reno_count.
			reduction := min(queue/yeahGamma, st.CwndPkts>>yeahEpsilon)
			st.CwndPkts = max(st.CwndPkts-reduction, y.renoCount)
			st.SSThreshPkts = st.CwndPkts
		}
		if y.renoCount <= 2 {
			y.renoCount = max(st.CwndPkts>>1, 2)
		} else {
			y.renoCount++
		}
		y.doingRenoNow = min(y.doingRenoNow+1, 0xffffff)
	} else {
		y.fastCount++
		if y.fastCount > yeahZeta {
			y.renoCount = 2
			y.fastCount = 0
		}
		y.doingRenoNow = 0
	}
	y.lastQ = queue
}

// SSThresh follows tcp_yeah_ssthresh: take off the queue measured at the
// last update, at least cwnd/8 (TCP_YEAH_DELTA) and at most half, or half
// once slow mode has lasted 16 RTTs (TCP_YEAH_RHO); halve reno_count.
// Like the kernel's hook it changes the algorithm's own state (fast_count,
// reno_count), never State.
func (y *YeAH) SSThresh(st *State) uint32 {
	var reduction uint32
	if y.doingRenoNow < yeahRho {
		reduction = min(y.lastQ, max(st.CwndPkts>>1, 2))
		reduction = max(reduction, st.CwndPkts>>yeahDelta)
	} else {
		reduction = max(st.CwndPkts>>1, 2)
	}
	y.fastCount = 0
	y.renoCount = max(y.renoCount>>1, 2)
	y.publish()
	// max_t(int, …): the difference as a signed int.
	return uint32(max(int32(st.CwndPkts-reduction), 2))
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_yeah.c uses.
func (*YeAH) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (y *YeAH) publish() {
	if b := y.vegas.baseRTT; b != 0x7fffffff {
		y.s.Set(y.sig.baseRTT, float64(b))
	}
	if y.lastRTT != 0 {
		y.s.Set(y.sig.rtt, float64(y.lastRTT))
	}
	y.s.Set(y.sig.lastQ, float64(y.lastQ))
	y.s.Set(y.sig.doingRenoNow, float64(y.doingRenoNow))
	y.s.Set(y.sig.fastMode, b2f(y.doingRenoNow == 0))
	y.s.Set(y.sig.renoCount, float64(y.renoCount))
	y.s.Set(y.sig.fastCount, float64(y.fastCount))
}
