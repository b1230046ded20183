package cc

import "github.com/ccscope/ccscope/engine/units"

// The kernel's arithmetic around tcp_congestion_ops that both the product's
// sender (engine/tcp) and the CC micro-harness (engine/cc/cctest) run. It
// lives here, once, because both import engine/cc (and cc never imports
// tcp): a CC test then exercises the same PRR, pacing-rate and
// cwnd-reduction code as a simulation does.

// Kernel constants shared by the senders and the algorithms
// (include/net/tcp.h, include/linux/netdevice.h, 6.x).
const (
	// InitCwnd is TCP_INIT_CWND, the default initial window in packets.
	InitCwnd = 10
	// InfiniteSSThresh is TCP_INFINITE_SSTHRESH, ssthresh before any loss.
	InfiniteSSThresh = 0x7fffffff
	// GSOLegacyMaxSize is GSO_LEGACY_MAX_SIZE (GSO_MAX_SIZE before 5.19), a
	// device's default gso_ipv4_max_size, in bytes.
	GSOLegacyMaxSize = 65536
	// MaxTCPHeader is MAX_TCP_HEADER, L1_CACHE_ALIGN(128 + MAX_HEADER),
	// which a kernel's configuration sets: MAX_HEADER is LL_MAX_HEADER (32;
	// 96 or 128 with WLAN, AX.25 or Hyper-V networking), 48 more with IP
	// tunnels. It is 192 on the 6.18 kernel the simulator is compared with
	// (none of those built), 320 on a typical distribution kernel. Measured
	// there: tcp_sendmsg's size goal at MSS 1360 is 65,280 bytes, 48
	// segments, where 256 or 320 would leave room for 47.
	MaxTCPHeader = 192
	// SKGSOMaxSize is sk_gso_max_size as sk_dst_gso_max_size (net/core/sock.c,
	// 6.x) sets it for a device at GSO_LEGACY_MAX_SIZE: less MAX_TCP_HEADER
	// + 1, 65343 bytes.
	SKGSOMaxSize = GSOLegacyMaxSize - (MaxTCPHeader + 1)
	// PacingSSRatio and PacingCARatio are sysctl_tcp_pacing_ss_ratio and
	// sysctl_tcp_pacing_ca_ratio, in percent.
	PacingSSRatio = 200
	PacingCARatio = 120
)

// InCwndReduction is tcp_in_cwnd_reduction: the sender is in CWR or Recovery.
func InCwndReduction(st *State) bool { return st.CA == CACWR || st.CA == CARecovery }

// CurrentSSThresh follows tcp_current_ssthresh (include/net/tcp.h, 6.x): in a
// cwnd reduction the target, else the larger of ssthresh and 3/4 of cwnd.
func CurrentSSThresh(st *State) uint32 {
	if InCwndReduction(st) {
		return st.SSThreshPkts
	}
	return max(st.SSThreshPkts, st.CwndPkts>>1+st.CwndPkts>>2)
}

// PacingRate follows tcp_update_pacing_rate (net/ipv4/tcp_input.c, 6.x):
// PacingSSRatio% of cwnd/srtt in the first half of slow start,
// PacingCARatio% after, over max(cwnd, packets_out) packets. srttUs8 is
// tp->srtt_us (srtt in microseconds, scaled by 8); with no sample yet the
// kernel skips the division, and so does this.
func PacingRate(st *State, packetsOut uint32, srttUs8 int64) units.BitRate {
	// rate in bytes/s = mss · (USEC_PER_SEC/100 << 3) · ratio · cwnd / srtt_us(<<3).
	rate := uint64(st.MSS) * ((1000000 / 100) << 3)
	if st.CwndPkts < st.SSThreshPkts/2 {
		rate *= PacingSSRatio
	} else {
		rate *= PacingCARatio
	}
	rate *= uint64(max(st.CwndPkts, packetsOut))
	if srttUs8 != 0 {
		rate /= uint64(srttUs8)
	}
	return units.BitRate(rate * 8)
}

// PRR is Proportional Rate Reduction's state (RFC 6937): tp->prr_delivered
// and tp->prr_out, as quic-go's PrrSender keeps them apart from the sender.
type PRR struct {
	Delivered uint32 // prr_delivered: packets delivered since the reduction began
	Out       uint32 // prr_out: packets sent since the reduction began
}

// Start resets the counters, as tcp_init_cwnd_reduction does.
func (p *PRR) Start() { *p = PRR{} }

// Sent counts n packets sent while in a cwnd reduction (tcp_event_new_data_sent,
// tcp_retransmit_skb: tp->prr_out += pcount).
func (p *PRR) Sent(n uint32) { p.Out += n }

