package cc

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/sim"
)

// CDG is CAIA Delay-Gradient congestion control as the kernel's
// net/ipv4/tcp_cdg.c (mainline 6.x; Hayes & Armitage, "Revisiting TCP
// congestion control using delay gradients", IFIP Networking 2011). Once
// per RTT it takes the smallest and largest RTT sample of the round, and
// sums their changes from round to round over a moving window of 8 rounds:
// a positive gradient of the minimum (else of the maximum) says a queue is
// building. The flow then backs off with probability 1 − exp(−g·G), g the
// gradient sum in µs and G = 42·10⁻⁶ (backoff_factor), entering CWR with
// ssthresh = 0.7071·cwnd (backoff_beta) — unless five backoffs in a row
// did not make the delay fall (ineffectual backoff: a loss-based flow
// shares the queue), after which it stops backing off until one does. A
// loss halves the window as Reno, or to half of the shadow window, the
// window a Reno flow would have grown to without the delay backoffs, if
// that is larger. Slow start ends on HyStart's ACK-train or delay test,
// as the kernel's variant does it. Window growth is Reno's. The module
// parameters are CDGParams (a flow's cc_params), the kernel's defaults
// unless set: use_tolerance off, use_shadow on.
type CDG struct {
	p CDGParams
	// struct cdg.
	rtt, rttPrev cdgMinMax // this round's and the last round's RTT extremes, µs
	gradients    [cdgWindow]cdgMinMax
	gsum         cdgMinMax // the sum of gradients over the window
	gfilled      bool      // the window holds a full set of gradients
	tail         uint8
	state        uint8 // enum cdg_state
	delack       uint8 // delayed-ACK filter: trust in single-packet ACKs, 0–5
	rttSeq       uint64
	shadowWnd    uint32 // the window a Reno flow would have, pkts
	backoffCnt   uint16 // backoffs since the delay last fell
	sampleCnt    uint16 // HyStart delay samples this round
	delayMin     int32  // smallest round minimum, µs
	lastAck      uint32 // HyStart ACK train: last ACK, µs clock
	roundStart   uint32 // HyStart ACK train: start of the round, µs clock

	rng      *rand.Rand // get_random_u32
	grad     int32      // the gradient the last round gave (a signal, not kernel state)
	backoffs uint32     // backoffs so far (a signal)
	s        *Signals
	sig      cdgSignals
}

type cdgSignals struct{ grad, state, shadow, delayMin, rttMin, rttMax, backoffCnt, backoffs SignalID }

// cdgMinMax is struct cdg_minmax; v64 != 0 is either field nonzero.
type cdgMinMax struct{ min, max int32 }

func (m cdgMinMax) set() bool { return m.min != 0 || m.max != 0 }

// enum cdg_state.
const (
	cdgUnknown = iota
	cdgNonFull
	cdgFull
	cdgBackoff
)

// cdgWindow is the module parameter window at its default: the gradient
// window, rounds. It is read when the module loads (0444), and is fixed
// here.
const cdgWindow = 8

// HyStart's detector bits.
const (
	cdgHystartACKTrain = 1
	cdgHystartDelay    = 2
)

// CDGParams are tcp_cdg.c's module parameters but window.
type CDGParams struct {
	BackoffBeta   uint32 // backoff_beta: cwnd kept at a delay backoff, /1024
	BackoffFactor uint32 // backoff_factor: 1000/(G·window) of the paper
	HystartDetect uint32 // hystart_detect: 0 off, 1 ACK train, 2 delay, 3 both
	UseIneff      uint32 // use_ineff: backoffs without effect tolerated; 0 no limit
	UseShadow     bool   // use_shadow: a loss keeps half the shadow window
	UseTolerance  bool   // use_tolerance: a loss while the queue is not full keeps cwnd
}

// DefaultCDGParams are the module's defaults. The kernel's file header
// suggests use_shadow and use_ineff off for scavenger (less-than-best-
// effort) traffic.
func DefaultCDGParams() CDGParams {
	return CDGParams{BackoffBeta: 724, BackoffFactor: 42, HystartDetect: 3, UseIneff: 5, UseShadow: true}
}

