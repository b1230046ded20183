package cc

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/sim"
)

// NV is TCP-NV as the kernel's net/ipv4/tcp_nv.c (mainline 6.x; Brakmo,
// "TCP-NV: An Update to TCP-Vegas", 2010), a congestion-avoidance
// successor of Vegas meant for data centres. On every ACK with an RTT
// sample it measures the rate the flow achieves,
//
//	rate = in_flight·8/avg_rtt  (kernel unit 100 bit/s: bytes·80000/µs),
//
// with avg_rtt the samples filtered ½ old + ½ new, and keeps the largest
// rate of the round. Once per RTT it turns that rate into the window that
// would carry it at the smallest RTT seen, cwnd_by_slope =
// max_rate·min_rtt/(80000·MSS), and allows nv_pad = 10 packets of queue
// above it: a window above max_win = cwnd_by_slope + 10 is congestion, and
// NV cuts 30 % of the excess (at least 2 packets; to max_win when the
// excess is at most 2) and sets ssthresh to max_win — which also ends slow
// start; a window at or below max_win − nv_pad_buffer (2) lets cwnd grow,
// as Reno does; in between nothing changes. Decisions wait for enough RTT
// samples (20 to grow, 30 to leave slow start, 60 to decrease) and at least
// two RTTs (nv_rtt_min_cnt) since the last one. min_rtt is the smallest
// averaged RTT seen; every nv_reset_period = 5 s (±25 %, drawn at random;
// the first after 2 s) it is replaced by the smallest since the last
// replacement, and the first sample after a loss event restarts it. A
// loss sets ssthresh to 80 % of cwnd and stops growth until the rate test
// allows it again; after an RTO the additive increase
// slows to one packet per 2^k RTTs (k ≤ 8), speeding up again after every
// nine uncongested decisions.
//
// nv_pad, nv_reset_period and nv_min_cwnd are NVParams (a flow's
// cc_params); the module's other parameters are constants at their
// defaults. The kernel's u8/u32/u64 fixed point and division order are
// kept, and time is in jiffies for the reset period. No BPF base_rtt is
// given (BPF_SOCK_OPS_BASE_RTT), so the RTT bounds stay off, as without a
// sock_ops program.
type NV struct {
	p NVParams
	// struct tcpnv.
	minRTTResetJiffies uint32 // nv_min_rtt_reset_jiffies: when to switch to minRTTNew
	cwndGrowthFactor   int8   // cwnd_growth_factor: < 0 grows less than 1 packet/RTT
	allowCwndGrowth    bool   // nv_allow_cwnd_growth
	reset              bool   // nv_reset: reset the per-RTT state on return to Open
	catchup            bool   // nv_catchup: growing because of a temporary decrease
	evalCallCnt        uint8  // nv_eval_call_cnt: RTT samples since the last decision
	minCwnd            uint8  // nv_min_cwnd (the struct's): grows while RTTs give one sample, pkts
	rttCnt             uint8  // nv_rtt_cnt: RTTs without a decision
	lastRTT            uint32 // nv_last_rtt: the averaged RTT, µs
	minRTT             uint32 // nv_min_rtt: active min RTT, µs
	minRTTNew          uint32 // nv_min_rtt_new: min RTT for the next period, µs
	baseRTT            uint32 // nv_base_rtt: BPF's RTT upper bound, µs; 0: none
	lowerBoundRTT      uint32 // nv_lower_bound_rtt: 80 % of baseRTT, µs; 0: none
	rttMaxRate         uint32 // nv_rtt_max_rate: max rate this RTT, 100 bit/s
	rttStartSeq        uint32 // nv_rtt_start_seq: the RTT ends when snd_una passes it
	lastSndUna         uint32 // nv_last_snd_una
	noCongCnt          uint32 // nv_no_cong_cnt: consecutive no-congestion decisions

	rng *rand.Rand // get_random_bytes

	// For the signals only, not kernel state.
	rate         uint32 // the last sample's rate, 100 bit/s
	cwndBySlope  uint32 // at the last once-per-RTT evaluation, pkts
	maxWin       uint32 // at the last once-per-RTT evaluation, pkts
	decreases    uint32 // congestion decisions (cwnd cut)
	increases    uint32 // no-congestion decisions (growth allowed)
	minRTTResets uint32 // min_rtt replacements
	s            *Signals
	sig          nvSignals
}

