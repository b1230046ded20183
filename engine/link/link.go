// Package link models one direction of a link. A packet goes through a
// fixed sequence of stages:
//
//	pre-queue loss → qdisc → serialisation at the current rate (a constant,
//	a capacity process or a Mahimahi trace) → post loss → propagation
//	delay + jitter (fifo or reorder) → arrival at the far node
//
// Outages gate the serialiser: while the direction is down it starts
// nothing. Each model is a small type with its own random stream
// ("link/<id>/<dir>/loss", "/jitter", "/capacity") and no knowledge of TCP.
//
// In fifo order the packets on the wire form a FIFO — the link never
// reorders — so only the head packet's arrival is in the event queue,
// whatever the bandwidth-delay product. A reordering jitter keeps the
// packets in flight in arrival order: most in a ring (a packet that
// overtakes a few is inserted among them), those overtaken more than once
// or by many in a small per-direction min-heap on arrival time (hold),
// again with one live event queue entry for its earliest (one more, gone
// stale, each time a packet overtakes that earliest one; scheduleReordered).
// Either way the event queue holds O(links) entries for links, not
// O(packets), and no model adds an event per packet.
//
// What costs an event: a packet's arrival at the far node (one per packet,
// from the head of the wire), and the end of a packet's serialisation
// (kindTxDone) when more wait — except on a direction served lazily (a
// FIFO qdisc at a constant rate, fifo order, no loss after serialisation;
// lazy.go), which serves its queue when it is touched, each packet at its
// own start time: there the arrivals drive the serialiser, and a kindTxDone
// is queued only when nothing on the wire arrives by the next start (after
// an outage, or with the wire empty). A busy bottleneck then costs one
// event per packet instead of two. The readers outside a run see a lazy
// direction up to date: engine.Run catches every direction up at the end
// of each step (CatchUp).
package link

import (
	"math/rand/v2"
	"unsafe"

	"github.com/ccscope/ccscope/engine/config"
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
	// Dropped reports a packet dropped by the qdisc (tail or AQM), refused
	// while the direction is down, or lost on the wire, before it is freed.
	Dropped(d *Dir, now sim.Time, id packet.ID, onWire bool)
	// Marked reports a packet CE-marked by the qdisc.
	Marked(d *Dir, now sim.Time, id packet.ID)
}

// Event kinds of a direction.
const (
	kindTxDone sim.Kind = iota + 1
	kindArrive
	kindWatchdog
	kindReorderArrive
)

// Stats are a direction's counters.
type Stats struct {
	Enqueued   uint64 // packets accepted by the qdisc
	Drops      uint64 // qdisc drops (tail and AQM) while up
	Marks      uint64 // CE marks
	WireLosses uint64 // packets lost to the loss model (pre or post)
	// OutageDrops are packets refused while the direction was down: by
	// drop_on_outage, or by a full queue.
	OutageDrops uint64
	Delivered   uint64 // packets that arrived at the far node
	MaxBacklog  units.Bytes
	SentBytes   units.Bytes // bytes serialised onto the wire
	Duplicated  uint64      // copies the duplicate model sent
}

type inflight struct {
	id     packet.ID
	arrive sim.Time
}

