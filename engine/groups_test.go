package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// runJSON prepares and runs a scenario to its end.
func runJSON(t *testing.T, raw []byte, sets ...string) (*Run, Summary) {
	t.Helper()
	p, err := Prepare(raw, sets)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	r, err := New(p.Scenario, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunToEnd()
	return r, r.Summary(p.Hash)
}

// idleLinkGroup is one host pair joined by a 100 Mbps, 10 ms link, and a
// group of n flows of size bytes starting at 0.5 s, one every second.
func idleLinkGroup(n int, size string) []byte {
	return fmt.Appendf(nil, `{"runtime": {"seed": 1, "duration": "%ds"},
 "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"}],
 "links": [{"id": "l", "a": "h1", "b": "h2", "rate": "100Mbps", "delay": "10ms"}],
 "flows": [{"group": "g", "count": %d, "src": "h1", "dst": "h2", "cc": "cubic",
   "start": {"kind": "uniform", "at": "500ms", "span": "1ms"}, "size": %q}]}`, n+1, n, size)
}

// The FCT of a flow that fits in the initial window on an idle path, by
// hand: the SYN and SYN-ACK (52 B each, 4.16 µs at 100 Mbps) and their
// two one-way delays, then the ten 1500-byte segments back to back (10 ×
// 120 µs; the first ten segments go unpaced) and one more one-way delay:
// 3 × 10 ms + 2 × 4.16 µs + 1.2 ms = 31.20832 ms. Its ideal FCT is
// 2 × 10 ms + 10 ms + 15,000 B at 100 Mbps = 31.2 ms. The flow is built at
// its start and released when done: no packet of it is left behind.
func TestGroupFlowFCTOneRound(t *testing.T) {
	r, sum := runJSON(t, idleLinkGroup(1, "14480B"))
	want := 3*10*sim.Millisecond + 2*units.TxTime(52, 100*units.Mbps) + 10*units.TxTime(1500, 100*units.Mbps)
	f := sum.Flows[0]
	if f.FCTPs == nil || *f.FCTPs != int64(want) {
		t.Fatalf("FCT = %v, want %v", f.FCTPs, want)
	}
	if f.BytesDelivered != 14480 {
		t.Errorf("delivered %d bytes, want 14480", f.BytesDelivered)
	}
	g := sum.Groups[0]
	if g.Completed != 1 || len(g.Buckets) != 1 || g.Buckets[0].MinBytes != 10_000 {
		t.Fatalf("group summary = %+v, want one completed flow in the 10-100 KB bucket", g)
	}
	if s, w := g.Buckets[0].SlowdownP50, float64(want)/float64(31200*sim.Microsecond); math.Abs(s-w) > 1e-12 {
		t.Errorf("slowdown = %v, want %v", s, w)
	}
	if n := r.Pool.Live(); n != 0 {
		t.Errorf("%d packets live after the run, want 0", n)
	}
	if r.Flows[0].(*tcpFlow).snd != nil {
		t.Error("finished group flow still holds its sender")
	}
}

// Jain's index over a group's bulk flows: N equal CUBIC flows sharing a
// bottleneck for long enough converge to a fair share, index near 1.
func TestGroupJainBulk(t *testing.T) {
	_, sum := runJSON(t, mustBuiltin(t, "dumbbell-n"), "flows.bulk.count=4", "links.bottleneck.rate=100Mbps", "runtime.duration=10s")
	j := sum.Groups[0].JainBulk
	if j == nil || *j < 0.95 || *j > 1 {
		t.Fatalf("Jain index = %v, want in [0.95, 1]", j)
	}
}

// mustBuiltin returns a built-in scenario's JSON.
func mustBuiltin(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := config.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
