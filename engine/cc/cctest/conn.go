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
// (tcp_cwnd_application_limited); the rate sample is tcp_rate.c's own code
// (cc.RateState) with no app-limited marking, and its packets_out is what is
// in flight. Conn sends in bursts;
// Run can pace (Path.Pacing) and CE-mark at the bottleneck (Path.MarkCE).
//
// Link, by contrast, runs an algorithm on the product's sender (engine/tcp's
// DataSender, through engine) over a one-link path, and lets a test watch
// its window and drop chosen packets: the reference tests that matter most
// (Reno against Mathis, CUBIC against RFC 9438's curves) run on both, so
// they validate the code a simulation runs and not only this model.
package cctest

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// DefaultMSS is the MSS of a 1500-byte MTU path with TCP timestamps. The
// kernel's initial values are engine/cc's (cc.InitCwnd, cc.InfiniteSSThresh).
const DefaultMSS = units.Bytes(1448)

// Options configure a Conn; zero fields take the kernel's defaults.
type Options struct {
	InitCwnd uint32        // initial cwnd, packets; default cc.InitCwnd
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
	tx      cc.RateTx // tcp_rate_skb_sent's snapshot, for the rate sample
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
	cwndUse cc.CwndUse

	// tcp_init_cwnd_reduction / PRR / undo.
	highSeq       uint64
	priorSSThresh uint32
	undoMarker    bool
	prr           cc.PRR

	rate cc.RateState // tcp_rate.c connection state

	// Transmissions counts every packet sent, retransmissions included.
	Transmissions uint64
}

// New attaches a to a fresh connection at time 0 and calls its init hook,
// then takes the algorithm's fallback if it names one (cc.Fallbacker).
func New(a cc.Algorithm, o Options) *Conn {
	if o.InitCwnd == 0 {
		o.InitCwnd = cc.InitCwnd
	}
	if o.MSS == 0 {
		o.MSS = DefaultMSS
	}
	c := &Conn{Hooks: cc.Resolve(a)}
	c.St = cc.State{
		CwndPkts:      o.InitCwnd,
		CwndClampPkts: ^uint32(0),
		SSThreshPkts:  cc.InfiniteSSThresh,
		MSS:           o.MSS,
		GSOMaxSegs:    uint32(cc.GSOLegacyMaxSize / o.MSS),
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
	}
	st.LastSend = st.Now
	p := packet{sent: st.Now}
	// tcp_rate_skb_sent; the harness's packets_out is what is in flight
	// (its lost packets leave the flight when marked).
	c.rate.SkbSent(&p.tx, st.Now, st.InFlightPkts, st.InFlightPkts+1, st.Lost)
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
		c.prr.Sent(1)
	}
	c.Transmissions++
}

// validateCwnd runs tcp_cwnd_validate's tracking (cc.CwndUse) in packet
// numbers.
func (c *Conn) validateCwnd(isCwndLimited bool) {
	c.cwndUse.Validate(c.una, c.next, uint32(c.next-c.una), isCwndLimited)
}

// refresh recomputes the derived read-only fields of St before a hook:
// tp->is_cwnd_limited, tcp_is_cwnd_limited and the byte sequence numbers.
func (c *Conn) refresh() {
	st := &c.St
	st.IsCwndLimited = c.cwndUse.IsCwndLimited
	st.CwndLimited = c.cwndUse.CwndLimited(st)
	st.SndUna = c.una * uint64(st.MSS)
	st.SndNxt = c.next * uint64(st.MSS)
}

func (c *Conn) inCwndReduction() bool { return cc.InCwndReduction(&c.St) }

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