// Dir is one direction of a link. The fields every packet touches come
// first, so that a direction idle for a while (one link per host) costs a
// few cache lines per packet, not the whole struct.
type Dir struct {
	// The first 64 bytes: what an arrival needs (and Hint reads).
	s         *sim.Sim
	pool      *packet.Pool
	wire      []inflight // ring of packets propagating, in arrival order; its length a power of two
	head, n   int
	self      int32
	txPending bool // a kindTxDone event is queued, for txAt
	lazy      bool // the queue is served lazily (see catchUp)

	q         qdisc.Qdisc
	pass      qdisc.Passer // q, if it can take a packet straight through
	fifo      *qdisc.FIFO  // q, if it is a FIFO: called directly, not through the interface
	busyUntil sim.Time     // when the packet being serialised has left
	busySince sim.Time     // start of the current busy period (grant ramp)
	txAt      sim.Time     // when the queued kindTxDone is due
	due       sim.Time     // served lazily, the head's start; else, or with the queue empty, sim.Never
	eager     bool         // never lazy (Eager)
	tieAt     sim.Time     // last instant a queued packet started lazily (Ties)
	ties      uint64
	eagerTies uint64
	// Models; nil when absent, so a direction without impairment pays a
	// nil check per stage.
	loss     *lossModel // Position pre, or only the duplicate model (lossModel.dup)
	postLoss *lossModel // Position post
	jit      *jitterModel
	capa     *capacityModel
	tr       *traceLink
	log      *linkLog // nil unless LogLink; beside the models transmit reads
	out      *outages
	rate     units.BitRate
	byteTime sim.Duration // rate's exact time per byte, or 0 (units.ByteTime)
	overhead units.Bytes  // serialised with each packet beyond its IP bytes
	delay    sim.Duration
	obs      Observer
	to       Receiver
	lastArr  sim.Time // latest arrival of any packet on the wire
	lastBase sim.Time // latest departure + delay (reorder keeps this FIFO)
	Stats    Stats

	Name string // "<link>/ab"
	Link string
	AB   bool // true for the a→b direction

	thr     qdisc.Throttler // q, if it can hold packets back
	wdog    *sim.Timer      // wakes the direction for thr's next packet
	requeue qdisc.Requeuer  // q, if the kernel bypasses it when empty
	drain   qdisc.Drainer   // q, if its dequeue when empty changes it
	rngs    Streams
	dup     *dupModel // the duplicate model, kept across loss changes (SetLoss)
	// Reordering jitter: packets in flight by arrival time, and when the
	// event for the earliest is due (see arriveReordered).
	rring entryRing // in arrival order, appended at the tail
	heap  arrivalHeap
	rseq  uint32   // push order, to break ties between ring and heap (heapEntry.tag)
	rdue  sim.Time // the live kindReorderArrive event's time; Never when none
}

// DirName is "ab" or "ba", as scenarios and tables name a direction.
func (d *Dir) DirName() string {
	if d.AB {
		return "ab"
	}
	return "ba"
}

// Streams are a direction's random streams, one per model family.
type Streams struct {
	Loss, Duplicate *rand.Rand
	// The jitter model's normal draws go to its PCG directly (rng.Normal);
	// a capacity process steps copies of its PCGs ahead (finish).
	Jitter, Capacity, Dips *rand.PCG
}

// Config holds a direction's parameters.
type Config struct {
	Name, Link string
	AB         bool
	Rate       units.BitRate
	Delay      sim.Duration
	Overhead   units.Bytes // serialised with each packet beyond its IP bytes (config.Direction)
	Loss       config.Loss
	Duplicate  float64 // the fraction of packets sent twice (config.Direction)
	Jitter     config.Jitter
	Capacity   *config.Capacity
	Trace      *config.TraceLink
	Outages    *config.Outages
	// Streams are required for the models configured (and for any a change
	// may add later).
	Streams Streams
}

// New registers a direction with s. Its qdisc is attached with SetQdisc and
// its far end with Connect before the run starts.
func New(s *sim.Sim, pool *packet.Pool, c Config) *Dir {
	d := &Dir{Name: c.Name, Link: c.Link, AB: c.AB, s: s, pool: pool, delay: c.Delay, overhead: c.Overhead, rngs: c.Streams, due: sim.Never, tieAt: sim.Never, rdue: sim.Never}
	d.setRate(c.Rate)
	d.self = s.Register(d, "link "+c.Name)
	d.dup = newDupModel(c.Duplicate, c.Streams.Duplicate)
	d.SetLoss(c.Loss)
	d.SetJitter(c.Jitter)
	d.SetCapacity(c.Capacity)
	d.tr = newTraceLink(c.Trace, s.Now())
	d.out = newOutages(c.Outages)
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
	d.pass, _ = q.(qdisc.Passer)
	d.fifo, _ = q.(*qdisc.FIFO)
	d.requeue, _ = q.(qdisc.Requeuer)
	d.drain, _ = q.(qdisc.Drainer)
	if d.thr != nil && d.wdog == nil {
		d.wdog = d.s.NewTimer(d.self, kindWatchdog)
	}
	d.remode()
}

