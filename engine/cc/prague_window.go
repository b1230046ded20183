package cc

import (
	"math/bits"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// This file holds Prague's window, alpha and rate arithmetic, each function
// following the tcp_prague.c function it names. Times are in the kernel's
// units: srtt and the target in µs scaled by 8 (tcp_sock's srtt_us), rates
// in bytes per second.

// srttUS8 is tp->srtt_us: the smoothed RTT in µs, scaled by 8.
func srttUS8(st *State) uint64 { return uint64(st.SRTT * 8 / sim.Microsecond) }

// mtu is tcp_mss_to_mtu(sk, mss_cache).
func mtu(st *State) uint64 { return uint64(st.MSS) + headerBytes }

// mulShr is mul_u64_u64_shr: a·b >> s without overflow, truncated to 64
// bits as the kernel does.
func mulShr(a, b uint64, s uint) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi<<(64-s) | lo>>s // Go: a shift by 64 gives 0, so s = 0 works
}

// divRoundClosest is DIV64_U64_ROUND_CLOSEST for unsigned operands.
func divRoundClosest(a, b uint64) uint64 { return (a + b/2) / b }

// divRoundUp is DIV64_U64_ROUND_UP.
func divRoundUp(a, b uint64) uint64 { return (a + b - 1) / b }

// targetRTT8 follows prague_target_rtt: the target in µs, scaled by 8.
func (r *Prague) targetRTT8() uint64 { return uint64(r.p.RTTTarget/sim.Microsecond) << 3 }

// sinceUS is tcp_stamp_us_delta(tcp_mstamp, t): the difference of the two
// µs stamps (t is kept exact, the kernel's stamp is tcp_mstamp then), as a
// u32.
func sinceUS(st *State, t sim.Time) uint64 {
	return uint64(stampUsDelta(tcpMstamp(st), uint64(t/sim.Time(sim.Microsecond))))
}

// isRTTIndep follows prague_is_rtt_indep: past slow start by at least
// RTTTransition rounds.
func (r *Prague) isRTTIndep(st *State) bool {
	return !InSlowStart(st) && r.round >= r.p.RTTTransition
}

// shouldUpdateEWMA follows prague_should_update_ewma: a round ends when the
// data sent at its start is acked, and, once the flow is RTT-independent,
// no sooner than one target RTT after the last update, so flows of
// different RTTs converge to the same alpha on a step AQM.
func (r *Prague) shouldUpdateEWMA(st *State) bool {
	e2e := !seqBefore(st.SndUna, r.nextSeq)
	return e2e && (!r.isRTTIndep(st) || r.targetRTT8()>>3 <= sinceUS(st, r.alphaStamp))
}

// rateScaledAIAckIncrease follows prague_rate_scaled_ai_ack_increase: below
// the target, one packet per RTT times (rtt/target)², so cwnd/rtt (the rate)
// grows by one packet per target RTT per target RTT whatever the RTT.
func (r *Prague) rateScaledAIAckIncrease(rtt8 uint64) uint64 {
	target := r.targetRTT8()
	if rtt8 >= target {
		return pragueOneCwnd
	}
	return divRoundClosest(rtt8<<PragueCwndUnit*rtt8, target*target)
}

// setAIAckIncrease follows prague_ai_ack_increase: unscaled during the
// transition rounds, without an RTT sample, or above MAX_SCALED_RTT.
func (r *Prague) setAIAckIncrease(st *State) {
	rtt := srttUS8(st)
	if r.round < r.p.RTTTransition || rtt == 0 || rtt > pragueMaxScaledRTTUS<<3 {
		r.aiAckIncrease = pragueOneCwnd
		return
	}
	r.aiAckIncrease = r.rateScaledAIAckIncrease(rtt)
}

// fracCwndToSndCwnd follows prague_frac_cwnd_to_snd_cwnd: round up, at
// least 2, at most the clamp.
func (r *Prague) fracCwndToSndCwnd(st *State) uint32 {
	w := max(pragueMinCwnd, (r.fracCwnd+pragueOneCwnd-1)>>PragueCwndUnit)
	return uint32(min(w, uint64(st.CwndClampPkts)))
}

