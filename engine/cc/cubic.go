package cc

import (
	"fmt"
	"math/bits"

	"github.com/ccscope/ccscope/engine/jiffy"
	"github.com/ccscope/ccscope/engine/sim"
)

// Cubic is CUBIC with HyStart as the kernel's net/ipv4/tcp_cubic.c (v2.3,
// mainline as of 2025: HyStart rounds are restarted in hystart_update for
// every window size, commit 25c1a9ca53db). The arithmetic is the kernel's:
// windows in packets, β and C scaled by 1024, time in 1/1024 s for the
// cubic and in microseconds for HyStart.
//
// The kernel keeps epoch_start and last_time in jiffies; Cubic uses HZ =
// 1000 (jiffies are milliseconds) and starts the jiffies counter at the
// kernel's INITIAL_JIFFIES, so a run's first millisecond is not jiffy 0
// (which epoch_start uses to mean "no epoch").
type Cubic struct {
	p            CubicParams
	betaScale    uint32 // beta_scale: Reno-friendly ACKs per packet, ×8
	cubeRTTScale uint32 // cube_rtt_scale: 1024·C = bic_scale·10
	cubeFactor   uint64 // cube_factor: 2^40 / cube_rtt_scale

	// struct bictcp.
	cnt            uint32 // increase cwnd by 1 after cnt ACKs
	lastMaxCwnd    uint32 // W_max, packets
	lastCwnd       uint32
	lastTime       uint32 // jiffies of the last cnt update
	bicOriginPoint uint32 // packets
	bicK           uint32 // K, 1/1024 s
	delayMin       uint32 // us
	epochStart     uint32 // jiffies; 0: no epoch
	ackCnt         uint32
	tcpCwnd        uint32 // Reno-friendly estimate, packets
	sampleCnt      uint8
	found          bool
	roundStart     uint32 // us
	endSeq         uint64 // snd_nxt when the HyStart round began
	lastAck        uint32 // us
	currRTT        uint32 // us; min RTT in the round

	target uint32 // bic_target of the last update, kept for its signal
	sig    cubicSignals

	// shrinkK is SaTCP's handover_status as bictcp_update reads it (see
	// satcp.go); always false for plain CUBIC.
	shrinkK bool
}

type cubicSignals struct {
	lastMaxCwnd, k, epochStart, originPoint, target, cnt SignalID
	found, currRTT, delayMin, ackCnt, tcpCwnd            SignalID
}

// HyStartDetect selects HyStart's detectors (hystart_detect), a bit set.
type HyStartDetect uint8

// The detectors.
const (
	HyStartAckTrain HyStartDetect = 0x1 // HYSTART_ACK_TRAIN
	HyStartDelay    HyStartDetect = 0x2 // HYSTART_DELAY
)

// CubicParams are tcp_cubic's module parameters.
type CubicParams struct {
	// Beta is the window kept on loss, /1024: 717 ≈ 0.7 (RFC 9438 β_cubic).
	Beta uint32
	// BicScale scales the cubic, /1024: the kernel divides it by its 100 ms
	// reference RTT (×10), so 41 gives C = 410/1024 ≈ 0.4 (RFC 9438 C).
	BicScale uint32
	// FastConvergence releases bandwidth: a loss below the previous W_max
	// sets W_max to cwnd·(1+β)/2 (RFC 9438 §4.7).
	FastConvergence bool
	// TCPFriendliness keeps the window at least the Reno-friendly estimate
	// (RFC 9438 §4.3).
	TCPFriendliness bool
	// HyStart turns hybrid slow start on.
	HyStart bool
	// HyStartDetect selects the detectors.
	HyStartDetect HyStartDetect
	// HyStartLowWindow is the smallest cwnd, packets, at which HyStart may
	// end slow start.
	HyStartLowWindow uint32
	// HyStartAckDeltaUS is the largest ACK spacing, us, still counted as
	// one ACK train.
	HyStartAckDeltaUS uint32
	// InitialSSThresh, packets, replaces the infinite initial ssthresh when
	// HyStart is off; 0 keeps it.
	InitialSSThresh uint32
}

