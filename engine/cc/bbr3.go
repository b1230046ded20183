// BBRv3, ported from the google/bbr v3 branch's net/ipv4/tcp_bbr.c
// (BBR_VERSION 3). Beyond v1's bw/min_rtt model it keeps bounds on the
// operating range — bw_hi/inflight_hi (robust long-term upper bounds, cut
// when loss or CE marking during a bandwidth probe is too high) and
// bw_lo/inflight_lo (short-term lower bounds, cut multiplicatively on
// loss/ECN when not probing) — and probes bandwidth in a PROBE_BW cycle of
// DOWN, CRUISE, REFILL and UP phases, timed to coexist with Reno/CUBIC.
//
// Left out: Protective Load Balancing (tcp_plb: flow-label rehash, no ECMP
// model here), the receiver-side CE-state ACK logic (dctcp_ece_ack_update,
// which belongs to the receiver), TLP-repaired loss (CA_EVENT_TLP_RECOVERY)
// and tp->fast_ack_mode.

package cc

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/units"
)

// The PROBE_BW phases (enum bbr_pacing_gain_phase), indexing bbr3PacingGain.
const (
	bbrBWProbeUp     = 0 // push up inflight to probe for bw/vol
	bbrBWProbeDown   = 1 // drain excess inflight from the queue
	bbrBWProbeCruise = 2 // use pipe, w/ headroom in queue/pipe
	bbrBWProbeRefill = 3 // refill the pipe again to 100%
)

// How the incoming ACK stream relates to bandwidth probing (enum
// bbr_ack_phase).
const (
	bbrAcksInit          = iota // not probing; not getting probe feedback
	bbrAcksRefilling            // sending at est. bw to fill pipe
	bbrAcksProbeStarting        // inflight rising to probe bw
	bbrAcksProbeFeedback        // getting feedback from bw probing
	bbrAcksProbeStopping        // stopped probing; still getting feedback
)

const (
	bbr3ProbeRTTWinMs = 5000 // min RTT window that times PROBE_RTT entries
	// bbr3ProbeRTTCwndGain: PROBE_RTT holds cwnd at half the BDP.
	bbr3ProbeRTTCwndGain = bbrUnit * 1 / 2
	bbr3TSORTTShift      = 9 // halve the RTT-based TSO allowance per 512 us
	// bbr3StartupPacingGain is 4*ln(2): 256*277/100 + 1 = 710 (2.77).
	bbr3StartupPacingGain = bbrUnit*277/100 + 1
	bbr3StartupCwndGain   = bbrUnit * 2
	bbr3ExtraAckedWinRTTs = 5

	bbr3ECNMaxRTTUs       = 5000               // use ECN only below 5 ms min_rtt
	bbr3Beta              = bbrUnit * 30 / 100 // cut to 1 - 0.3 on loss (76)
	bbr3ECNAlphaGain      = bbrUnit * 1 / 16   // EWMA gain of ecn_alpha (16)
	bbr3ECNAlphaInit      = bbrUnit            // start at 1.0: react fast
	bbr3ECNFactor         = bbrUnit * 1 / 3    // cut inflight_lo by alpha/3
	bbr3ECNThresh         = bbrUnit * 1 / 2    // CE ratio 50%: probe too high
	bbr3ECNReprobeGain    = bbrUnit * 1 / 2    // re-probe at inflight_hi/2
	bbr3LossThresh        = bbrUnit * 2 / 100  // loss rate 2% (5/256)
	bbr3FullLossCnt       = 6                  // loss events to exit STARTUP
	bbr3FullECNCnt        = 2                  // high-CE rounds to exit STARTUP
	bbr3InflightHeadroom  = bbrUnit * 15 / 100 // leave 15% headroom (38)
	bbr3BWProbeCwndGain   = 1                  // PROBE_UP cwnd gain + 1/4
	bbr3BWProbeMaxRounds  = 63                 // Reno-coexistence bound
	bbr3BWProbeRandRounds = 2
	bbr3BWProbeBaseUs     = 2 * 1_000_000 // probe every 2 s ..
	bbr3BWProbeRandUs     = 1 * 1_000_000 // .. plus up to 1 s
	bbr3FastPath          = true

	unset32 = ^uint32(0) // ~0U: bound not set
)

// bbr3PacingGain is the PROBE_BW gain per phase: UP 1.25, DOWN 0.91,
// CRUISE 1.0, REFILL 1.0.
var bbr3PacingGain = [4]uint32{bbrUnit * 5 / 4, bbrUnit * 91 / 100, bbrUnit, bbrUnit}

func init() { Register("bbr3", func() Algorithm { return newBBR3() }) }

// rtpropHook lets a variant (BBRB) substitute the RTT the BDP is computed
// from; bbr3 itself uses min_rtt.
type rtpropHook interface {
	// sample sees each ACK's rate sample after bbr_main's round update.
	sample(st *State, rs *rateSample, minRTTUs uint32)
	// bdpRTTUs returns the RTT, in us, that bbr_bdp multiplies bw by.
	bdpRTTUs(minRTTUs uint32) uint32
}

// bbr3 is struct bbr of the google/bbr v3 branch.
type bbr3 struct {
	rng    *rand.Rand
	rtprop rtpropHook // nil: BDP from min_rtt, as the kernel

	minRTTUs          uint32
	minRTTStamp       uint32
	probeRTTDoneStamp uint32
	probeRTTMinUs     uint32 // min RTT in probe_rtt_win_ms window
	probeRTTMinStamp  uint32
	nextRTTDelivered  uint32
	cycleMstamp       uint64

	mode              int
	prevCAState       CAState
	roundStart        bool
	bwProbeUpRounds   uint32 // 5-bit field
	tryFastPath       bool
	idleRestart       bool
	probeRTTRoundDone bool
	initCwnd          uint32

	pacingGain, cwndGain uint32
	fullBWReached        bool
	fullBWCnt            uint32
	cycleIdx             int
	hasSeenRTT           bool
	priorCwnd            uint32
	fullBW               uint32

	ackEpochMstamp    uint64
	extraAcked        [2]uint16
	ackEpochAcked     uint32
	extraAckedWinRTTs uint32
	extraAckedWinIdx  int

	fullBWNow        bool
	startupECNRounds uint32
	lossInCycle      bool
	ecnInCycle       bool

	lossRoundDelivered uint32
	undoBWLo           uint32
	undoInflightLo     uint32
	undoInflightHi     uint32
	bwLatest           uint32
	bwLo               uint32
	bwHi               [2]uint32
	inflightLatest     uint32
	inflightLo         uint32
	inflightHi         uint32
	bwProbeUpCnt       uint32
	bwProbeUpAcks      uint32
	probeWaitUs        uint32

	ecnEligible        bool
	ecnAlpha           uint32
	bwProbeSamples     bool
	prevProbeTooHigh   bool
	stoppedRiskyProbe  bool
	roundsSinceProbe   uint32
	lossRoundStart     bool
	lossInRound        bool
	ecnInRound         bool
	ackPhase           int
	lossEventsInRound  uint32
	alphaLastDelivered uint32
	alphaLastDelivCE   uint32

	sig bbr3Signals
}

