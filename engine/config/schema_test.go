package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const schemaPath = "../../proto/scenario.schema.json"

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatalf("reading %s: %v", schemaPath, err)
	}
	var s map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("decoding %s: %v", schemaPath, err)
	}
	return s
}

// resolve follows a "#/$defs/x" reference.
func resolve(root, node map[string]any) map[string]any {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		node = root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
}

// leafRefs is the $defs entry each kind of value must use in the schema.
var leafRefs = map[valueKind]string{
	kDuration: "#/$defs/duration", kRate: "#/$defs/rate", kSize: "#/$defs/size",
	kLimit: "#/$defs/limit", kBuffer: "#/$defs/buffer", kPacing: "#/$defs/pacing", kProb: "#/$defs/probability", kCount: "#/$defs/count",
	kNumber: "#/$defs/number", kMatrix: "#/$defs/matrix", kTexts: "#/$defs/traces",
	kDurations: "#/$defs/quantiles",
}

// enumsByKey is the Go table behind each enum in the schema, by the last two
// segments of its path.
var enumsByKey = map[string][]string{
	"nodes.kind":        sortedKeys(nodeKinds),
	"qdisc.kind":        sortedKeys(qdiscKinds),
	"loss.kind":         sortedKeys(lossKinds),
	"jitter.kind":       sortedKeys(jitterKinds),
	"loss.position":     sortedKeys(lossPositions),
	"jitter.order":      sortedKeys(jitterOrders),
	"jitter.clamp":      sortedKeys(jitterClamps),
	"app.kind":          sortedKeys(appKinds),
	"trace.detail":      sortedKeys(traceDetails),
	"changes.dir":       sortedKeys(changeDirs),
	"flows.ecn":         sortedKeys(ecnMarkings),
	"ack_grant.profile": sortedKeys(AckProfiles),
}

func sortedKeys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestSchemaMatchesParser walks the parser's field table and the JSON Schema
// together: every key the parser accepts is a schema property and the other
// way round, at every depth, with the matching value type.
func TestSchemaMatchesParser(t *testing.T) {
	root := loadSchema(t)
	var walk func(path string, sh *shape, node map[string]any)
	walk = func(path string, sh *shape, node map[string]any) {
		ref, _ := node["$ref"].(string)
		node = resolve(root, node)
		switch sh.kind {
		case kObject:
			if node["type"] != "object" || node["additionalProperties"] != false {
				t.Errorf("schema %s: type = %v, additionalProperties = %v; want object, false", path, node["type"], node["additionalProperties"])
			}
			props, _ := node["properties"].(map[string]any)
			for _, k := range sortedKeys(props) {
				if sh.fields[k] == nil {
					t.Errorf("schema %s has property %q the parser rejects", path, k)
				}
			}
			for _, k := range sortedKeys(sh.fields) {
				p, ok := props[k].(map[string]any)
				if !ok {
					t.Errorf("schema %s lacks property %q the parser accepts", path, k)
					continue
				}
				walk(join(path, k), sh.fields[k], p)
			}
		case kList:
			items, _ := node["items"].(map[string]any)
			if node["type"] != "array" || items == nil {
				t.Errorf("schema %s: want an array with items", path)
				return
			}
			walk(path, sh.elem, items)
		case kBool:
			if node["type"] != "boolean" {
				t.Errorf("schema %s: type = %v, want boolean", path, node["type"])
			}
		case kString:
			segs := strings.Split(path, ".")
			key := strings.Join(segs[max(0, len(segs)-2):], ".")
			if enum, ok := node["enum"].([]any); ok {
				var got []string
				for _, e := range enum {
					got = append(got, e.(string))
				}
				slices.Sort(got)
				if !slices.Equal(got, enumsByKey[key]) {
					t.Errorf("schema %s enum = %v, parser accepts %v", path, got, enumsByKey[key])
				}
			} else if enumsByKey[key] != nil {
				t.Errorf("schema %s: want an enum of %v", path, enumsByKey[key])
			} else if node["type"] != "string" {
				t.Errorf("schema %s: type = %v, want string", path, node["type"])
			}
		default:
			if ref != leafRefs[sh.kind] {
				t.Errorf("schema %s: $ref = %q, want %q", path, ref, leafRefs[sh.kind])
			}
		}
	}
	walk("", scenarioShape, root)
}

