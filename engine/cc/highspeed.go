package cc

// HighSpeed is HighSpeed TCP as the kernel's net/ipv4/tcp_highspeed.c
// (mainline 6.x; Floyd, RFC 3649). Above Low_Window = 38 packets it trades
// Reno's AIMD(1, 1/2) for AIMD(a(w), b(w)): each RTT adds a(w) packets and
// a loss takes b(w)·w away, with a(w) growing and b(w) falling with the
// window so that the mean window follows the response function
// w = 0.12/p^0.835 (RFC 3649 §5) instead of Reno's 1.2/p^0.5. At or below
// 38 packets a(w) = 1 and b(w) = 1/2, Reno's values.
//
// The kernel does not evaluate RFC 3649's formulas: it steps through the
// table of RFC 3649 Appendix B (hstcpAIMDVals), keeping the row index ai
// such that row ai−1's window < cwnd ≤ row ai's window, and uses that row
// for the whole step: a(w) = ai + 1 packets per RTT, b(w) = md/256. It
// counts the increase in snd_cwnd_cnt (ai + 1 per ACK, +1 packet per cwnd)
// and moves ai only in congestion avoidance.
type HighSpeed struct {
	// struct hstcp.
	ai uint32 // row of hstcpAIMDVals in use

	s   *Signals
	sig highSpeedSignals
}

type highSpeedSignals struct{ ai, a, b SignalID }

// hstcpAIMDVals is hstcp_aimd_vals of tcp_highspeed.c, the kernel's copy
// of RFC 3649 Appendix B: row i holds the window w at which a(w) reaches
// i + 1 packets per RTT, and b(w) at that window as md = b·256 (rounded
// down). The RFC's table runs on past the kernel's last row (w = 89053,
// a = 72); the kernel keeps that row for every larger window.
var hstcpAIMDVals = [...]struct{ cwnd, md uint32 }{
	{38, 128}, {118, 112}, {221, 104}, {347, 98}, {495, 93},
	{663, 89}, {851, 86}, {1058, 83}, {1284, 81}, {1529, 78},
	{1793, 76}, {2076, 74}, {2378, 72}, {2699, 71}, {3039, 69},
	{3399, 68}, {3778, 66}, {4177, 65}, {4596, 64}, {5036, 62},
	{5497, 61}, {5979, 60}, {6483, 59}, {7009, 58}, {7558, 57},
	{8130, 56}, {8726, 55}, {9346, 54}, {9991, 53}, {10661, 52},
	{11358, 52}, {12082, 51}, {12834, 50}, {13614, 49}, {14424, 48},
	{15265, 48}, {16137, 47}, {17042, 46}, {17981, 45}, {18955, 45},
	{19965, 44}, {21013, 43}, {22101, 43}, {23230, 42}, {24402, 41},
	{25618, 41}, {26881, 40}, {28193, 39}, {29557, 39}, {30975, 38},
	{32450, 38}, {33986, 37}, {35586, 36}, {37253, 36}, {38992, 35},
	{40808, 35}, {42707, 34}, {44694, 33}, {46776, 33}, {48961, 32},
	{51258, 32}, {53677, 31}, {56230, 30}, {58932, 30}, {61799, 29},
	{64851, 28}, {68113, 28}, {71617, 27}, {75401, 26}, {79517, 26},
	{84035, 25}, {89053, 24},
}

// hstcpAIMDMax is HSTCP_AIMD_MAX: the table's length.
const hstcpAIMDMax = uint32(len(hstcpAIMDVals))

func init() { Register("highspeed", func() Algorithm { return &HighSpeed{} }) }

// Name returns "highspeed".
func (*HighSpeed) Name() string { return "highspeed" }

// Init follows hstcp_init: start at the table's first row and clamp the
// window so that hstcp_ssthresh's u32 product cwnd·md cannot overflow
// (md ≤ 128).
func (h *HighSpeed) Init(st *State) {
	if h.s == nil {
		s := st.Signals
		h.s = s
		h.sig = highSpeedSignals{
			ai: s.Define("ai", "index", "row of the RFC 3649 Appendix B table in use (kernel ca->ai), set in congestion avoidance; 0 at or below 38 packets"),
			a:  s.Define("a_w", "pkts", "a(w): packets added per RTT in congestion avoidance, ai + 1"),
			b:  s.Define("b_w", "ratio", "b(w): fraction of cwnd the next loss takes off, md/256 of the row in use"),
		}
	}
	h.ai = 0
	st.CwndClampPkts = min(st.CwndClampPkts, 0xffffffff/128)
	h.publish()
}

// CongAvoid follows hstcp_cong_avoid. Slow start is tcp_slow_start, whose
// leftover acks the kernel drops. In congestion avoidance ai first moves
// to the row with row[ai−1].cwnd < cwnd ≤ row[ai].cwnd (stopping at the
// last row), then the ACK adds ai + 1 to snd_cwnd_cnt and cwnd grows by
// one packet when the count reaches cwnd: a(w)/w per ACK. Like the
// kernel, an ACK counts once however many packets it acks.
func (h *HighSpeed) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		SlowStart(st, acked)
		return
	}
	cwnd := st.CwndPkts
	if cwnd > hstcpAIMDVals[h.ai].cwnd {
		for cwnd > hstcpAIMDVals[h.ai].cwnd && h.ai < hstcpAIMDMax-1 {
			h.ai++
		}
	} else if h.ai > 0 && cwnd <= hstcpAIMDVals[h.ai-1].cwnd {
		for h.ai > 0 && cwnd <= hstcpAIMDVals[h.ai-1].cwnd {
			h.ai--
		}
	}
	if st.CwndPkts < st.CwndClampPkts {
		st.CwndCnt += h.ai + 1
		if st.CwndCnt >= st.CwndPkts {
			st.CwndCnt -= st.CwndPkts
			st.CwndPkts++
		}
	}
	h.publish()
}

// SSThresh follows hstcp_ssthresh: cwnd − cwnd·b(w) with b(w) = md/256 of
// the row in use, the product rounded down (so an odd window at or below
// 38 keeps the larger half), at least 2. ai is the row the last
// congestion-avoidance ACK chose, which may belong to another window: in
// the first slow start it is row 0, so a loss there takes b = 1/2
// whatever the window; after a timeout's slow start it is still the row
// from before the timeout.
func (h *HighSpeed) SSThresh(st *State) uint32 {
	cwnd := st.CwndPkts
	return max(cwnd-((cwnd*hstcpAIMDVals[h.ai].md)>>8), 2)
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_highspeed.c uses.
func (*HighSpeed) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (h *HighSpeed) publish() {
	h.s.Set(h.sig.ai, float64(h.ai))
	h.s.Set(h.sig.a, float64(h.ai+1))
	h.s.Set(h.sig.b, float64(hstcpAIMDVals[h.ai].md)/256)
}
