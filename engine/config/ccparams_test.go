package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A flow's cc_params survive the canonical form as integers (true as 1),
// reach a group's flows and a proxy's legs of the same CC (a leg of
// another CC takes none), and --set reaches one parameter; a flow without
// them keeps its hash (no "cc_params" key is written). The checker Parse
// is given names each bad one at its path.
func TestCCParams(t *testing.T) {
	raw, err := Builtin("p-we-p")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mustParse(t, raw).Canonical()), `"cc_params"`) {
		t.Error("canonical form of a flow without cc_params writes them")
	}
	raw2, err := Apply(raw, []string{"flows.f0.cc_params.hystart=false", "flows.f0.cc_params.beta=512",
		`flows.f0.legs=[{"cc_params":{"beta":600}},{"cc":"bbr"}]`})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, raw2)
	f := s.Flows[0]
	if want := map[string]int64{"beta": 512, "hystart": 0}; !reflect.DeepEqual(f.CCParams, want) {
		t.Errorf("cc_params = %v, want %v", f.CCParams, want)
	}
	if l := f.Legs; !reflect.DeepEqual(l[0].CCParams, map[string]int64{"beta": 600}) || l[1].CC != "bbr" || l[1].CCParams != nil {
		t.Errorf("legs = %+v", l)
	}
	c := string(s.Canonical())
	if !strings.Contains(c, `"cc_params":{"beta":512,"hystart":0}`) {
		t.Errorf("canonical form lacks the flow's cc_params: %s", c)
	}
	if back := mustParse(t, s.Canonical()); !reflect.DeepEqual(back, s) {
		t.Error("Parse(Canonical()) differs")
	}

	check := WithCCParams(func(cc, name string, v int64) error {
		if cc != "cubic" || name != "beta" || v < 1 || v > 1023 {
			return errors.New("refused")
		}
		return nil
	})
	for _, c := range []struct{ set, path string }{
		{`flows.f0.cc_params.beta=1024`, "flows[f0].cc_params.beta"},
		{`flows.f0.cc_params.hystart=0`, "flows[f0].cc_params.hystart"},
		{`flows.f0.cc_params.beta=0.7`, "flows[f0].cc_params.beta"},
		{`flows.f0.cc_params="beta=512"`, "flows[f0].cc_params"},
		{`flows.f0.legs=[{"cc":"bbr","cc_params":{"beta":512}},{}]`, "flows[f0].legs[0].cc_params.beta"},
	} {
		bad, err := Apply(raw, []string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(bad, check); err == nil || !strings.Contains(err.Error(), c.path+":") {
			t.Errorf("--set %s: error = %v, want one at %s", c.set, err, c.path)
		}
	}
	if _, err := Apply(raw, []string{"flows.f0.cc_params.beta.x=1"}); err == nil {
		t.Error("--set below a module parameter: no error")
	}

	// Parameters valid alone but not together (cc.CheckParams) are refused
	// at the object, once each passed alone.
	alone := WithCCParams(func(cc, name string, v int64) error {
		if name == "beta" && (v < 1 || v > 1023) {
			return errors.New("refused")
		}
		return nil
	})
	var sets []map[string]int64
	together := WithCCParamSet(func(cc string, set map[string]int64) error {
		sets = append(sets, set)
		if f, ok := set["tcp_friendliness"]; set["beta"] < 205 && (!ok || f != 0) {
			return errors.New("beta below 205 with tcp_friendliness")
		}
		return nil
	})
	for _, c := range []struct {
		set, path string // path "" for none
		calls     int
	}{
		{`flows.f0.cc_params={"beta":100}`, "flows[f0].cc_params", 1},
		{`flows.f0.cc_params={"beta":100,"tcp_friendliness":false}`, "", 1},
		{`flows.f0.cc_params={"beta":2000}`, "flows[f0].cc_params.beta", 0}, // refused alone: not checked together
	} {
		sets = nil
		in, err := Apply(raw, []string{c.set, "flows.f0.legs=null"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(in, alone, together)
		switch {
		case c.path == "" && err != nil:
			t.Errorf("--set %s: error %v, want none", c.set, err)
		case c.path != "" && (err == nil || !strings.Contains(err.Error(), c.path+":")):
			t.Errorf("--set %s: error = %v, want one at %s", c.set, err, c.path)
		}
		if len(sets) != c.calls {
			t.Errorf("--set %s: checked together %d times, want %d", c.set, len(sets), c.calls)
		}
	}
}