// DefaultCubicParams returns the kernel's defaults.
func DefaultCubicParams() CubicParams {
	return CubicParams{
		Beta:              717,
		BicScale:          41,
		FastConvergence:   true,
		TCPFriendliness:   true,
		HyStart:           true,
		HyStartDetect:     HyStartAckTrain | HyStartDelay,
		HyStartLowWindow:  16,
		HyStartAckDeltaUS: 2000,
	}
}

// Validate checks the parameters against the ranges the kernel's
// arithmetic is correct for.
func (p CubicParams) Validate() error {
	switch {
	case p.Beta < 1 || p.Beta >= betaScale:
		return fmt.Errorf("cc: cubic: beta = %d, want 1..%d", p.Beta, betaScale-1)
	case p.BicScale < 1 || p.BicScale > 1024:
		return fmt.Errorf("cc: cubic: bic_scale = %d, want 1..1024", p.BicScale)
	case p.HyStartDetect&^(HyStartAckTrain|HyStartDelay) != 0:
		return fmt.Errorf("cc: cubic: hystart_detect = %d, want a subset of 1 (ack train) | 2 (delay)", p.HyStartDetect)
	case p.HyStartAckDeltaUS > 1_000_000:
		return fmt.Errorf("cc: cubic: hystart_ack_delta_us = %d, want at most 1000000", p.HyStartAckDeltaUS)
	case p.InitialSSThresh > 0x7fffffff:
		return fmt.Errorf("cc: cubic: initial_ssthresh = %d, want at most %d", p.InitialSSThresh, 0x7fffffff)
	}
	if p.TCPFriendliness {
		// bictcp_update's Reno-friendly loop takes cwnd·beta_scale/8 ACKs
		// per packet; at 0 it never ends, on Linux as here. Congestion
		// avoidance runs from a cwnd of 2 (ssthresh's floor), or 1 when
		// initial_ssthresh is 1.
		scale := cubicBetaScale(p.Beta)
		minCwnd := uint32(2)
		if p.InitialSSThresh == 1 {
			minCwnd = 1
		}
		if minCwnd*scale>>3 == 0 {
			return fmt.Errorf("cc: cubic: beta = %d with tcp_friendliness 1 and a cwnd of %d in congestion avoidance "+
				"would never leave bictcp_update's Reno-friendly loop (cwnd·beta_scale/8 = 0 ACKs a packet; the kernel locks up the same way): "+
				"want beta ≥ %d, or tcp_friendliness 0", p.Beta, minCwnd, minFriendlyBeta(minCwnd))
		}
	}
	return nil
}

// cubicBetaScale is cubictcp_register's beta_scale: Reno-friendly ACKs per
// packet, ×8, for the given beta.
func cubicBetaScale(beta uint32) uint32 { return 8 * (betaScale + beta) / 3 / (betaScale - beta) }

// minFriendlyBeta is the least beta whose beta_scale gives cwnd·beta_scale/8
// ≥ 1 at the given cwnd.
func minFriendlyBeta(cwnd uint32) uint32 {
	for b := uint32(1); b < betaScale; b++ {
		if cwnd*cubicBetaScale(b)>>3 > 0 {
			return b
		}
	}
	return betaScale - 1
}

// Kernel constants of tcp_cubic.c, and HZ.
const (
	betaScale         = 1024 // BICTCP_BETA_SCALE
	bictcpHZ          = 10   // BICTCP_HZ: the cubic's time unit is 2^-10 s
	hystartMinSamples = 8
	hystartDelayMin   = 4000  // us
	hystartDelayMax   = 16000 // us
)

func init() { Register("cubic", func() Algorithm { return newCubic(DefaultCubicParams()) }) }

// NewCubic returns CUBIC with parameters p.
func NewCubic(p CubicParams) (*Cubic, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return newCubic(p), nil
}