type bbr3Signals struct {
	bw, maxBW, bwHi, bwLo, inflightHi, inflightLo, mode, phase, ecnAlpha,
	lossInRound, ecnInRound, minRTT, pacingGain, cwndGain, fullBWReached SignalID
}

func newBBR3() *bbr3 { return &bbr3{rng: newUnseededRand()} }

// Name returns "bbr3".
func (b *bbr3) Name() string { return "bbr3" }

// Seed sets the stream bbr_pick_probe_wait draws from.
func (b *bbr3) Seed(r *rand.Rand) { b.rng = r }

// canUseECN follows bbr_can_use_ecn: ECN negotiated on a route that marks
// at a shallow threshold.
func (b *bbr3) canUseECN(st *State) bool { return st.ECNOk && st.ECNLow }

func (b *bbr3) maxBW() uint32 { return max(b.bwHi[0], b.bwHi[1]) }

// bwEst follows bbr_bw: the max filter capped by the short-term bound.
func (b *bbr3) bwEst() uint32 { return min(b.maxBW(), b.bwLo) }

func (b *bbr3) extraAckedMax() uint32 {
	return uint32(max(b.extraAcked[0], b.extraAcked[1]))
}

// bbr3RateBytesPerSec follows the v3 bbr_rate_bytes_per_sec, which never
// returns 0.
func bbr3RateBytesPerSec(st *State, rate uint64, gain uint32, marginPct uint64) uint64 {
	return max(bbrRateBytesPerSec(st, rate, gain, marginPct), 1)
}

// initPacingRateFromRTT follows bbr_init_pacing_rate_from_rtt.
func (b *bbr3) initPacingRateFromRTT(st *State) {
	rttUs := uint32(1000)
	if s := srttUs(st); s > 0 {
		rttUs = max(s, 1)
		b.hasSeenRTT = true
	}
	bw := uint64(st.CwndPkts) * bwUnit / uint64(rttUs)
	setPacingBytesPerSec(st, bbr3RateBytesPerSec(st, bw, bbr3StartupPacingGain, bbrPacingMarginPct))
}

// setPacingRate follows bbr_set_pacing_rate.
func (b *bbr3) setPacingRate(st *State, bw, gain uint32) {
	rate := bbr3RateBytesPerSec(st, uint64(bw), gain, bbrPacingMarginPct)
	if !b.hasSeenRTT && srttUs(st) > 0 {
		b.initPacingRateFromRTT(st)
	}
	if b.fullBWReached || rate > pacingBytesPerSec(st) {
		setPacingBytesPerSec(st, rate)
	}
}

// tsoSegsGeneric follows bbr_tso_segs_generic: ~1 ms at the pacing rate
// plus an allowance of 64 KB halved per 512 us of min_rtt.
func (b *bbr3) tsoSegsGeneric(st *State, mss units.Bytes, gsoMaxSize uint64) uint32 {
	bytes := pacingBytesPerSec(st) >> skPacingShift
	if r := b.minRTTUs >> bbr3TSORTTShift; r < 32 {
		bytes += gsoLegacyMaxSize >> r
	}
	bytes = min(bytes, gsoMaxSize-1-maxTCPHeader)
	return max(uint32(bytes/uint64(mss)), sysctlTCPMinTSOSegs)
}

// TSOSegs follows bbr_tso_segs, further capped by State.GSOMaxSegs when set.
func (b *bbr3) TSOSegs(st *State, mss units.Bytes) uint32 {
	segs := b.tsoSegsGeneric(st, mss, gsoLegacyMaxSize)
	if st.GSOMaxSegs > 0 {
		segs = min(segs, st.GSOMaxSegs)
	}
	return segs
}

func (b *bbr3) tsoSegsGoal(st *State) uint32 {
	return b.tsoSegsGeneric(st, st.MSS, gsoLegacyMaxSize)
}

// saveCwnd follows bbr_save_cwnd.
func (b *bbr3) saveCwnd(st *State) {
	if b.prevCAState < CARecovery && b.mode != bbrProbeRTT {
		b.priorCwnd = st.CwndPkts
	} else {
		b.priorCwnd = max(b.priorCwnd, st.CwndPkts)
	}
}

// CwndEvent follows bbr_cwnd_event for CA_EVENT_TX_START.
func (b *bbr3) CwndEvent(st *State, ev Event) {
	if ev != EventTxStart || st.AppLimited == 0 {
		return
	}
	b.idleRestart = true
	b.ackEpochMstamp = tcpMstamp(st)
	b.ackEpochAcked = 0
	switch b.mode {
	case bbrProbeBW:
		b.setPacingRate(st, b.bwEst(), bbrUnit)
	case bbrProbeRTT:
		b.checkProbeRTTDone(st)
	}
	b.publish(st)
}

// bdpRTTUs is the RTT the BDP uses: min_rtt, unless a variant's hook
// substitutes its own estimate.
func (b *bbr3) bdpRTTUs() uint32 {
	if b.rtprop == nil || b.minRTTUs == noMinRTT {
		return b.minRTTUs
	}
	return b.rtprop.bdpRTTUs(b.minRTTUs)
}

// bdp follows bbr_bdp.
func (b *bbr3) bdp(bw, gain uint32) uint32 {
	if b.minRTTUs == noMinRTT {
		return b.initCwnd
	}
	w := uint64(bw) * uint64(b.bdpRTTUs())
	return uint32(((w*uint64(gain))>>bbrScale + bwUnit - 1) / bwUnit)
}

// quantizationBudget follows the v3 bbr_quantization_budget.
func (b *bbr3) quantizationBudget(st *State, cwnd uint32) uint32 {
	cwnd = max(cwnd, 3*b.tsoSegsGoal(st))
	cwnd = max(cwnd, bbrCwndMinTarget)
	if b.mode == bbrProbeBW && b.cycleIdx == bbrBWProbeUp {
		cwnd += 2
	}
	return cwnd
}

// inflight follows bbr_inflight.
func (b *bbr3) inflight(st *State, bw, gain uint32) uint32 {
	return b.quantizationBudget(st, b.bdp(bw, gain))
}

func (b *bbr3) inNetAtEDT(st *State, inflightNow uint32) uint32 {
	return packetsInNetAtEDT(st, inflightNow, b.bwEst(), b.pacingGain, b.tsoSegsGoal(st))
}