type nvSignals struct {
	rate, maxRate, cwndRate, avgRTT, minRTT, minRTTNew, resetAt, resets SignalID
	cwndBySlope, maxWin, allowGrowth, nvReset, catchup, evalCnt, rttCnt SignalID
	noCongCnt, growthFactor, minCwnd, decreases, increases              SignalID
}

// tcp_nv.c's module parameters that are not NVParams, at their defaults,
// and its constants.
const (
	nvPadBuffer            = 2              // nv_pad_buffer: do not grow this close to nv_pad
	nvCongDecMult          = 30 * 128 / 100 // nv_cong_dec_mult: 38/128, 30 % of the excess
	nvSSThreshFactor       = 8              // nv_ssthresh_factor: ssthresh = 8·max_win/8
	nvRTTFactor            = 128            // nv_rtt_factor: avg = ½ old + ½ new
	nvLossDecFactor        = 819            // nv_loss_dec_factor: 819/1024, 80 %
	nvCwndGrowthRateNeg    = 8              // nv_cwnd_growth_rate_neg
	nvCwndGrowthRatePos    = 0              // nv_cwnd_growth_rate_pos: 0, fixed like Reno
	nvDecEvalMinCalls      = 60             // nv_dec_eval_min_calls
	nvIncEvalMinCalls      = 20             // nv_inc_eval_min_calls
	nvSSThreshEvalMinCalls = 30             // nv_ssthresh_eval_min_calls
	nvStopRTTCnt           = 10             // nv_stop_rtt_cnt
	nvRTTMinCnt            = 2              // nv_rtt_min_cnt

	nvInitRTT      = ^uint32(0) // NV_INIT_RTT
	nvMinCwnd      = 4          // NV_MIN_CWND
	nvMinCwndGrow  = 2          // NV_MIN_CWND_GROW
	nvTSOCwndBound = 80         // NV_TSO_CWND_BOUND
)

// NVParams are tcp_nv.c's module parameters (ints there).
type NVParams struct {
	Pad         uint32 // nv_pad: max queued packets allowed in the network
	ResetPeriod uint32 // nv_reset_period: min_rtt reset period, s
	MinCwnd     uint32 // nv_min_cwnd: no decrease below it without losses, packets
}

// DefaultNVParams are the module's defaults: 10 packets, 5 s, 2 packets.
func DefaultNVParams() NVParams { return NVParams{Pad: 10, ResetPeriod: 5, MinCwnd: 2} }

func init() { Register("nv", func() Algorithm { return &NV{p: DefaultNVParams()} }) }

// Name returns "nv".
func (*NV) Name() string { return "nv" }

// Seed takes the flow's stream for the min_rtt reset period's random part
// (get_random_bytes).
func (n *NV) Seed(r *rand.Rand) { n.rng = r }

// resetRound follows tcpnv_reset: start a fresh RTT of measurements.
func (n *NV) resetRound(st *State) {
	n.reset = false
	n.noCongCnt = 0
	n.rttCnt = 0
	n.lastRTT = 0
	n.rttMaxRate = 0
	n.rttStartSeq = uint32(st.SndUna)
	n.evalCallCnt = 0
	n.lastSndUna = uint32(st.SndUna)
}

