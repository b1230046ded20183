package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

func TestApply(t *testing.T) {
	cases := []struct {
		name  string
		sets  []string
		check func(s *Scenario) (got, want any)
	}{
		{"seed as a JSON number", []string{"runtime.seed=7"},
			func(s *Scenario) (any, any) { return s.Runtime.Seed, uint64(7) }},
		{"flow by id, value as a string", []string{"flows.f0.start=1s"},
			func(s *Scenario) (any, any) { return s.Flows[0].Start, sim.Second }},
		{"link by id, deep", []string{"links.bottleneck.ab.loss.p=0.03"},
			func(s *Scenario) (any, any) { return s.Links[1].AB.Loss, Loss{Kind: Bernoulli, P: 0.03} }},
		{"a name that is not JSON stays a string", []string{"flows.f0.cc=bbr"},
			func(s *Scenario) (any, any) { return s.Flows[0].CC, "bbr" }},
		{"a shared link value", []string{"links.bottleneck.rate=1Gbps"},
			func(s *Scenario) (any, any) {
				return []units.BitRate{s.Links[1].AB.Rate, s.Links[1].BA.Rate}, []units.BitRate{units.Gbps, units.Gbps}
			}},
		{"creates an absent direction and qdisc", []string{"links.bottleneck.ba.qdisc.limit=2BDP"},
			func(s *Scenario) (any, any) {
				return s.Links[1].BA, Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{MilliBDPs: 2000}}}
			}},
		{"a greedy application's write size", []string{"flows.f0.app.write=128KiB"},
			func(s *Scenario) (any, any) { return s.Flows[0].App, AppPattern{Kind: Greedy, Write: 128 * units.KiB} }},
		{"creates an absent tcp object", []string{"flows.f0.tcp.sack=false"},
			func(s *Scenario) (any, any) { return s.Flows[0].TCP.SACK, false }},
		{"creates an absent trace object", []string{"trace.detail=sampled"},
			func(s *Scenario) (any, any) {
				return s.Trace, Trace{Detail: TraceSampled, Interval: 10 * sim.Millisecond}
			}},
		{"a JSON object value", []string{`links.access.ab.jitter={"kind":"gaussian","sigma":"2us"}`},
			func(s *Scenario) (any, any) {
				return s.Links[0].AB.Jitter, Jitter{Kind: Gaussian, Sigma: 2 * sim.Microsecond}
			}},
		{"changes by index", []string{"changes.0.at=6s"},
			func(s *Scenario) (any, any) { return s.Changes[0].At, 6 * sim.Second }},
		{"later overrides win", []string{"runtime.seed=7", "runtime.seed=8"},
			func(s *Scenario) (any, any) { return s.Runtime.Seed, uint64(8) }},
		{"null restores a default", []string{"flows.f0.tcp.sack=false", "flows.f0.tcp=null"},
			func(s *Scenario) (any, any) { return s.Flows[0].TCP, DefaultTCPOptions() }},
		{"a value containing '='", []string{"description=a=b"},
			func(s *Scenario) (any, any) { return s.Description, "a=b" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Apply([]byte(baseJSON), tc.sets)
			if err != nil {
				t.Fatalf("Apply(%q) error: %v", tc.sets, err)
			}
			got, want := tc.check(mustParse(t, out))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Apply(%q) mismatch (-want +got):\n%s", tc.sets, d)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	cases := []struct {
		name string
		set  string
		want want
	}{
		{"unknown top-level key", "nosuch=1", want{"nosuch", `the scenario format has no "nosuch" here`}},
		{"unknown key deep down", "links.bottleneck.ab.bogus=1", want{"links.bottleneck.ab.bogus", `no "links.bottleneck.ab.bogus" here; expected one of capacity, delay, duplicate, jitter, loss, outages, overhead, qdisc, rate, trace`}},
		{"no such flow", "flows.f9.start=1s", want{"flows.f9.start", `no element with id "f9" in "flows"; its ids: f0, p0`}},
		{"no such change", "changes.3.at=1s", want{"changes.3.at", `no element "3" in "changes"`}},
		{"change by id", "changes.c0.at=1s", want{"changes.c0.at", `no element "c0" in "changes" (1 of them, addressed by index from 0)`}},
		{"into a value", "links.bottleneck.rate.x=1", want{"links.bottleneck.rate.x", `"links.bottleneck.rate" is a value and has no field "x"`}},
		{"a direction key that exists only on flows", "links.bottleneck.ab.cc=reno", want{"links.bottleneck.ab.cc", "has no"}},
		{"no '='", "runtime.seed", want{"runtime.seed", "path=value"}},
		{"a value that is not UTF-8", "name=a\xffb", want{"name", "not UTF-8 at byte 6"}},
	}
	if _, err := Apply([]byte(`[]`), []string{"runtime.duration=1s"}); err == nil || !strings.Contains(err.Error(), "runtime.duration: the scenario is an array, not an object") {
		t.Errorf("Apply to an array: error = %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Apply([]byte(baseJSON), []string{tc.set})
			if err == nil {
				t.Fatalf("Apply(%q) = nil error, want %s: %s", tc.set, tc.want.path, tc.want.reason)
			}
			list := fieldErrors(t, err)
			if len(list) != 1 || !matches(list[0], tc.want) {
				t.Errorf("Apply(%q) error = %v, want %s: …%s…", tc.set, err, tc.want.path, tc.want.reason)
			}
		})
	}
}

