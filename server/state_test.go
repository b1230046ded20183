package server

import (
	"context"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// testState opens a built-in scenario with overrides.
func testState(t testing.TB, name string, sets ...string) *state {
	t.Helper()
	raw, err := config.Builtin(name)
	if err != nil {
		t.Fatalf("Builtin(%q): %v", name, err)
	}
	set := make([]any, len(sets))
	for i, s := range sets {
		set[i] = s
	}
	canon, _, e := buildScenario(raw, nil, set, nil)
	if e != nil {
		t.Fatalf("buildScenario: %v", e)
	}
	s, e := newState(canon, Limits{})
	if e != nil {
		t.Fatalf("newState: %v", e)
	}
	return s
}

// straight runs a fresh state to the end in one RunUntil: the reference
// every stepped or replayed run must match.
func straight(t testing.TB, name string, sets ...string) *state {
	s := testState(t, name, sets...)
	s.run.RunUntil(s.run.Horizon())
	return s
}

// Stepping by time in small steps dispatches exactly the events of one
// RunUntil to the end (engine/sim: RunUntil(a); RunUntil(b) = RunUntil(b)),
// so the digests agree.
func TestStepByTimeMatchesStraightRun(t *testing.T) {
	want := straight(t, "pump", "runtime.duration=20s")
	s := testState(t, "pump", "runtime.duration=20s")
	for range 2000 {
		if _, err := s.runTo(context.Background(), s.run.Now().Add(10*sim.Millisecond), nil, nil); err != nil {
			t.Fatalf("runTo: %v", err)
		}
	}
	if got, w := s.digest(), want.digest(); got != w {
		t.Errorf("digest after 2000 steps of 10ms = %s, want %s (one run to 20s)", got, w)
	}
	if got, w := s.run.Sim.Events(), want.run.Sim.Events(); got != w {
		t.Errorf("events after 2000 steps = %d, want %d", got, w)
	}
}
