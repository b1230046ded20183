// Package tcp is the TCP endpoint: a sender that follows the Linux kernel's
// tcp_output.c, tcp_input.c, tcp_recovery.c, tcp_timer.c and tcp_rate.c, and
// a receiver. A flow's two ends exchange simulated packets through the
// network; the congestion-control algorithm plugs in through engine/cc.
package tcp

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Kernel constants of the sender. TCP_INIT_CWND, TCP_INFINITE_SSTHRESH,
// sk_gso_max_size and the pacing ratios are engine/cc's (cc.InitCwnd, ...),
// shared with the CC harness.
const (
	gsoMaxSegs  = 65535 // GSO_MAX_SEGS
	pacingShift = 10    // sk_pacing_shift default
	tsoRTTLog   = 9     // sysctl_tcp_tso_rtt_log
	minTSOSegs  = 2     // sysctl_tcp_min_tso_segs
	tsoWinDiv   = 3     // sysctl_tcp_tso_win_divisor
	unpacedSegs = 10    // sch_fq / EDT: the first 10 segments go unpaced
)

// SenderConfig configures the sending end of a flow.
type SenderConfig struct {
	Flow int32 // flow index (packet.Packet.Flow)
	Node int32 // the sending node
	Peer int32 // the receiving node
	Opts config.TCPOptions
	CC   cc.Algorithm
	RNG  *rand.Rand // the CC's stream (rng.Stream(seed, "flow/<id>/cc"))
	// PeerTSOffset is the receiver's tsoffset (secure_tcp_ts_off), which
	// Linux adds to every timestamp it sends: random with tcp_timestamps 1,
	// 0 with 2. The simulated receiver stamps its clock as it is; the
	// sender adds the offset where the kernel would read it, in rcv_tsval.
	PeerTSOffset uint32
	// Clock is the host's kernel clock at time 0 (config.KernelClock):
	// jiffies, the timer wheel and the timestamp clock count from it.
	Clock sim.Duration
	// ECN requests ECN in the SYN; Echo says which kind (EchoAccECN asks for
	// AccECN and marks ECT(1), the others classic ECN with ECT(0)).
	ECN   bool
	Echo  EchoMode
	Start sim.Time
	Size  units.Bytes // payload to send; 0: unbounded
	App   config.AppPattern
	// HostFQ says the sending node's egress qdisc is fq. sch_fq sets
	// sk_pacing_status = SK_PACING_FQ on the first packet it sees of a
	// socket, and TCP then stamps every packet with its departure time
	// (EDT), which fq enforces: with Opts.Pacing auto such a flow is paced.
	HostFQ bool
	// Relay, if set, is an application that writes only what a relay has
	// fed it (relay.go); App is then ignored.
	Relay *Relay
	// Recycler, if set, lends the scoreboard a ring of a finished sender's
	// and takes it back at Recycle.
	Recycler *Recycler
}

// SenderStats are a sender's counters for the summary.
type SenderStats struct {
	BytesSent   units.Bytes // payload bytes handed to the network, retransmissions included
	SegsSent    uint64      // data segments sent, retransmissions included
	Retransmits uint64      // data segments retransmitted, loss probes included
	BytesAcked  units.Bytes // payload bytes cumulatively acknowledged
	FirstSend   sim.Time    // first data segment sent
	Started     bool        // FirstSend is valid
	Done        sim.Time    // Size fully acknowledged; 0 if not (yet)
	SYNRetrans  uint32      // SYN retransmissions
	RTOs        uint64      // retransmission timeouts
	TLPs        uint64      // loss probes sent
	Recoveries  uint64      // fast recovery episodes
	Undos       uint64      // reductions undone
	// WindowProbes counts zero-length window probes (LINUX_MIB_TCPWINPROBE).
	WindowProbes uint64
	// Aborted says why the sender gave up on the connection (tcp_write_err:
	// ETIMEDOUT), at AbortedAt; NotAborted while it stands.
	Aborted   AbortReason
	AbortedAt sim.Time
	RTT       trace.Hist // every RTT sample, ps
	// DeliveryRate is the latest delivery-rate sample (tcp_rate_gen) that
	// was not app-limited, in payload bits per second.
	DeliveryRate units.BitRate
}

