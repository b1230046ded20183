// LeoCC, ported from the authors' kernel module for simulated Starlink paths
// (SpaceNetLab/LeoCC, leocc/simulation/leocc.c; also used by the OMNeT++/INET
// port Avian688/leocc that the LEO simulation-vs-emulation paper ran). It is
// BBRv1 (mainline tcp_bbr.c, without the long-term policer sampler) plus:
//
//   - Reconfiguration detection. Starlink reassigns user terminals to
//     satellites on a global 15 s schedule (PERIOD = 15000 ms), 12 s into it
//     (offset = 12000 ms). leocc_main raises reconfiguration_trigger when the
//     time since start modulo the period falls in the 100 ms window just
//     before the offset. With the trigger up, a PROBE_BW ("dynamic cruise")
//     flow enters PROBE_RTT at once instead of waiting for the min_rtt filter
//     to expire.
//   - Model refresh. When PROBE_RTT ends, min_rtt becomes the current RTT
//     sample (not the windowed min), the flow restarts in STARTUP and the
//     bandwidth max-filter is reset to reconfiguration_max_bw: the last
//     delivery rate seen while the Kalman-smoothed RTT stood 45 ms
//     (delta_thresh) above the current sample, else 0. STARTUP ending clears
//     the trigger.
//   - Kalman filters (Q = R = 4, initial P = 25, gains << 8) on the per-round
//     max delivery rate and on the RTT. In PROBE_BW, while the smoothed RTT is
//     10 ms (min_rtt_fluctuation) or more above min_rtt, LeoCC paces and sizes
//     cwnd with the Kalman bandwidth instead of the max filter and probes at
//     1.05 instead of 1.25.
//   - A 20 s min_rtt window (BBRv1: 10 s) and BBRv3's half-BDP PROBE_RTT cwnd.
//
// What the simulator had to assume:
//   - The module measures the 15 s schedule from the moment a flow
//     initialises (a module-global init_stamp that the most recent flow
//     overwrites). Here the schedule is measured from simulated time 0, the
//     epoch the `leo` path generator aligns its reassignments to (12 s + k·15
//     s by default); for a flow started at 0 the two agree, and every flow of
//     a run sees the same schedule, as terminals under one constellation do.
//   - The module mutates the global leocc_pacing_gain[0]; here each flow has
//     its own copy, so flows do not change each other's probe gain.
//   - The live-network variant (leocc/live_network) learns the schedule from
//     a ping monitor over netlink; the simulation variant's clock rule is
//     what a simulator can reproduce, so that is the one ported.
//
// Units follow the kernel: bandwidth in packets/us << 24, gains << 8, RTTs in
// us, times in jiffies (State.HZ).

package cc

