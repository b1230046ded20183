package qdisc

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// DualPI2 constants from sch_dualpi2.c.
const (
	// maxProb is MAX_PROB: probabilities are u32 fractions of 2^32 - 1.
	maxProb = math.MaxUint32
	// alphaBetaShift is ALPHA_BETA_SHIFT: netlink gains are in 1/256 Hz.
	alphaBetaShift = 8
	// alphaBetaGranularity is ALPHA_BETA_GRANULARITY: internal gains are
	// per 64 ns of delay.
	alphaBetaGranularity = 6
	alphaBetaScaling     = alphaBetaShift - alphaBetaGranularity
	// maxWC is MAX_WC: the WRR weights are percentages.
	maxWC = 100
	// dualPI2DefaultAlpha and dualPI2DefaultBeta are dualpi2_reset_default's
	// 41 (~0.16 Hz · 256) and 819 (~3.20 Hz · 256).
	dualPI2DefaultAlpha = 41
	dualPI2DefaultBeta  = 819
)

// DualPI2Params configure sch_dualpi2; zero values take
// dualpi2_reset_default's. Fixed as in the defaults: ECT(1) and CE go to the
// L-queue (ecn_mask L4S_ECT), drops at dequeue (drop_early off), classic
// drops on overload (drop_overload on), the step threshold in time, and
// min_qlen_step 0 (the step applies at any L-queue length).
type DualPI2Params struct {
	LimitPkts     int          // sch->limit, default 10000
	Target        sim.Duration // PI2 target delay, default 15 ms
	TUpdate       sim.Duration // PI2 update interval, default 16 ms
	Alpha, Beta   uint32       // PI2 gains in 1/256 Hz, default 41 and 819
	StepThreshold sim.Duration // L-queue sojourn above which it marks, default 1 ms
	Coupling      uint32       // k, default 2
	// CProtection is the C-queue's WRR weight in percent (wc); the
	// L-queue's is 100 - wc. Set CProtectionSet to use 0.
	CProtection    uint32
	CProtectionSet bool
	MTU            units.Bytes // psched_mtu; default 1500 (no link header)
}

// DualPI2 is net/sched/sch_dualpi2.c (RFC 9332): a classic and an L4S
// queue coupled through one PI2 controller. The classic queue drops (or
// marks) with p_C = p'², the L-queue marks with p_L = min(k·p', 1) or at
// its step threshold, and a WRR scheduler with credit keeps either queue
// from starving the other.
//
// The PI2 update runs every tupdate as the kernel's hrtimer does, but
// lazily: each Enqueue and Dequeue first runs the updates whose times have
// passed, in order, on the queue state that held at those times (it only
// changes at enqueue and dequeue). The result is what a timer would
// compute, with no event per update.
type DualPI2 struct {
	env  Env
	rng  *rand.Rand
	l, c ring

	packetLimit
	target      uint64       // ns
	tupdate     sim.Duration // the hrtimer period
	alpha, beta uint32       // per 64 ns of delay, in MAX_PROB units
	stepThresh  uint64       // ns
	coupling    uint32
	mtu         units.Bytes

	prob       uint32 // pi2_prob
	lastQDelay uint64 // last_qdelay, ns
	nextUpdate sim.Time

	credit, creditInit int32 // c_protection_credit, c_protection_init
	wc, wl             int32

	// Stats counts what the AQM did, by queue.
	Stats DualPI2Stats
}

// DualPI2Stats are DualPI2's counters. PI marks and drops are those of
// must_drop (p_C = p'² in the C-queue, p_L = k·p' in the L-queue); step
// marks are the L-queue's threshold marks.
type DualPI2Stats struct {
	ClassicSent, LSent   uint64 // packets dequeued and sent, by queue
	ClassicDrops, LDrops uint64 // PI drops
	ClassicMarks, LMarks uint64 // PI CE marks
	StepMarks, StepDrops uint64
	Overlimit            uint64 // tail drops at sch->limit
}

// NewDualPI2 follows dualpi2_init: dualpi2_reset_default, then the given
// parameters (dualpi2_change). rng draws dualpi2_roll's random numbers.
func NewDualPI2(env Env, rng *rand.Rand, p DualPI2Params) *DualPI2 {
	if p.LimitPkts == 0 {
		p.LimitPkts = 10000
	}
	if p.Target == 0 {
		p.Target = 15 * sim.Millisecond
	}
	if p.TUpdate == 0 {
		p.TUpdate = 16 * sim.Millisecond
	}
	if p.Alpha == 0 {
		p.Alpha = dualPI2DefaultAlpha
	}
	if p.Beta == 0 {
		p.Beta = dualPI2DefaultBeta
	}
	if p.StepThreshold == 0 {
		p.StepThreshold = sim.Millisecond
	}
	if p.Coupling == 0 {
		p.Coupling = 2
	}
	if !p.CProtectionSet {
		p.CProtection = 10
	}
	if p.MTU == 0 {
		p.MTU = codelDefaultMTU
	}
	q := &DualPI2{env: env, rng: rng, packetLimit: packetLimit{p.LimitPkts},
		target: uint64(p.Target / sim.Nanosecond), tupdate: p.TUpdate,
		alpha: scaleAlphaBeta(p.Alpha), beta: scaleAlphaBeta(p.Beta),
		stepThresh: uint64(p.StepThreshold / sim.Nanosecond), coupling: p.Coupling, mtu: p.MTU,
		nextUpdate: sim.Time(p.TUpdate)}
	q.calculateCProtection(int32(p.CProtection))
	return q
}