// newCubic precomputes the scale factors as cubictcp_register does.
func newCubic(p CubicParams) *Cubic {
	c := &Cubic{p: p}
	c.betaScale = cubicBetaScale(p.Beta)
	c.cubeRTTScale = p.BicScale * 10
	c.cubeFactor = (1 << (10 + 3*bictcpHZ)) / uint64(c.cubeRTTScale)
	return c
}

// Name returns "cubic".
func (*Cubic) Name() string { return "cubic" }

// hz is the flow's CONFIG_HZ (State.HZ, 1000 when unset).
func hz(st *State) uint32 {
	if st.HZ == 0 {
		return 1000
	}
	return st.HZ
}

// initialJiffies is INITIAL_JIFFIES, where the jiffies counter starts:
// 300 s before it wraps.
func initialJiffies(st *State) uint32 { return uint32(1<<32 - 300*uint64(hz(st))) }

// jiffies is tcp_jiffies32 at time t, counted from INITIAL_JIFFIES at the
// host clock's zero (State.Clock). The default HZ divides by a constant (a
// multiply), as it did before HZ was a setting: CUBIC reads the clock on
// every ACK.
func jiffies(st *State, t sim.Time) uint32 {
	t += sim.Time(st.Clock)
	if st.HZ == 0 || st.HZ == 1000 {
		return uint32(t/sim.Time(sim.Millisecond)) + uint32(1<<32-300*1000)
	}
	return uint32(int64(t)/int64(jiffy.Tick(st.HZ))) + initialJiffies(st)
}

// tickMs is when tick j began, in milliseconds of the run's time: how the
// signals show a jiffies stamp.
func tickMs(st *State, j uint32) float64 {
	tick := sim.Millisecond
	if st.HZ != 0 && st.HZ != 1000 {
		tick = jiffy.Tick(st.HZ)
	}
	began := -(st.Clock % tick) // the tick running at time 0
	return (float64(float64(int32(j-jiffies(st, 0)))*float64(tick)) + float64(began)) / float64(sim.Millisecond)
}

// clockUS is bictcp_clock_us: tcp_mstamp in us, truncated to 32 bits.
func clockUS(st *State) uint32 { return uint32(st.Now / sim.Time(sim.Microsecond)) }

// usecsToJiffies is usecs_to_jiffies: round up to whole ticks.
func usecsToJiffies(st *State, us uint32) uint64 {
	if st.HZ == 0 || st.HZ == 1000 {
		return (uint64(us) + 999) / 1000
	}
	return jiffy.UsecsTo(st.HZ, us)
}

// reset follows bictcp_reset: clears everything up to the HyStart round.
func (c *Cubic) reset() {
	c.cnt, c.lastMaxCwnd, c.lastCwnd, c.lastTime = 0, 0, 0, 0
	c.bicOriginPoint, c.bicK, c.delayMin, c.epochStart = 0, 0, 0, 0
	c.ackCnt, c.tcpCwnd = 0, 0
	c.found = false
}

// hystartReset follows bictcp_hystart_reset: a new round starts now and
// ends when what is sent now is acked.
func (c *Cubic) hystartReset(st *State) {
	c.roundStart = clockUS(st)
	c.lastAck = c.roundStart
	c.endSeq = st.SndNxt
	c.currRTT = ^uint32(0)
	c.sampleCnt = 0
}

