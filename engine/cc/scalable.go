package cc

// Scalable is Scalable TCP as the kernel's net/ipv4/tcp_scalable.c
// (mainline 6.x; Kelly, "Scalable TCP: improving performance in highspeed
// wide area networks", ACM SIGCOMM CCR 33(2), 2003). It replaces Reno's
// AIMD by MIMD: in congestion avoidance every packet acked adds a = 0.01
// packets, so the window grows by 1 % per RTT whatever its size, and a loss
// takes b = 1/8 of it away. The time to recover from a loss is then the
// same at every window, log(1/(1−b))/log(1+a) ≈ 13.4 RTTs (Kelly 2003).
//
// The kernel keeps the arithmetic in whole packets: +1 packet per
// TCP_SCALABLE_AI_CNT = 100 packets acked (tcp_cong_avoid_ai's counter),
// but per cwnd packets below a window of 100, where Scalable TCP grows as
// Reno does; ssthresh is cwnd − cwnd>>3. Slow start and undo are Reno's.
type Scalable struct {
	s   *Signals
	sig scalableSignals
}

type scalableSignals struct{ aiCnt, mdPkts SignalID }

// The constants of tcp_scalable.c, which its comment derives from the
// paper's recommended a = .01 and 1 − b = 7/8.
const (
	scalableAICnt   = 100 // TCP_SCALABLE_AI_CNT: packets acked per +1 packet
	scalableMDScale = 3   // TCP_SCALABLE_MD_SCALE: a loss removes cwnd>>3
)

func init() { Register("scalable", func() Algorithm { return &Scalable{} }) }

// Name returns "scalable".
func (*Scalable) Name() string { return "scalable" }

// Init defines Scalable's signals. tcp_scalable.c has no init hook: the
// algorithm keeps no state of its own, and its signals are derived from
// the window.
func (sc *Scalable) Init(st *State) {
	if sc.s == nil {
		s := st.Signals
		sc.s = s
		sc.sig = scalableSignals{
			aiCnt: s.Define("ai_cnt", "acks", "packets acked per one-packet increase of cwnd: min(cwnd, 100), so +1 % of cwnd per RTT at cwnd ≥ 100"),
			// Set at each loss (ssthresh hook), not from the window.
			mdPkts: s.Define("md_pkts", "pkts", "packets the last multiplicative decrease took off: cwnd>>3 at the loss"),
		}
	}
	sc.publish(st)
}

// CongAvoid follows tcp_scalable_cong_avoid: Reno's slow start, then one
// packet per min(cwnd, 100) packets acked through tcp_cong_avoid_ai.
func (sc *Scalable) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		if acked == 0 {
			sc.publish(st)
			return
		}
	}
	CongAvoidAI(st, min(st.CwndPkts, scalableAICnt), acked)
	sc.publish(st)
}

// SSThresh follows tcp_scalable_ssthresh: take an eighth off the window
// (rounded down, so cwnd < 8 loses nothing), at least 2.
func (sc *Scalable) SSThresh(st *State) uint32 {
	md := st.CwndPkts >> scalableMDScale
	sc.s.Set(sc.sig.mdPkts, float64(md))
	return max(st.CwndPkts-md, 2)
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_scalable.c uses.
func (*Scalable) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the window-derived signal; Set drops unchanged values.
func (sc *Scalable) publish(st *State) {
	sc.s.Set(sc.sig.aiCnt, float64(min(st.CwndPkts, scalableAICnt)))
}