// ackAggregationCwnd follows the v3 bbr_ack_aggregation_cwnd.
func (b *bbr3) ackAggregationCwnd() uint32 {
	maxAggr := uint32(uint64(b.bwEst()) * bbrExtraAckedMaxUs / bwUnit)
	aggr := (bbrExtraAckedGain * b.extraAckedMax()) >> bbrScale
	return min(aggr, maxAggr)
}

// probeRTTCwnd follows bbr_probe_rtt_cwnd: half the BDP, at least 4.
func (b *bbr3) probeRTTCwnd() uint32 {
	return max(bbrCwndMinTarget, b.bdp(b.bwEst(), bbr3ProbeRTTCwndGain))
}

// setCwnd follows the v3 bbr_set_cwnd.
func (b *bbr3) setCwnd(st *State, acked, bw, gain uint32) {
	cwnd := st.CwndPkts
	if acked > 0 {
		target := b.bdp(bw, gain)
		target += b.ackAggregationCwnd()
		target = b.quantizationBudget(st, target)
		b.tryFastPath = false
		if b.fullBWReached {
			cwnd += acked
			if cwnd >= target {
				cwnd = target
				b.tryFastPath = true
			}
		} else if cwnd < target || cwnd < 2*b.initCwnd {
			cwnd += acked
		} else {
			b.tryFastPath = true
		}
		cwnd = max(cwnd, bbrCwndMinTarget)
	}
	st.CwndPkts = min(cwnd, st.CwndClampPkts)
	if b.mode == bbrProbeRTT {
		st.CwndPkts = min(st.CwndPkts, b.probeRTTCwnd())
	}
}

// updateRoundStart follows bbr_update_round_start.
func (b *bbr3) updateRoundStart(st *State, rs *rateSample) {
	b.roundStart = false
	if rs.intervalUs > 0 && !before32(rs.priorDelivered, b.nextRTTDelivered) {
		b.nextRTTDelivered = st.Delivered
		b.roundStart = true
	}
}

// calculateBWSample follows bbr_calculate_bw_sample, rounding up so the
// rate can grow at low rates.
func calculateBWSample(rs *rateSample) uint32 {
	if rs.intervalUs <= 0 || rs.delivered < 0 {
		return 0
	}
	n := uint64(rs.delivered) * bwUnit
	return uint32((n + uint64(rs.intervalUs) - 1) / uint64(rs.intervalUs))
}

// updateAckAggregation follows the v3 bbr_update_ack_aggregation, whose
// window is 1 round before the pipe is full.
func (b *bbr3) updateAckAggregation(st *State, rs *rateSample) {
	if rs.ackedSacked == 0 || rs.delivered < 0 || rs.intervalUs <= 0 {
		return
	}
	if b.roundStart {
		b.extraAckedWinRTTs = min(bbrExtraAckedWinRTTsField, b.extraAckedWinRTTs+1)
		thresh := uint32(bbr3ExtraAckedWinRTTs)
		if !b.fullBWReached {
			thresh = 1
		}
		if b.extraAckedWinRTTs >= thresh {
			b.extraAckedWinRTTs = 0
			b.extraAckedWinIdx ^= 1
			b.extraAcked[b.extraAckedWinIdx] = 0
		}
	}
	epochUs := stampUsDelta(deliveredMstamp(st), b.ackEpochMstamp)
	expected := uint32(uint64(b.bwEst()) * uint64(epochUs) / bwUnit)
	if b.ackEpochAcked <= expected || b.ackEpochAcked+rs.ackedSacked >= bbrAckEpochAckedResetThr {
		b.ackEpochAcked = 0
		b.ackEpochMstamp = deliveredMstamp(st)
		expected = 0
	}
	b.ackEpochAcked = min(bbrAckEpochAckedFieldMax, b.ackEpochAcked+rs.ackedSacked)
	extra := min(b.ackEpochAcked-expected, st.CwndPkts)
	if extra > uint32(b.extraAcked[b.extraAckedWinIdx]) {
		b.extraAcked[b.extraAckedWinIdx] = uint16(extra)
	}
}

// checkProbeRTTDone follows the v3 bbr_check_probe_rtt_done.
func (b *bbr3) checkProbeRTTDone(st *State) {
	if b.probeRTTDoneStamp == 0 || !after32(tcpJiffies32(st), b.probeRTTDoneStamp) {
		return
	}
	b.probeRTTMinStamp = tcpJiffies32(st) // schedule next PROBE_RTT
	st.CwndPkts = max(st.CwndPkts, b.priorCwnd)
	b.exitProbeRTT(st)
}

// updateMinRTT follows the v3 bbr_update_min_rtt: a 5 s filter times
// PROBE_RTT; the 10 s min_rtt takes its value when lower or expired.
func (b *bbr3) updateMinRTT(st *State, rs *rateSample) {
	now := tcpJiffies32(st)
	probeRTTExpired := after32(now, b.probeRTTMinStamp+bbr3ProbeRTTWinMs)
	if rs.rttUs >= 0 && (rs.rttUs < int64(b.probeRTTMinUs) || (probeRTTExpired && !rs.isAckDelayed)) {
		b.probeRTTMinUs = uint32(rs.rttUs)
		b.probeRTTMinStamp = now
	}
	minRTTExpired := after32(now, b.minRTTStamp+bbrMinRTTWinSec*1000)
	if b.probeRTTMinUs <= b.minRTTUs || minRTTExpired {
		b.minRTTUs = b.probeRTTMinUs
		b.minRTTStamp = b.probeRTTMinStamp
	}
	if probeRTTExpired && !b.idleRestart && b.mode != bbrProbeRTT {
		b.mode = bbrProbeRTT
		b.saveCwnd(st)
		b.probeRTTDoneStamp = 0
		b.ackPhase = bbrAcksProbeStopping
		b.nextRTTDelivered = st.Delivered
	}
	if b.mode == bbrProbeRTT {
		st.AppLimited = max(st.Delivered+st.InFlightPkts, 1)
		if b.probeRTTDoneStamp == 0 && st.InFlightPkts <= b.probeRTTCwnd() {
			b.probeRTTDoneStamp = now + bbrProbeRTTModeMs
			b.probeRTTRoundDone = false
			b.nextRTTDelivered = st.Delivered
		} else if b.probeRTTDoneStamp != 0 {
			if b.roundStart {
				b.probeRTTRoundDone = true
			}
			if b.probeRTTRoundDone {
				b.checkProbeRTTDone(st)
			}
		}
	}
	if rs.delivered > 0 {
		b.idleRestart = false
	}
}

