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
	kLimit: "#/$defs/limit", kQueueLimit: "#/$defs/queue_limit", kBuffer: "#/$defs/buffer", kPacing: "#/$defs/pacing", kProb: "#/$defs/probability", kCount: "#/$defs/count",
	kNumber: "#/$defs/number", kMatrix: "#/$defs/matrix", kTexts: "#/$defs/traces",
	kDurations: "#/$defs/quantiles",
	kEnds:      "#/$defs/flow_ends", kStart: "#/$defs/flow_start", kFlowSize: "#/$defs/flow_size",
	kPerSecond: "#/$defs/per_second", kCDF: "#/$defs/cdf", kCCParams: "#/$defs/cc_params",
}

// positiveRefs is the $defs entry a kind of value uses where the parser
// refuses 0.
var positiveRefs = map[valueKind]string{kDuration: "#/$defs/positive_duration", kSize: "#/$defs/positive_size"}

// enumsByKey is the Go table behind each enum in the schema, by the last two
// segments of its path.
var enumsByKey = map[string][]string{
	"nodes.kind":           sortedKeys(nodeKinds),
	"qdisc.kind":           sortedKeys(qdiscKinds),
	"loss.kind":            sortedKeys(lossKinds),
	"jitter.kind":          sortedKeys(jitterKinds),
	"loss.position":        sortedKeys(lossPositions),
	"jitter.order":         sortedKeys(jitterOrders),
	"jitter.clamp":         sortedKeys(jitterClamps),
	"app.kind":             sortedKeys(appKinds),
	"trace.detail":         sortedKeys(traceDetails),
	"changes.dir":          sortedKeys(changeDirs),
	"flows.ecn":            sortedKeys(ecnMarkings),
	"ack_grant.profile":    sortedKeys(AckProfiles),
	"nodes.routing":        sortedKeys(routingModes),
	"start.kind":           sortedKeys(startKinds),
	"size.kind":            sortedKeys(sizeKinds),
	"runtime.kernel_clock": sortedKeys(kernelClocks),
}

