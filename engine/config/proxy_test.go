package config

import (
	"reflect"
	"strings"
	"testing"
)

// Per-leg CC and TCP options survive the canonical form; a flow without
// legs keeps its hash (no "legs" key is written).
func TestProxyLegs(t *testing.T) {
	raw, err := Builtin("p-we-p")
	if err != nil {
		t.Fatal(err)
	}
	plain := mustParse(t, raw)
	if strings.Contains(string(plain.Canonical()), `"legs":`) {
		t.Error("canonical form of a flow without legs writes legs")
	}
	raw2, err := Apply(raw, []string{`flows.f0.legs=[{"cc":"bbr"},{"tcp":{"init_cwnd":32}}]`})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, raw2)
	l := s.Flows[0].Legs
	if l[0].CC != "bbr" || l[0].TCP != s.Flows[0].TCP || l[1].CC != "cubic" || l[1].TCP.InitCwnd != 32 {
		t.Errorf("legs = %+v", l)
	}
	if back := mustParse(t, s.Canonical()); !reflect.DeepEqual(back, s) {
		t.Error("Parse(Canonical()) differs")
	}
	for _, c := range []struct{ set, path string }{
		{`flows.f0.legs=[{"cc":"bbr"}]`, "flows[f0].legs"},
		{`flows.f0.legs=[{"cc":"pump"},{}]`, "flows[f0].legs[0].cc"},
		{`nodes.r1.buffer=1MB`, "nodes[r1].buffer"},
		{`nodes.pep.buffer=0`, "nodes[pep].buffer"},
	} {
		bad, err := Apply(raw, []string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), c.path+":") {
			t.Errorf("--set %s: error = %v, want one at %s", c.set, err, c.path)
		}
	}
}
