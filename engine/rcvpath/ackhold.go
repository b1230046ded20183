package rcvpath

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// AckHold holds a receiver's pure ACKs while the flow saturates its path.
// The flow's arrival rate is measured per window of Window; while the last
// complete window's rate was at least Threshold, each pure ACK waits for a
// delay drawn from Quantiles. Everything leaves in order: an ACK never
// overtakes one held before it, so a long hold releases a clump.
type AckHold struct {
	s         *sim.Sim
	to        Sink
	pool      *packet.Pool
	rng       *rand.Rand
	quantiles Quantiles
	threshold units.BitRate
	window    sim.Duration
	stats     *Stats

	winStart  sim.Time
	winBytes  units.Bytes
	saturated bool

	q     fifo
	last  sim.Time // when the newest queued packet leaves
	timer *sim.Timer
}

// AckHoldConfig configures an AckHold.
type AckHoldConfig struct {
	Quantiles Quantiles
	Threshold units.BitRate // arrival rate from which ACKs are held
	Window    sim.Duration  // the rate's measuring window
	RNG       *rand.Rand
	Stats     *Stats
}

// NewAckHold returns an ACK hold in front of to; pool resolves packet IDs.
func NewAckHold(s *sim.Sim, pool *packet.Pool, name string, c AckHoldConfig, to Sink) *AckHold {
	h := &AckHold{s: s, to: to, pool: pool, rng: c.RNG, quantiles: c.Quantiles,
		threshold: c.Threshold, window: c.Window, stats: c.Stats}
	h.timer = s.NewTimer(s.Register(h, name), 0)
	return h
}

// NoteArrival counts n bytes of the flow arriving at the receiver now.
// Windows lie on a grid of Window from time 0; the saturation decision
// changes when an arrival falls into a new window, from the rate of the
// window just before it (zero if that window saw nothing).
func (h *AckHold) NoteArrival(n units.Bytes) {
	now := h.s.Now()
	if end := h.winStart.Add(h.window); now >= end {
		rate := units.BitRate(0)
		if now < end.Add(h.window) { // the window just ended was the last one
			rate = units.RateOf(h.winBytes, h.window)
		}
		h.saturated = rate >= h.threshold
		h.winStart = now - sim.Time(int64(now-h.winStart)%int64(h.window))
		h.winBytes = 0
	}
	h.winBytes += n
}

// Send holds id if it is a pure ACK and the flow is saturated; any packet
// waits behind those held before it.
func (h *AckHold) Send(id packet.ID) {
	now := h.s.Now()
	at := now
	if h.saturated && isPureAck(h.pool.Get(id)) {
		at = now.Add(h.quantiles.Draw(h.rng.Float64()))
		h.stats.AcksHeld++
	}
	if h.q.len() == 0 && at == now {
		h.to.Send(id)
		return
	}
	at = max(at, h.last)
	h.last = at
	h.q.push(held{id: id, at: at})
	if h.q.len() == 1 {
		h.timer.Arm(at)
	}
}

// Handle releases the ACKs that are due.
func (h *AckHold) Handle(sim.Event) { release(h.s, &h.q, h.timer, h.to.Send) }
