// BBRv1, ported from mainline Linux net/ipv4/tcp_bbr.c (the v5.1+ shape:
// bbr_update_gains, the 1% pacing margin, bbr_packets_in_net_at_edt, the
// PROBE_UP-only quantization bump). On each ACK the model is updated:
//
//	bottleneck_bandwidth = windowed_max(delivered / elapsed, 10 round trips)
//	min_rtt = windowed_min(rtt, 10 seconds)
//	pacing_rate = pacing_gain * bottleneck_bandwidth
//	cwnd = max(cwnd_gain * bottleneck_bandwidth * min_rtt, 4)
//
// and the STARTUP → DRAIN → PROBE_BW ⇄ PROBE_RTT state machine runs. Units
// follow the kernel: bandwidth in packets/us << 24, gains << 8, min_rtt in
// us, PROBE_RTT timing in jiffies (State.HZ).

package cc

import "math/rand/v2"

const (
	bbrCycleLen = 8 // CYCLE_LEN: phases in a pacing gain cycle

	bbrBWRTTs          = bbrCycleLen + 2 // bw max-filter window, in rounds
	bbrMinRTTWinSec    = 10              // min_rtt filter window, seconds
	bbrProbeRTTModeMs  = 200             // minimum time at min cwnd in PROBE_RTT
	bbrMinTSORate      = 1200000         // skip TSO below this rate, bits/s
	bbrPacingMarginPct = 1               // pace ~1% below the estimated bw

	// bbrHighGain is 2/ln(2), the smallest gain that doubles the sending
	// rate each round: 256*2885/1000 + 1 = 739.
	bbrHighGain = bbrUnit*2885/1000 + 1
	// bbrDrainGain is 1/high_gain, draining STARTUP's queue in one round:
	// 256*1000/2885 = 88.
	bbrDrainGain = bbrUnit * 1000 / 2885
	// bbrCwndGain is the steady-state cwnd gain, 2.0.
	bbrCwndGain = bbrUnit * 2
	// bbrCycleRand randomises the starting gain-cycle phase over 7 phases.
	bbrCycleRand = 7
	// bbrCwndMinTarget keeps 4 packets in flight (two delayed-ACK pairs).
	bbrCwndMinTarget = 4

	bbrFullBWThresh = bbrUnit * 5 / 4 // 25% bw growth means more bw
	bbrFullBWCnt    = 3               // rounds without growth: pipe full

	bbrLTIntvlMinRTTs = 4           // min rounds in a long-term interval
	bbrLTLossThresh   = 50          // lost/delivered >= 50/256 is lossy
	bbrLTBWRatio      = bbrUnit / 8 // bw within 1/8 is consistent
	bbrLTBWDiff       = 4000 / 8    // or within 4 kbit/s (bytes/s)
	bbrLTBWMaxRTTs    = 48          // use lt_bw for this many rounds

	bbrExtraAckedGain         = bbrUnit // gain on extra_acked for cwnd
	bbrExtraAckedWinRTTs      = 5       // extra_acked window, rounds
	bbrAckEpochAckedResetThr  = 1 << 20 // reset the epoch beyond this
	bbrExtraAckedMaxUs        = 100 * 1000
	bbrAckEpochAckedFieldMax  = 0xFFFFF // ack_epoch_acked is a 20-bit field
	bbrExtraAckedWinRTTsField = 0x1F    // extra_acked_win_rtts is 5 bits
)

// bbrPacingGain is the PROBE_BW gain cycle: probe at 5/4, drain at 3/4,
// cruise at 1.0 for six phases.
var bbrPacingGain = [bbrCycleLen]uint32{
	bbrUnit * 5 / 4, bbrUnit * 3 / 4,
	bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit,
}

func init() { Register("bbr", func() Algorithm { return newBBR1() }) }