import (
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// The module's constants and module_param defaults.
const (
	// LeoCCPeriod is PERIOD: Starlink's global reassignment interval.
	LeoCCPeriod = 15 * sim.Second
	// LeoCCOffset is offset: the reassignment instant within a period.
	LeoCCOffset = 12 * sim.Second
	// leoccTriggerWindowMs is magic_offet: the trigger window before the
	// offset, in ms.
	leoccTriggerWindowMs = 100

	leoccDeltaThreshUs       = 45000 // delta_thresh: RTT drop that marks a new path
	leoccMinRTTFluctuationUs = 10000 // min_rtt_fluctuation
	leoccDeltaRTTUs          = 0     // delta_rtt
	leoccMinRTTWinSec        = 20    // leocc_min_rtt_win_sec
	leoccVarQ, leoccVarR     = 4, 4  // var_Q, var_R (and the _rtt twins)
	leoccPInit               = 25    // initial p_post_bw, p_post_rtt
	leoccPMask               = 0x1F  // p_post_* are 5-bit fields

	leoccProbeRTTCwndGain = bbrUnit * 1 / 2   // leocc_probe_rtt_cwnd_gain
	leoccCruiseProbeGain  = bbrUnit * 21 / 20 // pacing_gain[0] on a jittery path
	leoccTSORTTShift      = 9                 // leocc_tso_rtt_shift
)

func init() { Register("leocc", func() Algorithm { return newLeoCC() }) }

// leoCC is struct leocc of leocc.c. Where leocc.c's functions are
// tcp_bbr.c's under another prefix (bdp, quantization budget, inflight,
// recover-or-restore, the cycle phase, full-bw detection, the TSO goal) it
// runs the embedded bbr1's port of them; their lt_bw branches never fire,
// as LeoCC never starts the long-term sampler. The functions LeoCC changed
// are leoCC's own below.
type leoCC struct {
	bbr1
	pacingGain0 uint32 // this flow's leocc_pacing_gain[0]

	useMaxFilter   bool
	reconfTrigger  bool   // reconfiguration_trigger
	reconfMaxBW    uint32 // reconfiguration_max_bw
	rttCntMaxBW    uint32 // max delivery rate of the current round
	latestBW       uint32
	bwHatPost      uint32 // Kalman bandwidth
	rttHatPost     uint32 // Kalman RTT, us
	kalmanGainBW   uint32
	kalmanGainRTT  uint32
	pPostBW        uint32
	pPostRTT       uint32
	reconfigs      uint32 // model refreshes so far, for the signal
	lastRefreshBW  uint32 // bw the filter was reset to at the last refresh
	lastRefreshRTT uint32 // min_rtt taken at the last refresh

	sig leoCCSignals
}

type leoCCSignals struct {
	bw, maxBW, minRTT, mode, pacingGain, cwndGain, cycleIdx, fullBW, trigger,
	bwHat, rttHat, useMaxFilter, reconfMaxBW, refreshes, targetCwnd SignalID
}

func newLeoCC() *leoCC { return &leoCC{bbr1: bbr1{rng: newUnseededRand()}} }

// Name returns "leocc".
func (l *leoCC) Name() string { return "leocc" }

// TSOSegs follows leocc_tso_segs (leocc_tso_segs_generic with
// GSO_LEGACY_MAX_SIZE, as bbr3.go does): 1 ms at the pacing rate plus a
// bonus that halves every 512 us of min_rtt.
func (l *leoCC) TSOSegs(st *State, mss units.Bytes) uint32 {
	bytes := pacingBytesPerSec(st) >> skPacingShift
	if r := l.minRTTUs >> leoccTSORTTShift; r < 32 {
		bytes += GSOLegacyMaxSize >> r
	}
	bytes = min(bytes, GSOLegacyMaxSize-1-MaxTCPHeader)
	segs := max(uint32(bytes/uint64(mss)), sysctlTCPMinTSOSegs)
	if st.GSOMaxSegs > 0 {
		segs = min(segs, st.GSOMaxSegs)
	}
	return segs
}

// CwndEvent follows leocc_cwnd_event (bbr_cwnd_event).
func (l *leoCC) CwndEvent(st *State, ev Event) { l.cwndEvent(l, st, ev) }

// probeRTTCwnd follows leocc_probe_rtt_cwnd: half a BDP, at least 4.
func (l *leoCC) probeRTTCwnd() uint32 {
	return max(bbrCwndMinTarget, l.bdp(l.bwEst(), leoccProbeRTTCwndGain))
}

// setCwnd follows leocc_set_cwnd; bw is the Kalman or the max-filter bw.
func (l *leoCC) setCwnd(st *State, rs *rateSample, acked, bw, gain uint32) {
	cwnd := st.CwndPkts
	if acked > 0 {
		var conserving bool
		cwnd, conserving = l.setCwndToRecoverOrRestore(st, rs, acked)
		if !conserving {
			target := l.bdp(bw, gain)
			target += l.ackAggregationCwnd()
			target = l.quantizationBudget(st, target)
			l.targetCwnd = target
			if l.fullBWReached {
				cwnd = min(cwnd+acked, target)
			} else if cwnd < target || st.Delivered < InitCwnd {
				cwnd += acked
			}
			cwnd = max(cwnd, bbrCwndMinTarget)
		}
	}
	st.CwndPkts = min(cwnd, st.CwndClampPkts)
	if l.mode == bbrProbeRTT {
		st.CwndPkts = min(st.CwndPkts, l.probeRTTCwnd())
	}
}

// resetStartupMode follows leocc_reset_startup_mode: forget that the pipe
// was full and probe for bandwidth again.
func (l *leoCC) resetStartupMode() {
	l.fullBWReached = false
	l.fullBW = 0
	l.fullBWCnt = 0
	l.mode = bbrStartup
}

// resetMode follows leocc_reset_mode: after a reconfiguration, STARTUP.
func (l *leoCC) resetMode(st *State) {
	if !l.fullBWReached || l.reconfTrigger {
		l.resetStartupMode()
	} else {
		l.resetProbeBWMode(st)
	}
}

// updateBW follows leocc_update_bw.
func (l *leoCC) updateBW(st *State, rs *rateSample) {
	l.roundStart = false
	if rs.delivered < 0 || rs.intervalUs <= 0 {
		return
	}
	if !before32(rs.priorDelivered, l.nextRTTDelivered) {
		l.nextRTTDelivered = st.Delivered
		l.rttCnt++
		l.rttCntMaxBW = 0
		l.roundStart = true
		l.packetConservation = false
	}
	bw := uint32(uint64(rs.delivered) * bwUnit / uint64(rs.intervalUs))
	l.rttCntMaxBW = max(l.rttCntMaxBW, bw)
	// In PROBE_RTT an RTT sample 45 ms below the smoothed RTT means the
	// path got shorter: keep the latest rate to restart the model from.
	if l.mode == bbrProbeRTT && rs.rttUs > 0 && int64(l.rttHatPost) > rs.rttUs+leoccDeltaThreshUs {
		l.reconfMaxBW = l.latestBW
	}
	if !rs.isAppLimited || bw >= l.bwEst() {
		l.bw.RunningMax(bbrBWRTTs, l.rttCnt, bw)
	}
	l.latestBW = bw
}

// checkDrain follows leocc_check_drain: leaving STARTUP ends a
// reconfiguration.
func (l *leoCC) checkDrain(st *State) {
	if l.mode == bbrStartup && l.fullBWReached {
		l.reconfMaxBW = 0
		l.reconfTrigger = false
		l.mode = bbrDrain
		st.SSThreshPkts = l.inflight(st, l.bwEst(), bbrUnit)
	}
	if l.mode == bbrDrain && l.inNetAtEDT(st, st.InFlightPkts) <= l.inflight(st, l.bwEst(), bbrUnit) {
		l.resetProbeBWMode(st)
	}
}

// checkProbeRTTDone follows leocc_check_probe_rtt_done: restore cwnd,
// restart, and after a reconfiguration reset the bandwidth filter to
// reconfiguration_max_bw. Unlike BBRv1 it does not restamp min_rtt.
func (l *leoCC) checkProbeRTTDone(st *State) {
	if l.probeRTTDoneStamp == 0 || !after32(tcpJiffies32(st), l.probeRTTDoneStamp) {
		return
	}
	st.CwndPkts = max(st.CwndPkts, l.priorCwnd)
	l.resetMode(st)
	if l.reconfTrigger {
		l.bw.Reset(l.rttCnt, l.reconfMaxBW)
		l.reconfigs++
		l.lastRefreshBW = l.reconfMaxBW
		l.lastRefreshRTT = l.minRTTUs
	}
}

// updateMinRTT follows leocc_update_min_rtt.
func (l *leoCC) updateMinRTT(st *State, rs *rateSample) {
	now := tcpJiffies32(st)
	expired := after32(now, l.minRTTStamp+leoccMinRTTWinSec*hz(st))
	if rs.rttUs >= 0 && (rs.rttUs < int64(l.minRTTUs) || (expired && !rs.isAckDelayed)) {
		l.minRTTUs = uint32(rs.rttUs)
		l.minRTTStamp = now
	}
	if !l.idleRestart && l.mode == bbrProbeBW && (expired || l.reconfTrigger) {
		l.mode = bbrProbeRTT
		l.probeRTTDoneStamp = 0
		l.saveCwnd(st)
	}
	if l.mode == bbrProbeRTT {
		st.AppLimited = max(st.Delivered+st.InFlightPkts, 1)
		if l.probeRTTDoneStamp == 0 {
			if st.InFlightPkts <= l.probeRTTCwnd() {
				l.probeRTTDoneStamp = now + msecsToJiffies(st, bbrProbeRTTModeMs)
				l.probeRTTRoundDone = false
				l.nextRTTDelivered = st.Delivered
			}
		} else {
			if l.roundStart {
				l.probeRTTRoundDone = true
			}
			if l.probeRTTRoundDone {
				if after32(now, l.probeRTTDoneStamp) {
					// The RTT model is refreshed to the current sample,
					// lower or not. The module stores rs->rtt_us into a
					// u32, so an ACK without a sample (-1) leaves ~0U,
					// "no min_rtt", until the next sample; kept as is.
					l.minRTTUs = uint32(rs.rttUs)
					l.minRTTStamp = now
				}
				l.checkProbeRTTDone(st)
			}
		}
	}
	if rs.delivered > 0 {
		l.idleRestart = false
	}
}

func (l *leoCC) updateGains() {
	switch l.mode {
	case bbrStartup:
		l.pacingGain, l.cwndGain = bbrHighGain, bbrHighGain
	case bbrDrain:
		l.pacingGain, l.cwndGain = bbrDrainGain, bbrHighGain
	case bbrProbeBW:
		l.pacingGain = bbrPacingGain[l.cycleIdx]
		if l.cycleIdx == 0 {
			l.pacingGain = l.pacingGain0
		}
		l.cwndGain = bbrCwndGain
	case bbrProbeRTT:
		l.pacingGain, l.cwndGain = bbrUnit, bbrUnit
	}
}

// kalman is one scalar Kalman step of leocc_main in its fixed point: the
// prior variance grows by Q, the gain is P/(P+R) << 8, the estimate moves
// that far toward z, and the posterior variance shrinks by (1 − gain). P
// lives in a 5-bit field.
func kalman(est *uint32, p *uint32, gain *uint32, z uint64) {
	*p = (*p + leoccVarQ) & leoccPMask
	*gain = *p * bbrUnit / (*p + leoccVarR)
	*est = uint32((uint64((bbrUnit-*gain)**est) + uint64(*gain)*z) / bbrUnit)
	*p = ((bbrUnit - *gain) * *p / bbrUnit) & leoccPMask
}

// reconfigDue is the trigger rule of leocc_main: within the 100 ms before
// the offset of a 15 s period, counted from simulated time 0.
func reconfigDue(now sim.Time) bool {
	rel := uint32((sim.Duration(now) % LeoCCPeriod) / sim.Millisecond)
	off := uint32(LeoCCOffset / sim.Millisecond)
	return rel >= off-leoccTriggerWindowMs && rel <= off
}

// CongControl follows leocc_main.
func (l *leoCC) CongControl(st *State, r *RateSample) {
	rs := kernelSample(r)
	if !l.reconfTrigger && reconfigDue(st.Now) {
		l.reconfTrigger = true
	}
	if l.mode == bbrProbeBW && !before32(rs.priorDelivered, l.nextRTTDelivered) {
		// A round ends: fold its max delivery rate into the Kalman bw.
		// The module computes (UNIT − gain)·bw_hat in u32.
		l.pPostBW = (l.pPostBW + leoccVarQ) & leoccPMask
		l.kalmanGainBW = l.pPostBW * bbrUnit / (l.pPostBW + leoccVarR)
		l.bwHatPost = ((bbrUnit-l.kalmanGainBW)*l.bwHatPost + l.kalmanGainBW*l.rttCntMaxBW) / bbrUnit
		l.pPostBW = ((bbrUnit - l.kalmanGainBW) * l.pPostBW / bbrUnit) & leoccPMask
	}
	l.updateBW(st, &rs)
	l.bbrCore.updateAckAggregation(st, &rs, bbrExtraAckedWinRTTs, l.bwEst())
	l.updateCyclePhase(st, &rs)
	l.bbr1.checkFullBWReached(&rs)
	l.checkDrain(st)
	l.updateMinRTT(st, &rs)
	l.updateGains()

	if rs.rttUs > 0 {
		kalman(&l.rttHatPost, &l.pPostRTT, &l.kalmanGainRTT, uint64(rs.rttUs))
	}
	l.useMaxFilter = true
	bw := l.bwEst()
	if l.rttHatPost >= leoccDeltaRTTUs+l.minRTTUs+leoccMinRTTFluctuationUs && !l.reconfTrigger && l.mode == bbrProbeBW {
		// A jittery path: trust the smoothed rate, probe gently.
		l.useMaxFilter = false
		bw = l.bwHatPost
		l.pacingGain0 = leoccCruiseProbeGain
	} else {
		l.pacingGain0 = bbrPacingGain[0]
	}
	l.bbr1.setPacingRate(st, bw, l.pacingGain)
	l.setCwnd(st, &rs, rs.ackedSacked, bw, l.cwndGain)
	l.publish(st)
}

// Init follows leocc_init.
func (l *leoCC) Init(st *State) {
	l.defineSignals(st)
	st.Paced = true // SK_PACING_NEEDED
	l.reconfMaxBW = 0
	l.useMaxFilter = true
	l.latestBW = 0
	l.kalmanGainBW, l.kalmanGainRTT = 0, 0
	l.bwHatPost, l.rttHatPost = 0, 0
	l.pPostBW, l.pPostRTT = leoccPInit, leoccPInit
	l.rttCntMaxBW = 0
	l.minRTTStamp = tcpJiffies32(st)
	l.priorCwnd = 0
	st.SSThreshPkts = InfiniteSSThresh
	l.rttCnt = 0
	l.nextRTTDelivered = st.Delivered
	l.prevCAState = CAOpen
	l.packetConservation = false
	l.probeRTTDoneStamp = 0
	l.probeRTTRoundDone = false
	l.minRTTUs = tcpMinRTTUs(st)
	l.bw.Reset(l.rttCnt, 0)
	l.hasSeenRTT = false
	l.initPacingRateFromRTT(st, bbrRateBytesPerSec, bbrHighGain)
	l.roundStart = false
	l.idleRestart = false
	l.cycleMstamp = 0
	l.cycleIdx = 0
	l.pacingGain0 = bbrPacingGain[0]
	l.resetStartupMode()
	l.resetAckAggregation(st)
	l.updateGains()
	l.publish(st)
}

// UndoCwnd follows leocc_undo_cwnd.
func (l *leoCC) UndoCwnd(st *State) uint32 {
	l.fullBW = 0
	l.fullBWCnt = 0
	l.publish(st)
	return st.CwndPkts
}

// SSThresh follows leocc_ssthresh.
func (l *leoCC) SSThresh(st *State) uint32 {
	l.saveCwnd(st)
	return st.SSThreshPkts
}

// SetState follows leocc_set_state.
func (l *leoCC) SetState(st *State, newState CAState) {
	if newState != CALoss {
		return
	}
	l.prevCAState = CALoss
	l.fullBW = 0
	l.roundStart = true
	l.publish(st)
}

func (l *leoCC) defineSignals(st *State) {
	s := st.Signals
	l.sig = leoCCSignals{
		bw:           s.Define("bw", "bps", "bandwidth LeoCC paces and sizes cwnd with (Kalman bw on a jittery path, else the max filter)"),
		maxBW:        s.Define("max_bw", "bps", "windowed max delivery rate (10 rounds)"),
		minRTT:       s.Define("min_rtt", "us", "min RTT: 20 s window, refreshed to the current RTT at a reconfiguration"),
		mode:         s.Define("mode", "enum", "0 startup, 1 drain, 2 dynamic cruise (probe_bw), 3 probe_rtt"),
		pacingGain:   s.Define("pacing_gain", "ratio", "pacing gain"),
		cwndGain:     s.Define("cwnd_gain", "ratio", "cwnd gain"),
		cycleIdx:     s.Define("cycle_idx", "enum", "dynamic-cruise gain-cycle phase (0 is the probe)"),
		fullBW:       s.Define("full_bw", "bps", "bw at the last 25% growth, for full-pipe detection"),
		trigger:      s.Define("reconfiguration_trigger", "bool", "a Starlink reassignment is due or being handled"),
		bwHat:        s.Define("bw_hat", "bps", "Kalman-filtered per-round max delivery rate"),
		rttHat:       s.Define("rtt_hat", "us", "Kalman-filtered RTT"),
		useMaxFilter: s.Define("use_max_filter", "bool", "0 while the Kalman bw replaces the max filter"),
		reconfMaxBW:  s.Define("reconfiguration_max_bw", "bps", "rate the bw filter restarts from after the reconfiguration"),
		refreshes:    s.Define("model_refreshes", "count", "reconfigurations handled: bw filter reset and min_rtt re-measured"),
		targetCwnd:   s.Define("target_cwnd", "pkts", "cwnd target: BDP*cwnd_gain + aggregation + quantization"),
	}
}

func (l *leoCC) publish(st *State) {
	s, id := st.Signals, &l.sig
	bw := l.bwEst()
	if !l.useMaxFilter {
		bw = l.bwHatPost
	}
	s.Set(id.bw, bwToBps(st, bw))
	s.Set(id.maxBW, bwToBps(st, l.bwEst()))
	if l.minRTTUs != noMinRTT {
		s.Set(id.minRTT, float64(l.minRTTUs))
	}
	s.Set(id.mode, float64(l.mode))
	s.Set(id.pacingGain, gainRatio(l.pacingGain))
	s.Set(id.cwndGain, gainRatio(l.cwndGain))
	s.Set(id.cycleIdx, float64(l.cycleIdx))
	s.Set(id.fullBW, bwToBps(st, l.fullBW))
	s.Set(id.trigger, boolSignal(l.reconfTrigger))
	s.Set(id.bwHat, bwToBps(st, l.bwHatPost))
	s.Set(id.rttHat, float64(l.rttHatPost))
	s.Set(id.useMaxFilter, boolSignal(l.useMaxFilter))
	s.Set(id.reconfMaxBW, bwToBps(st, l.reconfMaxBW))
	s.Set(id.refreshes, float64(l.reconfigs))
	s.Set(id.targetCwnd, float64(l.targetCwnd))
}