func TestApplyReportsEveryError(t *testing.T) {
	_, err := Apply([]byte(baseJSON), []string{"nosuch=1", "runtime.seed=1", "flows.f9.cc=reno"})
	list := fieldErrors(t, err)
	if len(list) != 2 || list[0].Path != "nosuch" || list[1].Path != "flows.f9.cc" {
		t.Errorf("Apply errors = %v, want nosuch and flows.f9.cc", err)
	}
}

func TestApplyOnAnAbsentArray(t *testing.T) {
	_, err := Apply([]byte(`{"runtime":{"duration":"1s"}}`), []string{"flows.f0.cc=reno"})
	list := fieldErrors(t, err)
	if len(list) != 1 || !matches(list[0], want{"flows.f0.cc", `"flows" is absent`}) {
		t.Errorf("Apply error = %v, want flows.f0.cc: \"flows\" is absent", err)
	}
}

func TestOverride(t *testing.T) {
	out, err := Override([]byte(baseJSON), "runtime.seed", uint64(1<<63))
	if err != nil {
		t.Fatalf("Override: %v", err)
	}
	if got := mustParse(t, out).Runtime.Seed; got != 1<<63 {
		t.Errorf("Override(runtime.seed, 2^63) seed = %d, want %d", got, uint64(1<<63))
	}
	// A string is never parsed as JSON: "7" stays a string and the seed,
	// which must be a number, is then rejected by Parse.
	out, err = Override([]byte(baseJSON), "runtime.seed", "7")
	if err != nil {
		t.Fatalf("Override: %v", err)
	}
	if _, err := Parse(out); err == nil {
		t.Errorf("Parse after Override(runtime.seed, \"7\") = nil error, want a type error")
	}
}

// TestOverrideAllOrder checks that a whole object is set before a path
// inside it, whatever the map's iteration order.
func TestOverrideAllOrder(t *testing.T) {
	values := map[string]any{
		"links.bottleneck.ab.qdisc.limit": "3BDP",
		"links.bottleneck.ab":             map[string]any{"qdisc": map[string]any{"kind": "codel"}},
		"flows.f0.start":                  "2s",
	}
	out, err := OverrideAll([]byte(baseJSON), values)
	if err != nil {
		t.Fatalf("OverrideAll: %v", err)
	}
	s := mustParse(t, out)
	wantQ := Qdisc{Kind: CoDel, Limit: QueueLimit{MilliBDPs: 3000}, Target: 5 * sim.Millisecond, Interval: 100 * sim.Millisecond}
	if d := cmp.Diff(wantQ, s.Links[1].AB.Qdisc); d != "" {
		t.Errorf("links[bottleneck].ab.qdisc mismatch (-want +got):\n%s", d)
	}
	if s.Flows[0].Start != 2*sim.Second {
		t.Errorf("flows[f0].start = %v, want 2s", s.Flows[0].Start)
	}
}

// An override that replaces an object by one without some of its fields
// says so, naming them, and so does one that sets a value or an object to
// null; one that sets a field inside, or replaces an object with all its
// fields, or a value, says nothing.
func TestApplyNotesDroppedFields(t *testing.T) {
	raw := []byte(`{"name":"n","runtime":{"duration":"1s"},"nodes":[{"id":"a"},{"id":"b"}],
	 "links":[{"id":"l","a":"a","b":"b","rate":"10Mbps","delay":"1ms"}],
	 "flows":[{"id":"f0","src":"a","dst":"b","cc":"cubic","tcp":{"gro_interval":"200us","pacing":true}}]}`)
	cases := []struct {
		set  string
		want []string
	}{
		{`flows.f0.tcp={"hz":250}`, []string{`set flows.f0.tcp replaces the whole object and drops its "gro_interval", "pacing"; to change one field, set flows.f0.tcp.FIELD alone`}},
		{`flows.f0.tcp={"hz":250,"pacing":true}`, []string{`set flows.f0.tcp replaces the whole object and drops its "gro_interval"; to change one field, set flows.f0.tcp.FIELD alone`}},
		{`flows.f0={"id":"f0","src":"a","dst":"b"}`, []string{`set flows.f0 replaces the whole object and drops its "cc", "tcp"; to change one field, set flows.f0.FIELD alone`}},
		{`flows.f0.tcp.hz=250`, nil},
		{`flows.f0.tcp={"hz":250,"pacing":false,"gro_interval":"0s"}`, nil},
		{`flows.f0.cc=bbr`, nil},
		{`links.l.ab={"rate":"5Mbps"}`, nil}, // nothing was there
		// null removes a value or an object, and with it what it held.
		{`flows.f0.tcp=null`, []string{`set flows.f0.tcp=null removes it and its "gro_interval", "pacing": their defaults apply`}},
		{`flows.f0.cc=null`, []string{`set flows.f0.cc=null removes its value "cubic": the default applies`}},
		{`runtime={}`, []string{`set runtime replaces the whole object and drops its "duration"; to change one field, set runtime.FIELD alone`}},
		{`links.l.ab=null`, nil}, // nothing was there
		// A bare number is a count of the base unit: one that is most likely
		// a slip (a delay under a microsecond, a rate under 1 kbps) says so.
		{`links.l.delay=20`, []string{`set links.l.delay=20 is 20 picoseconds (a bare number is a count of the base unit); write it with its unit, such as "20ms" or "20s", if that is not what you mean`}},
		{`links.l.rate=100`, []string{`set links.l.rate=100 is 100 bits per second (a bare number is a count of the base unit); write it with its unit, such as "100Mbps" or "100kbps", if that is not what you mean`}},
		{`flows.f0.start=5`, []string{`set flows.f0.start=5 is 5 picoseconds (a bare number is a count of the base unit); write it with its unit, such as "5ms" or "5s", if that is not what you mean`}},
		{`links.l.delay=20000000`, nil}, // 20 µs, written out in picoseconds
		{`links.l.rate=100000000`, nil},
		{`links.l.delay="20ms"`, nil},
	}
	for _, c := range cases {
		_, notes, err := ApplyNoted(raw, []string{c.set})
		if err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		if diff := cmp.Diff(c.want, notes); diff != "" {
			t.Errorf("%s: notes (-want +got):\n%s", c.set, diff)
		}
	}
}