// TestSchemaAcceptsWhatParses validates documents against the schema with a
// small validator for the keywords it uses, and checks it agrees with Parse
// on documents the schema can judge alone.
func TestSchemaAcceptsWhatParses(t *testing.T) {
	root := loadSchema(t)
	docs := map[string]string{"base": baseJSON, "sameRun": sameRun}
	rcv, err := Apply([]byte(baseJSON), []string{"flows.f0.rcv_hold=100us",
		`flows.f0.ack_hold={"quantiles": ["0ms", "1ms", "5ms"], "saturation": 0.8, "window": "20ms"}`,
		`flows.f0.ack_grant={"profile": "leo", "gap": ["1ms", "2ms"], "per_grant": 8, "loss": 0.01, "filter": true, "slot": "1ms"}`})
	if err != nil {
		t.Fatal(err)
	}
	docs["receive path"] = string(rcv)
	for _, b := range Builtins() {
		raw, _ := Builtin(b.Name)
		docs["builtin "+b.Name] = string(raw)
	}
	for _, name := range sortedKeys(docs) {
		t.Run(name, func(t *testing.T) {
			mustParse(t, []byte(docs[name]))
			if errs := validate(t, root, root, decodeForSchema(t, docs[name]), ""); len(errs) > 0 {
				t.Errorf("schema rejects a valid scenario:\n%s", strings.Join(errs, "\n"))
			}
		})
	}
	bad := []struct{ name, set string }{
		{"unknown key", `links.access.ab={"rat":"1Gbps"}`},
		{"misspelt rate unit", "links.access.rate=100Mbs"},
		{"duration without unit", `flows.f0.start="5"`},
		{"fractional picoseconds", "links.access.delay=1.5"},
		{"qdisc kind", "links.bottleneck.ab.qdisc.kind=red"},
		{"limit", "links.bottleneck.ab.qdisc.limit=10pkts"},
		{"probability", "links.bottleneck.ab.loss.p=2"},
		{"change dir", "changes.0.dir=up"},
		{"id", `flows.f0.id="f 0"`},
	}
	for _, tc := range bad {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			raw, err := Apply([]byte(baseJSON), []string{tc.set})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if _, err := Parse(raw); err == nil {
				t.Errorf("Parse accepts --set %s", tc.set)
			}
			if errs := validate(t, root, root, decodeForSchema(t, string(raw)), ""); len(errs) == 0 {
				t.Errorf("schema accepts --set %s", tc.set)
			}
		})
	}
}

func decodeForSchema(t *testing.T, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

// validate checks v against a draft 2020-12 schema node, supporting only the
// keywords proto/scenario.schema.json uses; any other keyword fails the test
// so the schema cannot outgrow this checker unnoticed.
func validate(t *testing.T, root, node map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	for _, k := range sortedKeys(node) {
		kw := node[k]
		switch k {
		case "$schema", "$id", "title", "description", "$defs":
		case "$ref":
			errs = append(errs, validate(t, root, resolve(root, node), v, path)...)
		case "type":
			if !hasType(v, kw.(string)) {
				fail("not of type %s", kw)
			}
		case "enum":
			if !slices.ContainsFunc(kw.([]any), func(e any) bool { return e == v }) {
				fail("%v not in enum", v)
			}
		case "const":
			if kw != v {
				fail("%v is not %v", v, kw)
			}
		case "pattern":
			if s, ok := v.(string); ok && !regexp.MustCompile(kw.(string)).MatchString(s) {
				fail("%q does not match %s", s, kw)
			}
		case "minimum", "maximum":
			n, ok := v.(json.Number)
			if !ok {
				break
			}
			x, _ := new(big.Rat).SetString(n.String())
			lim, _ := new(big.Rat).SetString(kw.(json.Number).String())
			if c := x.Cmp(lim); k == "minimum" && c < 0 || k == "maximum" && c > 0 {
				fail("%s violates %s %s", n, k, kw)
			}
		case "minItems":
			n, _ := kw.(json.Number).Int64()
			if a, ok := v.([]any); ok && int64(len(a)) < n {
				fail("fewer than %s items", kw)
			}
		case "required":
			if m, ok := v.(map[string]any); ok {
				for _, r := range kw.([]any) {
					if _, ok := m[r.(string)]; !ok {
						fail("missing %s", r)
					}
				}
			}
		case "properties":
			if m, ok := v.(map[string]any); ok {
				props := kw.(map[string]any)
				for _, key := range sortedKeys(m) {
					if p, ok := props[key]; ok {
						errs = append(errs, validate(t, root, p.(map[string]any), m[key], join(path, key))...)
					}
				}
			}
		case "additionalProperties":
			m, ok := v.(map[string]any)
			props, _ := node["properties"].(map[string]any)
			for _, key := range sortedKeys(m) {
				if _, known := props[key]; ok && !known {
					switch sub := kw.(type) {
					case bool:
						if !sub {
							fail("unknown property %q", key)
						}
					case map[string]any:
						errs = append(errs, validate(t, root, sub, m[key], join(path, key))...)
					}
				}
			}
		case "items":
			if a, ok := v.([]any); ok {
				for i, e := range a {
					errs = append(errs, validate(t, root, kw.(map[string]any), e, fmt.Sprintf("%s[%d]", path, i))...)
				}
			}
		case "anyOf":
			ok := false
			for _, alt := range kw.([]any) {
				if len(validate(t, root, alt.(map[string]any), v, path)) == 0 {
					ok = true
				}
			}
			if !ok {
				fail("%v matches no alternative", v)
			}
		default:
			t.Fatalf("schema keyword %q at %s is not supported by this test's validator", k, path)
		}
	}
	return errs
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(n.String())
		return ok && r.IsInt()
	}
	return false
}
