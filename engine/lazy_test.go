package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Lazy service (engine/link/lazy.go) is a restructuring of how a FIFO
// direction is served: the reference is the same run with an event per
// packet (link.Dir.Eager). The two must agree on everything a user sees —
// every summary field but the event count and the digest, and every trace
// row, the queue table's in order within each direction — except where a
// packet joins a queue at the very picosecond another starts (lazily the
// serialiser frees first), which the cases below avoid by odd rates and
// delays.

// lazyRun is one run of a scenario, eager or lazy, to its end.
type lazyRun struct {
	ties      uint64   // packets that joined a queue as another started (link.Dir.Ties)
	eagerTies []uint64 // per direction, the same served by events, arrival first (link.Dir.EagerTies)
	sum       Summary
	rec       *trace.Recorder
	stats     []uint64 // per direction: enqueued, sent bytes, delivered
}

func runServed(t *testing.T, scn *config.Scenario, eager bool) lazyRun {
	t.Helper()
	r, err := New(scn, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if eager {
		for _, d := range r.Net.Dirs {
			d.Eager()
		}
	}
	r.RunToEnd()
	out := lazyRun{sum: r.Summary("h"), rec: r.Trace}
	for _, d := range r.Net.Dirs {
		out.stats = append(out.stats, d.Stats.Enqueued, uint64(d.Stats.SentBytes), d.Stats.Delivered)
		out.ties += d.Ties()
		out.eagerTies = append(out.eagerTies, d.EagerTies())
	}
	return out
}

// sameRun reports how a lazy run differs from its eager reference.
func sameRun(t *testing.T, eager, lazy lazyRun) string {
	t.Helper()
	blank := func(s Summary) string {
		s.Digest, s.Events, s.WallS = "", 0, 0
		js, err := json.MarshalIndent(s, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	if d := cmp.Diff(blank(eager.sum), blank(lazy.sum)); d != "" {
		return "summary (-eager +lazy):\n" + d
	}
	if d := cmp.Diff(eager.stats, lazy.stats); d != "" {
		return "direction counters (-eager +lazy):\n" + d
	}
	if d := cmp.Diff(eager.rec.EventT, lazy.rec.EventT); d != "" {
		return "events table (-eager +lazy):\n" + d
	}
	if d := cmp.Diff(eager.rec.FlowsT, lazy.rec.FlowsT); d != "" {
		return "flows table (-eager +lazy):\n" + d
	}
	if d := cmp.Diff(queueRowsByDir(eager.rec), queueRowsByDir(lazy.rec)); d != "" {
		return "queue table per direction (-eager +lazy):\n" + d
	}
	return ""
}

// queueRowsByDir splits the queue table by direction, each in row order.
func queueRowsByDir(rec *trace.Recorder) map[string][]trace.QueueRow {
	q := &rec.Queue
	m := map[string][]trace.QueueRow{}
	for i := range q.T {
		k := fmt.Sprintf("%d/%v", q.Link[i], q.DirAB[i])
		m[k] = append(m[k], trace.QueueRow{T: sim.Time(q.T[i]), Link: q.Link[i], DirAB: q.DirAB[i],
			BacklogBytes: q.BacklogBytes[i], BacklogPkts: q.BacklogPkts[i], Sojourn: sim.Duration(q.SojournPs[i]),
			Drops: q.Drops[i], Marks: q.Marks[i]})
	}
	return m
}

// lazyCase draws a path that exercises lazy service and its hand-overs:
// h1 —access— r1 —bottleneck— r2 —tail— d0 with a FIFO bottleneck (a
// standing queue, a step marker sometimes), pre-queue loss, fifo jitter of
// every kind, queued or dropping outages (periodic and listed), delay 0,
// a capacity process, a trace or a reordering jitter that a scheduled
// change ends or starts, and scheduled changes of rate, delay, loss (to post-serialisation
// loss too), jitter and outages; one or two flows of any CC, sometimes a
// constant-rate pump. Rates and delays are odd numbers of bps and ps, so
// that no packet joins a queue at the picosecond another starts.
func lazyCase(r *rand.Rand, ccs []string, dur sim.Duration) (*config.Scenario, string) {
	odd := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo) | 1 }
	rate := units.BitRate(odd(2e6, 100e6))
	delay := sim.Duration(odd(0, 40e9))
	if r.IntN(5) == 0 {
		delay = 0
	}
	var limit config.QueueLimit
	if r.IntN(2) == 0 {
		limit.Packets = int64(2 + r.IntN(60))
	} else {
		limit = passBDP(int64(100+r.IntN(1900)), rate, 2*delay)
	}
	bn := config.Direction{Rate: rate, Delay: delay, Qdisc: config.Qdisc{Kind: config.FIFO, Limit: limit}}
	if r.IntN(4) == 0 {
		bn.Qdisc.ECNThreshold = config.QueueLimit{Packets: int64(1 + r.IntN(20))}
	}
	jit := func() config.Jitter {
		us := func(n int) sim.Duration { return sim.Duration(odd(1, int64(n)*1e6)) }
		switch r.IntN(7) {
		case 0:
			return config.Jitter{Kind: config.Gaussian, Sigma: us(3000)}
		case 1:
			return config.Jitter{Kind: config.Gaussian, Sigma: us(3000), Clamp: config.ClampZero}
		case 2:
			return config.Jitter{Kind: config.Uniform, Max: us(2000)}
		case 3:
			return config.Jitter{Kind: config.Pareto, Scale: us(200), Shape: 2.5, Cap: 20 * sim.Millisecond}
		case 4:
			return config.Jitter{Kind: config.Burst, Period: 7 * sim.Millisecond, Length: us(3000), Extra: us(2000)}
		case 5:
			return config.Jitter{Kind: config.WiFiTXOP, Interval: us(2000), Sigma: us(100), BurstSize: int64(1 + r.IntN(8))}
		}
		return config.Jitter{Kind: config.LTESubframe, Period: sim.Millisecond}
	}
	if r.IntN(2) == 0 {
		bn.Jitter = jit()
	}
	if r.IntN(3) == 0 {
		bn.Loss = config.Loss{Kind: config.Bernoulli, P: float64(r.IntN(30)) / 1000}
	}
	switch r.IntN(6) {
	case 0:
		bn.Capacity = &config.Capacity{States: []config.CapacityState{{Rate: rate, Dwell: 200 * sim.Millisecond},
			{Rate: rate / 3, Dwell: 100 * sim.Millisecond}}, Transitions: [][]float64{{0, 1}, {1, 0}}}
		bn.Rate = rate // the nominal rate, state 0's, as Parse sets it
	case 1:
		bn.Jitter = config.Jitter{Kind: config.Reorder, P: 0.05, Delay: sim.Duration(odd(1e9, 5e9))}
	case 2:
		// A Mahimahi trace (1500 B per opportunity, in ms), looping or
		// running out; a rate change makes the direction lazy.
		var ms []uint64
		for i := range 40 + r.IntN(200) {
			ms = append(ms, uint64(i/(1+r.IntN(4))))
		}
		slices.Sort(ms)
		bn.Trace = &config.TraceLink{Loop: r.IntN(3) > 0, Opportunities: ms}
		bn.Rate = bn.Trace.MeanRate() // the nominal rate, as Parse sets it
		if m := bn.Qdisc.Limit.MilliBDPs; m > 0 {
			bn.Qdisc.Limit = passBDP(m, bn.Rate, 2*delay)
		}
	}
	if r.IntN(2) == 0 {
		o := &config.Outages{DropOnOutage: r.IntN(4) == 0}
		if r.IntN(2) == 0 {
			o.Start, o.Every = sim.Duration(odd(0, 1e12)), sim.Duration(odd(3e11, 15e11))
			o.Duration = sim.Duration(odd(1e9, int64(o.Every)/2))
		}
		for range r.IntN(3) {
			o.Windows = append(o.Windows, config.OutageWindow{At: sim.Duration(r.Int64N(int64(dur))),
				Duration: sim.Duration(odd(1e9, 4e11))})
		}
		slices.SortFunc(o.Windows, func(a, b config.OutageWindow) int { return int(a.At>>20 - b.At>>20) })
		bn.Outages = o
	}
	back := config.Direction{Rate: units.BitRate(odd(50e6, 1e9)), Delay: sim.Duration(odd(0, 40e9)),
		Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 1000}}}
	if r.IntN(3) == 0 {
		back.Jitter = jit()
	}
	// Every other direction has a rate and delay of its own: two directions
	// alike would serialise in step, and their packets would meet queues
	// at the picosecond they start.
	fast := func() config.Direction {
		d := config.Direction{Rate: units.BitRate(odd(2e8, 10e9)), Delay: sim.Duration(odd(0, 2e9)),
			Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 10000}}}
		if r.IntN(4) == 0 {
			d.Delay = 0
		}
		return d
	}
	access, accessBack, tail, tailBack := fast(), fast(), fast(), fast()
	if r.IntN(3) == 0 {
		tail.Loss = config.Loss{Kind: config.Bernoulli, P: float64(r.IntN(20)) / 1000, Position: config.LossPost}
	}
	scn := &config.Scenario{
		Name:    "lazy",
		Runtime: config.Runtime{Seed: r.Uint64(), Duration: dur},
		Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router},
			{ID: "r2", Kind: config.Router}, {ID: "d0"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: access, BA: accessBack},
			{ID: "bottleneck", A: "r1", B: "r2", AB: bn, BA: back},
			{ID: "tail", A: "r2", B: "d0", AB: tail, BA: tailBack},
		},
		Trace: config.Trace{Detail: config.TraceChange},
	}
	if r.IntN(3) == 0 {
		scn.Trace = config.Trace{Detail: config.TraceSampled, Interval: sim.Duration(odd(1e8, 2e10))}
	}
	desc := fmt.Sprintf("seed=%d bottleneck=%+v", scn.Runtime.Seed, bn)
	for range r.IntN(5) {
		ch := config.Change{At: sim.Duration(r.Int64N(int64(dur))) | 1, Link: "bottleneck", Dir: "ab"}
		switch r.IntN(7) {
		case 0:
			v := units.BitRate(odd(2e6, 100e6))
			ch.Rate = &v
		case 1:
			v := sim.Duration(odd(0, 60e9))
			ch.Delay = &v
		case 2:
			p := float64(r.IntN(30)) / 1000
			pos := config.LossPre
			if r.IntN(2) == 0 {
				pos = config.LossPost
			}
			ch.Loss = &config.Loss{Kind: config.Bernoulli, P: p, Position: pos}
		case 3:
			j := jit()
			if r.IntN(3) == 0 {
				j.Order = config.OrderReorder
			}
			ch.Jitter = &j
		case 4:
			ch.Jitter = &config.Jitter{}
		case 5:
			v := sim.Duration(odd(1e9, 3e11))
			ch.Outage = &v
		default:
			ch.Dir = "ba"
			v := units.BitRate(odd(2e6, 100e6))
			ch.Rate = &v
		}
		scn.Changes = append(scn.Changes, ch)
		desc += fmt.Sprintf(" change=%+v", ch)
	}
	slices.SortStableFunc(scn.Changes, func(a, b config.Change) int { return int(a.At>>20 - b.At>>20) })
	for f := range 1 + r.IntN(2) {
		fl := config.Flow{ID: fmt.Sprintf("f%d", f), Src: "h1", Dst: "d0", Params: &config.Params{CC: ccs[r.IntN(len(ccs))],
			TCP: config.DefaultTCPOptions()}, Start: sim.Duration(odd(0, 5e11))}
		if r.IntN(6) == 0 {
			fl.CC = "pump"
		}
		if fl.CC == "pump" {
			fl.Rate, fl.PacketSize = units.BitRate(odd(1e6, 120e6)), 1500
		} else if r.IntN(5) == 0 {
			fl.Size = units.Bytes(1+r.IntN(3000)) * units.KB
		}
		scn.Flows = append(scn.Flows, fl)
		desc += fmt.Sprintf(" | %s cc=%s size=%v", fl.ID, fl.CC, fl.Size)
	}
	return scn, desc
}

