package cc

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Prague constants from tcp_prague.c (L4STeam/linux, module version 0.7).
const (
	// PragueAlphaBits is PRAGUE_ALPHA_BITS: alpha is a fraction in units
	// of 2^-24.
	PragueAlphaBits = 24
	// PragueCwndUnit is CWND_UNIT: the fractional window is in units of
	// 2^-20 packets.
	PragueCwndUnit = 20
	// PragueShiftG is PRAGUE_SHIFT_G: the EWMA gain g = 1/2^4.
	PragueShiftG = 4

	pragueMaxAlpha    = 1 << PragueAlphaBits // PRAGUE_MAX_ALPHA
	pragueOneCwnd     = 1 << PragueCwndUnit  // ONE_CWND
	pragueMinCwnd     = 2                    // MIN_CWND_RTT
	pragueMinCwndVirt = 2                    // MIN_CWND_VIRT
	pragueMinRate     = 12500                // MINIMUM_RATE: 100 kbit/s, in bytes/s
	pragueMTUSys      = 1500                 // MTU_SYS
	pragueRateOffset  = 4                    // RATE_OFFSET: 4/128 ≈ 3% pacing swing
	pragueOffsetUnit  = 7                    // OFFSET_UNIT
	pragueHSRTTShift  = 7                    // HSRTT_SHIFT: hsrtt_us's EWMA gain 1/128
	pragueRTT2SecShft = 23                   // RTT2SEC_SHIFT: 2^23 ≈ 8·10^6 = 1 s in srtt_us units
	// pragueMaxScaledRTTUS is MAX_SCALED_RTT: above it the additive
	// increase is not scaled (the scaling's u64 product would overflow).
	pragueMaxScaledRTTUS = 100_000
	// headerBytes turns mss_cache into tcp_mss_to_mtu's MTU: a 20-byte IPv4
	// header and a 32-byte TCP header with the timestamp option.
	headerBytes = 52
)

// PragueCwndMode is prague_cwnd_mode: how the window is kept.
type PragueCwndMode uint8

// The modes of prague_cwnd_mode.
const (
	// PragueFracWin keeps a fractional window and derives the rate.
	PragueFracWin PragueCwndMode = iota
	// PragueRateBased keeps a pacing rate and derives the window.
	PragueRateBased
	// PragueSwitch (the default) uses the rate while the window is at most
	// CwndTransitPkts full-size packets and CE has been seen, else the
	// fractional window.
	PragueSwitch
)

// PragueAlphaMode is prague_alpha_mode: what the first CE mark does.
type PragueAlphaMode uint8

// The modes of prague_alpha_mode.
const (
	// PragueHalveOnFirstMark (the default) starts alpha at 0 and halves
	// the window at the first CE mark, ending slow start.
	PragueHalveOnFirstMark PragueAlphaMode = iota
	// PragueAlphaInitMax starts alpha at 1.
	PragueAlphaInitMax
)

// PragueParams are tcp_prague's module parameters.
type PragueParams struct {
	// BurstShift is prague_burst_shift: a GSO burst lasts at most 2^-n s
	// at the pacing rate (12: ≈ 250 µs).
	BurstShift uint32
	// MaxTSOSegs is prague_max_tso_segs: a cap on the burst; 0: none.
	MaxTSOSegs uint32
	// RTTTransition is prague_rtt_transition: rounds after slow start
	// before the flow becomes RTT-independent.
	RTTTransition uint32
	// RTTTarget is prague_rtt_target: below it the flow grows as if its
	// RTT were RTTTarget. Kept in whole microseconds, as the kernel does.
	RTTTarget sim.Duration
	// AlphaMode is prague_alpha_mode.
	AlphaMode PragueAlphaMode
	// CwndMode is prague_cwnd_mode.
	CwndMode PragueCwndMode
	// CwndTransitPkts is prague_cwnd_transit: PragueSwitch's switching
	// point, in 1500-byte packets.
	CwndTransitPkts uint32
}