// Init follows tcpnv_init on the kernel's zeroed private area, and defines
// NV's signals.
func (n *NV) Init(st *State) {
	if n.s == nil {
		s := st.Signals
		n.s = s
		n.sig = nvSignals{
			rate:         s.Define("rate", "bps", "the last RTT sample's rate in_flight·8/avg_rtt (kernel unit 100 bit/s)"),
			maxRate:      s.Define("rtt_max_rate", "bps", "nv_rtt_max_rate: the largest sample rate since the last decision (kernel unit 100 bit/s)"),
			cwndRate:     s.Define("cwnd_rate", "bps", "cwnd·MSS·8/min_rtt: the rate the window gives at min_rtt, which NV compares with rtt_max_rate (cwnd above rtt_max_rate's window + 10 pkts: congestion)"),
			avgRTT:       s.Define("avg_rtt", "us", "nv_last_rtt: RTT samples averaged ½ old + ½ new; 0 after a reset until the next sample"),
			minRTT:       s.Define("min_rtt", "us", "nv_min_rtt: smallest avg_rtt of the current period, the slope's RTT"),
			minRTTNew:    s.Define("min_rtt_new", "us", "nv_min_rtt_new: smallest avg_rtt since the last min_rtt reset, the next period's min_rtt"),
			resetAt:      s.Define("min_rtt_reset_at", "ms", "nv_min_rtt_reset_jiffies as simulated time: the first ACK from then on replaces min_rtt by min_rtt_new (every 5 s ±25 %, first at 2 s)"),
			resets:       s.Define("min_rtt_resets", "count", "min_rtt replacements so far"),
			cwndBySlope:  s.Define("cwnd_by_slope", "pkts", "rtt_max_rate·min_rtt/(80000·MSS): the window that carries the measured rate at min_rtt, at the last once-per-RTT evaluation"),
			maxWin:       s.Define("max_win", "pkts", "cwnd_by_slope + nv_pad (10): above it NV decreases, at or below max_win − 2 it grows"),
			allowGrowth:  s.Define("allow_cwnd_growth", "enum", "nv_allow_cwnd_growth: 1 while cong_avoid may grow cwnd"),
			nvReset:      s.Define("nv_reset", "enum", "nv_reset: 1 after CWR/Recovery/Loss until Open resets the per-RTT state"),
			catchup:      s.Define("catchup", "enum", "nv_catchup: 1 while growing back from a temporary decrease (tcp_nv.c never sets it)"),
			evalCnt:      s.Define("eval_call_cnt", "count", "nv_eval_call_cnt: RTT samples since the last decision (20 to grow, 30 to leave slow start, 60 to decrease)"),
			rttCnt:       s.Define("rtt_cnt", "count", "nv_rtt_cnt: RTTs since the last decision (2 before a decrease)"),
			noCongCnt:    s.Define("no_cong_cnt", "count", "nv_no_cong_cnt: consecutive no-congestion decisions (9 raise a negative growth factor)"),
			growthFactor: s.Define("cwnd_growth_factor", "log2", "cwnd_growth_factor: additive increase is 2^factor pkts/RTT; each RTO lowers it by 1 (to −8)"),
			minCwnd:      s.Define("nv_min_cwnd", "pkts", "the struct's nv_min_cwnd: a window whose RTT gives one sample grows it by 2 (to 81), halved at min_rtt resets (to 4)"),
			decreases:    s.Define("decreases", "count", "congestion decisions: cwnd cut by 30 % of the excess over max_win"),
			increases:    s.Define("increases", "count", "no-congestion decisions: growth allowed"),
		}
	}
	if n.rng == nil {
		n.rng = newUnseededRand() // never seeded: a fixed stream
	}
	*n = NV{p: n.p, rng: n.rng, s: n.s, sig: n.sig}
	n.resetRound(st)
	// No sock_ops program answers BPF_SOCK_OPS_BASE_RTT: base_rtt and its
	// lower bound stay 0 (off).
	n.allowCwndGrowth = true
	n.minRTTResetJiffies = jiffies(st, st.Now) + 2*hz(st)
	n.minRTT = nvInitRTT
	n.minRTTNew = nvInitRTT
	n.minCwnd = nvMinCwnd
	n.publish(st)
}

// boundedRTT follows nv_get_bounded_rtt: clamp to [lower_bound_rtt,
// base_rtt] where they are set.
func (n *NV) boundedRTT(val uint32) uint32 {
	if n.lowerBoundRTT > 0 && val < n.lowerBoundRTT {
		return n.lowerBoundRTT
	} else if n.baseRTT > 0 && val > n.baseRTT {
		return n.baseRTT
	}
	return val
}

// CongAvoid follows tcpnv_cong_avoid: Reno's slow start and additive
// increase while the rate test allows growth, the increase one packet per
// cwnd·2^−factor packets acked (at least 4 at factor 0).
func (n *NV) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited || !n.allowCwndGrowth {
		return
	}
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		if acked == 0 {
			return
		}
	}
	if n.cwndGrowthFactor < 0 {
		CongAvoidAI(st, st.CwndPkts<<uint(-n.cwndGrowthFactor), acked)
	} else {
		CongAvoidAI(st, max(4, st.CwndPkts>>uint(n.cwndGrowthFactor)), acked)
	}
	n.publish(st)
}

// SSThresh follows tcpnv_recalc_ssthresh: 80 % of cwnd (819/1024), at
// least 2.
func (*NV) SSThresh(st *State) uint32 { return max((st.CwndPkts*nvLossDecFactor)>>10, 2) }

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_nv.c uses.
func (*NV) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// SetState follows tcpnv_state: a reduction stops growth and asks for a
// fresh start of the measurements when the flow is Open again; an RTO
// also slows the additive increase (growth factor ≤ 0, then −1, to −8).
func (n *NV) SetState(st *State, s CAState) {
	if s == CAOpen && n.reset {
		n.resetRound(st)
	} else if s == CALoss || s == CACWR || s == CARecovery {
		n.reset = true
		n.allowCwndGrowth = false
		if s == CALoss {
			if n.cwndGrowthFactor > 0 {
				n.cwndGrowthFactor = 0
			}
			if nvCwndGrowthRateNeg > 0 && n.cwndGrowthFactor > -8 {
				n.cwndGrowthFactor--
			}
		}
	}
	n.publish(st)
}