// Lazy service gives the runs an event per packet gives, on randomized
// paths. A lazily served packet that would arrive before now panics in
// link (catchUp), and the sender liveness hook (TestMain) checks every
// sender event; every flow must deliver.
func TestLazyMatchesEager(t *testing.T) {
	t.Parallel()
	ccs := append(cc.Names(), "pump")
	n, dur := 120, 3*sim.Second
	if testing.Short() {
		n = 30
	}
	r := rand.New(rand.NewPCG(12, 2026))
	failed, tied := 0, 0
	var events [2]uint64
	for i := range n {
		scn, desc := lazyCase(r, ccs, dur)
		eager, lazy := runServed(t, scn, true), runServed(t, scn, false)
		events[0] += eager.sum.Events
		events[1] += lazy.sum.Events
		if lazy.ties > 0 || !slices.Equal(lazy.eagerTies, eager.eagerTies) {
			// An ACK clock spaces a flow's packets by the bottleneck's
			// serialisation time, so a packet can reach a queue at the
			// picosecond the one ahead starts: the two ways of serving
			// may then order them differently, and the runs part. So
			// may a direction served by events in both runs, when lazy
			// service upstream queues the arrival's event after the
			// start's (its count of such ties then differs).
			tied++
			continue
		}
		if d := sameRun(t, eager, lazy); d != "" {
			failed++
			if failed <= 3 {
				t.Errorf("case %d (%s): lazy run differs from eager:\n%s", i, desc, d)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d lazy runs without a tie differ from their eager reference", failed, n-tied)
	}
	if tied > n/4 {
		t.Errorf("%d of %d runs had a packet join a queue as another started; the cases should avoid that", tied, n)
	}
	t.Logf("%d runs (%d with a same-instant tie, not compared)", n, tied)
	t.Logf("%d runs: %d events eager, %d lazy (%.1f %% fewer)", n, events[0], events[1],
		100*(1-float64(events[1])/float64(events[0])))
}

// Where a run is stopped and read does not change it: the catch-up at the
// end of each step (Run.catchUpLinks) schedules nothing, so a run stepped
// by random times and event counts has the digest, the event count and the
// summary of the run straight to its end.
func TestLazyStepsKeepDigest(t *testing.T) {
	t.Parallel()
	ccs := append(cc.Names(), "pump")
	r := rand.New(rand.NewPCG(13, 2026))
	n := 20
	if testing.Short() {
		n = 6
	}
	var events uint64
	defer func() { t.Logf("%d runs, %d events", n, events) }()
	for i := range n {
		scn, desc := lazyCase(r, ccs, 2*sim.Second)
		whole, err := New(scn, nil)
		if err != nil {
			t.Fatal(err)
		}
		whole.RunToEnd()
		stepped, err := New(scn, nil)
		if err != nil {
			t.Fatal(err)
		}
		for !stepped.Done() {
			if r.IntN(2) == 0 {
				stepped.StepEvents(uint64(1 + r.IntN(5000)))
			} else {
				stepped.RunUntil(stepped.Now().Add(sim.Duration(1 + r.Int64N(int64(20*sim.Millisecond)))))
			}
			stepped.Summary("h") // read between steps, as a session does
		}
		stepped.RunToEnd()
		a, b := whole.Summary("h"), stepped.Summary("h")
		events += a.Events
		if a.Digest != b.Digest || a.Events != b.Events {
			t.Errorf("case %d (%s): stepped digest %s (%d events), straight %s (%d events)",
				i, desc, b.Digest, b.Events, a.Digest, a.Events)
			continue
		}
		if d := cmp.Diff(a, b, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".WallS" }, cmp.Ignore())); d != "" {
			t.Errorf("case %d (%s): summary stepped vs straight (-straight +stepped):\n%s", i, desc, d)
		}
	}
}