// virtualRTT8 follows prague_virtual_rtt: the RTT, at least the target.
func (r *Prague) virtualRTT8(st *State) uint64 { return max(r.targetRTT8(), srttUS8(st)) }

// pacingRateToFracCwnd follows prague_pacing_rate_to_frac_cwnd: the window
// the rate fills in the (slowly) smoothed RTT. 2^23 stands for 8·10^6 (one
// second in srtt_us units), as in the kernel.
func (r *Prague) pacingRateToFracCwnd(st *State) uint64 {
	rtt := r.hsrtt >> pragueHSRTTShift
	if rtt == 0 {
		rtt = srttUS8(st)
	}
	return divRoundUp(mulShr(r.rateBytes, rtt, pragueRTT2SecShft-PragueCwndUnit), mtu(st))
}

// fracCwndToPacingRate follows prague_frac_cwnd_to_pacing_rate: the
// fractional window per srtt, at least MINIMUM_RATE.
func (r *Prague) fracCwndToPacingRate(st *State) uint64 {
	rate := (uint64(sim.Second/sim.Microsecond) << 3) * mtu(st)
	if s := srttUS8(st); s != 0 {
		rate /= s
	}
	return max(mulShr(rate, r.fracCwnd, PragueCwndUnit), pragueMinRate)
}

// updatePacingRate follows prague_update_pacing_rate: in rate mode the
// rate swings 3% above its value for the first half of each virtual RTT and
// 3% below for the second; in window mode it is max(frac_cwnd, inflight)
// packets per srtt. Doubled in early slow start, as the kernel's default
// pacing. It sets the GSO burst to 2^-BurstShift s of the rate.
func (r *Prague) updatePacingRate(st *State) {
	var rate uint64
	m := mtu(st)
	if r.isRTTIndep(st) && r.rateMode {
		offset := mulShr(pragueRateOffset, r.rateBytes, pragueOffsetUnit)
		if r.virtualRTT8(st)>>(3+1) <= sinceUS(st, r.alphaStamp) {
			rate = r.rateBytes - offset
		} else {
			rate = r.rateBytes + offset
		}
	} else {
		maxInflight := max(r.fracCwnd>>PragueCwndUnit, uint64(st.InFlightPkts))
		rate = (uint64(sim.Second/sim.Microsecond) << 3) * m
		if s := srttUS8(st); s != 0 {
			rate /= s
		}
		rate = max(rate*maxInflight, pragueMinRate)
		r.rateBytes = rate
	}
	if st.CwndPkts < st.SSThreshPkts/2 {
		rate <<= 1
	}
	r.maxTSOBurst = uint32(max(1, rate/m>>r.p.BurstShift))
	st.PacingRate = units.BitRate(rate * 8)
}

// newRound follows prague_new_round.
func (r *Prague) newRound(st *State) {
	r.nextSeq = st.SndNxt
	r.oldDelivCE = st.DeliveredCE
	r.oldDelivered = st.Delivered
	if !InSlowStart(st) {
		r.round++
		if r.round == 0 {
			r.round = r.p.RTTTransition
		}
	}
	r.setAIAckIncrease(st)
}

// updateAlpha follows prague_update_alpha: once CE has been seen, fold the
// round's CE fraction F into alpha, upscaled_alpha ← upscaled_alpha −
// upscaled_alpha/16 + F (kept ×16 so the remainder carries over); then
// update hsrtt and start a new round.
func (r *Prague) updateAlpha(st *State) {
	if r.sawCE {
		delivered := st.Delivered - r.oldDelivered
		ecn := uint64(st.DeliveredCE - r.oldDelivCE)
		if ecn != 0 {
			ecn = (ecn << PragueAlphaBits) / uint64(max(1, delivered))
		}
		if delivered > 0 {
			st.Signals.Set(r.sig.ceFrac, float64(st.DeliveredCE-r.oldDelivCE)/float64(delivered))
		}
		alpha := r.upscaledAlpha - r.upscaledAlpha>>PragueShiftG + ecn
		r.alphaStamp = st.Now
		r.upscaledAlpha = min(pragueMaxAlpha<<PragueShiftG, alpha)
	}
	r.hsrtt = r.hsrtt + srttUS8(st) - r.hsrtt>>pragueHSRTTShift
	r.newRound(st)
}

