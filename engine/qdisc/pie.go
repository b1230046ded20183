package qdisc

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// PIE constants from include/net/pie.h and the psched clock.
const (
	// pieMaxProb is MAX_PROB, U64_MAX >> BITS_PER_BYTE: probabilities are
	// 56-bit fractions, so that sums of a few stay within a u64.
	pieMaxProb = math.MaxUint64 >> 8
	// pieQueueThreshold is QUEUE_THRESHOLD: the bytes a drain-rate
	// measurement cycle needs (dq_rate_estimator).
	pieQueueThreshold = 16384
	// pieScale is PIE_SCALE: the drain rate's fixed point.
	pieScale = 8
	// pieDQCountInvalid is DQCOUNT_INVALID, -1 in a u64.
	pieDQCountInvalid = math.MaxUint64
	// pieDTimeInvalid is DTIME_INVALID.
	pieDTimeInvalid = math.MaxUint64
	// pschedShift is PSCHED_SHIFT: psched ticks are 64 ns.
	pschedShift = 6
	// pschedTicksPerSec is PSCHED_TICKS_PER_SEC.
	pschedTicksPerSec = 1_000_000_000 >> pschedShift
	// pieFirstUpdate is pie_init's first timer, HZ/2 jiffies after init.
	pieFirstUpdate = 500 * sim.Millisecond
)

// PIEParams configure sch_pie; zero values take pie_params_init's.
type PIEParams struct {
	LimitPkts int          // sch->limit, default 1000
	Target    sim.Duration // target queueing delay, default 15 ms
	// TUpdate is the probability update interval, default 15 ms; the
	// timer runs on jiffies at HZ 1000, so it is rounded up to whole
	// milliseconds, as usecs_to_jiffies rounds.
	TUpdate     sim.Duration
	Alpha, Beta uint32 // gains in 1/16 Hz, 0..32; default 2 and 20 (AlphaBetaSet for 0)
	// AlphaBetaSet says Alpha and Beta are given, zeros included.
	AlphaBetaSet bool
	ECN          bool        // mark ECT packets while the probability is at most 10 %
	ByteMode     bool        // scale the probability by the packet's size over the MTU
	DQRate       bool        // dq_rate_estimator: queue delay by Little's law, not timestamps
	MTU          units.Bytes // psched_mtu; default 1500 (no link header)
}

// PIE is net/sched/sch_pie.c with include/net/pie.h (RFC 8033): a tail
// queue whose enqueue drops (or marks) at random with a probability a PI
// controller updates every tupdate from the queueing delay, after a burst
// allowance of 150 ms. By default the delay is the dequeued packet's
// sojourn (the kernel's default since Linux 5.7); with DQRate it is the
// backlog over a measured drain rate, as RFC 8033 first wrote it.
//
// The update runs every tupdate on the jiffies timer, the first HZ/2 after
// init, and is computed lazily as DualPI2's: each Enqueue and Dequeue first
// runs the updates due by then on the state that held at their times (it
// only changes at enqueue and dequeue).
type PIE struct {
	env Env
	rng *rand.Rand
	q   ring

	packetLimit
	p          pieParams
	vars       pieVars
	nextUpdate sim.Time

	// Stats are pie_stats.
	Stats PIEStats
}

// pieParams is struct pie_params as the PIE functions of include/net/pie.h
// and sch_pie.c take it, shared by pie and fq_pie.
type pieParams struct {
	target      uint64       // psched ticks
	tupdate     sim.Duration // the timer's period
	alpha, beta uint64       // pie_calculate_probability's scaled gains, before auto-tuning
	ecn         bool
	byteMode    bool
	dqRate      bool
	mtu         units.Bytes
}

