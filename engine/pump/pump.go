// Package pump is a constant-rate, UDP-like flow: a source that sends
// fixed-size packets back to back at a configured rate into a sink that
// counts them. It exercises links and queues without TCP's feedback.
package pump

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Sender is the node-side hook a flow uses to put packets on the network.
type Sender interface {
	Send(id packet.ID)
}

const kindSend sim.Kind = 1

// Config describes one pump flow.
type Config struct {
	Flow       int32
	Src, Dst   int32
	Rate       units.BitRate
	PacketSize units.Bytes
	Start      sim.Time
	Size       units.Bytes // 0: until the run ends
	ECN        packet.ECN  // codepoint of every packet
	// Copies says a link may deliver a packet twice (a duplicate model):
	// the sink then delivers each once (ExpectCopies, mid-run).
	Copies bool
}

// Pump is the source and the sink of one flow.
type Pump struct {
	cfg     Config
	s       *sim.Sim
	pool    *packet.Pool
	out     Sender
	rec     *trace.Recorder
	self    int32
	timer   *sim.Timer
	gap     sim.Duration
	next    sim.Time
	seq     uint64
	smp     trace.DeliverySampler
	arrived arrived

	// Counters.
	Sent           uint64 // packets
	BytesSent      units.Bytes
	BytesDelivered units.Bytes
	FirstSend      sim.Time
	LastDelivery   sim.Time
	Done           sim.Time // when the last byte of a sized flow arrived; 0 if not
	Milestones     Milestones
	OneWay         trace.Hist // one-way delay of delivered packets, ps
}

// Milestones are the times (since the first data byte was sent) at which
// 10 MB and 100 MB of payload had been delivered; 0 if not reached.
type Milestones struct {
	T10MB, T100MB sim.Duration
}

// Note records delivered bytes crossing the milestones.
func (m *Milestones) Note(before, after units.Bytes, now, first sim.Time) {
	if before < 10*units.MB && after >= 10*units.MB {
		m.T10MB = now.Sub(first)
	}
	if before < 100*units.MB && after >= 100*units.MB {
		m.T100MB = now.Sub(first)
	}
}

// New registers a pump with s; out sends from the source node.
func New(s *sim.Sim, pool *packet.Pool, out Sender, rec *trace.Recorder, c Config) *Pump {
	p := &Pump{cfg: c, s: s, pool: pool, out: out, rec: rec, gap: units.TxTime(c.PacketSize, c.Rate)}
	p.arrived.pktSize = uint64(c.PacketSize)
	p.self = s.Register(p, "pump")
	p.timer = s.NewTimer(p.self, kindSend)
	p.next = c.Start
	p.timer.Arm(c.Start)
	return p
}

// Handle sends one packet and re-arms for the next.
func (p *Pump) Handle(ev sim.Event) {
	if p.cfg.Size > 0 && p.BytesSent >= p.cfg.Size {
		return
	}
	// A sized flow's last packet carries what is left of its size, as a
	// sender's last datagram does: whole packets would send (and deliver)
	// up to a packet more than the size.
	size := p.cfg.PacketSize
	if p.cfg.Size > 0 {
		size = min(size, p.cfg.Size-p.BytesSent)
	}
	id := p.pool.Alloc()
	pk := p.pool.Get(id)
	pk.Flow, pk.Src, pk.Dst = p.cfg.Flow, p.cfg.Src, p.cfg.Dst
	pk.Size = size
	pk.ECN = p.cfg.ECN
	pk.Seq = p.seq
	pk.Len = uint32(size)
	pk.SentAt = ev.At
	if p.Sent == 0 {
		p.FirstSend = ev.At
	}
	p.seq += uint64(size)
	p.Sent++
	p.BytesSent += size
	// The schedule advances from the previous send time, not from now, so
	// rounding never accumulates beyond one picosecond per packet.
	p.next = p.next.Add(p.gap)
	p.timer.Arm(p.next)
	p.out.Send(id)
}

// ExpectCopies tells the sink that a link may now deliver packets twice.
func (p *Pump) ExpectCopies() { p.cfg.Copies = true }

// Receive is the sink.
func (p *Pump) Receive(id packet.ID) {
	pk := p.pool.Get(id)
	if p.cfg.Copies && !p.arrived.first(pk.Seq) {
		p.pool.Free(id) // a link's copy of a packet that came
		return
	}
	now := p.s.Now()
	before := p.BytesDelivered
	p.BytesDelivered += pk.Size
	p.LastDelivery = now
	p.OneWay.Add(int64(now.Sub(pk.SentAt)))
	p.Milestones.Note(before, p.BytesDelivered, now, p.FirstSend)
	if p.cfg.Size > 0 && p.BytesDelivered >= p.cfg.Size && p.Done == 0 {
		p.Done = now
		p.smp.Force() // a sampled trace keeps the row of the last byte
	}
	if p.rec.On() {
		p.rec.RecordDelivery(&p.smp, now, p.cfg.Flow, int64(p.BytesDelivered))
	}
	p.pool.Free(id)
}