// bbr1 is struct bbr of mainline tcp_bbr.c.
type bbr1 struct {
	bbrCore
	rng *rand.Rand

	bw     Minmax[uint32] // max recent delivery rate, pkts/us << 24
	rttCnt uint32         // packet-timed rounds elapsed

	packetConservation bool
	ltIsSampling       bool
	ltRTTCnt           uint32
	ltUseBW            bool

	ltBW            uint32 // long-term delivery rate, pkts/us << 24
	ltLastDelivered uint32
	ltLastStamp     uint32 // ms
	ltLastLost      uint32

	cycleIdx uint32

	targetCwnd uint32 // last target_cwnd computed, for the signal
	sig        bbr1Signals
}

type bbr1Signals struct {
	bw, minRTT, mode, pacingGain, cwndGain, cycleIdx, fullBW, fullBWCnt,
	ltBW, ltUseBW, roundStart, packetConservation, targetCwnd SignalID
}

func newBBR1() *bbr1 { return &bbr1{rng: newUnseededRand()} }

// Name returns "bbr".
func (b *bbr1) Name() string { return "bbr" }

// Seed sets the stream bbr_reset_probe_bw_mode draws its phase from.
func (b *bbr1) Seed(r *rand.Rand) { b.rng = r }

func (b *bbr1) maxBW() uint32 { return b.bw.Get() }

// bwEst follows bbr_bw: the long-term (policed) rate when in use.
func (b *bbr1) bwEst() uint32 {
	if b.ltUseBW {
		return b.ltBW
	}
	return b.maxBW()
}

// bbrRateBytesPerSec follows bbr_rate_bytes_per_sec: rate (pkts/us << 24)
// times gain, in bytes/s, less the pacing margin. The operation order is the
// kernel's, chosen to avoid u64 overflow.
func bbrRateBytesPerSec(st *State, rate uint64, gain uint32, marginPct uint64) uint64 {
	rate *= uint64(st.MSS)
	rate *= uint64(gain)
	rate >>= bbrScale
	rate *= 1_000_000 / 100 * (100 - marginPct)
	return rate >> bwScale
}

// setPacingRate follows bbr_set_pacing_rate, with v1's
// bbr_rate_bytes_per_sec and high_gain for bbr_init_pacing_rate_from_rtt.
func (b *bbr1) setPacingRate(st *State, bw, gain uint32) {
	b.bbrCore.setPacingRate(st, bbrRateBytesPerSec, bw, gain, bbrHighGain)
}

// MinTSOSegs follows bbr_min_tso_segs.
func (b *bbr1) MinTSOSegs(st *State) uint32 {
	if pacingBytesPerSec(st) < bbrMinTSORate>>3 {
		return 1
	}
	return 2
}

// tsoSegsGoal follows bbr_tso_segs_goal: about 1 ms of data at the pacing
// rate, ignoring the driver's GSO size.
func (b *bbr1) tsoSegsGoal(st *State) uint32 {
	bytes := min(pacingBytesPerSec(st)>>skPacingShift, GSOLegacyMaxSize-1-MaxTCPHeader)
	segs := max(uint32(bytes/uint64(st.MSS)), b.MinTSOSegs(st))
	return min(segs, 0x7F)
}

// CwndEvent follows bbr_cwnd_event: on restart from idle while
// app-limited, pace at the estimated bw instead of probing.
func (b *bbr1) CwndEvent(st *State, ev Event) { b.cwndEvent(b, st, ev) }

// bdp follows bbr_bdp: ceil(bw * min_rtt * gain) in packets.
func (b *bbr1) bdp(bw, gain uint32) uint32 {
	if b.minRTTUs == noMinRTT {
		return InitCwnd // no valid RTT sample yet
	}
	return bbrBDP(bw, b.minRTTUs, gain)
}