// PRRAck is what tcp_cwnd_reduction learns of one ACK.
type PRRAck struct {
	NewlyAckedSacked int32 // packets newly acked or SACKed
	NewlyLost        int32 // packets newly marked lost
	UnaAdvanced      bool  // FLAG_SND_UNA_ADVANCED: the ACK moved snd_una
}

// CwndReduction follows tcp_cwnd_reduction (net/ipv4/tcp_input.c, 6.x): while
// more than ssthresh is in flight, send ssthresh/prior_cwnd of what is
// delivered (RFC 6937 section 3, the proportional part); below it, slow-start
// back up towards ssthresh (PRR-SSRB). It sets st.CwndPkts to inFlight
// (tcp_packets_in_flight) plus what may be sent.
func (p *PRR) CwndReduction(st *State, inFlight uint32, a PRRAck) {
	if a.NewlyAckedSacked <= 0 || st.PriorCwndPkts == 0 {
		return
	}
	newlyAckedSacked := a.NewlyAckedSacked
	delta := int64(st.SSThreshPkts) - int64(inFlight)
	p.Delivered += uint32(newlyAckedSacked)
	var sndcnt int64
	if delta < 0 {
		dividend := uint64(st.SSThreshPkts)*uint64(p.Delivered) + uint64(st.PriorCwndPkts) - 1
		sndcnt = int64(dividend/uint64(st.PriorCwndPkts)) - int64(p.Out)
	} else {
		sndcnt = max(int64(p.Delivered)-int64(p.Out), int64(newlyAckedSacked))
		if a.UnaAdvanced && a.NewlyLost == 0 {
			sndcnt++
		}
		sndcnt = min(delta, sndcnt)
	}
	// Force a fast retransmit upon entering fast recovery.
	if p.Out == 0 {
		sndcnt = max(sndcnt, 1)
	} else {
		sndcnt = max(sndcnt, 0)
	}
	st.CwndPkts = uint32(int64(inFlight) + sndcnt)
}

// UndoMarked tells whether tp->undo_marker is set: the reduction in progress
// may still be undone as spurious.
type UndoMarked bool

// EndCwndReduction follows tcp_end_cwnd_reduction (net/ipv4/tcp_input.c,
// 6.x): an algorithm with cong_control keeps its own window; otherwise cwnd
// drops to ssthresh after CWR, or after a Recovery that may still be undone
// (undo set: tp->undo_marker), and CA_EVENT_COMPLETE_CWR is sent through event (the
// caller's tcp_ca_event). It returns whether it set cwnd, so the caller can
// stamp tp->snd_cwnd_stamp.
func EndCwndReduction(st *State, h *Hooks, undo UndoMarked, event func(Event)) bool {
	if h.CongControl != nil {
		return false
	}
	set := false
	if st.SSThreshPkts < InfiniteSSThresh && (st.CA == CACWR || bool(undo)) {
		st.CwndPkts = st.SSThreshPkts
		set = true
	}
	event(EventCompleteCWR)
	return set
}

// CwndUse is tcp_cwnd_validate's record of whether the sender used its
// window (struct tcp_sock's is_cwnd_limited, max_packets_out and
// cwnd_usage_seq), from which tcp_is_cwnd_limited answers.
type CwndUse struct {
	IsCwndLimited bool   // tp->is_cwnd_limited
	MaxPacketsOut uint32 // tp->max_packets_out
	UsageSeq      uint64 // tp->cwnd_usage_seq, in the caller's sequence unit
}

// Validate follows tcp_cwnd_validate's tracking (tcp_output.c, 6.x), called
// after a send attempt: a new window of data starts once snd_una passes the
// usage mark, and within one the record only grows. sndUna and sndNxt are in
// any one sequence unit (bytes or packets); packetsOut is tp->packets_out;
// cwndLimited tells the attempt stopped for want of window.
func (u *CwndUse) Validate(sndUna, sndNxt uint64, packetsOut uint32, cwndLimited bool) {
	if sndUna >= u.UsageSeq || cwndLimited || !u.IsCwndLimited && packetsOut > u.MaxPacketsOut {
		u.IsCwndLimited = cwndLimited
		u.MaxPacketsOut = packetsOut
		u.UsageSeq = sndNxt
	}
}

// CwndLimited is tcp_is_cwnd_limited (include/net/tcp.h, 6.x): the window
// was fully used in the current window of data, or, in slow start, more
// than half of it was in flight (so slow start may grow it).
func (u *CwndUse) CwndLimited(st *State) bool {
	if u.IsCwndLimited {
		return true
	}
	if InSlowStart(st) {
		return st.CwndPkts < 2*u.MaxPacketsOut
	}
	return false
}
