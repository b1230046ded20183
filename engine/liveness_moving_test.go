package engine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

var livenessMovingRuns = flag.Int("liveness.moving", 400, "runs of TestLivenessSweepMovingPaths (80 with -short)")

// The liveness invariant on paths that move: the busy sweep's cases
// (livenessCase) with the bottleneck driven by a Mahimahi trace (looping
// or ending, with gaps of up to a second), a capacity process (dips, to
// no rate at all among them, a grant ramp), or the jitter kinds the other
// sweeps leave out (pareto, burst, wifi_txop, lte_subframe, 5g_nr), and
// scheduled changes of jitter, capacity, outages and rate (which ends a
// trace or capacity process).
func TestLivenessSweepMovingPaths(t *testing.T) {
	n := *livenessMovingRuns
	if testing.Short() {
		n = 80
	}
	r := rand.New(rand.NewPCG(11, 2026))
	livenessSweep(t, n, func(ccs []string, dur sim.Duration) sweepCase {
		c := livenessCase(r, ccs, dur, true)
		c.desc += moveBottleneck(r, c.scn, dur, false)
		return c
	})
}

// moveBottleneck makes scn's bottleneck (forward direction) move, drawing
// from r, and describes what it did. passable keeps what it draws
// passable in bounded time, without a draw of its own (the cases stay
// those of the liveness sweep otherwise): a trace loops, its gaps last at
// most 200 ms and, under 1 Mbit/s on average, its empty milliseconds get
// an opportunity each, and a Pareto delay without a cap gets one.
func moveBottleneck(r *rand.Rand, scn *config.Scenario, dur sim.Duration, passable bool) string {
	bn := &scn.Links[1].AB
	ms := sim.Millisecond
	desc := ""
	switch r.IntN(3) {
	case 0:
		// A trace of 0.5–4 s: phases of 0–3 opportunities per millisecond
		// (up to 36 Mbps), some of them gaps.
		var ops []uint64
		end := uint64(500 + r.IntN(3500))
		for at := uint64(1); at <= end; {
			phase := uint64(1 + r.IntN(1000))
			per := r.IntN(4)
			if passable && per == 0 {
				phase = min(phase, 200)
			}
			for t := at; t < at+phase && t <= end; t++ {
				for range per {
					ops = append(ops, t)
				}
			}
			at += phase
		}
		ops = append(ops, end) // at least one opportunity, the last at end
		if passable && len(ops)*1500*8 < int(end)*1000 {
			// Gap phases of 200 ms drawn one after another (once in some
			// 20,000 cases: 1 opportunity in 581 ms, 21 kbit/s) leave no
			// five-minute run room for its flows' up to 1.5 MB. Under
			// 1 Mbit/s on average, each empty millisecond gets one.
			ops = fillGaps(ops)
		}
		tr := &config.TraceLink{Loop: r.IntN(5) != 0 || passable, Opportunities: ops}
		bn.Trace, bn.Capacity = tr, nil
		bn.Rate = tr.MeanRate()
		desc = fmt.Sprintf(" trace=%d opportunities over %d ms loop=%v", len(ops), end, tr.Loop)
	case 1:
		states := make([]config.CapacityState, 2+r.IntN(2))
		tr := make([][]float64, len(states))
		for i := range states {
			states[i] = config.CapacityState{Rate: units.BitRate(1+r.IntN(100)) * units.Mbps,
				Dwell: sim.Duration(50+r.IntN(2000)) * ms}
			tr[i] = make([]float64, len(states))
			tr[i][(i+1)%len(states)] = 1
		}
		c := &config.Capacity{States: states, Transitions: tr}
		if r.IntN(2) == 0 {
			c.Dips = &config.CapacityDips{Every: sim.Duration(100+r.IntN(3000)) * ms, Depth: float64(r.IntN(61)) / 100,
				Scale: sim.Duration(1+r.IntN(50)) * ms, Shape: 1.1 + r.Float64()*2, Cap: sim.Duration(10+r.IntN(1000)) * ms}
		}
		if r.IntN(2) == 0 {
			c.Grant = &config.CapacityGrant{Start: float64(r.IntN(95)) / 100, Ramp: sim.Duration(1+r.IntN(100)) * ms}
		}
		bn.Capacity, bn.Trace = c, nil
		bn.Rate = states[0].Rate
		desc = fmt.Sprintf(" capacity=%+v", *c)
	default:
		bn.Jitter = movingJitter(r, passable)
		desc = fmt.Sprintf(" jitter=%+v", bn.Jitter)
	}
	if l := &bn.Qdisc.Limit; l.MilliBDPs > 0 {
		// The BDP moved with the rate: a limit under one packet is refused.
		*l = passBDP(l.MilliBDPs, bn.Rate, 2*bn.Delay)
	}
	for range r.IntN(3) {
		ch := config.Change{At: sim.Duration(r.Int64N(int64(dur))), Link: "bottleneck", Dir: "ab"}
		switch r.IntN(4) {
		case 0:
			j := movingJitter(r, passable)
			ch.Jitter = &j
		case 1:
			c := config.Capacity{States: []config.CapacityState{{Rate: units.BitRate(1+r.IntN(100)) * units.Mbps, Dwell: sim.Second}},
				Transitions: [][]float64{{1}}}
			ch.Capacity = &c
		case 2:
			d := sim.Duration(1+r.IntN(800)) * ms
			ch.Outage = &d
		default:
			v := units.BitRate(1+r.IntN(100)) * units.Mbps
			ch.Rate = &v
		}
		scn.Changes = append(scn.Changes, ch)
		desc += fmt.Sprintf(" change=%+v", ch)
	}
	return desc
}

// fillGaps returns the opportunities ops (ascending milliseconds from 1)
// with one added in each millisecond up to the last that has none.
func fillGaps(ops []uint64) []uint64 {
	var out []uint64
	next := uint64(1)
	for _, t := range ops {
		for ; next < t; next++ {
			out = append(out, next)
		}
		out = append(out, t)
		next = t + 1
	}
	return out
}

// movingJitter draws one of the jitter kinds the other sweeps leave out,
// in either order; passable caps a Pareto delay that has no cap.
func movingJitter(r *rand.Rand, passable bool) config.Jitter {
	us, ms := sim.Microsecond, sim.Millisecond
	var j config.Jitter
	switch r.IntN(5) {
	case 0:
		j = config.Jitter{Kind: config.Pareto, Scale: sim.Duration(1+r.IntN(2000)) * us, Shape: 1.1 + r.Float64()*2}
		if r.IntN(2) == 0 {
			j.Cap = j.Scale + sim.Duration(r.IntN(50))*ms
		} else if passable {
			j.Cap = j.Scale + 50*ms
		}
	case 1:
		period := sim.Duration(2+r.IntN(500)) * ms
		j = config.Jitter{Kind: config.Burst, Period: period, Length: sim.Duration(1 + r.Int64N(int64(period-ms))),
			Extra: sim.Duration(1+r.IntN(50)) * ms}
	case 2:
		j = config.Jitter{Kind: config.WiFiTXOP, Interval: sim.Duration(1+r.IntN(5)) * ms, BurstSize: int64(1 + r.IntN(64)),
			Sigma: sim.Duration(r.IntN(300)) * us}
	case 3:
		j = config.Jitter{Kind: config.LTESubframe, Period: ms}
	default:
		j = config.Jitter{Kind: config.NR5G, Period: 500 * us}
	}
	if r.IntN(3) == 0 {
		j.Order = config.OrderReorder
	}
	return j
}