// quantizationBudget follows bbr_quantization_budget: room for three TSO
// bursts, an even cwnd, and +2 while probing so small BDPs still probe.
func (b *bbr1) quantizationBudget(st *State, cwnd uint32) uint32 {
	cwnd += 3 * b.tsoSegsGoal(st)
	cwnd = (cwnd + 1) &^ 1
	if b.mode == bbrProbeBW && b.cycleIdx == 0 {
		cwnd += 2
	}
	return cwnd
}

// inflight follows bbr_inflight.
func (b *bbr1) inflight(st *State, bw, gain uint32) uint32 {
	return b.quantizationBudget(st, b.bdp(bw, gain))
}

// packetsInNetAtEDT follows bbr_packets_in_net_at_edt: inflight at the
// next departure time, less what the path delivers until then.
func packetsInNetAtEDT(st *State, inflightNow, bw, pacingGain, tsoGoal uint32) uint32 {
	edt := max(st.NextDepartureTime, st.Now)
	intervalUs := uint64((edt - st.Now) / 1_000_000) // ps to us
	intervalDelivered := uint32(uint64(bw) * intervalUs >> bwScale)
	inflightAtEDT := inflightNow
	if pacingGain > bbrUnit {
		inflightAtEDT += tsoGoal // include the EDT skb
	}
	if intervalDelivered >= inflightAtEDT {
		return 0
	}
	return inflightAtEDT - intervalDelivered
}

func (b *bbr1) inNetAtEDT(st *State, inflightNow uint32) uint32 {
	return packetsInNetAtEDT(st, inflightNow, b.bwEst(), b.pacingGain, b.tsoSegsGoal(st))
}

// ackAggregationCwnd follows bbr_ack_aggregation_cwnd: none until the
// pipe is full.
func (b *bbr1) ackAggregationCwnd() uint32 {
	if !b.fullBWReached {
		return 0
	}
	return b.bbrCore.ackAggregationCwnd(b.bwEst())
}

// setCwndToRecoverOrRestore follows bbr_set_cwnd_to_recover_or_restore:
// packet conservation in the first round of recovery, restore on exit.
func (b *bbr1) setCwndToRecoverOrRestore(st *State, rs *rateSample, acked uint32) (uint32, bool) {
	prev, state := b.prevCAState, st.CA
	cwnd := st.CwndPkts
	if rs.losses > 0 {
		cwnd = uint32(max(int32(cwnd-rs.losses), 1))
	}
	if state == CARecovery && prev != CARecovery {
		b.packetConservation = true
		b.nextRTTDelivered = st.Delivered // start round now
		cwnd = st.InFlightPkts + acked
	} else if prev >= CARecovery && state < CARecovery {
		cwnd = max(cwnd, b.priorCwnd)
		b.packetConservation = false
	}
	b.prevCAState = state
	if b.packetConservation {
		return max(cwnd, st.InFlightPkts+acked), true
	}
	return cwnd, false
}

// setCwnd follows bbr_set_cwnd: slow-start toward the target, or snap down
// to it once the pipe has been filled.
func (b *bbr1) setCwnd(st *State, rs *rateSample, acked, bw, gain uint32) {
	cwnd := st.CwndPkts
	if acked > 0 {
		var conserving bool
		cwnd, conserving = b.setCwndToRecoverOrRestore(st, rs, acked)
		if !conserving {
			target := b.bdp(bw, gain)
			target += b.ackAggregationCwnd()
			target = b.quantizationBudget(st, target)
			b.targetCwnd = target
			if b.fullBWReached {
				cwnd = min(cwnd+acked, target)
			} else if cwnd < target || st.Delivered < InitCwnd {
				cwnd += acked
			}
			cwnd = max(cwnd, bbrCwndMinTarget)
		}
	}
	st.CwndPkts = min(cwnd, st.CwndClampPkts)
	if b.mode == bbrProbeRTT {
		st.CwndPkts = min(st.CwndPkts, bbrCwndMinTarget)
	}
}

