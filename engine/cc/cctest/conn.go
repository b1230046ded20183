// Package cctest is a micro-harness for congestion-control algorithms: a
// sender reduced to what the kernel does around tcp_congestion_ops, driven
// by "send window / ack N / lose N / advance clock" calls with no network.
//
// Conn plays the kernel's ACK path (tcp_ack in net/ipv4/tcp_input.c) in the
// kernel's order on every ACK:
//
//  1. snd_una and the delivered counters advance; the RTT sample updates
//     srtt and min_rtt (tcp_ack_update_rtt);
//  2. pkts_acked with the sample (tcp_clean_rtx_queue), then in_ack_event
//     (tcp_in_ack_event, after the delivered counters as in mainline);
//  3. loss marking and CA state changes (tcp_fastretrans_alert): the first
//     loss enters Recovery (tcp_enter_recovery: prior_cwnd, ssthresh hook,
//     set_state); once snd_una reaches high_seq, Recovery ends with
//     set_state(Open), cwnd = ssthresh and CA_EVENT_COMPLETE_CWR
//     (tcp_try_undo_recovery, then tcp_end_cwnd_reduction); Loss ends with
//     set_state(Open) alone; an ECE enters CWR (tcp_enter_cwr);
//  4. tcp_cong_control: cong_control with the rate sample if the algorithm
//     has it; else PRR (tcp_cwnd_reduction) while in CWR or Recovery; else
//     cong_avoid with the packets acked; then tcp_update_pacing_rate.
//
// Timeout is tcp_enter_loss (ssthresh hook, CA_EVENT_LOSS, cwnd = 1,
// set_state(Loss)). Send follows tcp_write_xmit's bookkeeping: CA_EVENT_TX_START
// when nothing is in flight (tcp_event_data_sent), lsndtime, PRR's prr_out,
// and tcp_cwnd_validate's is_cwnd_limited / max_packets_out.
//
// Simplifications, all deliberate: every ACK acks or SACKs whole packets,
// oldest first, and names the packets it marks lost (no dupthresh, RACK
// timers, TLP, F-RTO or Disorder state); retransmissions go before new data;
// min_rtt is the minimum over the whole run, not a windowed filter; srtt is
// RFC 6298's 7/8 filter without rttvar; no cwnd decay after idle
// (tcp_cwnd_application_limited); the rate sample is tcp_rate.c's
// delivered/interval without app-limited marking. Conn sends in bursts;
// Run can pace (Path.Pacing) and CE-mark at the bottleneck (Path.MarkCE).
package cctest

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// The kernel's initial values (include/net/tcp.h).
const (
	InitCwnd         = 10         // TCP_INIT_CWND
	InfiniteSSThresh = 0x7fffffff // TCP_INFINITE_SSTHRESH
	DefaultMSS       = units.Bytes(1448)
)

// pacingSSRatio and pacingCARatio are sysctl_tcp_pacing_ss_ratio and
// sysctl_tcp_pacing_ca_ratio, in percent.
const (
	pacingSSRatio = 200
	pacingCARatio = 120
)

// gsoMaxSize is GSO_LEGACY_MAX_SIZE, the usual sk_gso_max_size.
const gsoMaxSize = 65536

// Options configure a Conn; zero fields take the kernel's defaults.
type Options struct {
	InitCwnd uint32        // initial cwnd, packets; default InitCwnd
	MSS      units.Bytes   // default DefaultMSS
	Sink     cc.SignalSink // receives the algorithm's signals; nil: off
	// ECNOk sets State.ECNOk before the init hook: ECN was negotiated, so
	// DCTCP and Prague run as themselves rather than their Reno fallbacks.
	ECNOk bool
}

// packet is one transmission still outstanding.
type packet struct {
	seq     uint64   // packet number (byte seq / MSS)
	sent    sim.Time // transmission time
	retrans bool
	// tcp_rate_skb_sent's snapshot, for the rate sample.
	delivered     uint32
	deliveredTime sim.Time
	firstTx       sim.Time
}

// Conn is one sender in the harness. St is the algorithm's view; tests may
// read it freely and set it up before the first call.
type Conn struct {
	St    cc.State
	Hooks cc.Hooks

	out    []packet // outstanding transmissions, oldest first
	rtx    []uint64 // packets marked lost, waiting for retransmission
	done   []bool   // done[i]: packet una+i delivered
	una    uint64   // first undelivered packet
	next   uint64   // next new packet number
	srttUS uint64   // srtt in us (unscaled)

	retransOut uint32 // retransmissions in flight

	// tcp_cwnd_validate.
	isCwndLimited bool
	maxPacketsOut uint32
	cwndUsageSeq  uint64

	// tcp_init_cwnd_reduction / PRR / undo.
	highSeq       uint64
	priorSSThresh uint32
	undoMarker    bool
	prrDelivered  uint32
	prrOut        uint32

	// tcp_rate.c connection state.
	deliveredTime sim.Time
	firstTx       sim.Time

	// Transmissions counts every packet sent, retransmissions included.
	Transmissions uint64
}

