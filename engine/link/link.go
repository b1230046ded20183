// Package link models one direction of a link: random loss as the packet
// enters (as netem drops on enqueue, so a lost packet takes neither queue
// space nor link time — the emulated paths users compare against behave
// this way), the egress qdisc at the sending node, serialisation at the link
// rate, propagation delay plus jitter, and arrival at the far node.
//
// Packets on the wire form a FIFO — a link never reorders — so only the head
// packet's arrival is in the event queue, whatever the bandwidth-delay
// product: the event queue holds O(links) entries for links, not O(packets).
package link

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Receiver is the node at the far end of a direction.
type Receiver interface {
	Receive(id packet.ID)
}

// Observer is told of queue and drop activity, for traces. A nil Observer
// costs one nil check.
type Observer interface {
	// Enqueued reports a packet accepted by the qdisc.
	Enqueued(d *Dir, now sim.Time)
	// Dequeued reports a packet leaving the qdisc after sojourn in it.
	Dequeued(d *Dir, now sim.Time, sojourn sim.Duration)
	// Dropped reports a packet dropped by the qdisc (tail or AQM) or lost on
	// the wire, before it is freed.
	Dropped(d *Dir, now sim.Time, id packet.ID, onWire bool)
	// Marked reports a packet CE-marked by the qdisc.
	Marked(d *Dir, now sim.Time, id packet.ID)
}

// Event kinds of a direction.
const (
	kindTxDone sim.Kind = iota + 1
	kindArrive
	kindWatchdog
)

// Stats are a direction's counters.
type Stats struct {
	Enqueued   uint64 // packets accepted by the qdisc
	Drops      uint64 // qdisc drops (tail and AQM)
	Marks      uint64 // CE marks
	WireLosses uint64 // packets lost to the loss model (before the qdisc)
	Delivered  uint64 // packets that arrived at the far node
	MaxBacklog units.Bytes
	SentBytes  units.Bytes // bytes serialised onto the wire
}

type inflight struct {
	id     packet.ID
	arrive sim.Time
}

// Dir is one direction of a link.
type Dir struct {
	Name  string // "<link>/ab"
	Link  string
	AB    bool // true for the a→b direction
	Stats Stats

	s       *sim.Sim
	self    int32
	pool    *packet.Pool
	q       qdisc.Qdisc
	thr     qdisc.Throttler // q, if it can hold packets back
	wdog    *sim.Timer      // wakes the direction for thr's next packet
	to      Receiver
	obs     Observer
	rate    units.BitRate
	delay   sim.Duration
	lossP   float64
	lossRNG *rand.Rand
	sigma   sim.Duration
	jitRNG  *rand.Rand
	// busyUntil is when the packet being serialised has left; txPending
	// says a kindTxDone event is queued for then, to dequeue the next.
	busyUntil sim.Time
	txPending bool
	wire      []inflight // ring of packets propagating, in arrival order
	head, n   int
	lastArr   sim.Time
}

// Config holds a direction's parameters.
type Config struct {
	Name, Link string
	AB         bool
	Rate       units.BitRate
	Delay      sim.Duration
	LossP      float64      // Bernoulli loss probability
	LossRNG    *rand.Rand   // required when LossP > 0
	Sigma      sim.Duration // Gaussian jitter σ
	JitterRNG  *rand.Rand   // required when Sigma > 0
}

// New registers a direction with s. Its qdisc is attached with SetQdisc and
// its far end with Connect before the run starts.
func New(s *sim.Sim, pool *packet.Pool, c Config) *Dir {
	d := &Dir{Name: c.Name, Link: c.Link, AB: c.AB, s: s, pool: pool, rate: c.Rate, delay: c.Delay,
		lossP: c.LossP, lossRNG: c.LossRNG, sigma: c.Sigma, jitRNG: c.JitterRNG}
	d.self = s.Register(d, "link "+c.Name)
	return d
}

// QdiscEnv is the environment a qdisc on this direction needs.
func (d *Dir) QdiscEnv() qdisc.Env {
	return qdisc.Env{Pool: d.pool, Drop: d.aqmDrop, Mark: d.aqmMark}
}

// SetQdisc attaches the egress queue. A qdisc.Throttler gets a watchdog
// timer: when it holds packets back, the direction retries at its NextAt.
func (d *Dir) SetQdisc(q qdisc.Qdisc) {
	d.q = q
	d.thr, _ = q.(qdisc.Throttler)
	if d.thr != nil && d.wdog == nil {
		d.wdog = d.s.NewTimer(d.self, kindWatchdog)
	}
}

// Qdisc is the egress queue.
func (d *Dir) Qdisc() qdisc.Qdisc { return d.q }

// Connect sets the far end.
func (d *Dir) Connect(to Receiver) { d.to = to }

// Observe sets the trace observer (nil: none).
func (d *Dir) Observe(obs Observer) { d.obs = obs }

// Rate is the serialisation rate.
func (d *Dir) Rate() units.BitRate { return d.rate }

// Delay is the propagation delay.
func (d *Dir) Delay() sim.Duration { return d.delay }

// LossP is the Bernoulli loss probability.
func (d *Dir) LossP() float64 { return d.lossP }

// SetRate changes the rate; a packet being serialised finishes at the old rate.
func (d *Dir) SetRate(r units.BitRate) { d.rate = r }