// updateGains follows the v3 bbr_update_gains.
func (b *bbr3) updateGains() {
	switch b.mode {
	case bbrStartup:
		b.pacingGain, b.cwndGain = bbr3StartupPacingGain, bbr3StartupCwndGain
	case bbrDrain:
		b.pacingGain, b.cwndGain = bbrDrainGain, bbr3StartupCwndGain
	case bbrProbeBW:
		b.pacingGain = bbr3PacingGain[b.cycleIdx]
		b.cwndGain = bbrCwndGain
		if b.cycleIdx == bbrBWProbeUp {
			b.cwndGain += bbrUnit * bbr3BWProbeCwndGain / 4
		}
	case bbrProbeRTT:
		b.pacingGain, b.cwndGain = bbrUnit, bbrUnit
	}
}

// takeMaxBWSample follows bbr_take_max_bw_sample.
func (b *bbr3) takeMaxBWSample(bw uint32) { b.bwHi[1] = max(bw, b.bwHi[1]) }

// advanceMaxBWFilter follows bbr_advance_max_bw_filter: keep the max of
// the last 1-2 PROBE_BW cycles.
func (b *bbr3) advanceMaxBWFilter() {
	if b.bwHi[1] == 0 {
		return // no samples in this window; remember the old one
	}
	b.bwHi[0], b.bwHi[1] = b.bwHi[1], 0
}

// resetFullBW follows bbr_reset_full_bw.
func (b *bbr3) resetFullBW() {
	b.fullBW = 0
	b.fullBWCnt = 0
	b.fullBWNow = false
}

// targetInflight follows bbr_target_inflight: the BDP, unless congestion
// cut cwnd.
func (b *bbr3) targetInflight(st *State) uint32 {
	return min(b.inflight(st, b.bwEst(), bbrUnit), st.CwndPkts)
}

// isProbingBandwidth follows bbr_is_probing_bandwidth.
func (b *bbr3) isProbingBandwidth() bool {
	return b.mode == bbrStartup ||
		(b.mode == bbrProbeBW && (b.cycleIdx == bbrBWProbeRefill || b.cycleIdx == bbrBWProbeUp))
}

// hasElapsedInPhase follows bbr_has_elapsed_in_phase.
func (b *bbr3) hasElapsedInPhase(st *State, intervalUs uint32) bool {
	return int64(tcpMstamp(st))-int64(b.cycleMstamp+uint64(intervalUs)) > 0
}

// handleQueueTooHighInStartup follows bbr_handle_queue_too_high_in_startup.
func (b *bbr3) handleQueueTooHighInStartup(st *State) {
	b.fullBWReached = true
	bdp := b.inflight(st, b.maxBW(), bbrUnit)
	b.inflightHi = max(bdp, b.inflightLatest)
}

// checkECNTooHighInStartup follows bbr_check_ecn_too_high_in_startup.
func (b *bbr3) checkECNTooHighInStartup(st *State, ceRatio uint32) {
	if b.fullBWReached || !b.ecnEligible {
		return
	}
	if ceRatio >= bbr3ECNThresh {
		b.startupECNRounds = (b.startupECNRounds + 1) & 3 // a 2-bit field
	} else {
		b.startupECNRounds = 0
	}
	if b.startupECNRounds >= bbr3FullECNCnt {
		b.handleQueueTooHighInStartup(st)
	}
}

// updateECNAlpha follows bbr_update_ecn_alpha: once per round, an EWMA
// (gain 1/16) of the CE-marked fraction of delivered packets.
func (b *bbr3) updateECNAlpha(st *State) {
	if !b.ecnEligible && b.canUseECN(st) && b.minRTTUs <= bbr3ECNMaxRTTUs {
		b.ecnEligible = true
	}
	if !b.ecnEligible {
		return // PLB, the other user of alpha, is not modelled
	}
	delivered := int32(st.Delivered - b.alphaLastDelivered)
	deliveredCE := int32(st.DeliveredCE - b.alphaLastDelivCE)
	if delivered <= 0 || deliveredCE < 0 {
		return
	}
	ceRatio := uint32((uint64(deliveredCE) << bbrScale) / uint64(delivered))
	alpha := ((bbrUnit - bbr3ECNAlphaGain) * b.ecnAlpha) >> bbrScale
	alpha += (bbr3ECNAlphaGain * ceRatio) >> bbrScale
	b.ecnAlpha = min(alpha, bbrUnit)
	b.alphaLastDelivered = st.Delivered
	b.alphaLastDelivCE = st.DeliveredCE
	b.checkECNTooHighInStartup(st, ceRatio)
}

// raiseInflightHiSlope follows bbr_raise_inflight_hi_slope: each round of
// PROBE_UP doubles the growth of inflight_hi.
func (b *bbr3) raiseInflightHiSlope(st *State) {
	growth := uint32(1) << b.bwProbeUpRounds
	b.bwProbeUpRounds = min(b.bwProbeUpRounds+1, 30)
	b.bwProbeUpCnt = max(st.CwndPkts/growth, 1)
}

// probeInflightHiUpward follows bbr_probe_inflight_hi_upward.
func (b *bbr3) probeInflightHiUpward(st *State, rs *rateSample) {
	if !st.CwndLimited || st.CwndPkts < b.inflightHi {
		return // not fully using inflight_hi, so don't grow it
	}
	b.bwProbeUpAcks += rs.ackedSacked
	if b.bwProbeUpAcks >= b.bwProbeUpCnt {
		delta := b.bwProbeUpAcks / b.bwProbeUpCnt
		b.bwProbeUpAcks -= delta * b.bwProbeUpCnt
		b.inflightHi += delta
		b.tryFastPath = false
	}
	if b.roundStart {
		b.raiseInflightHiSlope(st)
	}
}

// isInflightTooHigh follows bbr_is_inflight_too_high: loss above 2% of
// tx_in_flight, or (ECN-eligible) CE above 50% of delivered.
func (b *bbr3) isInflightTooHigh(rs *rateSample) bool {
	if rs.lost > 0 && rs.txInFlight > 0 {
		lossThresh := uint32(uint64(rs.txInFlight) * bbr3LossThresh >> bbrScale)
		if rs.lost > lossThresh {
			return true
		}
	}
	if rs.deliveredCE > 0 && rs.delivered > 0 && b.ecnEligible {
		ecnThresh := int32(uint64(rs.delivered) * bbr3ECNThresh >> bbrScale)
		if rs.deliveredCE > ecnThresh {
			return true
		}
	}
	return false
}