// isNextCyclePhase follows bbr_is_next_cycle_phase.
func (b *bbr1) isNextCyclePhase(st *State, rs *rateSample) bool {
	isFullLength := stampUsDelta(deliveredMstamp(st), b.cycleMstamp) > b.minRTTUs
	if b.pacingGain == bbrUnit {
		return isFullLength
	}
	inflight := b.inNetAtEDT(st, rs.priorInFlight)
	bw := b.maxBW()
	if b.pacingGain > bbrUnit {
		// Probe until inflight reaches pacing_gain*BDP, unless losses say
		// the buffer cannot hold that much.
		return isFullLength && (rs.losses > 0 || inflight >= b.inflight(st, bw, b.pacingGain))
	}
	return isFullLength || inflight <= b.inflight(st, bw, bbrUnit)
}

// advanceCyclePhase follows bbr_advance_cycle_phase.
func (b *bbr1) advanceCyclePhase(st *State) {
	b.cycleIdx = (b.cycleIdx + 1) & (bbrCycleLen - 1)
	b.cycleMstamp = deliveredMstamp(st)
}

// updateCyclePhase follows bbr_update_cycle_phase.
func (b *bbr1) updateCyclePhase(st *State, rs *rateSample) {
	if b.mode == bbrProbeBW && b.isNextCyclePhase(st, rs) {
		b.advanceCyclePhase(st)
	}
}

// resetProbeBWMode follows bbr_reset_probe_bw_mode: start the gain cycle
// at a random phase other than the 3/4 drain phase.
func (b *bbr1) resetProbeBWMode(st *State) {
	b.mode = bbrProbeBW
	b.cycleIdx = bbrCycleLen - 1 - b.rng.Uint32N(bbrCycleRand)
	b.advanceCyclePhase(st)
}

// resetMode follows bbr_reset_mode.
func (b *bbr1) resetMode(st *State) {
	if !b.fullBWReached {
		b.mode = bbrStartup
	} else {
		b.resetProbeBWMode(st)
	}
}

// resetLTBWSamplingInterval follows bbr_reset_lt_bw_sampling_interval.
func (b *bbr1) resetLTBWSamplingInterval(st *State) {
	b.ltLastStamp = uint32(deliveredMstamp(st) / 1000)
	b.ltLastDelivered = st.Delivered
	b.ltLastLost = st.Lost
	b.ltRTTCnt = 0
}

// resetLTBWSampling follows bbr_reset_lt_bw_sampling.
func (b *bbr1) resetLTBWSampling(st *State) {
	b.ltBW = 0
	b.ltUseBW = false
	b.ltIsSampling = false
	b.resetLTBWSamplingInterval(st)
}

// ltBWIntervalDone follows bbr_lt_bw_interval_done: two consecutive lossy
// intervals with consistent bw mean a policer; use their average.
func (b *bbr1) ltBWIntervalDone(st *State, bw uint32) {
	if b.ltBW != 0 {
		d := int32(bw - b.ltBW) // the kernel's abs() of a u32 difference
		diff := uint32(max(d, -d))
		if diff*bbrUnit <= bbrLTBWRatio*b.ltBW ||
			bbrRateBytesPerSec(st, uint64(diff), bbrUnit, bbrPacingMarginPct) <= bbrLTBWDiff {
			b.ltBW = (bw + b.ltBW) >> 1
			b.ltUseBW = true
			b.pacingGain = bbrUnit // try to avoid drops
			b.ltRTTCnt = 0
			return
		}
	}
	b.ltBW = bw
	b.resetLTBWSamplingInterval(st)
}

