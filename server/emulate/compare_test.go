package emulate

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// TestGroupRows lines up two group summaries whose buckets differ: a
// bucket only one side has flows in gets a row with the other side empty,
// and rows follow the buckets' sizes; an aborted row appears when either
// side's senders gave up.
func TestGroupRows(t *testing.T) {
	ms := int64(sim.Millisecond)
	j := 0.9
	sg := engine.GroupSummary{Group: "web", Completed: 3, JainBulk: &j, Buckets: []engine.FCTBucket{
		{MinBytes: 10_000, MaxBytes: 100_000, Count: 2, FCTP50Ps: 100 * ms, FCTP99Ps: 150 * ms}}}
	kg := engine.GroupSummary{Group: "web", Completed: 2, Aborted: 1, Buckets: []engine.FCTBucket{
		{MinBytes: 0, MaxBytes: 10_000, Count: 1, FCTP50Ps: 60 * ms, FCTP99Ps: 60 * ms},
		{MinBytes: 10_000, MaxBytes: 100_000, Count: 1, FCTP50Ps: 110 * ms, FCTP99Ps: 110 * ms}}}
	rows := groupRows(7, sg, kg)
	type want struct {
		metric    string
		sim, kern float64 // -1: none
	}
	wants := []want{{"completed", 3, 2}, {"aborted", 0, 1}, {"fct_p50[,10KB)", -1, 60}, {"fct_p99[,10KB)", -1, 60},
		{"fct_p50[10KB,100KB)", 100, 110}, {"fct_p99[10KB,100KB)", 150, 110}, {"jain_bulk", 0.9, -1}}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(wants), rows)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for i, w := range wants {
		r := rows[i]
		if r.Seed != 7 || r.Flow != "web" || r.Group != "" || r.Metric != w.metric || val(r.Sim) != w.sim || val(r.Kernel) != w.kern {
			t.Errorf("row %d = %s %s sim %v kernel %v; want web %s sim %v kernel %v", i, r.Flow, r.Metric, val(r.Sim), val(r.Kernel), w.metric, w.sim, w.kern)
		}
	}
	if d := rows[4].RelDiff; d == nil || *d < 0.0999 || *d > 0.1001 {
		t.Errorf("rel_diff of fct_p50[10KB,100KB) = %v, want +0.1", d)
	}
	kg.Aborted = 0
	for _, r := range groupRows(7, sg, kg) {
		if r.Metric == "aborted" {
			t.Errorf("an aborted row with no sender giving up: %+v", r)
		}
	}
}

