package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
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