// newPIEParams follows pie_params_init, then the given parameters
// (pie_change, fq_pie_change); the limit is the caller's.
func newPIEParams(p PIEParams) pieParams {
	if p.Target == 0 {
		p.Target = 15 * sim.Millisecond
	}
	if p.TUpdate == 0 {
		p.TUpdate = 15 * sim.Millisecond
	}
	if !p.AlphaBetaSet {
		p.Alpha, p.Beta = 2, 20
	}
	if p.MTU == 0 {
		p.MTU = codelDefaultMTU
	}
	return pieParams{target: pschedTicks(p.Target),
		// usecs_to_jiffies at HZ 1000: whole milliseconds, rounded up.
		tupdate: (p.TUpdate + sim.Millisecond - 1) / sim.Millisecond * sim.Millisecond,
		alpha:   uint64(p.Alpha) * (pieMaxProb / pschedTicksPerSec) >> 4,
		beta:    uint64(p.Beta) * (pieMaxProb / pschedTicksPerSec) >> 4,
		ecn:     p.ECN, byteMode: p.ByteMode, dqRate: p.DQRate, mtu: p.MTU}
}

// pieVars is struct pie_vars; times are psched ticks.
type pieVars struct {
	qdelay, qdelayOld, burstTime, dqTstamp uint64
	prob, accuProb, dqCount                uint64
	avgDQRate, backlogOld                  uint32
}

// PIEStats are struct pie_stats.
type PIEStats struct {
	PacketsIn uint64 // packets enqueued
	Dropped   uint64 // early drops and tail drops
	Overlimit uint64 // tail drops at sch->limit
	ECNMarks  uint64 // early marks
	MaxQ      int    // the most packets queued at an enqueue
}

// NewPIE follows pie_init: pie_params_init and pie_vars_init, then the
// given parameters (pie_change). rng draws pie_drop_early's random bytes.
func NewPIE(env Env, rng *rand.Rand, p PIEParams) *PIE {
	if p.LimitPkts == 0 {
		p.LimitPkts = 1000
	}
	q := &PIE{env: env, rng: rng, packetLimit: packetLimit{p.LimitPkts}, p: newPIEParams(p),
		nextUpdate: sim.Time(pieFirstUpdate)}
	q.vars.init()
	return q
}

// pschedTicks is PSCHED_NS2TICKS.
func pschedTicks(d sim.Duration) uint64 { return uint64(d/sim.Nanosecond) >> pschedShift }

// pschedTime is psched_get_time at t.
func pschedTime(t sim.Time) uint64 { return uint64(t/sim.Time(sim.Nanosecond)) >> pschedShift }

// init follows pie_vars_init: a new burst allowance of 150 ms and no
// measurement under way. The probability and the delays stay.
func (v *pieVars) init() {
	v.burstTime = pschedTicks(150 * sim.Millisecond)
	v.dqTstamp = pieDTimeInvalid
	v.accuProb = 0
	v.dqCount = pieDQCountInvalid
	v.avgDQRate = 0
}

// Backlog is the queued bytes and packets.
func (q *PIE) Backlog() (units.Bytes, int) { return q.q.bytes, q.q.n }

// Prob is the drop probability (vars->prob, in units of 1/MAX_PROB) at
// now, after the updates due by then.
func (q *PIE) Prob(now sim.Time) uint64 {
	q.catchUp(now)
	return q.vars.prob
}

// pieIdle is the state updates keep while the queue is empty: no
// probability, no delay, and pie_vars_init's.
var pieIdle = func() pieVars {
	var v pieVars
	v.init()
	return v
}()

// catchUp runs the timer's updates (pie_timer) due at or before now. An
// update of an empty queue in the idle state leaves it so, so a long idle
// period is skipped in one step.
func (q *PIE) catchUp(now sim.Time) {
	for q.nextUpdate <= now {
		if q.q.n == 0 && q.vars == pieIdle {
			periods := (now - q.nextUpdate) / sim.Time(q.p.tupdate)
			q.nextUpdate += (periods + 1) * sim.Time(q.p.tupdate)
			return
		}
		q.p.calculateProbability(&q.vars, uint32(q.q.bytes))
		q.nextUpdate += sim.Time(q.p.tupdate)
	}
}

