package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// parseSets applies --set overrides to baseJSON and parses the result.
func parseSets(t *testing.T, sets []string, opts ...Option) (*Scenario, error) {
	t.Helper()
	raw, err := Apply([]byte(baseJSON), sets)
	if err != nil {
		t.Fatalf("Apply(%q): %v", sets, err)
	}
	return Parse(raw, opts...)
}

// --set reaches every parameter of every model, and the parser reads each
// into the model it belongs to.
func TestSetReachesModelParameters(t *testing.T) {
	ab := "links.bottleneck.ab."
	for _, tc := range []struct {
		name string
		sets []string
		got  func(d Direction) any
		want any
	}{
		{"gilbert_elliott", []string{ab + "loss.kind=gilbert_elliott", ab + "loss.p_gb=0.01", ab + "loss.p_bg=0.3", ab + "loss.loss_good=0.001", ab + "loss.loss_bad=0.8", ab + "loss.position=post", ab + "loss.p=null"},
			func(d Direction) any { return d.Loss }, Loss{Kind: GilbertElliott, PGB: 0.01, PBG: 0.3, LossGood: 0.001, LossBad: 0.8, Position: LossPost}},
		{"gilbert_elliott defaults", []string{`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.1,"p_bg":0.5}`},
			func(d Direction) any { return d.Loss }, Loss{Kind: GilbertElliott, PGB: 0.1, PBG: 0.5, LossBad: 1}},
		{"periodic", []string{`links.bottleneck.ab.loss={"kind":"periodic","every":50}`},
			func(d Direction) any { return d.Loss }, Loss{Kind: Periodic, Every: 50}},
		{"bernoulli_train", []string{`links.bottleneck.ab.loss={"kind":"bernoulli_train","p":0.001}`, ab + "loss.train_length=4.5"},
			func(d Direction) any { return d.Loss }, Loss{Kind: BernoulliTrain, P: 0.001, TrainLength: 4.5}},
		{"gaussian zero clamp reorder", []string{ab + "jitter.kind=gaussian", ab + "jitter.sigma=2ms", ab + "jitter.clamp=zero", ab + "jitter.order=reorder"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Gaussian, Sigma: 2 * sim.Millisecond, Clamp: ClampZero, Order: OrderReorder}},
		{"overhead", []string{ab + "overhead=14B"},
			func(d Direction) any { return d.Overhead }, units.Bytes(14)},
		{"duplicate", []string{ab + "duplicate=0.01"},
			func(d Direction) any { return d.Duplicate }, 0.01},
		{"gaussian total clamp", []string{ab + "jitter.kind=gaussian", ab + "jitter.sigma=2ms", ab + "jitter.clamp=total"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Gaussian, Sigma: 2 * sim.Millisecond, Clamp: ClampTotal}},
		{"uniform", []string{`links.bottleneck.ab.jitter={"kind":"uniform","min":"1ms","max":"3ms"}`},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Uniform, Min: sim.Millisecond, Max: 3 * sim.Millisecond}},
		{"pareto", []string{`links.bottleneck.ab.jitter={"kind":"pareto","scale":"1ms","shape":1.5}`, ab + "jitter.cap=40ms"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Pareto, Scale: sim.Millisecond, Shape: 1.5, Cap: 40 * sim.Millisecond}},
		{"burst", []string{`links.bottleneck.ab.jitter={"kind":"burst","period":"100ms","length":"10ms","extra":"20ms"}`},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Burst, Period: 100 * sim.Millisecond, Length: 10 * sim.Millisecond, Extra: 20 * sim.Millisecond}},
		{"wifi_txop", []string{`links.bottleneck.ab.jitter={"kind":"wifi_txop","interval":"3ms","burst_size":64}`, ab + "jitter.sigma=200us"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: WiFiTXOP, Interval: 3 * sim.Millisecond, BurstSize: 64, Sigma: 200 * sim.Microsecond}},
		{"lte default period", []string{ab + "jitter.kind=lte_subframe"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: LTESubframe, Period: sim.Millisecond}},
		{"5g_nr", []string{ab + "jitter.kind=5g_nr"},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: NR5G, Period: 500 * sim.Microsecond}},
		{"reorder", []string{`links.bottleneck.ab.jitter={"kind":"reorder","p":0.02,"delay":"2ms"}`},
			func(d Direction) any { return d.Jitter }, Jitter{Kind: Reorder, Order: OrderReorder, P: 0.02, Delay: 2 * sim.Millisecond}},
		{"capacity state rate", []string{`links.bottleneck.ab.capacity={"states":[{"rate":"50Mbps","dwell":"2s"},{"rate":"10Mbps","dwell":"1s"}],"transitions":[[0,1],[1,0]]}`,
			ab + "capacity.states.1.rate=20Mbps", `links.bottleneck.ab.capacity.grant={"start":0.2,"ramp":"100ms"}`},
			func(d Direction) any { return []any{d.Rate, d.Capacity.States[1], *d.Capacity.Grant} },
			[]any{50 * units.Mbps, CapacityState{Rate: 20 * units.Mbps, Dwell: sim.Second}, CapacityGrant{Start: 0.2, Ramp: 100 * sim.Millisecond}}},
		{"outages", []string{`links.bottleneck.ab.outages={"windows":[{"at":"1s","duration":"100ms"}]}`, ab + "outages.windows.0.duration=150ms", ab + "outages.every=2s", ab + "outages.duration=50ms", ab + "outages.drop_on_outage=true"},
			func(d Direction) any { return *d.Outages },
			Outages{Windows: []OutageWindow{{At: sim.Second, Duration: 150 * sim.Millisecond}}, Every: 2 * sim.Second, Duration: 50 * sim.Millisecond, DropOnOutage: true}},
		// The "list of {at, duration}": short for the object's windows.
		{"outage list", []string{`links.bottleneck.ab.outages=[{"at":"1s","duration":"100ms"},{"at":"3s","duration":"200ms"}]`, ab + "outages.1.at=4s"},
			func(d Direction) any { return *d.Outages },
			Outages{Windows: []OutageWindow{{At: sim.Second, Duration: 100 * sim.Millisecond}, {At: 4 * sim.Second, Duration: 200 * sim.Millisecond}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSets(t, tc.sets)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := tc.got(bottleneck(s).AB); !equal(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func equal(a, b any) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }

// Every bad model parameter is reported with its path and the reason.
func TestModelErrors(t *testing.T) {
	ab := "links.bottleneck.ab."
	for _, tc := range []struct {
		name string
		sets []string
		want want
	}{
		{"p under periodic", []string{ab + "loss.kind=periodic", ab + "loss.every=3"}, want{"links[bottleneck].ab.loss.p", `only for loss kind "bernoulli", "bernoulli_train"`}},
		{"gilbert without p_bg", []string{`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.1}`}, want{"links[bottleneck].ab.loss.p_bg", "missing; gilbert_elliott loss needs p_gb, p_bg"}},
		{"gilbert that never moves", []string{`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0,"p_bg":0}`}, want{"links[bottleneck].ab.loss.p_gb", "both 0; the chain never moves"}},
		{"periodic every 0", []string{`links.bottleneck.ab.loss={"kind":"periodic","every":0}`}, want{"links[bottleneck].ab.loss.every", "0 is not an integer in [1, "}},
		{"train shorter than a packet", []string{`links.bottleneck.ab.loss={"kind":"bernoulli_train","p":0.1,"train_length":0.5}`}, want{"links[bottleneck].ab.loss.train_length", "below 1"}},
		{"bad position", []string{ab + "loss.position=middle"}, want{"links[bottleneck].ab.loss.position", `unknown value "middle"`}},
		{"position on none", []string{`links.bottleneck.ab.loss={"kind":"none","position":"post"}`}, want{"links[bottleneck].ab.loss.position", "only for loss kind"}},
		{"sigma under uniform", []string{`links.bottleneck.ab.jitter={"kind":"uniform","max":"1ms","sigma":"1ms"}`}, want{"links[bottleneck].ab.jitter.sigma", `only for jitter kind "gaussian", "wifi_txop"`}},
		{"uniform min above max", []string{`links.bottleneck.ab.jitter={"kind":"uniform","min":"2ms","max":"1ms"}`}, want{"links[bottleneck].ab.jitter.min", "above max"}},
		{"pareto shape negative", []string{`links.bottleneck.ab.jitter={"kind":"pareto","scale":"1ms","shape":-1}`}, want{"links[bottleneck].ab.jitter.shape", "not a positive finite number"}},
		{"burst longer than period", []string{`links.bottleneck.ab.jitter={"kind":"burst","period":"10ms","length":"20ms","extra":"1ms"}`}, want{"links[bottleneck].ab.jitter.length", "longer than the period"}},
		{"reorder kind fifo", []string{`links.bottleneck.ab.jitter={"kind":"reorder","p":0.1,"delay":"1ms","order":"fifo"}`}, want{"links[bottleneck].ab.jitter.order", "always reorders"}},
		{"wifi burst_size 0", []string{`links.bottleneck.ab.jitter={"kind":"wifi_txop","interval":"3ms","burst_size":0}`}, want{"links[bottleneck].ab.jitter.burst_size", "0 is not an integer in [1, "}},
		{"transitions row sum", []string{`links.bottleneck.ab={"capacity":{"states":[{"rate":"1Mbps","dwell":"1s"},{"rate":"2Mbps","dwell":"1s"}],"transitions":[[0.5,0.6],[1,0]]}}`}, want{"links[bottleneck].ab.capacity.transitions[0]", "sums to"}},
		{"capacity beside rate", []string{`links.bottleneck.ab={"rate":"1Mbps","capacity":{"states":[{"rate":"1Mbps","dwell":"1s"}]}}`}, want{"links[bottleneck].ab.capacity", `replaces rate`}},
		{"dwell too short", []string{`links.bottleneck.ab={"capacity":{"states":[{"rate":"1Mbps","dwell":"1us"}]}}`}, want{"links[bottleneck].ab.capacity.states[0].dwell", "is below"}},
		{"state without dwell", []string{`links.bottleneck.ab={"capacity":{"states":[{"rate":"1Mbps"}]}}`}, want{"links[bottleneck].ab.capacity.states[0].dwell", "missing"}},
		{"dip deeper than the rate", []string{`links.bottleneck.ab={"capacity":{"states":[{"rate":"1Mbps","dwell":"1s"}],"dips":{"every":"2s","depth":1.5,"scale":"20ms","shape":1.5}}}`}, want{"links[bottleneck].ab.capacity.dips.depth", "not a probability in [0, 1]"}},
		{"outage list entry without duration", []string{`links.bottleneck.ab.outages=[{"at":"1s"}]`}, want{"links[bottleneck].ab.outages[0].duration", "missing"}},
		{"outages neither list nor object", []string{`links.bottleneck.ab.outages="1s"`}, want{"links[bottleneck].ab.outages", `a list of {"at", "duration"} or an object`}},
		{"periodic outage too long", []string{`links.bottleneck.ab.outages={"every":"1s","duration":"2s"}`}, want{"links[bottleneck].ab.outages.duration", "shorter than every"}},
		{"trace not shipped", []string{`links.bottleneck.ab={"trace":{"file":"nope.trace"}}`}, want{"links[bottleneck].ab.trace.file", "no shipped trace"}},
		{"trace escapes", []string{`links.bottleneck.ab={"trace":{"file":"../../etc/passwd"}}`}, want{"links[bottleneck].ab.trace.file", "not a shipped trace"}},
		{"trace hash unknown", []string{`links.bottleneck.ab={"trace":{"sha256":"00"}}`}, want{"links[bottleneck].ab.trace.sha256", "no trace with this hash"}},
		{"change outage zero", []string{`changes.0={"at":"1s","link":"bottleneck","dir":"ab","outage":"0s"}`}, want{"changes[0].outage", "must be positive"}},
		{"change jitter bad kind", []string{`changes.0={"at":"1s","link":"bottleneck","dir":"ab","jitter":{"kind":"wobbly"}}`}, want{"changes[0].jitter.kind", `unknown value "wobbly"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSets(t, tc.sets)
			var fe *Errors
			if !errors.As(err, &fe) || !slices.ContainsFunc(fe.List, func(e FieldError) bool { return matches(e, tc.want) }) {
				t.Errorf("Parse errors = %v, want one at %s containing %q", err, tc.want.path, tc.want.reason)
			}
		})
	}
	// A row with a value that is not a probability says that, and only
	// that: its sum (here 1) is beside the point.
	_, err := parseSets(t, []string{`links.bottleneck.ab={"capacity":{"states":[{"rate":"1Mbps","dwell":"1s"},{"rate":"2Mbps","dwell":"1s"}],"transitions":[[-1,2],[1,0]]}}`})
	var fe *Errors
	if !errors.As(err, &fe) || len(fe.List) != 2 || !matches(fe.List[0], want{"links[bottleneck].ab.capacity.transitions[0][0]", "probability"}) ||
		!matches(fe.List[1], want{"links[bottleneck].ab.capacity.transitions[0][1]", "probability"}) {
		t.Errorf("negative transition: Parse errors = %v, want one per bad entry", err)
	}
}

// A refused probability is reported once, as refused: not again as a zero
// that leaves the Gilbert–Elliott chain still.
func TestGilbertBadProbabilityOnce(t *testing.T) {
	_, err := parseSets(t, []string{`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":1.5,"p_bg":0}`})
	var fe *Errors
	if !errors.As(err, &fe) {
		t.Fatalf("Parse error = %v, want field errors", err)
	}
	if len(fe.List) != 1 || !matches(fe.List[0], want{"links[bottleneck].ab.loss.p_gb", "not a probability"}) {
		t.Errorf("errors = %v, want only p_gb's refusal", fe.List)
	}
}

// A trace file is read relative to the scenario file's directory and
// travels in the canonical form by content: the canonical config parses
// without the file, and the hash depends on the trace's content, not on
// the file's name or place. A Mahimahi file with CRLF line ends and a
// missing final newline loads as the same trace.
func TestTraceFileEmbeddedByHash(t *testing.T) {
	dir := t.TempDir()
	text := "1\n1\n3\n5\n"
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.trace", text)
	write("sub/b.trace", strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\r\n"))
	parse := func(file string) *Scenario {
		s, err := parseSets(t, []string{`links.bottleneck.ab={"trace":{"file":"` + file + `"}}`}, WithDir(dir))
		if err != nil {
			t.Fatalf("Parse with %s: %v", file, err)
		}
		return s
	}
	a, b := parse("a.trace"), parse("sub/b.trace")
	sum := sha256.Sum256([]byte(text))
	tr := bottleneck(a).AB.Trace
	if tr == nil || tr.SHA256 != hex.EncodeToString(sum[:]) || !slices.Equal(tr.Opportunities, []uint64{1, 1, 3, 5}) {
		t.Fatalf("trace = %+v, want opportunities [1 1 3 5] with the file's sha256", tr)
	}
	// 4 opportunities of 12000 bit over 5 ms: 9.6 Mbps.
	if r := bottleneck(a).AB.Rate; r != 9600*units.Kbps {
		t.Errorf("nominal rate = %v, want 9.6Mbps", r)
	}
	if a.Hash() != b.Hash() {
		t.Errorf("the same trace under two names and line ends hashes differently")
	}
	canon := a.Canonical()
	if !strings.Contains(string(canon), `"traces":{"`+tr.SHA256+`":"1\n1\n3\n5\n"}`) {
		t.Errorf("canonical form does not embed the trace text by hash: %s", canon)
	}
	again, err := Parse(canon) // no WithDir: the file is not needed
	if err != nil {
		t.Fatalf("Parse(Canonical) without the file: %v", err)
	}
	if again.Hash() != a.Hash() {
		t.Errorf("canonical round trip changes the hash")
	}
	write("a.trace", "1\n2\n")
	if c := parse("a.trace"); c.Hash() == a.Hash() {
		t.Errorf("another trace content gives the same hash")
	}
	write("bad.trace", "1\n3\n2\n")
	_, err = parseSets(t, []string{`links.bottleneck.ab={"trace":{"file":"bad.trace"}}`}, WithDir(dir))
	if err == nil || !strings.Contains(err.Error(), "links[bottleneck].ab.trace.file: not a Mahimahi trace: line 3: timestamps must not decrease") {
		t.Errorf("decreasing trace: error = %v", err)
	}
	for text, want := range map[string]string{
		"1\n1000000001\n":           "line 2: 1000000001 ms is later than 1000000s",
		"1\n9223372036854\n":        "line 2: 9223372036854 ms is later than 1000000s", // its picoseconds overflow int64
		"1\n99999999999999999999\n": "line 2: 99999999999999999999 ms is later than 1000000s",
		"1\n2.5\n":                  `line 2: "2.5" is not a whole number of milliseconds`,
	} {
		write("far.trace", text)
		_, err = parseSets(t, []string{`links.bottleneck.ab={"trace":{"file":"far.trace"}}`}, WithDir(dir))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("trace %q: error = %v, want %q", text, err, want)
		}
	}
}

// The files a client sends with a scenario (WithFiles) stand for the files
// of a scenario file's directory, by the names the scenario gives them, and
// are looked up first; a name that is neither falls back to the shipped
// traces, so a built-in saved to a file of its own runs as the built-in.
func TestScenarioFilesSentOrShipped(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "my.trace"), []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := func(file string) []string {
		return []string{`links.bottleneck.ab={"trace":{"file":"` + file + `"}}`}
	}
	opportunities := func(s *Scenario, err error) []uint64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return bottleneck(s).AB.Trace.Opportunities
	}
	// Sent: the bytes sent, not the directory's file of the same name.
	sent := WithFiles(map[string][]byte{"my.trace": []byte("1\n1\n4\n")})
	if got := opportunities(parseSets(t, set("my.trace"), sent, WithDir(dir))); !slices.Equal(got, []uint64{1, 1, 4}) {
		t.Errorf("sent trace: opportunities %v, want [1 1 4]", got)
	}
	if got := opportunities(parseSets(t, set("my.trace"), WithDir(dir))); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("directory's trace: opportunities %v, want [1 2]", got)
	}
	// Shipped: 12 Mbps is one opportunity per millisecond.
	for _, opt := range []Option{WithDir(dir), sent, WithCCs(nil)} {
		got := opportunities(parseSets(t, set("traces/const-12mbps.trace"), opt))
		if len(got) < 2 || got[0] != 1 || got[1] != 2 {
			t.Errorf("shipped trace: opportunities %v…, want 1, 2, …", got[:min(3, len(got))])
		}
	}
	for _, c := range []struct {
		opt    Option
		reason string
	}{
		{sent, `no shipped trace "other.trace"; no file of that name was sent with the scenario`},
		{WithCCs(nil), `no shipped trace "other.trace"; a file is read relative to the scenario file only when the scenario comes from a file`},
		{WithDir(dir), `no shipped trace "other.trace"; no file ` + filepath.Join(dir, "other.trace")},
		{WithFiles(map[string][]byte{"other.trace": make([]byte, MaxTraceBytes+1)}), "trace file is larger than 32 MiB"},
	} {
		_, err := parseSets(t, set("other.trace"), c.opt)
		if err == nil || !strings.Contains(err.Error(), "links[bottleneck].ab.trace.file: "+c.reason) {
			t.Errorf("error = %v, want %q", err, c.reason)
		}
	}
	// A CDF sent with a group's scenario.
	cdf := WithFiles(map[string][]byte{"sizes.txt": []byte("100 0\n200 1\n")})
	s := mustParse(t, groupJSON(3, `"0s"`, `{"kind": "empirical", "file": "sizes.txt"}`), cdf)
	if got := s.Groups[0].Size.CDF; !equal(got, []CDFPoint{{100, 0}, {200, 1}}) {
		t.Errorf("sent CDF: points %v", got)
	}
	_, err := Parse(groupJSON(3, `"0s"`, `{"kind": "empirical", "file": "other.txt"}`), cdf)
	if err == nil || !strings.Contains(err.Error(), "flows[web].size.file: no built-in distribution \"other.txt\" (built-ins: \"datamining\", \"websearch\"); no file of that name was sent with the scenario") {
		t.Errorf("CDF not sent: error = %v", err)
	}
}

// Scenarios written before the models existed keep their canonical form:
// defaults of the new fields are left out.
func TestCanonicalOmitsNewDefaults(t *testing.T) {
	s := mustParse(t, []byte(baseJSON))
	c := string(s.Canonical())
	for _, k := range []string{"position", "order", "clamp", "capacity", "outages", `"trace":{"sha`, "traces", "timestamps"} {
		if strings.Contains(c, k) {
			t.Errorf("canonical form of a scenario without path models has %q: %s", k, c)
		}
	}
}
