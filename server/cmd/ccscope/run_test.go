package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
)

// The run's table leaves out the flows of a group of more than
// tableGroupFlows, says so once, and prints each group's counts and its
// FCT and slowdown by size bucket; a small group's flows keep their rows,
// proxy legs included, with their FCT.
func TestPrintSummaryGroups(t *testing.T) {
	ps := func(x int64) *int64 { return &x }
	jain := 0.95
	s := engine.Summary{Scenario: "s", Flows: []engine.FlowSummary{{ID: "ping", CC: "ping", RTTP50Ps: ps(4e9)}}}
	for i := range 10 {
		s.Flows = append(s.Flows, engine.FlowSummary{ID: fmt.Sprintf("web/%d", i), CC: "cubic", FCTPs: ps(31e9)})
	}
	s.Flows = append(s.Flows, engine.FlowSummary{ID: "few/0.0", CC: "bbr", FCTPs: ps(20e9)},
		engine.FlowSummary{ID: "few/0.1", CC: "bbr", FCTPs: ps(21_500_000_000)})
	s.Groups = []engine.GroupSummary{
		{Group: "web", Flows: 10, Started: 10, Completed: 10, Buckets: []engine.FCTBucket{
			{MinBytes: 10_000, MaxBytes: 100_000, Count: 6, FCTP50Ps: 31e9, FCTP99Ps: 40e9, SlowdownP50: 1, SlowdownP99: 1.29, SlowdownMean: 1.1},
			{MinBytes: 10_000_000, MaxBytes: math.MaxInt64, Count: 4, FCTP50Ps: 9e12, FCTP99Ps: 9.5e12, SlowdownP50: 2, SlowdownP99: 2.5, SlowdownMean: 2.2}}},
		{Group: "few", Flows: 1, Started: 1, Completed: 0, JainBulk: &jain},
	}
	s.Queues = []engine.QueueSummary{{Link: "bottleneck", Dir: "ab"}, {Link: "web/3/src", Dir: "ab"}, {Link: "web/3/dst", Dir: "ba"}, {Link: "few/0/src", Dir: "ab"}}
	var b strings.Builder
	printSummary(&b, s)
	out := b.String()
	for _, want := range []string{"group web: its 10 flows' own rows are left out here (--json has them)",
		"group web: the queues of its flows' own host links are left out here (--json has them)", "bottleneck/ab", "few/0/src/ab",
		"few/0.1", "21.500ms", "10.0KB-100.0KB", "10.00MB+", "31.000ms", "40.000ms", "1.29", "9000.000ms", "0.950"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "web/0") || strings.Contains(out, "web/3") || strings.Count(out, "group web: its") != 1 || strings.Count(out, "group web: the queues") != 1 {
		t.Errorf("summary lists the big group's flows or host links, or says so more than once:\n%s", out)
	}
}

// A flow whose sender gave up is said so under the flow table, with when
// and why, and carries aborted_ps and abort_reason in --json; a group too
// big for its rows gets a count. The SYN path: p-rtr-p with its bottleneck
// down from the start, as TestSYNRetriesGiveUp (engine/tcp) computes with
// the kernel clock at zero when the flow starts.
func TestRunSaysWhichSendersGaveUp(t *testing.T) {
	down := `--set=links.bottleneck.ab.outages=[{"at":"0s","duration":"200s"}]`
	aligned := "--set=runtime.kernel_clock=aligned"
	code, out, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "150s", down, aligned)
	want := "flow f0: the sender gave up at 135.168s: no SYN-ACK after 10 retransmitted SYNs (tcp_syn_retries 6 + tcp_syn_linear_timeouts 4)"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout lacks %q:\n%s%s", code, want, out, stderr)
	}
	code, out, stderr = ccscope(t, "run", "p-rtr-p", "--duration", "150s", down, aligned, "--json")
	var res engine.Summary
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Flows) != 1 {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, stderr)
	}
	f := res.Flows[0]
	if f.AbortedPs == nil || *f.AbortedPs != 135_168e9 || f.AbortReason != "syn_retries" {
		t.Errorf("aborted_ps %v, abort_reason %q; want 135.168 s and syn_retries", f.AbortedPs, f.AbortReason)
	}

	// A group too big for its own rows: a count, in the text and the
	// group's summary.
	group := []string{"run", "dumbbell-n", "--duration", "150s", "--set", "flows.bulk.count=12", down}
	code, out, stderr = ccscope(t, group...)
	if want := "group bulk: 12 flows' senders gave up on their connections (--json has when and why)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout lacks %q:\n%s%s", code, want, out, stderr)
	}
	code, out, stderr = ccscope(t, append(group, "--json")...)
	res = engine.Summary{}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Groups) != 1 {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, stderr)
	}
	if g := res.Groups[0]; g.Aborted != 12 || g.Started != 0 {
		t.Errorf("group %+v: want 12 aborted of 12, none started", g)
	}
}