// calculateProbability follows pie_calculate_probability: the PI update of
// the probability on the queueing delay, its gains scaled down while the
// probability is small (RFC 8033 §4.2's table), at most 2 % up a step once
// it is 10 % or more, 2 % more above 250 ms of delay, and decay by 1/64 when
// the delay was 0 for two updates.
func (pp *pieParams) calculateProbability(v *pieVars, backlog uint32) {
	var qdelay, qdelayOld uint64
	if pp.dqRate {
		qdelayOld = v.qdelay
		v.qdelayOld = v.qdelay
		if v.avgDQRate > 0 {
			qdelay = uint64(backlog<<pieScale) / uint64(v.avgDQRate)
		}
	} else {
		qdelay, qdelayOld = v.qdelay, v.qdelayOld
	}
	updateProb := !(qdelay == 0 && backlog != 0)
	alpha, beta := pp.alpha, pp.beta
	if v.prob < pieMaxProb/10 {
		alpha >>= 1
		beta >>= 1
		for power := uint64(100); v.prob < pieMaxProb/power && power <= 1_000_000; power *= 10 {
			alpha >>= 2
			beta >>= 2
		}
	}
	// The kernel's u64 products wrap into its s64 delta; Go's int64 wraps
	// the same way.
	delta := int64(alpha) * int64(qdelay-pp.target)
	delta += int64(beta) * int64(qdelay-qdelayOld)
	oldProb := v.prob
	if delta > int64(pieMaxProb/(100/2)) && v.prob >= pieMaxProb/10 {
		delta = pieMaxProb / 100 * 2
	}
	if qdelay > pschedTicks(250*sim.Millisecond) {
		delta += pieMaxProb / (100 / 2)
	}
	v.prob += uint64(delta)
	if delta > 0 {
		if v.prob < oldProb {
			v.prob = pieMaxProb
			updateProb = false
		}
	} else if v.prob > oldProb {
		v.prob = 0
	}
	if qdelay == 0 && qdelayOld == 0 && updateProb {
		v.prob -= v.prob / 64
	}
	v.qdelay = qdelay
	v.backlogOld = backlog
	if v.qdelay < pp.target/2 && v.qdelayOld < pp.target/2 && v.prob == 0 && (!pp.dqRate || v.avgDQRate > 0) {
		v.init()
	}
	if !pp.dqRate {
		v.qdelayOld = qdelay
	}
}

// dropEarly follows pie_drop_early for a packet of size bytes arriving to
// a backlog of backlog bytes: no early drop during the burst allowance,
// while the delay is under half the target with the probability under
// 20 %, or with less than 2 MTU queued; otherwise the probabilities of
// the packets since the last drop accumulate (de-randomisation): none
// below 0.85, always at 8.5, a draw in between.
func (pp *pieParams) dropEarly(v *pieVars, rng *rand.Rand, backlog, size units.Bytes) bool {
	if v.burstTime > 0 {
		return false
	}
	if v.qdelay < pp.target/2 && v.prob < pieMaxProb/5 {
		return false
	}
	if backlog < 2*pp.mtu {
		return false
	}
	local := v.prob
	if pp.byteMode && size <= pp.mtu {
		local = uint64(size) * (v.prob / uint64(pp.mtu))
	}
	if local == 0 {
		v.accuProb = 0
	} else {
		v.accuProb += local
	}
	if v.accuProb < pieMaxProb/100*85 {
		return false
	}
	if v.accuProb >= pieMaxProb/2*17 {
		return true
	}
	if rng.Uint64()>>8 < local {
		v.accuProb = 0
		return true
	}
	return false
}

// admit is pie_qdisc_enqueue's and fq_pie_qdisc_enqueue's verdict on a
// packet within the limit, arriving to a backlog of backlog bytes (the
// queue's, or the packet's flow's): taken unless pie_drop_early drops it,
// or CE-marked instead (marked) if ECN-capable while the probability is at
// most ecnMax. A drop restarts the accumulated probability.
func (pp *pieParams) admit(v *pieVars, rng *rand.Rand, env Env, id packet.ID, now sim.Time, backlog units.Bytes, ecnMax uint64) (ok, marked bool) {
	if !pp.dropEarly(v, rng, backlog, env.Pool.Get(id).Size) {
		return true, false
	}
	if pp.ecn && v.prob <= ecnMax && setCE(env, id, now) {
		return true, true
	}
	v.accuProb = 0
	return false, false
}