// ltBWSampling follows bbr_lt_bw_sampling: detect token-bucket policers.
func (b *bbr1) ltBWSampling(st *State, rs *rateSample) {
	if b.ltUseBW {
		if b.mode == bbrProbeBW && b.roundStart {
			b.ltRTTCnt++
			if b.ltRTTCnt >= bbrLTBWMaxRTTs {
				b.resetLTBWSampling(st)
				b.resetProbeBWMode(st)
			}
		}
		return
	}
	// Start at the first loss, once the policer has exhausted its tokens.
	if !b.ltIsSampling {
		if rs.losses == 0 {
			return
		}
		b.resetLTBWSamplingInterval(st)
		b.ltIsSampling = true
	}
	if rs.isAppLimited {
		b.resetLTBWSampling(st)
		return
	}
	if b.roundStart {
		b.ltRTTCnt = (b.ltRTTCnt + 1) & 0x7F // a 7-bit field
	}
	if b.ltRTTCnt < bbrLTIntvlMinRTTs {
		return
	}
	if b.ltRTTCnt > 4*bbrLTIntvlMinRTTs {
		b.resetLTBWSampling(st)
		return
	}
	if rs.losses == 0 {
		return // end the interval on a loss
	}
	lost := st.Lost - b.ltLastLost
	delivered := st.Delivered - b.ltLastDelivered
	if delivered == 0 || lost<<bbrScale < bbrLTLossThresh*delivered {
		return
	}
	t := uint32(deliveredMstamp(st)/1000) - b.ltLastStamp
	if int32(t) < 1 {
		return // less than one ms
	}
	if t >= ^uint32(0)/1000 {
		b.resetLTBWSampling(st)
		return
	}
	t *= 1000
	bw := uint64(delivered) * bwUnit / uint64(t)
	b.ltBWIntervalDone(st, uint32(bw))
}

// updateBW follows bbr_update_bw: count rounds and feed the max filter.
func (b *bbr1) updateBW(st *State, rs *rateSample) {
	b.roundStart = false
	if rs.delivered < 0 || rs.intervalUs <= 0 {
		return
	}
	if !before32(rs.priorDelivered, b.nextRTTDelivered) {
		b.nextRTTDelivered = st.Delivered
		b.rttCnt++
		b.roundStart = true
		b.packetConservation = false
	}
	b.ltBWSampling(st, rs)
	bw := uint64(rs.delivered) * bwUnit / uint64(rs.intervalUs)
	// App-limited samples only count if they raise the estimate.
	if !rs.isAppLimited || bw >= uint64(b.maxBW()) {
		b.bw.RunningMax(bbrBWRTTs, b.rttCnt, uint32(bw))
	}
}

// updateAckAggregation follows bbr_update_ack_aggregation: a windowed max
// over 5-10 rounds.
func (b *bbr1) updateAckAggregation(st *State, rs *rateSample) {
	b.bbrCore.updateAckAggregation(st, rs, bbrExtraAckedWinRTTs, b.bwEst())
}

// checkFullBWReached follows bbr_check_full_bw_reached: three rounds
// without 25% bw growth mean STARTUP has filled the pipe.
func (b *bbr1) checkFullBWReached(rs *rateSample) {
	if b.fullBWReached || !b.roundStart || rs.isAppLimited {
		return
	}
	thresh := uint32(uint64(b.fullBW) * bbrFullBWThresh >> bbrScale)
	if b.maxBW() >= thresh {
		b.fullBW = b.maxBW()
		b.fullBWCnt = 0
		return
	}
	b.fullBWCnt++
	b.fullBWReached = b.fullBWCnt >= bbrFullBWCnt
}

// checkDrain follows bbr_check_drain.
func (b *bbr1) checkDrain(st *State) {
	if b.mode == bbrStartup && b.fullBWReached {
		b.mode = bbrDrain
		st.SSThreshPkts = b.inflight(st, b.maxBW(), bbrUnit)
	}
	if b.mode == bbrDrain && b.inNetAtEDT(st, st.InFlightPkts) <= b.inflight(st, b.maxBW(), bbrUnit) {
		b.resetProbeBWMode(st) // queue drained
	}
}