// inflightHiFromLostSkb follows bbr_inflight_hi_from_lost_skb: the
// tx_in_flight at which the loss rate crossed loss_thresh, solving
// (lost_prev + x) / (inflight_prev + x) = loss_thresh for x, rounded up.
func inflightHiFromLostSkb(rs *rateSample, pcount uint32) uint32 {
	inflightPrev := int32(rs.txInFlight - pcount)
	lostPrev := int32(rs.lost - pcount)
	if inflightPrev < 0 || lostPrev < 0 {
		return unset32
	}
	budget := (uint64(inflightPrev)*bbr3LossThresh + bbrUnit - 1) >> bbrScale
	var prefix uint64
	if uint64(lostPrev) < budget {
		prefix = ((budget - uint64(lostPrev)) << bbrScale) / (bbrUnit - bbr3LossThresh)
	}
	return uint32(uint64(inflightPrev) + prefix)
}

// inflightWithHeadroom follows bbr_inflight_with_headroom: inflight_hi
// less 15%, at least 4.
func (b *bbr3) inflightWithHeadroom() uint32 {
	if b.inflightHi == unset32 {
		return unset32
	}
	headroom := max(uint32(uint64(b.inflightHi)*bbr3InflightHeadroom>>bbrScale), 1)
	return uint32(max(int32(b.inflightHi-headroom), bbrCwndMinTarget))
}

// boundCwndForInflightModel follows bbr_bound_cwnd_for_inflight_model.
func (b *bbr3) boundCwndForInflightModel(st *State) {
	limit := unset32
	if b.mode == bbrProbeBW && b.cycleIdx != bbrBWProbeCruise {
		limit = b.inflightHi // probe to see if more packets fit
	} else if b.mode == bbrProbeRTT || (b.mode == bbrProbeBW && b.cycleIdx == bbrBWProbeCruise) {
		limit = b.inflightWithHeadroom()
	}
	limit = min(limit, b.inflightLo)
	limit = max(limit, bbrCwndMinTarget)
	st.CwndPkts = min(limit, st.CwndPkts)
}

// ecnCut follows bbr_ecn_cut: 1 - alpha*ecn_factor.
func (b *bbr3) ecnCut() uint32 { return bbrUnit - (b.ecnAlpha*bbr3ECNFactor)>>bbrScale }

// initBWLo and initInflightLo follow bbr_init_lower_bounds (split by its
// init_bw argument): start a lower bound from the current value.
func (b *bbr3) initBWLo() {
	if b.bwLo == unset32 {
		b.bwLo = b.maxBW()
	}
}

func (b *bbr3) initInflightLo(st *State) {
	if b.inflightLo == unset32 {
		b.inflightLo = st.CwndPkts
	}
}

// adaptLowerBounds follows bbr_adapt_lower_bounds: when not probing, cut
// bw_lo/inflight_lo by beta on loss and by alpha*ecn_factor on ECN, but
// not below what the last round delivered.
func (b *bbr3) adaptLowerBounds(st *State) {
	if b.isProbingBandwidth() {
		return
	}
	ecnInflightLo := unset32
	if b.ecnInRound {
		b.initInflightLo(st)
		ecnInflightLo = uint32(uint64(b.inflightLo) * uint64(b.ecnCut()) >> bbrScale)
	}
	if b.lossInRound {
		b.initBWLo()
		b.initInflightLo(st)
		lossCut := uint64(bbrUnit - bbr3Beta)
		b.bwLo = max(b.bwLatest, uint32(uint64(b.bwLo)*lossCut>>bbrScale))
		b.inflightLo = max(b.inflightLatest, uint32(uint64(b.inflightLo)*lossCut>>bbrScale))
	}
	b.inflightLo = min(b.inflightLo, ecnInflightLo)
	b.bwLo = max(1, b.bwLo)
}

// resetLowerBounds follows bbr_reset_lower_bounds.
func (b *bbr3) resetLowerBounds() {
	b.bwLo = unset32
	b.inflightLo = unset32
}

// resetCongestionSignals follows bbr_reset_congestion_signals.
func (b *bbr3) resetCongestionSignals() {
	b.lossInRound = false
	b.ecnInRound = false
	b.lossInCycle = false
	b.ecnInCycle = false
	b.bwLatest = 0
	b.inflightLatest = 0
}

// updateLatestDeliverySignals follows bbr_update_latest_delivery_signals.
func (b *bbr3) updateLatestDeliverySignals(st *State, rs *rateSample, sampleBW uint32) {
	b.lossRoundStart = false
	if rs.intervalUs <= 0 || rs.ackedSacked == 0 {
		return
	}
	b.bwLatest = max(b.bwLatest, sampleBW)
	b.inflightLatest = max(b.inflightLatest, uint32(rs.delivered))
	if !before32(rs.priorDelivered, b.lossRoundDelivered) {
		b.lossRoundDelivered = st.Delivered
		b.lossRoundStart = true
	}
}

// advanceLatestDeliverySignals follows bbr_advance_latest_delivery_signals.
func (b *bbr3) advanceLatestDeliverySignals(rs *rateSample, sampleBW uint32) {
	if b.lossRoundStart && !rs.isAckingTLPRetransSeq {
		b.bwLatest = sampleBW
		b.inflightLatest = uint32(rs.delivered)
	}
}

// updateCongestionSignals follows bbr_update_congestion_signals.
func (b *bbr3) updateCongestionSignals(st *State, rs *rateSample, sampleBW uint32) {
	if rs.intervalUs <= 0 || rs.ackedSacked == 0 {
		return
	}
	if !rs.isAppLimited || sampleBW >= b.maxBW() {
		b.takeMaxBWSample(sampleBW)
	}
	b.lossInRound = b.lossInRound || rs.losses > 0
	if !b.lossRoundStart {
		return
	}
	b.adaptLowerBounds(st)
	b.lossInRound = false
	b.ecnInRound = false
}

// isRenoCoexistenceProbeTime follows bbr_is_reno_coexistence_probe_time:
// probe after as many rounds as a Reno flow with our BDP would, at most 63.
func (b *bbr3) isRenoCoexistenceProbeTime(st *State) bool {
	rounds := min(bbr3BWProbeMaxRounds, b.targetInflight(st))
	return b.roundsSinceProbe >= rounds
}

// pickProbeWait follows bbr_pick_probe_wait: 0-1 extra rounds, and 2 s
// plus up to 1 s of wall clock.
func (b *bbr3) pickProbeWait() {
	b.roundsSinceProbe = b.rng.Uint32N(bbr3BWProbeRandRounds)
	b.probeWaitUs = bbr3BWProbeBaseUs + b.rng.Uint32N(bbr3BWProbeRandUs)
}

// setCycleIdx follows bbr_set_cycle_idx.
func (b *bbr3) setCycleIdx(idx int) {
	b.cycleIdx = idx
	b.tryFastPath = false
}

