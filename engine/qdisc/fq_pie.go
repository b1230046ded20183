package qdisc

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// fqPIEChunk is how many flows one run of fq_pie_timer updates: the rest
// wait for the next jiffy.
const fqPIEChunk = 2048

// FQPIEParams configure sch_fq_pie; zero values take fq_pie_init's.
type FQPIEParams struct {
	PIE     PIEParams   // LimitPkts default 10240; ECN as given
	Flows   int         // hash buckets, default 1024
	Quantum units.Bytes // DRR quantum, default psched_mtu (1500 B here)
	// ECNProb is the probability in percent up to which an ECN-capable
	// packet is marked rather than dropped, default 10 (ECNProbSet for 0).
	ECNProb    uint32
	ECNProbSet bool
	HashSeed   uint32 // perturbs the flow hash
}

// fqpFlow is struct fq_pie_flow: a queue with its own PIE state and DRR
// deficit.
type fqpFlow struct {
	q       ring
	listed  bool // !list_empty(&flow->flowchain)
	active  bool // in FQPIE.active: the timer's updates may change it
	deficit int32
	vars    pieVars
}

// idxQueue is a FIFO of flow indices: fq_pie's new and old flow lists.
type idxQueue struct {
	a    []int32
	head int
}

func (l *idxQueue) empty() bool  { return l.head == len(l.a) }
func (l *idxQueue) front() int32 { return l.a[l.head] }
func (l *idxQueue) push(i int32) { l.a = append(l.a, i) }
func (l *idxQueue) pop() (i int32) {
	i, l.head = l.a[l.head], l.head+1
	if l.head == len(l.a) { // empty: reuse the slice from its start
		l.a, l.head = l.a[:0], 0
	}
	return i
}

// FQPIE is net/sched/sch_fq_pie.c: stochastic flow queues served by deficit
// round robin, new flows first, each with its own PIE drop probability
// (include/net/pie.h) on its own backlog, updated by one timer for all
// flows, at most 2048 of them per jiffy. Drops happen at enqueue only.
// skb truesize is not modelled, so neither is memory_limit.
//
// The timer runs lazily, as PIE's does, and visits only the flows whose
// state an update can change: those holding packets or not yet back in
// pie_vars_init's idle state.
type FQPIE struct {
	env      Env
	rng      *rand.Rand
	flows    []fqpFlow
	newFlows idxQueue
	oldFlows idxQueue
	active   []int32
	quantum  int32
	ecnProb  uint64 // MAX_PROB/100 · ecn_prob
	packetLimit
	p       pieParams
	seed    uint32
	qlen    int
	backlog units.Bytes

	nextChunk sim.Time // when fq_pie_timer next runs
	cursor    int      // flows_cursor

	// Stats count what fq_pie did (struct pie_stats and new_flow_count).
	Stats FQPIEStats
}

// FQPIEStats are fq_pie's counters.
type FQPIEStats struct {
	PacketsIn, Dropped, Overlimit, ECNMarks, NewFlowCount uint64
}

// NewFQPIE follows fq_pie_init and fq_pie_change. rng draws the flows'
// pie_drop_early random bytes.
func NewFQPIE(env Env, rng *rand.Rand, p FQPIEParams) *FQPIE {
	if p.PIE.LimitPkts == 0 {
		p.PIE.LimitPkts = 10 * 1024
	}
	if p.Flows == 0 {
		p.Flows = 1024
	}
	if p.Quantum == 0 {
		p.Quantum = codelDefaultMTU
	}
	if !p.ECNProbSet {
		p.ECNProb = 10
	}
	q := &FQPIE{env: env, rng: rng, flows: make([]fqpFlow, p.Flows), quantum: int32(p.Quantum),
		ecnProb: pieMaxProb / 100 * uint64(p.ECNProb), packetLimit: packetLimit{p.PIE.LimitPkts},
		p: newPIEParams(p.PIE), seed: p.HashSeed, nextChunk: sim.Time(pieFirstUpdate)}
	for i := range q.flows {
		q.flows[i].vars.init()
	}
	return q
}

// Backlog is the queued bytes and packets.
func (q *FQPIE) Backlog() (units.Bytes, int) { return q.backlog, q.qlen }

// Bucket is the flow queue a packet hashes to (fq_pie_hash).
func (q *FQPIE) Bucket(p *packet.Packet) int {
	return int(reciprocalScale(flowHash(p, q.seed), uint32(len(q.flows))))
}

// Prob is flow i's drop probability at now, after the updates due by then.
func (q *FQPIE) Prob(i int, now sim.Time) uint64 {
	q.catchUp(now)
	return q.flows[i].vars.prob
}

