package cc

import "github.com/ccscope/ccscope/engine/sim"

// LP is TCP Low Priority as the kernel's net/ipv4/tcp_lp.c (mainline 6.x;
// Kuzmanovic & Knightly, "TCP-LP: A Distributed Algorithm for Low Priority
// Data Transfer", INFOCOM 2003): Reno that backs off before the flows it
// shares a path with do. On every ACK it measures a one-way delay from the
// peer's timestamp and its own echoed one, smooths it (sowd, 7/8 old), and
// keeps the smallest and largest it has seen. An early congestion
// indication is a smoothed delay above owd_min + 15 % of (owd_max −
// owd_min): the window halves, or drops to one packet if a second
// indication comes within the inference time (3 RTTs) of the first, and
// Reno's growth stops for that time.
//
// The delay is in relative form: the peer's clock runs at a rate it
// estimates from the timestamps (remote_hz, Hz, an average of 1/64 new),
// and the kernel's fixed-point arithmetic is kept, with its u32 wraps and
// truncating divisions. One of them is a quirk of the kernel's: the delay
// scales the peer's timestamp by LP_RESOL / remote_hz, an integer division,
// so an estimate above 1,000 Hz (two 1 kHz clocks, rounding up) scales it
// by 0 and the "delay" becomes the negated echo, which grows by a
// millisecond per millisecond. The port follows the kernel there too.
//
// The delay includes the peer's timestamp offset (State.RcvTSVal; tcp.
// timestamps), and that decides whether LP works at all. With Linux's
// default (tcp_timestamps 1) the offset is a random u32, and the smoothed
// delay, kept << 3 in a u32, overflows unless delay and offset are below
// 2^29: in 7 connections of 8, sowd >> 3 wraps below owd_min, no
// congestion is ever indicated, and LP is Reno; in the 8th, the first
// sample's cut sets owd_max to twice the offset, which puts the threshold
// out of reach of any queue. With tcp_timestamps 2 (no offset) the delay
// is small and LP yields as designed.
type LP struct {
	// struct lp.
	flag      uint32
	sowd      uint32 // smoothed one-way delay << 3
	owdMin    uint32
	owdMax    uint32
	owdMaxRsv uint32 // reserved owd_max: the largest seen, owd_max the one below it
	remoteHZ  uint32
	remoteRef uint32 // remote_ref_time: the peer's timestamp of the previous estimate
	localRef  uint32 // local_ref_time: the echo of the previous estimate
	lastDrop  uint32 // when LP last cut the window, tcp_time_stamp_ts (0: never)
	inference uint32 // 3 RTTs, in timestamp ticks (ms)
	owd       uint32 // the last one-way delay measured (for its signal)
	s         *Signals
	sig       lpSignals
}

type lpSignals struct{ owd, sowd, owdMin, owdMax, remoteHZ, inference, withinThr, withinInf SignalID }

// enum tcp_lp_state.
const (
	lpValidRHZ  = 1 << 0
	lpValidOWD  = 1 << 1
	lpWithinThr = 1 << 3
	lpWithinInf = 1 << 4
)

// tcpTSHZ is TCP_TS_HZ, the timestamp clock's rate; lpResol is LP_RESOL,
// the resolution of the one-way delay (the same).
const (
	tcpTSHZ = 1000
	lpResol = tcpTSHZ
)

func init() { Register("lp", func() Algorithm { return &LP{} }) }

// Name returns "lp".
func (*LP) Name() string { return "lp" }

// Init follows tcp_lp_init and defines LP's signals.
func (l *LP) Init(st *State) {
	if l.s == nil {
		l.define(st.Signals)
	}
	*l = LP{owdMin: 0xffffffff, s: l.s, sig: l.sig}
}

// define registers LP's signals.
func (l *LP) define(s *Signals) {
	l.s = s
	l.sig = lpSignals{
		owd:       s.Define("owd", "ms", "one-way delay of the last sample, relative (the peer's timestamp scaled by 1000/remote_hz, less the echo; an offset included, u32)"),
		sowd:      s.Define("sowd", "ms", "smoothed one-way delay (7/8 old + 1/8 new), relative as owd"),
		owdMin:    s.Define("owd_min", "ms", "smallest one-way delay since the last early congestion indication"),
		owdMax:    s.Define("owd_max", "ms", "largest one-way delay but one since the last early congestion indication"),
		remoteHZ:  s.Define("remote_hz", "Hz", "the peer's timestamp clock rate as estimated (1/64 new); above 1000 the kernel's integer scaling 1000/remote_hz is 0"),
		inference: s.Define("inference", "ms", "3 × the RTT of the last echoed timestamp: how long after a cut a second indication drops cwnd to 1 and growth stops"),
		withinThr: s.Define("within_thr", "enum", "1: sowd under owd_min + 15 % of (owd_max − owd_min), no congestion indicated"),
		withinInf: s.Define("within_inf", "enum", "1: within the inference time of the last cut: Reno's growth is off"),
	}
}

// CongAvoid follows tcp_lp_cong_avoid: Reno's, except within the inference
// time of a cut.
func (l *LP) CongAvoid(st *State, acked uint32) {
	if l.flag&lpWithinInf == 0 {
		renoCongAvoid(st, acked)
	}
}

// SSThresh is tcp_reno_ssthresh.
func (*LP) SSThresh(st *State) uint32 { return (*Reno)(nil).SSThresh(st) }