// startBWProbeRefill follows bbr_start_bw_probe_refill.
func (b *bbr3) startBWProbeRefill(st *State, upRounds uint32) {
	b.resetLowerBounds()
	b.bwProbeUpRounds = upRounds & 0x1F // a 5-bit field
	b.bwProbeUpAcks = 0
	b.stoppedRiskyProbe = false
	b.ackPhase = bbrAcksRefilling
	b.nextRTTDelivered = st.Delivered
	b.setCycleIdx(bbrBWProbeRefill)
}

// startBWProbeUp follows bbr_start_bw_probe_up.
func (b *bbr3) startBWProbeUp(st *State, sampleBW uint32) {
	b.ackPhase = bbrAcksProbeStarting
	b.nextRTTDelivered = st.Delivered
	b.cycleMstamp = tcpMstamp(st)
	b.resetFullBW()
	b.fullBW = sampleBW
	b.setCycleIdx(bbrBWProbeUp)
	b.raiseInflightHiSlope(st)
}

// startBWProbeDown follows bbr_start_bw_probe_down.
func (b *bbr3) startBWProbeDown(st *State) {
	b.resetCongestionSignals()
	b.bwProbeUpCnt = unset32
	b.pickProbeWait()
	b.cycleMstamp = tcpMstamp(st)
	b.ackPhase = bbrAcksProbeStopping
	b.nextRTTDelivered = st.Delivered
	b.setCycleIdx(bbrBWProbeDown)
}

// startBWProbeCruise follows bbr_start_bw_probe_cruise.
func (b *bbr3) startBWProbeCruise() {
	if b.inflightLo != unset32 {
		b.inflightLo = min(b.inflightLo, b.inflightHi)
	}
	b.setCycleIdx(bbrBWProbeCruise)
}

// handleInflightTooHigh follows bbr_handle_inflight_too_high: once per
// probe, cut inflight_hi to max(tx_in_flight, target*(1-beta)).
func (b *bbr3) handleInflightTooHigh(st *State, rs *rateSample) {
	b.prevProbeTooHigh = true
	b.bwProbeSamples = false
	if !rs.isAppLimited {
		b.inflightHi = max(rs.txInFlight,
			uint32(uint64(b.targetInflight(st))*(bbrUnit-bbr3Beta)>>bbrScale))
	}
	if b.mode == bbrProbeBW && b.cycleIdx == bbrBWProbeUp {
		b.startBWProbeDown(st)
	}
}

// adaptUpperBounds follows bbr_adapt_upper_bounds; it reports whether it
// decided a state transition.
func (b *bbr3) adaptUpperBounds(st *State, rs *rateSample) bool {
	if b.ackPhase == bbrAcksProbeStarting && b.roundStart {
		b.ackPhase = bbrAcksProbeFeedback
	}
	if b.ackPhase == bbrAcksProbeStopping && b.roundStart {
		b.bwProbeSamples = false
		b.ackPhase = bbrAcksInit
		if b.mode == bbrProbeBW && !rs.isAppLimited {
			b.advanceMaxBWFilter()
		}
		if b.mode == bbrProbeBW && b.stoppedRiskyProbe && !b.prevProbeTooHigh {
			b.startBWProbeRefill(st, 0)
			return true
		}
	}
	if b.isInflightTooHigh(rs) {
		if b.bwProbeSamples {
			b.handleInflightTooHigh(st, rs)
		}
		return false
	}
	if b.inflightHi == unset32 {
		return false // no excess queue signals yet
	}
	if rs.txInFlight > b.inflightHi {
		b.inflightHi = rs.txInFlight // a higher level proved safe
	}
	if b.mode == bbrProbeBW && b.cycleIdx == bbrBWProbeUp {
		b.probeInflightHiUpward(st, rs)
	}
	return false
}

// checkTimeToProbeBW follows bbr_check_time_to_probe_bw.
func (b *bbr3) checkTimeToProbeBW(st *State) bool {
	if b.ecnEligible && b.ecnInCycle && !b.lossInCycle && st.CA == CAOpen {
		// ECN marks but no loss: re-probe quickly once they stop, starting
		// at a growth of about inflight_hi*ecn_reprobe_gain.
		n := uint32(bits.Len64(uint64(b.inflightHi)*bbr3ECNReprobeGain>>bbrScale)) - 1
		b.startBWProbeRefill(st, n)
		return true
	}
	if b.hasElapsedInPhase(st, b.probeWaitUs) || b.isRenoCoexistenceProbeTime(st) {
		b.startBWProbeRefill(st, 0)
		return true
	}
	return false
}

// checkTimeToCruise follows bbr_check_time_to_cruise.
func (b *bbr3) checkTimeToCruise(st *State, inflight, bw uint32) bool {
	if inflight > b.inflightWithHeadroom() {
		return false
	}
	return inflight <= b.inflight(st, bw, bbrUnit)
}

// updateCyclePhase follows the v3 bbr_update_cycle_phase: the PROBE_BW
// state machine.
func (b *bbr3) updateCyclePhase(st *State, rs *rateSample, sampleBW uint32) {
	if !b.fullBWReached {
		return
	}
	if b.adaptUpperBounds(st, rs) {
		return
	}
	if b.mode != bbrProbeBW {
		return
	}
	inflight := b.inNetAtEDT(st, rs.priorInFlight)
	bw := b.maxBW()
	switch b.cycleIdx {
	case bbrBWProbeCruise:
		b.checkTimeToProbeBW(st)
	case bbrBWProbeRefill:
		if b.roundStart {
			// A round of REFILL: samples now reflect the refilled pipe.
			b.bwProbeSamples = true
			b.startBWProbeUp(st, sampleBW)
		}
	case bbrBWProbeUp:
		done := false
		if b.prevProbeTooHigh && inflight >= b.inflightHi {
			b.stoppedRiskyProbe = true
			done = true
		} else if st.CwndLimited && st.CwndPkts >= b.inflightHi {
			b.resetFullBW() // inflight_hi limits bw growth
			b.fullBW = sampleBW
		} else if b.fullBWNow {
			done = true // bw plateau: pipe looks full
		}
		if done {
			b.prevProbeTooHigh = false
			b.startBWProbeDown(st)
		}
	case bbrBWProbeDown:
		if b.checkTimeToProbeBW(st) {
			return
		}
		if b.checkTimeToCruise(st, inflight, bw) {
			b.startBWProbeCruise()
		}
	}
}

// exitProbeRTT follows bbr_exit_probe_rtt.
func (b *bbr3) exitProbeRTT(st *State) {
	b.resetLowerBounds()
	if b.fullBWReached {
		b.mode = bbrProbeBW
		// Schedule the next probe for a friendly, randomized time, and
		// cruise: inflight is below the BDP after PROBE_RTT.
		b.startBWProbeDown(st)
		b.startBWProbeCruise()
	} else {
		b.mode = bbrStartup
	}
}