// New attaches a to a fresh connection at time 0 and calls its init hook,
// then takes the algorithm's fallback if it names one (cc.Fallbacker).
func New(a cc.Algorithm, o Options) *Conn {
	if o.InitCwnd == 0 {
		o.InitCwnd = InitCwnd
	}
	if o.MSS == 0 {
		o.MSS = DefaultMSS
	}
	c := &Conn{Hooks: cc.Resolve(a)}
	c.St = cc.State{
		CwndPkts:      o.InitCwnd,
		CwndClampPkts: ^uint32(0),
		SSThreshPkts:  InfiniteSSThresh,
		MSS:           o.MSS,
		GSOMaxSegs:    uint32(gsoMaxSize / o.MSS),
		ECNOk:         o.ECNOk,
	}
	c.St.Signals = cc.NewSignals(o.Sink, &c.St.Now)
	if c.Hooks.Init != nil {
		c.Hooks.Init.Init(&c.St)
	}
	if c.Hooks.Fallback != nil {
		if alt := c.Hooks.Fallback.Fallback(); alt != nil {
			c.Hooks = cc.Resolve(alt)
		}
	}
	return c
}

// Advance moves the clock forward by d.
func (c *Conn) Advance(d sim.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("cctest: Advance(%v): time cannot go back", d))
	}
	c.St.Now = c.St.Now.Add(d)
}

// AdvanceTo moves the clock to t, which must not be in the past.
func (c *Conn) AdvanceTo(t sim.Time) { c.Advance(t.Sub(c.St.Now)) }

// Fill sends as many packets as the window allows and returns how many.
func (c *Conn) Fill() uint32 { return c.Send(^uint32(0)) }

// Send sends up to n packets (the application's data) as the window allows,
// lost packets first, and returns how many it sent.
func (c *Conn) Send(n uint32) uint32 {
	var sent uint32
	for sent < n && c.St.InFlightPkts < c.St.CwndPkts {
		c.sendOne()
		sent++
	}
	// tcp_write_xmit: cwnd-limited when it stopped for want of window;
	// the usage tracking runs only if it sent or was so limited.
	if limited := c.St.InFlightPkts >= c.St.CwndPkts; sent > 0 || limited {
		c.validateCwnd(limited)
	}
	return sent
}

func (c *Conn) sendOne() {
	st := &c.St
	if st.InFlightPkts == 0 {
		// tcp_event_data_sent fires TX_START before it stamps lsndtime.
		c.refresh()
		c.event(cc.EventTxStart)
		// tcp_rate_skb_sent: a fresh sampling interval after idle.
		c.firstTx, c.deliveredTime = st.Now, st.Now
	}
	st.LastSend = st.Now
	p := packet{sent: st.Now, delivered: st.Delivered, deliveredTime: c.deliveredTime, firstTx: c.firstTx}
	if len(c.rtx) > 0 {
		p.seq, p.retrans = c.rtx[0], true
		c.rtx = c.rtx[1:]
		c.retransOut++
	} else {
		p.seq = c.next
		c.next++
		c.done = append(c.done, false)
		st.SndNxt = c.next * uint64(st.MSS)
	}
	c.out = append(c.out, p)
	st.InFlightPkts++
	if c.inCwndReduction() {
		c.prrOut++
	}
	c.Transmissions++
}

// validateCwnd follows tcp_cwnd_validate's tracking of whether the window
// was fully used in the current window of data.
func (c *Conn) validateCwnd(isCwndLimited bool) {
	packetsOut := uint32(c.next - c.una)
	if c.una >= c.cwndUsageSeq || isCwndLimited ||
		(!c.isCwndLimited && packetsOut > c.maxPacketsOut) {
		c.isCwndLimited = isCwndLimited
		c.maxPacketsOut = packetsOut
		c.cwndUsageSeq = c.next
	}
}

// refresh recomputes the derived read-only fields of St before a hook:
// tp->is_cwnd_limited, tcp_is_cwnd_limited and the byte sequence numbers.
func (c *Conn) refresh() {
	st := &c.St
	st.IsCwndLimited = c.isCwndLimited
	st.CwndLimited = c.isCwndLimited ||
		(cc.InSlowStart(st) && st.CwndPkts < 2*c.maxPacketsOut)
	st.SndUna = c.una * uint64(st.MSS)
	st.SndNxt = c.next * uint64(st.MSS)
}

func (c *Conn) inCwndReduction() bool {
	return c.St.CA == cc.CACWR || c.St.CA == cc.CARecovery
}

func (c *Conn) setState(s cc.CAState) {
	if c.Hooks.SetState != nil {
		c.Hooks.SetState.SetState(&c.St, s)
	}
	c.St.CA = s
}

func (c *Conn) event(ev cc.Event) {
	if c.Hooks.CwndEvent != nil {
		c.Hooks.CwndEvent.CwndEvent(&c.St, ev)
	}
}

// Round is one round trip of an ack-clocked flow with no bottleneck: if
// nothing is in flight it first sends a window; then it advances the clock
// by rtt and acks, one packet per ACK and all at that instant, the packets
// that were in flight, sending after each ACK what the window allows. It
// returns how many packets it acked.
func (c *Conn) Round(rtt sim.Duration) int {
	if len(c.out) == 0 {
		c.Fill()
	}
	n := len(c.out)
	c.Advance(rtt)
	for range n {
		c.Ack(1)
		c.Fill()
	}
	return n
}
