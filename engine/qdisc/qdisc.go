// Package qdisc holds the queueing disciplines a link direction's egress
// uses: buffering plus a dequeue policy behind one small interface.
package qdisc

import (
	"errors"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Env is what a discipline needs from its link direction: the packet pool,
// and a place to send packets it drops (which frees and records them).
type Env struct {
	Pool *packet.Pool
	Drop func(id packet.ID, now sim.Time)
	Mark func(id packet.ID, now sim.Time) // called when a packet is CE-marked
}

// Qdisc is a queueing discipline.
type Qdisc interface {
	// Enqueue offers a packet; false means it was dropped at the tail and
	// the caller still owns it.
	Enqueue(id packet.ID, now sim.Time) bool
	// Dequeue returns the next packet to transmit, if any. The discipline
	// may drop or mark packets on the way (through Env).
	Dequeue(now sim.Time) (packet.ID, bool)
	// Backlog is the queued bytes and packets.
	Backlog() (units.Bytes, int)
}

// setCE follows INET_ECN_set_ce: an ECN-capable packet becomes CE and is
// reported through env.Mark; a packet already CE stays so and counts as
// marked without a new report; a Not-ECT packet cannot be marked.
func setCE(env Env, id packet.ID, now sim.Time) bool {
	p := env.Pool.Get(id)
	switch p.ECN {
	case packet.NotECT:
		return false
	case packet.CE:
		return true
	}
	p.ECN = packet.CE
	if env.Mark != nil {
		env.Mark(id, now)
	}
	return true
}

// Throttler is a discipline that can hold queued packets back (fq's
// pacing). When Dequeue returns nothing although packets are queued, NextAt
// is when one becomes eligible: the time fq_dequeue gives
// qdisc_watchdog_schedule_ns. The link direction owns the watchdog timer
// and tries Dequeue again then (without the kernel's 10 µs timer slack).
type Throttler interface {
	NextAt() (sim.Time, bool)
}

// Limiter is a discipline whose limits can be read and changed mid-run:
// bytes and packets, 0 for none (the packet-limited kernel qdiscs have
// only sch->limit).
type Limiter interface {
	Limit() (units.Bytes, int)
	SetLimit(bytes units.Bytes, pkts int) error
}

// Trimmer is a discipline whose change of limit sheds, at once, what it
// holds beyond the new limit (sch_codel's, sch_fq_codel's, sch_fq's and
// sch_dualpi2's change functions); a FIFO keeps it.
type Trimmer interface {
	Trim(now sim.Time)
}

// Passer is a discipline that can take a packet straight through when it is
// empty and the link idle, without queueing it: for a FIFO, Pass(id, now)
// equals Enqueue(id, now) followed at once by a Dequeue that returns id;
// for a discipline the kernel bypasses when empty (TCQ_F_CAN_BYPASS), it is
// that bypass, which leaves the discipline's state alone. The link
// direction then touches neither the queue's storage nor its bookkeeping.
type Passer interface {
	Pass(id packet.ID, now sim.Time) bool
}

// Requeuer is a discipline the kernel bypasses when empty: a packet that
// finds it empty while the link is busy waits in the device's requeue slot
// instead of joining it (sch_direct_xmit, dev_requeue_skb).
type Requeuer interface {
	Requeue(id packet.ID, now sim.Time)
}

// requeueSlot is the device's requeue slot (dev_requeue_skb, q->gso_skb)
// for a discipline the kernel bypasses when empty: it holds at most one
// packet, which leaves before anything the discipline holds (dequeue_skb
// takes it first) without passing through the discipline's dequeue.
type requeueSlot struct {
	id   packet.ID
	full bool
}

// put holds id, queued at now.
func (r *requeueSlot) put(pool *packet.Pool, id packet.ID, now sim.Time) {
	pool.Get(id).EnqAt = now
	r.id, r.full = id, true
}

// take empties the slot, reporting what it held.
func (r *requeueSlot) take() (packet.ID, bool) {
	if !r.full {
		return 0, false
	}
	r.full = false
	return r.id, true
}

// Drainer is a discipline whose dequeue finding it empty changes its state:
// the link calls Drained when a dequeue has left it empty, as __qdisc_run
// dequeues once more at once after the last packet.
type Drainer interface {
	Drained(now sim.Time)
}

// ring is a growable FIFO of packet IDs with their sizes' running total.
// Its length is a power of two, so positions wrap with a mask, not a
// division. Each slot keeps the packet's size beside its ID, so that
// neither end reads the packet itself: a packet that has waited long in
// the queue is no longer in the caches when it leaves, and the link reads
// it only after the dequeue (prefetched by pop for the next one).
type ring struct {
	buf     []slot
	head, n int
	bytes   units.Bytes
}

type slot struct {
	id   packet.ID
	size uint32 // bytes on the wire (a packet's Size never changes)
}

func (r *ring) push(p *packet.Pool, id packet.ID) { r.pushSize(id, p.Get(id).Size) }

// pushSize queues id, of size bytes, at the tail.
func (r *ring) pushSize(id packet.ID, size units.Bytes) {
	if r.n == len(r.buf) {
		nb := make([]slot, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = slot{id, uint32(size)}
	r.n++
	r.bytes += size
}

func (r *ring) pop(p *packet.Pool) (packet.ID, bool) {
	if r.n == 0 {
		return 0, false
	}
	s := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.bytes -= units.Bytes(s.size)
	if r.n > 0 {
		p.Prefetch(r.buf[r.head].id)
	}
	return s.id, true
}

var (
	errLimit       = errors.New("qdisc: a limit is a byte or packet count, not negative")
	errPacketLimit = errors.New("qdisc: this discipline's limit is a positive packet count")
)

// packetLimit is sch->limit of the packet-limited kernel disciplines
// (codel, fq_codel, dualpi2, pie), and their Limiter methods; each one's
// Trim sheds what a lower limit leaves beyond it, as its change function
// does.
type packetLimit struct{ limit int }

// SetLimit changes the packet limit; these disciplines have no byte limit.
func (l *packetLimit) SetLimit(bytes units.Bytes, pkts int) error {
	if bytes != 0 || pkts <= 0 {
		return errPacketLimit
	}
	l.limit = pkts
	return nil
}

// Limit is the packet limit (sch->limit).
func (l *packetLimit) Limit() (units.Bytes, int) { return 0, l.limit }

// dequeueTrim drops what q holds beyond limit packets as fq_codel_change
// and fq_pie_change do: through q's own dequeue (qdisc_dequeue_internal),
// so that its AQM sees each packet leave.
func dequeueTrim(q Qdisc, limit int, env Env, now sim.Time) {
	for _, n := q.Backlog(); n > limit; _, n = q.Backlog() {
		id, ok := q.Dequeue(now)
		if !ok {
			return
		}
		env.Drop(id, now)
	}
}