// Eager makes the direction serve its queue with an event per packet even
// where it could serve it lazily: the reference a test compares lazy
// service with. Call it before the run starts.
func (d *Dir) Eager() {
	d.eager = true
	d.remode()
}

// Qdisc is the egress queue.
func (d *Dir) Qdisc() qdisc.Qdisc { return d.q }

// Connect sets the far end.
func (d *Dir) Connect(to Receiver) { d.to = to }

// Observe sets the trace observer (nil: none).
func (d *Dir) Observe(obs Observer) { d.obs = obs }

// Rate is the constant serialisation rate (unused while a trace drives the
// direction or a capacity process sets its rate).
func (d *Dir) Rate() units.BitRate { return d.rate }

// Delay is the propagation delay.
func (d *Dir) Delay() sim.Duration { return d.delay }

// LossP is the Bernoulli loss probability (0 for other loss kinds).
func (d *Dir) LossP() float64 {
	for _, m := range []*lossModel{d.loss, d.postLoss} {
		if m != nil && m.c.Kind == config.Bernoulli {
			return m.c.P
		}
	}
	return 0
}

// SetRate makes the rate constant at r, ending a capacity process or trace;
// a packet being serialised finishes as it started.
func (d *Dir) SetRate(r units.BitRate) {
	d.touch()
	d.logChange(func() {
		d.setRate(r)
		d.capa, d.tr = nil, nil
	})
	d.remode()
}

func (d *Dir) setRate(r units.BitRate) {
	d.rate = r
	d.byteTime, _ = units.ByteTime(r)
}

// SetDelay changes the propagation delay of packets sent from now on. A
// packet's arrival stays no earlier than the one ahead of it (fifo order),
// or its departure plus delay stays no earlier than that of the packet ahead
// (reorder): lowering the delay does not let new packets overtake old ones.
func (d *Dir) SetDelay(x sim.Duration) {
	d.touch()
	d.logChange(func() { d.delay = x })
}

// SetLoss replaces the loss model. The new model continues the direction's
// loss stream, so a run stays deterministic through any schedule.
func (d *Dir) SetLoss(l config.Loss) {
	d.touch()
	defer d.remode()
	m := newLossModel(l, d.rngs.Loss)
	d.loss, d.postLoss = nil, nil
	if l.Position == config.LossPost {
		d.postLoss = m
	} else {
		d.loss = m
	}
	d.attachDup()
}

// Duplicates reports whether the direction sends some packets twice.
func (d *Dir) Duplicates() bool { return d.dup != nil }

// SetDuplicate replaces the duplicate model with one sending the fraction
// p of packets twice (0: none). It continues the direction's duplicate
// stream.
func (d *Dir) SetDuplicate(p float64) {
	d.dup = newDupModel(p, d.rngs.Duplicate)
	if d.loss != nil && d.loss.c.Kind == config.NoLoss {
		d.loss = nil // only the old duplicate model held the slot
	}
	if d.loss != nil {
		d.loss.dup = nil
	}
	d.attachDup()
}

// attachDup puts the duplicate model on the pre-queue loss model's slot, so
// that a direction with neither pays one nil check per packet.
func (d *Dir) attachDup() {
	if d.dup == nil {
		return
	}
	if d.loss == nil {
		d.loss = &lossModel{}
	}
	d.loss.dup = d.dup
}

// SetJitter replaces the jitter model. Packets on the wire keep their
// arrival times.
func (d *Dir) SetJitter(j config.Jitter) {
	d.touch()
	d.jit = newJitterModel(j, d.rngs.Jitter)
	d.remode()
}

// SetCapacity replaces the rate by a capacity process (nil: back to the
// constant rate), which starts in its state 0 now.
func (d *Dir) SetCapacity(c *config.Capacity) {
	d.touch()
	d.logChange(func() {
		d.capa = newCapacityModel(c, d.s.Now(), d.rngs.Capacity, d.rngs.Dips)
		if c != nil {
			d.tr = nil
		}
	})
	d.remode()
}