// Built-in runs whose queues meet no same-instant tie run alike served
// lazily and with an event per packet, every trace row included: a LEO
// path with outages and delay steps under light loss, an L4S queue with
// step marking, a trace-driven cellular bottleneck behind lazily served
// links, BBR through a standing queue, a pump 1 % over the bottleneck's
// rate (a full queue, tail drops). (dctcp-dc meets ties in slow start,
// whose deferred TSO chunks reach its queue in trains; the randomized
// cases cover FIFOs with step marking.)
func TestLazyMatchesEagerBuiltins(t *testing.T) {
	t.Parallel()
	for _, g := range []goldenRun{
		{name: "leo-handover", scenario: "leo-handover"},
		{name: "l4s", scenario: "l4s", sets: []string{"runtime.duration=4s"}},
		{name: "cellular", scenario: "cellular"},
		{name: "p-rtr-p-bbr", scenario: "p-rtr-p", sets: []string{"flows.f0.cc=bbr", "runtime.duration=5s"}},
		{name: "p-rtr-p-pump", scenario: "p-rtr-p",
			sets: []string{"flows.f0.cc=pump", "runtime.duration=5s", "flows.f0.rate=101Mbps"}},
	} {
		t.Run(g.name, func(t *testing.T) {
			raw, err := config.Builtin(g.scenario)
			if err != nil {
				t.Fatal(err)
			}
			prep, err := Prepare(raw, append(g.sets, "trace.detail=change"))
			if err != nil {
				t.Fatal(err)
			}
			eager, lazy := runServed(t, prep.Scenario, true), runServed(t, prep.Scenario, false)
			if lazy.ties != 0 {
				t.Fatalf("%d same-instant ties: pick a built-in without, or compare what they leave alike", lazy.ties)
			}
			if d := sameRun(t, eager, lazy); d != "" {
				t.Errorf("lazy run differs from eager:\n%s", d)
			}
			if lazy.sum.Events >= eager.sum.Events {
				t.Errorf("events: lazy %d, eager %d; lazy service should save the dequeue events", lazy.sum.Events, eager.sum.Events)
			}
		})
	}
}

