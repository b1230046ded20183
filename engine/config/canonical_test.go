package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCanonicalForm pins the canonical JSON of a minimal scenario, written
// out by hand: keys sorted at every level, no whitespace, shared link values
// copied into both directions, every default spelt out in its largest exact
// unit.
func TestCanonicalForm(t *testing.T) {
	raw := `{"runtime": {"duration": "1000ms"},
	  "nodes": [{"id": "a", "kind": "endpoint"}, {"id": "b", "kind": "endpoint"}],
	  "links": [{"id": "l", "a": "a", "b": "b", "rate": 10000000, "delay": "0.002s"}],
	  "flows": [{"id": "p", "src": "a", "dst": "b", "cc": "pump", "rate": "1Mbps"}]}`
	dir := `{"delay":"2ms","jitter":{"kind":"none"},"loss":{"kind":"none"},"qdisc":{"kind":"fifo","limit":"1000p"},"rate":"10Mbps"}`
	want := `{"changes":[],"description":"",` +
		`"flows":[{"cc":"pump","dst":"b","id":"p","packet_size":"1500B","rate":"1Mbps","size":"0B","src":"a","start":"0s"}],` +
		`"links":[{"a":"a","ab":` + dir + `,"b":"b","ba":` + dir + `,"id":"l"}],` +
		`"name":"","nodes":[{"id":"a","kind":"endpoint"},{"id":"b","kind":"endpoint"}],` +
		`"runtime":{"duration":"1s","seed":0},"trace":{"detail":"summary"}}`
	got, err := Canonical([]byte(raw))
	if err != nil {
		t.Fatalf("Canonical: %v", err)
	}
	if string(got) != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	if h, _ := Hash([]byte(raw)); h != hex.EncodeToString(sum[:]) {
		t.Errorf("Hash = %s, want SHA-256 of the canonical form %x", h, sum)
	}
}

// sameRun is baseJSON rewritten: keys reordered, other whitespace, other unit
// spellings, defaults written out, the shared bottleneck values moved into
// the directions. It means exactly the same run.
const sameRun = `{"changes":[{"rate":50000000,"dir":"ab","link":"bottleneck","at":"5000ms"}],
"flows":[{"dst":"h2","src":"h1","id":"f0","cc":"cubic","start":"0s","tcp":{"sack":true,"mss":1448,"sndbuf":"4MiB"}},
         {"rate":"0.12Gbps","cc":"pump","id":"p0","dst":"h2","src":"h1","packet_size":"1.5KB"}],
"links":[{"delay":"1ms","rate":"1000Mbps","b":"r1","a":"h1","id":"access","qdisc":{"kind":"fifo","limit":"1000p"}},
         {"b":"h2","a":"r1","id":"bottleneck",
          "ab":{"loss":{"p":0.010,"kind":"bernoulli"},"qdisc":{"limit":"1.000BDP"},"rate":"100Mbps","delay":"19ms"},
          "ba":{"rate":"100Mbps","delay":"19000us","loss":{"kind":"none"}}}],
"nodes":[{"kind":"endpoint","id":"h1"},{"kind":"router","id":"r1"},{"kind":"endpoint","id":"h2"}],
"runtime":{"duration":"10s","seed":3},"description":"test base","name":"base","trace":{"detail":"summary"}}`

func TestHashStable(t *testing.T) {
	a, err := Hash([]byte(baseJSON))
	if err != nil {
		t.Fatalf("Hash(base): %v", err)
	}
	b, err := Hash([]byte(sameRun))
	if err != nil {
		t.Fatalf("Hash(sameRun): %v", err)
	}
	if a != b {
		ca, _ := Canonical([]byte(baseJSON))
		cb, _ := Canonical([]byte(sameRun))
		t.Errorf("Hash differs for the same run:\n%s\n%s", ca, cb)
	}
}

