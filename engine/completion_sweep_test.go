package engine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

var completionRuns = flag.Int("completion.runs", 300, "runs of TestCompletionSweep and of TestCompletionSweepMovingPaths (40 with -short)")

// Sized flows of 1 KB to 500 KB over the busy liveness sweep's paths
// (every path model of livenessCase: loss before and after the queue and
// on the ACK path, post-serialisation loss, jitter in both orders,
// outages, steps of rate, delay and loss, proxies, the receive-path
// models, every CC with switched-off mechanisms), made passable: five
// minutes are ample at loss up to 5 %. Every flow must deliver exactly its
// size, no packet may be left in the network at the end, and every fourth
// run must replay to its digest. The liveness sweep checks that a sender
// always has something scheduled; this checks that what it schedules gets
// the data across, and that nothing leaks.
func TestCompletionSweep(t *testing.T) {
	completionSweep(t, rand.New(rand.NewPCG(12, 2026)), func(i int, c *sweepCase) {
		c.desc += modelChanges(c.scn, rand.New(rand.NewPCG(uint64(i), 99)))
	})
}

// The completion sweep's checks on paths that move: its cases with the
// bottleneck driven by a trace, a capacity process or the jitter kinds of
// TestLivenessSweepMovingPaths, and changes of them (moveBottleneck, kept
// passable: traces loop, gaps and Pareto delays are bounded).
func TestCompletionSweepMovingPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 2026))
	completionSweep(t, r, func(_ int, c *sweepCase) { c.desc += moveBottleneck(r, c.scn, 2*sim.Second, true) })
}

