package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Seeds given twice are refused, naming the seed; points that are one
// run without any axis (a value given twice) are counted as shared with
// another point, not with another axis.
func TestSweepRepeats(t *testing.T) {
	catalog := filepath.Join(t.TempDir(), "c.parquet")
	code, _, stderr := ccscope(t, "sweep", "pump", "--duration", "10ms", "--seeds", "1,1,1", "-o", catalog)
	if code == 0 || !strings.Contains(stderr, `--seeds: "1,1,1": seed 1 repeats`) {
		t.Errorf("sweep --seeds 1,1,1: exit %d, stderr %q; want a failure saying seed 1 repeats", code, stderr)
	}
	code, _, stderr = ccscope(t, "sweep", "pump", "--duration", "10ms", "--grid", "links.bottleneck.delay=19ms,0.019s", "-o", catalog)
	if code != 0 || !strings.Contains(stderr, "1 runs (0 already in the catalog, 1 shared with another point)") {
		t.Errorf("sweep of two equal delays: exit %d, stderr %q; want 1 run and 1 shared with another point", code, stderr)
	}
}

// sweep names every invalid point, each once whatever its seeds, and
// writes no catalog; a bad scenario with nothing swept says so.
func TestSweepInvalidPoints(t *testing.T) {
	catalog := filepath.Join(t.TempDir(), "c.parquet")
	code, _, stderr := ccscope(t, "sweep", "p-rtr-p", "--duration", "100ms", "--grid", "flows.f0.cc=cubic,nope1,bbr,nope2", "--seeds", "1-3", "-o", catalog)
	if code != 1 || strings.Count(stderr, "ccscope: sweep point") != 2 || !strings.Contains(stderr, "sweep point flows.f0.cc=nope1:\n") ||
		!strings.Contains(stderr, "sweep point flows.f0.cc=nope2:\n") || !strings.Contains(stderr, `unknown congestion control "nope2"`) {
		t.Errorf("sweep with two bad cc values: exit %d, stderr:\n%s\nwant both named, once each", code, stderr)
	}
	if _, err := os.Stat(catalog); err == nil {
		t.Errorf("sweep with invalid points wrote %s", catalog)
	}
	code, _, stderr = ccscope(t, "sweep", "pump", "--set", "runtime.duration=0s", "-o", catalog)
	if code != 1 || !strings.Contains(stderr, "ccscope: sweep point (no swept parameters):\n") {
		t.Errorf("sweep of an invalid scenario: exit %d, stderr %q; want it named as the point with no swept parameters", code, stderr)
	}
}

// A spec file without its scenario says so, whether empty or with other
// spec keys, where it was read as a scenario with every field missing.
func TestSweepSpecWithoutScenario(t *testing.T) {
	dir := t.TempDir()
	for i, js := range []string{`{}`, `{"grid": {"flows.f0.cc": ["bbr"]}}`} {
		spec := filepath.Join(dir, fmt.Sprintf("spec%d.json", i))
		if err := os.WriteFile(spec, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := ccscope(t, "sweep", spec, "-o", filepath.Join(dir, "c.parquet"))
		if code != 1 || !strings.Contains(stderr, "sweep spec: scenario: missing") || strings.Contains(stderr, "nodes") {
			t.Errorf("sweep %s: exit %d, stderr %q; want the missing scenario named", js, code, stderr)
		}
	}
}

// --dry-run prints each point as a JSON line and runs nothing: two equal
// delays are one run (the second shares it), and what a sweep has run is
// reported as in the catalog.
func TestSweepDryRun(t *testing.T) {
	catalog := filepath.Join(t.TempDir(), "c.parquet")
	args := []string{"sweep", "pump", "--duration", "10ms", "--grid", "links.bottleneck.delay=19ms,0.019s,5ms", "-o", catalog}
	code, stdout, stderr := ccscope(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(stderr, "3 points: 2 to run, 1 sharing another point's run, 0 already in") {
		t.Fatalf("sweep --dry-run: exit %d, stderr %q", code, stderr)
	}
	type line struct {
		Index      int                        `json:"index"`
		Params     map[string]json.RawMessage `json:"params"`
		Seed       *uint64                    `json:"seed"`
		Sets       []string                   `json:"sets"`
		ConfigHash string                     `json:"config_hash"`
		Status     string                     `json:"status"`
	}
	var lines []line
	for _, s := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("dry-run line %q: %v", s, err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 || lines[0].ConfigHash != lines[1].ConfigHash || lines[1].Status != "shared" || lines[2].Status != "run" ||
		string(lines[1].Params["links.bottleneck.delay"]) != `"0.019s"` || lines[0].Seed != nil ||
		!slices.Equal(lines[2].Sets, []string{`runtime.duration="10ms"`, `links.bottleneck.delay="5ms"`}) {
		t.Errorf("dry-run lines %+v", lines)
	}
	if _, err := os.Stat(catalog); err == nil {
		t.Errorf("sweep --dry-run wrote %s", catalog)
	}
	if code, _, stderr := ccscope(t, args...); code != 0 {
		t.Fatalf("sweep: exit %d, stderr %q", code, stderr)
	}
	// The scenario's own seed is 1, so seed 1 is what ran.
	code, _, stderr = ccscope(t, append(args, "--dry-run", "--seeds", "1")...)
	if code != 0 || !strings.Contains(stderr, "3 points: 0 to run, 0 sharing another point's run, 3 already in") {
		t.Errorf("sweep --dry-run with the scenario's seed: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = ccscope(t, append(args, "--dry-run", "--seeds", "2")...)
	if code != 0 || !strings.Contains(stderr, "3 points: 2 to run, 1 sharing another point's run, 0 already in") {
		t.Errorf("sweep --dry-run with a seed the catalog lacks: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = ccscope(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(stderr, "3 points: 0 to run, 0 sharing another point's run, 3 already in") {
		t.Errorf("sweep --dry-run after the sweep: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = ccscope(t, append(args, "--dry-run", "--report-dir", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, "--report-dir: --dry-run runs nothing and writes no files") {
		t.Errorf("sweep --dry-run --report-dir: exit %d, stderr %q", code, stderr)
	}
}
