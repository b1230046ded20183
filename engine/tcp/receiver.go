package tcp

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Event kinds of the receiver's timers.
const (
	kindDelack   sim.Kind = 1 // icsk_delack_timer
	kindCompress sim.Kind = 2 // tp->compressed_ack_timer (an hrtimer)
	kindGRO      sim.Kind = 3 // the end of a GRO coalescing interval
)

// Kernel constants (include/net/tcp.h; those counted in jiffies are
// hzClock's).
const (
	tcpMaxQuickacks      = 16                    // TCP_MAX_QUICKACKS
	tcpMssDefault        = 536                   // TCP_MSS_DEFAULT
	tcpMinMss            = 88                    // TCP_MIN_MSS
	tcpNumSacks          = 4                     // TCP_NUM_SACKS: blocks remembered (3 fit beside timestamps)
	tcpFastRetransThresh = 3                     // TCP_FASTRETRANS_THRESH
	compSackNr           = 44                    // sysctl_tcp_comp_sack_nr
	compSackDelay        = 1 * sim.Millisecond   // sysctl_tcp_comp_sack_delay_ns
	compSackSlack        = 100 * sim.Microsecond // sysctl_tcp_comp_sack_slack_ns
	tcpHeaderLen         = 32                    // tp->tcp_header_len: 20 B + 12 B timestamps
	tcpMaxWindow         = 65535                 // largest unscaled window, for the SYN-ACK
)

// conn is the receiver's connection state (the part of tcp_sock it uses).
type conn uint8

const (
	stateListen conn = iota
	stateSynRcvd
	stateEstablished
)

// ReceiverStats counts what the receiver did, for summaries and tests.
type ReceiverStats struct {
	Acks           uint64 // ACKs sent, SYN-ACKs excluded
	DelayedAcks    uint64 // ACKs sent by the delayed-ACK timer (LINUX_MIB_DELAYEDACKS)
	CompressedAcks uint64 // ACKs suppressed by SACK compression (LINUX_MIB_TCPACKCOMPRESSED)
	DSacks         uint64 // ACKs that carried a D-SACK block
	OfoSegments    uint64 // segments queued out of order (tp->rcv_ooopack)
	GROFlushes     uint64 // GRO aggregates handed to TCP
	PAWSDrops      uint64 // data segments dropped by PAWS (LINUX_MIB_PAWSESTABREJECTED)
	CEPackets      uint64 // data packets that arrived CE-marked on an ECN connection
}

// Receiver is the receiving end of one TCP flow: it answers the handshake,
// reassembles the byte stream, and ACKs as Linux does (delayed ACK with
// quick-ACK, SACK and D-SACK, SACK compression, receive-window autotuning,
// ECN echo). The application reads in-order data at once.
type Receiver struct {
	cfg  ReceiverConfig
	s    *sim.Sim
	pool *packet.Pool
	out  Sender
	self int32

	delack   wheelTimer
	compress *sim.Timer
	groTimer *sim.Timer

	state  conn
	ready  bool     // unread in-order data for cfg.DataReady
	synTS  uint32   // TSVal of the first SYN (req->ts_recent), echoed on every SYN-ACK
	synAck sim.Time // when the first SYN-ACK left (snt_synack), for the SYN-ACK RTT
	// synAckResent counts SYN-ACKs sent again (req->num_retrans): once one
	// was, the SYN-ACK RTT comes from the timestamp echo instead.
	synAckResent uint32
	// The last answer to a retransmitted SYN (req->last_oow_ack_time) and
	// to a SYN on the connection (tp->last_oow_ack_time), for
	// oowRateLimited.
	synOOW, estOOW int64

	// Sequence space (tcp_sock).
	rcvNxt    uint64
	rcvWup    uint64 // rcv_nxt when the window was last advertised
	copiedSeq uint64
	headEnd   uint64 // end of the first unread skb (see consume)
	tsRecent  uint32

	win  window
	ack  ackState
	ofo  ofoQueue
	sack sackState
	ecn  ecnEcho
	gro  groState

	stats ReceiverStats

	// readStopped models an application that stopped reading (tests
	// only; the engine's applications always read): data stays in the
	// receive buffer and the window closes.
	readStopped bool
}

// NewReceiver registers a receiver for c.Flow with s. It sends ACKs through
// out. The receiver records no trace of its own (rec is accepted for symmetry
// with the sender; the engine records deliveries).
func NewReceiver(s *sim.Sim, pool *packet.Pool, out Sender, rec *trace.Recorder, c ReceiverConfig) *Receiver {
	_ = rec
	r := &Receiver{cfg: c, s: s, pool: pool, out: out}
	r.self = s.Register(r, "tcp-receiver")
	r.delack.t = s.NewTimer(r.self, kindDelack)
	r.compress = s.NewTimer(r.self, kindCompress)
	r.groTimer = s.NewTimer(r.self, kindGRO)
	r.win.init(c.Opts)
	r.ack.init(newHZClock(c.Opts.HZ, c.Clock))
	r.ecn.mode = c.Echo
	return r
}

// BytesDelivered is the in-order payload delivered to the application.
func (r *Receiver) BytesDelivered() units.Bytes {
	if r.copiedSeq == 0 {
		return 0
	}
	return units.Bytes(r.copiedSeq - 1)
}

// Stats returns the receiver's counters.
func (r *Receiver) Stats() ReceiverStats { return r.stats }

// Window is the receive window last advertised, in bytes.
func (r *Receiver) Window() uint32 { return uint32(r.win.rcvWnd) }

// RcvBuf is the receive buffer (sk_rcvbuf) as autotuning has grown it.
func (r *Receiver) RcvBuf() units.Bytes { return units.Bytes(r.win.rcvBuf) }

