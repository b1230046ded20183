package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// runLeoPath runs the leo-path command and returns its exit status,
// standard output and standard error.
func runLeoPath(t *testing.T, args ...string) (code int, stdout, stderr []byte) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "err.txt"))
	if err != nil {
		t.Fatal(err)
	}
	savedOut, savedErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	code = leoPathMain(args)
	os.Stdout, os.Stderr = savedOut, savedErr
	outF.Close()
	errF.Close()
	if stdout, err = os.ReadFile(outF.Name()); err == nil {
		stderr, err = os.ReadFile(errF.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	return code, stdout, stderr
}

// leo-path on p-rtr-p for 60 s with a 100 ms outage and a 500 ms lead
// gives a scenario that parses, runs for 60 s and carries 2 changes at 0
// plus 2 at each of the reassignments at 12, 27, 42 and 57 s, both with
// the outage and the first announced.
func TestLeoPathScenario(t *testing.T) {
	code, out, _ := runLeoPath(t, "--scenario", "p-rtr-p", "--duration", "60s", "--outage", "100ms", "--announce", "500ms", "--seed", "4")
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

// --offset defaults to Starlink's 12 s only on Starlink's 15 s period: a
// 5 s period over 12.5 s reassigns at 5 and 10 s (the offset 0 at 0 s is the
// start), rather than refusing the default 12 s as outside the period.
func TestLeoPathOffsetFollowsPeriod(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"default", nil, []string{"0s", "12s"}},
		{"starlink period given", []string{"--period", "15s"}, []string{"0s", "12s"}},
		{"another period", []string{"--period", "5s"}, []string{"0s", "5s", "10s"}},
		{"offset given", []string{"--period", "5s", "--offset", "2s"}, []string{"0s", "2s", "7s", "12s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runLeoPath(t, append([]string{"--duration", "12.5s"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("leo-path %v exited %d: %s", tc.args, code, stderr)
			}
			var changes []struct{ At, Dir string }
			if err := json.Unmarshal(out, &changes); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				if c.Dir == "ab" {
					got = append(got, c.At)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("leo-path %v: intervals at %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

// A replayed trace takes --outage and --announce: the example to 60 s
// reassigns at 12, 27, 42 and 57 s, each with the outage on both
// directions and the lead on ab.
func TestLeoPathTrace(t *testing.T) {
	code, out, stderr := runLeoPath(t, "--duration", "60s", "--trace", "example", "--outage", "100ms", "--announce", "1s")
	if code != 0 {
		t.Fatalf("leo-path exited %d: %s", code, stderr)
	}
	var changes []struct{ At, Dir, Outage, Announce string }
	if err := json.Unmarshal(out, &changes); err != nil {
		t.Fatal(err)
	}
	var at []string
	for _, c := range changes[2:] {
		if c.Outage != "100ms" || (c.Announce == "1s") != (c.Dir == "ab") {
			t.Errorf("change %+v, want outage 100ms, and the 1s lead on ab only", c)
		}
		if c.Dir == "ab" {
			at = append(at, c.At)
		}
	}
	if want := []string{"12s", "27s", "42s", "57s"}; len(changes) != 10 || !slices.Equal(at, want) {
		t.Errorf("%d changes, reassignments at %v; want 10, at %v", len(changes), at, want)
	}
}

// Each bad input exits 2 (usage) or 1 (the files) with a message naming
// the flag and the reason; a flag given as zero is refused, not read as
// "not given".
func TestLeoPathErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"no duration", []string{}, 2, "--duration: missing"},
		{"bad rtt range", []string{"--duration", "10s", "--rtt", "20ms"}, 2, `--rtt: "20ms" is not a range MIN-MAX`},
		{"outage past the period", []string{"--duration", "10s", "--outage", "20s"}, 2, "outage: 20s is outside [0, period 15s)"},
		{"missing trace", []string{"--duration", "10s", "--trace", "/nonexistent.csv"}, 1, "reading trace"},
		{"unknown link", []string{"--scenario", "p-rtr-p", "--link", "nope"}, 1, "nope"},
		{"zero rtt", []string{"--duration", "10s", "--rtt", "0ms-0ms"}, 2, "rtt: range 0s–0s must be positive and ordered"},
		{"zero rate", []string{"--duration", "10s", "--rate", "0bps-0bps"}, 2, "rate: range 0bps–0bps must be positive and ordered"},
		{"zero period", []string{"--duration", "10s", "--period", "0s"}, 2, "period: 0s is not positive"},
		{"too many intervals", []string{"--duration", "1s", "--period", "10us"}, 2, "period: 10us over a duration of 1s makes 100000 intervals, more than the 10000 a path may have; lengthen the period or shorten the duration"},
		{"rtt beside a trace", []string{"--duration", "10s", "--trace", "example", "--rtt", "1ms-2ms"}, 2, "--rtt: not used with --trace: the trace's rtt_ms column"},
		{"rate beside a trace", []string{"--duration", "10s", "--trace", "example", "--rate", "1Mbps-2Mbps"}, 2, "--rate: not used with --trace"},
		{"seed beside a trace", []string{"--duration", "10s", "--trace", "example", "--seed", "9"}, 2, "--seed: not used with --trace: a replay draws nothing"},
		{"loss beside a trace", []string{"--duration", "10s", "--trace", "example", "--loss", "0.1"}, 2, "--loss: not used with --trace"},
		{"period beside a trace", []string{"--duration", "10s", "--trace", "example", "--period", "5s", "--offset", "0s"}, 2, "--offset: not used with --trace: the trace's time_s column places the reassignments\n--period: not used"},
		{"trace outage past an interval", []string{"--duration", "60s", "--trace", "example", "--outage", "15s"}, 2, "outage: 15s is not shorter than the trace's interval at 12s (15s long)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runLeoPath(t, tc.args...)
			if code != tc.want || !strings.Contains(string(stderr), tc.msg) {
				t.Errorf("leo-path %v exited %d, said %q; want %d and %q", tc.args, code, stderr, tc.want, tc.msg)
			}
		})
	}
}