// Lazy service gives the runs an event per packet gives on the topology
// sweep's fabrics too (switches, ECMP and spraying, proxies, fq_codel,
// path models, flow groups that start and finish): every run without a
// same-instant tie matches its eager reference in its summary, its
// directions' counters and its trace tables. Of the sweep's first 160
// fabrics 21 run without a tie (3 of the first 40 under -short), all alike;
// fewer than 18 (2) compared would leave the check too thin. The fabrics
// draw their CCs from the registry, so a CC added moves which ones tie
// (with CDG, 17 of the first 120).
func TestLazyMatchesEagerFabrics(t *testing.T) {
	t.Parallel()
	n, floor := 160, 18
	if testing.Short() {
		n, floor = 40, 2
	}
	r := rand.New(rand.NewPCG(11, 2026)) // the topology sweep's first cases
	ccs := cc.Names()
	compared, failed := 0, 0
	for i := range n {
		c := drawTopologyCase(r, ccs)
		p, err := Prepare(c.raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		eager, lazy := runServed(t, p.Scenario, true), runServed(t, p.Scenario, false)
		if lazy.ties > 0 || eager.ties > 0 {
			continue // see TestLazyMatchesEager
		}
		compared++
		if d := sameRun(t, eager, lazy); d != "" {
			failed++
			if failed <= 3 {
				t.Errorf("case %d (%s): lazy run differs from eager:\n%s", i, c.desc, d)
			}
		}
	}
	if compared < floor {
		t.Errorf("only %d of %d fabrics ran without a tie, want at least %d to compare", compared, n, floor)
	}
	t.Logf("%d fabrics, %d without a tie compared, %d differ", n, compared, failed)
}