// AbortReason is why a sender timed its connection out (tcp_write_err).
type AbortReason uint8

const (
	NotAborted AbortReason = iota
	// AbortSYNRetries: no SYN-ACK after tcp_syn_retries +
	// tcp_syn_linear_timeouts SYN retransmissions.
	AbortSYNRetries
	// AbortRetries2: retransmission timeouts for longer than tcp_retries2's
	// modelled time, 924.6 s from the first retransmission.
	AbortRetries2
	// AbortWindowProbes: tcp_retries2 zero-window probes in a row went
	// unanswered.
	AbortWindowProbes
)

// String names the reason as the summary's abort_reason does.
func (r AbortReason) String() string {
	return [...]string{"", "syn_retries", "retries2", "window_probes"}[r]
}

// connection states the sender goes through.
type sndState uint8

const (
	sndClosed sndState = iota
	sndSynSent
	sndEstablished
	sndFailed // timed out (Stats.Aborted says why)
)

// what the write timer is armed for (icsk_pending).
type pendingTimer uint8

const (
	timeNone pendingTimer = iota
	timeRetrans
	timeReoTimeout
	timeLossProbe
	timeProbe0 // the zero-window probe (persist) timer, ICSK_TIME_PROBE0
)

const (
	kindXmit sim.Kind = iota + 1
	kindPace
	kindApp
)

// DataSender is the sending end of a TCP flow.
type DataSender struct {
	cfg  SenderConfig
	s    *sim.Sim
	pool *packet.Pool
	out  Sender
	rec  *trace.Recorder
	self int32

	xmitTimer wheelTimer // RTO, TLP, RACK reordering timeout, SYN (icsk_retransmit_timer)
	paceTimer *sim.Timer // internal pacing (tp->pacing_timer)
	appTimer  *sim.Timer // application writes and connection start
	pending   pendingTimer

	hooks   cc.Hooks
	st      cc.State
	signals *cc.Signals
	sigSink signalSink

	sb   *scoreboard
	rtt  rttEstimator
	rate cc.RateState
	rack rackState

	state sndState
	mss   uint64

	sndUna    uint64
	sndNxt    uint64
	writeSeq  uint64     // end of the data the application has written
	wq        writeQueue // the skbs of [sndNxt, writeSeq)
	pushedSeq uint64     // writeSeq at the last push mark (tcp_mark_push)
	feedSeq   uint64     // where a relay's last write call (Feed) began
	// smlSeq stands for snd_sml, the end of the last sub-MSS segment sent
	// (tcp_minshall_update): here where a greedy writer's call left one,
	// as the application writes whole segments (pushRemnant).
	smlSeq uint64
	endSeq uint64 // end of the flow's data (1+Size), or 0 when unbounded
	sndWnd uint64
	maxWnd uint64
	sndBuf uint64 // sk_sndbuf: grown for a greedy writer (sndbufExpand); else tcp_wmem[2], 0 unlimited

	// Recovery (struct tcp_sock fields of the same names).
	highSeq        uint64
	undo           undoState
	retransStamp   uint32
	prr            cc.PRR
	reordering     uint32
	reordSeen      uint32
	frto           bool
	tlp            tlpState
	retransmits    uint32 // icsk_retransmits
	backoff        uint   // icsk_backoff: RTOs and window probes since the last RTT sample
	probesOut      uint32 // icsk_probes_out: window probes not answered by an ACK
	rcvTstamp      int64  // tp->rcv_tstamp: the tick of the last acceptable ACK
	highestSackEnd uint64
	rtxHint        uint64 // lowest segment that may be lost and not retransmitted
	lostHint       uint64 // tcp_mark_head_lost's resume point (lost_skb_hint)
	lostCntHint    uint32 // sacked segments below lostHint (lost_cnt_hint)
	dsackDups      uint32
	totalRetrans   uint32
	lost           uint32 // tp->lost
	rto            sim.Duration

	cwndUse   cc.CwndUse
	lsndTime  sim.Time
	cwndStamp sim.Time // snd_cwnd_stamp
	cwndUsed  uint32   // snd_cwnd_used

	// ECN.
	ecnOK      bool
	accECN     bool
	queueCWR   bool
	lastCEByte uint32 // the option's CE byte counter as last taken (delivered_ecn_bytes[CE])

	// Pacing.
	paced          bool     // sk_pacing_status != SK_PACING_NONE
	wstamp         sim.Time // tcp_wstamp_ns
	pacingOverride units.BitRate

	// Timestamps (RFC 7323).
	tsRecent uint32 // the peer's; the ACK's own option is in st (RcvTSVal, RcvTSEcr)

	// Application.
	appOn     bool
	appOwed   uint64 // rate app: bytes written but not yet fitting the send buffer
	appAsleep bool   // greedy or on/off app: it waits to be woken (fillWrite)
	synSentAt sim.Time
	synStamp  uint32 // the first SYN's TSval: tp->retrans_stamp in SYN-SENT
	oowAck    int64  // the last challenge ACK (tp->last_oow_ack_time), for oowRateLimited

	flowSmp  trace.FlowSampler
	scratch  [][2]uint64
	ackState sackTagState

	// Stats are the sender's counters.
	Stats SenderStats
}