// checkProbeRTTDone follows bbr_check_probe_rtt_done.
func (b *bbr1) checkProbeRTTDone(st *State) {
	if b.probeRTTDoneStamp == 0 || !after32(tcpJiffies32(st), b.probeRTTDoneStamp) {
		return
	}
	b.minRTTStamp = tcpJiffies32(st) // wait a while until PROBE_RTT
	st.CwndPkts = max(st.CwndPkts, b.priorCwnd)
	b.resetMode(st)
}

// updateMinRTT follows bbr_update_min_rtt: a 10 s min filter, and
// PROBE_RTT when it expires (200 ms and one round at 4 packets).
func (b *bbr1) updateMinRTT(st *State, rs *rateSample) {
	now := tcpJiffies32(st)
	expired := after32(now, b.minRTTStamp+bbrMinRTTWinSec*hz(st))
	if rs.rttUs >= 0 && (rs.rttUs < int64(b.minRTTUs) || (expired && !rs.isAckDelayed)) {
		b.minRTTUs = uint32(rs.rttUs)
		b.minRTTStamp = now
	}
	if expired && !b.idleRestart && b.mode != bbrProbeRTT {
		b.mode = bbrProbeRTT
		b.saveCwnd(st)
		b.probeRTTDoneStamp = 0
	}
	if b.mode == bbrProbeRTT {
		b.probeRTTStep(b, st, now, bbrCwndMinTarget)
	}
	if rs.delivered > 0 {
		b.idleRestart = false
	}
}

// updateGains follows bbr_update_gains.
func (b *bbr1) updateGains() {
	switch b.mode {
	case bbrStartup:
		b.pacingGain, b.cwndGain = bbrHighGain, bbrHighGain
	case bbrDrain:
		b.pacingGain, b.cwndGain = bbrDrainGain, bbrHighGain // keep cwnd
	case bbrProbeBW:
		b.pacingGain = bbrPacingGain[b.cycleIdx]
		if b.ltUseBW {
			b.pacingGain = bbrUnit
		}
		b.cwndGain = bbrCwndGain
	case bbrProbeRTT:
		b.pacingGain, b.cwndGain = bbrUnit, bbrUnit
	}
}

// updateModel follows bbr_update_model.
func (b *bbr1) updateModel(st *State, rs *rateSample) {
	b.updateBW(st, rs)
	b.updateAckAggregation(st, rs)
	b.updateCyclePhase(st, rs)
	b.checkFullBWReached(rs)
	b.checkDrain(st)
	b.updateMinRTT(st, rs)
	b.updateGains()
}

// CongControl follows bbr_main.
func (b *bbr1) CongControl(st *State, r *RateSample) {
	rs := kernelSample(r)
	b.updateModel(st, &rs)
	bw := b.bwEst()
	b.setPacingRate(st, bw, b.pacingGain)
	b.setCwnd(st, &rs, rs.ackedSacked, bw, b.cwndGain)
	b.publish(st)
}

// Init follows bbr_init.
func (b *bbr1) Init(st *State) {
	b.defineSignals(st)
	// cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED):
	// BBR's model assumes paced sending.
	st.Paced = true
	b.priorCwnd = 0
	st.SSThreshPkts = InfiniteSSThresh
	b.rttCnt = 0
	b.nextRTTDelivered = st.Delivered
	b.prevCAState = CAOpen
	b.packetConservation = false
	b.probeRTTDoneStamp = 0
	b.probeRTTRoundDone = false
	b.minRTTUs = tcpMinRTTUs(st)
	b.minRTTStamp = tcpJiffies32(st)
	b.bw.Reset(b.rttCnt, 0)
	b.hasSeenRTT = false
	b.initPacingRateFromRTT(st, bbrRateBytesPerSec, bbrHighGain)
	b.roundStart = false
	b.idleRestart = false
	b.fullBWReached = false
	b.fullBW = 0
	b.fullBWCnt = 0
	b.cycleMstamp = 0
	b.cycleIdx = 0
	b.resetLTBWSampling(st)
	b.mode = bbrStartup
	// The kernel leaves the gains zero until the first ACK; setting them
	// now changes nothing it computes and gives the signals their values.
	b.updateGains()
	b.resetAckAggregation(st)
	b.publish(st)
}

