// Package sweep runs one simulation per point of a parameter sweep, on all
// cores, and keeps a catalog of the runs: a Parquet file with one row per run
// and flow (the swept parameters as columns, then the summary metrics, the
// config hash and the digest), resumable by config hash, and optionally an
// HTML page that charts one metric against each impairment axis.
//
// Parallelism is across runs: each run is one engine.Run, single-threaded and
// deterministic, on its own goroutine.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/config"
)

// Spec describes a sweep.
//
//	{"scenario": "p-rtr-p",                      // a built-in, a file path, or an inline scenario object
//	 "set":   {"runtime.duration": "10s"},       // fixed overrides
//	 "grid":  {"flows.f0.cc": ["cubic", "bbr"]}, // crossed with everything else
//	 "axes":  {"links.bottleneck.ab.loss.p": [0, 0.001, 0.01]},   // varied one at a time
//	 "seeds": "1-5"}                             // or [1, 2, 3]; default the scenario's seed
//
// The points are grid × (each value of each axis, the other axes left at the
// scenario's value) × seeds. Without axes they are grid × seeds.
type Spec struct {
	// Scenario is a built-in name or file path (a JSON string), or an inline
	// scenario (a JSON object).
	Scenario json.RawMessage `json:"scenario"`
	Set      Params          `json:"set,omitempty"`
	Grid     Params          `json:"grid,omitempty"`
	Axes     Params          `json:"axes,omitempty"`
	// Explicit lists explicit points (path → value, "seed" for a point's own
	// seed), crossed with the grid; an alternative to axes.
	Explicit []Params `json:"points,omitempty"`
	Seeds    Seeds    `json:"seeds,omitempty"`
}

// Base is what a sweep fixes for all its points, the scenario and its set
// (a --duration included), as compact JSON: a catalog keeps it, and a sweep
// resumes into a catalog only with the same.
func (s *Spec) Base() string {
	var scn bytes.Buffer
	if json.Compact(&scn, s.Scenario) != nil {
		scn.Write(s.Scenario)
	}
	set := make([]string, 0, len(s.Set))
	for _, p := range s.Set {
		var v bytes.Buffer
		for _, x := range p.Values {
			if json.Compact(&v, x) != nil {
				v.Write(x)
			}
		}
		set = append(set, p.Path+"="+v.String())
	}
	b, _ := json.Marshal(struct {
		Scenario json.RawMessage `json:"scenario"`
		Set      []string        `json:"set,omitempty"`
	}{json.RawMessage(scn.Bytes()), set})
	return string(b)
}

// Param is one override path with its values, each a JSON value as written.
type Param struct {
	Path   string
	Values []json.RawMessage
}

// Params keeps the order a spec lists its parameters in (JSON objects are
// unordered to encoding/json, but users read columns and charts in the order
// they wrote them).
type Params []Param

// UnmarshalJSON decodes an object of path → value (for "set") or path →
// array of values (for "grid" and "axes"), keeping the key order.
func (ps *Params) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return kindError(jsonKind(tok))
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		p := Param{Path: kt.(string)}
		for _, q := range *ps {
			if q.Path == p.Path {
				return fmt.Errorf("%s: given twice", p.Path)
			}
		}
		if len(raw) > 0 && raw[0] == '[' {
			if err := json.Unmarshal(raw, &p.Values); err != nil {
				return err
			}
		} else {
			p.Values = []json.RawMessage{raw}
		}
		*ps = append(*ps, p)
	}
	_, err = dec.Token()
	return err
}

// Seeds is a list of master seeds; in JSON an array of integers or a string
// of ranges and values ("1-5", "1,3,7-9").
type Seeds []uint64

// MaxSeeds is the most seeds a sweep takes. Each is a run per point, so a
// hundred thousand are already days of runs; a range beyond it (a typo such
// as 1-100000000) is refused before it is expanded.
const MaxSeeds = 100_000