// NewSender registers a sender with s; it connects at c.Start. out puts
// packets on the network at the sending node; rec records the sender's
// state, its events and the CC's signals (at summary detail: nothing).
func NewSender(s *sim.Sim, pool *packet.Pool, out Sender, rec *trace.Recorder, c SenderConfig) *DataSender {
	d := &DataSender{cfg: c, s: s, pool: pool, out: out, rec: rec, mss: uint64(c.Opts.MSS),
		reordering: reorderingInit, rto: timeoutInit, appOn: true}
	if d.mss == 0 {
		d.mss = 1448
	}
	d.self = s.Register(d, "tcp-sender")
	d.xmitTimer.t = s.NewTimer(d.self, kindXmit)
	d.paceTimer = s.NewTimer(d.self, kindPace)
	d.appTimer = s.NewTimer(d.self, kindApp)
	d.sb = newScoreboard(d.mss, c.Recycler)
	d.rtt.hz = newHZClock(c.Opts.HZ, c.Clock)
	d.st.HZ, d.st.Clock = uint32(d.rtt.hz.HZ()), c.Clock
	d.rack.reoWndSteps = 1
	if c.Size > 0 {
		d.endSeq = 1 + uint64(c.Size)
	}
	d.hooks = cc.Resolve(c.CC)
	d.sb.restamp = d.hooks.MarkedLost != nil
	d.sigSink = signalSink{rec: rec, flow: c.Flow}
	d.signals = cc.NewSignals(&d.sigSink, &d.st.Now)
	d.sigSink.sig = d.signals
	d.st.Signals = d.signals
	d.st.MSS = units.Bytes(d.mss)
	d.st.CwndClampPkts = ^uint32(0)
	d.st.GSOMaxSegs = gsoMaxSegs
	// tcp_ecn_send_syn sets TCP_ECN_LOW from the route (ecn_low) only when
	// it asks for ECN; the CC still checks that ECN was negotiated.
	d.st.ECNLow = c.ECN && c.Opts.ECNLow
	d.paced = initialPacing(c.Opts.Pacing, c.HostFQ)
	d.appTimer.Arm(c.Start)
	return d
}

// Handle dispatches the sender's timers.
func (d *DataSender) Handle(ev sim.Event) {
	d.st.Now = ev.At
	switch ev.Kind {
	case kindXmit:
		d.writeTimer()
	case kindPace:
		d.paceKick()
	case kindApp:
		d.appEvent()
	}
	d.record()
	if LivenessViolation != nil {
		d.checkLiveness()
	}
}