// PktsAcked follows tcpnv_acked: the rate and RTT bookkeeping of every
// ACK with an RTT sample in Open or Disorder, and once per RTT the
// congestion decision.
//
// The rate it measures is sample->in_flight (AckSample.InFlightBytes:
// the bytes delivered while the sampled packet was out) over the RTT. In
// slow start that count lags the window by half, so the rate test ends
// slow start once cwnd passes about twice it plus nv_pad: near 40 packets
// at any BDP (TestNVSlowStartExit).
func (n *NV) PktsAcked(st *State, s AckSample) {
	// Some calls are for duplicates without a timestamp.
	if s.RTT < 0 {
		return
	}
	if st.CA != CAOpen && st.CA != CADisorder {
		return
	}
	defer n.publish(st)
	now := jiffies(st, st.Now)
	mss := uint32(st.MSS)
	rttUs := uint32(int32(s.RTT / sim.Microsecond)) // s32 rtt_us, not negative here

	if n.catchup && st.CwndPkts >= n.p.MinCwnd {
		n.catchup = false
		n.allowCwndGrowth = false
	}

	sndUna := uint32(st.SndUna)
	bytesAcked := sndUna - n.lastSndUna
	n.lastSndUna = sndUna

	inFlight := s.InFlightBytes
	if inFlight == 0 {
		return
	}

	// The moving average of the RTT; its first sample after a reset also
	// sets min_rtt to twice itself.
	var avgRTT uint32
	if nvRTTFactor > 0 {
		if n.lastRTT > 0 {
			avgRTT = uint32((uint64(rttUs)*nvRTTFactor + uint64(n.lastRTT)*(256-nvRTTFactor)) >> 8)
		} else {
			avgRTT = rttUs
			n.minRTT = avgRTT << 1
		}
		n.lastRTT = avgRTT
	} else {
		avgRTT = rttUs
	}

	// The rate in 100 bit/s: bytes·8·10⁶/(100·µs).
	div := uint64(avgRTT)
	if div == 0 {
		div = 1
	}
	rate := uint32(uint64(inFlight) * 80000 / div)
	n.rate = rate

	// The largest rate of the RTT (or of more than one, until a decision).
	if n.rttMaxRate < rate {
		n.rttMaxRate = rate
	}
	if n.evalCallCnt < 255 {
		n.evalCallCnt++
	}

	avgRTT = n.boundedRTT(avgRTT) // bounds apply to min_rtt only
	if avgRTT < n.minRTT {
		n.minRTT = avgRTT
	}
	if avgRTT < n.minRTTNew {
		n.minRTTNew = avgRTT
	}

	// Every nv_reset_period s (drawn from [3/4, 5/4) of it) the period's
	// smallest RTT becomes min_rtt, and nv_min_cwnd halves.
	if int32(now-n.minRTTResetJiffies) >= 0 {
		n.minRTT = n.minRTTNew
		n.minRTTNew = nvInitRTT
		r := uint32(uint8(n.rng.Uint32())) // get_random_bytes(&rand, 1)
		n.minRTTResetJiffies = now + ((n.p.ResetPeriod * (384 + r) * hz(st)) >> 9)
		n.minCwnd = max(n.minCwnd/2, nvMinCwnd)
		n.minRTTResets++
	}

	// Once per RTT: the congestion decision.
	if !before32(n.rttStartSeq, sndUna) {
		return
	}
	n.rttStartSeq = uint32(st.SndNxt)
	if n.rttCnt < 0xff {
		n.rttCnt++
	}

	// One sample in an RTT: the window is probably too small to measure
	// (TSO, LRO, interrupt coalescing), so raise nv_min_cwnd and wait.
	if n.evalCallCnt == 1 && bytesAcked >= (uint32(n.minCwnd)-1)*mss &&
		n.minCwnd < nvTSOCwndBound+1 {
		n.minCwnd = min(n.minCwnd+nvMinCwndGrow, nvTSOCwndBound+1)
		n.rttStartSeq = uint32(st.SndNxt) + uint32(n.minCwnd)*mss
		n.evalCallCnt = 0
		n.allowCwndGrowth = true
		return
	}

	// The window for the measured rate at min_rtt: the slope is
	// 80000·MSS/min_rtt (100 bit/s per packet of window).
	cwndBySlope := uint32(uint64(n.rttMaxRate) * uint64(n.minRTT) / (80000 * uint64(mss)))
	maxWin := cwndBySlope + n.p.Pad
	n.cwndBySlope, n.maxWin = cwndBySlope, maxWin

	cwnd := st.CwndPkts
	if cwnd > maxWin {
		// Congestion; decide only with enough data: nv_rtt_min_cnt RTTs,
		// and 30 samples to leave slow start or 60 to decrease.
		if n.rttCnt < nvRTTMinCnt {
			return
		} else if st.SSThreshPkts == InfiniteSSThresh {
			if n.evalCallCnt < nvSSThreshEvalMinCalls {
				return
			}
		} else if n.evalCallCnt < nvDecEvalMinCalls {
			if n.allowCwndGrowth && n.rttCnt > nvStopRTTCnt {
				n.allowCwndGrowth = false
			}
			return
		}
		n.allowCwndGrowth = false
		st.SSThreshPkts = (nvSSThreshFactor * maxWin) >> 3
		if cwnd-maxWin > 2 {
			// A gap over 2: cut 30 % of it (exponential decrease).
			dec := max(2, ((cwnd-maxWin)*nvCongDecMult)>>7)
			st.CwndPkts = cwnd - dec
		} else if nvCongDecMult > 0 {
			st.CwndPkts = maxWin
		}
		if n.cwndGrowthFactor > 0 {
			n.cwndGrowthFactor = 0
		}
		n.noCongCnt = 0
		n.decreases++
	} else if cwnd <= maxWin-nvPadBuffer {
		// No congestion: grow, once there are enough samples.
		if n.evalCallCnt < nvIncEvalMinCalls {
			return
		}
		n.allowCwndGrowth = true
		n.noCongCnt++
		if n.cwndGrowthFactor < 0 && nvCwndGrowthRateNeg > 0 &&
			n.noCongCnt > nvCwndGrowthRateNeg {
			n.cwndGrowthFactor++
			n.noCongCnt = 0
		} else if n.cwndGrowthFactor >= 0 && nvCwndGrowthRatePos > 0 &&
			n.noCongCnt > nvCwndGrowthRatePos {
			n.cwndGrowthFactor++
			n.noCongCnt = 0
		}
		n.increases++
	} else {
		// In between: leave cwnd as it is.
		return
	}

	n.evalCallCnt = 0
	n.rttCnt = 0
	n.rttMaxRate = 0

	// NV's own decrease must not take cwnd below nv_min_cwnd.
	if st.CwndPkts < n.p.MinCwnd {
		st.CwndPkts = n.p.MinCwnd
	}
}