// UnmarshalJSON accepts an array of integers or a range string.
func (s *Seeds) UnmarshalJSON(b []byte) error {
	var list []uint64
	if err := json.Unmarshal(b, &list); err == nil {
		if len(list) > MaxSeeds {
			return fmt.Errorf("%d seeds, more than %d", len(list), MaxSeeds)
		}
		if x, ok := Seeds(list).repeat(); ok {
			return fmt.Errorf("%d repeats", x)
		}
		*s = list
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("expected an array of integers (seeds from 0 to 2^64-1) or a range such as \"1-5\"")
	}
	v, err := ParseSeeds(str, MaxSeeds)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeeds parses "1-5" or "1,3,7-9" into seeds, refusing more than most.
func ParseSeeds(str string, most int) (Seeds, error) {
	var out Seeds
	for _, part := range strings.Split(str, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed or a range of seeds such as 1-5", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of seeds such as 1-5", part)
			}
		}
		if b-a >= uint64(most-len(out)) {
			return nil, fmt.Errorf("%q: more than %d seeds", str, most)
		}
		// Counting from 0 to b-a, not from a to b: x <= b holds for every x
		// when b is the largest seed, and x++ wraps.
		for i := uint64(0); i <= b-a; i++ {
			out = append(out, a+i)
		}
	}
	if x, ok := out.repeat(); ok {
		return nil, fmt.Errorf("%q: seed %d repeats", str, x)
	}
	return out, nil
}

// repeat returns a seed that s holds twice: its points would be one run
// each, catalogued once, so a repeat is a slip to point out.
func (s Seeds) repeat() (uint64, bool) {
	seen := make(map[uint64]bool, len(s))
	for _, x := range s {
		if seen[x] {
			return x, true
		}
		seen[x] = true
	}
	return 0, false
}

// ParseSpec decodes and checks a sweep spec; errors name the field, or
// the line and column of JSON that does not parse. A key given twice, at
// the top or as a path in set, grid, axes or a point, is refused: JSON
// decoders keep one of the two, and which one the user meant is unknown.
func ParseSpec(raw []byte) (*Spec, error) {
	// Values stay as written (a number beyond float64 included: the
	// scenario judges it), so the JSON is checked, not decoded, here.
	if !json.Valid(raw) {
		var se *json.SyntaxError
		if err := json.Unmarshal(raw, new(any)); errors.As(err, &se) {
			// Unmarshal's Offset counts the offending byte.
			return nil, fmt.Errorf("sweep spec: %s: %v", config.Position(raw, se.Offset-1), err)
		}
		return nil, fmt.Errorf("sweep spec: line 1: not JSON")
	}
	if bytes.TrimLeft(raw, " \t\r\n")[0] != '{' {
		return nil, fmt.Errorf("sweep spec: line 1: must be a JSON object (scenario, set, grid, axes, points, seeds)")
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{': the JSON is valid
		return nil, fmt.Errorf("sweep spec: %w", err)
	}
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("sweep spec: %w", err)
		}
		key := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("sweep spec: %s: %w", key, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("sweep spec: %s: given twice", key)
		}
		seen[key] = true
		if err := s.decodeField(key, v); err != nil {
			return nil, err
		}
	}
	return &s, s.Validate()
}

// decodeField decodes the spec's field key from its JSON v.
func (s *Spec) decodeField(key string, v json.RawMessage) error {
	params := func(ps *Params, want string) error {
		return paramsError(key, json.Unmarshal(v, ps), want)
	}
	switch key {
	case "scenario":
		s.Scenario = v
	case "set":
		return params(&s.Set, "an object of path: value")
	case "grid", "axes":
		ps := &s.Grid
		if key == "axes" {
			ps = &s.Axes
		}
		return params(ps, "an object of path: [values]")
	case "points":
		var pts []json.RawMessage
		if json.Unmarshal(v, &pts) != nil {
			return fmt.Errorf("sweep spec: points: want an array of points, objects of path: value")
		}
		s.Explicit = make([]Params, len(pts))
		for i, pt := range pts {
			if err := paramsError(fmt.Sprintf("points[%d]", i), json.Unmarshal(pt, &s.Explicit[i]), "an object of path: value"); err != nil {
				return err
			}
		}
	case "seeds":
		if err := json.Unmarshal(v, &s.Seeds); err != nil {
			return fmt.Errorf("sweep spec: seeds: %w", err)
		}
	default:
		return fmt.Errorf("sweep spec: unknown field %q; a spec has scenario, set, grid, axes, points and seeds", key)
	}
	return nil
}