// A default written out is the same run as the scenario that leaves it
// out, and keeps that scenario's hash: a greedy application's write size,
// the kernel clock drawn from the seed.
func TestHashDefaultsWrittenOut(t *testing.T) {
	base, _ := Hash([]byte(baseJSON))
	for _, set := range []string{"flows.f0.app.write=1MiB", "runtime.kernel_clock=random"} {
		raw, err := Apply([]byte(baseJSON), []string{set})
		if err != nil {
			t.Fatal(err)
		}
		if h, err := Hash(raw); err != nil || h != base {
			t.Errorf("Hash with %s = %s, %v; want the base's %s", set, h, err, base)
		}
	}
}

func TestHashChanges(t *testing.T) {
	base, _ := Hash([]byte(baseJSON))
	cases := []struct {
		name string
		sets []string
	}{
		{"seed", []string{"runtime.seed=4"}},
		{"loss probability", []string{"links.bottleneck.ab.loss.p=0.011"}},
		{"one picosecond of delay", []string{"links.access.ab.delay=1000000001"}},
		{"reverse qdisc", []string{"links.bottleneck.ba.qdisc.kind=codel"}},
		{"a TCP switch", []string{"flows.f0.tcp.tlp=false"}},
		{"timestamps without offsets", []string{"flows.f0.tcp.timestamps=2"}},
		{"an aligned kernel clock", []string{"runtime.kernel_clock=aligned"}},
		{"write size", []string{"flows.f0.app.write=128KiB"}},
		{"cc", []string{"flows.f0.cc=reno"}},
		{"change time", []string{"changes.0.at=6s"}},
		{"trace detail", []string{"trace.detail=change"}},
		{"description", []string{"description=other"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := Apply([]byte(baseJSON), tc.sets)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			h, err := Hash(raw)
			if err != nil {
				t.Fatalf("Hash: %v", err)
			}
			if h == base {
				t.Errorf("Hash after %q = %s, unchanged", tc.sets, h)
			}
		})
	}
}

// TestCanonicalRoundTrip checks Parse(Canonical(x)) == Parse(x) on the
// built-ins and on scenarios that use every kind of every field.
func TestCanonicalRoundTrip(t *testing.T) {
	inputs := map[string][]byte{}
	for _, b := range Builtins() {
		raw, err := Builtin(b.Name)
		if err != nil {
			t.Fatalf("Builtin(%q): %v", b.Name, err)
		}
		inputs["builtin "+b.Name] = raw
	}
	variants := map[string][]string{
		"aligned kernel clock": {"runtime.kernel_clock=aligned"},
		"codel with ecn":       {`links.bottleneck.ab.qdisc={"kind":"codel","target":"2.5ms","interval":"50ms","ecn":true,"limit":"64KiB"}`},
		"fifo step marking": {`links.bottleneck.ab.qdisc={"kind":"fifo","limit":"1000p","ecn_threshold":"65p"}`,
			`links.bottleneck.ba.qdisc={"kind":"fifo","ecn_threshold":"0.25BDP"}`},
		"fq_codel and dualpi2": {`links.bottleneck.ab.qdisc={"kind":"fq_codel","flows":16,"quantum":"300B","ce_threshold":"1ms","ecn":false}`,
			`links.bottleneck.ba.qdisc={"kind":"dualpi2","target":"1ms","tupdate":"2ms","step_threshold":"0.5ms","coupling":3,"c_protection":0}`},
		"fq and an ect1 pump": {`links.access.qdisc={"kind":"fq","quantum":"1KB","initial_quantum":"3KB","flow_limit":5,"horizon":"1s","limit":"20p"}`,
			`flows.p0.ecn=ect1`},
		"jitter and changes": {`links.access.jitter={"kind":"gaussian","sigma":"0.1us"}`,
			`changes=[{"at":"1s","link":"access","dir":"ba","delay":"3ms","loss":{"kind":"bernoulli","p":1e-7}},{"at":"2s","link":"access","dir":"ab","loss":{"kind":"none"}}]`},
		"onoff app and tcp options": {`flows.f0.app={"kind":"onoff","on":"1.5s","off":"250ms"}`,
			`flows.f0.tcp={"sack":false,"ecn":true,"mss":"1000B","init_cwnd":4294967295,"sndbuf":"unlimited","rcvbuf_init":"2000B","rcvbuf_max":"1GiB","gro_interval":"0.5ms"}`,
			"flows.f0.size=1234567", "flows.f0.start=3ps"},
		"greedy app's write size": {`flows.f0.app={"write":"131073B"}`},
		"rate app, sampled trace, odd sizes": {`flows.f0.app={"kind":"rate","rate":"1234bps"}`, `trace={"detail":"sampled","interval":"1ns"}`,
			"flows.p0.packet_size=1501", "links.bottleneck.ab.qdisc.limit=0.125BDP", "runtime.seed=18446744073709551615"},
	}
	for name, sets := range variants {
		raw, err := Apply([]byte(baseJSON), sets)
		if err != nil {
			t.Fatalf("Apply(%s): %v", name, err)
		}
		inputs[name] = raw
	}
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) {
			s := mustParse(t, raw)
			back := mustParse(t, s.Canonical())
			if d := cmp.Diff(s, back); d != "" {
				t.Errorf("Parse(Canonical) mismatch (-first +round trip):\n%s", d)
			}
			if back.Hash() != s.Hash() {
				t.Errorf("Hash after round trip = %s, want %s", back.Hash(), s.Hash())
			}
		})
	}
}

