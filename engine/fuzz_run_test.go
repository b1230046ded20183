package engine

import (
	"encoding/json"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
)

// FuzzRun builds and runs a built-in with up to three --set overrides the
// fuzzer writes, for at most 100,000 events. What Prepare accepts must
// build, or be refused by New with an error, never a panic; it must then
// run without a panic or a broken liveness invariant (TestMain's hook),
// and its summary must encode. The parse fuzzers (config.FuzzParse,
// FuzzApply) stop at the config; this reaches the engine.
func FuzzRun(f *testing.F) {
	var names []string
	for _, b := range config.Builtins() {
		names = append(names, b.Name)
	}
	index := func(name string) uint8 {
		for i, n := range names {
			if n == name {
				return uint8(i)
			}
		}
		f.Fatalf("no built-in %q", name)
		return 0
	}
	for _, s := range []struct{ name, a, b, c string }{
		{"p-rtr-p", `links.bottleneck.ab.jitter={"kind":"gaussian","sigma":"2ms","order":"reorder"}`, "flows.f0.cc=bbr", ""},
		{"p-rtr-p", `links.bottleneck.ab.capacity={"states":[{"rate":"10Mbps","dwell":"50ms"},{"rate":"1Mbps","dwell":"20ms"}],"transitions":[[0,1],[1,0]],"dips":{"every":"30ms","depth":0,"scale":"5ms","shape":1.5}}`, "", ""},
		{"p-rtr-p", `links.bottleneck.ab.outages={"start":"100ms","every":"300ms","duration":"50ms"}`, `links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.01,"p_bg":0.3,"loss_bad":0.5}`, "flows.f0.cc=reno"},
		{"cellular", "flows.f0.cc=bbr3", `flows.f0.ack_hold={"quantiles":["1ms","5ms","20ms"]}`, ""},
		{"wifi", `flows.f0.rcv_hold="1ms"`, "flows.f0.tcp.sack=false", ""},
		{"leo-handover", "runtime.duration=2s", "flows.f0.cc=bbr", ""},
		{"leo-handover", "trace.detail=change", `changes=[{"at":"100ms","link":"bottleneck","dir":"ab","outage":"50ms","delay":"30ms"}]`, "runtime.duration=1s"},
		{"dumbbell-n", "flows.bulk.count=8", `flows.bulk.start={"kind":"poisson","rate":"100/s"}`, `flows.bulk.size={"kind":"lognormal","median":"20KB","sigma":1.5}`},
		{"p-we-p", "flows.f0.cc=bbr", "runtime.seed=3", ""},
		{"dc-incast", "flows.incast.count=4", "", ""},
		{"rrul", "flows.ping.interval=10ms", "flows.up.cc=bbr", ""},
		{"l4s", "flows.f1.cc=dctcp", "", ""},
	} {
		f.Add(index(s.name), s.a, s.b, s.c)
	}
	f.Fuzz(func(t *testing.T, which uint8, a, b, c string) {
		name := names[int(which)%len(names)]
		raw, err := config.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		var sets []string
		for _, s := range []string{a, b, c} {
			if s != "" {
				sets = append(sets, s)
			}
		}
		p, err := Prepare(raw, sets)
		if err != nil {
			if _, ok := err.(*config.Errors); !ok {
				t.Fatalf("Prepare(%s, %q) error %v is %T, want *config.Errors", name, sets, err, err)
			}
			return
		}
		r, err := New(p.Scenario, nil)
		if err != nil {
			return
		}
		r.StepEvents(100_000)
		if _, err := json.Marshal(r.Summary(p.Hash)); err != nil {
			t.Fatalf("%s with %q: summary: %v", name, sets, err)
		}
	})
}
