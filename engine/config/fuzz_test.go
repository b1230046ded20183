package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds arbitrary bytes to Parse, seeded with the built-ins. Parse
// must never panic, and whatever it accepts must survive the canonical round
// trip unchanged.
func FuzzParse(f *testing.F) {
	for _, b := range Builtins() {
		raw, _ := Builtin(b.Name)
		f.Add(raw)
	}
	f.Add([]byte(baseJSON))
	f.Add([]byte(sameRun))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw, WithCCs(designCCs))
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("Parse error %v is %T, want *Errors", err, err)
			}
			return
		}
		back, err := Parse(s.Canonical(), WithCCs(designCCs))
		if err != nil {
			t.Fatalf("Parse(Canonical) error: %v\ncanonical: %s", err, s.Canonical())
		}
		if d := cmp.Diff(s, back); d != "" {
			t.Fatalf("Parse(Canonical) mismatch (-first +round trip):\n%s", d)
		}
	})
}

// FuzzApply feeds arbitrary --set overrides to Apply on a valid scenario,
// which reaches valid scenarios far more often than byte mutation does. Apply
// must never panic nor emit invalid JSON, and what then parses must survive
// the canonical round trip.
func FuzzApply(f *testing.F) {
	for _, s := range []string{"runtime.seed=7", "links.bottleneck.ab.qdisc.limit=2BDP", "flows.f0.tcp={}", "changes.0.at=1s", "a.b.c=", "links.x=", "links.access.ab.loss.p=0.5", "flows.f0.app.on=1.5s", "links.bottleneck.ab.jitter.sigma=3",
		// Whole lists and objects: the newer node kinds, routing, groups,
		// pings, receive-path models, path models and changes.
		`nodes=[{"id":"h1","kind":"endpoint"},{"id":"r1","kind":"router","routing":"spray"},{"id":"sw","kind":"switch"},{"id":"h2","kind":"endpoint"}]`,
		`nodes.r1={"id":"r1","kind":"proxy"}`,
		`nodes.r1.routing=ecmp`,
		`flows=[{"group":"g","count":3,"src":["h1"],"dst":"h2","cc":"reno","start":{"kind":"periodic","every":"10ms","batch":2},"size":{"kind":"lognormal","median":"20KB","sigma":1}}]`,
		`flows.f0={"id":"f0","src":"h1","dst":"h2","cc":"bbr","rcv_hold":"1ms","ack_hold":{"quantiles":["1ms","5ms"]}}`,
		`flows.f0.ack_grant={"profile":"lte"}`,
		`flows.p0={"id":"p0","src":"h1","dst":"h2","cc":"ping","interval":"10ms","packet_size":"428B"}`,
		`links.bottleneck.ab={"capacity":{"states":[{"rate":"10Mbps","dwell":"50ms"},{"rate":"1Mbps","dwell":"20ms"}],"transitions":[[0,1],[1,0]]},"outages":{"start":"100ms","every":"300ms","duration":"50ms"}}`,
		`links.bottleneck.ab.outages=[{"at":"1s","duration":"100ms"},{"at":"2s","duration":"1ms"}]`,
		`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.01,"p_bg":0.3,"loss_bad":0.5,"position":"post"}`,
		`links.bottleneck.ab.jitter={"kind":"pareto","scale":"1ms","shape":1.5,"order":"reorder"}`,
		`changes=[{"at":"1s","link":"bottleneck","dir":"ab","outage":"50ms","delay":"30ms","loss":{"kind":"bernoulli","p":0.1}}]`,
		`changes.0={"at":"0s","link":"access","dir":"ba","rate":"1Mbps"}`,
		`changes.0.link=access`,
		`links=[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		out, err := Apply([]byte(baseJSON), []string{set})
		if err != nil {
			return
		}
		if _, err := decodeTree(out); err != nil {
			t.Fatalf("Apply(%q) produced invalid JSON %s: %v", set, out, err)
		}
		s, err := Parse(out)
		if err != nil {
			return
		}
		if d := cmp.Diff(s, mustParse(t, s.Canonical())); d != "" {
			t.Fatalf("Parse(Canonical) after Apply(%q) mismatch (-first +round trip):\n%s", set, d)
		}
	})
}
