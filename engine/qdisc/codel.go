package qdisc

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// CoDel time is the kernel's codel_time_t: a u32 count of 1024 ns units
// (CODEL_SHIFT 10), compared with wrap-safe signed differences.
type codelTime uint32

const (
	codelShift        = 10
	recInvSqrtBits    = 16 // 8 * sizeof(u16)
	recInvSqrtShift   = 32 - recInvSqrtBits
	codelDefaultMTU   = 1500 // psched_mtu() less the 14-byte link header we do not model
	codelDefaultLimit = 1000
)

func toCodelTime(t sim.Time) codelTime { return codelTime(uint64(t/1000) >> codelShift) }

func durToCodel(d sim.Duration) codelTime { return codelTime(uint64(d/1000) >> codelShift) }

func codelAfter(a, b codelTime) bool   { return int32(a-b) > 0 }
func codelAfterEq(a, b codelTime) bool { return int32(a-b) >= 0 }
func codelBefore(a, b codelTime) bool  { return int32(a-b) < 0 }

// CoDelParams are struct codel_params: target, interval and ECN.
type CoDelParams struct {
	Target    sim.Duration // default 5 ms
	Interval  sim.Duration // default 100 ms
	ECN       bool         // CE-mark ECN-capable packets instead of dropping
	LimitPkts int          // tail-drop limit (sch->limit), default 1000
	MTU       units.Bytes  // below one MTU of backlog CoDel never drops
}

// CoDel is sch_codel.c with the algorithm of include/net/codel_impl.h.
type CoDel struct {
	env              Env
	q                ring
	params           CoDelParams
	target, interval codelTime

	// struct codel_vars
	count, lastcount uint32
	dropping         bool
	recInvSqrt       uint16
	firstAboveTime   codelTime
	dropNext         codelTime
	ldelay           codelTime

	// Drops and marks made by the control law (not tail drops).
	Drops, Marks uint64
}

// NewCoDel returns a CoDel queue; zero parameters take the kernel defaults.
func NewCoDel(env Env, p CoDelParams) *CoDel {
	if p.Target == 0 {
		p.Target = 5 * sim.Millisecond
	}
	if p.Interval == 0 {
		p.Interval = 100 * sim.Millisecond
	}
	if p.LimitPkts == 0 {
		p.LimitPkts = codelDefaultLimit
	}
	if p.MTU == 0 {
		p.MTU = codelDefaultMTU
	}
	return &CoDel{env: env, params: p, target: durToCodel(p.Target), interval: durToCodel(p.Interval)}
}

// Enqueue follows codel_qdisc_enqueue: tail drop at the packet limit,
// otherwise stamp the enqueue time.
func (c *CoDel) Enqueue(id packet.ID, now sim.Time) bool {
	if c.q.n >= c.params.LimitPkts {
		return false
	}
	c.env.Pool.Get(id).EnqAt = now
	c.q.push(c.env.Pool, id)
	return true
}

// Backlog is the queued bytes and packets.
func (c *CoDel) Backlog() (units.Bytes, int) { return c.q.bytes, c.q.n }

// newtonStep follows codel_Newton_step: one Newton iteration of
// rec_inv_sqrt ≈ 1/sqrt(count) in Q0.16.
func (c *CoDel) newtonStep() {
	invsqrt := uint32(c.recInvSqrt) << recInvSqrtShift
	invsqrt2 := uint32(uint64(invsqrt) * uint64(invsqrt) >> 32)
	val := (uint64(3) << 32) - uint64(c.count)*uint64(invsqrt2)
	val >>= 2
	val = (val * uint64(invsqrt)) >> (32 - 2 + 1)
	c.recInvSqrt = uint16(val >> recInvSqrtShift)
}

// controlLaw follows codel_control_law: t + interval/sqrt(count).
func (c *CoDel) controlLaw(t codelTime) codelTime {
	return t + codelTime(uint64(c.interval)*uint64(uint32(c.recInvSqrt)<<recInvSqrtShift)>>32)
}

// shouldDrop follows codel_should_drop for the packet just dequeued (ok) at now.
func (c *CoDel) shouldDrop(id packet.ID, ok bool, now codelTime) bool {
	if !ok {
		c.firstAboveTime = 0
		return false
	}
	c.ldelay = now - toCodelTime(c.env.Pool.Get(id).EnqAt)
	if codelBefore(c.ldelay, c.target) || c.q.bytes <= c.params.MTU {
		c.firstAboveTime = 0
		return false
	}
	if c.firstAboveTime == 0 {
		c.firstAboveTime = now + c.interval
	} else if codelAfter(now, c.firstAboveTime) {
		return true
	}
	return false
}

// markCE follows INET_ECN_set_ce: only ECN-capable packets can be marked.
func (c *CoDel) markCE(id packet.ID, now sim.Time) bool {
	if !c.params.ECN {
		return false
	}
	p := c.env.Pool.Get(id)
	if p.ECN == packet.NotECT {
		return false
	}
	if p.ECN != packet.CE {
		p.ECN = packet.CE
		c.Marks++
		if c.env.Mark != nil {
			c.env.Mark(id, now)
		}
	}
	return true
}

func (c *CoDel) drop(id packet.ID, now sim.Time) {
	c.Drops++
	c.env.Drop(id, now)
}

// Dequeue follows codel_dequeue in codel_impl.h.
func (c *CoDel) Dequeue(simNow sim.Time) (packet.ID, bool) {
	id, ok := c.q.pop(c.env.Pool)
	if !ok {
		c.dropping = false
		return id, false
	}
	now := toCodelTime(simNow)
	drop := c.shouldDrop(id, ok, now)
	if c.dropping {
		if !drop {
			c.dropping = false
		} else if codelAfterEq(now, c.dropNext) {
			for c.dropping && codelAfterEq(now, c.dropNext) {
				c.count++
				c.newtonStep()
				if c.markCE(id, simNow) {
					c.dropNext = c.controlLaw(c.dropNext)
					return id, ok
				}
				c.drop(id, simNow)
				id, ok = c.q.pop(c.env.Pool)
				if !c.shouldDrop(id, ok, now) {
					c.dropping = false
				} else {
					c.dropNext = c.controlLaw(c.dropNext)
				}
			}
		}
	} else if drop {
		if !c.markCE(id, simNow) {
			c.drop(id, simNow)
			id, ok = c.q.pop(c.env.Pool)
			c.shouldDrop(id, ok, now)
		}
		c.dropping = true
		delta := c.count - c.lastcount
		if delta > 1 && codelBefore(now-c.dropNext, 16*c.interval) {
			c.count = delta
			c.newtonStep()
		} else {
			c.count = 1
			c.recInvSqrt = ^uint16(0)
		}
		c.lastcount = c.count
		c.dropNext = c.controlLaw(now)
	}
	return id, ok
}

// SetLimit changes the packet limit (sch->limit); CoDel has no byte limit.
func (c *CoDel) SetLimit(bytes units.Bytes, pkts int) error {
	if bytes != 0 || pkts <= 0 {
		return errCoDelLimit
	}
	c.params.LimitPkts = pkts
	return nil
}
