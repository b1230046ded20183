package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
)

// specErr matches an error that names where in the spec it is: a field
// (scenario, set, grid, axes, points or one of them, seeds, or one the
// spec does not have), or a line.
var specErr = regexp.MustCompile(`^sweep spec: ((scenario|(set|grid|axes|points(\[[0-9]+\])?)(\.[^:]+)?|seeds|line [0-9]+(, column [0-9]+)?):|unknown field ".*"; a spec has)`)

// writeSpec writes s back as JSON, each value as it was written.
func writeSpec(s *Spec) []byte {
	var b bytes.Buffer
	b.WriteString(`{"scenario": `)
	b.Write(s.Scenario)
	params := func(ps Params) {
		b.WriteByte('{')
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(p.Path)
			b.Write(k)
			b.WriteString(": [")
			b.Write(bytes.Join(toBytes(p.Values), []byte(",")))
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	for _, sec := range []struct {
		name string
		ps   Params
	}{{"set", s.Set}, {"grid", s.Grid}, {"axes", s.Axes}} {
		if sec.ps != nil {
			b.WriteString(`, "` + sec.name + `": `)
			params(sec.ps)
		}
	}
	if s.Explicit != nil {
		b.WriteString(`, "points": [`)
		for i, pt := range s.Explicit {
			if i > 0 {
				b.WriteByte(',')
			}
			params(pt)
		}
		b.WriteByte(']')
	}
	if s.Seeds != nil {
		b.WriteString(`, "seeds": [`)
		for i, x := range s.Seeds {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(x, 10))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func toBytes(vs []json.RawMessage) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// FuzzParseSpec feeds arbitrary JSON to ParseSpec, seeded with the shipped
// sweep spec and the forms the tests use. It must never panic; an error
// names the field or the line it is about; an accepted spec is valid,
// written back it reads back the same, and every point's overrides are
// path=value with the value as written.
func FuzzParseSpec(f *testing.F) {
	b, err := os.ReadFile("testdata/impairments.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		`{"scenario": "pump", "set": {"runtime.duration": "1s"}, "grid": {"flows.f0.cc": ["cubic", "bbr"]}, "axes": {"links.bottleneck.delay": ["5ms", "10ms"]}, "seeds": "1-2"}`,
		`{"scenario": "cellular", "set": {"flows.f0.ack_grant.gap": [["1ms", "2ms"]]}, "points": [{"flows.f0.cc": "bbr", "seed": 3}, {"flows.f0.cc": "reno"}]}`,
		`{"scenario": {"runtime": {"duration": "1s"}}, "seeds": [1, 2, 3]}`,
		`{"scenario": "pump", "set": {"a": 1, "a": 2}}`,
		`{"scenario": "pump", "grid": 5}`,
		`{"scenario": "pump",
		  "seeds": [1, -1]}`,
		`{"scenario": "pump", "points": [{"seed": 1.5}]}`,
		`{"scenario": "pump", "grids": {}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseSpec(raw)
		if err != nil {
			if !specErr.MatchString(err.Error()) {
				t.Fatalf("ParseSpec(%s) error %q names no field or line", raw, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSpec(%s) accepted a spec Validate refuses: %v", raw, err)
		}
		back, err := ParseSpec(writeSpec(s))
		if err != nil {
			t.Fatalf("ParseSpec of %s written back as %s: %v", raw, writeSpec(s), err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("ParseSpec of %s written back as %s = %+v, want %+v", raw, writeSpec(s), back, s)
		}
	})
}