func init() { Register("cdg", func() Algorithm { return &CDG{p: DefaultCDGParams()} }) }

// Name returns "cdg".
func (*CDG) Name() string { return "cdg" }

// Seed takes the flow's stream for the backoff draws (get_random_u32).
func (c *CDG) Seed(r *rand.Rand) { c.rng = r }

// Init follows tcp_cdg_init on the kernel's zeroed private area.
func (c *CDG) Init(st *State) {
	if c.s == nil {
		s := st.Signals
		c.s = s
		c.sig = cdgSignals{
			grad:       s.Define("gradient", "us", "the round's delay gradient: the sum over the last 8 rounds of the change of the round's smallest RTT (of its largest when that one is not positive); a positive one may back off"),
			state:      s.Define("cdg_state", "enum", "0 unknown, 1 not full and 2 full (use_tolerance only), 3 backoff (the last reduction was a delay backoff, ssthresh backoff_beta·cwnd)"),
			shadow:     s.Define("shadow_wnd", "pkts", "the window a Reno flow would have without the delay backoffs; a loss leaves at least half of it"),
			delayMin:   s.Define("delay_min", "us", "smallest round minimum RTT since the last restart (HyStart's base)"),
			rttMin:     s.Define("rtt_min_round", "us", "smallest RTT sample of the last complete round"),
			rttMax:     s.Define("rtt_max_round", "us", "largest RTT sample of the last complete round"),
			backoffCnt: s.Define("backoff_cnt", "count", "backoffs since the delay last fell; above use_ineff (5) the flow stops backing off (ineffectual backoff)"),
			backoffs:   s.Define("backoffs", "count", "delay backoffs so far"),
		}
	}
	if c.rng == nil {
		c.rng = rand.New(rand.NewPCG(0, 0)) // never seeded: a fixed stream
	}
	*c = CDG{p: c.p, rng: c.rng, s: c.s, sig: c.sig}
	c.rttSeq = st.SndNxt
	c.shadowWnd = st.CwndPkts
	c.publish()
}

// nexpU32 is nexp_u32: exp(−ux·10⁻⁶)·U32_MAX, from a table of e^−x at
// x = 0.000256·2^k in 1/65536 (less one) and a linear first eight bits.
func nexpU32(ux uint32) uint32 {
	v := [...]uint16{
		65535,
		65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422,
		61378, 57484, 50423, 38795, 22965, 8047, 987, 14,
	}
	msb := ux >> 8
	// Cut off from 2^24 on (the result is at most 222/U32_MAX).
	if msb > 0xffff {
		return 0
	}
	res := uint32(0xffffffff) - (ux&0xff)*(0xffffffff/1000000)
	// e^(x + y + …) as e^x·e^y·…: bit i of msb picks v[i], a clear bit v[0].
	for i := uint32(1); msb != 0; i, msb = i+1, msb>>1 {
		y := uint32(v[i&-(msb&1)]) + 1
		res = uint32(uint64(res) * uint64(y) >> 16)
	}
	return res
}

// usClock is tp->tcp_mstamp as the u32 µs clock CDG's HyStart keeps.
func usClock(t sim.Time) uint32 { return uint32(t / sim.Time(sim.Microsecond)) }

