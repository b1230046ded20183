package cc

// Reno is TCP Reno as the kernel's tcp_reno in net/ipv4/tcp_cong.c:
// Jacobson's slow start and congestion avoidance, halving on loss. It is the
// model of an algorithm file: a type with the three required hooks and a
// registry line. Reno keeps no state of its own, so it defines no signals;
// see Cubic for the Define-in-Init, Set-on-change pattern.
type Reno struct{}

func init() { Register("reno", func() Algorithm { return &Reno{} }) }

// Name returns "reno".
func (*Reno) Name() string { return "reno" }

// CongAvoid follows tcp_reno_cong_avoid: grow only when the window was the
// limit, double per RTT below ssthresh, then one packet per window of ACKs.
func (*Reno) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		if acked == 0 {
			return
		}
	}
	CongAvoidAI(st, st.CwndPkts, acked)
}

// SSThresh follows tcp_reno_ssthresh: half the window, at least 2.
func (*Reno) SSThresh(st *State) uint32 { return max(st.CwndPkts>>1, 2) }

// UndoCwnd follows tcp_reno_undo_cwnd: restore the window the reduction
// started from.
func (*Reno) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// InSlowStart follows tcp_in_slow_start: cwnd below ssthresh.
func InSlowStart(st *State) bool { return st.CwndPkts < st.SSThreshPkts }

// SlowStart follows tcp_slow_start: add one packet per packet acked, but not
// past ssthresh, and return the acks left over for congestion avoidance. A
// stretch ACK counts in full (the kernel's "better than ABC").
func SlowStart(st *State, acked uint32) uint32 {
	cwnd := min(st.CwndPkts+acked, st.SSThreshPkts)
	acked -= cwnd - st.CwndPkts
	st.CwndPkts = min(cwnd, st.CwndClampPkts)
	return acked
}

// CongAvoidAI follows tcp_cong_avoid_ai: add one packet per w packets acked,
// counting in CwndCnt. Credit accumulated under a larger w is applied first,
// so a shrinking w (CUBIC's cnt) takes effect at once.
func CongAvoidAI(st *State, w, acked uint32) {
	if st.CwndCnt >= w {
		st.CwndCnt = 0
		st.CwndPkts++
	}
	st.CwndCnt += acked
	if st.CwndCnt >= w {
		delta := st.CwndCnt / w
		st.CwndCnt -= delta * w
		st.CwndPkts += delta
	}
	st.CwndPkts = min(st.CwndPkts, st.CwndClampPkts)
}
