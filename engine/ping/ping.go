// Package ping is a latency probe: an echo request every interval, which
// the destination answers at once, as ping or irtt run beside a load test.
// It measures latency under load the way users measure it, independently of
// any TCP flow's srtt.
package ping

import (
	"math"
	"slices"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Sender takes packets onto the network (a topology node).
type Sender interface {
	Send(id packet.ID)
}

// Config describes a probe.
type Config struct {
	Flow       int32 // flow index (packet.Packet.Flow)
	Src, Dst   int32 // node indices: the prober and the echoing host
	Interval   sim.Duration
	PacketSize units.Bytes // wire bytes of a request and of its reply
	Start      sim.Time
}

const kindProbe sim.Kind = 1

// Probe sends the echo requests and takes the replies.
type Probe struct {
	cfg   Config
	s     *sim.Sim
	pool  *packet.Pool
	out   Sender
	rec   *trace.Recorder
	sig   int32 // the trace signal ping_rtt_ps
	smp   trace.SignalSampler
	timer *sim.Timer

	Sent, Received uint64
	BytesSent      units.Bytes
	BytesReceived  units.Bytes
	// RTTs holds every probe's round-trip time, in the order replies came.
	RTTs []sim.Duration
	// answered has bit i set once probe i's reply came: a second reply (a
	// link's duplicate) is not counted again, as ping reports it as DUP!
	// apart from what it received.
	answered []uint64
}

// New registers a probe with s; out is its source node.
func New(s *sim.Sim, pool *packet.Pool, out Sender, rec *trace.Recorder, c Config) *Probe {
	p := &Probe{cfg: c, s: s, pool: pool, out: out, rec: rec, sig: -1}
	if rec.On() {
		p.sig = rec.SignalIndex("ping_rtt_ps")
	}
	p.timer = s.NewTimer(s.Register(p, "ping"), kindProbe)
	p.timer.Arm(c.Start)
	return p
}

// Handle sends one echo request and schedules the next.
func (p *Probe) Handle(ev sim.Event) {
	id := p.pool.Alloc()
	pk := p.pool.Get(id)
	pk.Flow, pk.Src, pk.Dst, pk.Size = p.cfg.Flow, p.cfg.Src, p.cfg.Dst, p.cfg.PacketSize
	pk.Seq = p.Sent
	pk.SentAt = ev.At
	p.Sent++
	p.BytesSent += p.cfg.PacketSize
	p.out.Send(id)
	p.timer.Arm(ev.At.Add(p.cfg.Interval))
}

// Receive takes an echo reply at the source and records its RTT.
func (p *Probe) Receive(id packet.ID) {
	pk := p.pool.Get(id)
	if p.replied(pk.Seq) {
		p.pool.Free(id)
		return
	}
	now := p.s.Now()
	rtt := now.Sub(pk.SentAt)
	p.Received++
	p.BytesReceived += pk.Size
	p.RTTs = append(p.RTTs, rtt)
	if p.sig >= 0 {
		p.rec.RecordSignal(&p.smp, now, p.cfg.Flow, p.sig, float64(rtt))
	}
	p.pool.Free(id)
}

// replied marks probe seq answered and reports whether it already was.
func (p *Probe) replied(seq uint64) bool {
	w := seq / 64
	for uint64(len(p.answered)) <= w {
		p.answered = append(p.answered, 0)
	}
	bit := uint64(1) << (seq % 64)
	was := p.answered[w]&bit != 0
	p.answered[w] |= bit
	return was
}

// Echo is the destination's side: it returns each request to its sender.
type Echo struct {
	Pool *packet.Pool
	Out  Sender // the destination node
}

// Receive turns a request around as its reply.
func (e Echo) Receive(id packet.ID) {
	pk := e.Pool.Get(id)
	pk.Src, pk.Dst = pk.Dst, pk.Src
	pk.Flags |= packet.ACK
	e.Out.Send(id)
}

// Quantile is the q-quantile (0 ≤ q ≤ 1, nearest rank) of the RTTs so far;
// false before the first reply.
func (p *Probe) Quantile(q float64) (sim.Duration, bool) {
	if len(p.RTTs) == 0 {
		return 0, false
	}
	s := make([]sim.Duration, len(p.RTTs))
	copy(s, p.RTTs)
	slices.Sort(s)
	i := int(math.Ceil(float64(q*float64(len(s))))) - 1
	return s[max(0, min(i, len(s)-1))], true
}
