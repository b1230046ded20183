package cc

// Bic is BIC-TCP as the kernel's net/ipv4/tcp_bic.c (mainline 6.x, whose
// arithmetic has not changed since 3.18 made tcp_cong_avoid_ai count the
// packets an ACK acks): binary search towards the window of the last loss,
// W_max, with at most max_increment packets per RTT; past W_max a slow
// "max probing"; below low_window Reno's increase and halving.
//
// One kernel quirk ports with it: bictcp_update divides cnt by the
// delayed-ACK ratio it tracks in bictcp_acked, while tcp_cong_avoid_ai
// already credits every packet an ACK acks, so the ratio is counted twice.
// With one ACK per packet the ratio's EWMA, started at 2, settles at
// 31/16 (delayed_ack += 1 − delayed_ack>>4 stops at 31), so BIC grows about
// 31/16 times as fast as its nominal increments; with delayed ACKs, twice.
type Bic struct {
	// struct bictcp.
	cnt         uint32 // increase cwnd by 1 after cnt packets
	lastMaxCwnd uint32 // W_max, packets
	lastCwnd    uint32
	lastTime    uint32 // jiffies of the last cnt update
	epochStart  uint32 // jiffies; 0: no epoch
	delayedAck  uint32 // packets per ACK, << bicAckRatioShift

	s   *Signals
	sig bicSignals
}

type bicSignals struct{ lastMaxCwnd, cnt, ackRatio SignalID }

// The module parameters of tcp_bic.c at their defaults, and its constants.
const (
	bicBetaScale       = 1024 // BICTCP_BETA_SCALE
	bicB               = 4    // BICTCP_B: binary search goes to (max+min)/B
	bicMaxIncrement    = 16   // max_increment: packets per RTT at most
	bicLowWindow       = 14   // low_window: Reno below this
	bicBeta            = 819  // beta: the window kept on loss, /1024
	bicSmoothPart      = 20   // smooth_part: RTTs from W_max−B to W_max
	bicAckRatioShift   = 4    // ACK_RATIO_SHIFT
	bicFastConvergence = true
)

func init() { Register("bic", func() Algorithm { return &Bic{} }) }

// Name returns "bic".
func (*Bic) Name() string { return "bic" }

// reset follows bictcp_reset.
func (b *Bic) reset() {
	b.cnt, b.lastMaxCwnd, b.lastCwnd, b.lastTime, b.epochStart = 0, 0, 0, 0, 0
	b.delayedAck = 2 << bicAckRatioShift
}

// Init follows bictcp_init (initial_ssthresh is 0: ssthresh stays
// infinite) and defines BIC's signals.
func (b *Bic) Init(st *State) {
	s := st.Signals
	b.s = s
	b.sig = bicSignals{
		lastMaxCwnd: s.Define("last_max_cwnd", "pkts", "W_max: cwnd at the last loss, after fast convergence"),
		cnt:         s.Define("cnt", "acks", "packets acked per one-packet increase of cwnd"),
		ackRatio:    s.Define("ack_ratio", "pkts", "packets per ACK, the EWMA bictcp_acked keeps (delayed_ack/16)"),
	}
	b.reset()
	b.publish()
}

// update follows bictcp_update: choose cnt for the current window at most
// once per HZ/32 jiffies unless the window changed.
func (b *Bic) update(st *State, cwnd uint32) {
	now := jiffies(st, st.Now)
	if b.lastCwnd == cwnd && int32(now-b.lastTime) <= int32(hz(st)/32) {
		return
	}
	b.lastCwnd = cwnd
	b.lastTime = now
	if b.epochStart == 0 {
		b.epochStart = now
	}
	if cwnd <= bicLowWindow {
		b.cnt = cwnd // start off normal: Reno
		return
	}
	if cwnd < b.lastMaxCwnd {
		dist := (b.lastMaxCwnd - cwnd) / bicB
		switch {
		case dist > bicMaxIncrement:
			b.cnt = cwnd / bicMaxIncrement // linear increase
		case dist <= 1:
			b.cnt = cwnd * bicSmoothPart / bicB // binary search, near W_max
		default:
			b.cnt = cwnd / dist // binary search increase
		}
	} else {
		switch {
		case cwnd < b.lastMaxCwnd+bicB:
			b.cnt = cwnd * bicSmoothPart / bicB // slow start at W_max
		case cwnd < b.lastMaxCwnd+bicMaxIncrement*(bicB-1):
			b.cnt = cwnd * (bicB - 1) / (cwnd - b.lastMaxCwnd) // slow start
		default:
			b.cnt = cwnd / bicMaxIncrement // linear increase
		}
	}
	// In slow start or at very low utilisation: at least 5% per RTT.
	if b.lastMaxCwnd == 0 && b.cnt > 20 {
		b.cnt = 20
	}
	b.cnt = (b.cnt << bicAckRatioShift) / b.delayedAck
	if b.cnt == 0 {
		b.cnt = 1
	}
}

// CongAvoid follows bictcp_cong_avoid.
func (b *Bic) CongAvoid(st *State, acked uint32) {
	if !st.CwndLimited {
		return
	}
	if InSlowStart(st) {
		acked = SlowStart(st, acked)
		if acked == 0 {
			return
		}
	}
	b.update(st, st.CwndPkts)
	CongAvoidAI(st, b.cnt, acked)
	b.publish()
}

// SSThresh follows bictcp_recalc_ssthresh: W_max is the window now (less,
// with fast convergence, if it fell short of the previous W_max), and the
// window keeps beta = 819/1024 of itself, or half below low_window. The
// hook is the kernel's: it updates W_max although it returns a value.
func (b *Bic) SSThresh(st *State) uint32 {
	cwnd := st.CwndPkts
	b.epochStart = 0 // end of epoch
	if cwnd < b.lastMaxCwnd && bicFastConvergence {
		b.lastMaxCwnd = cwnd * (bicBetaScale + bicBeta) / (2 * bicBetaScale)
	} else {
		b.lastMaxCwnd = cwnd
	}
	b.publish()
	if cwnd <= bicLowWindow {
		return max(cwnd>>1, 2)
	}
	return max(cwnd*bicBeta/bicBetaScale, 2)
}

// SetState follows bictcp_state: an RTO forgets everything.
func (b *Bic) SetState(_ *State, s CAState) {
	if s == CALoss {
		b.reset()
		b.publish()
	}
}

// PktsAcked follows bictcp_acked: in Open, the packets-per-ACK ratio's
// EWMA, ratio = (15·ratio + sample)/16 in 1/16 units.
func (b *Bic) PktsAcked(st *State, s AckSample) {
	if st.CA == CAOpen {
		b.delayedAck += s.PktsAcked - b.delayedAck>>bicAckRatioShift
		b.publish()
	}
}

// UndoCwnd is tcp_reno_undo_cwnd, as tcp_bic.c uses.
func (*Bic) UndoCwnd(st *State) uint32 { return max(st.CwndPkts, st.PriorCwndPkts) }

// publish records the signals; Set drops unchanged values.
func (b *Bic) publish() {
	if b.s == nil {
		return
	}
	b.s.Set(b.sig.lastMaxCwnd, float64(b.lastMaxCwnd))
	b.s.Set(b.sig.cnt, float64(b.cnt))
	b.s.Set(b.sig.ackRatio, float64(b.delayedAck)/(1<<bicAckRatioShift))
}