// groupFormsJSON is a flow group whose src, start and size are in their object
// forms and whose dst is a node id.
const groupFormsJSON = `{"runtime": {"duration": "1s"},
 "nodes": [{"id": "r1", "kind": "router"}, {"id": "srv", "kind": "endpoint"}],
 "links": [{"id": "l", "a": "r1", "b": "srv", "rate": "1Gbps", "delay": "1ms"}],
 "flows": [{"group": "web", "count": 4, "cc": "cubic",
            "src": {"attach": "r1", "rate": "10Gbps", "delay": "1ms"}, "dst": "srv",
            "start": {"kind": "poisson", "rate": "200/s"},
            "size": {"kind": "lognormal", "median": "20KB", "sigma": 1.5}}]}`

// A field of a value in its object form (a group's host object, start and
// size distributions) is reached by its path, as any object's.
func TestApplyGroupObjectForms(t *testing.T) {
	out, err := Apply([]byte(groupFormsJSON), []string{"flows.web.src.rate=1Gbps", "flows.web.src.qdisc.limit=100p",
		"flows.web.start.rate=50/s", "flows.web.size.median=40KB"})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	g := mustParse(t, out).Groups[0]
	got := []any{g.Src.Attach, g.Src.Link.Rate, g.Src.Link.Qdisc.Limit, g.Start.Kind, g.Start.PerSecond, g.Size.Median, g.Size.Sigma}
	wantG := []any{"r1", units.Gbps, QueueLimit{Packets: 100}, StartPoisson, 50.0, units.Bytes(40_000), 1.5}
	if d := cmp.Diff(wantG, got); d != "" {
		t.Errorf("group after Apply (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		set  string
		want want
	}{
		{"flows.web.dst.rate=1Gbps", want{"flows.web.dst.rate", `"flows.web.dst" is "srv", which has no field "rate"; only its object form has fields`}},
		{"flows.web.src.cc=reno", want{"flows.web.src.cc", `the scenario format has no "flows.web.src.cc" here; expected one of attach, capacity, delay`}},
		{"flows.web.start.nosuch=1", want{"flows.web.start.nosuch", `expected one of at, batch, every, jitter, kind, rate, span`}},
	} {
		_, err := Apply([]byte(groupFormsJSON), []string{tc.set})
		if list := fieldErrors(t, err); len(list) != 1 || !matches(list[0], tc.want) {
			t.Errorf("Apply(%q) error = %v, want %s: …%s…", tc.set, err, tc.want.path, tc.want.reason)
		}
	}
	_, err = Apply([]byte(baseJSON), []string{"flows.f0.size.value=1MB"})
	if list := fieldErrors(t, err); len(list) != 1 || !matches(list[0], want{"flows.f0.size.value", `"flows.f0.size" is absent; set the whole value first`}) {
		t.Errorf("Apply(flows.f0.size.value) on a flow without size: error = %v, want it to ask for the whole value", err)
	}
}

// A group's host object without rate or delay is told to give them in the
// host object, which has no "ab" of its own.
func TestHostObjectMissingRate(t *testing.T) {
	raw, err := Apply([]byte(groupFormsJSON), []string{`flows.web.src={"attach":"r1"}`})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	_, err = Parse(raw)
	list := fieldErrors(t, err)
	if len(list) != 2 || !matches(list[0], want{"flows[web].src.rate", `missing; give "rate" in the host object`}) ||
		!matches(list[1], want{"flows[web].src.delay", `missing; give "delay" in the host object`}) {
		t.Errorf("Parse errors = %v, want rate and delay missing from flows[web].src", err)
	}
}
