package engine

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
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

// A signal set twice within a sampled trace's interval, its second value
// skipped, shows that value at its next sample: the sampled table never
// holds, beyond one interval and the flow's next event, a value the signal
// has left. BBR's PROBE_BW on a short path with a quarter-BDP FIFO often
// ends its 0.75 phase an ACK after starting it (bbr_is_next_cycle_phase:
// inflight already at the BDP), so pacing_gain goes 0.75 and back to 1
// within 1 ms; the every-change trace of the same run is the truth.
func TestSampledTraceSignalsNeverStale(t *testing.T) {
	sets := []string{"flows.f0.cc=bbr", "runtime.duration=6s",
		"links.bottleneck.rate=16.9Mbps", "links.bottleneck.delay=3ms",
		`links.bottleneck.ab.qdisc={"kind":"fifo","limit":"0.25BDP"}`}
	type step struct {
		t sim.Time
		v float64
	}
	steps := func(trace string) map[string][]step {
		r := builtinRun(t, "p-rtr-p", append(sets, "trace="+trace)...)
		r.RunToEnd()
		sig, m := &r.Trace.SignalT, map[string][]step{}
		for i := range sig.Len() {
			n := r.Trace.Signals[sig.Signal[i]]
			m[n] = append(m[n], step{sim.Time(sig.T[i]), sig.Value[i]})
		}
		return m
	}
	at := func(s []step, t sim.Time) float64 {
		v := math.NaN()
		for _, x := range s {
			if x.t > t {
				break
			}
			v = x.v
		}
		return v
	}
	truth := steps(`{"detail":"change"}`)
	sampled := steps(`{"detail":"sampled","interval":"1ms"}`)
	const lag = 2 * sim.Millisecond // the interval, and the flow's next ACK
	for name, ts := range truth {
		stale := 0
		for i, x := range ts {
			// the value the signal held from x.t until its next change
			until := sim.Never
			if i+1 < len(ts) {
				until = ts[i+1].t
			}
			if until.Sub(x.t) <= lag {
				continue
			}
			if got := at(sampled[name], x.t.Add(lag)); got != x.v {
				stale++
				if stale <= 3 {
					t.Errorf("%s: %v at %v until %v; the sampled trace shows %v at %v",
						name, x.v, x.t, until, got, x.t.Add(lag))
				}
			}
		}
		if stale > 3 {
			t.Errorf("%s: %d stale values in all", name, stale)
		}
	}
	if len(truth["pacing_gain"]) < 100 {
		t.Fatalf("pacing_gain changed %d times; want PROBE_BW's cycles", len(truth["pacing_gain"]))
	}
}