// AddOutage takes the direction down from now for dur.
func (d *Dir) AddOutage(dur sim.Duration) {
	d.touch()
	d.logChange(func() {
		if d.out == nil {
			d.out = &outages{}
		}
		d.out.add(d.s.Now(), dur)
	})
	d.remode()
}

// Send hands a packet to the direction: its copy first if the duplicate
// model sends it twice, then pre-queue loss, then the qdisc.
func (d *Dir) Send(id packet.ID) {
	if m := d.loss; m != nil && m.dup != nil && m.dup.next() {
		d.sendCopy(id)
	}
	now := d.s.Now()
	if now >= d.due { // due is sim.Never unless served lazily with a queue
		// Serve first what started by now, so that the tail limit, the step
		// marker and MaxBacklog see the backlog at now. A packet whose
		// start is now leaves before this one joins: the serialiser frees,
		// then the arrival finds its place (the physical order; with an
		// event per packet it was whichever event came first).
		d.catchUp(now)
	}
	if d.tieAt == now {
		d.ties++
	} else if d.txPending && d.txAt == now && !d.lazy {
		d.eagerTies++
	}
	if d.loss != nil && d.loss.lose() {
		d.Stats.WireLosses++
		if d.obs != nil {
			d.obs.Dropped(d, now, id, true)
		}
		d.pool.Free(id)
		return
	}
	down := false
	if d.out != nil && !d.out.up(now) {
		_, down = d.out.downUntil(now)
	}
	// idle: nothing waits and the serialiser is free. Served by events,
	// a queued packet always has its kindTxDone pending; served lazily,
	// the queue itself says.
	var idle bool
	if d.lazy {
		idle = d.due == sim.Never && now >= d.busyUntil
	} else {
		idle = !d.txPending && now >= d.busyUntil
	}
	// A packet that finds the link idle and up and its queue empty leaves
	// at the same instant. A discipline that can pass it straight through
	// spares the queue's storage (with one link per host, most links are
	// idle).
	if idle && !down && d.pass != nil && d.tr == nil {
		if _, n := d.q.Backlog(); n == 0 {
			if !d.pass.Pass(id, now) {
				d.refuse(id, now, false)
				return
			}
			d.Stats.Enqueued++
			d.Stats.MaxBacklog = max(d.Stats.MaxBacklog, d.pool.Get(id).Size)
			if now > d.busyUntil {
				d.busySince = now
			}
			d.transmit(id, now)
			return
		}
	}
	// On a trace link an arrival to an empty queue may use only
	// opportunities after its instant (traceLink.burn).
	if d.tr != nil && d.tr.due(now) && d.qEmpty() {
		d.tr.burn(now)
	}
	// A FIFO, the common qdisc, is called directly on the paths a busy
	// link takes per packet, so that its small methods are inlined.
	ok := false
	switch {
	case down && d.out.drop:
	case d.fifo != nil:
		ok = d.fifo.Enqueue(id, now)
	case d.requeue != nil && d.qEmpty():
		d.requeue.Requeue(id, now) // the bypass, with the device busy
		ok = true
	default:
		ok = d.q.Enqueue(id, now)
	}
	if !ok {
		d.refuse(id, now, down)
		return
	}
	d.Stats.Enqueued++
	var b units.Bytes
	var n int
	if d.fifo != nil {
		b, n = d.fifo.Backlog()
	} else {
		b, n = d.q.Backlog()
	}
	if b > d.Stats.MaxBacklog {
		d.Stats.MaxBacklog = b
	}
	// A packet that finds the link idle and its queue empty leaves at the
	// same instant: the dequeue's report is the state at that instant, and
	// reporting the momentary one-packet backlog in between would double
	// the queue trace of every uncongested link for nothing. A throttling
	// qdisc may hold the packet, so it always reports.
	through := n == 1 && idle && d.thr == nil
	if d.obs != nil && !through {
		d.obs.Enqueued(d, now)
	}
	if d.lazy {
		if n == 1 {
			// It joined an empty queue: it is the head.
			if idle && now > d.busyUntil {
				d.busySince, d.busyUntil = now, now
			}
			d.due = d.nextStart()
			if !d.serve(now, true) { // it starts now, unless the serialiser is busy or the direction down
				d.arm()
			}
		}
		return
	}
	switch {
	case d.txPending:
	case now >= d.busyUntil:
		if now > d.busyUntil {
			// The serialiser idled until now: nothing starts before now
			// (lazy service reads busyUntil as the earliest start).
			d.busySince, d.busyUntil = now, now
		}
		d.startTx(now)
	default:
		d.scheduleTx(d.busyUntil)
	}
}

