package qdisc

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// FQCoDelParams configure sch_fq_codel; zero values take fq_codel_init's
// defaults.
type FQCoDelParams struct {
	CoDel     CoDelParams // LimitPkts default 10240; ECN is taken as given
	Flows     int         // hash buckets, default 1024
	Quantum   units.Bytes // DRR quantum, default one MTU (1500 B here)
	DropBatch int         // packets fq_codel_drop may drop at once, default 64
	HashSeed  uint32      // perturbs the flow hash
}

// fqcFlow is struct fq_codel_flow: a CoDel-managed FIFO with its DRR
// deficit, linked on the new or old list.
type fqcFlow struct {
	q       ring
	parent  *FQCoDel
	next    int32 // next flow on the list it is on; -1 at the end
	listed  bool  // !list_empty(&flow->flowchain)
	deficit int32
	vars    codelVars
}

// flowList is one of fq_codel's round-robin lists. Flows join at the tail
// and only the head ever leaves, so a singly linked queue is enough.
type flowList struct{ head, tail int32 }

func (l *flowList) empty() bool { return l.head < 0 }

func (l *flowList) pushBack(flows []fqcFlow, i int32) {
	flows[i].next = -1
	if l.head < 0 {
		l.head = i
	} else {
		flows[l.tail].next = i
	}
	l.tail = i
}

func (l *flowList) popFront(flows []fqcFlow) int32 {
	i := l.head
	l.head = flows[i].next
	flows[i].next = -1
	return i
}

// FQCoDel is net/sched/sch_fq_codel.c: stochastic flow queues served by
// deficit round robin, new flows first, each controlled by CoDel.
type FQCoDel struct {
	env       Env
	flows     []fqcFlow
	newFlows  flowList
	oldFlows  flowList
	quantum   int32
	dropBatch int
	packetLimit
	seed    uint32
	params  codelParams
	stats   codelStats
	qlen    int
	backlog units.Bytes
	// requeued holds a packet the kernel's bypass handed to a busy device
	// (Requeue): it leaves before every flow.
	requeued requeueSlot

	// Counters: packets dropped by fq_codel_drop on overflow
	// (drop_overlimit), and flows that became new (new_flow_count).
	DropOverlimit, NewFlowCount uint64
}

// NewFQCoDel follows fq_codel_init and fq_codel_change.
func NewFQCoDel(env Env, p FQCoDelParams) *FQCoDel {
	if p.CoDel.LimitPkts == 0 {
		p.CoDel.LimitPkts = 10 * 1024
	}
	if p.Flows == 0 {
		p.Flows = 1024
	}
	if p.Quantum == 0 {
		p.Quantum = codelDefaultMTU
	}
	if p.DropBatch == 0 {
		p.DropBatch = 64
	}
	q := &FQCoDel{env: env, flows: make([]fqcFlow, p.Flows), newFlows: flowList{-1, -1}, oldFlows: flowList{-1, -1},
		quantum: int32(max(256, p.Quantum)), dropBatch: p.DropBatch, packetLimit: packetLimit{p.CoDel.LimitPkts},
		seed: p.HashSeed, params: newCodelParams(p.CoDel)}
	for i := range q.flows {
		q.flows[i].parent, q.flows[i].next = q, -1
	}
	return q
}

// Backlog is the queued bytes and packets.
func (q *FQCoDel) Backlog() (units.Bytes, int) { return q.backlog, q.qlen }

// Stats are the CoDel counters over all flows: control-law drops, control-law
// ECN marks and ce_threshold marks.
func (q *FQCoDel) Stats() (drops, ecnMarks, ceMarks uint64) {
	return q.stats.drops, q.stats.ecnMarks, q.stats.ceMarks
}

// Bucket is the flow queue a packet hashes to (fq_codel_hash).
func (q *FQCoDel) Bucket(p *packet.Packet) int {
	return int(reciprocalScale(flowHash(p, q.seed), uint32(len(q.flows))))
}

// Pass is __dev_xmit_skb's bypass of an empty fq_codel (fq_codel_init sets
// TCQ_F_CAN_BYPASS): a packet that finds it empty and the link idle goes
// straight to the link, and fq_codel never sees it: no flow is listed, no
// deficit or CoDel state is touched.
func (q *FQCoDel) Pass(packet.ID, sim.Time) bool { return true }

// Requeue is the same bypass when the link is busy: sch_direct_xmit finds
// the device stopped and requeues the packet (dev_requeue_skb), outside the
// flows; it counts in the backlog and leaves before anything enqueued after
// it (dequeue_skb takes the requeued skb first).
func (q *FQCoDel) Requeue(id packet.ID, now sim.Time) {
	q.requeued.put(q.env.Pool, id, now)
	q.qlen++
	q.backlog += q.env.Pool.Get(id).Size
}

