package main

import (
	"fmt"
	"os"
	"path/filepath"
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
