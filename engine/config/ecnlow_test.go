package config

import (
	"bytes"
	"testing"
)

// TestECNLowOption checks flows.*.tcp.ecn_low: a bool defaulting to false
// (the google/bbr v3 route feature ecn_low is off unless a route sets it).
func TestECNLowOption(t *testing.T) {
	cases := []struct {
		name string
		v    any // nil: the key is absent
		want bool
	}{
		{"absent", nil, false},
		{"false", false, false},
		{"true", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := mutate(t, func(m map[string]any) {
				if tc.v != nil {
					at(m, "flows", "f0", "tcp")["ecn_low"] = tc.v
				}
			})
			s := mustParse(t, raw)
			if got := s.Flows[0].TCP.ECNLow; got != tc.want {
				t.Errorf("ECNLow(%v) = %v, want %v", tc.v, got, tc.want)
			}
		})
	}
	t.Run("not a bool", func(t *testing.T) {
		raw := mutate(t, func(m map[string]any) { at(m, "flows", "f0", "tcp")["ecn_low"] = "yes" })
		_, err := Parse(raw)
		w := want{"flows[f0].tcp.ecn_low", "must be true or false"}
		for _, fe := range fieldErrors(t, err) {
			if matches(fe, w) {
				return
			}
		}
		t.Errorf("Parse(ecn_low=\"yes\") = %v, want %s: %s", err, w.path, w.reason)
	})
}

// TestECNLowCanonical checks that ecn_low leaves the canonical form of every
// scenario without it untouched (so existing config hashes, such as those
// in proto/vectors, stay valid), while true is written and hashed.
func TestECNLowCanonical(t *testing.T) {
	base, err := Canonical([]byte(baseJSON))
	if err != nil {
		t.Fatalf("Canonical(base): %v", err)
	}
	canon := func(v bool) []byte {
		raw := mutate(t, func(m map[string]any) { at(m, "flows", "f0", "tcp")["ecn_low"] = v })
		c, err := Canonical(raw)
		if err != nil {
			t.Fatalf("Canonical(ecn_low=%v): %v", v, err)
		}
		return c
	}
	if off := canon(false); !bytes.Equal(off, base) {
		t.Errorf("Canonical(ecn_low=false) =\n%s\nwant the form without it\n%s", off, base)
	}
	if bytes.Contains(base, []byte("ecn_low")) {
		t.Errorf("Canonical(base) = %s, want no ecn_low key", base)
	}
	on := canon(true)
	if !bytes.Contains(on, []byte(`"ecn_low":true`)) {
		t.Errorf("Canonical(ecn_low=true) = %s, want \"ecn_low\":true", on)
	}
	s := mustParse(t, on)
	if !s.Flows[0].TCP.ECNLow {
		t.Errorf("Parse(Canonical(ecn_low=true)).ECNLow = false, want true")
	}
	if s.Hash() == mustParse(t, base).Hash() {
		t.Errorf("Hash(ecn_low=true) = %s, the hash without it", s.Hash())
	}
}