// publish records the signals; Set drops unchanged values.
func (n *NV) publish(st *State) {
	s, g := n.s, &n.sig
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	s.Set(g.rate, float64(n.rate)*100)
	s.Set(g.maxRate, float64(n.rttMaxRate)*100)
	if n.minRTT != nvInitRTT && n.minRTT > 0 {
		// cwnd·MSS bytes per min_rtt µs, in bit/s.
		s.Set(g.cwndRate, float64(st.CwndPkts)*float64(st.MSS)*8e6/float64(n.minRTT))
		s.Set(g.minRTT, float64(n.minRTT))
	}
	if n.minRTTNew != nvInitRTT {
		s.Set(g.minRTTNew, float64(n.minRTTNew))
	}
	s.Set(g.avgRTT, float64(n.lastRTT))
	s.Set(g.resetAt, tickMs(st, n.minRTTResetJiffies))
	s.Set(g.resets, float64(n.minRTTResets))
	s.Set(g.cwndBySlope, float64(n.cwndBySlope))
	s.Set(g.maxWin, float64(n.maxWin))
	s.Set(g.allowGrowth, b(n.allowCwndGrowth))
	s.Set(g.nvReset, b(n.reset))
	s.Set(g.catchup, b(n.catchup))
	s.Set(g.evalCnt, float64(n.evalCallCnt))
	s.Set(g.rttCnt, float64(n.rttCnt))
	s.Set(g.noCongCnt, float64(n.noCongCnt))
	s.Set(g.growthFactor, float64(n.cwndGrowthFactor))
	s.Set(g.minCwnd, float64(n.minCwnd))
	s.Set(g.decreases, float64(n.decreases))
	s.Set(g.increases, float64(n.increases))
}
