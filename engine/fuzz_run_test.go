package engine

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// fuzzRunEvents bounds one FuzzRun execution's run.
const fuzzRunEvents = 100_000

// FuzzRun builds and runs a built-in, for at most fuzzRunEvents events,
// with overrides from two sources. knobs seeds a PCG stream that turns a
// few of the built-in's own values into others of their kind (a rate,
// delay, size, queue limit, probability or count scaled ×¼ … ×4, a
// switch flipped, another CC, another seed) and caps runtime.duration at
// 0.1–3 s; these mostly stay valid, so most executions run a simulation.
// knobs 0 changes nothing. Then up to three --set overrides the fuzzer
// writes: when the config refuses them (an *config.Errors, never another
// error or a panic), the run goes ahead with the knobs' overrides alone.
// What Prepare accepts must build, or be refused by New with an error,
// never a panic; it must then run without a panic or a broken liveness
// invariant (TestMain's hook), and its summary must encode. The parse
// fuzzers (config.FuzzParse, FuzzApply) stop at the config; this reaches
// the engine.
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
	for _, s := range []struct {
		name    string
		knobs   uint64
		a, b, c string
	}{
		{"p-rtr-p", 0, `links.bottleneck.ab.jitter={"kind":"gaussian","sigma":"2ms","order":"reorder"}`, "flows.f0.cc=bbr", ""},
		{"p-rtr-p", 0, `links.bottleneck.ab.capacity={"states":[{"rate":"10Mbps","dwell":"50ms"},{"rate":"1Mbps","dwell":"20ms"}],"transitions":[[0,1],[1,0]],"dips":{"every":"30ms","depth":0,"scale":"5ms","shape":1.5}}`, "", ""},
		{"p-rtr-p", 0, `links.bottleneck.ab.outages={"start":"100ms","every":"300ms","duration":"50ms"}`, `links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.01,"p_bg":0.3,"loss_bad":0.5}`, "flows.f0.cc=reno"},
		{"cellular", 0, "flows.f0.cc=bbr3", `flows.f0.ack_hold={"quantiles":["1ms","5ms","20ms"]}`, ""},
		{"wifi", 0, `flows.f0.rcv_hold="1ms"`, "flows.f0.tcp.sack=false", ""},
		{"leo-handover", 0, "runtime.duration=2s", "flows.f0.cc=bbr", ""},
		{"p-rtr-p", 0, "runtime.kernel_clock=aligned", "flows.f0.cc=westwood", ""},
		{"leo-handover", 0, "trace.detail=change", `changes=[{"at":"100ms","link":"bottleneck","dir":"ab","outage":"50ms","delay":"30ms"}]`, "runtime.duration=1s"},
		{"dumbbell-n", 0, "flows.bulk.count=8", `flows.bulk.start={"kind":"poisson","rate":"100/s"}`, `flows.bulk.size={"kind":"lognormal","median":"20KB","sigma":1.5}`},
		{"p-we-p", 0, "flows.f0.cc=bbr", "runtime.seed=3", ""},
		{"dc-incast", 0, "flows.incast.count=4", "", ""},
		{"rrul", 0, "flows.ping.interval=10ms", "flows.up.cc=bbr", ""},
		{"l4s", 0, "flows.f1.cc=dctcp", "", ""},
	} {
		f.Add(index(s.name), s.knobs, s.a, s.b, s.c)
	}
	// Every built-in with its values moved by a few knobs and nothing
	// written: runs through varied valid configs from the first execution.
	for i := range names {
		for k := range uint64(4) {
			f.Add(uint8(i), uint64(i)<<8|k+1, "", "", "")
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, knobs uint64, a, b, c string) {
		name := names[int(which)%len(names)]
		raw, err := config.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		base := knobSets(t, raw, knobs)
		var sets []string
		for _, s := range []string{a, b, c} {
			if s != "" {
				sets = append(sets, s)
			}
		}
		p, err := Prepare(raw, append(slices.Clip(base), sets...))
		if err != nil && len(sets) > 0 {
			if _, ok := err.(*config.Errors); !ok {
				t.Fatalf("Prepare(%s, %q) error %v is %T, want *config.Errors", name, append(base, sets...), err, err)
			}
			sets = nil
			p, err = Prepare(raw, base)
		}
		if err != nil {
			if _, ok := err.(*config.Errors); !ok {
				t.Fatalf("Prepare(%s, %q) error %v is %T, want *config.Errors", name, base, err, err)
			}
			return
		}
		r, err := New(p.Scenario, nil)
		if err != nil {
			return
		}
		r.StepEvents(fuzzRunEvents)
		if _, err := json.Marshal(r.Summary(p.Hash)); err != nil {
			t.Fatalf("%s with %q: summary: %v", name, append(base, sets...), err)
		}
	})
}

