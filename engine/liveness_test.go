package engine

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/units"
)

// livenessFault is the panic value of the liveness hook.
type livenessFault struct {
	flow int32
	at   sim.Time
	what string
}

func (f livenessFault) Error() string {
	return fmt.Sprintf("liveness: flow %d at %v: %s", f.flow, f.at, f.what)
}

// TestMain checks the sender liveness invariant (tcp.LivenessViolation)
// in every run of this package's tests: a broken invariant panics with
// the sender's state.
func TestMain(m *testing.M) {
	tcp.LivenessViolation = func(flow int32, now sim.Time, what string) {
		panic(livenessFault{flow, now, what})
	}
	os.Exit(m.Run())
}

var (
	livenessRuns     = flag.Int("liveness.runs", 1500, "runs of TestLivenessSweep (150 with -short)")
	livenessBusyRuns = flag.Int("liveness.busy", 600, "runs of TestLivenessSweepBusy (100 with -short)")
)

// releaseLiveness turns the liveness check off for a benchmark, so that it
// measures what a release runs (the hook nil), and back on after it.
func releaseLiveness(b *testing.B) {
	h := tcp.LivenessViolation
	tcp.LivenessViolation = nil
	b.Cleanup(func() { tcp.LivenessViolation = h })
}

// sweepCase is one randomized path of the liveness sweep.
type sweepCase struct {
	scn  *config.Scenario
	desc string
}

// passBDP is a limit of milli thousandths of a BDP on a path of rate and
// an RTT of at least minRTT, or 2 + milli/50 packets if that BDP limit
// could be less than one 1,500 B packet: New refuses such a limit (a FIFO
// never passes a larger packet).
func passBDP(milli int64, rate units.BitRate, minRTT sim.Duration) config.QueueLimit {
	if units.BytesIn(rate, minRTT)*units.Bytes(milli)/1000 < 1500 {
		return config.QueueLimit{Packets: 2 + milli/50}
	}
	return config.QueueLimit{MilliBDPs: milli}
}

