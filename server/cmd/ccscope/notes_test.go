package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/server/emulate"
)

// An override that replaces an object and drops some of its fields is
// noted on standard error, apart from --json output, and in a comparison's
// table: the wifi built-in's tcp object holds gro_interval, which
// flows.f0.tcp={"hz":250} drops and flows.f0.tcp.hz=250 keeps.
func TestOverrideNotes(t *testing.T) {
	want := `ccscope: note: set flows.f0.tcp replaces the whole object and drops its "gro_interval"; to change one field, set flows.f0.tcp.FIELD alone`
	for _, c := range []struct {
		set  string
		note bool
	}{{`flows.f0.tcp={"hz":250}`, true}, {"flows.f0.tcp.hz=250", false}} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{"run", "wifi", "--duration", "100ms", "--set", c.set, "--json"}, "\x1f"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run --set %s: %v\n%s", c.set, err, stderr.String())
		}
		var sum map[string]any
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Errorf("run --set %s: stdout is not the summary's JSON: %v", c.set, err)
		}
		if got := strings.TrimSpace(stderr.String()); (got == want) != c.note || (!c.note && got != "") {
			t.Errorf("run --set %s: stderr %q, want note %v", c.set, got, c.note)
		}
	}
	var b strings.Builder
	printComparison(&b, &emulate.Comparison{Scenario: "wifi", Seeds: []uint64{1}, Notes: []string{"set flows.f0.tcp replaces"}})
	if !strings.Contains(b.String(), "note: set flows.f0.tcp replaces") {
		t.Errorf("comparison table lacks the override's note:\n%s", b.String())
	}
}

// A negative --retries is refused, by name, before anything runs.
func TestCompareRefusesNegativeRetries(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{"compare", "p-rtr-p", "--retries", "-1"}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "--retries -1: want 0 or more") {
		t.Errorf("compare --retries -1: %v, stderr %q; want a failure naming --retries", err, stderr.String())
	}
}

// --seed and --duration win over a --set of the same field, written alone
// or in its object, and say so; run prints the note, and sweep also notes
// the spec's own set and seeds that its flags override.
func TestFlagOverrideNotes(t *testing.T) {
	for _, tc := range []struct {
		earlier []string
		want    []string
	}{
		{[]string{"runtime.duration=2s"}, []string{"--duration 1s overrides --set runtime.duration=2s"}},
		{[]string{`runtime={"duration":"2s"}`}, []string{`--duration 1s overrides --set runtime={"duration":"2s"}`}},
		{[]string{`runtime={"seed":2}`, "runtime.durations=2s", "flows.f0.cc=bbr"}, nil},
	} {
		if got := overrideNotes("--duration", "runtime.duration", "1s", "--set", tc.earlier); !slices.Equal(got, tc.want) {
			t.Errorf("overrideNotes(--duration 1s, %q) = %q, want %q", tc.earlier, got, tc.want)
		}
	}
	code, stdout, stderr := ccscope(t, "run", "pump", "--duration", "10ms", "--set", "runtime.duration=20ms", "--seed", "3", "--set", "runtime.seed=5")
	if code != 0 || !strings.Contains(stdout, "seed 3  kernel clock ") || !strings.Contains(stdout, "  sim 10ms  ") ||
		stderr != "ccscope: note: --seed 3 overrides --set runtime.seed=5\nccscope: note: --duration 10ms overrides --set runtime.duration=20ms\n" {
		t.Errorf("run --duration 10ms --set runtime.duration=20ms --seed 3 --set runtime.seed=5: exit %d, %s%s", code, stdout, stderr)
	}
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{"scenario": "pump", "set": {"runtime.duration": "20ms"}, "seeds": [1, 2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, stderr = ccscope(t, "sweep", spec, "--duration", "10ms", "--seeds", "3", "-o", filepath.Join(t.TempDir(), "c.parquet"))
	for _, want := range []string{`--duration 10ms overrides the spec's set runtime.duration="20ms"`, "--seeds 3 overrides the spec's seeds"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("sweep with --duration and --seeds over the spec's: stderr %q lacks %q", stderr, want)
		}
	}
}