// Enqueue follows pie_qdisc_enqueue: tail drop at sch->limit; otherwise an
// early drop, or for an ECN-capable packet a CE mark while the
// probability is at most 10 %. A dropped packet restarts the accumulated
// probability.
func (q *PIE) Enqueue(id packet.ID, now sim.Time) bool {
	q.catchUp(now)
	p := q.env.Pool.Get(id)
	if q.q.n >= q.limit {
		q.Stats.Overlimit++
		q.Stats.Dropped++
		q.vars.accuProb = 0
		return false
	}
	ok, marked := q.p.admit(&q.vars, q.rng, q.env, id, now, q.q.bytes, pieMaxProb/10)
	if !ok {
		q.Stats.Dropped++
		return false
	}
	if marked {
		q.Stats.ECNMarks++
	}
	p.EnqAt = now
	q.Stats.PacketsIn++
	q.Stats.MaxQ = max(q.Stats.MaxQ, q.q.n)
	q.q.push(q.env.Pool, id)
	return true
}

// Dequeue follows pie_qdisc_dequeue: the head packet, then
// pie_process_dequeue on the backlog it leaves.
func (q *PIE) Dequeue(now sim.Time) (packet.ID, bool) {
	q.catchUp(now)
	id, ok := q.q.pop(q.env.Pool)
	if !ok {
		return 0, false
	}
	p := q.env.Pool.Get(id)
	q.p.processDequeue(&q.vars, p.EnqAt, now, p.Size, q.q.bytes)
	return id, true
}

// processDequeue follows pie_process_dequeue: the delay is the packet's
// sojourn (0 once the queue is empty), or with DQRate the drain rate is
// measured over cycles of QUEUE_THRESHOLD bytes and averaged with weight
// 1/8; either way the time since the last measure comes off the burst
// allowance.
func (pp *pieParams) processDequeue(v *pieVars, enqAt, now sim.Time, size, backlog units.Bytes) {
	t := pschedTime(now)
	var dtime uint64
	if !pp.dqRate {
		v.qdelay = t - pschedTime(enqAt)
		if v.dqTstamp != pieDTimeInvalid {
			dtime = uint64(uint32(t - v.dqTstamp)) // the kernel's u32
		}
		v.dqTstamp = t
		if backlog == 0 {
			v.qdelay = 0
		}
		if dtime == 0 {
			return
		}
	} else {
		if backlog >= pieQueueThreshold && v.dqCount == pieDQCountInvalid {
			v.dqTstamp = t
			v.dqCount = 0
		}
		if v.dqCount == pieDQCountInvalid {
			return
		}
		v.dqCount += uint64(size)
		if v.dqCount < pieQueueThreshold {
			return
		}
		count := uint32(v.dqCount << pieScale)
		dtime = uint64(uint32(t - v.dqTstamp))
		if dtime == 0 {
			return
		}
		count /= uint32(dtime)
		if v.avgDQRate == 0 {
			v.avgDQRate = count
		} else {
			v.avgDQRate = v.avgDQRate - v.avgDQRate>>3 + count>>3
		}
		if backlog < pieQueueThreshold {
			v.dqCount = pieDQCountInvalid
		} else {
			v.dqCount = 0
			v.dqTstamp = t
		}
	}
	if v.burstTime > 0 {
		if v.burstTime > dtime {
			v.burstTime -= dtime
		} else {
			v.burstTime = 0
		}
	}
}

// Trim follows pie_change: drop from the head until the queue is within
// the limit.
func (q *PIE) Trim(now sim.Time) {
	for q.q.n > q.limit {
		id, _ := q.q.pop(q.env.Pool)
		q.env.Drop(id, now)
	}
}
