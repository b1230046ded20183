package cc

import "fmt"

// DCTCP constants from net/ipv4/tcp_dctcp.c.
const (
	// DCTCPMaxAlpha is DCTCP_MAX_ALPHA: alpha is a fraction in units of 1/1024.
	DCTCPMaxAlpha = 1024
	// DCTCPShiftG is the default dctcp_shift_g: the EWMA gain g = 1/2^4.
	DCTCPShiftG = 4
)

// DCTCP is Data Center TCP as the kernel's net/ipv4/tcp_dctcp.c: Reno's
// window growth, and on congestion a reduction by alpha/2, where alpha is a
// per-window EWMA of the fraction of delivered packets that were CE-marked
// (Alizadeh et al., SIGCOMM 2010, §3.1).
//
// Left out on purpose: the receiver's CE state machine
// (dctcp_ece_ack_update in tcp_dctcp.h) runs on the receiver in this
// simulator, which echoes CE per packet; and PLB (tcp_plb_*, off by default
// through sysctl_tcp_plb_enabled), which rehashes flows across paths the
// simulator does not model.
type DCTCP struct {
	p DCTCPParams

	alpha          uint32 // dctcp_alpha, units of 1/DCTCPMaxAlpha
	nextSeq        uint64 // snd_nxt when the current observation window began
	oldDelivered   uint32 // delivered at that time
	oldDeliveredCE uint32 // delivered_ce at that time
	lossCwnd       uint32 // cwnd before the last reduction, for undo
	reno           bool   // ECN not negotiated: hand over to dctcp_reno

	sig struct{ alpha, ceFrac, nextSeq, lossCwnd SignalID }
}

// DCTCPParams are tcp_dctcp's module parameters.
type DCTCPParams struct {
	// ShiftG is dctcp_shift_g: the EWMA gain is g = 1/2^ShiftG.
	ShiftG uint32
	// AlphaOnInit is dctcp_alpha_on_init, in units of 1/DCTCPMaxAlpha;
	// the kernel caps it at DCTCPMaxAlpha.
	AlphaOnInit uint32
}

// DefaultDCTCPParams returns the kernel's defaults: g = 1/16 and alpha
// starting at 1.
func DefaultDCTCPParams() DCTCPParams {
	return DCTCPParams{ShiftG: DCTCPShiftG, AlphaOnInit: DCTCPMaxAlpha}
}

// Validate checks p against the range the kernel's dctcp_shift_g_set
// accepts (0..10, so delivered_ce << (10 − g) is defined).
func (p DCTCPParams) Validate() error {
	if p.ShiftG > 10 {
		return fmt.Errorf("cc: dctcp: shift_g = %d, want 0..10", p.ShiftG)
	}
	return nil
}

// NewDCTCP returns DCTCP with parameters p.
func NewDCTCP(p DCTCPParams) (*DCTCP, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &DCTCP{p: p}, nil
}

func init() {
	Register("dctcp", func() Algorithm { return &DCTCP{p: DefaultDCTCPParams()} })
}

// Name returns "dctcp".
func (*DCTCP) Name() string { return "dctcp" }

// Alpha returns dctcp_alpha in units of 1/DCTCPMaxAlpha.
func (d *DCTCP) Alpha() uint32 { return d.alpha }

// Init follows dctcp_init: alpha starts at dctcp_alpha_on_init (the maximum,
// so the first marks halve the window as classic ECN would) and the first
// observation window starts now. Without ECN the flow falls back to Reno
// (see Fallback).
func (d *DCTCP) Init(st *State) {
	sg := st.Signals
	d.sig.alpha = sg.Define("alpha", "ratio", "dctcp_alpha/1024: EWMA of the CE-marked fraction")
	d.sig.ceFrac = sg.Define("ce_fraction", "ratio", "fraction of packets delivered CE-marked in the last window")
	d.sig.nextSeq = sg.Define("next_seq", "bytes", "snd_nxt at the start of the observation window")
	d.sig.lossCwnd = sg.Define("loss_cwnd", "pkts", "cwnd before the last reduction, restored by undo")
	if !st.ECNOk {
		d.reno = true
		return
	}
	d.alpha = min(d.p.AlphaOnInit, DCTCPMaxAlpha)
	d.lossCwnd = 0
	d.reset(st)
	d.publish(st)
}

