package tcp

import (
	"cmp"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// shPipe is a test link: it serialises at rate, delays by delay (plus a
// per-packet extra delay, which can reorder), and drops what drop selects.
// Every packet it carries is logged.
type shPipe struct {
	s     *sim.Sim
	pool  *packet.Pool
	self  int32
	rate  units.BitRate
	delay sim.Duration
	busy  sim.Time
	to    interface{ Receive(packet.ID) }
	drop  func(p *packet.Packet, now sim.Time) bool
	extra func(p *packet.Packet) sim.Duration
	ce    func(p *packet.Packet) bool // marks CE (ECT packets only)
	log   []shSent
}

// shSent is one packet a shPipe carried (or dropped).
type shSent struct {
	at      sim.Time
	seq     uint64
	ack     uint64
	len     uint32
	flags   packet.Flags
	nsack   uint8
	dropped bool
	arr     sim.Time // when it reached the far end
}

// sentOf is the record of packet pk handed to a path at at.
func sentOf(pk *packet.Packet, at sim.Time) shSent {
	return shSent{at: at, seq: pk.Seq, ack: pk.Ack, len: pk.Len, flags: pk.Flags, nsack: pk.NSack}
}

func newShPipe(s *sim.Sim, pool *packet.Pool, rate units.BitRate, delay sim.Duration) *shPipe {
	p := &shPipe{s: s, pool: pool, rate: rate, delay: delay}
	p.self = s.Register(p, "pipe")
	return p
}

// Send implements Sender.
func (p *shPipe) Send(id packet.ID) {
	pk := p.pool.Get(id)
	now := p.s.Now()
	drop := p.drop != nil && p.drop(pk, now)
	rec := sentOf(pk, now)
	rec.dropped = drop
	p.log = append(p.log, rec)
	if drop {
		p.pool.Free(id)
		return
	}
	if p.ce != nil && pk.ECN != packet.NotECT && p.ce(pk) {
		pk.ECN = packet.CE
	}
	start := max(now, p.busy)
	p.busy = start.Add(units.TxTime(pk.Size, p.rate))
	at := p.busy.Add(p.delay)
	if p.extra != nil {
		at = at.Add(p.extra(pk))
	}
	p.log[len(p.log)-1].arr = at
	p.s.Schedule(at, p.self, 1, uint64(id))
}

// Handle delivers a packet.
func (p *shPipe) Handle(ev sim.Event) { p.to.Receive(packet.ID(ev.Arg)) }

// transmissions returns the times data segment seq was handed to the shPipe.
func (p *shPipe) transmissions(seq uint64) []sim.Time {
	var ts []sim.Time
	for _, x := range p.log {
		if x.seq == seq && x.len > 0 {
			ts = append(ts, x.at)
		}
	}
	return ts
}

// shConn is a sender and a receiver joined by two pipes.
type shConn struct {
	s        *sim.Sim
	pool     *packet.Pool
	snd      *DataSender
	rcv      *Receiver
	fwd, rev *shPipe
}

// shHarness configures a test connection.
type shHarness struct {
	cc    string
	rate  units.BitRate // both directions
	owd   sim.Duration  // one-way propagation delay
	size  units.Bytes
	opts  config.TCPOptions
	app   config.AppPattern
	trace config.TraceDetail
	echo  EchoMode
	// hostFQ puts the sender behind an fq qdisc (SenderConfig.HostFQ).
	hostFQ bool
	// alg, if set, is the CC instance to use instead of a new cc.
	alg cc.Algorithm
}

// shLinuxOpts are the options of a Linux host with fq (pacing on) and
// buffers that do not limit the flow (no send-buffer ceiling, 64 MiB
// receive buffer) and no GRO, so the tests see one ACK decision per
// segment. Pacing keeps the segments of a window apart, so the timing
// tests see little queueing variation between neighbouring segments.
func shLinuxOpts() config.TCPOptions {
	o := config.DefaultTCPOptions()
	o.Pacing = config.PacingOn
	o.GRO = false
	o.SndBuf = 0
	o.RcvBufMax = 64 * units.MiB
	return o
}

func (h shHarness) build(t *testing.T) *shConn {
	t.Helper()
	s := sim.New()
	pool := &packet.Pool{}
	alg := h.alg
	if alg == nil {
		var err error
		if alg, err = cc.New(h.cc); err != nil {
			t.Fatalf("cc.New(%q): %v", h.cc, err)
		}
	}
	c := &shConn{s: s, pool: pool}
	c.fwd = newShPipe(s, pool, h.rate, h.owd)
	c.rev = newShPipe(s, pool, h.rate, h.owd)
	rec := trace.NewRecorder(h.trace, 0, nil)
	rec.Flows = []string{"f0"}
	c.snd = NewSender(s, pool, c.fwd, rec, SenderConfig{Flow: 0, Node: 0, Peer: 1, Opts: h.opts, CC: alg,
		ECN: h.opts.ECN, Echo: h.echo, Size: h.size, App: h.app, HostFQ: h.hostFQ})
	c.rcv = NewReceiver(s, pool, c.rev, rec, ReceiverConfig{Flow: 0, Node: 1, Peer: 0, Opts: h.opts, Echo: h.echo})
	c.fwd.to = c.rcv
	c.rev.to = c.snd
	return c
}

// seqOfSeg is the first sequence number of data segment n (MSS 1448).
func seqOfSeg(n uint64) uint64 { return 1 + n*1448 }

// dropOnce drops the first transmission of the data segments starting at
// the given sequence numbers.
func dropOnce(seqs ...uint64) func(p *packet.Packet, now sim.Time) bool {
	seen := map[uint64]bool{}
	return func(p *packet.Packet, now sim.Time) bool {
		if p.Len == 0 || seen[p.Seq] {
			return false
		}
		for _, s := range seqs {
			if p.Seq == s {
				seen[s] = true
				return true
			}
		}
		return false
	}
}

// runUntil runs the connection to time t.
func (c *shConn) runUntil(t sim.Time) { c.s.RunUntil(t) }

// pacedRelease is when a paced sender can send on an ACK arriving at at:
// then, or at tcp_wstamp_ns if the pacing of what it sent before still
// holds it (tcp_pacing_check, which tcp_xmit_retransmit_queue obeys too).
// It builds the connection again with prepare and runs it to just before
// at, so prepare must set up the same run.
func (h shHarness) pacedRelease(t *testing.T, prepare func(*shConn), at sim.Time) sim.Time {
	t.Helper()
	c := h.build(t)
	prepare(c)
	c.runUntil(at - 1)
	return max(at, c.snd.wstamp)
}

// shTap logs the packets an end hands to its path, as shPipe does, and
// passes them on at once.
type shTap struct {
	s    *sim.Sim
	pool *packet.Pool
	next Sender
	log  []shSent
}

// Send implements Sender.
func (p *shTap) Send(id packet.ID) {
	pk := p.pool.Get(id)
	p.log = append(p.log, sentOf(pk, p.s.Now()))
	p.next.Send(id)
}

// shRouter forwards what arrives from one link onto the next, clearing the
// sender's departure stamp as topo.Node does (ip_forward).
type shRouter struct {
	pool *packet.Pool
	next Sender
}

// Receive implements link.Receiver.
func (r shRouter) Receive(id packet.ID) {
	r.pool.Get(id).TxTime = 0
	r.next.Send(id)
}

// prtrp is the built-in scenario p-rtr-p (config/scenarios/p-rtr-p.json),
// the path `ccscope compare` and `emulate` measured the kernel on, built
// from the link and qdisc packages as engine/topo builds it: h1 — access,
// 1 Gbps, 1 ms — r1 — bottleneck, rate, rtt/2 − 1 ms (19 ms) — h2, with a
// FIFO of one BDP (rate · rtt) into the bottleneck and of txqueuelen (1000
// packets) on every other direction. Its one flow sends from h1 with the
// CC's stream of seed 1, as the scenario's f0 does; fwd logs what the
// sender sends.
type prtrp struct {
	cc   string
	rate units.BitRate
	rtt  sim.Duration // base RTT; 0 is the scenario's 40 ms
	opts config.TCPOptions
	app  config.AppPattern
}

// prtrpConn is a built prtrp.
type prtrpConn struct {
	s   *sim.Sim
	snd *DataSender
	rcv *Receiver
	fwd *shTap
}

func (h prtrp) build(t *testing.T) *prtrpConn {
	t.Helper()
	alg, err := cc.New(h.cc)
	if err != nil {
		t.Fatalf("cc.New(%q): %v", h.cc, err)
	}
	s := sim.New()
	pool := &packet.Pool{}
	dir := func(name string, rate units.BitRate, delay sim.Duration, limBytes units.Bytes, limPkts int) *link.Dir {
		d := link.New(s, pool, link.Config{Name: name, Rate: rate, Delay: delay})
		d.SetQdisc(qdisc.NewFIFO(d.QdiscEnv(), limBytes, limPkts))
		return d
	}
	const txqueuelen = config.DefaultQueuePackets
	rtt := cmp.Or(h.rtt, 40*sim.Millisecond)
	accAB := dir("access/ab", units.Gbps, sim.Millisecond, 0, txqueuelen)
	accBA := dir("access/ba", units.Gbps, sim.Millisecond, 0, txqueuelen)
	botAB := dir("bottleneck/ab", h.rate, rtt/2-sim.Millisecond, units.BytesIn(h.rate, rtt), 0)
	botBA := dir("bottleneck/ba", h.rate, rtt/2-sim.Millisecond, 0, txqueuelen)
	accAB.Connect(shRouter{pool, botAB})
	botBA.Connect(shRouter{pool, accBA})
	c := &prtrpConn{s: s, fwd: &shTap{s: s, pool: pool, next: accAB}}
	rec := trace.NewRecorder(config.TraceSummary, 0, nil)
	rec.Flows = []string{"f0"}
	c.snd = NewSender(s, pool, c.fwd, rec, SenderConfig{Flow: 0, Node: 0, Peer: 2, Opts: h.opts, CC: alg,
		RNG: rng.Stream(1, "flow/f0/cc"), ECN: h.opts.ECN, App: h.app})
	c.rcv = NewReceiver(s, pool, botBA, rec, ReceiverConfig{Flow: 0, Node: 2, Peer: 0, Opts: h.opts})
	botAB.Connect(c.rcv)
	accBA.Connect(c.snd)
	return c
}

// runUntil runs the connection to time t.
func (c *prtrpConn) runUntil(t sim.Time) { c.s.RunUntil(t) }

// establish runs the connection to the end of its handshake.
func (c *prtrpConn) establish(t *testing.T) {
	t.Helper()
	for c.snd.state != sndEstablished {
		if c.s.Step(1) == 0 {
			t.Fatal("no handshake")
		}
	}
}

// goodput is what `ccscope run` reports: payload delivered per second
// since the first data segment left.
func (c *prtrpConn) goodput() float64 {
	return float64(c.rcv.BytesDelivered()) * 8 / c.s.Now().Sub(c.snd.Stats.FirstSend).Seconds()
}

// sortedByArrival is a pipe's log of delivered packets in the order they
// reached the far end.
func sortedByArrival(log []shSent) []shSent {
	var out []shSent
	for _, x := range log {
		if !x.dropped {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b shSent) int { return cmp.Compare(a.arr, b.arr) })
	return out
}
