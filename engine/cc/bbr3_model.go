// BBRv3's congestion model and PROBE_BW state machine (google/bbr v3
// branch net/ipv4/tcp_bbr.c): the ECN and loss signals, the upper bounds
// (inflight_hi, probed up and cut when a probe sees too much loss or CE),
// the lower bounds (bw_lo, inflight_lo, cut on congestion between probes)
// and the DOWN/CRUISE/REFILL/UP cycle. The rest of bbr3 is in bbr3.go.

package cc

import "math/bits"

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
	// ce_ratio and alpha are u64s, cut to u32 only by min_t and the call.
	ceRatio := (uint64(deliveredCE) << bbrScale) / uint64(delivered)
	alpha := uint64((bbrUnit-bbr3ECNAlphaGain)*b.ecnAlpha) >> bbrScale
	alpha += (bbr3ECNAlphaGain * ceRatio) >> bbrScale
	b.ecnAlpha = min(uint32(alpha), bbrUnit)
	b.alphaLastDelivered = st.Delivered
	b.alphaLastDelivCE = st.DeliveredCE
	b.checkECNTooHighInStartup(st, uint32(ceRatio))
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
	if !st.IsCwndLimited || st.CwndPkts < b.inflightHi {
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
		} else if st.IsCwndLimited && st.CwndPkts >= b.inflightHi {
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

// noteLoss follows bbr_note_loss: the first loss of a round starts a loss
// round covering the data in flight.
func (b *bbr3) noteLoss(st *State) {
	if !b.lossInRound {
		b.lossRoundDelivered = st.Delivered
	}
	b.lossInRound = true
	b.lossInCycle = true
}

// runLossProbeRecovery follows bbr_run_loss_probe_recovery (google/bbr v3
// branch), run on CA_EVENT_TLP_RECOVERY: a loss probe repaired the loss of
// one segment; while probing for bandwidth, judge the flight that carried
// it (inflight_latest plus that segment) as bbr_skb_marked_lost judges one.
func (b *bbr3) runLossProbeRecovery(st *State) {
	b.noteLoss(st)
	if !b.bwProbeSamples {
		return // not sent while probing for bandwidth
	}
	rs := rateSample{lost: 1, isAppLimited: st.TLPOrigDataAppLimited}
	rs.txInFlight = b.inflightLatest + rs.lost
	if b.isInflightTooHigh(&rs) {
		b.handleInflightTooHigh(st, &rs)
	}
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
