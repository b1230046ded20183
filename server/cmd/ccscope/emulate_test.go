//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/server/emulate"
	"github.com/ccscope/ccscope/server/report"
)

// TestEmulateHelper is not a test: TestEmulateCtrlC runs this test binary
// again with CCSCOPE_EMULATE_HELPER set, to run `ccscope emulate` in a
// process of its own that it can interrupt.
func TestEmulateHelper(t *testing.T) {
	if os.Getenv("CCSCOPE_EMULATE_HELPER") == "" {
		return
	}
	os.Exit(emulateMain(strings.Fields(os.Getenv("CCSCOPE_EMULATE_HELPER"))))
}

// TestEmulateCtrlC interrupts `ccscope emulate` with SIGINT while it runs and
// checks that it exits with an error saying so, having removed its
// namespaces (named after its process id).
func TestEmulateCtrlC(t *testing.T) {
	if err := emulate.Available(); err != nil {
		t.Skipf("EMULATION TEST NOT RUN: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEmulateHelper$")
	cmd.Env = append(os.Environ(), "CCSCOPE_EMULATE_HELPER=p-rtr-p --duration 30s --set links.bottleneck.rate=20Mbps")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	prefix := emulate.NamespacePrefix + strconv.Itoa(cmd.Process.Pid) + "-"
	deadline := time.Now().Add(10 * time.Second)
	for len(namespaces(prefix)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := namespaces(prefix); len(n) < 2 {
		t.Fatalf("the emulation did not create its namespaces: %v (stderr %q)", n, stderr.String())
	}
	time.Sleep(time.Second) // into the run proper
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("exit = %v, want status 1", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("emulate did not exit within 15 s of SIGINT")
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr = %q, want it to say the run was interrupted", stderr.String())
	}
	if left := namespaces(prefix); len(left) > 0 {
		t.Errorf("namespaces left after SIGINT: %v", left)
	}
}

func namespaces(prefix string) []string {
	ents, _ := os.ReadDir("/var/run/netns")
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestParseSeeds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []uint64
		err  bool
	}{
		{"", nil, false}, {"1-3", []uint64{1, 2, 3}, false}, {"1,4,7", []uint64{1, 4, 7}, false},
		{"2,5-6", []uint64{2, 5, 6}, false}, {"3-1", nil, true}, {"x", nil, true}, {"1-", nil, true}, {"0-5000", nil, true},
		{"1 - 2", []uint64{1, 2}, false}, {"500-999,1000-1500", nil, true},
		// The largest seed ends its range (counting up to it wrapped and never ended).
		{"18446744073709551615", []uint64{math.MaxUint64}, false},
		{"18446744073709551614-18446744073709551615", []uint64{math.MaxUint64 - 1, math.MaxUint64}, false},
		{"0-18446744073709551615", nil, true},
	} {
		got, err := parseSeeds(c.in)
		if (err != nil) != c.err || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestPrintComparisonGroups checks the table for flow groups: a group of
// more than tableGroupFlows flows keeps its own rows (FCT by bucket) and
// loses its flows' rows, said once; a small group's flows keep theirs.
func TestPrintComparisonGroups(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	c := &emulate.Comparison{Scenario: "s", Seeds: []uint64{1}}
	for i := range 9 {
		c.Rows = append(c.Rows, emulate.CompareRow{Seed: 1, Flow: fmt.Sprintf("web/%d", i), Group: "web",
			Metric: "goodput", Unit: "Mbps", Sim: v(1), Kernel: v(1)})
	}
	c.Rows = append(c.Rows,
		emulate.CompareRow{Seed: 1, Flow: "few/0", Group: "few", Metric: "goodput", Unit: "Mbps", Sim: v(2), Kernel: v(3)},
		emulate.CompareRow{Seed: 1, Flow: "web", Metric: "fct_p50[10KB,100KB)", Unit: "ms", Sim: v(100), Kernel: v(110)})
	var b strings.Builder
	printComparison(&b, c)
	out := b.String()
	for _, want := range []string{"few/0", "+50.0%", "fct_p50[10KB,100KB)", "+10.0%",
		"group web: its 9 flows' own rows are left out here (--json has them)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "web/0") || strings.Count(out, "group web:") != 1 {
		t.Errorf("table lists the big group's flows, or names the group more than once:\n%s", out)
	}
	// A group split at a proxy has two rows a flow, one for each leg.
	c.Rows = nil
	for i := range 9 {
		for leg := range 2 {
			c.Rows = append(c.Rows, emulate.CompareRow{Seed: 1, Flow: fmt.Sprintf("web/%d.%d", i, leg), Group: "web",
				Metric: "goodput", Unit: "Mbps", Sim: v(1), Kernel: v(1)})
		}
	}
	b.Reset()
	printComparison(&b, c)
	if want := "group web: its 9 flows' own rows, each leg's, are left out here"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}

// With several seeds each side's per-seed range follows its mean; with one
// seed the table has no range columns.
func TestPrintComparisonRanges(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	c := &emulate.Comparison{Scenario: "wifi", Seeds: []uint64{1, 2, 3}}
	for i, p := range [][2]float64{{144, 85}, {0, 293}, {377, 0}} {
		c.Rows = append(c.Rows, emulate.CompareRow{Seed: uint64(i + 1), Flow: "f0", Metric: "retransmits", Unit: "pkts", Sim: v(p[0]), Kernel: v(p[1])})
	}
	var b strings.Builder
	printComparison(&b, c)
	out := b.String()
	for _, want := range []string{"sim range", "kernel range", "173.67", "0.00–377.00", "126.00", "0.00–293.00", "-27.4%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	c.Seeds, c.Rows = c.Seeds[:1], c.Rows[:1]
	b.Reset()
	printComparison(&b, c)
	if out := b.String(); strings.Contains(out, "range") || !strings.Contains(out, "144.00") {
		t.Errorf("one seed: table has range columns or lacks the value:\n%s", out)
	}
}

// The header gives the relay's lateness of the worst kernel run among the
// seeds, not the last seed's.
func TestPrintComparisonLateness(t *testing.T) {
	ms := int64(sim.Millisecond)
	p99s := []int64{4 * ms, ms / 5}
	c := &emulate.Comparison{Scenario: "p-rtr-p", Seeds: []uint64{1, 2}, Emulated: []emulate.Summary{
		{Lateness: emulate.Lateness{P99Ps: &p99s[0], MaxPs: 9 * ms}},
		{Lateness: emulate.Lateness{P99Ps: &p99s[1], MaxPs: 2 * ms}},
	}}
	var b strings.Builder
	printComparison(&b, c)
	if want := "(relay lateness p99 4.000ms, max 9.000ms, the worst of 2 seeds)"; !strings.Contains(b.String(), want) {
		t.Errorf("header lacks %q:\n%s", want, b.String())
	}
}

// What compare keeps of one seed: with --report, its page, the
// simulator's panels with the other run's series dashed in them, the
// seed's rows as a table and its notes (a page per seed when there are
// several); with --trace, each run's .run.json beside its tables, as `run
// --trace` writes it. The kernel's side is stood in for by a second
// simulated run (BBR where the first runs CUBIC), which needs no root.
func TestCompareSeedFiles(t *testing.T) {
	run := func(sets ...string) (*engine.Run, engine.Summary, []byte) {
		raw, err := config.Builtin("p-rtr-p")
		if err != nil {
			t.Fatal(err)
		}
		prep, err := engine.Prepare(raw, append([]string{"runtime.duration=1s", "trace.detail=sampled", "trace.interval=1ms"}, sets...))
		if err != nil {
			t.Fatal(err)
		}
		r, err := engine.New(prep.Scenario, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.RunToEnd()
		return r, r.Summary(prep.Hash), prep.Canonical
	}
	sr, ss, canon := run()
	kr, ks, _ := run("flows.f0.cc=bbr")
	g, k := 93.5, 91.0
	diff := (k - g) / g
	s := emulate.SeedRuns{Seed: 1, Config: canon, Sim: sr.Trace, Kernel: kr.Trace, SimSummary: &ss, KernelSummary: &ks,
		KernelRelease: "6.18-test", Notes: []string{"seed 1: a note"},
		Rows: []emulate.CompareRow{{Seed: 1, Flow: "f0", Metric: "goodput", Unit: "Mbps", Sim: &g, Kernel: &k, RelDiff: &diff}}}
	dir := t.TempDir()
	if err := (seedFiles{traceDir: dir, report: filepath.Join(dir, "c.html"), several: true}).write(s); err != nil {
		t.Fatal(err)
	}
	for side, want := range map[string]*engine.Summary{"sim": &ss, "kernel": &ks} {
		raw, err := os.ReadFile(filepath.Join(dir, side+"-seed1.run.json"))
		var info report.RunInfo
		if err == nil {
			err = json.Unmarshal(raw, &info)
		}
		if err != nil || info.Summary.Digest != want.Digest || info.Summary.Scenario != "p-rtr-p" || info.Detail != "sampled" || info.Config != string(canon) {
			t.Errorf("%s-seed1.run.json: %v; digest %q, scenario %q, detail %q; want the run's", side, err, info.Summary.Digest, info.Summary.Scenario, info.Detail)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "c-seed1.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{"The simulator beside Linux 6.18-test, seed 1", "<td>goodput</td><td>Mbps</td><td>93.50</td><td>91.00</td><td>-2.7%</td>",
		"Note: seed 1: a note", `"label":"srtt · sim"`, `"label":"srtt · kernel"`, `"dash":1`, "Summary of sim", ss.Digest} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// `emulate --trace` writes the run's .run.json beside its tables, as `run
// --trace` does, so that `ccscope report` draws the kernel run's page with
// its summary and scenario.
func TestEmulateTraceRunInfo(t *testing.T) {
	if err := emulate.Available(); err != nil {
		t.Skipf("EMULATION TEST NOT RUN: %v", err)
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "k.parquet")
	if code, _, stderr := ccscope(t, "emulate", "p-rtr-p", "--duration", "1s", "--trace", tr); code != 0 {
		t.Fatalf("emulate --trace: exit %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "k.run.json"))
	var info report.RunInfo
	if err == nil {
		err = json.Unmarshal(raw, &info)
	}
	// p-rtr-p records a summary only; --trace raises it to every change, as for run.
	if err != nil || info.Summary.Scenario != "p-rtr-p" || info.Detail != "change" || len(info.Summary.Flows) != 1 || info.Config == "" {
		t.Fatalf("k.run.json: %v; scenario %q, detail %q, %d flows", err, info.Summary.Scenario, info.Detail, len(info.Summary.Flows))
	}
	page := filepath.Join(dir, "k.html")
	if code, _, stderr := ccscope(t, "report", tr, "-o", page); code != 0 {
		t.Fatalf("report: exit %d, %s", code, stderr)
	}
	if raw, err := os.ReadFile(page); err != nil || !strings.Contains(string(raw), "<h2>Summary</h2>") || strings.Contains(string(raw), "no run summary") {
		t.Errorf("the kernel run's page has no summary (%v)", err)
	}
}
