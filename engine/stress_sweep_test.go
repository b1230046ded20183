package engine

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

var stressRuns = flag.Int("stress.runs", 100, "runs of TestStressSweep (25 with -short)")

// runActs runs p's scenario to its end, applying acts at their event
// counts (an action the engine refuses is skipped), and returns the summary
// (its wall time zeroed) and the run. With chunk nil it steps only to the
// actions; otherwise it steps by event counts and times chunk draws,
// reading a summary and a flow's observation between steps, as a session
// does. A panic (a broken liveness invariant among them) comes back as
// fault.
func runActs(p *Prepared, acts []stressAction, chunk *rand.Rand) (res Summary, run *Run, fault error) {
	r, err := New(p.Scenario, nil)
	if err != nil {
		return res, nil, fmt.Errorf("new: %w", err)
	}
	defer func() {
		if v := recover(); v != nil {
			if f, ok := v.(livenessFault); ok {
				fault = f
				return
			}
			fault = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	for _, a := range acts {
		for !r.Done() && r.Sim.Events() < a.events {
			n := a.events - r.Sim.Events()
			if chunk != nil {
				n = min(n, uint64(1+chunk.IntN(5000)))
			}
			if r.StepEvents(n) == 0 {
				break
			}
			if chunk != nil {
				r.Summary(p.Hash)
			}
		}
		if r.Done() {
			break
		}
		_ = r.Act(a.a) // refused actions are fine
	}
	if chunk != nil {
		for !r.Done() {
			if chunk.IntN(2) == 0 {
				r.StepEvents(uint64(1 + chunk.IntN(20000)))
			} else {
				r.RunUntil(r.Now().Add(sim.Duration(1 + chunk.Int64N(int64(100*sim.Millisecond)))))
			}
			r.Summary(p.Hash)
			if len(r.Trace.Flows) > 0 {
				r.Observe(r.Trace.Flows[chunk.IntN(len(r.Trace.Flows))])
			}
		}
	}
	r.RunToEnd()
	res = r.Summary(p.Hash)
	res.WallS = 0
	return res, r, nil
}

// checkStressCase runs c and checks it (see TestStressSweep); skipped
// reports a scenario that Prepare or New refused. i seeds the stepping.
func checkStressCase(c stressCase, i int) (skipped bool, err error) {
	p, err := Prepare(c.raw, nil)
	if err != nil {
		return true, err
	}
	if _, err := New(p.Scenario, nil); err != nil {
		return true, err
	}
	a, run, err := runActs(p, c.actions, nil)
	if err != nil {
		return false, err
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	// Summary sanity: encodes, nothing negative (cc_final aside).
	js, jerr := json.Marshal(a)
	if jerr != nil {
		fail("summary: %v", jerr)
	} else {
		var m any
		_ = json.Unmarshal(js, &m)
		walkNeg(m, "", func(path string, v float64) {
			if !strings.Contains(path, "cc_final") {
				fail("summary %s = %v", path, v)
			}
		})
	}
	now := run.Sim.Now()
	for k, f := range a.Flows {
		if f.BytesDelivered > f.BytesSent && f.Kind != "ping" {
			fail("%s: delivered %d > sent %d", f.ID, f.BytesDelivered, f.BytesSent)
		}
		if f.FCTPs != nil && *f.FCTPs < 0 {
			fail("%s: fct %d", f.ID, *f.FCTPs)
		}
		if f.ProbesReceived != nil && *f.ProbesReceived > *f.ProbesSent {
			fail("%s: probes %d > %d", f.ID, *f.ProbesReceived, *f.ProbesSent)
		}
		if pf, ok := run.Flows[k].(pingFlow); ok && !c.negJitter {
			for _, rtt := range pf.p.RTTs {
				if int64(rtt) < f.BaseRTTPs {
					fail("%s: ping rtt %v < base %v", f.ID, rtt, sim.Duration(f.BaseRTTPs))
					break
				}
			}
		}
	}
	e2e := run.endToEnd(a.Flows)
	for k, f := range p.Scenario.Flows {
		if f.Size > 0 && f.CC != config.Ping && k < len(e2e) {
			if e2e[k].BytesDelivered > int64(f.Size) {
				fail("%s: delivered %d of size %d", f.ID, e2e[k].BytesDelivered, f.Size)
			}
			if e2e[k].FCTPs != nil && e2e[k].BytesDelivered != int64(f.Size) {
				fail("%s: completed with %d of %d", f.ID, e2e[k].BytesDelivered, f.Size)
			}
		}
	}
	allDone := true
	for k, f := range p.Scenario.Flows {
		if f.Size == 0 || f.CC == config.Ping || f.CC == config.Pump || e2e[k].BytesDelivered != int64(f.Size) {
			allDone = false
		}
	}
	// Every sender has its last byte acknowledged, a second before the end
	// (what is in flight then has time to land).
	for j := range run.Flows {
		if snd, _, ok := run.TCPEnds(j); ok && snd != nil && (snd.Stats.Done == 0 || snd.Stats.Done > run.Horizon()-sim.Time(sim.Second)) {
			allDone = false
		}
	}
	if allDone && c.tail && !c.deadLink {
		if live := run.Pool.Live(); live != 0 {
			fail("every flow delivered its size, %d packets live at the end", live)
		}
	}
	for _, g := range a.Groups {
		if g.Completed > g.Started || g.Started > g.Flows {
			fail("group %s: %d flows %d started %d completed", g.Group, g.Flows, g.Started, g.Completed)
		}
	}
	for _, d := range run.Net.Dirs {
		key := d.Name
		st := d.Stats
		if txt, ok := c.traceOps[key]; ok && !c.actedOn[key] {
			if bound := traceBytes(txt, now) + 65600; st.SentBytes > units.Bytes(bound) {
				fail("%s: sent %d B by %v, the trace allows %d", key, st.SentBytes, sim.Duration(now), bound)
			}
		}
		if st.Delivered > st.Enqueued {
			fail("%s: delivered %d > enqueued %d", key, st.Delivered, st.Enqueued)
		}
		if !c.unbounded[key] && c.maxRate[key] > 0 {
			bound := float64(c.maxRate[key])*float64(now)/1e12 + 8*65600
			if float64(st.SentBytes)*8 > bound {
				fail("%s: sent %d B in %v, over %d bps", key, st.SentBytes, sim.Duration(now), c.maxRate[key])
			}
		}
	}
	// Determinism: again straight, and stepped.
	b, _, err := runActs(p, c.actions, nil)
	if err != nil {
		fail("again: %v", err)
	} else if !reflect.DeepEqual(a, b) {
		fail("again: digest %s vs %s", b.Digest, a.Digest)
	}
	// The trace's detail changes nothing in the run.
	for _, det := range []config.TraceDetail{config.TraceSummary, config.TraceChange} {
		if p.Scenario.Trace.Detail == det {
			continue
		}
		q := *p
		sc := *p.Scenario
		sc.Trace.Detail = det
		sc.Trace.Interval = 0
		q.Scenario = &sc
		d, drun, err := runActs(&q, c.actions, nil)
		if err != nil {
			fail("detail %v: %v", det, err)
		} else if d.Digest != a.Digest || d.Events != a.Events {
			fail("detail %v: digest %s (%d ev) vs %s (%d ev)", det, d.Digest, d.Events, a.Digest, a.Events)
		} else if det == config.TraceChange && p.Scenario.Trace.Detail == config.TraceSampled {
			// A sampled trace shows, an interval after, every value the
			// run holds longer (trace.Sampler); a margin of an interval.
			for _, e := range staleValues(traceSeries(drun.Trace), traceSeries(run.Trace), 2*p.Scenario.Trace.Interval) {
				fail("sampled trace: %s", e)
			}
		}
	}
	s, srun, err := runActs(p, c.actions, rand.New(rand.NewPCG(uint64(i), 7)))
	if err != nil {
		fail("stepped: %v", err)
	} else if !reflect.DeepEqual(a, s) {
		fail("stepped: digest %s (%d ev) vs %s (%d ev)%s", s.Digest, s.Events, a.Digest, a.Events, diffSummary(a, s))
	} else {
		ta, tb := run.Trace, srun.Trace
		for _, tab := range []struct {
			name string
			x, y any
		}{{"queue", queueByDir(ta.Queue), queueByDir(tb.Queue)}, {"delivery", ta.Delivery, tb.Delivery}, {"flows", ta.FlowsT, tb.FlowsT},
			{"signals", ta.SignalT, tb.SignalT}, {"events", ta.EventT, tb.EventT}, {"links", linkByDir(ta.LinkT), linkByDir(tb.LinkT)}} {
			if fmt.Sprint(tab.x) != fmt.Sprint(tab.y) {
				fail("stepped: the %s table differs", tab.name)
			}
		}
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return false, nil
}

// diffSummary shows where the JSON of two summaries first differs.
func diffSummary(a, b Summary) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) == string(jb) {
		return " (json equal)"
	}
	for i := range min(len(ja), len(jb)) {
		if ja[i] != jb[i] {
			lo := max(0, i-200)
			return fmt.Sprintf(" first diff at %d: %s\n VS %s", i, ja[lo:min(len(ja), i+100)], jb[lo:min(len(jb), i+100)])
		}
	}
	return " (len differs)"
}

// traceBytes is what a looping Mahimahi trace's opportunities carry up to
// now (1,504 B each).
func traceBytes(txt string, now sim.Time) int64 {
	var ops []int64
	for _, l := range strings.Fields(txt) {
		var v int64
		fmt.Sscan(l, &v)
		ops = append(ops, v)
	}
	end := ops[len(ops)-1]
	ms := int64(now / sim.Time(sim.Millisecond))
	n := (ms / end) * int64(len(ops))
	for _, o := range ops {
		if (ms/end)*end+o <= ms {
			n++
		}
	}
	return n * 1504
}

// queueByDir is a queue table's rows by direction, each in its order.
func queueByDir(q trace.QueueTable) map[string][]string {
	m := map[string][]string{}
	for i := range q.T {
		k := fmt.Sprint(q.Link[i], q.DirAB[i])
		m[k] = append(m[k], fmt.Sprint(q.T[i], q.BacklogBytes[i], q.BacklogPkts[i], q.SojournPs[i], q.Drops[i], q.Marks[i]))
	}
	return m
}

// linkByDir is a link table's rows by direction, each in its order.
func linkByDir(q trace.LinkTable) map[string][]string {
	m := map[string][]string{}
	for i := range q.T {
		k := fmt.Sprint(q.Link[i], q.DirAB[i])
		m[k] = append(m[k], fmt.Sprint(q.T[i], q.RateBps[i], q.DelayPs[i]))
	}
	return m
}

// walkNeg calls f for every number in v (a decoded JSON value) that is
// negative, NaN or infinite, with its path.
func walkNeg(v any, path string, f func(string, float64)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkNeg(e, path+"."+k, f)
		}
	case []any:
		for i, e := range x {
			walkNeg(e, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case float64:
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			f(path, x)
		}
	}
}

// The stress sweep: random scenarios over the newest parts of the engine
// (drawStressCase: topologies with switches, proxies and several routers,
// flow groups, pings and pumps, every path model and its scheduled
// changes, the receive-path models, every CC and qdisc, ECN, actions),
// each run to its end with the liveness hook on (TestMain) and checked:
// no panic; the summary encodes and holds no negative, NaN or infinite
// figure (CC values aside); no flow delivers more than it sent, nor a sized
// flow more than its size, nor does one complete short of it; pings
// receive no more than they sent and, with no jitter that can draw below
// zero, see at least the base RTT; a group starts and completes no more
// flows than it has; no direction delivers more than it accepted, nor
// serialises more than its highest rate (or its trace's opportunities)
// allow; with a quiet tail and every sender done, no packet is left; and
// the run is deterministic: again, with other trace details (the digest
// may not depend on what is recorded), and stepped by random event counts
// and times, read between steps, to the same summary and trace tables (the
// queue and link tables per direction). Seeded: case i is reproducible.
func TestStressSweep(t *testing.T) {
	t.Parallel()
	n := *stressRuns
	if testing.Short() {
		n = 25
	}
	ccs := cc.Names()
	failed, skipped := 0, 0
	for i := range n {
		c := drawStressCase(rand.New(rand.NewPCG(2026, uint64(i))), ccs)
		sk, err := checkStressCase(c, i)
		if sk {
			skipped++
			continue
		}
		if err != nil {
			failed++
			if failed <= 5 {
				t.Errorf("case %d: %v\n%s", i, err, c.raw)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs broke an invariant", failed, n-skipped)
	}
	t.Logf("%d scenarios, %d refused, %d broke an invariant", n, skipped, failed)
	if skipped > n/5 {
		t.Errorf("%d of %d scenarios refused: the generator draws too many invalid ones", skipped, n)
	}
}
