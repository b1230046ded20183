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
// which belongs to the receiver) and tp->fast_ack_mode.

package cc

import (
	"math"
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
	bbr3LossProbeRecovery = true               // slow down for a loss a TLP repaired
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
	// sample sees each ACK's RTT sample (rs->rtt_us, negative when none)
	// after bbr_main's round update. It takes the value, not the sample,
	// so the sample does not escape to the heap on every ACK.
	sample(st *State, rttUs int64, minRTTUs uint32)
	// bdpRTTUs returns the RTT, in us, that bbr_bdp multiplies bw by.
	bdpRTTUs(minRTTUs uint32) uint32
}

// bbr3 is struct bbr of the google/bbr v3 branch.
type bbr3 struct {
	bbrCore
	rng    *rand.Rand
	rtprop rtpropHook // nil: BDP from min_rtt, as the kernel

	probeRTTMinUs    uint32 // min RTT in probe_rtt_win_ms window
	probeRTTMinStamp uint32

	bwProbeUpRounds uint32 // 5-bit field
	tryFastPath     bool
	initCwnd        uint32
	cycleIdx        int

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

// bbr3RateBytesPerSec follows the v3 bbr_rate_bytes_per_sec, which never
// returns 0.
func bbr3RateBytesPerSec(st *State, rate uint64, gain uint32, marginPct uint64) uint64 {
	return max(bbrRateBytesPerSec(st, rate, gain, marginPct), 1)
}

// setPacingRate follows bbr_set_pacing_rate, with the v3
// bbr_rate_bytes_per_sec and the STARTUP pacing gain for
// bbr_init_pacing_rate_from_rtt.
func (b *bbr3) setPacingRate(st *State, bw, gain uint32) {
	b.bbrCore.setPacingRate(st, bbr3RateBytesPerSec, bw, gain, bbr3StartupPacingGain)
}

// tsoSegsGeneric follows bbr_tso_segs_generic: ~1 ms at the pacing rate
// plus an allowance of 64 KB halved per 512 us of min_rtt.
func (b *bbr3) tsoSegsGeneric(st *State, mss units.Bytes, gsoMaxSize uint64) uint32 {
	bytes := pacingBytesPerSec(st) >> skPacingShift
	if r := b.minRTTUs >> bbr3TSORTTShift; r < 32 {
		bytes += GSOLegacyMaxSize >> r
	}
	capped := min(uint32(bytes), uint32(gsoMaxSize-1-MaxTCPHeader)) // min_t(u32, ...) cuts bytes first
	return max(capped/uint32(mss), sysctlTCPMinTSOSegs)
}

// TSOSegs follows bbr_tso_segs, further capped by State.GSOMaxSegs when set.
// It passes sk_gso_max_size, which already has MAX_TCP_HEADER + 1 taken off,
// and the generic form takes it off again (a cap of 44 segments of 1448 B,
// where bbr_tso_segs_goal's GSO_LEGACY_MAX_SIZE gives 45).
func (b *bbr3) TSOSegs(st *State, mss units.Bytes) uint32 {
	segs := b.tsoSegsGeneric(st, mss, SKGSOMaxSize)
	if st.GSOMaxSegs > 0 {
		segs = min(segs, st.GSOMaxSegs)
	}
	return segs
}

func (b *bbr3) tsoSegsGoal(st *State) uint32 {
	return b.tsoSegsGeneric(st, st.MSS, GSOLegacyMaxSize)
}

// CwndEvent follows bbr_cwnd_event for CA_EVENT_TX_START and, as the v3
// branch with bbr_loss_probe_recovery on, CA_EVENT_TLP_RECOVERY.
func (b *bbr3) CwndEvent(st *State, ev Event) {
	if ev == EventTLPRecovery {
		if bbr3LossProbeRecovery {
			b.runLossProbeRecovery(st)
			b.publish(st)
		}
		return
	}
	b.cwndEvent(b, st, ev)
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
	return bbrBDP(bw, b.bdpRTTUs(), gain)
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

// ackAggregationCwnd follows the v3 bbr_ack_aggregation_cwnd, which
// applies before the pipe is full too.
func (b *bbr3) ackAggregationCwnd() uint32 {
	return b.bbrCore.ackAggregationCwnd(b.bwEst())
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
	winRTTs := uint32(bbr3ExtraAckedWinRTTs)
	if !b.fullBWReached {
		winRTTs = 1
	}
	b.bbrCore.updateAckAggregation(st, rs, winRTTs, b.bwEst())
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
	probeRTTExpired := after32(now, b.probeRTTMinStamp+msecsToJiffies(st, bbr3ProbeRTTWinMs))
	if rs.rttUs >= 0 && (rs.rttUs < int64(b.probeRTTMinUs) || (probeRTTExpired && !rs.isAckDelayed)) {
		b.probeRTTMinUs = uint32(rs.rttUs)
		b.probeRTTMinStamp = now
	}
	minRTTExpired := after32(now, b.minRTTStamp+bbrMinRTTWinSec*hz(st))
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
		b.probeRTTStep(b, st, now, b.probeRTTCwnd())
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
		b.rtprop.sample(st, rs.rttUs, b.minRTTUs)
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
	// cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED):
	// BBR's model assumes paced sending.
	st.Paced = true
	b.initCwnd = min(0x7F, st.CwndPkts)
	b.priorCwnd = st.PriorCwndPkts
	st.SSThreshPkts = InfiniteSSThresh
	b.nextRTTDelivered = st.Delivered
	b.prevCAState = CAOpen
	b.probeRTTDoneStamp = 0
	b.probeRTTRoundDone = false
	b.probeRTTMinUs = tcpMinRTTUs(st)
	b.probeRTTMinStamp = tcpJiffies32(st)
	b.minRTTUs = tcpMinRTTUs(st)
	b.minRTTStamp = tcpJiffies32(st)
	b.hasSeenRTT = false
	b.initPacingRateFromRTT(st, bbr3RateBytesPerSec, bbr3StartupPacingGain)
	b.roundStart = false
	b.idleRestart = false
	b.fullBWReached = false
	b.fullBW = 0
	b.fullBWCnt = 0
	b.cycleMstamp = 0
	b.cycleIdx = 0
	b.mode = bbrStartup
	b.resetAckAggregation(st)
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
