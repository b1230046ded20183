package cc

import "github.com/ccscope/ccscope/engine/sim"

// Vegas is TCP Vegas as the kernel's net/ipv4/tcp_vegas.c (mainline 6.x):
// once per RTT it compares the window with what the path carries at the
// base RTT and keeps between alpha and beta packets queued at the
// bottleneck. Its "diff" is that queue estimate,
//
//	diff = cwnd·(rtt − baseRTT)/baseRTT  packets,
//
// where rtt is the smallest RTT sampled in the last round and baseRTT the
// smallest ever. Below alpha it adds a packet per RTT, above beta it takes
// one away; in slow start a diff above gamma ends slow start at the rate
// the path carried. Loss recovery is Reno's (tcp_reno_ssthresh).
type Vegas struct {
	// struct vegas.
	begSndNxt     uint64 // right edge during the last RTT, bytes
	doingVegasNow bool   // do Vegas for this RTT
	cntRTT        uint16 // RTT samples in the last RTT
	minRTT        uint32 // min RTT in the last RTT, us (+1)
	baseRTT       uint32 // min of all RTT samples, us (+1)

	diff uint32 // the last diff computed, kept for its signal
	s    *Signals
	sig  vegasSignals
}

type vegasSignals struct{ baseRTT, minRTT, diff, enabled SignalID }

// The module parameters of tcp_vegas.c at their defaults, in packets.
const (
	vegasAlpha = 2 // lower bound of packets queued
	vegasBeta  = 4 // upper bound of packets queued
	vegasGamma = 1 // limit on the queue in slow start
)

func init() { Register("vegas", func() Algorithm { return &Vegas{} }) }

// Name returns "vegas".
func (*Vegas) Name() string { return "vegas" }

// enable follows vegas_enable: begin taking samples with the next send
// window.
func (v *Vegas) enable(st *State) {
	v.doingVegasNow = true
	v.begSndNxt = st.SndNxt
	v.cntRTT = 0
	v.minRTT = 0x7fffffff
}

// Init follows tcp_vegas_init and defines Vegas's signals.
func (v *Vegas) Init(st *State) {
	if v.s == nil {
		s := st.Signals
		v.s = s
		v.sig = vegasSignals{
			baseRTT: s.Define("base_rtt", "us", "baseRTT: smallest RTT sample + 1 us, the propagation delay estimate"),
			minRTT:  s.Define("rtt_min_round", "us", "smallest RTT sample + 1 us in the last round (Vegas's rtt)"),
			diff:    s.Define("diff", "pkts", "queue estimate cwnd·(rtt − baseRTT)/baseRTT at the last once-per-RTT update"),
			enabled: s.Define("doing_vegas_now", "enum", "1 while Vegas adjusts cwnd (CA state Open), 0 while Reno does"),
		}
	}
	v.reset(st)
	v.publish()
}

// reset is tcp_vegas_init's state: forget baseRTT and sample anew.
// YeAH's Vegas, whose signals stay undefined, takes this alone.
func (v *Vegas) reset(st *State) {
	v.baseRTT = 0x7fffffff
	v.enable(st)
}

// PktsAcked follows tcp_vegas_pkts_acked: min-filter the RTT over the
// round and over all time (+1 us: never zero).
func (v *Vegas) PktsAcked(_ *State, s AckSample) {
	if s.RTT < 0 {
		return
	}
	vrtt := usOf(s.RTT) + 1
	v.baseRTT = min(v.baseRTT, vrtt)
	v.minRTT = min(v.minRTT, vrtt)
	v.cntRTT++
	v.publish()
}

// SetState follows tcp_vegas_state: Vegas runs in Open only.
func (v *Vegas) SetState(st *State, s CAState) {
	if s == CAOpen {
		v.enable(st)
	} else {
		v.doingVegasNow = false
	}
	v.publish()
}

// CwndEvent follows tcp_vegas_cwnd_event: restart from a clean slate after
// idle.
func (v *Vegas) CwndEvent(st *State, ev Event) {
	if ev == EventCwndRestart || ev == EventTxStart {
		v.Init(st)
	}
}

// CongAvoid follows tcp_vegas_cong_avoid.
func (v *Vegas) CongAvoid(st *State, acked uint32) {
	if !v.doingVegasNow {
		renoCongAvoid(st, acked)
		return
	}
	if seqAfter(st.LastAckSeq, v.begSndNxt) {
		// The once-per-RTT adjustment.
		v.begSndNxt = st.SndNxt
		if v.cntRTT <= 2 {
			// Too few samples to tell a delayed ACK from the path.
			renoCongAvoid(st, acked)
		} else {
			rtt := v.minRTT
			targetCwnd := uint64(st.CwndPkts) * uint64(v.baseRTT) / uint64(rtt)
			// u32 arithmetic, as the kernel's.
			v.diff = st.CwndPkts * (rtt - v.baseRTT) / v.baseRTT
			switch {
			case v.diff > vegasGamma && InSlowStart(st):
				// Going too fast: match the rate the path carried,
				// +1 for the truncation, and leave slow start.
				st.CwndPkts = min(st.CwndPkts, uint32(targetCwnd)+1)
				st.SSThreshPkts = min(st.SSThreshPkts, st.CwndPkts)
			case InSlowStart(st):
				SlowStart(st, acked)
			case v.diff > vegasBeta:
				st.CwndPkts--
				st.SSThreshPkts = min(st.SSThreshPkts, st.CwndPkts)
			case v.diff < vegasAlpha:
				st.CwndPkts++
			}
			if st.CwndPkts < 2 {
				st.CwndPkts = 2
			} else if st.CwndPkts > st.CwndClampPkts {
				st.CwndPkts = st.CwndClampPkts
			}
			st.SSThreshPkts = CurrentSSThresh(st)
		}
		v.cntRTT = 0
		v.minRTT = 0x7fffffff
	} else if InSlowStart(st) {
		SlowStart(st, acked)
	}
	v.publish()
}

// SSThresh is tcp_reno_ssthresh, as tcp_vegas.c uses.
func (*Vegas) SSThresh(st *State) uint32 { return max(st.CwndPkts>>1, 2) }

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_vegas.c uses.
func (*Vegas) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (v *Vegas) publish() {
	if v.s == nil {
		return
	}
	if v.baseRTT != 0x7fffffff {
		v.s.Set(v.sig.baseRTT, float64(v.baseRTT))
	}
	if v.minRTT != 0x7fffffff {
		v.s.Set(v.sig.minRTT, float64(v.minRTT))
	}
	v.s.Set(v.sig.diff, float64(v.diff))
	en := 0.0
	if v.doingVegasNow {
		en = 1
	}
	v.s.Set(v.sig.enabled, en)
}

// renoCongAvoid is tcp_reno_cong_avoid, which several algorithms fall
// back to.
func renoCongAvoid(st *State, acked uint32) { (*Reno)(nil).CongAvoid(st, acked) }

// usOf is a duration in whole microseconds, as the kernel's u32 rtt_us.
func usOf(d sim.Duration) uint32 { return uint32(d / sim.Microsecond) }