// The srtt quantiles weigh time and cover a flow while it moves data. Rows
// at 100, 101, 102 and 103 ms (srtt 40, 50, 60, 70 ms) and one at 104 ms
// (45 ms) that holds until the flow's last delivery at 500 ms: by hand the
// srtt is 45 ms for 396 of the 400 ms, so both the median and the 99th
// percentile are 45 (counting rows would give 50 and 70). The rows after
// 500 ms (90 ms, as the emulator's polls go on after a sized flow is done)
// and another flow's are left out.
func TestSRTTQuantilesOverTime(t *testing.T) {
	ms := sim.Millisecond
	d := &trace.DeliveryTable{
		T:              []int64{int64(100 * ms), int64(300 * ms), int64(500 * ms), int64(600 * ms), int64(700 * ms)},
		Flow:           []int32{0, 0, 0, 0, 0},
		BytesDelivered: []int64{1000, 5000, 9000, 9000, 9000},
	}
	until := lastDelivery(d, 0)
	if until != sim.Time(500*ms) {
		t.Fatalf("lastDelivery = %v, want 500ms", until)
	}
	row := func(at, srtt sim.Duration) trace.FlowRow { return trace.FlowRow{T: sim.Time(at), SRTT: srtt} }
	rows := []trace.FlowRow{row(100*ms, 40*ms), row(101*ms, 50*ms), row(102*ms, 60*ms), row(103*ms, 70*ms),
		{T: sim.Time(103500 * sim.Microsecond), Flow: 1, SRTT: 500 * ms}, row(104*ms, 45*ms),
		row(600*ms, 90*ms), row(700*ms, 90*ms)}
	p50, p99 := srttQuantiles(rows, 0, until)
	if p50 == nil || p99 == nil || *p50 != 45 || *p99 != 45 {
		t.Errorf("srtt p50, p99 = %v, %v ms, want 45, 45", deref(p50), deref(p99))
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestLeastLate checks the retries of a late kernel run: runs are taken
// while none so far was on time (lateness p99 at most LateWarn), at most
// 1 + retries of them, and the least late is kept.
func TestLeastLate(t *testing.T) {
	ms := sim.Millisecond
	for _, c := range []struct {
		name    string
		p99s    []sim.Duration // of the runs in turn
		retries int
		runs    int
		kept    sim.Duration
		heard   []sim.Duration // the lateness each retry is announced with
	}{
		{"on time", []sim.Duration{ms / 2}, 2, 1, ms / 2, nil},
		{"exactly LateWarn is on time", []sim.Duration{LateWarn}, 2, 1, LateWarn, nil},
		{"late, then on time", []sim.Duration{5 * ms, ms / 2}, 2, 2, ms / 2, []sim.Duration{5 * ms}},
		{"late every time", []sim.Duration{5 * ms, 7 * ms, 3 * ms}, 2, 3, 3 * ms, []sim.Duration{5 * ms, 7 * ms}},
		{"least late first", []sim.Duration{2 * ms, 9 * ms, 4 * ms}, 2, 3, 2 * ms, []sim.Duration{2 * ms, 9 * ms}},
		{"no retries", []sim.Duration{5 * ms}, 0, 1, 5 * ms, nil},
	} {
		runs := 0
		run := func() (*Result, error) {
			p := int64(c.p99s[runs])
			runs++
			return &Result{Summary: Summary{Lateness: Lateness{P99Ps: &p}}}, nil
		}
		var heard []sim.Duration
		res, tries, err := leastLate(run, c.retries, func(l sim.Duration) { heard = append(heard, l) })
		if err != nil {
			t.Fatal(err)
		}
		if got := sim.Duration(*res.Summary.Lateness.P99Ps); tries != c.runs || runs != c.runs || got != c.kept || !slices.Equal(heard, c.heard) {
			t.Errorf("%s: %d runs (%d reported), kept p99 %v, heard %v; want %d runs, %v kept, heard %v",
				c.name, runs, tries, got, heard, c.runs, c.kept, c.heard)
		}
	}
}

// TestLPOffsetNote: an lp flow with offsets (tcp.timestamps 1, the
// default) gets a note naming it and the setting that compares like with
// like; one with timestamps 2, or another CC, gets none.
func TestLPOffsetNote(t *testing.T) {
	flow := func(id, cc string, ts int) config.Flow {
		o := config.DefaultTCPOptions()
		o.Timestamps = ts
		return config.Flow{ID: id, Params: &config.Params{CC: cc, TCP: o}}
	}
	got := lpOffsetNotes([]config.Flow{flow("a", "lp", 1), flow("b", "lp", 2), flow("c", "reno", 1)})
	if len(got) != 1 || !strings.HasPrefix(got[0], "flows[a]: ") || !strings.Contains(got[0], "tcp.timestamps=2") {
		t.Fatalf("notes %q, want one for flows[a] naming tcp.timestamps=2", got)
	}
}

// TestMinRTTNote: a BBR flow whose kernel side took its first min_rtt more
// than 50 µs above the simulator's gets a note saying what that does to
// PROBE_RTT, with both values; one within 50 µs, a CUBIC flow, or one that
// ran no longer than BBR's 10 s min_rtt window (a short flow of a group)
// gets none. Values of 0 (no sample yet) are passed over, as the
// simulator's BBR publishes before its handshake ends.
func TestMinRTTNote(t *testing.T) {
	// Values 6 s apart, and one more sample of another signal 12 s after
	// the first unless short.
	recOf := func(short bool, vals ...float64) *trace.Recorder {
		r := trace.NewRecorder(0, 0, nil)
		r.Flows = []string{"f0"}
		other, mrtt := r.SignalIndex("bw"), r.SignalIndex("min_rtt")
		s := &r.SignalT
		add := func(at int64, sig int32, v float64) {
			s.T, s.Flow, s.Signal, s.Value = append(s.T, at), append(s.Flow, 0), append(s.Signal, sig), append(s.Value, v)
		}
		for i, v := range vals {
			add(int64(i)*6e12, other, v)
			add(int64(i)*6e12, mrtt, v)
		}
		if !short {
			add(12e12, other, 1)
		}
		return r
	}
	rec := func(vals ...float64) *trace.Recorder { return recOf(false, vals...) }
	bbr := engine.FlowSummary{ID: "f0", CC: "bbr"}
	got := minRTTNote(3, bbr, rec(0, 50008, 50000), rec(50326, 50159), 0)
	for _, want := range []string{"seed 3, flows[f0]", "50.326 ms", "318 µs above the simulator's 50.008 ms", "PROBE_RTT can come later"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if n := minRTTNote(3, bbr, recOf(true, 50008, 50000), rec(50326, 50159), 0); n != "" {
		t.Errorf("a flow of 6 s: note %q, want none", n)
	}
	if n := minRTTNote(3, bbr, rec(50008), rec(50050), 0); n != "" {
		t.Errorf("42 µs apart: note %q, want none", n)
	}
	if n := minRTTNote(3, engine.FlowSummary{ID: "f0", CC: "cubic"}, rec(50008), rec(50326), 0); n != "" {
		t.Errorf("CUBIC: note %q, want none", n)
	}
	if n := minRTTNote(3, bbr, rec(50008), trace.NewRecorder(0, 0, nil), 0); n != "" {
		t.Errorf("no kernel signals: note %q, want none", n)
	}
}

// TestBwNote: a link-limited BBR flow whose kernel side read more bandwidth
// than the simulator's over the run (time-weighted medians) gets a note with
// both values; a brief spike above, a flow held below the link (send
// buffer), equal estimates or a CUBIC flow get none. The path: 150 Mbps,
// whose payload rate at 1448 bytes of 1500 is 144.8 Mbps.
func TestBwNote(t *testing.T) {
	rec := func(pts ...[2]float64) *trace.Recorder { // (time in s, bw in Mbps)
		r := trace.NewRecorder(0, 0, nil)
		r.Flows = []string{"f0"}
		bw := r.SignalIndex("bw")
		s := &r.SignalT
		for _, p := range pts {
			s.T, s.Flow, s.Signal, s.Value = append(s.T, int64(p[0]*1e12)), append(s.Flow, 0), append(s.Signal, bw), append(s.Value, p[1]*1e6)
		}
		return r
	}
	end := int64(15e12)
	bbr := engine.FlowSummary{ID: "f0", CC: "bbr", PathFacts: engine.PathFacts{BottleneckBps: 150e6}}
	sim := rec([2]float64{0.5, 140}, [2]float64{0.6, 144.8})
	got := bwNote(2, bbr, sim, rec([2]float64{0.5, 141}, [2]float64{1, 147.9}, [2]float64{2, 145.1}), 0, end)
	for _, want := range []string{"seed 2, flows[f0]", "read 145.10 Mbps", "0.21 % above the simulator's 144.80", "keeps more queue"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	// 147.9 Mbps for 1 s of 15: the median is the simulator's.
	if n := bwNote(2, bbr, sim, rec([2]float64{0.5, 141}, [2]float64{1, 147.9}, [2]float64{2, 144.8}), 0, end); n != "" {
		t.Errorf("a spike: note %q, want none", n)
	}
	if n := bwNote(2, bbr, rec([2]float64{0.5, 93}), rec([2]float64{0.5, 101.7}), 0, end); n != "" {
		t.Errorf("held under the link: note %q, want none", n)
	}
	if n := bwNote(2, engine.FlowSummary{ID: "f0", CC: "cubic", PathFacts: bbr.PathFacts}, sim, rec([2]float64{0.5, 145.1}), 0, end); n != "" {
		t.Errorf("CUBIC: note %q, want none", n)
	}
	if n := bwNote(2, bbr, sim, trace.NewRecorder(0, 0, nil), 0, end); n != "" {
		t.Errorf("no kernel signals: note %q, want none", n)
	}
}

// TestProbeRTTNote: a BBR flow that entered PROBE_RTT (cwnd_gain falling
// to 1) a different number of times on the two sides gets a note with both
// sides' times; the kernel's first poll, taken before BBR set its gains
// (1.0 then 2.885), is no PROBE_RTT. Equal counts, or a CUBIC flow, get
// none. The figures are those of BBR at 50 Mbps over 600 ms
// (server/emulate/COMPARISONS.md, "AQMs on long paths").
func TestProbeRTTNote(t *testing.T) {
	rec := func(pts ...[2]float64) *trace.Recorder { // (time in s, cwnd_gain)
		r := trace.NewRecorder(0, 0, nil)
		r.Flows = []string{"f0"}
		g := r.SignalIndex("cwnd_gain")
		s := &r.SignalT
		for _, p := range pts {
			s.T, s.Flow, s.Signal, s.Value = append(s.T, int64(p[0]*1e12)), append(s.Flow, 0), append(s.Signal, g), append(s.Value, p[1])
		}
		return r
	}
	bbr := engine.FlowSummary{ID: "f0", CC: "bbr"}
	sim := rec([2]float64{0.6, 2.885}, [2]float64{8.77, 2}, [2]float64{10.602, 1}, [2]float64{11.802, 2}, [2]float64{21.805, 1}, [2]float64{23.006, 2})
	kern := rec([2]float64{0.601, 1}, [2]float64{1.202, 2.885}, [2]float64{8.798, 2}, [2]float64{10.605, 1}, [2]float64{11.805, 2})
	got := probeRTTNote(1, bbr, sim, kern, 0)
	for _, want := range []string{"seed 1, flows[f0]", "simulated BBR entered PROBE_RTT at 10.6, 21.8 s", "the kernel's at 10.6 s:", "restarts its 10 s window"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if n := probeRTTNote(1, bbr, rec([2]float64{0.6, 2.885}, [2]float64{8.77, 2}), kern, 0); !strings.Contains(n, "entered PROBE_RTT never, the kernel's at 10.6 s") {
		t.Errorf("none simulated: note %q", n)
	}
	if n := probeRTTNote(1, bbr, sim, sim, 0); n != "" {
		t.Errorf("equal counts: note %q, want none", n)
	}
	if n := probeRTTNote(1, engine.FlowSummary{ID: "f0", CC: "cubic"}, sim, kern, 0); n != "" {
		t.Errorf("CUBIC: note %q, want none", n)
	}
}

// TestStallNote: a relay stall longer than a quarter of the shortest base
// RTT among the flows gets a note with both values; one at or under it, or
// flows without a path (a ping's RTT is 0 here), get none.
func TestStallNote(t *testing.T) {
	ms := int64(1e9)
	flows := []engine.FlowSummary{{ID: "f0", PathFacts: engine.PathFacts{BaseRTTPs: 40 * ms}},
		{ID: "f1", PathFacts: engine.PathFacts{BaseRTTPs: 13 * ms}}, {ID: "p"}}
	got := stallNote(2, 8500*ms/1000, flows)
	for _, want := range []string{"seed 2:", "up to 8.50 ms", "65 % of the shortest base RTT (13.00 ms)"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if n := stallNote(2, 13*ms/4, flows); n != "" {
		t.Errorf("a quarter of the RTT: note %q, want none", n)
	}
	if n := stallNote(2, 20*ms, []engine.FlowSummary{{ID: "p"}}); n != "" {
		t.Errorf("no base RTT: note %q, want none", n)
	}
}

// TestAbortNote: a flow whose sender gave up on either side gets a note
// with when and why on each; one that stood on both gets none.
func TestAbortNote(t *testing.T) {
	at := int64(135_168e9)
	gave := engine.FlowSummary{ID: "f0", AbortedPs: &at, AbortReason: "syn_retries"}
	got := abortNote(1, gave, engine.FlowSummary{ID: "f0"})
	want := "seed 1, flows[f0]: the simulated sender gave up at 135.168 s (syn_retries), the kernel's kept its connection"
	if got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if n := abortNote(1, engine.FlowSummary{ID: "f0"}, engine.FlowSummary{ID: "f0"}); n != "" {
		t.Errorf("both stood: note %q, want none", n)
	}
}