// SetDelay changes the propagation delay of packets sent from now on. Packets
// already on the wire keep their arrival times and FIFO order still holds.
func (d *Dir) SetDelay(x sim.Duration) { d.delay = x }

// SetLoss changes the Bernoulli loss probability; rng is used if the
// direction had none.
func (d *Dir) SetLoss(p float64, rng *rand.Rand) {
	d.lossP = p
	if d.lossRNG == nil {
		d.lossRNG = rng
	}
}

// Send hands a packet to the egress qdisc.
func (d *Dir) Send(id packet.ID) {
	now := d.s.Now()
	if d.lossP > 0 && d.lossRNG.Float64() < d.lossP {
		d.Stats.WireLosses++
		if d.obs != nil {
			d.obs.Dropped(d, now, id, true)
		}
		d.pool.Free(id)
		return
	}
	if !d.q.Enqueue(id, now) {
		d.Stats.Drops++
		if d.obs != nil {
			d.obs.Dropped(d, now, id, false)
		}
		d.pool.Free(id)
		return
	}
	d.Stats.Enqueued++
	b, n := d.q.Backlog()
	if b > d.Stats.MaxBacklog {
		d.Stats.MaxBacklog = b
	}
	// A packet that finds the link idle and its queue empty leaves at the
	// same instant: the dequeue's report is the state at that instant, and
	// reporting the momentary one-packet backlog in between would double
	// the queue trace of every uncongested link for nothing. A throttling
	// qdisc may hold the packet, so it always reports.
	through := n == 1 && !d.txPending && now >= d.busyUntil && d.thr == nil
	if d.obs != nil && !through {
		d.obs.Enqueued(d, now)
	}
	switch {
	case d.txPending:
	case now >= d.busyUntil:
		d.startTx(now)
	default:
		d.txPending = true
		d.s.Schedule(d.busyUntil, d.self, kindTxDone, 0)
	}
}

func (d *Dir) aqmDrop(id packet.ID, now sim.Time) {
	d.Stats.Drops++
	if d.obs != nil {
		d.obs.Dropped(d, now, id, false)
	}
	d.pool.Free(id)
}

func (d *Dir) aqmMark(id packet.ID, now sim.Time) {
	d.Stats.Marks++
	if d.obs != nil {
		d.obs.Marked(d, now, id)
	}
}

// startTx dequeues the next packet and serialises it. Its departure time is
// known now, so it goes on the wire (or is lost) at once; only when more
// packets wait does the direction need an event at the end of serialisation.
// An idle link therefore costs one event per packet (the arrival), not two.
func (d *Dir) startTx(now sim.Time) {
	id, ok := d.q.Dequeue(now)
	if !ok {
		if d.thr != nil {
			if at, ok := d.thr.NextAt(); ok {
				d.wdog.Arm(max(at, now))
			}
		}
		return
	}
	p := d.pool.Get(id)
	if d.obs != nil {
		d.obs.Dequeued(d, now, now.Sub(p.EnqAt))
	}
	d.busyUntil = now.Add(units.TxTime(p.Size, d.rate))
	d.Stats.SentBytes += p.Size
	d.propagate(id, d.busyUntil)
	if _, n := d.q.Backlog(); n > 0 {
		d.txPending = true
		d.s.Schedule(d.busyUntil, d.self, kindTxDone, 0)
	}
}

// Handle dispatches the direction's events.
func (d *Dir) Handle(ev sim.Event) {
	switch ev.Kind {
	case kindTxDone:
		d.txPending = false
		d.startTx(ev.At)
	case kindArrive:
		d.arrive(ev.At)
	case kindWatchdog:
		if !d.txPending && ev.At >= d.busyUntil {
			d.startTx(ev.At)
		}
	}
}

// propagate puts a packet on the wire as it finishes serialisation at
// departure (now is its departure time here). Its arrival is now + delay
// + jitter, but never before the packet ahead of it: a link keeps order, so
// a delayed packet holds back the ones behind it.
func (d *Dir) propagate(id packet.ID, now sim.Time) {
	at := now.Add(d.delay + d.jitter())
	if at < d.lastArr {
		at = d.lastArr
	}
	d.lastArr = at
	if d.n == len(d.wire) {
		nw := make([]inflight, max(16, 2*len(d.wire)))
		for i := 0; i < d.n; i++ {
			nw[i] = d.wire[(d.head+i)%len(d.wire)]
		}
		d.wire, d.head = nw, 0
	}
	d.wire[(d.head+d.n)%len(d.wire)] = inflight{id, at}
	d.n++
	if d.n == 1 {
		d.s.Schedule(at, d.self, kindArrive, uint64(id))
	}
}

// jitter draws the extra delay of one packet: Gaussian with mean 0 and σ,
// truncated (redrawn) so the one-way delay never goes below zero.
func (d *Dir) jitter() sim.Duration {
	if d.sigma == 0 {
		return 0
	}
	for {
		j := sim.Duration(math.Round(d.jitRNG.NormFloat64() * float64(d.sigma)))
		if d.delay+j >= 0 {
			return j
		}
	}
}

func (d *Dir) arrive(now sim.Time) {
	in := d.wire[d.head]
	d.head = (d.head + 1) % len(d.wire)
	d.n--
	if d.n > 0 {
		next := d.wire[d.head]
		d.s.Schedule(next.arrive, d.self, kindArrive, uint64(next.id))
	}
	d.Stats.Delivered++
	d.to.Receive(in.id)
}