// livenessCase draws the i-th case: the issue's three-hop path
// (h1 —access— r1 —bottleneck— r2 —tail— d0) with random loss before the
// bottleneck queue (on the access link) and after it (on the tail link),
// sometimes on the ACK path (bursty Gilbert-Elliott and loss trains too,
// before or after serialisation), jitter of several kinds in FIFO or
// reordering order, periodic outages, a bottleneck buffer from 2 packets to
// 2 BDP (at least one packet), a random rate and delay with up to two
// scheduled steps of rate, delay or loss, one or two flows of any CC with
// random mechanism switches, GRO intervals, receive buffers down to 8 KiB,
// sometimes a split-TCP proxy in place of the second router, and a random
// seed.
//
// With busy, loss probabilities are drawn log-uniformly from 10^-5 to 5 %
// instead of uniformly from 0 to 40 %: paths that carry data most of the
// time, where the uniform draw leaves most runs nearly idle.
func livenessCase(r *rand.Rand, ccs []string, dur sim.Duration, busy bool) sweepCase {
	lossP := func() float64 {
		if r.IntN(4) == 0 {
			return 0
		}
		if busy {
			return math.Pow(10, -5+r.Float64()*(5+math.Log10(0.05))) // 10^-5 to 5 %
		}
		return float64(r.IntN(401)) / 1000 // 0–40 %
	}
	rate := units.BitRate(1+r.IntN(100)) * units.Mbps
	delay := sim.Duration(1+r.IntN(60)) * sim.Millisecond
	var limit config.QueueLimit
	if r.IntN(2) == 0 {
		limit.Packets = int64(2 + r.IntN(40))
	} else {
		limit = passBDP(int64(50+r.IntN(1950)), rate, 2*delay)
	}
	bn := config.Direction{Rate: rate, Delay: delay, Qdisc: config.Qdisc{Kind: config.FIFO, Limit: limit}}
	if r.IntN(4) == 0 {
		bn.Qdisc.ECNThreshold = config.QueueLimit{Packets: int64(1 + r.IntN(20))}
	}
	switch r.IntN(6) {
	case 0, 1:
		bn.Jitter = config.Jitter{Kind: config.Gaussian, Sigma: sim.Duration(1+r.IntN(10000)) * sim.Microsecond}
	case 2:
		bn.Jitter = config.Jitter{Kind: config.Uniform, Max: sim.Duration(1+r.IntN(5000)) * sim.Microsecond}
	case 3:
		bn.Jitter = config.Jitter{Kind: config.Reorder, P: float64(r.IntN(200)) / 1000,
			Delay: sim.Duration(1+r.IntN(20)) * sim.Millisecond}
	}
	if r.IntN(3) == 0 {
		bn.Jitter.Order = config.OrderReorder
	}
	if r.IntN(5) == 0 {
		// A LEO-style hard handover: the bottleneck serves nothing for a
		// while, every few seconds.
		bn.Outages = &config.Outages{Start: sim.Duration(r.IntN(2000)) * sim.Millisecond,
			Every: sim.Duration(1+r.IntN(3)) * sim.Second, Duration: sim.Duration(1+r.IntN(500)) * sim.Millisecond,
			DropOnOutage: r.IntN(2) == 0}
	}
	bnBack := config.Direction{Rate: 10 * units.Gbps, Delay: delay}
	fast := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Duration(r.IntN(1000)) * sim.Microsecond,
		Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 10000}}}
	pre, post, ackLoss := fast, fast, fast
	pre.Loss = config.Loss{Kind: config.Bernoulli, P: lossP()}
	post.Loss = config.Loss{Kind: config.Bernoulli, P: lossP()}
	switch r.IntN(5) {
	case 0:
		post.Loss = config.Loss{Kind: config.GilbertElliott, PGB: 0.01, PBG: 0.2 + float64(r.IntN(60))/100,
			LossBad: 0.5 + float64(r.IntN(50))/100}
	case 1:
		post.Loss = config.Loss{Kind: config.BernoulliTrain, P: lossP() / 4, TrainLength: float64(1 + r.IntN(20))}
	}
	if r.IntN(2) == 0 {
		post.Loss.Position = config.LossPost
	}
	if r.IntN(4) == 0 {
		ackLoss.Loss = config.Loss{Kind: config.Bernoulli, P: lossP()}
	}
	scn := &config.Scenario{
		Name:    "liveness",
		Runtime: config.Runtime{Seed: r.Uint64(), Duration: dur},
		Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router},
			{ID: "r2", Kind: config.Router}, {ID: "d0"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: pre, BA: fast},
			{ID: "bottleneck", A: "r1", B: "r2", AB: bn, BA: bnBack},
			{ID: "tail", A: "r2", B: "d0", AB: post, BA: ackLoss},
		},
	}
	if r.IntN(6) == 0 {
		// A split-TCP proxy after the bottleneck: every flow becomes two
		// legs joined by a relay buffer, which may be small.
		scn.Nodes[2] = config.Node{ID: "r2", Kind: config.Proxy, Buffer: units.Bytes(16+r.IntN(4096)) * units.KiB}
	}
	desc := fmt.Sprintf("seed=%d rate=%v delay=%v limit=%+v jitter=%v loss pre=%.3f post=%.3f ack=%.3f r2=%v",
		scn.Runtime.Seed, rate, delay, limit, bn.Jitter.Sigma, pre.Loss.P, post.Loss.P, ackLoss.Loss.P, scn.Nodes[2].Kind)
	for range r.IntN(3) {
		// A scheduled step of the bottleneck's rate or delay, or of the
		// loss after it.
		ch := config.Change{At: sim.Duration(r.Int64N(int64(dur))), Link: "bottleneck", Dir: "ab"}
		switch r.IntN(3) {
		case 0:
			v := units.BitRate(1+r.IntN(100)) * units.Mbps
			ch.Rate = &v
		case 1:
			v := sim.Duration(1+r.IntN(200)) * sim.Millisecond
			ch.Delay = &v
		default:
			ch.Link = "tail"
			ch.Loss = &config.Loss{Kind: config.Bernoulli, P: lossP()}
		}
		scn.Changes = append(scn.Changes, ch)
		desc += fmt.Sprintf(" change=%+v", ch)
	}
	for f := range 1 + r.IntN(2) {
		o := config.DefaultTCPOptions()
		for _, sw := range []*bool{&o.SACK, &o.RACK, &o.TLP, &o.PRR, &o.FRTO, &o.TSO, &o.GRO, &o.DelayedAck} {
			if r.IntN(8) == 0 {
				*sw = !*sw
			}
		}
		if r.IntN(4) == 0 {
			o.Pacing = config.Pacing(r.IntN(3)) // auto, on or off
		}
		if r.IntN(4) == 0 {
			o.RcvBufInit = units.Bytes(8+r.IntN(120)) * units.KiB
			o.RcvBufMax = o.RcvBufInit + units.Bytes(r.IntN(256))*units.KiB
		}
		if r.IntN(6) == 0 {
			o.GROInterval = sim.Duration(1+r.IntN(500)) * sim.Microsecond
		}
		if r.IntN(6) == 0 {
			o.SndBuf = units.Bytes(16+r.IntN(256)) * units.KiB
		}
		// Every CONFIG_HZ, without a draw (the sweep's scenarios stay as
		// they were otherwise).
		o.HZ = []int{1000, 250, 100, 300}[f%4]
		fl := config.Flow{ID: fmt.Sprintf("f%d", f), Src: "h1", Dst: "d0", Params: &config.Params{CC: ccs[r.IntN(len(ccs))], TCP: o},
			Start: sim.Duration(r.IntN(500)) * sim.Millisecond}
		switch r.IntN(8) {
		case 0:
			fl.Size = units.Bytes(1+r.IntN(2000)) * units.KB
		case 1:
			fl.App = config.AppPattern{Kind: config.AppRate, Rate: units.BitRate(1+r.IntN(50)) * units.Mbps}
		case 2:
			fl.App = config.AppPattern{Kind: config.OnOff, On: sim.Duration(1+r.IntN(500)) * sim.Millisecond,
				Off: sim.Duration(1+r.IntN(500)) * sim.Millisecond}
		}
		// A greedy writer's call size, without a draw: the default, iperf3's
		// 128 KiB (a sub-MSS remnant at each call's end), 90 MSS (none) or
		// one segment (each segment a call of its own).
		if fl.App.Kind == config.Greedy {
			fl.App.Write = []units.Bytes{0, 128 * units.KiB, 90 * o.MSS, o.MSS}[fl.Start/sim.Millisecond%4]
		}
		// The receive path's models hold and drop ACKs: a grant that
		// filters or loses them must not strand the sender either.
		if r.IntN(6) == 0 {
			fl.Rcv.Hold = sim.Duration(1+r.IntN(2000)) * sim.Microsecond
		}
		if r.IntN(6) == 0 {
			fl.Rcv.AckHold = &config.AckHold{Quantiles: []sim.Duration{0, sim.Duration(1+r.IntN(20)) * sim.Millisecond},
				Saturation: 0.5, Window: 10 * sim.Millisecond}
		}
		if r.IntN(5) == 0 {
			names := []string{"5g", "leo", "lte", "wifi"}
			g := config.AckProfiles[names[r.IntN(len(names))]]
			g.Loss = max(g.Loss, lossP()/4)
			fl.Rcv.Grant = &g
		}
		scn.Flows = append(scn.Flows, fl)
		desc += fmt.Sprintf(" | %s cc=%s size=%v app=%+v opts=%+v rcv=%+v", fl.ID, fl.CC, fl.Size, fl.App, o, fl.Rcv)
	}
	return sweepCase{scn, desc}
}