// Drained is the empty dequeue __qdisc_run makes at once after the last
// packet leaves: fq_codel_dequeue walks the lists, refilling each flow's
// deficit or unlinking it, and ends its CoDel dropping state, so the next
// busy period starts with every flow new.
func (q *FQCoDel) Drained(now sim.Time) { q.Dequeue(now) }

// Enqueue follows fq_codel_enqueue: the packet always joins its flow; if
// that takes the qdisc over its limit, fq_codel_drop sheds packets from the
// head of the fattest flow, possibly this one. Enqueue therefore never
// refuses a packet: the drops go through Env.
func (q *FQCoDel) Enqueue(id packet.ID, now sim.Time) bool {
	p := q.env.Pool.Get(id)
	idx := q.Bucket(p)
	p.EnqAt = now
	f := &q.flows[idx]
	f.q.push(q.env.Pool, id)
	q.backlog += p.Size
	if !f.listed {
		f.listed = true
		q.newFlows.pushBack(q.flows, int32(idx))
		q.NewFlowCount++
		f.deficit = q.quantum
	}
	q.qlen++
	if q.qlen <= q.limit {
		return true
	}
	before := q.qlen
	q.drop(now)
	q.DropOverlimit += uint64(before - q.qlen)
	return true
}

// drop follows fq_codel_drop: find the flow with the largest backlog (the
// first on ties) and drop from its head until half that backlog is gone or
// drop_batch_size packets are.
func (q *FQCoDel) drop(now sim.Time) {
	idx, fattest := 0, units.Bytes(0)
	for i := range q.flows {
		if b := q.flows[i].q.bytes; b > fattest {
			idx, fattest = i, b
		}
	}
	threshold := fattest >> 1
	f := &q.flows[idx]
	n, dropped := 0, units.Bytes(0)
	for {
		id, _ := f.q.pop(q.env.Pool)
		size := q.env.Pool.Get(id).Size
		dropped += size
		q.backlog -= size
		q.qlen--
		q.env.Drop(id, now)
		n++
		if n >= q.dropBatch || dropped >= threshold {
			break
		}
	}
	// The flow's CoDel counts them as drops: its next dropping state
	// starts from a count raised by them (flow->cvars.count += i).
	f.vars.count += uint32(n)
}

// dequeueHead is fq_codel's dequeue_func for flow f.
func (f *fqcFlow) dequeueHead() (packet.ID, bool) {
	id, ok := f.q.pop(f.parent.env.Pool)
	if ok {
		f.parent.qlen--
		f.parent.backlog -= f.parent.env.Pool.Get(id).Size
	}
	return id, ok
}

// backlogBytes is sch->qstats.backlog: CoDel's one-MTU floor looks at the
// whole qdisc, not the flow.
func (f *fqcFlow) backlogBytes() units.Bytes { return f.parent.backlog }

// Dequeue follows fq_codel_dequeue: take the first flow of new_flows, else
// of old_flows; a flow out of deficit gets a quantum and moves to the tail
// of old_flows; an empty new flow takes one pass through old_flows before
// it leaves, so that new flows cannot starve old ones. A requeued packet
// (Requeue) leaves first.
func (q *FQCoDel) Dequeue(now sim.Time) (packet.ID, bool) {
	if id, ok := q.requeued.take(); ok {
		q.qlen--
		q.backlog -= q.env.Pool.Get(id).Size
		return id, true
	}
	for {
		head := &q.newFlows
		if head.empty() {
			head = &q.oldFlows
			if head.empty() {
				return 0, false
			}
		}
		fi := head.head
		f := &q.flows[fi]
		if f.deficit <= 0 {
			f.deficit += q.quantum
			head.popFront(q.flows)
			q.oldFlows.pushBack(q.flows, fi)
			continue
		}
		id, ok := f.vars.dequeue(q.env, &q.params, &q.stats, f, now)
		if !ok {
			head.popFront(q.flows)
			if head == &q.newFlows && !q.oldFlows.empty() {
				q.oldFlows.pushBack(q.flows, fi)
			} else {
				f.listed = false
			}
			continue
		}
		f.deficit -= int32(q.env.Pool.Get(id).Size)
		return id, true
	}
}

// Trim follows fq_codel_change: dequeue, as the qdisc would (CoDel's own
// drops included), and drop until the queue is within the limit.
func (q *FQCoDel) Trim(now sim.Time) { dequeueTrim(q, q.limit, q.env, now) }