// Receive processes a packet of this flow arriving at the sending node: the
// SYN-ACK or an ACK. It frees the packet.
func (d *DataSender) Receive(id packet.ID) {
	p := d.pool.Get(id)
	d.st.Now = d.s.Now()
	switch d.state {
	case sndSynSent:
		if p.Flags&packet.SYN != 0 && p.Flags&packet.ACK != 0 && p.Ack == 1 {
			d.synAck(p)
		}
	case sndEstablished:
		if p.Flags&packet.SYN == 0 && !d.pawsRejects(p) {
			d.ack(p)
		} else if !oowRateLimited(d.rtt.hz, d.st.Now, &d.oowAck) {
			// A SYN-ACK again (the receiver answered a retransmitted
			// SYN), or an ACK that fails PAWS: tcp_validate_incoming
			// discards it and answers, a challenge ACK or a dupack, under
			// one per-socket limit.
			d.sendBareAck(d.sndNxt)
		}
	}
	d.pool.Free(id)
	d.record()
	if LivenessViolation != nil {
		d.checkLiveness()
	}
}

// pawsRejects follows tcp_validate_incoming's PAWS test for an ACK from
// the receiver (a pure ACK at the sender's rcv_nxt): one whose TSval lags
// ts_recent by more than TCP_PAWS_WINDOW fails tcp_paws_check, and
// tcp_disordered_ack_check excuses it only as a duplicate ACK (ack ==
// snd_una) that would not update the window (mayUpdateWindow) and lags by
// no more than tcp_tsval_replay, the RTO in ticks of a 1200 Hz clock. So
// an ACK overtaken by 2 ms or more is discarded, SACK blocks and all.
func (d *DataSender) pawsRejects(p *packet.Packet) bool {
	lag := int32(d.tsRecent - p.TSVal)
	if p.TSVal == 0 || d.tsRecent == 0 || lag <= pawsWindow {
		return false
	}
	if p.Ack != d.sndUna || d.mayUpdateWindow(p.Ack, uint64(p.Wnd)) {
		return true
	}
	replay := int64(d.rto/d.rtt.hz.jiffy()) * 1200 / d.rtt.hz.HZ()
	return int64(lag) > replay
}

// CC is the flow's congestion-control algorithm.
func (d *DataSender) CC() cc.Algorithm { return d.hooks.Algorithm }

// CCFinal returns the last value of each signal the CC defined.
func (d *DataSender) CCFinal() map[string]float64 { return cc.FinalValues(d.CCSignals()) }

// CCSignals returns the names of the signals the CC defined and their last
// values (NaN for one never set).
func (d *DataSender) CCSignals() ([]string, []float64) {
	defs := d.signals.Defs()
	names, vals := make([]string, len(defs)), make([]float64, len(defs))
	for i, def := range defs {
		names[i], vals[i] = def.Name, d.signals.Value(cc.SignalID(i))
	}
	return names, vals
}

// Cwnd is snd_cwnd in packets.
func (d *DataSender) Cwnd() uint32 { return d.st.CwndPkts }

// SSThresh is snd_ssthresh in packets.
func (d *DataSender) SSThresh() uint32 { return d.st.SSThreshPkts }

// SRTT is the smoothed RTT.
func (d *DataSender) SRTT() sim.Duration { return d.rtt.srtt() }

// RTO is the current retransmission timeout, backoff included.
func (d *DataSender) RTO() sim.Duration { return d.rto }

// PacingRate is the rate the sender paces at (an override if one is set).
func (d *DataSender) PacingRate() units.BitRate { return d.pacingRate() }

// CAState is the congestion-avoidance state.
func (d *DataSender) CAState() cc.CAState { return d.st.CA }

// SetCwnd sets snd_cwnd now (an action) and sends what it allows. Before
// the connection is up it also becomes the initial window, as the
// initcwnd route option (tcp_init_cwnd) or TCP_BPF_IW would make it:
// otherwise the handshake's end (synAck) would reset it to IW10.
func (d *DataSender) SetCwnd(pkts uint32) {
	d.st.Now = d.s.Now()
	if d.state != sndEstablished {
		d.cfg.Opts.InitCwnd = max(pkts, 1)
	}
	d.st.CwndPkts = max(pkts, 1)
	d.push()
	d.record()
	if LivenessViolation != nil {
		d.checkLiveness()
	}
}

