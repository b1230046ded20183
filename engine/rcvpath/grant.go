package rcvpath

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Grant sends a receiver's packets only at the uplink's transmit
// opportunities. When a packet arrives to an empty channel the next grant
// is a gap drawn from Gap later; each grant releases up to PerGrant
// packets, oldest first, and while packets remain another grant follows a
// fresh gap later. Grants fall on the next multiple of Slot. A packet
// queued at the very instant of a grant drawn earlier waits for the next
// one: an uplink builds what a grant carries from what is queued before
// it, and a receiver's stack takes microseconds to turn a segment into an
// ACK, so on a path of whole-millisecond delays and slots a segment that
// arrives on a grant's instant does not have its ACK leave at that
// instant (the kernel beside a cellular trace never does). A released
// packet is lost with probability Loss. With Filter, a pure ACK that joins
// the queue drops the queued pure ACKs it makes redundant (the CPE's ACK
// filter): those at the queue's tail that carry no SACK blocks, no more
// than its cumulative ACK and the same ECN echo.
type Grant struct {
	s      *sim.Sim
	to     Sink
	pool   *packet.Pool
	rng    *rand.Rand
	gap    Quantiles
	per    int
	loss   float64
	filter bool
	slot   sim.Duration
	stats  *Stats

	q       []waiting // oldest first
	armedAt sim.Time  // when the pending grant was drawn
	timer   *sim.Timer
}

// waiting is a packet queued for a grant, and when it was queued.
type waiting struct {
	id packet.ID
	at sim.Time
}

// GrantConfig configures a Grant.
type GrantConfig struct {
	Gap      Quantiles
	PerGrant int
	Loss     float64
	Filter   bool
	Slot     sim.Duration
	RNG      *rand.Rand
	Stats    *Stats
}

// NewGrant returns a grant process in front of to; pool resolves and frees
// packets.
func NewGrant(s *sim.Sim, pool *packet.Pool, name string, c GrantConfig, to Sink) *Grant {
	g := &Grant{s: s, to: to, pool: pool, rng: c.RNG, gap: c.Gap, per: c.PerGrant,
		loss: c.Loss, filter: c.Filter, slot: c.Slot, stats: c.Stats}
	g.timer = s.NewTimer(s.Register(g, name), 0)
	return g
}

// Send queues id for the next grant.
func (g *Grant) Send(id packet.ID) {
	if g.filter {
		g.filterFor(g.pool.Get(id))
	}
	g.q = append(g.q, waiting{id, g.s.Now()})
	if !g.timer.Armed() {
		g.arm()
	}
}

// filterFor drops the queued ACKs that the pure ACK p makes redundant,
// from the tail back, stopping at the first one it does not cover.
func (g *Grant) filterFor(p *packet.Packet) {
	if !isPureAck(p) || p.NSack > 0 {
		return
	}
	for len(g.q) > 0 {
		old := g.pool.Get(g.q[len(g.q)-1].id)
		if !isPureAck(old) || old.NSack > 0 || old.Ack > p.Ack || old.Flags&packet.ECE != p.Flags&packet.ECE {
			return
		}
		g.pool.Free(g.q[len(g.q)-1].id)
		g.q = g.q[:len(g.q)-1]
		g.stats.AcksFiltered++
	}
}

// arm draws the next grant, a gap from now on the slot grid.
func (g *Grant) arm() {
	g.armedAt = g.s.Now()
	g.timer.Arm(g.next())
}

// next is the time of the grant a gap from now, on the slot grid.
func (g *Grant) next() sim.Time {
	at := g.s.Now().Add(g.gap.Draw(g.rng.Float64()))
	if g.slot > 0 {
		if r := int64(at) % int64(g.slot); r != 0 {
			at += sim.Time(int64(g.slot) - r)
		}
	}
	return at
}

// Handle is a grant: it releases up to PerGrant packets, none queued at
// its own instant unless it was drawn then (a gap of zero).
func (g *Grant) Handle(sim.Event) {
	now := g.s.Now()
	n := min(g.per, len(g.q))
	for g.armedAt < now && n > 0 && g.q[n-1].at == now {
		n--
	}
	for _, w := range g.q[:n] {
		if g.loss > 0 && g.rng.Float64() < g.loss {
			g.pool.Free(w.id)
			g.stats.AcksLost++
			continue
		}
		g.to.Send(w.id)
	}
	if n > 0 {
		g.stats.Grants++
	}
	g.q = g.q[:copy(g.q, g.q[n:])]
	if len(g.q) > 0 {
		g.arm()
	}
}