// completionSweep draws its cases from r (the busy liveness cases with
// sized flows, made passable), lets move change case i, and checks each.
func completionSweep(t *testing.T, r *rand.Rand, move func(i int, c *sweepCase)) {
	t.Parallel()
	n := *completionRuns
	if testing.Short() {
		n = 40
	}
	ccs := cc.Names()
	failed := 0
	for i := range n {
		c := livenessCase(r, ccs, 300*sim.Second, true)
		for j := range c.scn.Flows {
			c.scn.Flows[j].Size = units.Bytes(1+r.IntN(500)) * units.KB
		}
		passable(c.scn)
		move(i, &c)
		excused, err := checkCompletion(c, i%4 == 0)
		if err != nil {
			failed++
			if failed <= 5 {
				t.Errorf("case %d (%s): %v", i, c.desc, err)
			}
		}
		for _, f := range excused {
			t.Logf("case %d: %s did not complete: Prague, paced below its 100 kbit/s floor (pragueBelowFloor)", i, f)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs left a flow undelivered or a packet behind", failed, n)
	}
}

// pragueBelowFloor reports whether a Prague flow, or a leg of it (a split
// flow's rows are "<id>.0" and "<id>.1"), ended in rate mode with its rate
// below MINIMUM_RATE, which tcp_prague.c lets happen and never undoes:
// prague_enter_loss halves rate_bytes in rate mode with no floor (where
// prague_enter_cwr keeps MINIMUM_RATE), each RTO halves it again, and a
// flow held back by its pacing is not cwnd-limited, so prague_update_cwnd
// never grows it back. With losses enough (an outage that drops what
// comes, every 2 s), such a flow paced at a few hundred bit/s cannot
// deliver 500 KB in the sweep's five minutes, as tcp_prague.c's would not
// (drawn once in 15,000 moving-path cases).
func pragueBelowFloor(sum *Summary, id string) bool {
	for _, f := range sum.Flows {
		if f.CC == "prague" && (f.ID == id || strings.HasPrefix(f.ID, id+".")) &&
			f.CCFinal["rate_mode"] == 1 && f.CCFinal["rate"] < 100_000 {
			return true
		}
	}
	return false
}

// modelChanges schedules up to four changes of the bottleneck's models in
// the first two seconds, while the flows run, drawn from x (a stream of
// its own, so the cases are otherwise the liveness generator's): jitter of
// another kind or order, or none (packets on the wire keep their arrival
// times, wherever they are held), an outage, a capacity process or the
// rate back. It returns them for the case's description.
func modelChanges(scn *config.Scenario, x *rand.Rand) string {
	var desc string
	for range x.IntN(5) {
		ch := config.Change{At: sim.Duration(x.Int64N(int64(2 * sim.Second))), Link: "bottleneck", Dir: "ab"}
		switch x.IntN(4) {
		case 0:
			j := config.Jitter{Kind: config.NoJitter}
			switch x.IntN(4) {
			case 0:
				j = config.Jitter{Kind: config.Gaussian, Sigma: sim.Duration(1+x.IntN(5000)) * sim.Microsecond}
			case 1:
				j = config.Jitter{Kind: config.Uniform, Max: sim.Duration(1+x.IntN(5000)) * sim.Microsecond}
			case 2:
				j = config.Jitter{Kind: config.Reorder, P: 0.001 + 0.2*x.Float64(), Delay: sim.Duration(1+x.IntN(20)) * sim.Millisecond}
			}
			if j.Kind != config.NoJitter && x.IntN(2) == 0 {
				j.Order = config.OrderReorder
			}
			ch.Jitter = &j
		case 1:
			d := sim.Duration(1+x.IntN(300)) * sim.Millisecond
			ch.Outage = &d
		case 2:
			ch.Capacity = &config.Capacity{
				States: []config.CapacityState{
					{Rate: units.BitRate(1+x.IntN(100)) * units.Mbps, Dwell: sim.Duration(1+x.IntN(100)) * sim.Millisecond},
					{Rate: units.BitRate(1+x.IntN(100)) * units.Mbps, Dwell: sim.Duration(1+x.IntN(100)) * sim.Millisecond}},
				Transitions: [][]float64{{0, 1}, {1, 0}},
			}
		default:
			v := units.BitRate(1+x.IntN(100)) * units.Mbps
			ch.Rate = &v
		}
		scn.Changes = append(scn.Changes, ch)
		desc += fmt.Sprintf(" model-change=%+v", ch)
	}
	return desc
}

// passable makes what no sender gets through in bounded time passable,
// without a draw (the cases stay those of the liveness sweep's generator
// otherwise). A loss train or a Gilbert-Elliott bad state counts packets,
// not time: a run of 30 lost packets, rare but drawn in a few thousand
// runs, outlasts 30 backed-off RTOs, minutes apart at TCP_RTO_MAX, as it
// would on netem. Those models become Bernoulli loss at their stationary
// rate. Periodic outages that drop what comes are cut to a quarter of
// their period: down half of every second (455 ms of each 1 s, drawn once
// in 3,000 runs), an RTO's retransmission falls in an outage about every
// other time, and each doubles the next RTO, so a flow that crawls a
// segment per RTO (RACK and TLP off) can back off past the five minutes.
func passable(scn *config.Scenario) {
	for i := range scn.Links {
		for _, d := range []*config.Direction{&scn.Links[i].AB, &scn.Links[i].BA} {
			if o := d.Outages; o != nil && o.DropOnOutage && o.Every > 0 {
				o.Duration = min(o.Duration, o.Every/4)
			}
			l := &d.Loss
			switch l.Kind {
			case config.BernoulliTrain:
				// Trains of mean length L start with probability P from a
				// packet outside one: L lost in L + (1 − P)/P packets.
				*l = config.Loss{Kind: config.Bernoulli, Position: l.Position,
					P: l.P * l.TrainLength / (l.P*l.TrainLength + 1 - l.P)}
			case config.GilbertElliott:
				bad := l.PGB / (l.PGB + l.PBG)
				*l = config.Loss{Kind: config.Bernoulli, Position: l.Position,
					P: (1-bad)*l.LossGood + bad*l.LossBad}
			}
		}
	}
}

// checkCompletion runs c (twice with replay) and checks that every flow
// delivered its size and no packet is left. It returns the flows excused
// from completing (pragueBelowFloor), whose packets may still be in flight.
func checkCompletion(c sweepCase, replay bool) (excused []string, err error) {
	r, err := New(c.scn, nil)
	if err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	if err := runCaught(r); err != nil {
		return nil, err
	}
	sum := r.Summary("")
	e2e := r.endToEnd(sum.Flows)
	for i, f := range c.scn.Flows {
		got := e2e[i].BytesDelivered
		switch {
		case got > int64(f.Size) || got < int64(f.Size) && !pragueBelowFloor(&sum, f.ID):
			return nil, fmt.Errorf("%s: delivered %d B of %d in %v", f.ID, got, f.Size, c.scn.Runtime.Duration)
		case got < int64(f.Size):
			excused = append(excused, f.ID)
		}
	}
	if live := r.Pool.Live(); live != 0 && len(excused) == 0 {
		return nil, fmt.Errorf("%d packets left in the network", live)
	}
	if replay {
		again, err := New(c.scn, nil)
		if err != nil {
			return nil, fmt.Errorf("new, again: %w", err)
		}
		again.RunToEnd()
		if a, b := again.Summary("").Digest, sum.Digest; a != b {
			return nil, fmt.Errorf("replay: digest %s, first run %s", a, b)
		}
	}
	return excused, nil
}

// runCaught runs r to its end and returns a liveness fault, or a panic, as
// an error: a sweep reports the case and goes on.
func runCaught(r *Run) (fault error) {
	defer func() {
		if v := recover(); v != nil {
			if f, ok := v.(livenessFault); ok {
				fault = f
				return
			}
			fault = fmt.Errorf("panic: %v", v)
		}
	}()
	r.RunToEnd()
	return nil
}