// knobLeaf is a value of a built-in that knobSets may change: its --set
// path and its JSON value.
type knobLeaf struct {
	path string
	v    any
}

// knobSkip are the keys whose values knobSets leaves alone.
var knobSkip = map[string]bool{"id": true, "group": true, "name": true, "description": true, "kind": true,
	"a": true, "b": true, "src": true, "dst": true, "attach": true, "link": true, "dir": true, "file": true}

// knobLeaves lists a scenario's leaves, objects walked by key and arrays
// by id (a group by its name) or else by index, as --set reaches them;
// names, kinds, node references and files are left out.
func knobLeaves(tree any) []knobLeaf {
	var out []knobLeaf
	var walk func(path string, v any)
	join := func(path, seg string) string {
		if path == "" {
			return seg
		}
		return path + "." + seg
	}
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if knobSkip[k] || path == "runtime" && k == "duration" { // the duration is capped apart
					continue
				}
				walk(join(path, k), v[k])
			}
		case []any:
			for i, e := range v {
				seg := strconv.Itoa(i)
				if m, ok := e.(map[string]any); ok {
					if id, ok := m["id"].(string); ok {
						seg = id
					} else if g, ok := m["group"].(string); ok {
						seg = g
					}
				}
				walk(join(path, seg), e)
			}
		default:
			out = append(out, knobLeaf{path, v})
		}
	}
	walk("", tree)
	return out
}

// knobSets turns knobs into --set overrides of raw, a built-in: the run's
// duration capped at 0.1–3 s, a new seed, and one to four of its values
// changed within their kind (knobMove). knobs 0 gives none.
func knobSets(t *testing.T, raw []byte, knobs uint64) []string {
	if knobs == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var tree map[string]any
	if err := d.Decode(&tree); err != nil {
		t.Fatalf("built-in: %v", err)
	}
	r := rand.New(rand.NewPCG(knobs, 0x6b6e6f6273))
	dur, err := sim.ParseDuration(tree["runtime"].(map[string]any)["duration"].(string))
	if err != nil {
		t.Fatalf("built-in runtime.duration: %v", err)
	}
	capped := []sim.Duration{100 * sim.Millisecond, 300 * sim.Millisecond, sim.Second, 3 * sim.Second}[r.IntN(4)]
	sets := []string{"runtime.duration=" + min(dur, capped).String(), "runtime.seed=" + strconv.FormatUint(r.Uint64N(1<<32), 10)}
	leaves := knobLeaves(tree)
	for range 1 + r.IntN(4) {
		l := leaves[r.IntN(len(leaves))]
		if v, ok := knobMove(r, l); ok {
			sets = append(sets, l.path+"="+v)
		}
	}
	return sets
}

// knobMove returns another value of a leaf's kind, as --set writes it: a
// duration, rate or size scaled by ¼, ½, 2 or 4; a queue limit in packets
// scaled so, or one of 0.5–4 BDP; a probability halved, doubled (below 1)
// or 0; another number scaled (an integer at least 1); a switch flipped;
// another registered CC. ok is false for a leaf of no such kind.
func knobMove(r *rand.Rand, l knobLeaf) (string, bool) {
	num, den := []int64{1, 1, 2, 4}[r.IntN(4)], []int64{4, 2, 1, 1}[r.IntN(4)]
	scale := func(x int64) int64 { return max(1, x/den*num) }
	switch v := l.v.(type) {
	case bool:
		return strconv.FormatBool(!v), true
	case json.Number:
		if n, err := v.Int64(); err == nil {
			if strings.HasSuffix(l.path, "seed") {
				return strconv.FormatUint(r.Uint64N(1<<32), 10), true
			}
			return strconv.FormatInt(scale(n), 10), true
		}
		x, err := v.Float64()
		if err != nil {
			return "", false
		}
		if x > 0 && x < 1 {
			x = []float64{0, x / 2, min(2*x, 0.99), x}[r.IntN(4)]
		} else {
			x = x * float64(num) / float64(den)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case string:
		if strings.HasSuffix(l.path, ".cc") {
			names := cc.Names()
			return names[r.IntN(len(names))], true
		}
		if strings.HasSuffix(v, "BDP") {
			return []string{"0.5BDP", "1BDP", "2BDP", "4BDP"}[r.IntN(4)], true
		}
		if n, err := strconv.ParseInt(strings.TrimSuffix(v, "p"), 10, 64); err == nil && strings.HasSuffix(v, "p") {
			return strconv.FormatInt(scale(n), 10) + "p", true
		}
		if x, err := sim.ParseDuration(v); err == nil {
			return sim.Duration(scale(int64(x))).String(), true
		}
		if x, err := units.ParseRate(v); err == nil {
			return units.BitRate(scale(int64(x))).String(), true
		}
		if x, err := units.ParseSize(v); err == nil {
			return units.Bytes(scale(int64(x))).String(), true
		}
	}
	return "", false
}
