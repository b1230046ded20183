package link

import (
	"sort"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// TraceBytes is what one delivery opportunity of a Mahimahi trace carries:
// mahimahi's PACKET_SIZE (link_queue.hh), the largest frame its TUN devices
// pass, which is an MTU-sized IP packet and the 4-byte packet information
// header (struct tun_pi) read with it: mahimahi opens its devices with
// IFF_TUN and without IFF_NO_PI (netdevice.cc), and counts what it reads.
const TraceBytes units.Bytes = 1504

// tunHeader is what each packet takes of an opportunity beyond its IP
// bytes: the tun_pi header above. A 1500-byte packet takes one whole
// opportunity, a 52-byte ACK 56 bytes of one.
const tunHeader units.Bytes = 4

// traceLink serves a direction at the delivery opportunities of a Mahimahi
// trace, following mahimahi's LinkQueue (src/packet/link_queue.cc): each
// opportunity carries up to TraceBytes; a packet larger than what is left
// takes the rest from the following opportunities and leaves at the one
// that completes it; bytes an opportunity does not use are lost with it;
// when the schedule ends it starts again, shifted by its last timestamp
// (use_a_delivery_opportunity), or the link serves nothing more. The
// packet is taken from the qdisc at the opportunity, as rationalize
// dequeues it, so the qdisc sees it wait. Mahimahi's clock counts whole
// milliseconds and read_packet calls rationalize before it enqueues an
// arrival, so a packet can use only opportunities after the millisecond it
// arrived in: for arrivals between opportunities that is the next one, as
// here; a packet that arrives at the very instant of an opportunity (whole
// milliseconds: a delay of whole milliseconds after another trace link, an
// ACK grant's slot) waits for the next one too (burn, take).
type traceLink struct {
	ms     []uint64 // opportunity times in ms, nondecreasing, last > 0
	period sim.Duration
	loop   bool
	base   sim.Time // start of the current pass through ms
	i      int      // next unused opportunity of this pass
	done   bool     // a non-looping trace has run out
	// The last opportunity used, and the bytes it has left: packets queued
	// at its instant can share it, later ones cannot.
	curAt sim.Time
	left  units.Bytes
}

func newTraceLink(c *config.TraceLink, now sim.Time) *traceLink {
	if c == nil {
		return nil
	}
	return &traceLink{ms: c.Opportunities, loop: c.Loop, base: now, curAt: -1,
		period: sim.Duration(c.Opportunities[len(c.Opportunities)-1]) * sim.Millisecond}
}

func (t *traceLink) at(i int) sim.Time {
	return t.base.Add(sim.Duration(t.ms[i]) * sim.Millisecond)
}

// advance moves past the opportunities of this pass and wraps to the next.
func (t *traceLink) wrap() {
	t.i = 0
	if !t.loop {
		t.done = true
		return
	}
	t.base = t.base.Add(t.period)
}

// skip drops the opportunities before now: nothing was queued for them.
func (t *traceLink) skip(now sim.Time) {
	if t.done || t.at(t.i) >= now {
		return
	}
	// Whole passes that lie before now go in one step.
	if t.loop {
		if k := int64(now.Sub(t.base)/t.period) - 1; k > 0 {
			t.base = t.base.Add(sim.Duration(k) * t.period)
			t.i = 0
		}
	}
	for !t.done {
		rel := uint64((now.Sub(t.base) + sim.Millisecond - 1) / sim.Millisecond) // first ms ≥ now
		j := t.i + sort.Search(len(t.ms)-t.i, func(k int) bool { return t.ms[t.i+k] >= rel })
		if j < len(t.ms) {
			t.i = j
			return
		}
		t.wrap()
	}
}

// burn gives up, for a packet arriving at now to an empty queue, the
// opportunities at or before now and what is left of the one in use: as
// mm-link's rationalize before it enqueues the packet.
func (t *traceLink) burn(now sim.Time) {
	if t.curAt <= now {
		t.left = 0
	}
	t.skip(now + 1)
}

// due reports whether burn(now) has anything to give up: bytes left of an
// opportunity at now, or an opportunity at or before now still unused.
func (t *traceLink) due(now sim.Time) bool {
	return t.left > 0 && t.curAt == now || !t.done && t.at(t.i) <= now
}

// ready reports, in a few comparisons inlined where the serialiser asks per
// packet, whether next(now) == now because the opportunity in use has bytes
// left or the next unused one is at now. false means only that next must
// look.
func (t *traceLink) ready(now sim.Time) bool {
	return t.left > 0 && t.curAt == now || !t.done && t.at(t.i) == now
}

// next is the earliest instant at or after now at which the link can send:
// now if the opportunity in use at now has bytes left, else the next
// opportunity; sim.Never once a non-looping trace has ended.
func (t *traceLink) next(now sim.Time) sim.Time {
	if t.left > 0 && t.curAt == now {
		return now
	}
	t.skip(now)
	if t.done {
		return sim.Never
	}
	return t.at(t.i)
}

// take serialises a packet of size IP bytes (and its tunHeader), queued at
// enq, starting at now, where next(now) == now, and returns the instant of
// the opportunity that completes it (sim.Never if a non-looping trace ends
// first). A packet queued at now, behind others served at now, starts at
// the opportunity after now (see burn).
func (t *traceLink) take(now, enq sim.Time, size units.Bytes) sim.Time {
	need := size + tunHeader
	if enq >= now {
		t.burn(now)
	}
	if t.left > 0 && t.curAt == now {
		use := min(t.left, need)
		t.left -= use
		need -= use
	}
	for need > 0 {
		if t.done {
			t.left = 0
			return sim.Never
		}
		t.curAt = t.at(t.i)
		t.i++
		if t.i == len(t.ms) {
			t.wrap()
		}
		use := min(TraceBytes, need)
		t.left = TraceBytes - use
		need -= use
	}
	return t.curAt
}