// updateCwnd follows prague_update_cwnd: CE-marked packets (ece_delta,
// here the growth of delivered_ce since the previous ACK) add nothing;
// the others grow the window by slow start, then by ai_ack_increase/cwnd
// each (scaled for 1500-byte packets), or grow the rate in rate mode; then
// cwnd steps one packet toward the fractional window.
func (r *Prague) updateCwnd(st *State, rs *RateSample) {
	acked := int64(rs.AckedSacked)
	if eceDelta := st.DeliveredCE - r.priorDelivCE; eceDelta != 0 {
		if !r.sawCE && r.p.AlphaMode == PragueHalveOnFirstMark {
			r.fracCwnd = (r.fracCwnd + 1) >> 1
		}
		r.sawCE = true
		acked -= int64(eceDelta)
	}
	r.priorDelivCE = st.DeliveredCE

	if acked > 0 && !r.inLoss && st.CwndLimited {
		if InSlowStart(st) {
			acked = int64(SlowStart(st, uint32(acked)))
			r.fracCwnd = uint64(st.CwndPkts) << PragueCwndUnit
			if acked == 0 {
				r.setAIAckIncrease(st) // prague_cwnd_changed
				return
			}
		}
		m := mtu(st)
		if r.isRTTIndep(st) && r.rateMode {
			vrtt := r.virtualRTT8(st)
			increase := (uint64(acked) * pragueMTUSys << pragueRTT2SecShft) / vrtt
			w := divRoundUp(r.rateBytes*vrtt, m<<pragueRTT2SecShft)
			if w != 0 {
				r.rateBytes += divRoundClosest(increase, w)
			}
			r.fracCwnd = max(r.fracCwnd+uint64(acked), r.pacingRateToFracCwnd(st))
		} else {
			increase := uint64(acked) * r.aiAckIncrease
			if r.fracCwnd != 0 {
				increase = divRoundClosest(increase<<PragueCwndUnit, r.fracCwnd)
			}
			increase = increase * pragueMTUSys / m
			r.fracCwnd += max(uint64(acked), increase)
			r.rateBytes = max(r.rateBytes+uint64(acked), r.fracCwndToPacingRate(st))
		}
	}

	// Step-wise, one packet per ACK, toward the fractional window; a
	// decrement also lowers ssthresh, so a reduction ends slow start.
	w := r.fracCwndToSndCwnd(st)
	switch {
	case st.CwndPkts > w:
		st.CwndPkts--
		st.SSThreshPkts = st.CwndPkts
		r.setAIAckIncrease(st)
	case st.CwndPkts < w:
		st.CwndPkts++
		r.setAIAckIncrease(st)
	}
}

// enterLoss follows prague_enter_loss: the classic response, halving the
// window (or the rate in rate mode), and no growth until Open.
func (r *Prague) enterLoss(st *State) {
	r.lossCwnd = st.CwndPkts
	r.lossRateBytes = r.rateBytes
	if r.isRTTIndep(st) && r.rateMode {
		r.rateBytes -= r.rateBytes >> 1
		r.fracCwnd = r.pacingRateToFracCwnd(st)
	} else {
		r.fracCwnd -= r.fracCwnd >> 1
		r.rateBytes = r.fracCwndToPacingRate(st)
	}
	r.inLoss = true
}

// enterCWR follows prague_enter_cwr: the scalable response, taking
// alpha/2 off the window (or the rate), with the kernel's rounding to
// nearest; once RTT-independent, at most once per target RTT.
func (r *Prague) enterCWR(st *State) {
	if r.isRTTIndep(st) && r.targetRTT8()>>3 > sinceUS(st, r.cwrStamp) {
		return
	}
	r.cwrStamp = st.Now
	alpha := r.upscaledAlpha >> PragueShiftG
	if r.isRTTIndep(st) && r.rateMode {
		reduction := mulShr(r.rateBytes, alpha, PragueAlphaBits+1)
		r.rateBytes = max(r.rateBytes-reduction, pragueMinRate)
		r.fracCwnd = r.pacingRateToFracCwnd(st)
		return
	}
	reduction := (alpha*r.fracCwnd + pragueMaxAlpha) >> (PragueAlphaBits + 1)
	r.fracCwnd -= reduction
	r.rateBytes = r.fracCwndToPacingRate(st)
}
