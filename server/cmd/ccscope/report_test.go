package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A split flow's legs (p-we-p's f0.0 and f0.1) are the run's flows: the
// page of `run --report` names each with its CC and path, as `ccscope
// report` does from the same run's trace files, and does not say the
// scenario's flow f0 has no rows.
func TestRunReportSplitFlowLegs(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := ccscope(t, "run", "p-we-p", "--duration", "200ms", "--report", page); code != 0 {
		t.Fatalf("run --report: exit %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	for _, want := range []string{`"title":"flow f0.0 · cubic","subtitle":"path: bottleneck `, `"title":"flow f0.1 · cubic","subtitle":"path: bottleneck `} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks the leg heading %q", want)
		}
	}
	if strings.Contains(html, "has no trace rows") {
		t.Error("the page says a flow has no trace rows")
	}
}

// A trace under the name of an earlier one replaces it whole: the tables
// that --trace-select leaves out are removed, and said to be, so that
// `ccscope report` draws one run, and says which tables it lacks, rather
// than the earlier run's queue beside this run's flows.
func TestTraceReplacesEarlierTrace(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "r.parquet")
	if code, _, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "200ms", "--trace", tr); code != 0 {
		t.Fatalf("run --trace: exit %d, %s", code, stderr)
	}
	code, _, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "200ms", "--set", "flows.f0.cc=bbr", "--trace", tr, "--trace-select", "flows")
	if code != 0 || !strings.Contains(stderr, "ccscope: removed "+filepath.Join(dir, "r.queue.parquet")) {
		t.Fatalf("run --trace-select flows over an earlier trace: exit %d, %s; want a note of the tables removed", code, stderr)
	}
	left, err := filepath.Glob(filepath.Join(dir, "r.*"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "r.flows.parquet"), filepath.Join(dir, "r.run.json")}
	if !slices.Equal(left, want) {
		t.Errorf("files after the second trace %q, want %q", left, want)
	}
	code, _, stderr = ccscope(t, "report", tr, "-o", filepath.Join(dir, "r.html"))
	if code != 0 {
		t.Fatalf("report: exit %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "r.html"))
	if err != nil {
		t.Fatal(err)
	}
	if html := string(raw); strings.Contains(html, "bic_target") || !strings.Contains(html, "no queue table") {
		t.Error("the report draws CUBIC's signals of the earlier run, or does not say it lacks the queue table")
	}
}

// `report A --beside B` draws two runs' traces on one page, named after
// their files or --labels, B dashed; its flags refuse what they cannot
// take, naming the flag.
func TestReportBeside(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "cubic.parquet"), filepath.Join(dir, "bbr.parquet")
	for _, run := range [][]string{
		{"run", "p-rtr-p", "--duration", "300ms", "--trace", a},
		{"run", "p-rtr-p", "--duration", "300ms", "--set", "flows.f0.cc=bbr", "--trace", b},
	} {
		if code, _, stderr := ccscope(t, run...); code != 0 {
			t.Fatalf("%v: exit %d, %s", run, code, stderr)
		}
	}
	if code, _, stderr := ccscope(t, "report", a, "--beside", b); code != 0 {
		t.Fatalf("report --beside: exit %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "cubic-vs-bbr.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"label":"srtt · cubic"`, `"label":"srtt · bbr"`, `"dash":1`, "dashed ones bbr"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A third run, in a dash pattern of its own; the default name lists all.
	c := filepath.Join(dir, "reno.parquet")
	if code, _, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "300ms", "--set", "flows.f0.cc=reno", "--trace", c); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	if code, _, stderr := ccscope(t, "report", a, "--beside", b, "--beside", c); code != 0 {
		t.Fatalf("report --beside --beside: exit %d, %s", code, stderr)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "cubic-vs-bbr-vs-reno.html")); err != nil || !strings.Contains(string(raw), `"label":"srtt · reno"`) ||
		!strings.Contains(string(raw), `"dash":2`) {
		t.Errorf("three runs: the page lacks reno's srtt in the second dash pattern (%v)", err)
	}
	// Runs of one name in two directories are told apart by their paths.
	if err := os.MkdirAll(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other", "cubic.parquet")
	if code, _, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "300ms", "--set", "flows.f0.cc=reno", "--trace", other); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	same := filepath.Join(dir, "same.html")
	if code, _, stderr := ccscope(t, "report", a, "--beside", other, "-o", same); code != 0 {
		t.Fatalf("report --beside of two cubic.parquet: exit %d, %s", code, stderr)
	}
	if raw, err := os.ReadFile(same); err != nil || !strings.Contains(string(raw), `"label":"srtt · `+filepath.Join(dir, "other", "cubic")+`"`) {
		t.Errorf("two runs named cubic: the page does not name the second by its path (%v)", err)
	}
	page := filepath.Join(dir, "named.html")
	if code, _, stderr := ccscope(t, "report", a, "--beside", b, "--labels", "A,B", "-o", page); code != 0 {
		t.Fatalf("report --beside --labels: exit %d, %s", code, stderr)
	}
	if raw, err := os.ReadFile(page); err != nil || !strings.Contains(string(raw), `"label":"srtt · B"`) {
		t.Errorf("--labels A,B: the page lacks srtt · B (%v)", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", a, "--flows", "f9"}, `report: flows: the run has no flow "f9"`},
		{[]string{"run", "p-rtr-p", "--duration", "100ms", "--report", filepath.Join(dir, "r.html"), "--report-flows", "f9"}, `--report-flows: report: flows: the run has no flow "f9"`},
		{[]string{"run", "p-rtr-p", "--duration", "100ms", "--report-flows", "f0"}, `--report-flows "f0": only with --report`},
		{[]string{"report", a, "--flows", "f0,"}, `--flows "f0,": an empty flow name`},
		{[]string{"report", a, "--labels", "A,B"}, `--labels "A,B": only with --beside`},
		{[]string{"report", a, "--beside", b, "--labels", "A"}, `--labels "A": want 2 names`},
		{[]string{"report", a, "--beside", b, "--beside", c, "--labels", "A,B"}, `--labels "A,B": want 3 names`},
		{[]string{"report", a, "--beside", b, "--labels", "A,A"}, "different, non-empty labels"},
		{[]string{"report", a, "--beside", filepath.Join(dir, "none")}, "no trace files"},
		{[]string{"compare", "pump", "--report", filepath.Join(dir, "c.txt")}, `--report "` + filepath.Join(dir, "c.txt") + `": the file name must end in .html`},
	} {
		if code, _, stderr := ccscope(t, tc.args...); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("ccscope %v: exit %d, %q; want an error with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// run --report-flows draws the panels of the flows it names, a split
// flow's id both its legs; report --flows does the same from files.
func TestRunReportFlows(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	read := func() string {
		t.Helper()
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	if code, _, stderr := ccscope(t, "run", "dumbbell-n", "--set", "flows.bulk.count=40", "--duration", "50ms", "--report", page, "--report-flows", "bulk/39"); code != 0 {
		t.Fatalf("run --report-flows: exit %d, %s", code, stderr)
	}
	if html := read(); !strings.Contains(html, `"title":"flow bulk/39 · cubic"`) || strings.Contains(html, `"title":"flow bulk/0 · cubic"`) {
		t.Error("the page does not draw bulk/39 alone of the flows")
	}

	tr := filepath.Join(dir, "pwep.parquet")
	if code, _, stderr := ccscope(t, "run", "p-we-p", "--duration", "50ms", "--trace", tr, "--report", page, "--report-flows", "f0"); code != 0 {
		t.Fatalf("run p-we-p --report-flows f0: exit %d, %s", code, stderr)
	}
	if html := read(); !strings.Contains(html, `"title":"flow f0.0 · cubic"`) || !strings.Contains(html, `"title":"flow f0.1 · cubic"`) {
		t.Error("--report-flows f0 on p-we-p: the page does not draw both legs")
	}
	if code, _, stderr := ccscope(t, "report", tr, "-o", page, "--flows", "f0.1"); code != 0 {
		t.Fatalf("report --flows f0.1: exit %d, %s", code, stderr)
	}
	if html := read(); strings.Contains(html, `"title":"flow f0.0 · cubic"`) || !strings.Contains(html, `"title":"flow f0.1 · cubic"`) {
		t.Error("report --flows f0.1: the page does not draw leg f0.1 alone")
	}
}
