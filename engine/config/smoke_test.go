package config

import "testing"

func TestSmoke(t *testing.T) {
	for _, b := range Builtins() {
		raw, err := Builtin(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		t.Logf("%s %s", b.Name, s.Canonical())
	}
}