// DefaultPragueParams returns the module's defaults.
func DefaultPragueParams() PragueParams {
	return PragueParams{
		BurstShift:      12,
		RTTTransition:   4,
		RTTTarget:       25 * sim.Millisecond,
		AlphaMode:       PragueHalveOnFirstMark,
		CwndMode:        PragueSwitch,
		CwndTransitPkts: 4,
	}
}

// Validate checks p's ranges: the target must be a positive whole number
// of microseconds that fits the kernel's u32 (scaled by 8).
func (p PragueParams) Validate() error {
	switch {
	case p.RTTTarget < sim.Microsecond || p.RTTTarget%sim.Microsecond != 0 ||
		p.RTTTarget/sim.Microsecond > 1<<28:
		return fmt.Errorf("cc: prague: rtt_target = %v, want whole microseconds in 1us..%dus", p.RTTTarget, 1<<28)
	case p.CwndMode > PragueSwitch:
		return fmt.Errorf("cc: prague: cwnd_mode = %d, want 0..2", p.CwndMode)
	case p.AlphaMode > PragueAlphaInitMax:
		return fmt.Errorf("cc: prague: alpha_mode = %d, want 0..1", p.AlphaMode)
	case p.BurstShift > 63:
		return fmt.Errorf("cc: prague: burst_shift = %d, want 0..63", p.BurstShift)
	}
	return nil
}

// Prague is TCP Prague, the L4S scalable congestion control, as
// net/ipv4/tcp_prague.c in the L4STeam/linux tree: DCTCP's per-window CE
// fraction EWMA with a finer alpha, a window reduction of alpha/2 per CE
// episode applied to a fractional window, additive increase only for
// unmarked packets, scaled so that flows below the target RTT (25 ms) grow
// their rate as a 25 ms flow would (RFC 9331 §4.3), Reno-like
// halving on loss, and its own pacing rate and GSO burst size. It
// implements cong_control, so it owns the window and the pacing rate.
//
// Prague needs ECN with AccECN feedback: it reads the sender's delivered_ce
// (State.DeliveredCE), and its packets must carry ECT(1) (see
// ECNCodepoint). Without ECN it hands the flow to Reno (see Fallback).
//
// Left out: the MSS reduction below two packets per virtual RTT
// (prague_update_alpha's tcp_sync_mss, which needs the sender to shrink its
// segments; State.MSS belongs to the sender) and connection logging.
type Prague struct {
	p PragueParams

	cwrStamp      sim.Time // cwr_stamp: last window reduction on CE
	alphaStamp    sim.Time // alpha_stamp: last EWMA update
	upscaledAlpha uint64   // upscaled_alpha: alpha·2^24, ×16 (the EWMA's 1/g)
	aiAckIncrease uint64   // ai_ack_increase: AI per unmarked packet, 2^-20 packets
	hsrtt         uint64   // hsrtt_us: srtt (µs ×8) EWMA, ×128
	fracCwnd      uint64   // frac_cwnd: the window, 2^-20 packets
	rateBytes     uint64   // rate_bytes: the pacing rate, bytes/s
	lossRateBytes uint64   // loss_rate_bytes: rate before the last loss
	lossCwnd      uint32   // loss_cwnd: cwnd before the last loss
	maxTSOBurst   uint32   // max_tso_burst, segments
	oldDelivered  uint32   // delivered at the round's start
	oldDelivCE    uint32   // delivered_ce at the round's start
	nextSeq       uint64   // snd_nxt at the round's start
	round         uint32   // rounds since slow start ended
	priorDelivCE  uint32   // delivered_ce at the previous ACK: rs->ece_delta's base
	sawCE         bool     // saw_ce: there is an AQM on the path
	rateMode      bool     // cwnd_mode == 1: rate-based
	modeTransit   bool     // cwnd_mode_transit: switch modes by window size
	inLoss        bool     // in_loss: reducing after a loss
	reno          bool     // ECN not negotiated: hand over to prague_reno

	sig struct {
		alpha, fracCwnd, rate, aiIncrease, rttIndep, round, ceFrac, inLoss, rateMode SignalID
	}
}