// CAEvent raises ev through the CC's cwnd_event hook now, as tcp_ca_event
// does, for events the network side announces (cc.EventHandover). Before
// the handshake completes the CC has not been initialised (its init runs in
// synAck, as tcp_init_congestion_control runs in tcp_init_transfer), so
// there is no CC state to tell yet: the event is dropped, as it is for a
// group's flow that has not started.
func (d *DataSender) CAEvent(ev cc.Event) {
	if d.state != sndEstablished {
		return
	}
	d.st.Now = d.s.Now()
	d.caEvent(ev)
	d.record()
}

// SetPacingRate overrides sk_pacing_rate until cleared with 0: the CC's
// and the sender's own pacing-rate updates are ignored meanwhile. Like
// setsockopt(SO_MAX_PACING_RATE) or a BPF program setting it, a rate moves
// sk_pacing_status from SK_PACING_NONE to SK_PACING_NEEDED, so an unpaced
// flow is paced from then on.
func (d *DataSender) SetPacingRate(r units.BitRate) {
	d.st.Now = d.s.Now()
	d.pacingOverride = r
	if r > 0 {
		d.paced = true
	}
	d.push()
	d.record()
	if LivenessViolation != nil {
		d.checkLiveness()
	}
}

// pacingRate is sk_pacing_rate in bits per second; 0 means unlimited (~0UL).
func (d *DataSender) pacingRate() units.BitRate {
	if d.pacingOverride > 0 {
		return d.pacingOverride
	}
	return d.st.PacingRate
}

// initialPacing is sk_pacing_status before the CC's init hook, as a
// pacing switch and the host's qdisc set it: "auto" is SK_PACING_NONE on a
// host without fq and SK_PACING_FQ behind fq; true stands for a host that
// paces (fq), false for one that does not. A CC that needs pacing moves
// SK_PACING_NONE to SK_PACING_NEEDED in its init hook (bbr_init's
// cmpxchg), whatever the switch says.
//
// Both paced states pace the same way here: the sender stamps each packet
// with tcp_wstamp_ns and holds it until then (tcp_pacing_check), so that an
// fq qdisc finds it due on arrival. The kernel hands EDT packets to fq at
// once and lets TCP Small Queues bound what waits there; the departure
// times, hence the packets on the wire, are the same.
func initialPacing(p config.Pacing, hostFQ bool) bool {
	switch p {
	case config.PacingOn:
		return true
	case config.PacingOff:
		return false
	}
	return hostFQ
}

// fillState refreshes the read-only fields of the CC's state.
func (d *DataSender) fillState() {
	st := &d.st
	st.InFlightPkts = d.sb.inFlight()
	st.CwndLimited = d.cwndLimited()
	st.IsCwndLimited = d.cwndUse.IsCwndLimited
	st.TLPOrigDataAppLimited = d.tlp.origAppLimited
	st.Delivered = d.rate.Delivered
	st.DeliveredCE = d.rate.DeliveredCE
	st.Lost = d.lost
	st.AppLimited = d.rate.AppLimited
	st.SRTT = sim.Duration(d.rtt.srttUs8) * sim.Microsecond / 8
	if d.rtt.minRTT.valid {
		st.MinRTT = sim.Duration(d.rtt.minRTTUs()) * sim.Microsecond
	}
	st.ECNOk = d.ecnOK
	st.Paced = d.paced
	st.LastSend = d.lsndTime
	st.DeliveredTime = d.rate.DeliveredAt
	st.NextDepartureTime = d.wstamp
	st.SndUna, st.SndNxt = d.sndUna, d.sndNxt
	st.SackedOut = d.sb.sackedOut
}

// setCAState follows tcp_set_ca_state: the CC hears of it first.
func (d *DataSender) setCAState(s cc.CAState) {
	if d.hooks.SetState != nil {
		d.fillState()
		d.hooks.SetState.SetState(&d.st, s)
	}
	d.st.CA = s
}

// caEvent follows tcp_ca_event.
func (d *DataSender) caEvent(ev cc.Event) {
	if d.hooks.CwndEvent != nil {
		d.fillState()
		d.hooks.CwndEvent.CwndEvent(&d.st, ev)
	}
}

