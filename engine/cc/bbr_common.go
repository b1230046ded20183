// Units, fixed-point constants and helpers shared by BBRv1 (bbr.go) and
// BBRv3 (bbr3.go, bbr3_model.go): the kernel's rate_sample in its own
// units, and tcp_mstamp / jiffies / sk_pacing_rate conversions.

package cc

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/jiffy"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Fixed-point units shared by BBRv1 (mainline net/ipv4/tcp_bbr.c) and BBRv3
// (google/bbr v3 branch net/ipv4/tcp_bbr.c); both files define them alike.
const (
	// bwScale scales a bandwidth in packets per microsecond: one unit is
	// about 1500 B / 1 us / 2^24 ≈ 715 bps (BW_SCALE).
	bwScale = 24
	bwUnit  = 1 << bwScale // BW_UNIT

	bbrScale = 8             // BBR_SCALE: fixed-point fractions such as gains
	bbrUnit  = 1 << bbrScale // BBR_UNIT: a gain of 1.0

	// noMinRTT is the ~0U a kernel min_rtt filter holds before any sample.
	noMinRTT = ^uint32(0)

	// skPacingShift is the default sk_pacing_shift: a TSO burst holds
	// about 1 ms (2^-10 s) of data at the pacing rate.
	skPacingShift = 10
	// sysctlTCPMinTSOSegs is the default net.ipv4.tcp_min_tso_segs.
	sysctlTCPMinTSOSegs = 2
)

// The BBR modes (enum bbr_mode), in the kernel's order; the mode signal
// carries these values.
const (
	bbrStartup  = iota // ramp up sending rate rapidly to fill pipe
	bbrDrain           // drain any queue created during startup
	bbrProbeBW         // discover, share bw: pace around estimated bw
	bbrProbeRTT        // cut inflight to min to probe min_rtt
)

// rateSample is struct rate_sample in the kernel's own units (packets,
// microseconds, -1 for "no sample"), converted once per ACK from
// RateSample so the ported arithmetic reads as in C.
type rateSample struct {
	priorDelivered uint32
	delivered      int32
	deliveredCE    int32
	intervalUs     int64 // interval_us; <= 0: not a valid sample
	rttUs          int64 // rtt_us; -1: no RTT sample
	losses         uint32
	ackedSacked    uint32
	priorInFlight  uint32
	isAppLimited   bool
	isAckDelayed   bool

	// google/bbr v3 branch fields.
	txInFlight            uint32
	lost                  uint32
	isECE                 bool
	isAckingTLPRetransSeq bool
}

// usOrNeg converts a sampled duration to whole microseconds, keeping a
// negative "no sample" marker negative.
func usOrNeg(d sim.Duration) int64 {
	if d < 0 {
		return -1
	}
	return int64(d / sim.Microsecond)
}

// kernelSample converts rs to the kernel's units. interval_us truncates to
// whole microseconds as tcp_stamp_us_delta does.
func kernelSample(rs *RateSample) rateSample {
	return rateSample{
		priorDelivered:        rs.PriorDelivered,
		delivered:             rs.Delivered,
		deliveredCE:           rs.DeliveredCE,
		intervalUs:            usOrNeg(rs.Interval),
		rttUs:                 usOrNeg(rs.RTT),
		losses:                rs.Losses,
		ackedSacked:           rs.AckedSacked,
		priorInFlight:         rs.PriorInFlightPkts,
		isAppLimited:          rs.IsAppLimited,
		isAckDelayed:          rs.IsAckDelayed,
		txInFlight:            rs.TxInFlight,
		lost:                  rs.Lost,
		isECE:                 rs.IsECE,
		isAckingTLPRetransSeq: rs.IsAckingTLPRetransSeq,
	}
}

// tcpMstamp is tp->tcp_mstamp: the current time in microseconds.
func tcpMstamp(st *State) uint64 { return uint64(st.Now / sim.Time(sim.Microsecond)) }

// deliveredMstamp is tp->delivered_mstamp in microseconds.
func deliveredMstamp(st *State) uint64 {
	return uint64(st.DeliveredTime / sim.Time(sim.Microsecond))
}