// runChecked runs scn to its end and returns the events it dispatched (up
// to the fault) and the liveness fault, if any.
func runChecked(scn *config.Scenario) (events uint64, fault error) {
	r, err := New(scn, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(livenessFault)
			if !ok {
				panic(v)
			}
			fault = f
		}
		events = r.Sim.Events()
	}()
	r.RunToEnd()
	return
}

// The liveness invariant over a randomized sweep: every CC of cc.Names(),
// 0–40 % loss before and after the bottleneck queue and on the ACK path,
// jitter, buffers from 2 packets, tiny receive and send buffers, switched
// off mechanisms, application patterns and many seeds. Every sender event
// of every run is checked (TestMain installs the hook). The case
// generator is seeded, so a failure is reproducible from its index.
func TestLivenessSweep(t *testing.T) {
	n := *livenessRuns
	if testing.Short() {
		n = 150
	}
	r := rand.New(rand.NewPCG(9, 2026))
	livenessSweep(t, n, func(ccs []string, dur sim.Duration) sweepCase { return livenessCase(r, ccs, dur, false) })
}

// TestLivenessSweepBusy is the sweep on busy paths: loss from 10^-5 to 5 %
// (livenessCase), so most runs carry data throughout and their senders
// spend the run in slow start, congestion avoidance and recovery rather
// than in back-off.
func TestLivenessSweepBusy(t *testing.T) {
	n := *livenessBusyRuns
	if testing.Short() {
		n = 100
	}
	r := rand.New(rand.NewPCG(10, 2026))
	livenessSweep(t, n, func(ccs []string, dur sim.Duration) sweepCase { return livenessCase(r, ccs, dur, true) })
}