// NewPrague returns Prague with parameters p.
func NewPrague(p PragueParams) (*Prague, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Prague{p: p}, nil
}

func init() {
	Register("prague", func() Algorithm { return &Prague{p: DefaultPragueParams()} })
}

// Name returns "prague".
func (*Prague) Name() string { return "prague" }

// ECNCodepoint returns ECT(1), the L4S identifier (RFC 9331 §4.1), which
// tcp_prague asks for with TCP_CONG_WANTS_ECT_1.
func (r *Prague) ECNCodepoint() packet.ECN { return packet.ECT1 }

// Fallback returns Reno, the kernel's prague_reno, when Init found ECN not
// negotiated (Prague needs it), else nil. The Reno flow sends Not-ECT, as
// prague_release's INET_ECN_dontxmit makes it.
func (r *Prague) Fallback() Algorithm {
	if r.reno {
		return &Reno{}
	}
	return nil
}

// Alpha returns alpha in units of 2^-PragueAlphaBits.
func (r *Prague) Alpha() uint64 { return r.upscaledAlpha >> PragueShiftG }

// FracCwnd returns the fractional window in units of 2^-PragueCwndUnit packets.
func (r *Prague) FracCwnd() uint64 { return r.fracCwnd }

// Init follows prague_init. It also marks the flow paced, as the kernel's
// SK_PACING_NEEDED does.
func (r *Prague) Init(st *State) {
	sg := st.Signals
	r.sig.alpha = sg.Define("alpha", "ratio", "EWMA of the CE-marked fraction per round")
	r.sig.fracCwnd = sg.Define("frac_cwnd", "pkts", "fractional congestion window")
	r.sig.rate = sg.Define("rate", "bps", "rate_bytes: Prague's own pacing rate before the ±3% swing")
	r.sig.aiIncrease = sg.Define("ai_ack_increase", "pkts", "additive increase per unmarked packet, before the 1/cwnd: (rtt/target)² when RTT-independent")
	r.sig.rttIndep = sg.Define("rtt_indep", "bool", "1 when the flow behaves as if its RTT were the target")
	r.sig.round = sg.Define("round", "count", "rounds since slow start ended")
	r.sig.ceFrac = sg.Define("ce_fraction", "ratio", "fraction of packets delivered CE-marked in the last round")
	r.sig.inLoss = sg.Define("in_loss", "bool", "1 while reducing after a loss (classic response)")
	r.sig.rateMode = sg.Define("rate_mode", "bool", "1 while the rate, not the window, is the state (cwnd_mode 1)")
	if !st.ECNOk {
		r.reno = true
		return
	}
	st.Paced = true
	r.alphaStamp = st.Now
	if r.p.AlphaMode == PragueAlphaInitMax {
		r.upscaledAlpha = pragueMaxAlpha << PragueShiftG
	}
	r.fracCwnd = uint64(st.CwndPkts) << PragueCwndUnit
	r.maxTSOBurst = 1
	srtt8 := srttUS8(st)
	if srtt8 != 0 {
		r.rateBytes = (uint64(sim.Second/sim.Microsecond) << 3) * mtu(st) / srtt8
		r.rateBytes = max(pragueMinRate, r.rateBytes*uint64(max(st.CwndPkts, st.InFlightPkts)))
	} else {
		r.rateBytes = pragueMinRate
	}
	r.updatePacingRate(st)
	r.sawCE = st.DeliveredCE != 0
	r.priorDelivCE = st.DeliveredCE
	if srtt8 != 0 {
		r.hsrtt = srtt8 << pragueHSRTTShift
	} else {
		r.hsrtt = 1 << (pragueHSRTTShift + 3) // 1 µs
	}
	r.modeTransit = r.p.CwndMode == PragueSwitch
	r.rateMode = r.p.CwndMode == PragueRateBased
	r.newRound(st)
	r.publish(st)
}