// scaleAlphaBeta follows dualpi2_scale_alpha_beta: a gain in 1/256 Hz to
// MAX_PROB units per 64 ns.
func scaleAlphaBeta(param uint32) uint32 {
	return uint32((uint64(param) * maxProb >> alphaBetaScaling) / uint64(sim.Second/sim.Nanosecond))
}

// calculateCProtection follows dualpi2_calculate_c_protection: the WRR
// weights and the initial credit, negative (L-queue first) when wl > wc.
func (q *DualPI2) calculateCProtection(wc int32) {
	q.wc, q.wl = wc, maxWC-wc
	q.creditInit = int32(q.mtu) * (q.wc - q.wl)
	q.credit = q.creditInit
}

// Backlog is the queued bytes and packets of both queues.
func (q *DualPI2) Backlog() (units.Bytes, int) { return q.l.bytes + q.c.bytes, q.l.n + q.c.n }

// Prob is the PI2 probability p' (pi2_prob, in units of 1/MAX_PROB) at
// now, after the updates due by then.
func (q *DualPI2) Prob(now sim.Time) uint32 {
	q.catchUp(now)
	return q.prob
}

// catchUp runs the PI2 updates (dualpi2_timer) due at or before now. With
// both queues empty, p' = 0 and no delay memory, an update changes
// nothing, so a long idle period is skipped in one step.
func (q *DualPI2) catchUp(now sim.Time) {
	for q.nextUpdate <= now {
		if q.l.n == 0 && q.c.n == 0 && q.prob == 0 && q.lastQDelay == 0 {
			periods := (now - q.nextUpdate) / sim.Time(q.tupdate)
			q.nextUpdate += (periods + 1) * sim.Time(q.tupdate)
			return
		}
		q.prob = q.calculateProbability(q.nextUpdate)
		q.nextUpdate += sim.Time(q.tupdate)
	}
}

// ns is t as ktime_get_ns would read it.
func ns(t sim.Time) uint64 { return uint64(t) / uint64(sim.Nanosecond) }

// headDelay is now minus the head packet's enqueue time in ns
// (get_queue_delays), 0 for an empty queue.
func (q *DualPI2) headDelay(r *ring, now sim.Time) uint64 {
	if r.n == 0 {
		return 0
	}
	return ns(now) - ns(q.env.Pool.Get(r.buf[r.head].id).EnqAt)
}

// calculateProbability follows calculate_probability: the PI update of p'
// on the larger of the two head-of-line delays, bounded to [0, MAX_PROB]
// (drop_overload on, so no cap at MAX_PROB/k).
func (q *DualPI2) calculateProbability(now sim.Time) uint32 {
	qdelay := max(q.headDelay(&q.l, now), q.headDelay(&q.c, now))
	delta := (int64(qdelay) - int64(q.target)) * int64(q.alpha)
	delta += (int64(qdelay) - int64(q.lastQDelay)) * int64(q.beta)
	q.lastQDelay = qdelay
	var p uint32
	if delta > 0 {
		p = uint32(uint64(delta)/(1<<alphaBetaGranularity)) + q.prob
		if p < q.prob {
			p = maxProb
		}
	} else {
		p = q.prob - uint32(uint64(-delta)/(1<<alphaBetaGranularity))
		if p > q.prob {
			p = 0
		}
	}
	return p
}

// isL4S is the classification by ECN (dualpi2_skb_classify with ecn_mask
// TC_DUALPI2_ECN_MASK_L4S_ECT): ECT(1) and CE go to the L-queue.
func isL4S(e packet.ECN) bool { return e&packet.ECT1 != 0 }

// Enqueue follows dualpi2_enqueue_skb: tail drop at sch->limit (both queues
// together), otherwise stamp and queue by classification. AQM drops happen
// at dequeue (drop_early off).
func (q *DualPI2) Enqueue(id packet.ID, now sim.Time) bool {
	q.catchUp(now)
	if q.l.n+q.c.n >= q.limit {
		q.Stats.Overlimit++
		return false
	}
	p := q.env.Pool.Get(id)
	p.EnqAt = now
	if isL4S(p.ECN) {
		q.l.push(q.env.Pool, id)
	} else {
		q.c.push(q.env.Pool, id)
	}
	return true
}

