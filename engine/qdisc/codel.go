package qdisc

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// CoDelParams are struct codel_params: target, interval, ECN, ce_threshold.
type CoDelParams struct {
	Target    sim.Duration // default 5 ms
	Interval  sim.Duration // default 100 ms
	ECN       bool         // CE-mark ECN-capable packets instead of dropping
	LimitPkts int          // tail-drop limit (sch->limit), default 1000
	MTU       units.Bytes  // below one MTU of backlog CoDel never drops
	// CEThreshold CE-marks ECT packets whose sojourn exceeds it; 0: off
	// (CODEL_DISABLED_THRESHOLD).
	CEThreshold sim.Duration
}

// CoDel is sch_codel.c with the algorithm of include/net/codel_impl.h.
type CoDel struct {
	env Env
	q   ring
	packetLimit
	params codelParams
	vars   codelVars
	stats  codelStats

	// Drops and marks made by the control law (not tail drops).
	Drops, Marks uint64
}

// NewCoDel returns a CoDel queue; zero parameters take the kernel defaults.
func NewCoDel(env Env, p CoDelParams) *CoDel {
	if p.LimitPkts == 0 {
		p.LimitPkts = codelDefaultLimit
	}
	return &CoDel{env: env, packetLimit: packetLimit{p.LimitPkts}, params: newCodelParams(p)}
}

// Enqueue follows codel_qdisc_enqueue: tail drop at the packet limit,
// otherwise stamp the enqueue time.
func (c *CoDel) Enqueue(id packet.ID, now sim.Time) bool {
	if c.q.n >= c.limit {
		return false
	}
	c.env.Pool.Get(id).EnqAt = now
	c.q.push(c.env.Pool, id)
	return true
}

// Backlog is the queued bytes and packets.
func (c *CoDel) Backlog() (units.Bytes, int) { return c.q.bytes, c.q.n }

// Dequeue follows codel_qdisc_dequeue: codel_dequeue over the one queue.
func (c *CoDel) Dequeue(now sim.Time) (packet.ID, bool) {
	id, ok := c.vars.dequeue(c.env, &c.params, &c.stats, (*codelRing)(c), now)
	c.Drops, c.Marks = c.stats.drops, c.stats.ecnMarks+c.stats.ceMarks
	return id, ok
}

// codelRing is sch_codel's dequeue_func: the head of the single queue, with
// the whole qdisc's backlog.
type codelRing CoDel

func (r *codelRing) dequeueHead() (packet.ID, bool) { return r.q.pop(r.env.Pool) }
func (r *codelRing) backlogBytes() units.Bytes      { return r.q.bytes }

// Trim follows codel_change: drop from the head until the queue is within
// the limit.
func (c *CoDel) Trim(now sim.Time) {
	for c.q.n > c.limit {
		id, _ := c.q.pop(c.env.Pool)
		c.env.Drop(id, now)
	}
}
