package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from this engine (commit an update only if you can explain it)")

// goldenDir holds one <name>.digest (the run digest) and one
// <name>.summary.json (the run's Summary without wall_s) per golden run.
const goldenDir = "testdata/golden"

// goldenRun is one pinned run: a built-in scenario with overrides.
type goldenRun struct {
	name     string
	scenario string
	sets     []string
}

// shortened caps built-ins whose full run would take most of the test's
// time budget (dumbbell-1g: ~26 M events, ~3 s of one core for its 60 s).
var shortened = map[string]string{"dumbbell-1g": "10s"}

// goldenRuns lists every built-in scenario (at its own duration unless
// shortened) and every algorithm on p-rtr-p for 5 s, so a behaviour change
// anywhere shows up as a changed digest with a readable summary diff.
// New built-ins and algorithms join automatically; their golden files are
// created by -update.
func goldenRuns() []goldenRun {
	var runs []goldenRun
	for _, b := range config.Builtins() {
		g := goldenRun{name: b.Name, scenario: b.Name}
		if d, ok := shortened[b.Name]; ok {
			g.sets = []string{"runtime.duration=" + d}
		}
		runs = append(runs, g)
	}
	for _, name := range append(cc.Names(), "pump") {
		g := goldenRun{name: "p-rtr-p-" + name, scenario: "p-rtr-p",
			sets: []string{"flows.f0.cc=" + name, "runtime.duration=5s"}}
		if name == "pump" {
			// The bottleneck's rate: the queue holds what the access link's
			// bursts leave, without the pump scenario's steady overload.
			g.sets = append(g.sets, "flows.f0.rate=100Mbps")
		}
		runs = append(runs, g)
	}
	// The kernel clock at zero when the run begins, as every run had it
	// until 2026-12-07: these keep the digests their runs had then.
	for _, name := range []string{"cubic", "bbr", "westwood"} {
		runs = append(runs, goldenRun{name: "p-rtr-p-" + name + "-aligned-clock", scenario: "p-rtr-p",
			sets: []string{"flows.f0.cc=" + name, "runtime.duration=5s", "runtime.kernel_clock=aligned"}})
	}
	// A window of some 80,000 packets under loss: BBR at 10 Gbps over
	// 100 ms. RACK's walk and the receiver's out-of-order queue meet
	// thousands of holes on every ACK; pinned from the full walk the kernel
	// does (tcp_rack_detect_loss), which took 8.6 CPU-s for this run.
	runs = append(runs, goldenRun{name: "dumbbell-10g-bbr-loss", scenario: "dumbbell-1g", sets: []string{
		"runtime.duration=3s", "flows.f0.cc=bbr", "links.bottleneck.rate=10Gbps", "links.bottleneck.delay=48ms",
		`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.001}`,
		`flows.f0.tcp={"sndbuf":"unlimited","rcvbuf_max":"1GiB"}`}})
	return runs
}

// goldenSummary is a Summary without wall_s, which differs between runs:
// the shadowing field hides the embedded one and is always omitted.
type goldenSummary struct {
	Summary
	WallS *struct{} `json:"wall_s,omitempty"`
}

// runGolden runs g to its end and returns its digest and summary JSON.
func runGolden(t *testing.T, g goldenRun) (digest string, summary []byte) {
	t.Helper()
	raw, err := config.Builtin(g.scenario)
	if err != nil {
		t.Fatalf("Builtin(%q): %v", g.scenario, err)
	}
	prep, err := Prepare(raw, g.sets)
	if err != nil {
		t.Fatalf("Prepare(%s, %q): %v", g.scenario, g.sets, err)
	}
	r, err := New(prep.Scenario, nil)
	if err != nil {
		t.Fatalf("New(%s): %v", g.name, err)
	}
	r.RunToEnd()
	sum := r.Summary(prep.Hash)
	js, err := json.MarshalIndent(goldenSummary{Summary: sum}, "", "  ")
	if err != nil {
		t.Fatalf("marshal summary: %v", err)
	}
	return sum.Digest, append(js, '\n')
}

// Each golden run gives the digest pinned in testdata/golden. The digest
// folds every dispatched event (time, target, kind, argument), so equal
// digests mean the same run event for event; a pure refactoring or speed-up
// must leave every digest alone. When one differs the test shows how the
// summaries differ, which is what an -update must be able to explain.
func TestGolden(t *testing.T) {
	t.Parallel() // with the liveness sweep, after the serial tests
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range goldenRuns() {
		t.Run(g.name, func(t *testing.T) {
			// Each run is its own engine (no package state), so the runs
			// share the cores; each still writes only its own files.
			t.Parallel()
			digest, summary := runGolden(t, g)
			dpath := filepath.Join(goldenDir, g.name+".digest")
			spath := filepath.Join(goldenDir, g.name+".summary.json")
			if *update {
				writeGolden(t, dpath, []byte(digest+"\n"))
				writeGolden(t, spath, summary)
				return
			}
			want, err := os.ReadFile(dpath)
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no golden digest %s; create it with go test ./engine -run Golden -update", dpath)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := digest; got != strings.TrimSpace(string(want)) {
				wantSum, err := os.ReadFile(spath)
				if err != nil {
					t.Fatal(err)
				}
				diff := summaryDiff(t, wantSum, summary)
				t.Errorf("digest = %s, want %s; summary diff (-golden +now):\n%s\nrerun with -update if the change is intended and explained",
					got, strings.TrimSpace(string(want)), diff)
			}
		})
	}
}

// summaryDiff is a line diff of two summary files, apart from their digest
// lines, which differ whenever the test calls it.
func summaryDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	blank := func(js []byte) string {
		var s goldenSummary
		if err := json.Unmarshal(js, &s); err != nil {
			t.Fatalf("golden summary: %v", err)
		}
		s.Digest = ""
		out, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if diff := cmp.Diff(blank(want), blank(got)); diff != "" {
		return diff
	}
	return "(summaries equal: the runs differ only in event order or timing)"
}

func writeGolden(t *testing.T, path string, data []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("updated %s", path)
}

// A TCP run with random loss (1 %) and BBR (which draws its random
// ProbeBW phase from the flow's stream) gives the same digest on every
// run and under GOMAXPROCS 1 and 2; another seed gives another digest.
func TestGoldenDeterminismTCP(t *testing.T) {
	g := goldenRun{name: "rebbr-bbr-lossy", scenario: "rebbr", sets: []string{"flows.f0.cc=bbr",
		"links.bottleneck.ab.loss.p=0.01", "runtime.duration=5s", "runtime.seed=7"}}
	first, _ := runGolden(t, g)
	for i := 0; i < 3; i++ {
		if d, _ := runGolden(t, g); d != first {
			t.Fatalf("run %d digest %s, want %s", i, d, first)
		}
	}
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		d, _ := runGolden(t, g)
		runtime.GOMAXPROCS(old)
		if d != first {
			t.Errorf("GOMAXPROCS=%d digest %s, want %s", procs, d, first)
		}
	}
	g.sets[len(g.sets)-1] = "runtime.seed=8"
	if d, _ := runGolden(t, g); d == first {
		t.Errorf("seed 8 gave the digest of seed 7 (%s)", d)
	}
}