// UndoCwnd is tcp_reno_undo_cwnd.
func (*LP) UndoCwnd(st *State) uint32 { return (*Reno)(nil).UndoCwnd(st) }

// remoteHZEstimator follows tcp_lp_remote_hz_estimator: the peer's clock
// rate from how far its timestamps and the echoes moved since the previous
// ACK, averaged with weight 1/64. Its arithmetic is the kernel's: rhz is
// s64 but starts from the u32 remote_hz << 6, and the ratio is u32.
func (l *LP) remoteHZEstimator(tsval, tsecr uint32) uint32 {
	rhz := int64(l.remoteHZ << 6)
	if l.remoteRef != 0 && l.localRef != 0 && tsval != l.remoteRef && tsecr != l.localRef {
		m := int64(tcpTSHZ * (tsval - l.remoteRef) / (tsecr - l.localRef))
		if rhz > 0 {
			m -= rhz >> 6 // the error of the estimate
			rhz += m      // 63/64 old + 1/64 new
		} else {
			rhz = m << 6
		}
	}
	if rhz>>6 > 0 {
		l.flag |= lpValidRHZ
	} else {
		l.flag &^= lpValidRHZ
	}
	l.remoteRef, l.localRef = tsval, tsecr
	return uint32(rhz >> 6)
}

// owdCalculator follows tcp_lp_owd_calculator: the peer's timestamp in
// LP_RESOL units less the echo, a u32 (the kernel's s64 holds a u32
// difference, so its sign test never fires).
func (l *LP) owdCalculator(tsval, tsecr uint32) uint32 {
	l.remoteHZ = l.remoteHZEstimator(tsval, tsecr)
	var owd uint32
	if l.flag&lpValidRHZ != 0 {
		owd = tsval*(lpResol/l.remoteHZ) - tsecr*(lpResol/tcpTSHZ)
	}
	if owd > 0 {
		l.flag |= lpValidOWD
	} else {
		l.flag &^= lpValidOWD
	}
	return owd
}

// rttSample follows tcp_lp_rtt_sample: a one-way delay sample into the
// min, the max (the largest is reserved, the max is the one below it), and
// the smoothed delay.
func (l *LP) rttSample(tsval, tsecr uint32) {
	mowd := int64(l.owdCalculator(tsval, tsecr))
	l.owd = uint32(mowd)
	if l.flag&lpValidRHZ == 0 || l.flag&lpValidOWD == 0 {
		return
	}
	if mowd < int64(l.owdMin) {
		l.owdMin = uint32(mowd)
	}
	if mowd > int64(l.owdMax) {
		if mowd > int64(l.owdMaxRsv) {
			if l.owdMaxRsv == 0 {
				l.owdMax = uint32(mowd)
			} else {
				l.owdMax = l.owdMaxRsv
			}
			l.owdMaxRsv = uint32(mowd)
		} else {
			l.owdMax = uint32(mowd)
		}
	}
	if l.sowd != 0 {
		mowd -= int64(l.sowd >> 3) // the error of the smoothed delay
		l.sowd += uint32(mowd)     // 7/8 old + 1/8 new
	} else {
		l.sowd = uint32(mowd << 3)
	}
}

// PktsAcked follows tcp_lp_pkts_acked: take the ACK's delay sample, then
// test for an early congestion indication and, on one, cut the window
// (to 1 within the inference time of the last cut, else by half) and
// restart the min and max from the smoothed delay.
func (l *LP) PktsAcked(st *State, s AckSample) {
	defer l.publish()
	now := st.TSNow
	if s.RTT >= sim.Microsecond { // rtt_us > 0
		l.rttSample(st.RcvTSVal, st.RcvTSEcr)
	}
	if delta := now - st.RcvTSEcr; int32(delta) > 0 {
		l.inference = 3 * delta
	}
	if l.lastDrop != 0 && now-l.lastDrop < l.inference {
		l.flag |= lpWithinInf
	} else {
		l.flag &^= lpWithinInf
	}
	if l.sowd>>3 < l.owdMin+15*(l.owdMax-l.owdMin)/100 {
		l.flag |= lpWithinThr
		return
	}
	l.flag &^= lpWithinThr
	l.owdMin = l.sowd >> 3
	l.owdMax = l.sowd >> 2
	l.owdMaxRsv = l.sowd >> 2
	if l.flag&lpWithinInf != 0 {
		st.CwndPkts = 1
	} else {
		st.CwndPkts = max(st.CwndPkts>>1, 1)
	}
	l.lastDrop = now
}

// publish records LP's state as signals.
func (l *LP) publish() {
	if l.flag&lpValidOWD != 0 {
		l.s.Set(l.sig.owd, float64(l.owd))
	}
	if l.sowd != 0 {
		l.s.Set(l.sig.sowd, float64(l.sowd)/8)
	}
	if l.owdMin != 0xffffffff {
		l.s.Set(l.sig.owdMin, float64(l.owdMin))
	}
	l.s.Set(l.sig.owdMax, float64(l.owdMax))
	l.s.Set(l.sig.remoteHZ, float64(l.remoteHZ))
	l.s.Set(l.sig.inference, float64(l.inference))
	l.s.Set(l.sig.withinThr, b2f(l.flag&lpWithinThr != 0))
	l.s.Set(l.sig.withinInf, b2f(l.flag&lpWithinInf != 0))
}
