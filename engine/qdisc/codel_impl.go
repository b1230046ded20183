package qdisc

import (
	"math"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// This file is include/net/codel_impl.h, shared by sch_codel and
// sch_fq_codel: the parameters, the per-queue state and codel_dequeue.

// CoDel time is the kernel's codel_time_t: a u32 count of 1024 ns units
// (CODEL_SHIFT 10), compared with wrap-safe signed differences.
type codelTime uint32

const (
	codelShift        = 10
	recInvSqrtBits    = 16 // 8 * sizeof(u16)
	recInvSqrtShift   = 32 - recInvSqrtBits
	codelDefaultMTU   = 1500 // psched_mtu() less the 14-byte link header we do not model
	codelDefaultLimit = 1000
	// codelDisabled is CODEL_DISABLED_THRESHOLD (INT_MAX): no ldelay is after it.
	codelDisabled codelTime = math.MaxInt32
)

func toCodelTime(t sim.Time) codelTime { return codelTime(uint64(t/1000) >> codelShift) }

func durToCodel(d sim.Duration) codelTime { return codelTime(uint64(d/1000) >> codelShift) }

func codelAfter(a, b codelTime) bool   { return int32(a-b) > 0 }
func codelAfterEq(a, b codelTime) bool { return int32(a-b) >= 0 }
func codelBefore(a, b codelTime) bool  { return int32(a-b) < 0 }

// codelParams is struct codel_params in CoDel time units.
type codelParams struct {
	target, interval, ceThreshold codelTime
	ecn                           bool
	mtu                           units.Bytes
}

// newCodelParams follows codel_params_init (5 ms, 100 ms, ce_threshold off)
// with the given values laid over it.
func newCodelParams(p CoDelParams) codelParams {
	out := codelParams{target: durToCodel(5 * sim.Millisecond), interval: durToCodel(100 * sim.Millisecond),
		ceThreshold: codelDisabled, ecn: p.ECN, mtu: p.MTU}
	if p.Target != 0 {
		out.target = durToCodel(p.Target)
	}
	if p.Interval != 0 {
		out.interval = durToCodel(p.Interval)
	}
	if p.CEThreshold != 0 {
		out.ceThreshold = durToCodel(p.CEThreshold)
	}
	if out.mtu == 0 {
		out.mtu = codelDefaultMTU
	}
	return out
}

// codelVars is struct codel_vars: one controlled queue's state.
type codelVars struct {
	count, lastcount uint32
	dropping         bool
	recInvSqrt       uint16
	firstAboveTime   codelTime
	dropNext         codelTime
	ldelay           codelTime
}

// codelStats is struct codel_stats: drops by the control law, its ECN marks
// and ce_threshold marks.
type codelStats struct {
	drops, ecnMarks, ceMarks uint64
}

// codelSource is what codel_dequeue pulls from: dequeue_func, and the
// backlog it compares with one MTU (the whole qdisc's, also in fq_codel).
type codelSource interface {
	dequeueHead() (packet.ID, bool)
	backlogBytes() units.Bytes
}

// newtonStep follows codel_Newton_step: one Newton iteration of
// rec_inv_sqrt ≈ 1/sqrt(count) in Q0.16.
func (v *codelVars) newtonStep() {
	invsqrt := uint32(v.recInvSqrt) << recInvSqrtShift
	invsqrt2 := uint32(uint64(invsqrt) * uint64(invsqrt) >> 32)
	val := (uint64(3) << 32) - uint64(v.count)*uint64(invsqrt2)
	val >>= 2
	val = (val * uint64(invsqrt)) >> (32 - 2 + 1)
	v.recInvSqrt = uint16(val >> recInvSqrtShift)
}

// controlLaw follows codel_control_law: t + interval/sqrt(count).
func (v *codelVars) controlLaw(t, interval codelTime) codelTime {
	return t + codelTime(uint64(interval)*uint64(uint32(v.recInvSqrt)<<recInvSqrtShift)>>32)
}

// shouldDrop follows codel_should_drop for the packet just dequeued (ok) at now.
func (v *codelVars) shouldDrop(env Env, p *codelParams, src codelSource, id packet.ID, ok bool, now codelTime) bool {
	if !ok {
		v.firstAboveTime = 0
		return false
	}
	v.ldelay = now - toCodelTime(env.Pool.Get(id).EnqAt)
	if codelBefore(v.ldelay, p.target) || src.backlogBytes() <= p.mtu {
		v.firstAboveTime = 0
		return false
	}
	if v.firstAboveTime == 0 {
		v.firstAboveTime = now + p.interval
	} else if codelAfter(now, v.firstAboveTime) {
		return true
	}
	return false
}

// markCE is "params->ecn && INET_ECN_set_ce(skb)".
func markCE(env Env, p *codelParams, st *codelStats, id packet.ID, now sim.Time) bool {
	if !p.ecn || !setCE(env, id, now) {
		return false
	}
	st.ecnMarks++
	return true
}

// dequeue follows codel_dequeue in codel_impl.h, ce_threshold included.
func (v *codelVars) dequeue(env Env, p *codelParams, st *codelStats, src codelSource, simNow sim.Time) (packet.ID, bool) {
	id, ok := src.dequeueHead()
	if !ok {
		v.dropping = false
		return id, false
	}
	now := toCodelTime(simNow)
	drop := v.shouldDrop(env, p, src, id, ok, now)
	if v.dropping {
		if !drop {
			v.dropping = false
		} else if codelAfterEq(now, v.dropNext) {
			for v.dropping && codelAfterEq(now, v.dropNext) {
				v.count++
				v.newtonStep()
				if markCE(env, p, st, id, simNow) {
					v.dropNext = v.controlLaw(v.dropNext, p.interval)
					return v.ceThreshold(env, p, st, id, ok, simNow)
				}
				st.drops++
				env.Drop(id, simNow)
				id, ok = src.dequeueHead()
				if !v.shouldDrop(env, p, src, id, ok, now) {
					v.dropping = false
				} else {
					v.dropNext = v.controlLaw(v.dropNext, p.interval)
				}
			}
		}
	} else if drop {
		if !markCE(env, p, st, id, simNow) {
			st.drops++
			env.Drop(id, simNow)
			id, ok = src.dequeueHead()
			v.shouldDrop(env, p, src, id, ok, now)
		}
		v.dropping = true
		delta := v.count - v.lastcount
		if delta > 1 && codelBefore(now-v.dropNext, 16*p.interval) {
			v.count = delta
			v.newtonStep()
		} else {
			v.count = 1
			v.recInvSqrt = ^uint16(0)
		}
		v.lastcount = v.count
		v.dropNext = v.controlLaw(now, p.interval)
	}
	return v.ceThreshold(env, p, st, id, ok, simNow)
}

// ceThreshold is codel_dequeue's end: CE-mark the packet it returns if its
// sojourn is above ce_threshold.
func (v *codelVars) ceThreshold(env Env, p *codelParams, st *codelStats, id packet.ID, ok bool, now sim.Time) (packet.ID, bool) {
	if ok && codelAfter(v.ldelay, p.ceThreshold) && setCE(env, id, now) {
		st.ceMarks++
	}
	return id, ok
}
