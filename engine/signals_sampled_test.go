package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// A sampled trace takes each CC signal at most once per interval on its
// own clock, so signals that change at one ACK are all kept: BBR's
// STARTUP ends with full_bw_cnt reaching 3 and mode leaving 0 at the same
// ACK (bbr_check_full_bw_reached, bbr_check_drain), and both show.
func TestSampledTraceKeepsEverySignal(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "flows.f0.cc=bbr", "runtime.duration=2s",
		`trace={"detail": "sampled", "interval": "10ms"}`)
	r.RunToEnd()
	sig := &r.Trace.SignalT
	seen := map[string]map[float64]bool{"mode": {}, "full_bw_cnt": {}}
	for i := range sig.Len() {
		if m, ok := seen[r.Trace.Signals[sig.Signal[i]]]; ok {
			m[sig.Value[i]] = true
		}
	}
	if !seen["full_bw_cnt"][3] || !seen["mode"][1] && !seen["mode"][2] {
		t.Errorf("sampled signals: full_bw_cnt values %v, mode values %v; want 3 and a mode past STARTUP",
			seen["full_bw_cnt"], seen["mode"])
	}
}

// A sampled trace never holds, beyond its interval, a value that the
// entity it samples has left: a row its interval skips is written at the
// entity's next sample time. The every-change trace of the same run is the
// truth, and every value it shows for longer than the interval and a
// margin must show in the sampled trace by then: each CC signal, each
// direction's backlog, each flow's cwnd and bytes delivered.
//   - BBR's PROBE_BW on a short path with a quarter-BDP FIFO often ends its
//     0.75 phase an ACK after starting it (bbr_is_next_cycle_phase:
//     inflight already at the BDP), so pacing_gain goes 0.75 and back to 1
//     within 1 ms; before, the sampled trace showed 0.75 for whole cycles.
//   - A sized flow's queue empties within an interval of its last row and
//     stays empty; before, the sampled trace kept its last backlog (84 KB
//     at the bottleneck) to the run's end.
func TestSampledTraceNeverStale(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"bbr", []string{"flows.f0.cc=bbr", "runtime.duration=6s",
			"links.bottleneck.rate=16.9Mbps", "links.bottleneck.delay=3ms",
			`links.bottleneck.ab.qdisc={"kind":"fifo","limit":"0.25BDP"}`}},
		{"sized", []string{"flows.f0.size=5MB", "runtime.duration=3s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			truth := sampledSeries(t, c.sets, `{"detail":"change"}`)
			sampled := sampledSeries(t, c.sets, `{"detail":"sampled","interval":"1ms"}`)
			for _, e := range staleValues(truth, sampled, 2*sim.Millisecond) { // the interval, and a margin
				t.Error(e)
			}
			if n := len(truth["signal f0 pacing_gain"]); c.name == "bbr" && n < 100 {
				t.Fatalf("pacing_gain changed %d times; want PROBE_BW's cycles", n)
			}
			if b := truth["queue bottleneck ab"]; c.name == "sized" && (len(b) < 100 || b[len(b)-1].v != 0) {
				t.Fatalf("the bottleneck's backlog: %d rows ending at %v; want a queue that empties", len(b), b[len(b)-1])
			}
		})
	}
}

// step is a value a series takes at t.
type step struct {
	t sim.Time
	v float64
}

// sampledSeries runs p-rtr-p with sets and the trace given, stepping it as
// a session does, and returns its tables as series (traceSeries).
func sampledSeries(t *testing.T, sets []string, trace string) map[string][]step {
	r := builtinRun(t, "p-rtr-p", append(sets, "trace="+trace)...)
	for !r.Done() || r.Sim.NextAt() <= r.Horizon() { // as a session steps it
		r.StepEvents(5000)
	}
	return traceSeries(r.Trace)
}

// traceSeries returns a trace's tables as series by name, each in time
// order: every CC signal of every flow, each direction's backlog, each
// flow's cwnd and bytes delivered.
func traceSeries(rec *trace.Recorder) map[string][]step {
	m := map[string][]step{}
	add := func(name string, at int64, v float64) { m[name] = append(m[name], step{sim.Time(at), v}) }
	sig := &rec.SignalT
	for i := range sig.Len() {
		add(fmt.Sprintf("signal %s %s", rec.Flows[sig.Flow[i]], rec.Signals[sig.Signal[i]]), sig.T[i], sig.Value[i])
	}
	q := &rec.Queue
	for i := range q.Len() {
		add(fmt.Sprintf("queue %s %s", rec.Links[q.Link[i]], map[bool]string{true: "ab", false: "ba"}[q.DirAB[i]]),
			q.T[i], float64(q.BacklogBytes[i]))
	}
	for _, f := range rec.FlowsT.Rows {
		add("cwnd "+rec.Flows[f.Flow], int64(f.T), float64(f.CwndPkts))
	}
	d := &rec.Delivery
	for i := range d.Len() {
		add("delivered "+rec.Flows[d.Flow[i]], d.T[i], float64(d.BytesDelivered[i]))
	}
	return m
}

// staleValues lists, series by series, the values an every-change trace
// (truth) shows for longer than lag that a sampled trace of the same run
// does not show lag after they start: at most three per series, then a
// count.
func staleValues(truth, sampled map[string][]step, lag sim.Duration) []string {
	var out []string
	names := slices.Sorted(maps.Keys(truth))
	for _, name := range names {
		ts, stale := truth[name], 0
		for i, x := range ts {
			until := sim.Never // the value holds from x.t until its next change
			if i+1 < len(ts) {
				until = ts[i+1].t
			}
			if until.Sub(x.t) <= lag {
				continue
			}
			if got := stepAt(sampled[name], x.t.Add(lag)); got != x.v && !(math.IsNaN(got) && math.IsNaN(x.v)) {
				if stale++; stale <= 3 {
					out = append(out, fmt.Sprintf("%s: %v at %v until %v; the sampled trace shows %v at %v",
						name, x.v, x.t, until, got, x.t.Add(lag)))
				}
			}
		}
		if stale > 3 {
			out = append(out, fmt.Sprintf("%s: %d stale values in all", name, stale))
		}
	}
	return out
}

// stepAt is the value a series holds at t: NaN before its first step.
func stepAt(s []step, t sim.Time) float64 {
	v := math.NaN()
	for _, x := range s {
		if x.t > t {
			break
		}
		v = x.v
	}
	return v
}