// tcpJiffies32 is tcp_jiffies32: ticks of 1/HZ s since the kernel clock's
// zero (State.Clock), wrapping u32.
func tcpJiffies32(st *State) uint32 {
	t := st.Now + sim.Time(st.Clock)
	if st.HZ == 0 || st.HZ == 1000 {
		return uint32(t / sim.Time(sim.Millisecond)) // a constant divisor: a multiply
	}
	return uint32(int64(t) / int64(jiffy.Tick(st.HZ)))
}

// msecsToJiffies is msecs_to_jiffies: round up to whole ticks.
func msecsToJiffies(st *State, ms uint32) uint32 {
	if st.HZ == 0 || st.HZ == 1000 {
		return ms
	}
	return uint32(jiffy.MsecsTo(st.HZ, ms))
}

// after32 is the kernel's after() on u32 stamps and sequence counts.
func after32(a, b uint32) bool { return int32(b-a) < 0 }

// before32 is the kernel's before().
func before32(a, b uint32) bool { return int32(a-b) < 0 }

// seqAfter is after() on State's sequence numbers as the kernel holds
// them, u32: State's are unwrapped, but a CC's round marker left 2^31
// bytes or more behind snd_una reads as ahead of it on Linux, and so here.
func seqAfter(a, b uint64) bool { return after32(uint32(a), uint32(b)) }

// seqBefore is before() on State's sequence numbers as u32 (seqAfter).
func seqBefore(a, b uint64) bool { return before32(uint32(a), uint32(b)) }

// stampUsDelta is tcp_stamp_us_delta: t1 - t0 in microseconds, never
// negative.
func stampUsDelta(t1, t0 uint64) uint32 {
	if t1 <= t0 {
		return 0
	}
	return uint32(t1 - t0)
}

// tcpMinRTTUs is tcp_min_rtt(tp): ~0U before the first RTT sample.
func tcpMinRTTUs(st *State) uint32 {
	if st.MinRTT <= 0 {
		return noMinRTT
	}
	return uint32(st.MinRTT / sim.Microsecond)
}

// srttUs is tp->srtt_us >> 3: the smoothed RTT in microseconds, 0 before
// the first sample.
func srttUs(st *State) uint32 {
	if st.SRTT <= 0 {
		return 0
	}
	return uint32(st.SRTT / sim.Microsecond)
}

// pacingBytesPerSec is sk_pacing_rate, which the kernel keeps in bytes per
// second.
func pacingBytesPerSec(st *State) uint64 { return uint64(st.PacingRate / 8) }

// setPacingBytesPerSec stores a kernel pacing rate (bytes/s) as bits/s.
func setPacingBytesPerSec(st *State, rate uint64) {
	st.PacingRate = units.BitRate(rate * 8)
}

// bwToBps converts a bw in packets/us << BW_SCALE to bits/s for signals,
// as tcp_get_info reports it (bw * mss * USEC_PER_SEC >> BW_SCALE, bytes).
func bwToBps(st *State, bw uint32) float64 {
	return float64(uint64(bw)*uint64(st.MSS)*1_000_000>>bwScale) * 8
}

// gainRatio expresses a BBR_UNIT-scaled gain as a plain ratio for signals.
func gainRatio(g uint32) float64 { return float64(g) / bbrUnit }