// sendCopy sends the duplicate model's copy of packet id ahead of it; the
// copy is not copied again. Out of line, so that Send's body stays as it
// was for the directions without the model.
//
//go:noinline
func (d *Dir) sendCopy(id packet.ID) {
	d.Stats.Duplicated++
	d.dup.copying = true
	d.Send(d.pool.Clone(id))
	d.dup.copying = false
}

// qEmpty reports whether the qdisc holds no packet.
func (d *Dir) qEmpty() bool {
	_, n := d.q.Backlog()
	return n == 0
}

// scheduleTx queues the direction's kindTxDone for at.
func (d *Dir) scheduleTx(at sim.Time) {
	d.txPending, d.txAt = true, at
	d.s.Schedule(at, d.self, kindTxDone, 0)
}

// refuse drops a packet the qdisc refused, or that came while the
// direction was down.
func (d *Dir) refuse(id packet.ID, now sim.Time, down bool) {
	if down {
		d.Stats.OutageDrops++
	} else {
		d.Stats.Drops++
	}
	if d.obs != nil {
		d.obs.Dropped(d, now, id, false)
	}
	d.pool.Free(id)
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

// serviceAt is the earliest instant at or after now at which the serialiser
// may start: past any outage and, on a trace link, at a delivery
// opportunity. sim.Never: not any more (a non-looping trace has ended).
// Outages and opportunities can keep pushing each other on (opportunities
// that all fall inside periodic outages); after a bounded number of steps it
// returns the instant reached, and the direction looks again from there, so
// one call's work stays bounded.
func (d *Dir) serviceAt(now sim.Time) sim.Time {
	t := now
	for range 64 {
		if d.out != nil {
			if end, down := d.out.downUntil(t); down {
				t = end
				continue
			}
		}
		if d.tr != nil {
			nt := d.tr.next(t)
			if nt != t {
				if nt == sim.Never {
					return nt
				}
				t = nt
				continue
			}
		}
		return t
	}
	return t
}

// startTx dequeues the next packet and serialises it. Its departure time is
// known now, so it goes on the wire (or is lost) at once; only when more
// packets wait does the direction need an event at the end of serialisation.
// An idle link therefore costs one event per packet (the arrival), not two.
// An outage or a trace's next opportunity defers the dequeue to the instant
// service can start, so the qdisc sees the packet wait. A trace link serves
// every packet the opportunities at now carry in this one call.
func (d *Dir) startTx(now sim.Time) {
	for {
		if (d.out != nil && !d.out.up(now)) || (d.tr != nil && !d.tr.ready(now)) {
			if at := d.serviceAt(now); at != now {
				if at != sim.Never {
					d.scheduleTx(at)
				}
				return
			}
		}
		var id packet.ID
		var ok bool
		if d.fifo != nil {
			id, ok = d.fifo.Dequeue(now)
		} else {
			id, ok = d.q.Dequeue(now)
		}
		if !ok {
			if d.thr != nil {
				if at, ok := d.thr.NextAt(); ok {
					d.wdog.Arm(max(at, now))
				}
			}
			return
		}
		if d.drain != nil && d.qEmpty() {
			d.drain.Drained(now)
		}
		if !d.transmit(id, now) {
			return
		}
	}
}

// transmit serialises a packet dequeued now, puts it on the wire (or loses
// it) and, if more wait, schedules the end of its serialisation. It reports
// whether the next may start at once instead: on a trace link, when an
// opportunity at now completed this packet, the next can take what the
// opportunities at now have left, as mahimahi's rationalize uses every
// opportunity that is due in one pass. (An event per packet at one instant
// made a trace link's packets cost a third more: BenchmarkPump1GModel/trace,
// whose trace, like mahimahi's, has many opportunities per millisecond.)
func (d *Dir) transmit(id packet.ID, now sim.Time) bool {
	if d.log != nil {
		d.logTo(now) // before a capacity process moves on to now
	}
	p := d.pool.Get(id)
	if d.obs != nil {
		d.obs.Dequeued(d, now, now.Sub(p.EnqAt))
	}
	switch {
	case d.tr != nil:
		d.busyUntil = d.tr.take(now, p.EnqAt, p.Size)
	case d.capa != nil:
		d.busyUntil = d.capa.finish(now, d.busySince, p.Size+d.overhead)
	case d.byteTime > 0:
		d.busyUntil = now.Add(sim.Duration(p.Size+d.overhead) * d.byteTime)
	default:
		d.busyUntil = now.Add(units.TxTime(p.Size+d.overhead, d.rate))
	}
	if d.busyUntil == sim.Never {
		// A non-looping trace ended in the middle of the packet: it never
		// leaves, and nothing behind it will.
		d.Stats.Drops++
		if d.obs != nil {
			d.obs.Dropped(d, now, id, false)
		}
		d.pool.Free(id)
		return false
	}
	d.Stats.SentBytes += p.Size
	if d.postLoss != nil && d.postLoss.lose() {
		d.Stats.WireLosses++
		if d.obs != nil {
			d.obs.Dropped(d, d.busyUntil, id, true)
		}
		d.pool.Free(id)
	} else {
		d.propagate(id, d.busyUntil)
	}
	var n int
	if d.fifo != nil {
		_, n = d.fifo.Backlog()
	} else {
		_, n = d.q.Backlog()
	}
	if n > 0 {
		if d.tr != nil && d.busyUntil == now {
			return true
		}
		d.scheduleTx(d.busyUntil)
	}
	return false
}

// Hint prefetches, a few microseconds ahead of an arrival, the packet and
// the wire slot it will read: on a direction idle for a while (one link per
// host) both have long left the caches.
func (d *Dir) Hint(ev sim.Event) {
	if ev.Kind == kindArrive {
		d.pool.Prefetch(packet.ID(ev.Arg))
		packet.PrefetchAddr(unsafe.Pointer(&d.wire[d.head]))
	}
}

// Handle dispatches the direction's events.
func (d *Dir) Handle(ev sim.Event) {
	switch ev.Kind {
	case kindTxDone:
		d.txPending = false
		switch {
		case d.lazy:
			if !d.serve(ev.At, true) {
				d.arm()
			}
		case ev.At < d.busyUntil:
			// Queued while the direction was served lazily, for a start
			// that has moved on since: wait for the serialiser.
			d.scheduleTx(d.busyUntil)
		default:
			d.startTx(ev.At)
		}
	case kindArrive:
		for {
			// Served lazily, with a queue (due is sim.Never otherwise):
			// before the arrival leaves the wire, as the arrivals are what
			// drive the serialiser (see arm), and when the last one leaves,
			// a kindTxDone may have to take over.
			if ev.At >= d.due {
				d.catchUp(ev.At)
			}
			if d.n == 1 && d.due != sim.Never {
				d.arm()
			}
			next, claimed := d.arrive(ev.At)
			if !claimed {
				break
			}
			d.s.Claimed(d.self, kindArrive, uint64(next))
		}
	case kindWatchdog:
		if !d.txPending && ev.At >= d.busyUntil {
			d.startTx(ev.At)
		}
	case kindReorderArrive:
		if ev.At == d.rdue {
			d.arriveReordered(ev.At)
		}
	}
}