// Init follows cubictcp_init and defines Cubic's signals.
func (c *Cubic) Init(st *State) {
	s := st.Signals
	c.sig = cubicSignals{
		lastMaxCwnd: s.Define("last_max_cwnd", "pkts", "W_max: cwnd before the last reduction, after fast convergence"),
		k:           s.Define("k", "ms", "K: time from the epoch start until the cubic reaches W_max (kernel unit 1/1024 s)"),
		epochStart:  s.Define("epoch_start", "ms", "sim time the congestion-avoidance epoch began; 0 while none runs"),
		originPoint: s.Define("origin_point", "pkts", "the cubic's plateau: W_max, or cwnd at epoch start if above it"),
		target:      s.Define("bic_target", "pkts", "the cubic's window one RTT ahead"),
		cnt:         s.Define("cnt", "acks", "ACKs per one-packet increase of cwnd"),
		found:       s.Define("hystart_found", "enum", "1 once HyStart ended slow start"),
		currRTT:     s.Define("hystart_curr_rtt", "us", "minimum RTT in the current HyStart round"),
		delayMin:    s.Define("delay_min", "us", "minimum RTT CUBIC has seen"),
		ackCnt:      s.Define("ack_cnt", "pkts", "packets acked towards the next Reno-friendly increase"),
		tcpCwnd:     s.Define("tcp_cwnd", "pkts", "the Reno-friendly window estimate W_est"),
	}
	c.reset()
	if c.p.HyStart {
		c.hystartReset(st)
	}
	if !c.p.HyStart && c.p.InitialSSThresh != 0 {
		st.SSThreshPkts = c.p.InitialSSThresh
	}
	c.publish(st)
}

// CwndEvent follows cubictcp_cwnd_event: after an idle period, shift the
// epoch by the idle time so growth resumes on the same cubic curve
// (RFC 9438 §5.8).
func (c *Cubic) CwndEvent(st *State, ev Event) {
	if ev != EventTxStart {
		return
	}
	now := jiffies(st, st.Now)
	delta := int32(now - jiffies(st, st.LastSend))
	if c.epochStart != 0 && delta > 0 {
		c.epochStart += uint32(delta)
		if int32(now-c.epochStart) < 0 {
			c.epochStart = now
		}
	}
	c.publish(st)
}

// cubicRoot follows cubic_root: the cube root of a from a 64-entry table
// of cbrt(x << 18) − 1 and one Newton-Raphson step. The kernel gives its
// average error as about 0.195%; over the arguments CUBIC gives it the
// test measures 0.03% (max 0.15%).
func cubicRoot(a uint64) uint32 {
	b := uint32(bits.Len64(a)) // fls64
	if b < 7 {
		return (uint32(cbrtTable[a]) + 35) >> 6 // a in [0..63]
	}
	b = ((b * 84) >> 8) - 1
	shift := a >> (b * 3)
	x := ((uint32(cbrtTable[shift]) + 10) << b) >> 6
	// x' = (2x + a/x²) / 3, with /3 as ×341/1024 and x² as x·(x−1).
	x = 2*x + uint32(a/(uint64(x)*uint64(x-1)))
	return (x * 341) >> 10
}

// cbrtTable is cubic_root's v[]: cbrt(x << 18) − 1 for x in [0..63], hand
// refined by Willy Tarreau.
var cbrtTable = [64]uint8{
	0, 54, 54, 54, 118, 118, 118, 118,
	123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179,
	181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215,
	217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242,
	244, 245, 246, 248, 250, 251, 252, 254,
}