// boolSignal is 1 for true, 0 for false.
func boolSignal(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// newUnseededRand is the fixed stream an algorithm uses until the flow
// seeds it (see Seeder).
func newUnseededRand() *rand.Rand { return rand.New(rand.NewPCG(0, 0)) }

// bbrCore is the part of struct bbr that BBRv1 and BBRv3 declare and use
// alike; bbr1 and bbr3 embed it.
type bbrCore struct {
	minRTTUs          uint32 // min RTT in min_rtt_win_sec window
	minRTTStamp       uint32 // jiffies of minRTTUs
	probeRTTDoneStamp uint32 // end time for PROBE_RTT mode
	nextRTTDelivered  uint32 // delivered count at end of round
	cycleMstamp       uint64 // start of this gain-cycle phase, us

	mode              int
	prevCAState       CAState
	roundStart        bool
	idleRestart       bool
	probeRTTRoundDone bool

	pacingGain    uint32
	cwndGain      uint32
	fullBWReached bool
	fullBWCnt     uint32
	hasSeenRTT    bool
	priorCwnd     uint32
	fullBW        uint32

	ackEpochMstamp    uint64
	extraAcked        [2]uint16
	ackEpochAcked     uint32
	extraAckedWinRTTs uint32
	extraAckedWinIdx  int
}

// bbrVersion is what the shared bbr_cwnd_event needs of a BBR version.
type bbrVersion interface {
	bwEst() uint32
	setPacingRate(st *State, bw, gain uint32)
	checkProbeRTTDone(st *State)
	publish(st *State)
}

// bbrRateFunc is a version's bbr_rate_bytes_per_sec.
type bbrRateFunc func(st *State, rate uint64, gain uint32, marginPct uint64) uint64

// bbrBDP is the arithmetic of bbr_bdp: ceil(bw * rtt * gain) in packets.
func bbrBDP(bw, rttUs, gain uint32) uint32 {
	w := uint64(bw) * uint64(rttUs)
	return uint32(((w*uint64(gain))>>bbrScale + bwUnit - 1) / bwUnit)
}

// SndBufExpand follows bbr_sndbuf_expand (v1 and v3): provision three
// windows, as BBR may slow-start even during recovery.
func (c *bbrCore) SndBufExpand() uint32 { return 3 }

// extraAckedMax is max(extra_acked[0], extra_acked[1]), as
// bbr_ack_aggregation_cwnd reads it.
func (c *bbrCore) extraAckedMax() uint32 {
	return uint32(max(c.extraAcked[0], c.extraAcked[1]))
}

// initPacingRateFromRTT follows bbr_init_pacing_rate_from_rtt: gain *
// cwnd / srtt, or over a nominal 1 ms before any RTT sample. An RTT has
// been seen once tp->srtt_us is not 0, which a sample of 0 µs leaves at 1
// (an eighth of a µs), so the test is on SRTT, not on whole µs. The
// bandwidth goes to bbr_bw_to_pacing_rate as a u32: at 256 packets per µs
// or more (a large cwnd over a µs-scale srtt) the kernel's wraps.
func (c *bbrCore) initPacingRateFromRTT(st *State, rateBytesPerSec bbrRateFunc, gain uint32) {
	rttUs := uint32(1000)
	if st.SRTT > 0 {
		rttUs = max(srttUs(st), 1)
		c.hasSeenRTT = true
	}
	bw := uint32(uint64(st.CwndPkts) * bwUnit / uint64(rttUs))
	setPacingBytesPerSec(st, rateBytesPerSec(st, uint64(bw), gain, bbrPacingMarginPct))
}

// setPacingRate follows bbr_set_pacing_rate: never slow down before the
// pipe is estimated full. initGain is the gain of the version's
// bbr_init_pacing_rate_from_rtt.
func (c *bbrCore) setPacingRate(st *State, rateBytesPerSec bbrRateFunc, bw, gain, initGain uint32) {
	rate := rateBytesPerSec(st, uint64(bw), gain, bbrPacingMarginPct)
	if !c.hasSeenRTT && st.SRTT > 0 {
		c.initPacingRateFromRTT(st, rateBytesPerSec, initGain)
	}
	if c.fullBWReached || rate > pacingBytesPerSec(st) {
		setPacingBytesPerSec(st, rate)
	}
}

// saveCwnd follows bbr_save_cwnd: remember the last good cwnd.
func (c *bbrCore) saveCwnd(st *State) {
	if c.prevCAState < CARecovery && c.mode != bbrProbeRTT {
		c.priorCwnd = st.CwndPkts
	} else {
		c.priorCwnd = max(c.priorCwnd, st.CwndPkts)
	}
}

// cwndEvent follows bbr_cwnd_event for CA_EVENT_TX_START: on restart from
// idle while app-limited, pace at the estimated bw instead of probing.
func (c *bbrCore) cwndEvent(v bbrVersion, st *State, ev Event) {
	if ev != EventTxStart || st.AppLimited == 0 {
		return
	}
	c.idleRestart = true
	c.ackEpochMstamp = tcpMstamp(st)
	c.ackEpochAcked = 0
	switch c.mode {
	case bbrProbeBW:
		v.setPacingRate(st, v.bwEst(), bbrUnit)
	case bbrProbeRTT:
		v.checkProbeRTTDone(st)
	}
	v.publish(st)
}

// probeRTTStep follows the PROBE_RTT part of bbr_update_min_rtt: once
// inflight is down to cwndTarget, hold it there for 200 ms and a round,
// then leave through the version's bbr_check_probe_rtt_done.
func (c *bbrCore) probeRTTStep(v bbrVersion, st *State, now, cwndTarget uint32) {
	// Make the sampler ignore the low rate of this mode.
	st.AppLimited = max(st.Delivered+st.InFlightPkts, 1)
	if c.probeRTTDoneStamp == 0 && st.InFlightPkts <= cwndTarget {
		c.probeRTTDoneStamp = now + msecsToJiffies(st, bbrProbeRTTModeMs)
		c.probeRTTRoundDone = false
		c.nextRTTDelivered = st.Delivered
	} else if c.probeRTTDoneStamp != 0 {
		if c.roundStart {
			c.probeRTTRoundDone = true
		}
		if c.probeRTTRoundDone {
			v.checkProbeRTTDone(st)
		}
	}
}

// ackAggregationCwnd follows the part of bbr_ack_aggregation_cwnd both
// versions share: extra_acked scaled by its gain, capped at 100 ms of bw.
func (c *bbrCore) ackAggregationCwnd(bw uint32) uint32 {
	maxAggr := uint32(uint64(bw) * bbrExtraAckedMaxUs / bwUnit)
	aggr := (bbrExtraAckedGain * c.extraAckedMax()) >> bbrScale
	return min(aggr, maxAggr)
}

// updateAckAggregation follows bbr_update_ack_aggregation: track the data
// ACKed beyond bw * elapsed, a windowed max over winRTTs to 2*winRTTs
// rounds. bw is bbr_bw, which nothing here changes.
func (c *bbrCore) updateAckAggregation(st *State, rs *rateSample, winRTTs, bw uint32) {
	if rs.ackedSacked == 0 || rs.delivered < 0 || rs.intervalUs <= 0 {
		return
	}
	if c.roundStart {
		c.extraAckedWinRTTs = min(bbrExtraAckedWinRTTsField, c.extraAckedWinRTTs+1)
		if c.extraAckedWinRTTs >= winRTTs {
			c.extraAckedWinRTTs = 0
			c.extraAckedWinIdx ^= 1
			c.extraAcked[c.extraAckedWinIdx] = 0
		}
	}
	epochUs := stampUsDelta(deliveredMstamp(st), c.ackEpochMstamp)
	expected := uint32(uint64(bw) * uint64(epochUs) / bwUnit)
	if c.ackEpochAcked <= expected || c.ackEpochAcked+rs.ackedSacked >= bbrAckEpochAckedResetThr {
		c.ackEpochAcked = 0
		c.ackEpochMstamp = deliveredMstamp(st)
		expected = 0
	}
	c.ackEpochAcked = min(bbrAckEpochAckedFieldMax, c.ackEpochAcked+rs.ackedSacked)
	extra := min(c.ackEpochAcked-expected, st.CwndPkts)
	if extra > uint32(c.extraAcked[c.extraAckedWinIdx]) {
		c.extraAcked[c.extraAckedWinIdx] = uint16(extra)
	}
}

// resetAckAggregation is the ack-aggregation part of bbr_init.
func (c *bbrCore) resetAckAggregation(st *State) {
	c.ackEpochMstamp = tcpMstamp(st)
	c.ackEpochAcked = 0
	c.extraAckedWinRTTs = 0
	c.extraAckedWinIdx = 0
	c.extraAcked = [2]uint16{}
}

// CongAvoid is never called for a CongController; BBR has no cong_avoid.
func (c *bbrCore) CongAvoid(*State, uint32) {}