// catchUp runs fq_pie_timer's updates due at or before now: each run
// updates the next 2048 flows from the cursor and comes back a jiffy (1 ms
// at HZ 1000) later until every flow is done, then tupdate later. A flow
// out of the active set is empty and idle, which an update leaves as it
// is; with none active, whole cycles are skipped at once.
func (q *FQPIE) catchUp(now sim.Time) {
	chunks := (len(q.flows) + fqPIEChunk - 1) / fqPIEChunk
	cycle := q.p.tupdate + sim.Duration(chunks-1)*sim.Millisecond
	for q.nextChunk <= now {
		if len(q.active) == 0 && q.cursor == 0 {
			q.nextChunk += (now - q.nextChunk) / sim.Time(cycle) * sim.Time(cycle)
		}
		lo, hi := q.cursor, min(q.cursor+fqPIEChunk, len(q.flows))
		for k := 0; k < len(q.active); {
			i := q.active[k]
			f := &q.flows[i]
			if int(i) < lo || int(i) >= hi {
				k++
				continue
			}
			q.p.calculateProbability(&f.vars, uint32(f.q.bytes))
			if f.q.n == 0 && f.vars == pieIdle {
				f.active = false
				q.active[k] = q.active[len(q.active)-1]
				q.active = q.active[:len(q.active)-1]
				continue
			}
			k++
		}
		if q.cursor = hi; q.cursor >= len(q.flows) {
			q.cursor = 0
			q.nextChunk += sim.Time(q.p.tupdate)
		} else {
			q.nextChunk += sim.Time(sim.Millisecond)
		}
	}
}

// Enqueue follows fq_pie_qdisc_enqueue: tail drop at sch->limit; otherwise
// the packet's flow decides an early drop on its own backlog and PIE state,
// or for an ECN-capable packet a CE mark while the flow's probability is at
// most ecn_prob; a flow that gets a packet and was on no list joins the new
// flows with a quantum of deficit.
func (q *FQPIE) Enqueue(id packet.ID, now sim.Time) bool {
	q.catchUp(now)
	p := q.env.Pool.Get(id)
	i := int32(q.Bucket(p))
	f := &q.flows[i]
	if q.qlen >= q.limit {
		q.Stats.Overlimit++
		q.Stats.Dropped++
		f.vars.accuProb = 0
		return false
	}
	ok, marked := q.p.admit(&f.vars, q.rng, q.env, id, now, f.q.bytes, q.ecnProb)
	if !ok {
		q.Stats.Dropped++
		return false
	}
	if marked {
		q.Stats.ECNMarks++
	}
	p.EnqAt = now
	q.Stats.PacketsIn++
	q.qlen++
	q.backlog += p.Size
	f.q.push(q.env.Pool, id)
	if !f.listed {
		f.listed = true
		q.newFlows.push(i)
		q.Stats.NewFlowCount++
		f.deficit = q.quantum
	}
	if !f.active {
		f.active = true
		q.active = append(q.active, i)
	}
	return true
}

// Dequeue follows fq_pie_qdisc_dequeue: deficit round robin, new flows
// first; a flow out of deficit gets a quantum more and goes to the old
// list's tail; an empty new flow goes to the old list while that holds
// flows (so that new flows cannot starve it), else leaves the lists. The
// packet's flow then runs pie_process_dequeue on its own backlog.
func (q *FQPIE) Dequeue(now sim.Time) (packet.ID, bool) {
	q.catchUp(now)
	for {
		head := &q.newFlows
		if head.empty() {
			head = &q.oldFlows
			if head.empty() {
				return 0, false
			}
		}
		i := head.front()
		f := &q.flows[i]
		if f.deficit <= 0 {
			f.deficit += q.quantum
			q.oldFlows.push(head.pop())
			continue
		}
		id, ok := f.q.pop(q.env.Pool)
		if !ok {
			if head == &q.newFlows && !q.oldFlows.empty() {
				q.oldFlows.push(head.pop())
			} else {
				head.pop()
				f.listed = false
			}
			continue
		}
		p := q.env.Pool.Get(id)
		q.qlen--
		q.backlog -= p.Size
		f.deficit -= int32(p.Size)
		q.p.processDequeue(&f.vars, p.EnqAt, now, p.Size, f.q.bytes)
		return id, true
	}
}

// Drained is the empty dequeue __qdisc_run makes at once after the last
// packet leaves: fq_pie_qdisc_dequeue walks the lists, refilling each
// flow's deficit or unlinking it, so the next busy period starts with every
// flow new.
func (q *FQPIE) Drained(now sim.Time) { q.Dequeue(now) }

// Trim follows fq_pie_change: dequeue, as the qdisc would, and drop until
// the queue is within the limit.
func (q *FQPIE) Trim(now sim.Time) { dequeueTrim(q, q.limit, q.env, now) }