// update follows bictcp_update: set cnt, the ACKs per one-packet increase,
// so cwnd reaches the cubic W(t + RTT) = C·(t + RTT − K)³ + W_max in one
// RTT (RFC 9438 §4.2), but never slower than the Reno-friendly estimate
// (§4.3) nor faster than 1.5× per RTT.
func (c *Cubic) update(st *State, cwnd, acked uint32) {
	now := jiffies(st, st.Now)
	c.ackCnt += acked // count the number of ACKed packets

	// Recompute at most every HZ/32 while cwnd is unchanged, and at most
	// once per jiffy; a reduction clears epoch_start, which forces it.
	if c.lastCwnd == cwnd && int32(now-c.lastTime) <= int32(hz(st)/32) {
		return
	}
	if c.epochStart == 0 || now != c.lastTime {
		c.lastCwnd = cwnd
		c.lastTime = now
		if c.epochStart == 0 {
			c.epochStart = now // a new epoch
			c.ackCnt = acked
			c.tcpCwnd = cwnd
			if c.lastMaxCwnd <= cwnd {
				c.bicK = 0
				c.bicOriginPoint = cwnd
			} else {
				// K = cbrt((W_max − cwnd)/C), in 1/1024 s.
				c.bicK = cubicRoot(c.cubeFactor * uint64(c.lastMaxCwnd-cwnd))
				if c.shrinkK {
					c.bicK -= c.bicK * 8 / 9
				}
				c.bicOriginPoint = c.lastMaxCwnd
			}
		}

		// t is one RTT (delay_min) ahead, in 1/1024 s.
		t := uint64(int32(now - c.epochStart))
		t += usecsToJiffies(st, c.delayMin)
		t = (t << bictcpHZ) / uint64(hz(st))

		var offs uint64 // |t − K|
		if t < uint64(c.bicK) {
			offs = uint64(c.bicK) - t
		} else {
			offs = t - uint64(c.bicK)
		}
		// C·|t − K|³: C is cube_rtt_scale/1024 and offs is in 1/1024 s.
		delta := uint32((uint64(c.cubeRTTScale) * offs * offs * offs) >> (10 + 3*bictcpHZ))
		if t < uint64(c.bicK) {
			c.target = c.bicOriginPoint - delta // below the origin
		} else {
			c.target = c.bicOriginPoint + delta // above the origin
		}

		if c.target > cwnd {
			c.cnt = cwnd / (c.target - cwnd)
		} else {
			c.cnt = 100 * cwnd // very small increment
		}
		// Before any loss the cubic knows no W_max and may be too
		// timid: grow at least 5% per RTT.
		if c.lastMaxCwnd == 0 && c.cnt > 20 {
			c.cnt = 20
		}
	}

	if c.p.TCPFriendliness {
		// Reno-friendly AIMD: +1 packet per cwnd·beta_scale/8 ACKs,
		// i.e. α = 3(1−β)/(1+β) packets per RTT.
		delta := (cwnd * c.betaScale) >> 3
		for c.ackCnt > delta {
			c.ackCnt -= delta
			c.tcpCwnd++
		}
		if c.tcpCwnd > cwnd { // the cubic is slower than Reno
			maxCnt := cwnd / (c.tcpCwnd - cwnd)
			c.cnt = min(c.cnt, maxCnt)
		}
	}
	// At most one packet per two ACKed: 1.5× per RTT.
	c.cnt = max(c.cnt, 2)
}

// CongAvoid follows cubictcp_cong_avoid.
func (c *Cubic) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		if acked == 0 {
			c.publish(st)
			return
		}
	}
	c.update(st, st.CwndPkts, acked)
	CongAvoidAI(st, c.cnt, acked)
	c.publish(st)
}

// SSThresh follows cubictcp_recalc_ssthresh: end the epoch, remember W_max
// (lowered by fast convergence when the loss came below the last one) and
// keep β of the window.
func (c *Cubic) SSThresh(st *State) uint32 {
	cwnd := st.CwndPkts
	c.epochStart = 0
	if cwnd < c.lastMaxCwnd && c.p.FastConvergence {
		c.lastMaxCwnd = cwnd * (betaScale + c.p.Beta) / (2 * betaScale)
	} else {
		c.lastMaxCwnd = cwnd
	}
	c.publish(st)
	return max(cwnd*c.p.Beta/betaScale, 2)
}

// SetState follows cubictcp_state: a timeout forgets everything.
func (c *Cubic) SetState(st *State, newState CAState) {
	if newState == CALoss {
		c.reset()
		c.hystartReset(st)
		c.publish(st)
	}
}

// UndoCwnd is tcp_reno_undo_cwnd, as the kernel's cubic uses.
func (c *Cubic) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// PktsAcked follows cubictcp_acked: track the minimum delay and feed
// HyStart while in slow start.
func (c *Cubic) PktsAcked(st *State, s AckSample) {
	if s.RTT < 0 {
		return // no RTT sample on this ACK
	}
	// Discard delay samples right after fast recovery.
	if c.epochStart != 0 && int32(jiffies(st, st.Now)-c.epochStart) < int32(hz(st)) {
		return
	}
	delay := uint32(s.RTT / sim.Microsecond)
	if delay == 0 {
		delay = 1
	}
	if c.delayMin == 0 || c.delayMin > delay {
		c.delayMin = delay
	}
	if !c.found && InSlowStart(st) && c.p.HyStart {
		c.hystartUpdate(st, delay)
	}
	c.publish(st)
}