// roll follows dualpi2_roll: true with probability prob/MAX_PROB.
func (q *DualPI2) roll(prob uint32) bool { return q.rng.Uint32() <= prob }

// mustDrop follows must_drop and the classic and scalable marking it
// calls, for a packet just taken from the queues: no AQM action while less
// than 2 MTU stay queued; a classic packet is hit with p'² (two rolls),
// marked if ECT and not overloaded, else dropped; an L4S packet is marked
// with k·p', or under overload (k·p' > 1) dropped with p'² and marked
// otherwise.
func (q *DualPI2) mustDrop(id packet.ID, l4s bool, now sim.Time) bool {
	if q.l.bytes+q.c.bytes < 2*q.mtu {
		return false
	}
	prob := q.prob
	local := uint64(prob) * uint64(q.coupling)
	overload := local > maxProb
	notECT := q.env.Pool.Get(id).ECN == packet.NotECT
	if !l4s {
		//lint:ignore SA4000 two independent draws: p'² (dualpi2_classic_marking)
		if q.roll(prob) && q.roll(prob) {
			if overload || notECT {
				q.Stats.ClassicDrops++
				return true
			}
			if setCE(q.env, id, now) {
				q.Stats.ClassicMarks++
			}
		}
		return false
	}
	if overload {
		//lint:ignore SA4000 two independent draws: p'² (dualpi2_classic_marking, which overload applies to L4S)
		if q.roll(prob) && q.roll(prob) {
			q.Stats.LDrops++
			return true
		}
	} else if !q.roll(uint32(local)) {
		return false
	} else if notECT {
		q.Stats.LDrops++
		return true
	}
	if setCE(q.env, id, now) {
		q.Stats.LMarks++
	}
	return false
}

// dequeuePacket follows dequeue_packet: the L-queue goes when the C-queue
// is empty or the credit is not positive; the credit change is the
// packet's size times the other queue's weight, and only when both queues
// had packets. With both empty the credit resets.
func (q *DualPI2) dequeuePacket() (id packet.ID, l4s bool, change int32, ok bool) {
	cLen := q.c.n
	switch {
	case q.l.n > 0 && (cLen == 0 || q.credit <= 0):
		id, _ = q.l.pop(q.env.Pool)
		if cLen > 0 {
			change = q.wc
		}
		l4s = true
	case cLen > 0:
		id, _ = q.c.pop(q.env.Pool)
		if q.l.n > 0 {
			change = -q.wl
		}
	default:
		q.credit = q.creditInit
		return 0, false, 0, false
	}
	return id, l4s, change * int32(q.env.Pool.Get(id).Size), true
}

// Drained is the empty dequeue __qdisc_run makes at once after the last
// packet leaves: dequeue_packet finds both queues empty and resets the
// credit (dualpi2_reset_c_protection), so the next busy period starts
// L-queue first.
func (q *DualPI2) Drained(sim.Time) { q.credit = q.creditInit }

// Dequeue follows dualpi2_qdisc_dequeue: take packets by WRR until one
// survives the PI2 drop and, in the L-queue, the step AQM (do_step_aqm:
// mark an ECT packet whose sojourn exceeds the step threshold, drop a
// Not-ECT one). Only the packet sent moves the credit.
func (q *DualPI2) Dequeue(now sim.Time) (packet.ID, bool) {
	q.catchUp(now)
	for {
		id, l4s, change, ok := q.dequeuePacket()
		if !ok {
			return 0, false
		}
		if q.mustDrop(id, l4s, now) {
			q.env.Drop(id, now)
			continue
		}
		if l4s {
			p := q.env.Pool.Get(id)
			if ns(now)-ns(p.EnqAt) > q.stepThresh {
				if p.ECN == packet.NotECT {
					q.Stats.StepDrops++
					q.env.Drop(id, now)
					continue
				}
				if setCE(q.env, id, now) {
					q.Stats.StepMarks++
				}
			}
			q.Stats.LSent++
		} else {
			q.Stats.ClassicSent++
		}
		q.credit += change
		return id, true
	}
}

// Trim follows dualpi2_change: drop from the C-queue's head while it holds
// packets, then from the L-queue's, until the queue is within the limit.
func (q *DualPI2) Trim(now sim.Time) {
	for q.l.n+q.c.n > q.limit {
		r := &q.c
		if r.n == 0 {
			r = &q.l
		}
		id, _ := r.pop(q.env.Pool)
		q.env.Drop(id, now)
	}
}
