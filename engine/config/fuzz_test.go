package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds arbitrary bytes to Parse, seeded with the built-ins. Parse
// must never panic, and whatever it accepts must survive the canonical round
// trip unchanged.
func FuzzParse(f *testing.F) {
	for _, b := range Builtins() {
		raw, _ := Builtin(b.Name)
		f.Add(raw)
	}
	f.Add([]byte(baseJSON))
	f.Add([]byte(sameRun))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw, WithCCs(designCCs))
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("Parse error %v is %T, want *Errors", err, err)
			}
			return
		}
		back, err := Parse(s.Canonical(), WithCCs(designCCs))
		if err != nil {
			t.Fatalf("Parse(Canonical) error: %v\ncanonical: %s", err, s.Canonical())
		}
		if d := cmp.Diff(s, back); d != "" {
			t.Fatalf("Parse(Canonical) mismatch (-first +round trip):\n%s", d)
		}
	})
}

// FuzzApply feeds arbitrary --set overrides to Apply on a valid scenario,
// which reaches valid scenarios far more often than byte mutation does. Apply
// must never panic nor emit invalid JSON, and what then parses must survive
// the canonical round trip.
func FuzzApply(f *testing.F) {
	for _, s := range []string{"runtime.seed=7", "links.bottleneck.ab.qdisc.limit=2BDP", "flows.f0.tcp={}", "changes.0.at=1s", "a.b.c=", "links.x=", "links.access.ab.loss.p=0.5", "flows.f0.app.on=1.5s", "links.bottleneck.ab.jitter.sigma=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		out, err := Apply([]byte(baseJSON), []string{set})
		if err != nil {
			return
		}
		if _, err := decodeTree(out); err != nil {
			t.Fatalf("Apply(%q) produced invalid JSON %s: %v", set, out, err)
		}
		s, err := Parse(out)
		if err != nil {
			return
		}
		if d := cmp.Diff(s, mustParse(t, s.Canonical())); d != "" {
			t.Fatalf("Parse(Canonical) after Apply(%q) mismatch (-first +round trip):\n%s", set, d)
		}
	})
}