// anyOf lists a schema node's alternatives.
func anyOf(node map[string]any) []map[string]any {
	var out []map[string]any
	alts, _ := node["anyOf"].([]any)
	for _, a := range alts {
		out = append(out, a.(map[string]any))
	}
	return out
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
			if sh.alt != nil {
				// A list that may also be an object: one alternative each.
				var arr, obj map[string]any
				for _, a := range anyOf(node) {
					switch a["type"] {
					case "array":
						arr = a
					case "object":
						obj = a
					}
				}
				if arr == nil || obj == nil {
					t.Errorf("schema %s: want an array and an object alternative in anyOf", path)
					return
				}
				walk(path, sh.alt, obj)
				node = arr
			}
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
			if ref != leafRefs[sh.kind] && ref != positiveRefs[sh.kind] {
				t.Errorf("schema %s: $ref = %q, want %q", path, ref, leafRefs[sh.kind])
			}
			if sh.alt == nil {
				return
			}
			// A value that may also be an object: its object alternative
			// lists the same fields as the parser's alt shape.
			var objAlt map[string]any
			for _, a := range anyOf(node) {
				if a["type"] == "object" {
					objAlt = a
				}
			}
			if objAlt == nil {
				t.Errorf("schema %s: want an object alternative in anyOf", path)
				return
			}
			walk(path, sh.alt, objAlt)
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
	list, err := Apply([]byte(baseJSON), []string{`links.bottleneck.ab.outages=[{"at": "1s", "duration": "100ms"}]`})
	if err != nil {
		t.Fatal(err)
	}
	docs["outage list"] = string(list)
	unl, err := Apply([]byte(baseJSON), []string{"links.bottleneck.ab.qdisc.limit=unlimited"})
	if err != nil {
		t.Fatal(err)
	}
	docs["unlimited fifo"] = string(unl)
	docs["canonical unlimited fifo"] = string(mustParse(t, unl).Canonical())
	for _, b := range Builtins() {
		raw, _ := Builtin(b.Name)
		docs["builtin "+b.Name] = string(raw)
		// The canonical form spells out every default and embeds traces:
		// what open returns and checkpoints carry is a scenario too.
		docs["canonical "+b.Name] = string(mustParse(t, raw).Canonical())
	}
	host, err := addFlow(t, `flows.g={"group": "g", "count": 2, "dst": "h2",
		"src": {"attach": "r1", "delay": "1ms", "capacity": {"states": [{"rate": "50Mbps", "dwell": "1s"}]},
			"outages": {"windows": [{"at": "1s", "duration": "10ms"}]}},
		"start": {"kind": "poisson", "rate": 100}, "size": {"kind": "empirical", "cdf": [["1KB", 0.5], ["10KB", 1]]}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs["group of own hosts"] = string(host)
	for name, doc := range map[string]string{"base": baseJSON, "receive path": docs["receive path"], "group of own hosts": string(host)} {
		docs["canonical "+name] = string(mustParse(t, []byte(doc)).Canonical())
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
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			n, ok := v.(json.Number)
			if !ok {
				break
			}
			x, _ := new(big.Rat).SetString(n.String())
			lim, _ := new(big.Rat).SetString(kw.(json.Number).String())
			c := x.Cmp(lim)
			if k == "minimum" && c < 0 || k == "maximum" && c > 0 || k == "exclusiveMinimum" && c <= 0 || k == "exclusiveMaximum" && c >= 0 {
				fail("%s violates %s %s", n, k, kw)
			}
		case "minItems", "maxItems":
			n, _ := kw.(json.Number).Int64()
			if a, ok := v.([]any); ok && (k == "minItems" && int64(len(a)) < n || k == "maxItems" && int64(len(a)) > n) {
				fail("%d items violate %s %s", len(a), k, kw)
			}
		case "prefixItems":
			if a, ok := v.([]any); ok {
				for i, sub := range kw.([]any) {
					if i < len(a) {
						errs = append(errs, validate(t, root, sub.(map[string]any), a[i], fmt.Sprintf("%s[%d]", path, i))...)
					}
				}
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
				// items applies past prefixItems, as in draft 2020-12.
				from := 0
				if pre, ok := node["prefixItems"].([]any); ok {
					from = len(pre)
				}
				for i, e := range a {
					if i < from {
						continue
					}
					errs = append(errs, validate(t, root, kw.(map[string]any), e, fmt.Sprintf("%s[%d]", path, i))...)
				}
			}
		case "allOf":
			for _, sub := range kw.([]any) {
				errs = append(errs, validate(t, root, sub.(map[string]any), v, path)...)
			}
		case "not":
			if len(validate(t, root, kw.(map[string]any), v, path)) == 0 {
				fail("%v matches the schema it must not", v)
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

// TestSchemaBoundsMatchParser sets values at and beyond each bound the
// parser enforces on a plain number and checks the schema accepts exactly
// what Parse accepts: the schema's minimum, maximum and enum of a field are
// the parser's, not just its type.
func TestSchemaBoundsMatchParser(t *testing.T) {
	root := loadSchema(t)
	group := `flows.g={"group":"g","count":2,"src":"h1","dst":"h2","start":{"kind":"periodic","every":"1ms"},"size":{"kind":"lognormal","median":"10KB","sigma":1}}`
	ping := `flows.f0={"id":"f0","src":"h1","dst":"h2","cc":"ping"}`
	cases := []struct {
		name string
		sets []string
		// looser says why the schema cannot refuse what Parse refuses.
		looser string
	}{
		{"seed max", []string{"runtime.seed=18446744073709551615"}, ""},
		{"seed above max", []string{"runtime.seed=18446744073709551616"}, ""},
		{"duration max", []string{"runtime.duration=1000000000000000000"}, ""},
		{"duration above max", []string{"runtime.duration=1000000000000000001"}, ""},
		{"duration zero", []string{"runtime.duration=0"}, ""},
		{"mss min", []string{"flows.f0.tcp.mss=88"}, ""},
		{"mss below min", []string{"flows.f0.tcp.mss=87"}, ""},
		{"mss max", []string{"flows.f0.tcp.mss=32767", "flows.f0.tcp.rcvbuf_init=65534"}, ""},
		{"mss above max", []string{"flows.f0.tcp.mss=32768", "flows.f0.tcp.rcvbuf_init=65536"}, ""},
		{"init_cwnd zero", []string{"flows.f0.tcp.init_cwnd=0"}, ""},
		{"init_cwnd max", []string{"flows.f0.tcp.init_cwnd=4294967295"}, ""},
		{"init_cwnd above max", []string{"flows.f0.tcp.init_cwnd=4294967296"}, ""},
		{"hz 250", []string{"flows.f0.tcp.hz=250"}, ""},
		{"hz 300", []string{"flows.f0.tcp.hz=300"}, ""},
		{"sndbuf zero", []string{"flows.f0.tcp.sndbuf=0"}, ""},
		{"app write max", []string{`flows.f0.app={"write":16777216}`}, ""},
		{"app write above max", []string{`flows.f0.app={"write":16777217}`}, ""},
		{"app write zero", []string{`flows.f0.app={"write":0}`}, ""},
		{"pump packet_size max", []string{"flows.p0.packet_size=65535"}, ""},
		{"pump packet_size above max", []string{"flows.p0.packet_size=65536"}, ""},
		{"pump packet_size zero", []string{"flows.p0.packet_size=0"}, ""},
		{"pump rate zero", []string{"flows.p0.rate=0"}, ""},
		{"ping packet_size min", []string{ping, "flows.f0.packet_size=28"}, ""},
		{"ping packet_size below min", []string{ping, "flows.f0.packet_size=27"}, "the minimum depends on cc"},
		{"ping interval min", []string{ping, "flows.f0.interval=10000000"}, ""},
		{"ping interval below min", []string{ping, "flows.f0.interval=9999999"}, ""},
		{"fq_codel flows min", []string{`links.bottleneck.ab.qdisc={"kind":"fq_codel","flows":1}`}, ""},
		{"fq_codel flows zero", []string{`links.bottleneck.ab.qdisc={"kind":"fq_codel","flows":0}`}, ""},
		{"fq_codel flows max", []string{`links.bottleneck.ab.qdisc={"kind":"fq_codel","flows":65536}`}, ""},
		{"fq_codel flows above max", []string{`links.bottleneck.ab.qdisc={"kind":"fq_codel","flows":65537}`}, ""},
		{"dualpi2 coupling zero", []string{`links.bottleneck.ab.qdisc={"kind":"dualpi2","coupling":0}`}, ""},
		{"dualpi2 coupling max", []string{`links.bottleneck.ab.qdisc={"kind":"dualpi2","coupling":255}`}, ""},
		{"dualpi2 coupling above max", []string{`links.bottleneck.ab.qdisc={"kind":"dualpi2","coupling":256}`}, ""},
		{"dualpi2 c_protection max", []string{`links.bottleneck.ab.qdisc={"kind":"dualpi2","c_protection":100}`}, ""},
		{"dualpi2 c_protection above max", []string{`links.bottleneck.ab.qdisc={"kind":"dualpi2","c_protection":101}`}, ""},
		{"fq flow_limit zero", []string{`links.bottleneck.ab.qdisc={"kind":"fq","flow_limit":0}`}, ""},
		{"fq flow_limit max", []string{`links.bottleneck.ab.qdisc={"kind":"fq","flow_limit":2147483648}`}, ""},
		{"fq flow_limit above max", []string{`links.bottleneck.ab.qdisc={"kind":"fq","flow_limit":2147483649}`}, ""},
		{"fq quantum zero", []string{`links.bottleneck.ab.qdisc={"kind":"fq","quantum":0}`}, ""},
		{"codel target zero", []string{`links.bottleneck.ab.qdisc={"kind":"codel","target":0}`}, ""},
		{"periodic loss every zero", []string{`links.bottleneck.ab.loss={"kind":"periodic","every":0}`}, ""},
		{"periodic loss every one", []string{`links.bottleneck.ab.loss={"kind":"periodic","every":1}`}, ""},
		{"train_length below one", []string{`links.bottleneck.ab.loss={"kind":"bernoulli_train","p":0.1,"train_length":0.5}`}, ""},
		{"wifi_txop burst_size zero", []string{`links.bottleneck.ab.jitter={"kind":"wifi_txop","interval":"1ms","burst_size":0}`}, ""},
		{"pareto shape zero", []string{`links.bottleneck.ab.jitter={"kind":"pareto","scale":"1ms","shape":0}`}, ""},
		{"group count zero", []string{group, "flows.g.count=0"}, ""},
		{"group count max", []string{group, "flows.g.count=1000000", "runtime.duration=2000s"}, ""},
		{"group count above max", []string{group, "flows.g.count=1000001", "runtime.duration=2000s"}, ""},
		{"group batch zero", []string{group, "flows.g.start.batch=0"}, ""},
		{"group sigma zero", []string{group, "flows.g.size.sigma=0"}, ""},
		{"poisson rate number", []string{group, `flows.g.start={"kind":"poisson","rate":200}`}, ""},
		{"poisson rate without unit", []string{group, `flows.g.start={"kind":"poisson","rate":"200"}`}, ""},
		{"poisson rate zero", []string{group, `flows.g.start={"kind":"poisson","rate":"0/s"}`}, ""},
		{"ack_hold saturation zero", []string{`flows.f0.ack_hold={"quantiles":["0ms","1ms"],"saturation":0}`}, ""},
		{"ack_grant per_grant zero", []string{`flows.f0.ack_grant={"profile":"lte","per_grant":0}`}, ""},
		{"ack_grant per_grant max", []string{`flows.f0.ack_grant={"profile":"lte","per_grant":1048576}`}, ""},
		{"ack_grant per_grant above max", []string{`flows.f0.ack_grant={"profile":"lte","per_grant":1048577}`}, ""},
		{"rate with capital B", []string{"links.access.rate=1MBps"}, ""},
		{"change that changes nothing", []string{`changes=[{"at": "1s", "link": "bottleneck", "dir": "ab", "announce": "1s"}]`}, ""},
		{"ack_hold without quantiles", []string{`flows.f0.ack_hold={"saturation":0.5}`}, ""},
		{"ack_grant gap without per_grant", []string{`flows.f0.ack_grant={"gap":["1ms","2ms"]}`}, ""},
		{"ack_grant gap and per_grant", []string{`flows.f0.ack_grant={"gap":["1ms","2ms"],"per_grant":4}`}, ""},
		{"capacity dips without shape", []string{`links.bottleneck.ab.capacity={"states":[{"rate":"50Mbps","dwell":"1s"}],"dips":{"every":"1s","depth":0.5,"scale":"10ms"}}`, "links.bottleneck.ab.rate=null", "links.bottleneck.rate=null", "changes=[]"}, ""},
		{"capacity grant without ramp", []string{`links.bottleneck.ab.capacity={"states":[{"rate":"50Mbps","dwell":"1s"}],"grant":{"start":0.5}}`, "links.bottleneck.ab.rate=null", "links.bottleneck.rate=null", "changes=[]"}, ""},
		{"proxy buffer zero", []string{`nodes.r1={"id":"r1","kind":"proxy","buffer":0}`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := Apply([]byte(baseJSON), tc.sets)
			if strings.HasPrefix(tc.sets[0], "flows.g=") {
				raw, err = addFlow(t, tc.sets[0], tc.sets[1:])
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			_, perr := Parse(raw)
			errs := validate(t, root, root, decodeForSchema(t, string(raw)), "")
			if tc.looser != "" {
				if perr == nil || len(errs) > 0 {
					t.Errorf("Parse error = %v; schema errors = %v; want Parse alone to refuse (%s)", perr, errs, tc.looser)
				}
				return
			}
			if (perr == nil) != (len(errs) == 0) {
				t.Errorf("Parse error = %v; schema errors = %v; want both to accept or both to refuse", perr, errs)
			}
		})
	}
}

// addFlow appends the flow in set ("flows.g=<object>") to baseJSON's flows,
// then applies sets.
func addFlow(t *testing.T, set string, sets []string) ([]byte, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseJSON), &m); err != nil {
		t.Fatal(err)
	}
	var f any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(set, "flows.g=")), &f); err != nil {
		t.Fatal(err)
	}
	m["flows"] = append(m["flows"].([]any), f)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return Apply(b, sets)
}