// hystartUpdate follows tcp_cdg_hystart_update: CUBIC's HyStart with
// Hayes's delayed-ACK filter, a µs ACK-train clock reset when the flow is
// not cwnd-limited, run at any window below ssthresh.
func (c *CDG) hystartUpdate(st *State) {
	if c.delayMin == 0 || c.rtt.min != 0 && c.rtt.min < c.delayMin {
		c.delayMin = c.rtt.min // min_not_zero
	}
	if c.delayMin == 0 {
		return
	}
	if c.p.HystartDetect&cdgHystartACKTrain != 0 {
		now := usClock(st.Now)
		if c.lastAck == 0 || !st.CwndLimited {
			c.lastAck, c.roundStart = now, now
		} else if before32(now, c.lastAck+3000) {
			baseOWD := max(uint32(c.delayMin)/2, 125)
			c.lastAck = now
			if after32(now, c.roundStart+baseOWD) {
				st.SSThreshPkts = st.CwndPkts
				return
			}
		}
	}
	if c.p.HystartDetect&cdgHystartDelay != 0 {
		if c.sampleCnt < 8 {
			c.sampleCnt++
		} else {
			thresh := int32(max(uint32(c.delayMin)+uint32(c.delayMin)/8, 125))
			if c.rtt.min > thresh {
				st.SSThreshPkts = st.CwndPkts
			}
		}
	}
}

// gradient follows tcp_cdg_grad: the round's change of the RTT minimum
// and maximum, summed over the window (the paper's smoothed gradient
// without its division by the window), extrapolated while the window
// fills. A fall of 32 µs or more in either sum shows a backoff worked.
func (c *CDG) gradient() int32 {
	gmin := c.rtt.min - c.rttPrev.min
	gmax := c.rtt.max - c.rttPrev.max
	c.gsum.min += gmin - c.gradients[c.tail].min
	c.gsum.max += gmax - c.gradients[c.tail].max
	c.gradients[c.tail] = cdgMinMax{gmin, gmax}
	c.tail = (c.tail + 1) & (cdgWindow - 1)
	gmin, gmax = c.gsum.min, c.gsum.max
	grad := gmax
	if gmin > 0 {
		grad = gmin
	}
	if !c.gfilled {
		if c.tail == 0 {
			c.gfilled = true
		} else {
			grad = grad * cdgWindow / int32(c.tail)
		}
	}
	if gmin <= -32 || gmax <= -32 {
		c.backoffCnt = 0
	}
	if c.p.UseTolerance {
		// Small variations are no signal: gradients in 64 µs, rounded.
		gmin, gmax = divRoundClosestS32(gmin, 64), divRoundClosestS32(gmax, 64)
		if gmin > 0 && gmax <= 0 {
			c.state = cdgFull
		} else if gmin > 0 && gmax > 0 || gmax < 0 {
			c.state = cdgNonFull
		}
	}
	return grad
}

// divRoundClosestS32 is DIV_ROUND_CLOSEST of an s32 by a positive divisor: x/d
// rounded half away from zero.
func divRoundClosestS32(x, d int32) int32 {
	if x > 0 {
		return (x + d/2) / d
	}
	return (x - d/2) / d
}

// backoff follows tcp_cdg_backoff: back off with probability
// 1 − exp(−grad·backoff_factor·10⁻⁶), at most use_ineff times in a row
// without the delay falling, by entering CWR (the sender runs
// tcp_enter_cwr, whose ssthresh hook sees the backoff state).
func (c *CDG) backoff(st *State, grad uint32) bool {
	if c.rng.Uint32() <= nexpU32(grad*c.p.BackoffFactor) {
		return false
	}
	if c.p.UseIneff != 0 {
		c.backoffCnt++
		if uint32(c.backoffCnt) > c.p.UseIneff {
			return false
		}
	}
	c.shadowWnd = max(c.shadowWnd, st.CwndPkts)
	c.state = cdgBackoff
	c.backoffs++
	st.EnterCWR = true
	return true
}