// kindError is Params' error for JSON of another kind than an object.
type kindError string

func (e kindError) Error() string { return "a JSON " + string(e) }

// paramsError places err, from decoding the spec's field (set, grid, axes
// or a point), at field; JSON of the wrong kind is told what is wanted.
func paramsError(field string, err error, want string) error {
	var ke kindError
	if errors.As(err, &ke) {
		return fmt.Errorf("sweep spec: %s: %v; want %s", field, err, want)
	}
	if err != nil {
		return fmt.Errorf("sweep spec: %s: %w", field, err)
	}
	return nil
}

// jsonKind names the JSON type of a json.Decoder token.
func jsonKind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// Validate checks the spec's shape (the values themselves are checked by
// the scenario parser, per point).
func (s *Spec) Validate() error {
	if len(s.Scenario) == 0 || string(s.Scenario) == "null" {
		return fmt.Errorf("sweep spec: scenario: missing (a built-in name, a file path or an inline scenario)")
	}
	if c := s.Scenario[0]; c != '"' && c != '{' {
		return fmt.Errorf("sweep spec: scenario: %s is not a built-in name or file path (a string) or an inline scenario (an object)", s.Scenario)
	}
	seen := map[string]string{}
	for _, sec := range []struct {
		name string
		ps   Params
	}{{"set", s.Set}, {"grid", s.Grid}, {"axes", s.Axes}} {
		for _, p := range sec.ps {
			if p.Path == "" {
				return fmt.Errorf("sweep spec: %s: an empty path", sec.name)
			}
			if p.Path == "seed" || p.Path == "runtime.seed" {
				return fmt.Errorf("sweep spec: %s.%s: give seeds in \"seeds\"", sec.name, p.Path)
			}
			// A path in "set" may also be swept: its set value is the
			// baseline the other axes' runs keep.
			if prev, ok := seen[p.Path]; ok && sec.name != "set" {
				return fmt.Errorf("sweep spec: %s.%s: already in %s", sec.name, p.Path, prev)
			}
			if sec.name != "set" {
				seen[p.Path] = sec.name
			}
			if len(p.Values) == 0 {
				return fmt.Errorf("sweep spec: %s.%s: no values", sec.name, p.Path)
			}
			if sec.name == "set" && len(p.Values) != 1 {
				return fmt.Errorf("sweep spec: set.%s: one value, not a list of %d (to sweep the values, give them in grid or axes; %s)",
					p.Path, len(p.Values), listInList(p.Values))
			}
		}
	}
	if len(s.Explicit) > 0 && len(s.Axes) > 0 {
		return fmt.Errorf("sweep spec: points: give axes or points, not both")
	}
	for i, pt := range s.Explicit {
		for _, p := range pt {
			if len(p.Values) != 1 {
				return fmt.Errorf("sweep spec: points[%d].%s: one value, not a list of %d (%s)", i, p.Path, len(p.Values), listInList(p.Values))
			}
			if p.Path == "seed" {
				var seed uint64
				if json.Unmarshal(p.Values[0], &seed) != nil {
					return fmt.Errorf("sweep spec: points[%d].seed: %s is not a seed (a non-negative integer)", i, p.Values[0])
				}
				if len(s.Seeds) > 0 {
					return fmt.Errorf("sweep spec: points[%d].seed: give seeds in \"seeds\" or in the points, not both", i)
				}
			}
		}
	}
	return nil
}

// listInList says how to write vals, given where one value belongs, as one
// list value: a list in a spec is a list of values, so a list-valued field
// (ack_grant.gap) takes a list in a list. Taking a list of two or more as
// the value itself would set a list of one, ["1ms"], apart: it means "1ms",
// as it always has.
func listInList(vals []json.RawMessage) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(v)
	}
	return "a list-valued field is written as a list in a list, [[" + strings.Join(parts, ", ") + "]]"
}

// Point is one run of a sweep.
type Point struct {
	// Axis is the impairment axis this point varies ("" without axes).
	Axis string
	// Params are the swept parameters' values (grid, then the axis).
	Params []Param
	// Seed is the master seed; HasSeed is false when the spec gives no
	// seeds and the scenario's own seed is used.
	Seed    uint64
	HasSeed bool
}