// livenessSweep runs n cases that draw makes and reports those that break
// the invariant.
func livenessSweep(t *testing.T, n int, draw func(ccs []string, dur sim.Duration) sweepCase) {
	// Beside the golden runs: the hook TestMain installs is only read.
	t.Parallel()
	ccs := cc.Names()
	dur := 6 * sim.Second
	failed := 0
	var events uint64
	for i := range n {
		c := draw(ccs, dur)
		ev, err := runChecked(c.scn)
		events += ev
		if err != nil {
			failed++
			if failed <= 5 {
				t.Errorf("case %d (%s): %v", i, c.desc, err)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs broke the liveness invariant", failed, n)
	}
	t.Logf("%d runs of %v, %d CCs, %d events a run on average: %d broke the invariant",
		n, dur, len(ccs), events/uint64(max(n, 1)), failed)
}

// issue9Path is the reproduction of issue 9: 50 Mbps, 100 ms RTT, a
// 625 kB buffer, random loss after the bottleneck.
const issue9Path = `{"name":"stall","runtime":{"seed":2,"duration":"30s"},
 "nodes":[{"id":"h1","kind":"endpoint"},{"id":"r1","kind":"router"},{"id":"r2","kind":"router"},{"id":"d0","kind":"endpoint"}],
 "links":[{"id":"access","a":"h1","b":"r1","rate":"100Gbps","delay":"0ms"},
  {"id":"bottleneck","a":"r1","b":"r2","rate":"50Mbps","delay":"50ms","ab":{"qdisc":{"kind":"fifo","limit":"625000B"}},"ba":{"rate":"100Gbps"}},
  {"id":"tail0","a":"r2","b":"d0","rate":"100Gbps","delay":"0ms","ab":{"loss":{"kind":"bernoulli","p":0.15}}}],
 "flows":[{"id":"f0","src":"h1","dst":"d0","cc":"bbr"}]}`

// The runs that stalled for good before the fix (issue 9: bbr at 15 %
// loss, seed 2, delivered 101 KB in 30 s; bbr and bbr3 at 5 %, seed 6,
// 98 KB) keep the invariant and keep sending. The floor is Reno's Mathis
// rate at the same loss, MSS/RTT·sqrt(3/(2p)): 366 kb/s at 15 %, i.e.
// 1.37 MB over 30 s, more at 5 %; 1 MB is below it.
func TestLivenessIssue9Reproductions(t *testing.T) {
	for _, tc := range []struct {
		cc   string
		p    string
		seed string
	}{{"bbr", "0.15", "2"}, {"bbr", "0.05", "6"}, {"bbr3", "0.05", "6"}} {
		t.Run(tc.cc+"/"+tc.p+"/"+tc.seed, func(t *testing.T) {
			prep, err := Prepare([]byte(issue9Path), []string{"flows.f0.cc=" + tc.cc,
				"links.tail0.ab.loss.p=" + tc.p, "runtime.seed=" + tc.seed})
			if err != nil {
				t.Fatal(err)
			}
			r, err := New(prep.Scenario, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.RunToEnd()
			if got := r.Summary("").Flows[0].BytesDelivered; got < int64(units.MB) {
				t.Errorf("delivered %d bytes in 30 s, want ≥ 1 MB", got)
			}
		})
	}
}
