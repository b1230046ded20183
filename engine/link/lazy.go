package link

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Lazy service. A tail-drop FIFO served at a constant rate is fully
// determined: a packet starts when the one ahead of it has left (past any
// outage), and nothing that arrives later changes that. Such a direction
// keeps its packets in the queue and serves them when something touches it
// — a packet sent into it, an arrival off its wire, a change — each at its
// own start time, in order (catchUp). The arrivals are enough to drive it:
// a packet on the wire arrives no earlier than it left, which is when the
// next one starts, so while the last packet on the wire arrives at or after
// the next start, the arrival events catch the serialiser up in time, and
// no event per packet is needed. Only when that chain breaks (an outage
// pushes the next start past the wire's last arrival, or the wire is empty)
// does the direction queue a kindTxDone for the next start (arm).
//
// Lazy service is restricted to what takes no decision at dequeue time and
// draws nothing there that a later model change could reorder: a FIFO
// qdisc (its step marker marks at enqueue), a constant rate, fifo order on
// the wire and no loss after serialisation (whose drops the trace reports
// as they happen). A CoDel, fq_codel, DualPI2 or FQ queue, a capacity
// process, a trace, reordering jitter or post-serialisation loss keep an
// event per packet.

// lazyOK reports whether the direction's models allow lazy service.
func (d *Dir) lazyOK() bool {
	return !d.eager && d.fifo != nil && d.tr == nil && d.capa == nil && d.postLoss == nil &&
		(d.jit == nil || !d.jit.reorders())
}

// nextStart is when the head of the queue starts serialising, served
// lazily: when the packet ahead of it has left (busyUntil, which Send
// raises to now when the packet found the serialiser idle), past any
// outage. Outage windows (listed and periodic) may end inside one another,
// so it looks again until the instant is up; validation keeps a periodic
// outage shorter than its period, so this ends.
func (d *Dir) nextStart() sim.Time {
	t := d.busyUntil
	if d.out != nil {
		for !d.out.up(t) {
			end, down := d.out.downUntil(t)
			if !down {
				break
			}
			t = end
		}
	}
	return t
}

// catchUp serves, at their own start times and in order, the queued packets
// that start at or before now, and then makes sure the rest will be served
// in time (arm). Its common case, nothing due yet, is one comparison, which
// the callers on the per-packet paths make themselves (now >= d.due), as
// this does not inline.
func (d *Dir) catchUp(now sim.Time) {
	d.serve(now, true)
}

// serve serves the packets due by now and reports whether there were any;
// with arming, it then arms as arm does (the wire is not empty then, and
// lastArr is its last packet's arrival).
// Each goes on the wire as a packet served by an event at its start would,
// and the observer hears of its dequeue at its start; the queue it reads
// then holds just what had joined by that start.
//
// A packet it serves never arrives before now: either the wire held a
// packet, which arrives at or after now, and fifo order puts this one no
// earlier; or the wire was empty, and then arm had queued a kindTxDone for
// the head's start, which is now, so the packet leaves after now, and the
// next starts no earlier than that.
func (d *Dir) serve(now sim.Time, arming bool) bool {
	if d.due > now {
		return false
	}
	for {
		start := d.due
		id, _ := d.fifo.Dequeue(start)
		p := d.pool.Get(id)
		if start == now && p.EnqAt < now {
			d.tieAt = now // see Ties
		}
		if d.obs != nil {
			d.obs.Dequeued(d, start, start.Sub(p.EnqAt))
		}
		if d.byteTime > 0 {
			d.busyUntil = start.Add(sim.Duration(p.Size+d.overhead) * d.byteTime)
		} else {
			d.busyUntil = start.Add(units.TxTime(p.Size+d.overhead, d.rate))
		}
		d.Stats.SentBytes += p.Size
		d.propagate(id, d.busyUntil) // fifo order: sets lastArr to its arrival
		if d.lastArr < now {
			panic(fmt.Sprintf("link %s: a packet served lazily at %v (started %v) arrives at %v, before now", d.Name, now, start, d.lastArr))
		}
		if _, n := d.fifo.Backlog(); n == 0 {
			d.due = sim.Never
			return true
		}
		d.due = d.busyUntil
		if d.out != nil {
			d.due = d.nextStart()
		}
		if d.due > now {
			if arming && !d.txPending && d.lastArr < d.due {
				d.scheduleTx(d.due)
			}
			return true
		}
	}
}

