package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
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
		want, ok := writtenOverrides(t, raw, s)
		if !ok {
			return // more points than the check expands
		}
		var got [][]string
		for _, p := range s.Points() {
			got = append(got, p.Sets(s))
		}
		// The claim is about every point, not the order Points lists them
		// in (TestPointsExpandGridAxesSeeds holds that): compare sorted.
		slices.SortFunc(got, slices.Compare)
		slices.SortFunc(want, slices.Compare)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("ParseSpec(%s): the points' Sets() =\n%q\nwant, each path=value as written,\n%q", raw, got, want)
		}
	})
}

// maxCheckedPoints bounds the points FuzzParseSpec expands: a few grid
// paths of a few values, or a seed range, are already thousands, and the
// claim checked is about each point, not about how many there are.
const maxCheckedPoints = 4096

// writtenOverrides returns, for an accepted spec s parsed from raw, every
// point's --set overrides as the spec's doc describes them: the set, then
// grid × (each axis value alone, or each explicit point) × seeds, each
// override path=value with the value exactly the bytes raw holds for it.
// It reads the values from raw with encoding/json's maps, not through
// ParseSpec's ordered decoder, taking from s only the order of the paths
// (which a map does not keep) and the seeds (ParseSeeds has its own
// tests). A list of one value stands for that value (a list-valued field
// is a list in a list), as the spec's doc says. ok is false when the spec
// has more than maxCheckedPoints points.
func writtenOverrides(t *testing.T, raw []byte, s *Spec) (want [][]string, ok bool) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatalf("ParseSpec accepted %s, which is not a JSON object: %v", raw, err)
	}
	// values returns the values written for a path: a list's elements, or
	// the one value written.
	values := func(v json.RawMessage) []json.RawMessage {
		if len(v) == 0 || v[0] != '[' {
			return []json.RawMessage{v}
		}
		var vs []json.RawMessage
		if err := json.Unmarshal(v, &vs); err != nil {
			t.Fatalf("ParseSpec accepted %s, whose value %s is not a list: %v", raw, v, err)
		}
		return vs
	}
	section := func(name string, n int) map[string][]json.RawMessage {
		out := map[string][]json.RawMessage{}
		if top[name] == nil {
			return out
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(top[name], &m); err != nil {
			t.Fatalf("ParseSpec accepted %s, whose %s is not an object: %v", raw, name, err)
		}
		if len(m) != n {
			t.Fatalf("ParseSpec(%s): %d paths in %s, want the %d written", raw, n, name, len(m))
		}
		for path, v := range m {
			for _, x := range values(v) {
				if !bytes.Contains(raw, x) {
					t.Fatalf("ParseSpec(%s): %s.%s value %s is not as written", raw, name, path, x)
				}
			}
			out[path] = values(v)
		}
		return out
	}
	set, grid, axes := section("set", len(s.Set)), section("grid", len(s.Grid)), section("axes", len(s.Axes))
	var points []map[string]json.RawMessage
	if top["points"] != nil {
		if err := json.Unmarshal(top["points"], &points); err != nil {
			t.Fatalf("ParseSpec accepted %s, whose points are not objects: %v", raw, err)
		}
	}
	if len(points) != len(s.Explicit) {
		t.Fatalf("ParseSpec(%s): %d points, want the %d written", raw, len(s.Explicit), len(points))
	}
	// one returns the single value written for path: Validate refuses
	// more in set and in a point.
	one := func(m map[string][]json.RawMessage, where, path string) string {
		vs, found := m[path]
		if !found || len(vs) != 1 {
			t.Fatalf("ParseSpec(%s): %s.%s: %d values written, want 1", raw, where, path, len(vs))
		}
		return string(vs[0])
	}

	var prefix []string
	for _, p := range s.Set {
		prefix = append(prefix, p.Path+"="+one(set, "set", p.Path))
	}
	combos := [][]string{nil}
	for _, g := range s.Grid {
		if len(combos)*len(grid[g.Path]) > maxCheckedPoints {
			return nil, false
		}
		var next [][]string
		for _, c := range combos {
			for _, v := range grid[g.Path] {
				next = append(next, append(slices.Clone(c), g.Path+"="+string(v)))
			}
		}
		combos = next
	}
	// Each of the points a combination is crossed with: its overrides and
	// its own seed, if it has one.
	type part struct {
		sets    []string
		seed    string
		hasSeed bool
	}
	parts := []part{{}}
	switch {
	case len(s.Explicit) > 0:
		parts = parts[:0]
		for i, pt := range s.Explicit {
			written := map[string][]json.RawMessage{}
			for path, v := range points[i] {
				written[path] = values(v)
			}
			if len(written) != len(pt) {
				t.Fatalf("ParseSpec(%s): %d paths in points[%d], want the %d written", raw, len(pt), i, len(written))
			}
			var pp part
			for _, q := range pt {
				v := one(written, "points["+strconv.Itoa(i)+"]", q.Path)
				if !bytes.Contains(raw, []byte(v)) {
					t.Fatalf("ParseSpec(%s): points[%d].%s value %s is not as written", raw, i, q.Path, v)
				}
				if q.Path == "seed" {
					var seed uint64
					if err := json.Unmarshal([]byte(v), &seed); err != nil {
						t.Fatalf("ParseSpec accepted %s, whose points[%d].seed %s is not a seed", raw, i, v)
					}
					pp.seed, pp.hasSeed = strconv.FormatUint(seed, 10), true
					continue
				}
				pp.sets = append(pp.sets, q.Path+"="+v)
			}
			parts = append(parts, pp)
		}
	case len(s.Axes) > 0:
		parts = parts[:0]
		for _, a := range s.Axes {
			for _, v := range axes[a.Path] {
				parts = append(parts, part{sets: []string{a.Path + "=" + string(v)}})
			}
		}
	}
	if len(combos)*len(parts) > maxCheckedPoints/max(1, len(s.Seeds)) {
		return nil, false
	}
	for _, c := range combos {
		for _, pp := range parts {
			sets := slices.Concat(prefix, c, pp.sets)
			switch {
			case pp.hasSeed:
				want = append(want, append(sets, "runtime.seed="+pp.seed))
			case len(s.Seeds) == 0:
				want = append(want, sets)
			default:
				for _, seed := range s.Seeds {
					want = append(want, append(slices.Clone(sets), "runtime.seed="+strconv.FormatUint(seed, 10)))
				}
			}
		}
	}
	return want, true
}