// CongAvoid follows tcp_cdg_cong_avoid (which the kernel does not call in
// CWR or Recovery): HyStart in slow start; at each round's end the
// gradient and perhaps a backoff; else Reno's growth, which the shadow
// window follows.
func (c *CDG) CongAvoid(st *State, acked uint32) {
	defer c.publish()
	if InSlowStart(st) && c.p.HystartDetect != 0 {
		c.hystartUpdate(st)
		// tcp_is_cwnd_limited, asked again below (and by Reno's
		// cong_avoid), loses its slow-start allowance once HyStart set
		// ssthresh to cwnd.
		st.CwndLimited = st.IsCwndLimited || InSlowStart(st) && st.CwndLimited
	}
	if seqAfter(st.LastAckSeq, c.rttSeq) && c.rtt.set() {
		var grad int32
		if c.rttPrev.set() {
			grad = c.gradient()
		}
		c.grad = grad
		c.rttSeq = st.SndNxt
		c.rttPrev = c.rtt
		c.rtt = cdgMinMax{}
		c.lastAck = 0
		c.sampleCnt = 0
		if grad > 0 && c.backoff(st, uint32(grad)) {
			return
		}
	}
	if !st.CwndLimited {
		c.shadowWnd = min(c.shadowWnd, st.CwndPkts)
		return
	}
	prior := st.CwndPkts
	renoCongAvoid(st, acked)
	incr := st.CwndPkts - prior
	c.shadowWnd = max(c.shadowWnd, c.shadowWnd+incr)
}

// PktsAcked follows tcp_cdg_acked: the round's RTT extremes, with Hayes's
// delayed-ACK filter (TR 100219A): after ACKs of several packets, an ACK
// of one is taken for a delayed one and only lowers an existing minimum.
func (c *CDG) PktsAcked(st *State, s AckSample) {
	if s.RTT <= 0 {
		return
	}
	rtt := int32(s.RTT / sim.Microsecond)
	if st.SackedOut == 0 {
		if s.PktsAcked == 1 && c.delack != 0 {
			c.rtt.min = min(c.rtt.min, rtt)
			c.delack--
			return
		} else if s.PktsAcked > 1 && c.delack < 5 {
			c.delack++
		}
	}
	if c.rtt.min == 0 || rtt < c.rtt.min {
		c.rtt.min = rtt // min_not_zero
	}
	c.rtt.max = max(c.rtt.max, rtt)
}

// SSThresh follows tcp_cdg_ssthresh: 0.7071·cwnd after a delay backoff;
// after a loss half the window, or half the shadow window if larger.
func (c *CDG) SSThresh(st *State) uint32 {
	if c.state == cdgBackoff {
		return max(2, st.CwndPkts*min(1024, c.p.BackoffBeta)>>10)
	}
	if c.state == cdgNonFull && c.p.UseTolerance {
		return st.CwndPkts
	}
	c.shadowWnd = min(c.shadowWnd>>1, st.CwndPkts)
	if c.p.UseShadow {
		return max(2, c.shadowWnd, st.CwndPkts>>1)
	}
	return max(2, st.CwndPkts>>1)
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_cdg.c uses.
func (*CDG) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// CwndEvent follows tcp_cdg_cwnd_event: after idle everything restarts;
// when a reduction completes, the round restarts from the RTTs seen so
// far, so the reduction's own rounds make no gradient.
func (c *CDG) CwndEvent(st *State, ev Event) {
	switch ev {
	case EventCwndRestart:
		*c = CDG{p: c.p, rng: c.rng, s: c.s, sig: c.sig, backoffs: c.backoffs}
		c.rttSeq = st.SndNxt
		c.shadowWnd = st.CwndPkts
	case EventCompleteCWR:
		c.state = cdgUnknown
		c.rttSeq = st.SndNxt
		c.rttPrev = c.rtt
		c.rtt = cdgMinMax{}
	}
	c.publish()
}

// publish records the signals; Set drops unchanged values.
func (c *CDG) publish() {
	c.s.Set(c.sig.grad, float64(c.grad))
	c.s.Set(c.sig.state, float64(c.state))
	c.s.Set(c.sig.shadow, float64(c.shadowWnd))
	c.s.Set(c.sig.delayMin, float64(c.delayMin))
	if c.rttPrev.set() {
		c.s.Set(c.sig.rttMin, float64(c.rttPrev.min))
		c.s.Set(c.sig.rttMax, float64(c.rttPrev.max))
	}
	c.s.Set(c.sig.backoffCnt, float64(c.backoffCnt))
	c.s.Set(c.sig.backoffs, float64(c.backoffs))
}