// Receive takes a packet of this flow arriving at the receiving node and
// frees it.
func (r *Receiver) Receive(id packet.ID) {
	p := r.pool.Get(id)
	switch {
	case p.Flags&packet.SYN != 0:
		r.flushGRO()
		r.rcvSyn(p)
	case r.state == stateListen:
		// No connection: a real stack would answer with a RST; the
		// simulated sender never sends before the handshake.
	case r.cfg.Opts.GRO && r.cfg.Opts.GROInterval > 0:
		if r.state == stateSynRcvd {
			r.establish(p)
		}
		r.groReceive(p)
	default:
		if r.state == stateSynRcvd {
			r.establish(p)
		}
		var sg segment
		sg.describe(p)
		r.rcvSegment(&sg)
	}
	r.pool.Free(id)
	r.dataReady()
}

// dataReady tells an application that reads through Read of unread data.
func (r *Receiver) dataReady() {
	if r.ready {
		r.ready = false
		r.cfg.DataReady()
	}
}

// Handle runs the receiver's timers.
func (r *Receiver) Handle(ev sim.Event) {
	switch ev.Kind {
	case kindDelack:
		r.delackTimer()
	case kindCompress:
		r.compressedAckKick()
	case kindGRO:
		r.flushGRO()
	}
	r.dataReady()
}

// rcvSyn answers a SYN (or a retransmitted one) with a SYN-ACK, negotiating
// ECN as tcp_ecn_create_request / tcp_ecn_make_synack do and AccECN as RFC
// 9768 §3.1.1 does. A SYN on an established connection gets a challenge ACK
// (tcp_validate_incoming step 4).
func (r *Receiver) rcvSyn(p *packet.Packet) {
	if r.state == stateEstablished {
		// tcp_send_challenge_ack, limited per socket.
		if !oowRateLimited(r.ack.hz, r.s.Now(), &r.estOOW) {
			r.sendAck(r.rcvNxt)
		}
		return
	}
	// A retransmitted SYN gets the SYN-ACK again, echoing the first SYN's
	// timestamp, unless one was answered so within the last half second:
	// tcp_check_req answers a pure retransmitted SYN, rate-limited, before
	// it would update req->ts_recent. (Four SYNs a 3.5 s outage queued
	// got one SYN-ACK each; the kernel answers the first two.)
	if r.state == stateSynRcvd && oowRateLimited(r.ack.hz, r.s.Now(), &r.synOOW) {
		return
	}
	if r.state != stateSynRcvd {
		r.synTS = p.TSVal
		r.tsRecent = p.TSVal
		r.synAck = r.s.Now()
	} else {
		r.synAckResent++ // inet_rtx_syn_ack
	}
	r.state = stateSynRcvd
	r.rcvNxt, r.rcvWup, r.copiedSeq = p.Seq+1, p.Seq+1, p.Seq+1
	r.ecn.negotiate(p.Flags, p.ECN, r.cfg.Opts.ECN, r.rcvNxt)

	id := r.pool.Alloc()
	a := r.pool.Get(id)
	a.Flow, a.Src, a.Dst = r.cfg.Flow, r.cfg.Node, r.cfg.Peer
	a.Size = HeaderBytes
	a.Flags = packet.SYN | packet.ACK | r.ecn.synAckFlags(p.ECN)
	a.Seq, a.Ack = 0, r.rcvNxt
	// RFC 7323: the window on a SYN-ACK is never scaled.
	a.Wnd = uint32(min(r.win.rcvWnd, tcpMaxWindow))
	a.TSVal, a.TSEcr = r.ack.hz.ms(r.s.Now()), r.synTS
	a.SentAt = r.s.Now()
	r.out.Send(id)
}

// oowRateLimited follows __tcp_oow_rate_limited: an answer to an
// out-of-window segment is skipped within sysctl_tcp_invalid_ratelimit
// (HZ/2 jiffies, 500 ms) of the last one; otherwise last, in jiffies + 1
// (0: never), becomes now.
func oowRateLimited(hz hzClock, now sim.Time, last *int64) bool {
	j := hz.jiffies(now)
	if *last != 0 && j-(*last-1) < hz.HZ()/2 {
		return true
	}
	*last = j + 1
	return false
}

// establish moves SYN_RCVD to ESTABLISHED on the first ACK, as
// tcp_rcv_state_process does: the SYN-ACK RTT seeds srtt and the RTO
// (tcp_synack_rtt_meas → tcp_rtt_estimator, tcp_set_rto) and
// tcp_init_buffer_space sets up autotuning. The RTT is the microseconds
// since the SYN-ACK (0 on a path quicker than a microsecond, as on Linux),
// unless it had to be sent again (req->num_retrans): then the ACK's
// timestamp echo gives it in whole milliseconds, at least one
// (tcp_ack_update_rtt's tcp_rtt_tsopt_us(tp, 1)), as the SYN-ACK it acks
// is not known; without an echo there is none.
func (r *Receiver) establish(p *packet.Packet) {
	r.state = stateEstablished
	switch {
	case r.synAckResent == 0:
		r.ack.rttSample(stampUsDelta(r.s.Now(), r.synAck))
	case p.TSEcr != 0:
		if m := rttTsoptUs(r.ack.hz.ms(r.s.Now()), p.TSEcr, 1); m >= 0 {
			r.ack.rttSample(m)
		}
	}
	r.win.initBufferSpace(r.s.Now(), r.copiedSeq)
	r.ack.initRcvMss(r.win.advmss, uint32(r.win.rcvWnd))
	r.ack.lrcvtime = r.ack.hz.jiffies(r.s.Now())
}

// usNow is tp->tcp_mstamp in microseconds.
func usNow(t sim.Time) int64 { return int64(t / sim.Time(sim.Microsecond)) }