// reset follows dctcp_reset: a new observation window from snd_nxt.
func (d *DCTCP) reset(st *State) {
	d.nextSeq = st.SndNxt
	d.oldDelivered = st.Delivered
	d.oldDeliveredCE = st.DeliveredCE
}

// publish records the signals' current values.
func (d *DCTCP) publish(st *State) {
	sg := st.Signals
	sg.Set(d.sig.alpha, float64(d.alpha)/DCTCPMaxAlpha)
	sg.Set(d.sig.nextSeq, float64(d.nextSeq))
	sg.Set(d.sig.lossCwnd, float64(d.lossCwnd))
}

// Fallback returns Reno, the kernel's dctcp_reno, when Init found ECN not
// negotiated, else nil.
func (d *DCTCP) Fallback() Algorithm {
	if d.reno {
		return &Reno{}
	}
	return nil
}

// SSThresh follows dctcp_ssthresh: cwnd·(1 − alpha/2), at least 2. The
// sender calls it once per window of data, on entering CWR or Recovery.
// Like the kernel it also records loss_cwnd for undo: its one side effect,
// on DCTCP's own state, never on st.
func (d *DCTCP) SSThresh(st *State) uint32 {
	d.lossCwnd = st.CwndPkts
	d.publish(st)
	return max(st.CwndPkts-(st.CwndPkts*d.alpha)>>11, 2)
}

// CongAvoid is tcp_reno_cong_avoid.
func (*DCTCP) CongAvoid(st *State, acked uint32) { (&Reno{}).CongAvoid(st, acked) }

// UndoCwnd follows dctcp_cwnd_undo: the larger of cwnd and the window
// before the reduction.
func (d *DCTCP) UndoCwnd(st *State) uint32 {
	return max(st.CwndPkts, d.lossCwnd)
}

// InAckEvent follows dctcp_update_alpha: once snd_una passes the end of the
// observation window, fold the window's CE-marked fraction F into alpha,
// alpha ← alpha − alpha·g + F·g, in the kernel's integers (F·g·1024 is
// delivered_ce << (10 − g) / delivered, truncated), and start a new window.
func (d *DCTCP) InAckEvent(st *State, _ AckFlags) {
	if seqBefore(st.SndUna, d.nextSeq) {
		return
	}
	delivered := st.Delivered - d.oldDelivered
	deliveredCE := st.DeliveredCE - d.oldDeliveredCE
	alpha := d.alpha
	// min_not_zero(alpha, alpha >> g): alpha >> g, or alpha itself once
	// that is zero, so a small alpha decays to 0 instead of sticking.
	if dec := alpha >> d.p.ShiftG; dec != 0 {
		alpha -= dec
	} else {
		alpha = 0
	}
	if deliveredCE > 0 {
		inc := (deliveredCE << (10 - d.p.ShiftG)) / max(1, delivered)
		alpha = min(alpha+inc, DCTCPMaxAlpha)
	}
	d.alpha = alpha
	if delivered > 0 {
		st.Signals.Set(d.sig.ceFrac, float64(deliveredCE)/float64(delivered))
	}
	d.reset(st)
	d.publish(st)
}

// SetState follows dctcp_state: entering Recovery is a loss, which DCTCP
// answers as Reno does (dctcp_react_to_loss). The RTO's loss is handled in
// CwndEvent so it is counted once.
func (d *DCTCP) SetState(st *State, newState CAState) {
	if newState == CARecovery && newState != st.CA {
		d.reactToLoss(st)
	}
}

// CwndEvent follows dctcp_cwnd_event: CA_EVENT_LOSS (an RTO) is a loss.
// The ECN_IS_CE / ECN_NO_CE events drive the receiver's echo state
// machine, which lives in the receiver here.
func (d *DCTCP) CwndEvent(st *State, ev Event) {
	if ev == EventLoss {
		d.reactToLoss(st)
	}
}

// reactToLoss follows dctcp_react_to_loss: remember the window and halve
// it, overriding the alpha-based ssthresh the sender just stored.
func (d *DCTCP) reactToLoss(st *State) {
	d.lossCwnd = st.CwndPkts
	st.SSThreshPkts = max(st.CwndPkts>>1, 2)
	d.publish(st)
}