// hystartUpdate follows hystart_update: end slow start (ssthresh = cwnd)
// when a round's ACK train outlasts half the minimum RTT, or when the
// round's minimum RTT exceeds delay_min by delay_min/8 clamped to 4..16 ms.
func (c *Cubic) hystartUpdate(st *State, delay uint32) {
	// A round whose end lies 2^31 bytes or more behind snd_una (slow start
	// re-entered after an undo, with gigabytes acked in between) is not
	// over half the time.
	if seqAfter(st.SndUna, c.endSeq) {
		c.hystartReset(st)
	}
	// Rounds start below the low window too, as since 6.14's "tcp_cubic:
	// fix incorrect HyStart round start detection" (25c1a9ca53db); older
	// 5.16+ kernels checked the window first and started their rounds
	// mid-flight (beside 6.18, p-rtr-p exits at cwnd 492 as this does,
	// 258 with that order).
	if st.CwndPkts < c.p.HyStartLowWindow {
		return
	}
	if c.p.HyStartDetect&HyStartAckTrain != 0 {
		now := clockUS(st)
		if int32(now-c.lastAck) <= int32(c.p.HyStartAckDeltaUS) {
			c.lastAck = now
			threshold := c.delayMin + hystartAckDelay(st)
			// Unpaced ACK trains run RTT/2; pacing may stretch them
			// up to RTT.
			if !st.Paced {
				threshold >>= 1
			}
			if now-c.roundStart > threshold {
				c.found = true
				st.SSThreshPkts = st.CwndPkts
			}
		}
	}
	if c.p.HyStartDetect&HyStartDelay != 0 {
		c.currRTT = min(c.currRTT, delay)
		if c.sampleCnt < hystartMinSamples {
			c.sampleCnt++
		} else if c.currRTT > c.delayMin+min(max(c.delayMin>>3, hystartDelayMin), hystartDelayMax) {
			c.found = true
			st.SSThreshPkts = st.CwndPkts
		}
	}
}

// hystartAckDelay follows hystart_ack_delay (tcp_cubic.c, 5.8+): a cushion
// for TSO/GRO batching of four GSO packets of sk_gso_max_size at the pacing
// rate, at most 1 ms (USEC_PER_MSEC).
func hystartAckDelay(st *State) uint32 {
	rate := uint64(st.PacingRate) / 8 // sk_pacing_rate is bytes/s
	if rate == 0 {
		return 0
	}
	return uint32(min(1000, SKGSOMaxSize*4*1_000_000/rate))
}

// publish records the signals; Set drops unchanged values.
func (c *Cubic) publish(st *State) {
	s := st.Signals
	s.Set(c.sig.lastMaxCwnd, float64(c.lastMaxCwnd))
	s.Set(c.sig.k, float64(c.bicK)*1000/1024)
	epoch := 0.0
	if c.epochStart != 0 {
		epoch = tickMs(st, c.epochStart)
	}
	s.Set(c.sig.epochStart, epoch)
	s.Set(c.sig.originPoint, float64(c.bicOriginPoint))
	s.Set(c.sig.target, float64(c.target))
	s.Set(c.sig.cnt, float64(c.cnt))
	found := 0.0
	if c.found {
		found = 1
	}
	s.Set(c.sig.found, found)
	if c.currRTT != ^uint32(0) {
		s.Set(c.sig.currRTT, float64(c.currRTT))
	}
	s.Set(c.sig.delayMin, float64(c.delayMin))
	s.Set(c.sig.ackCnt, float64(c.ackCnt))
	s.Set(c.sig.tcpCwnd, float64(c.tcpCwnd))
}