// SSThresh follows prague_ssthresh: Prague reduces in SetState and
// CongControl, so the sender's ssthresh stays as it is.
func (r *Prague) SSThresh(st *State) uint32 { return st.SSThreshPkts }

// CongAvoid does nothing: Prague has no cong_avoid, it grows in
// CongControl, and the sender calls CongAvoid only for algorithms without.
func (*Prague) CongAvoid(*State, uint32) {}

// UndoCwnd follows prague_cwnd_undo: restore the rate before the loss (or
// the progress since), rederive the fractional window from it, and return
// the larger of cwnd and the window before the loss.
func (r *Prague) UndoCwnd(st *State) uint32 {
	r.inLoss = false
	r.rateBytes = max(r.rateBytes, r.lossRateBytes)
	r.fracCwnd = r.pacingRateToFracCwnd(st)
	r.publish(st)
	return max(r.lossCwnd, st.CwndPkts)
}

// SetState follows prague_state: entering Recovery is a loss (classic
// halving), entering CWR a CE-marked round (alpha/2), and Open ends the
// loss response.
func (r *Prague) SetState(st *State, newState CAState) {
	if newState == st.CA {
		return
	}
	switch newState {
	case CARecovery:
		r.enterLoss(st)
	case CACWR:
		r.enterCWR(st)
	case CAOpen:
		r.inLoss = false
	}
	r.publish(st)
}

// CwndEvent follows prague_cwnd_event: an RTO is a loss.
func (r *Prague) CwndEvent(st *State, ev Event) {
	if ev == EventLoss {
		r.enterLoss(st)
		r.publish(st)
	}
}

// CongControl follows prague_cong_control: grow or step the window, close
// the round (alpha) when due, set the pacing rate, and switch between the
// window and rate modes by window size.
func (r *Prague) CongControl(st *State, rs *RateSample) {
	r.updateCwnd(st, rs)
	if r.shouldUpdateEWMA(st) {
		r.updateAlpha(st)
	}
	r.updatePacingRate(st)
	if r.modeTransit {
		cwndBytes := uint64(st.CwndPkts) * mtu(st)
		transit := uint64(r.p.CwndTransitPkts) * pragueMTUSys
		if r.sawCE && cwndBytes <= transit {
			r.rateMode = true
			r.fracCwnd = r.pacingRateToFracCwnd(st)
		} else {
			r.rateMode = false
			r.rateBytes = r.fracCwndToPacingRate(st)
		}
	}
	r.publish(st)
}

// TSOSegs follows prague_tso_segs: the burst that lasts 2^-BurstShift s
// at the pacing rate, capped by MaxTSOSegs when set.
func (r *Prague) TSOSegs(_ *State, _ units.Bytes) uint32 {
	if r.p.MaxTSOSegs != 0 {
		return min(r.maxTSOBurst, r.p.MaxTSOSegs)
	}
	return r.maxTSOBurst
}

// publish records the signals' current values.
func (r *Prague) publish(st *State) {
	sg := st.Signals
	sg.Set(r.sig.alpha, float64(r.Alpha())/pragueMaxAlpha)
	sg.Set(r.sig.fracCwnd, float64(r.fracCwnd)/pragueOneCwnd)
	sg.Set(r.sig.rate, float64(r.rateBytes)*8)
	sg.Set(r.sig.aiIncrease, float64(r.aiAckIncrease)/pragueOneCwnd)
	sg.Set(r.sig.rttIndep, b2f(r.isRTTIndep(st)))
	sg.Set(r.sig.round, float64(r.round))
	sg.Set(r.sig.inLoss, b2f(r.inLoss))
	sg.Set(r.sig.rateMode, b2f(r.rateMode))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