// UndoCwnd follows bbr_undo_cwnd: a spurious loss resets full-pipe and
// policer detection; cwnd stays.
func (b *bbr1) UndoCwnd(st *State) uint32 {
	b.fullBW = 0
	b.fullBWCnt = 0
	b.resetLTBWSampling(st)
	b.publish(st)
	return st.CwndPkts
}

// SSThresh follows bbr_ssthresh: save cwnd for when recovery ends; BBR
// does not use ssthresh, so it is returned unchanged.
func (b *bbr1) SSThresh(st *State) uint32 {
	b.saveCwnd(st)
	return st.SSThreshPkts
}

// SetState follows bbr_set_state: an RTO ends a round and counts as a
// loss for the policer detector.
func (b *bbr1) SetState(st *State, newState CAState) {
	if newState != CALoss {
		return
	}
	rs := rateSample{losses: 1}
	b.prevCAState = CALoss
	b.fullBW = 0
	b.roundStart = true
	b.ltBWSampling(st, &rs)
	b.publish(st)
}

func (b *bbr1) defineSignals(st *State) {
	s := st.Signals
	b.sig = bbr1Signals{
		bw:                 s.Define("bw", "bps", "bottleneck bandwidth estimate (bbr_bw: lt_bw when policed, else the max filter)"),
		minRTT:             s.Define("min_rtt", "us", "windowed min RTT (10 s)"),
		mode:               s.Define("mode", "enum", "0 startup, 1 drain, 2 probe_bw, 3 probe_rtt"),
		pacingGain:         s.Define("pacing_gain", "ratio", "pacing gain"),
		cwndGain:           s.Define("cwnd_gain", "ratio", "cwnd gain"),
		cycleIdx:           s.Define("cycle_idx", "enum", "PROBE_BW gain-cycle phase (0 is the 5/4 probe)"),
		fullBW:             s.Define("full_bw", "bps", "bw at the last 25% growth, for full-pipe detection"),
		fullBWCnt:          s.Define("full_bw_cnt", "rounds", "rounds without 25% bw growth"),
		ltBW:               s.Define("lt_bw", "bps", "long-term (policer) delivery rate"),
		ltUseBW:            s.Define("lt_use_bw", "bool", "pacing at lt_bw because a policer was detected"),
		roundStart:         s.Define("round_start", "bool", "this ACK started a packet-timed round"),
		packetConservation: s.Define("packet_conservation", "bool", "first round of recovery: send one per ACKed"),
		targetCwnd:         s.Define("target_cwnd", "pkts", "cwnd target: BDP*cwnd_gain + aggregation + quantization"),
	}
}

func (b *bbr1) publish(st *State) {
	s, id := st.Signals, &b.sig
	s.Set(id.bw, bwToBps(st, b.bwEst()))
	if b.minRTTUs != noMinRTT {
		s.Set(id.minRTT, float64(b.minRTTUs))
	}
	s.Set(id.mode, float64(b.mode))
	s.Set(id.pacingGain, gainRatio(b.pacingGain))
	s.Set(id.cwndGain, gainRatio(b.cwndGain))
	s.Set(id.cycleIdx, float64(b.cycleIdx))
	s.Set(id.fullBW, bwToBps(st, b.fullBW))
	s.Set(id.fullBWCnt, float64(b.fullBWCnt))
	s.Set(id.ltBW, bwToBps(st, b.ltBW))
	s.Set(id.ltUseBW, boolSignal(b.ltUseBW))
	s.Set(id.roundStart, boolSignal(b.roundStart))
	s.Set(id.packetConservation, boolSignal(b.packetConservation))
	s.Set(id.targetCwnd, float64(b.targetCwnd))
}
