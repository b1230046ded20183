package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// runLeoPath runs the leo-path command and returns its exit status and
// standard output.
func runLeoPath(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = f
	code := leoPathMain(args)
	os.Stdout = saved
	f.Close()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, out
}

// leo-path on p-rtr-p for 60 s with a 100 ms outage and a 500 ms lead
// gives a scenario that parses, runs for 60 s and carries 2 changes at 0
// plus 2 at each of the reassignments at 12, 27, 42 and 57 s, both with
// the outage and the first announced.
func TestLeoPathScenario(t *testing.T) {
	code, out := runLeoPath(t, "--scenario", "p-rtr-p", "--duration", "60s", "--outage", "100ms", "--announce", "500ms", "--seed", "4")
	if code != 0 {
		t.Fatalf("leo-path exited %d", code)
	}
	s, err := config.Parse(out)
	if err != nil {
		t.Fatalf("the emitted scenario does not parse: %v", err)
	}
	if s.Runtime.Duration.String() != "60s" || len(s.Changes) != 2+2*4 {
		t.Fatalf("duration %v, %d changes; want 60s and 10", s.Runtime.Duration, len(s.Changes))
	}
	announced, outages := 0, 0
	for _, c := range s.Changes {
		if c.Link != "bottleneck" {
			t.Errorf("change on %q, want bottleneck", c.Link)
		}
		if c.Announce != nil {
			announced++
		}
		if c.Outage != nil && *c.Outage == 100*sim.Millisecond {
			outages++
		}
	}
	if announced != 4 || outages != 8 {
		t.Errorf("%d announced changes and %d 100 ms outages, want 4 (one per reassignment) and 8 (both directions)", announced, outages)
	}
}

func TestLeoPathErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no duration", []string{}, 2},
		{"bad rtt range", []string{"--duration", "10s", "--rtt", "20ms"}, 2},
		{"outage past the period", []string{"--duration", "10s", "--outage", "20s"}, 2},
		{"missing trace", []string{"--duration", "10s", "--trace", "/nonexistent.csv"}, 1},
		{"unknown link", []string{"--scenario", "p-rtr-p", "--link", "nope"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _ := runLeoPath(t, tc.args...); code != tc.want {
				t.Errorf("leo-path %v exited %d, want %d", tc.args, code, tc.want)
			}
		})
	}
}