func TestGroupOf(t *testing.T) {
	gs := []engine.GroupSummary{{Group: "web"}, {Group: "we"}}
	for id, want := range map[string]string{"web/3": "web", "web/12.1": "web", "web/0.0": "web", "we/2": "we",
		"web": "", "webx/1": "", "web/a": "", "f0": "", "web/1.2": ""} {
		if got := groupOf(id, gs); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// A scenario file's trace and CDF files are relative to the file, whatever
// the working directory, for every command that takes one: run, sweep (the
// scenario named, or inline in a spec file beside them), and emulate and
// compare, whose arguments scenarioCmd parses.
func TestScenarioFilesRelativeToScenario(t *testing.T) {
	dir := t.TempDir()
	scn := `{"name": "rel", "runtime": {"seed": 1, "duration": "300ms"},
  "nodes": [{"id": "r1", "kind": "router"}, {"id": "h9", "kind": "endpoint"}],
  "links": [{"id": "down", "a": "r1", "b": "h9", "delay": "5ms", "ab": {"trace": {"file": "link.trace"}}, "ba": {"rate": "100Mbps"}}],
  "flows": [{"group": "web", "count": 20, "src": {"attach": "r1", "rate": "1Gbps", "delay": "1ms"}, "dst": "h9", "cc": "cubic",
             "start": {"kind": "poisson", "rate": "100/s"}, "size": {"kind": "empirical", "file": "sizes/web.cdf"}}]}`
	files := map[string]string{
		"scn.json":      scn,
		"link.trace":    "1\n1\n1\n1\n1\n1\n1\n1\n", // 8 packets a millisecond: 96 Mbps
		"sizes/web.cdf": "0 0\n10000 50\n100000 100\n",
		"spec.json":     `{"scenario": ` + scn + `, "seeds": [1, 2]}`,
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "scn.json")
	var sum struct {
		Groups []struct{ Started int } `json:"groups"`
	}
	if err := json.Unmarshal(cli(t, "run", path, "--json"), &sum); err != nil || len(sum.Groups) != 1 || sum.Groups[0].Started == 0 {
		t.Fatalf("run: groups %+v, %v", sum.Groups, err)
	}
	cli(t, "sweep", path, "--seeds", "1-2", "-o", filepath.Join(dir, "a.parquet"), "--progress", "none")
	cli(t, "sweep", filepath.Join(dir, "spec.json"), "-o", filepath.Join(dir, "b.parquet"), "--progress", "none")
	c := newScenarioCmd("emulate", "", "", true)
	raw, sets, opts, _, ok := c.parse([]string{path})
	if !ok {
		t.Fatal("emulate's arguments refused")
	}
	if _, err := engine.Prepare(raw, sets, opts...); err != nil {
		t.Fatalf("emulate's scenario: %v", err)
	}
	// leo-path checks the scenario it extends, files and all.
	if code, out, _ := runLeoPath(t, "--scenario", path, "--link", "down", "--duration", "300ms"); code != 0 {
		t.Fatalf("leo-path on a scenario with files exited %d: %s", code, out)
	}
	// --files-dir names the directory instead: for a scenario file kept
	// elsewhere, a spec with the scenario inline, or a built-in.
	elsewhere := filepath.Join(t.TempDir(), "scn.json")
	if err := os.WriteFile(elsewhere, []byte(scn), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, "run", elsewhere, "--files-dir", dir)
	cli(t, "sweep", elsewhere, "--files-dir", dir, "-o", filepath.Join(dir, "c.parquet"), "--progress", "none")
	cli(t, "run", "cellular", "--duration", "100ms", "--files-dir", dir, "--set", "links.bottleneck.ab.trace.file=link.trace")
	if code, out, _ := runLeoPath(t, "--scenario", elsewhere, "--files-dir", dir, "--link", "down", "--duration", "300ms"); code != 0 {
		t.Fatalf("leo-path --files-dir exited %d: %s", code, out)
	}
	c = newScenarioCmd("compare", "", "", false)
	raw, sets, opts, _, ok = c.parse([]string{elsewhere, "--files-dir", dir})
	if !ok {
		t.Fatal("compare's arguments refused")
	}
	if _, err := engine.Prepare(raw, sets, opts...); err != nil {
		t.Fatalf("compare's scenario with --files-dir: %v", err)
	}
	// A built-in saved to a file runs where its shipped trace is not.
	builtin := filepath.Join(t.TempDir(), "cellular.json")
	if err := os.WriteFile(builtin, cli(t, "scenarios", "--show", "cellular"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, "run", builtin, "--duration", "100ms")
}

// MemAvailable is read from /proc/meminfo, in bytes: on this Linux host,
// between a megabyte and a terabyte.
func TestMemAvailable(t *testing.T) {
	if m := memAvailable(); m < 1<<20 || m > 1<<40 {
		t.Errorf("memAvailable() = %d bytes, want a host's available memory", m)
	}
}

// `scenarios --cc-params` lists a CC's module parameters with the kernel's
// defaults, and says so of a CC without them.
func TestScenariosCCParams(t *testing.T) {
	out := string(cli(t, "scenarios", "--cc-params", "cubic"))
	for _, want := range []string{"PARAMETER", "beta", "717", "1..1023", "hystart_ack_delta_us", "2000"} {
		if !strings.Contains(out, want) {
			t.Errorf("scenarios --cc-params cubic:\n%s\nlacks %q", out, want)
		}
	}
	if out := string(cli(t, "scenarios", "--cc-params", "bbr")); out != "bbr has no module parameters\n" {
		t.Errorf("scenarios --cc-params bbr: %q", out)
	}
}

// The run's table says which flows set their CC's module parameters, which
// its cc column does not show.
func TestPrintSummaryCCParams(t *testing.T) {
	s := engine.Summary{Scenario: "s", Flows: []engine.FlowSummary{
		{ID: "f0", CC: "cubic", CCParams: map[string]int64{"hystart": 0, "beta": 512}}, {ID: "f1", CC: "cubic"}}}
	var b strings.Builder
	printSummary(&b, s)
	if out := b.String(); !strings.Contains(out, "f0: cubic with beta=512 hystart=0\n") || strings.Contains(out, "f1: cubic with") {
		t.Errorf("table:\n%s\nwant one line for f0's cc_params, none for f1", out)
	}
}