// setDue sets due to the head's start, or sim.Never with the queue empty.
func (d *Dir) setDue() {
	d.due = sim.Never
	if _, n := d.fifo.Backlog(); n > 0 {
		d.due = d.nextStart()
	}
}

// arm makes sure the queue is served in time: unless a kindTxDone is
// queued (always for no later than the head's start) or the wire's last
// packet arrives at or after the head's start (its arrival, or an earlier
// one, will catch up), it queues a kindTxDone for the head's start. Only
// what moves the head's start or the wire's last arrival can break that:
// serving, a packet joining an empty queue, the wire's last packet
// arriving, the kindTxDone itself, a change of the models.
func (d *Dir) arm() {
	if d.txPending || d.due == sim.Never {
		return
	}
	if d.n > 0 && d.wire[(d.head+d.n-1)&(len(d.wire)-1)].arrive >= d.due {
		return
	}
	d.scheduleTx(d.due)
}

// touch brings a lazily served direction up to now before a model
// changes: what started before the change was served under the old one.
func (d *Dir) touch() {
	if now := d.s.Now(); d.lazy {
		d.catchUp(now)
		if d.tieAt == now {
			d.ties++ // a change at the instant a packet started
		}
	}
}

// remode decides after a change of the direction's models whether it is
// served lazily, and hands its queue over between the two ways of serving.
func (d *Dir) remode() {
	if d.q == nil {
		return // being built: SetQdisc decides
	}
	was := d.lazy
	d.lazy = d.lazyOK()
	_, n := d.q.Backlog()
	switch {
	case n == 0:
	case d.lazy && !was && d.txPending:
		// The kindTxDone queued for the head (at the trace's next
		// opportunity, say) is when it starts.
		d.busyUntil = max(d.busyUntil, d.txAt)
	case d.lazy && !was:
		// A queue nothing was to serve (a trace that ended without
		// looping) starts again now.
		d.busyUntil = max(d.busyUntil, d.s.Now())
	case !d.lazy && !d.txPending && d.thr == nil:
		// Served by events from now on, and no event queued for the
		// head: handed over from lazy service, or left by a trace that
		// ended without looping (which then starts again now, rather
		// than at the next packet sent into the direction).
		d.scheduleTx(max(d.nextStart(), d.s.Now()))
	}
	d.due = sim.Never
	if d.lazy {
		d.setDue()
		d.arm()
	}
}

// CatchUp brings a lazily served direction up to now for a reader outside
// the run (a summary, an observation, a checkpoint, the end of a step): it
// serves what started by now, as the next touch would. It schedules
// nothing — it only serves while the wire holds a packet, whose arrival is
// queued already — so a run's events and digest do not depend on where it
// was stopped and read. (With the wire empty, a packet due by now has its
// kindTxDone queued for now: a step that ended between events of one
// instant.) It also writes the link log up to now (LogLink).
func (d *Dir) CatchUp() {
	now := d.s.Now()
	if d.lazy && d.n > 0 {
		d.serve(now, false)
	}
	d.logTo(now)
}

// Ties counts the packets that came to the direction, and the changes made
// to it, at the very picosecond a queued packet started serialising.
// Served lazily, the serialiser frees first, then the newcomer joins behind
// (the physical order) or the change applies; served by an event per
// packet, the order was that of the two events. Runs compared across the
// two ways of serving can differ only if this or EagerTies is not zero.
func (d *Dir) Ties() uint64 { return d.ties }

// EagerTies counts the packets that came to the direction, served by an
// event per packet, at the very picosecond its next queued packet was due
// to start and before that start's event: they joined with that packet
// still queued. Lazy service elsewhere on the path can change the order of
// the two events, as it queues a packet's arrival later than an event at
// its start would.
func (d *Dir) EagerTies() uint64 { return d.eagerTies }
