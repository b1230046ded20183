package cc

import "github.com/ccscope/ccscope/engine/sim"

// Hybla is TCP Hybla as the kernel's net/ipv4/tcp_hybla.c (mainline 6.x;
// Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
// networks", Int. J. Satell. Commun. Netw. 22(5), 2004). It makes window
// growth in time independent of the RTT by normalising it to a reference
// RTT0 = 25 ms: with rho = RTT/RTT0, slow start grows cwnd by 2^rho − 1
// packets per ACK (2^rho per RTT) and congestion avoidance by rho²/cwnd per
// ACK (rho² per RTT), so a 600 ms flow (rho = 24) grows as a 25 ms Reno
// flow does. Loss recovery is Reno's. The kernel's fixed point is kept:
// rho in 1/8 (rho_3ls), rho² and the per-ACK increment in 1/128 packets.
type Hybla struct {
	// struct hybla.
	hyblaEn      bool
	sndCwndCents uint32 // increments below one packet, 1/128 packets
	rho          uint32 // integer part of rho
	rho2         uint32 // integer part of rho²
	rho3ls       uint32 // rho << 3
	rho27ls      uint32 // rho² << 7
	minRTTUs8    uint32 // smallest srtt_us (×8) seen

	s   *Signals
	sig hyblaSignals
}

type hyblaSignals struct{ rho, cents SignalID }

// hyblaRTT0Ms is the module parameter rtt0: the reference RTT, ms.
const hyblaRTT0Ms = 25

func init() { Register("hybla", func() Algorithm { return &Hybla{} }) }

// Name returns "hybla".
func (*Hybla) Name() string { return "hybla" }

// srttUs8 is the kernel's tp->srtt_us: the smoothed RTT in us, scaled by 8
// (State.SRTT holds it exactly, eighths of a µs included).
func srttUs8(st *State) uint32 { return uint32(st.SRTT * 8 / sim.Microsecond) }

// recalcParam follows hybla_recalc_param: rho = srtt/rtt0, at least 1.
func (h *Hybla) recalcParam(st *State) {
	h.rho3ls = max(srttUs8(st)/(hyblaRTT0Ms*1000), 8)
	h.rho = h.rho3ls >> 3
	h.rho27ls = (h.rho3ls * h.rho3ls) << 1
	h.rho2 = h.rho27ls >> 7
}

// Init follows hybla_init: tcp_init_transfer calls it once the handshake
// measured the first RTT, and it sets cwnd to rho (and the clamp to 65535).
func (h *Hybla) Init(st *State) {
	if h.s == nil {
		s := st.Signals
		h.s = s
		h.sig = hyblaSignals{
			rho:   s.Define("rho", "ratio", "rho = srtt/25 ms (kernel rho_3ls/8), at least 1; recomputed at each new srtt minimum"),
			cents: s.Define("snd_cwnd_cents", "pkts", "window increments below one packet not yet applied (kernel unit 1/128)"),
		}
	}
	h.rho, h.rho2, h.rho3ls, h.rho27ls = 0, 0, 0, 0
	h.sndCwndCents = 0
	h.hyblaEn = true
	st.CwndPkts = 2
	st.CwndClampPkts = 65535
	h.recalcParam(st)
	h.minRTTUs8 = srttUs8(st)
	st.CwndPkts = h.rho
	h.publish()
}

// SetState follows hybla_state: Hybla runs in Open only.
func (h *Hybla) SetState(_ *State, s CAState) { h.hyblaEn = s == CAOpen }

// hyblaFraction is hybla_fraction: 2^(odds/8) in 1/128, odds in 0..7.
func hyblaFraction(odds uint32) uint32 {
	fractions := [...]uint32{128, 139, 152, 165, 181, 197, 215, 234}
	if odds < uint32(len(fractions)) {
		return fractions[odds]
	}
	return 128
}

// CongAvoid follows hybla_cong_avoid.
func (h *Hybla) CongAvoid(st *State, acked uint32) {
	if s := srttUs8(st); s < h.minRTTUs8 {
		h.recalcParam(st)
		h.minRTTUs8 = s
	}
	if !st.CwndLimited {
		return
	}
	if !h.hyblaEn {
		renoCongAvoid(st, acked)
		return
	}
	if h.rho == 0 {
		h.recalcParam(st)
	}
	rhoFractions := h.rho3ls - h.rho<<3
	var increment uint32
	slowStart := InSlowStart(st)
	if slowStart {
		// INC = 2^rho − 1 packets, in 1/128: 2^int · 2^fract − 1.
		increment = (1<<min(h.rho, 16))*hyblaFraction(rhoFractions) - 128
	} else {
		// INC = rho²/cwnd packets, in 1/128.
		increment = h.rho27ls / st.CwndPkts
		if increment < 128 {
			st.CwndCnt++
		}
	}
	odd := increment % 128
	st.CwndPkts += increment >> 7
	h.sndCwndCents += odd
	for h.sndCwndCents >= 128 {
		st.CwndPkts++
		h.sndCwndCents -= 128
		st.CwndCnt = 0
	}
	// cwnd has not grown for a while.
	if increment == 0 && odd == 0 && st.CwndCnt >= st.CwndPkts {
		st.CwndPkts++
		st.CwndCnt = 0
	}
	if slowStart {
		st.CwndPkts = min(st.CwndPkts, st.SSThreshPkts)
	}
	st.CwndPkts = min(st.CwndPkts, st.CwndClampPkts)
	h.publish()
}

// SSThresh is tcp_reno_ssthresh, as tcp_hybla.c uses.
func (*Hybla) SSThresh(st *State) uint32 { return max(st.CwndPkts>>1, 2) }

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_hybla.c uses.
func (*Hybla) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (h *Hybla) publish() {
	h.s.Set(h.sig.rho, float64(h.rho3ls)/8)
	h.s.Set(h.sig.cents, float64(h.sndCwndCents)/128)
}