// ssthresh calls the CC's ssthresh hook.
func (d *DataSender) ssthresh() uint32 {
	d.fillState()
	return d.hooks.SSThresh(&d.st)
}

// cwndLimited is tcp_is_cwnd_limited.
func (d *DataSender) cwndLimited() bool { return d.cwndUse.CwndLimited(&d.st) }

// inCwndReduction is tcp_in_cwnd_reduction: CWR or Recovery.
func (d *DataSender) inCwndReduction() bool { return cc.InCwndReduction(&d.st) }

// currentSSThresh is tcp_current_ssthresh.
func (d *DataSender) currentSSThresh() uint32 { return cc.CurrentSSThresh(&d.st) }

// isSACK is tcp_is_sack; without it the sender runs NewReno recovery.
func (d *DataSender) isSACK() bool { return d.cfg.Opts.SACK }

// isRACK is tcp_is_rack of kernels before 6.17 (sysctl_tcp_recovery &
// TCP_RACK_LOSS_DETECTION); 6.17 and later always use RACK, so false gives
// the older kernels' dupack-threshold recovery, for ablation.
func (d *DataSender) isRACK() bool { return d.cfg.Opts.RACK }

// tsNow is tcp_time_stamp_ts: the sender's millisecond clock for the TS
// option, offset by one so it is never 0 (0 means "no timestamp").
func (d *DataSender) tsNow() uint32 { return d.rtt.hz.ms(d.st.Now) + 1 }

// record writes the sender's state row to the trace.
func (d *DataSender) record() {
	if !d.rec.On() {
		return
	}
	row := d.Snapshot()
	d.rec.RecordFlow(&d.flowSmp, &row)
}

// Snapshot returns the sender's state now, as the flows trace table records
// it.
func (d *DataSender) Snapshot() trace.FlowRow {
	var rate int64
	if d.rate.RateInterval > 0 {
		rate = int64(units.RateOf(units.Bytes(uint64(d.rate.RateDelivered)*d.mss), d.rate.RateInterval))
	}
	var minRTT sim.Duration
	if d.rtt.minRTT.valid {
		minRTT = sim.Duration(d.rtt.minRTTUs()) * sim.Microsecond
	}
	return trace.FlowRow{T: d.st.Now, Flow: d.cfg.Flow, CwndPkts: d.st.CwndPkts,
		SSThreshPkts: d.st.SSThreshPkts, InflightBytes: int64(uint64(d.sb.inFlight()) * d.mss),
		InflightPkts: d.sb.inFlight(), SRTT: d.rtt.srtt(), RTTVar: d.rtt.rttvar(), MinRTT: minRTT,
		PacingRateBps: int64(d.pacingRate()), DeliveryRateBps: rate, Delivered: uint64(d.rate.Delivered),
		Lost: uint64(d.lost), Retrans: uint64(d.totalRetrans), CAState: uint8(d.st.CA)}
}

// event records a discrete event when tracing is on.
func (d *DataSender) event(k trace.EventKind, seq uint64, length uint32) {
	d.rec.RecordEvent(d.st.Now, d.cfg.Flow, k, int64(seq), int32(length))
}

// signalSink writes a flow's CC signals to the trace's signals table.
type signalSink struct {
	rec  *trace.Recorder
	sig  *cc.Signals
	flow int32
	ids  []int32                // SignalID → Recorder.Signals index
	smp  []*trace.SignalSampler // SignalID → its clock in a sampled trace
}

// RecordSignal implements cc.SignalSink. A sampled trace samples each
// signal on its own clock, so signals that change at one instant (a
// round's start, a mode change) are all kept.
func (k *signalSink) RecordSignal(t sim.Time, id cc.SignalID, v float64) {
	if !k.rec.On() {
		return
	}
	for int(id) >= len(k.ids) {
		k.ids = append(k.ids, k.rec.SignalIndex(k.sig.Defs()[len(k.ids)].Name))
		k.smp = append(k.smp, new(trace.SignalSampler)) // the recorder may hold it
	}
	k.rec.RecordSignal(k.smp[id], t, k.flow, k.ids[id], v)
}