// checkLossTooHighInStartup follows bbr_check_loss_too_high_in_startup.
func (b *bbr3) checkLossTooHighInStartup(st *State, rs *rateSample) {
	if b.fullBWReached {
		return
	}
	if rs.losses > 0 && b.lossEventsInRound < 0xf {
		b.lossEventsInRound++
	}
	if b.lossRoundStart && st.CA == CARecovery &&
		b.lossEventsInRound >= bbr3FullLossCnt && b.isInflightTooHigh(rs) {
		b.handleQueueTooHighInStartup(st)
		return
	}
	if b.lossRoundStart {
		b.lossEventsInRound = 0
	}
}

// checkFullBWReached follows the v3 bbr_check_full_bw_reached.
func (b *bbr3) checkFullBWReached(rs *rateSample, sampleBW uint32) {
	if b.fullBWNow || rs.isAppLimited {
		return
	}
	thresh := uint32(uint64(b.fullBW) * bbrFullBWThresh >> bbrScale)
	if sampleBW >= thresh {
		b.resetFullBW()
		b.fullBW = sampleBW
		return
	}
	if !b.roundStart {
		return
	}
	b.fullBWCnt++
	b.fullBWNow = b.fullBWCnt >= bbrFullBWCnt
	b.fullBWReached = b.fullBWReached || b.fullBWNow
}

// checkDrain follows the v3 bbr_check_drain.
func (b *bbr3) checkDrain(st *State) {
	if b.mode == bbrStartup && b.fullBWReached {
		b.mode = bbrDrain
		st.SSThreshPkts = b.inflight(st, b.maxBW(), bbrUnit)
		b.resetCongestionSignals()
	}
	if b.mode == bbrDrain && b.inNetAtEDT(st, st.InFlightPkts) <= b.inflight(st, b.maxBW(), bbrUnit) {
		b.mode = bbrProbeBW
		b.startBWProbeDown(st)
	}
}

// updateModel follows the v3 bbr_update_model.
func (b *bbr3) updateModel(st *State, rs *rateSample, sampleBW uint32) {
	b.updateCongestionSignals(st, rs, sampleBW)
	b.updateAckAggregation(st, rs)
	b.checkLossTooHighInStartup(st, rs)
	b.checkFullBWReached(rs, sampleBW)
	b.checkDrain(st)
	b.updateCyclePhase(st, rs, sampleBW)
	b.updateMinRTT(st, rs)
}

// runFastPath follows bbr_run_fast_path: when app-limited with no new
// information, skip the model update; it reports whether the control
// update can be skipped too, and whether the model must be updated.
func (b *bbr3) runFastPath(st *State, rs *rateSample, sampleBW uint32) (skipAll, updateModel bool) {
	if !bbr3FastPath || !b.tryFastPath || !rs.isAppLimited || sampleBW >= b.maxBW() ||
		b.lossInRound || b.ecnInRound {
		return false, true
	}
	prevMode, prevMinRTT := b.mode, b.minRTTUs
	b.checkDrain(st)
	b.updateCyclePhase(st, rs, sampleBW)
	b.updateMinRTT(st, rs)
	if b.mode == prevMode && b.minRTTUs == prevMinRTT && b.tryFastPath {
		return true, false
	}
	return false, false
}

// CongControl follows the v3 bbr_main.
func (b *bbr3) CongControl(st *State, r *RateSample) {
	rs := kernelSample(r)
	b.updateRoundStart(st, &rs)
	if b.roundStart {
		b.roundsSinceProbe = min(b.roundsSinceProbe+1, 0xFF)
		b.updateECNAlpha(st)
	}
	if b.rtprop != nil {
		b.rtprop.sample(st, &rs, b.minRTTUs)
	}
	b.ecnInRound = b.ecnInRound || (b.ecnEligible && rs.isECE)
	sampleBW := calculateBWSample(&rs)
	b.updateLatestDeliverySignals(st, &rs, sampleBW)
	skipAll, updateModel := b.runFastPath(st, &rs, sampleBW)
	if !skipAll {
		if updateModel {
			b.updateModel(st, &rs, sampleBW)
		}
		b.updateGains()
		bw := b.bwEst()
		b.setPacingRate(st, bw, b.pacingGain)
		b.setCwnd(st, rs.ackedSacked, bw, b.cwndGain)
		b.boundCwndForInflightModel(st)
	}
	b.advanceLatestDeliverySignals(&rs, sampleBW)
	b.prevCAState = st.CA
	b.lossInCycle = b.lossInCycle || rs.lost > 0
	b.ecnInCycle = b.ecnInCycle || rs.deliveredCE > 0
	b.publish(st)
}

// Init follows the v3 bbr_init.
func (b *bbr3) Init(st *State) {
	b.defineSignals(st)
	b.initCwnd = min(0x7F, st.CwndPkts)
	b.priorCwnd = st.PriorCwndPkts
	st.SSThreshPkts = tcpInfiniteSSThresh
	b.nextRTTDelivered = st.Delivered
	b.prevCAState = CAOpen
	b.probeRTTDoneStamp = 0
	b.probeRTTRoundDone = false
	b.probeRTTMinUs = tcpMinRTTUs(st)
	b.probeRTTMinStamp = tcpJiffies32(st)
	b.minRTTUs = tcpMinRTTUs(st)
	b.minRTTStamp = tcpJiffies32(st)
	b.hasSeenRTT = false
	b.initPacingRateFromRTT(st)
	b.roundStart = false
	b.idleRestart = false
	b.fullBWReached = false
	b.fullBW = 0
	b.fullBWCnt = 0
	b.cycleMstamp = 0
	b.cycleIdx = 0
	b.mode = bbrStartup
	b.ackEpochMstamp = tcpMstamp(st)
	b.ackEpochAcked = 0
	b.extraAckedWinRTTs = 0
	b.extraAckedWinIdx = 0
	b.extraAcked = [2]uint16{}
	b.tryFastPath = false
	// Start sampling the CE rate after the first full flight is ACKed.
	b.lossRoundDelivered = st.Delivered + 1
	b.lossRoundStart = false
	b.undoBWLo, b.undoInflightLo, b.undoInflightHi = 0, 0, 0
	b.lossEventsInRound = 0
	b.startupECNRounds = 0
	b.resetCongestionSignals()
	b.bwLo = unset32
	b.bwHi = [2]uint32{}
	b.inflightLo = unset32
	b.inflightHi = unset32
	b.resetFullBW()
	b.bwProbeUpCnt = unset32
	b.bwProbeUpAcks = 0
	b.bwProbeUpRounds = 0
	b.probeWaitUs = 0
	b.stoppedRiskyProbe = false
	b.ackPhase = bbrAcksInit
	b.roundsSinceProbe = 0
	b.bwProbeSamples = false
	b.prevProbeTooHigh = false
	b.ecnEligible = false
	b.ecnAlpha = bbr3ECNAlphaInit
	b.alphaLastDelivered = 0
	b.alphaLastDelivCE = 0
	// The kernel sets the gains on the first ACK; setting them now changes
	// nothing it computes and gives the signals their values.
	b.updateGains()
	b.publish(st)
}