// Sets returns the point's --set overrides, after the spec's fixed ones.
func (p Point) Sets(spec *Spec) []string {
	var out []string
	for _, s := range spec.Set {
		out = append(out, s.Path+"="+string(s.Values[0]))
	}
	for _, s := range p.Params {
		out = append(out, s.Path+"="+string(s.Values[0]))
	}
	if p.HasSeed {
		out = append(out, "runtime.seed="+strconv.FormatUint(p.Seed, 10))
	}
	return out
}

// Points expands the spec: grid × axes (one at a time) × seeds, the seeds
// varying fastest.
func (s *Spec) Points() []Point {
	combos := [][]Param{nil}
	for _, g := range s.Grid {
		var next [][]Param
		for _, c := range combos {
			for _, v := range g.Values {
				next = append(next, append(append([]Param(nil), c...), Param{Path: g.Path, Values: []json.RawMessage{v}}))
			}
		}
		combos = next
	}
	type axisVal struct {
		axis string
		p    *Param
	}
	avs := []axisVal{{}}
	if len(s.Axes) > 0 {
		avs = avs[:0]
		for _, a := range s.Axes {
			for _, v := range a.Values {
				avs = append(avs, axisVal{a.Path, &Param{Path: a.Path, Values: []json.RawMessage{v}}})
			}
		}
	}
	seeds := s.Seeds
	var out []Point
	if len(s.Explicit) > 0 {
		for _, c := range combos {
			for _, pt := range s.Explicit {
				p := Point{Params: append([]Param(nil), c...)}
				for _, q := range pt {
					if q.Path == "seed" {
						_ = json.Unmarshal(q.Values[0], &p.Seed)
						p.HasSeed = true
						continue
					}
					p.Params = append(p.Params, q)
				}
				if p.HasSeed || len(seeds) == 0 {
					out = append(out, p)
					continue
				}
				for _, seed := range seeds {
					p.Seed, p.HasSeed = seed, true
					out = append(out, p)
				}
			}
		}
		return out
	}
	for _, av := range avs {
		for _, c := range combos {
			ps := append([]Param(nil), c...)
			if av.p != nil {
				ps = append(ps, *av.p)
			}
			if len(seeds) == 0 {
				out = append(out, Point{Axis: av.axis, Params: ps})
				continue
			}
			for _, seed := range seeds {
				out = append(out, Point{Axis: av.axis, Params: ps, Seed: seed, HasSeed: true})
			}
		}
	}
	return out
}

// Columns returns the swept parameters' paths in spec order: grid, then axes.
func (s *Spec) Columns() []string {
	var out []string
	for _, p := range s.Grid {
		out = append(out, p.Path)
	}
	for _, p := range s.Axes {
		out = append(out, p.Path)
	}
	seen := map[string]bool{}
	for _, pt := range s.Explicit {
		for _, p := range pt {
			if p.Path != "seed" && !seen[p.Path] {
				seen[p.Path] = true
				out = append(out, p.Path)
			}
		}
	}
	return out
}

// ParseGrid parses a command-line "path=v1,v2,..." into a Param; each value
// is JSON if it parses, else a string (as --set does). Only the commas
// outside objects, arrays and JSON strings separate values, so that
// loss={"kind":"bernoulli","p":0.01},{"kind":"bernoulli","p":0.02} is two.
func ParseGrid(arg string) (Param, error) {
	path, vals, ok := strings.Cut(arg, "=")
	if !ok || path == "" || vals == "" {
		return Param{}, fmt.Errorf("%q: expected path=v1,v2 (one value or more, comma-separated)", arg)
	}
	p := Param{Path: path}
	for i, v := range splitTop(vals) {
		if v == "" {
			return Param{}, fmt.Errorf("%q: value %d is empty", arg, i+1)
		}
		p.Values = append(p.Values, jsonValue(v))
	}
	return p, nil
}

// splitTop splits s at the commas that stand outside {}, [] and JSON
// strings.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func jsonValue(v string) json.RawMessage {
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// numeric reports whether every value is a JSON number.
func numeric(vals []json.RawMessage) bool {
	for _, v := range vals {
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return false
		}
	}
	return len(vals) > 0
}

// display renders a JSON value for a column or a label: strings without
// quotes, numbers as written.
func display(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