// A FIFO without limits, written "unlimited" or built in Go with the zero
// QueueLimit, is "unlimited" in the canonical form, which parses back to
// the same scenario (it was "0B", which the parser refuses).
func TestCanonicalUnlimitedFIFO(t *testing.T) {
	raw, err := Apply([]byte(baseJSON), []string{"links.bottleneck.ab.qdisc.limit=unlimited"})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, raw)
	if got := s.Links[1].AB.Qdisc.Limit; got != (QueueLimit{}) {
		t.Fatalf("limit = %v, want the zero QueueLimit", got)
	}
	s.Links[0].AB.Qdisc.Limit = QueueLimit{} // as a Go caller builds it
	back := mustParse(t, s.Canonical())
	if diff := cmp.Diff(s, back); diff != "" {
		t.Errorf("Parse(Canonical()) differs (-built +parsed):\n%s", diff)
	}
}

// A PIE queue's canonical form spells out pie_params_init's defaults:
// limit 1000, target and tupdate 15 ms, alpha 2, beta 20, ECN, byte mode
// and the drain-rate estimator off.
func TestCanonicalPIEDefaults(t *testing.T) {
	raw, err := Apply([]byte(baseJSON), []string{`links.bottleneck.ab.qdisc={"kind":"pie"}`})
	if err != nil {
		t.Fatal(err)
	}
	want := `"qdisc":{"alpha":2,"beta":20,"bytemode":false,"dq_rate_estimator":false,"ecn":false,"kind":"pie","limit":"1000p","target":"15ms","tupdate":"15ms"}`
	if got := string(mustParse(t, raw).Canonical()); !strings.Contains(got, want) {
		t.Errorf("canonical form lacks %s:\n%s", want, got)
	}
	// fq_pie_init: PIE's, with limit 10240, 1024 flows, one MTU of quantum
	// and ecn_prob 10 %.
	raw, err = Apply([]byte(baseJSON), []string{`links.bottleneck.ab.qdisc={"kind":"fq_pie"}`})
	if err != nil {
		t.Fatal(err)
	}
	want = `"qdisc":{"alpha":2,"beta":20,"bytemode":false,"dq_rate_estimator":false,"ecn":false,"ecn_prob":10,"flows":1024,"kind":"fq_pie","limit":"10240p","quantum":"1500B","target":"15ms","tupdate":"15ms"}`
	if got := string(mustParse(t, raw).Canonical()); !strings.Contains(got, want) {
		t.Errorf("canonical form lacks %s:\n%s", want, got)
	}
}
