package engine

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// leoScenario is p-rtr-p (100 Mbps, 40 ms, 1-BDP FIFO) for duration with
// the given changes, traced at every change.
func leoScenario(t *testing.T, cc, duration, changes string) *Run {
	t.Helper()
	raw := fmt.Sprintf(`{
  "name": "leo-test", "runtime": {"seed": 1, "duration": %q},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
    {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "100Mbps", "delay": "19ms", "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"}}}
  ],
  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": %q}],
  "changes": %s,
  "trace": {"detail": "change"}
}`, duration, cc, changes)
	p, err := Prepare([]byte(raw), nil)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	r, err := New(p.Scenario, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunToEnd()
	return r
}

// A 300 ms hard-handover outage (loss 1 both ways from 10 s) announced
// 200 ms ahead. The announcement reaches SaTCP at exactly 9.8 s (its
// handover signal rises then). Inside the 2.3 s window after it, CUBIC
// answers the outage's losses with ssthresh β = 717/1024 of its window or
// below; SaTCP sets ssthresh no lower than the cwnd it had before the
// outage and is back at that cwnd when it next reaches Open.
func TestSaTCPAnnouncedOutageEndToEnd(t *testing.T) {
	changes := `[
  {"at": "10s", "link": "bottleneck", "dir": "ab", "loss": {"kind": "bernoulli", "p": 1}, "announce": "200ms"},
  {"at": "10s", "link": "bottleneck", "dir": "ba", "loss": {"kind": "bernoulli", "p": 1}},
  {"at": "10.3s", "link": "bottleneck", "dir": "ab", "loss": {"kind": "none"}},
  {"at": "10.3s", "link": "bottleneck", "dir": "ba", "loss": {"kind": "none"}}]`
	for _, cc := range []string{"cubic", "satcp"} {
		r := leoScenario(t, cc, "14s", changes)
		// before: cwnd at the outage; newSS: every ssthresh set inside the
		// window; reopened: cwnd when the flow is next Open after 10.3 s.
		var before, prevSS, reopened uint32
		var newSS []uint32
		for _, row := range r.Trace.FlowsT.Rows {
			switch {
			case row.T < sim.Time(10*sim.Second):
				before = row.CwndPkts
			case row.T < sim.Time(12100*sim.Millisecond):
				if row.SSThreshPkts != prevSS {
					newSS = append(newSS, row.SSThreshPkts)
				}
				if reopened == 0 && row.T > sim.Time(10300*sim.Millisecond) && row.CAState == 0 {
					reopened = row.CwndPkts
				}
			}
			prevSS = row.SSThreshPkts
		}
		t.Logf("%s: cwnd before the outage %d, ssthresh set in the window %v, cwnd when Open again %d", cc, before, newSS, reopened)
		if len(newSS) == 0 {
			t.Fatalf("%s: no loss response to the outage", cc)
		}
		if cc == "cubic" && slices.Min(newSS) > before*717/1024+1 {
			t.Errorf("cubic: ssthresh %v, want one ≤ %d·717/1024 + 1", newSS, before)
		}
		if cc == "satcp" {
			if slices.Min(newSS) < before || reopened < before {
				t.Errorf("satcp: ssthresh %v, cwnd when Open again %d; want both ≥ the cwnd %d before the outage", newSS, reopened, before)
			}
			ts, vs := signalSeries(r, "handover")
			rise := sim.Time(-1)
			for i := range ts {
				if vs[i] == 1 {
					rise = ts[i]
					break
				}
			}
			if rise != sim.Time(9800*sim.Millisecond) {
				t.Errorf("satcp heard the announcement at %v, want 10 s − 200 ms = 9.8 s", rise)
			}
		}
	}
}

// A reassignment at 12 s that triples the RTT (bottleneck delay 19 → 59
// ms: 40 → 120 ms). LeoCC's trigger (11.9–12 s) sends it through PROBE_RTT
// and it re-measures min_rtt on the new path by 13 s: within 10 % of 120
// ms. BBRv1's 10 s min filter still holds the old 40 ms then.
func TestLeoCCRefreshesMinRTTAfterRTTStep(t *testing.T) {
	changes := `[{"at": "12s", "link": "bottleneck", "dir": "ab", "delay": "59ms"},
  {"at": "12s", "link": "bottleneck", "dir": "ba", "delay": "59ms"}]`
	for _, tc := range []struct {
		cc   string
		want float64 // us
	}{{"bbr", 40000}, {"leocc", 120000}} {
		r := leoScenario(t, tc.cc, "13s", changes)
		ts, vs := signalSeries(r, "min_rtt")
		if len(ts) == 0 {
			t.Fatalf("%s: no min_rtt signal", tc.cc)
		}
		got := vs[len(vs)-1]
		t.Logf("%s: min_rtt at 13 s = %.0f us (last change at %v)", tc.cc, got, ts[len(ts)-1])
		if math.Abs(got/tc.want-1) > 0.1 {
			t.Errorf("%s: min_rtt at 13 s = %.0f us, want %.0f ± 10%%", tc.cc, got, tc.want)
		}
		if tc.cc == "leocc" {
			_, n := signalSeries(r, "model_refreshes")
			if len(n) == 0 || n[len(n)-1] != 1 {
				t.Errorf("leocc: model_refreshes = %v, want 1 by 13 s", n)
			}
		}
	}
}