// noteLoss follows bbr_note_loss: the first loss of a round starts a loss
// round covering the data in flight.
func (b *bbr3) noteLoss(st *State) {
	if !b.lossInRound {
		b.lossRoundDelivered = st.Delivered
	}
	b.lossInRound = true
	b.lossInCycle = true
}

// SkbMarkedLost follows bbr_skb_marked_lost: while probing, check whether
// the flight up to this lost packet had too much loss and, if so, cut
// inflight_hi to the level where the loss rate crossed 2%.
func (b *bbr3) SkbMarkedLost(st *State, p LostPacket) {
	b.noteLoss(st)
	if !b.bwProbeSamples {
		return // not sent while probing for bandwidth
	}
	rs := rateSample{
		txInFlight:   p.TxInFlight,
		lost:         st.Lost - p.TxLost,
		isAppLimited: p.TxAppLimited,
	}
	if b.isInflightTooHigh(&rs) {
		rs.txInFlight = inflightHiFromLostSkb(&rs, p.PCount)
		b.handleInflightTooHigh(st, &rs)
	}
	b.publish(st)
}

// UndoCwnd follows the v3 bbr_undo_cwnd: revert the short-term model to
// before the spurious loss episode.
func (b *bbr3) UndoCwnd(st *State) uint32 {
	b.resetFullBW()
	b.lossInRound = false
	b.bwLo = max(b.bwLo, b.undoBWLo)
	b.inflightLo = max(b.inflightLo, b.undoInflightLo)
	b.inflightHi = max(b.inflightHi, b.undoInflightHi)
	b.tryFastPath = false
	b.publish(st)
	return b.priorCwnd
}

// SSThresh follows the v3 bbr_ssthresh: save cwnd and the loss-adapted
// bounds for undo; ssthresh is returned unchanged.
func (b *bbr3) SSThresh(st *State) uint32 {
	b.saveCwnd(st)
	b.undoBWLo = b.bwLo
	b.undoInflightLo = b.inflightLo
	b.undoInflightHi = b.inflightHi
	return st.SSThreshPkts
}

// CongAvoid is never called for a CongController; BBR has no cong_avoid.
func (b *bbr3) CongAvoid(*State, uint32) {}

// SetState follows the v3 bbr_set_state.
func (b *bbr3) SetState(st *State, newState CAState) {
	if newState == CALoss {
		b.prevCAState = CALoss
		b.resetFullBW()
		if !b.isProbingBandwidth() && b.inflightLo == unset32 {
			// adapt_lower_bounds needs the cwnd from before the RTO.
			b.inflightLo = max(st.CwndPkts, b.priorCwnd)
		}
	} else if b.prevCAState == CALoss {
		st.CwndPkts = max(st.CwndPkts, b.priorCwnd) // bbr_exit_loss_recovery
		b.tryFastPath = false
	}
	b.publish(st)
}

func (b *bbr3) defineSignals(st *State) {
	s := st.Signals
	b.sig = bbr3Signals{
		bw:            s.Define("bw", "bps", "bandwidth used for pacing: min(max_bw, bw_lo)"),
		maxBW:         s.Define("max_bw", "bps", "max of bw_hi over the last 1-2 PROBE_BW cycles"),
		bwHi:          s.Define("bw_hi", "bps", "max bw sample in the current PROBE_BW cycle (bw_hi[1])"),
		bwLo:          s.Define("bw_lo", "bps", "short-term lower bound on bw; +Inf when unset"),
		inflightHi:    s.Define("inflight_hi", "pkts", "long-term upper bound on inflight; +Inf when unset"),
		inflightLo:    s.Define("inflight_lo", "pkts", "short-term lower bound on inflight; +Inf when unset"),
		mode:          s.Define("mode", "enum", "0 startup, 1 drain, 2 probe_bw, 3 probe_rtt"),
		phase:         s.Define("probe_bw_phase", "enum", "0 up, 1 down, 2 cruise, 3 refill"),
		ecnAlpha:      s.Define("ecn_alpha", "ratio", "EWMA of the CE-marked fraction of delivered packets"),
		lossInRound:   s.Define("loss_in_round", "bool", "loss marked in this round trip"),
		ecnInRound:    s.Define("ecn_in_round", "bool", "ECE seen in this round trip"),
		minRTT:        s.Define("min_rtt", "us", "windowed min RTT (10 s, refreshed by the 5 s PROBE_RTT filter)"),
		pacingGain:    s.Define("pacing_gain", "ratio", "pacing gain"),
		cwndGain:      s.Define("cwnd_gain", "ratio", "cwnd gain"),
		fullBWReached: s.Define("full_bw_reached", "bool", "STARTUP has filled the pipe"),
	}
}

// boundSignal maps an unset (~0U) bound to +Inf.
func boundSignal(v uint32, scale func(uint32) float64) float64 {
	if v == unset32 {
		return math.Inf(1)
	}
	return scale(v)
}

func (b *bbr3) publish(st *State) {
	s, id := st.Signals, &b.sig
	bps := func(v uint32) float64 { return bwToBps(st, v) }
	pkts := func(v uint32) float64 { return float64(v) }
	s.Set(id.bw, bps(b.bwEst()))
	s.Set(id.maxBW, bps(b.maxBW()))
	s.Set(id.bwHi, bps(b.bwHi[1]))
	s.Set(id.bwLo, boundSignal(b.bwLo, bps))
	s.Set(id.inflightHi, boundSignal(b.inflightHi, pkts))
	s.Set(id.inflightLo, boundSignal(b.inflightLo, pkts))
	s.Set(id.mode, float64(b.mode))
	s.Set(id.phase, float64(b.cycleIdx))
	s.Set(id.ecnAlpha, gainRatio(b.ecnAlpha))
	s.Set(id.lossInRound, boolSignal(b.lossInRound))
	s.Set(id.ecnInRound, boolSignal(b.ecnInRound))
	if b.minRTTUs != noMinRTT {
		s.Set(id.minRTT, float64(b.minRTTUs))
	}
	s.Set(id.pacingGain, gainRatio(b.pacingGain))
	s.Set(id.cwndGain, gainRatio(b.cwndGain))
	s.Set(id.fullBWReached, boolSignal(b.fullBWReached))
}
