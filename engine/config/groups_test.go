package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// groupJSON is a scenario whose only flows are one group with the given
// count, start and size (JSON values).
func groupJSON(count int, start, size string) []byte {
	return fmt.Appendf(nil, `{"runtime": {"seed": 5, "duration": "1000s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h9", "kind": "endpoint"}],
  "links": [{"id": "a", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
            {"id": "b", "a": "h2", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
            {"id": "c", "a": "r1", "b": "h9", "rate": "1Gbps", "delay": "1ms"}],
  "flows": [{"group": "web", "count": %d, "src": ["h1", "h2"], "dst": "h9", "cc": "reno", "start": %s, "size": %s}]}`, count, start, size)
}

// A group expands to flows web/0 … web/n-1, sources taken in turn, the same
// for the same seed, and --set reaches its count; the canonical form keeps
// the group, and parses back to the same scenario.
func TestGroupExpandsDeterministically(t *testing.T) {
	raw := groupJSON(5, `{"kind": "poisson", "rate": "200/s"}`, `{"kind": "lognormal", "median": "100KB", "sigma": 1}`)
	a, b := mustParse(t, raw), mustParse(t, raw)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two parses of one group differ")
	}
	var ids, srcs []string
	for _, f := range a.Flows {
		ids, srcs = append(ids, f.ID), append(srcs, f.Src)
		if f.Dst != "h9" || f.CC != "reno" || f.Group != "web" {
			t.Errorf("flow %s = dst %s cc %s group %q, want h9 reno web", f.ID, f.Dst, f.CC, f.Group)
		}
	}
	if want := []string{"web/0", "web/1", "web/2", "web/3", "web/4"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if want := []string{"h1", "h2", "h1", "h2", "h1"}; !slices.Equal(srcs, want) {
		t.Errorf("srcs = %v, want %v", srcs, want)
	}
	for i := 1; i < len(a.Flows); i++ {
		if a.Flows[i].Start <= a.Flows[i-1].Start {
			t.Errorf("Poisson arrivals not increasing: %v then %v", a.Flows[i-1].Start, a.Flows[i].Start)
		}
	}
	set, err := Apply(raw, []string{"flows.web.count=7", "runtime.seed=6"})
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, set)
	if len(c.Flows) != 7 {
		t.Errorf("--set flows.web.count=7: %d flows", len(c.Flows))
	}
	if c.Flows[0].Start == a.Flows[0].Start {
		t.Errorf("another seed drew the same first start %v", c.Flows[0].Start)
	}
	canon := a.Canonical()
	if strings.Contains(string(canon), "web/") {
		t.Errorf("canonical form lists the expansion: %s", canon)
	}
	if back := mustParse(t, canon); !reflect.DeepEqual(back.Flows, a.Flows) {
		t.Errorf("Parse(Canonical()) flows differ:\n%+v\n%+v", back.Flows[0], a.Flows[0])
	}
	// A jittered start survives the canonical form too, the "at" kind's
	// included (written as an object only when jittered).
	for _, start := range []string{`{"kind": "at", "at": "1s", "jitter": "300us"}`, `{"kind": "periodic", "every": "10ms", "batch": 2, "jitter": "1ms"}`} {
		j := mustParse(t, groupJSON(5, start, `"10KB"`))
		if back := mustParse(t, j.Canonical()); !reflect.DeepEqual(back.Flows, j.Flows) || j.Flows[0].Start == j.Flows[1].Start {
			t.Errorf("start %s: canonical form lost the jitter, or it drew nothing: %v", start, j.Flows[0].Start)
		}
	}
}

// Per-flow hosts: each flow gets its own src and dst host and access link.
func TestGroupPerFlowHosts(t *testing.T) {
	raw, err := Builtin("dumbbell-n")
	if err != nil {
		t.Fatal(err)
	}
	raw, err = Apply(raw, []string{"flows.bulk.count=3"})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, raw)
	if len(s.Flows) != 3 || len(s.Nodes) != 2+6 || len(s.Links) != 1+6 {
		t.Fatalf("flows, nodes, links = %d, %d, %d; want 3, 8, 7", len(s.Flows), len(s.Nodes), len(s.Links))
	}
	f := s.Flows[2]
	if f.Src != "bulk/2/src" || f.Dst != "bulk/2/dst" {
		t.Errorf("flow 2 = %s → %s, want bulk/2/src → bulk/2/dst", f.Src, f.Dst)
	}
	l := s.Links[len(s.Links)-1]
	if l.A != "r2" || l.B != "bulk/2/dst" || l.AB.Rate != 100*units.Gbps || l.BA.Delay != sim.Millisecond {
		t.Errorf("last access link = %+v", l)
	}
	if back := mustParse(t, s.Canonical()); !reflect.DeepEqual(back, s) {
		t.Error("Parse(Canonical()) differs from the scenario")
	}
}

// quantileOf is the q-quantile of xs by rank.
func fractionBelow(xs []float64, x float64) float64 {
	n := 0
	for _, v := range xs {
		if v <= x {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// The start and size distributions hold statistically over 20,000 draws:
// each checked fraction lies within 4 standard errors (sqrt(p(1-p)/n) ≈
// 0.0035 at p = 1/2) of the distribution's own value, computed in closed
// form here.
func TestGroupDistributions(t *testing.T) {
	const n = 20000
	tol := 4 * math.Sqrt(0.25/n)
	sizes := func(size string) []float64 {
		s := mustParse(t, groupJSON(n, `"0s"`, size))
		out := make([]float64, n)
		for i, f := range s.Flows {
			out[i] = float64(f.Size)
		}
		return out
	}
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f ± %.4f", name, got, want, tol)
		}
	}
	// Poisson at 200/s: gaps are exponential of mean 5 ms, so
	// P(gap ≤ 5 ms·ln 2) = 1/2 and P(gap ≤ 5 ms) = 1 - 1/e.
	s := mustParse(t, groupJSON(n, `{"kind": "poisson", "rate": "200/s", "at": "1s"}`, `"10KB"`))
	var gaps []float64
	prev := sim.Second
	for _, f := range s.Flows {
		gaps = append(gaps, float64(f.Start-prev))
		prev = f.Start
	}
	check("P(gap ≤ 5ms·ln2)", fractionBelow(gaps, float64(5*sim.Millisecond)*math.Ln2), 0.5)
	check("P(gap ≤ 5ms)", fractionBelow(gaps, float64(5*sim.Millisecond)), 1-1/math.E)
	// Uniform starts over [1s, 3s).
	s = mustParse(t, groupJSON(n, `{"kind": "uniform", "at": "1s", "span": "2s"}`, `"10KB"`))
	var starts []float64
	for _, f := range s.Flows {
		starts = append(starts, float64(f.Start))
	}
	check("P(start ≤ 1.5s)", fractionBelow(starts, float64(1500*sim.Millisecond)), 0.25)
	// Periodic rounds of 4 every 10 ms from 1 s, each start jittered
	// uniformly in [0, 600 µs): within its round's window, P(offset ≤
	// 150 µs) = 1/4, and the sizes (another stream) are as without jitter.
	plain := mustParse(t, groupJSON(n, `{"kind": "periodic", "at": "1s", "every": "10ms", "batch": 4}`, `{"kind": "uniform", "min": "1000B", "max": "3000B"}`))
	s = mustParse(t, groupJSON(n, `{"kind": "periodic", "at": "1s", "every": "10ms", "batch": 4, "jitter": "600us"}`, `{"kind": "uniform", "min": "1000B", "max": "3000B"}`))
	var offs []float64
	for i, f := range s.Flows {
		round := sim.Second + sim.Duration(i/4)*10*sim.Millisecond
		if off := f.Start - round; off < 0 || off >= 600*sim.Microsecond {
			t.Fatalf("flow %d starts %v into its round, want [0, 600µs)", i, off)
		}
		if f.Size != plain.Flows[i].Size || plain.Flows[i].Start != round {
			t.Fatalf("flow %d: size %v (%v without jitter), start %v without jitter (want %v)", i, f.Size, plain.Flows[i].Size, plain.Flows[i].Start, round)
		}
		offs = append(offs, float64(f.Start-round))
	}
	check("P(jitter ≤ 150µs)", fractionBelow(offs, float64(150*sim.Microsecond)), 0.25)
	// Uniform sizes in [1000, 3000] bytes, inclusive: 2001 values, of which
	// 1000 … 1999 are 1000, so P(≤ 1999) = 1000/2001. (The endpoints are
	// checked in TestUniformSizeEndpoints.)
	check("uniform P(size ≤ 1999)", fractionBelow(sizes(`{"kind": "uniform", "min": "1000B", "max": "3000B"}`), 1999), 1000.0/2001)
	// Lognormal: P(size ≤ median) = 1/2, P(size ≤ median·e^σ) = Φ(1).
	ln := sizes(`{"kind": "lognormal", "median": "100KB", "sigma": 1.5}`)
	check("lognormal P(≤ median)", fractionBelow(ln, 100000), 0.5)
	check("lognormal P(≤ median·e^σ)", fractionBelow(ln, 100000*math.Exp(1.5)), 0.5*(1+math.Erf(1/math.Sqrt2)))
	// Pareto: P(size > 2·min) = 2^-α.
	pa := sizes(`{"kind": "pareto", "min": "10KB", "alpha": 1.2}`)
	check("pareto P(> 2·min)", 1-fractionBelow(pa, 20000), math.Pow(2, -1.2))
	// Web search (DCTCP paper): 53% of flows are at most 80 KB, 70% at most 1 MB.
	ws := sizes(`{"kind": "empirical", "file": "websearch"}`)
	check("websearch P(≤ 80KB)", fractionBelow(ws, 80000), 0.53)
	check("websearch P(≤ 1MB)", fractionBelow(ws, 1e6), 0.70)
	// Data mining (VL2): half the flows are at most 1,100 B, 80 % at most 10 KB.
	dm := sizes(`{"kind": "empirical", "file": "datamining"}`)
	check("datamining P(≤ 1100 B)", fractionBelow(dm, 1100), 0.5)
	check("datamining P(≤ 10 KB)", fractionBelow(dm, 10000), 0.8)
	// An inline CDF, halfway along a linear piece: P(≤ 1500) = 0.25.
	in := sizes(`{"kind": "empirical", "cdf": [["1000B", 0], ["2000B", 0.5], ["4000B", 1]]}`)
	check("inline CDF P(≤ 1500)", fractionBelow(in, 1500), 0.25)
}

// A uniform size on [1000, 3000] B takes each of its 2001 values with
// probability 1/2001, both ends included. Over 2·10^6 draws from the stream
// a group "web" at seed 5 draws from: none falls outside; each end's count
// is n/2001 ≈ 999.5 within 4 binomial SEs (±126), so an end left out (0)
// or doubled fails; and Pearson's chi-square over the 2001 values is below
// 2201.16, its 0.999 quantile at 2000 dof.
func TestUniformSizeEndpoints(t *testing.T) {
	const n, lo, hi = 2_000_000, 1000, 3000
	d := SizeDist{Kind: SizeUniform, Min: lo, Max: hi}
	r := rng.Stream(5, "group/web/size")
	counts := make([]int, hi-lo+1)
	for range n {
		x := d.draw(r)
		if x < lo || x > hi {
			t.Fatalf("draw %d B outside [%d, %d]", x, lo, hi)
		}
		counts[x-lo]++
	}
	p := 1.0 / float64(len(counts))
	e, tol := n*p, 4*math.Sqrt(n*p*(1-p))
	for _, x := range []int{lo, hi} {
		if c := counts[x-lo]; math.Abs(float64(c)-e) > tol {
			t.Errorf("draws of %d B = %d, want %.1f ± %.0f (4 SE)", x, c, e, tol)
		}
	}
	chi2 := 0.0
	for _, c := range counts {
		chi2 += (float64(c) - e) * (float64(c) - e) / e
	}
	if chi2 > 2201.16 {
		t.Errorf("χ² over the %d sizes = %.1f, want ≤ 2201.16 (2000 dof, α = 0.001)", len(counts), chi2)
	}
}

// The CDF files data-centre traffic generators ship load as they are, in
// each of their forms; their points travel inline in the canonical form,
// which parses without the file to the same scenario as the points written
// inline do.
func TestCDFFile(t *testing.T) {
	dir := t.TempDir()
	want := []CDFPoint{{0, 0}, {10000, 0.15}, {1000000, 0.7}, {30000000, 1}}
	for name, text := range map[string]string{
		"hpcc.txt":   "0 0\n10000 15\n1000000 70\n30000000 100\n", // bytes, percent
		"vl2.cdf":    "# bytes fraction\n0   0\n10000 0.15\n1e+06 0.7\n\n3e+07 1\n",
		"ns2.cdf":    "0     1 0\n10000 2 0.15\n1e+06 3 0.7\n3e+07 4 1\n", // ns-2: the middle column is skipped
		"commas.csv": "0,0\r\n10000,0.15\r\n1000000, 0.7\r\n30000000,1",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s := mustParse(t, groupJSON(3, `"0s"`, `{"kind": "empirical", "file": "`+name+`"}`), WithDir(dir))
		got := s.Groups[0].Size
		if !equal(got.CDF, want) || got.File != "" {
			t.Errorf("%s: points %v (file %q), want %v", name, got.CDF, got.File, want)
		}
		inline := mustParse(t, groupJSON(3, `"0s"`, `{"kind": "empirical", "cdf": [[0, 0], ["10KB", 0.15], ["1MB", 0.7], ["30MB", 1]]}`))
		back := mustParse(t, s.Canonical())
		if s.Hash() != inline.Hash() || back.Hash() != s.Hash() || strings.Contains(string(s.Canonical()), name) {
			t.Errorf("%s: canonical %s, want the points inline as %s", name, s.Canonical(), inline.Canonical())
		}
	}
	for name, c := range map[string]struct{ text, reason string }{
		"columns.txt":    {"0 0\n10 1 2 3\n", "line 2: 4 columns"},
		"fraction.txt":   {"0 0\n10.5 1\n", `line 2: "10.5" is not a whole number of bytes`},
		"decrease.txt":   {"0 0\n100 0.6\n50 0.7\n200 1\n", "line 3: sizes and probabilities must not decrease"},
		"unfinished.txt": {"0 0\n100 0.6\n200 0.9\n\n", "line 3: the last point's cumulative probability is 0.9"},
		// A probability that is not 0 but reads as 0 is refused, as inline.
		"underflow.txt": {"0 0\n10 1e-400\n20 1\n", `line 2: "1e-400" is below the smallest float64`},
		"tinypct.txt":   {"0 0\n10 5e-324\n20 100\n", "line 2: 5e-324 % is below the smallest float64 as a fraction"},
		"one.txt":       {"# only\n100 1\n", "fewer than two points"},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Parse(groupJSON(3, `"0s"`, `{"kind": "empirical", "file": "`+name+`"}`), WithDir(dir))
		if err == nil || !strings.Contains(err.Error(), "flows[web].size.file: not a flow-size CDF: "+c.reason) {
			t.Errorf("%s: Parse error = %v, want %q", name, err, c.reason)
		}
	}
	// Without the scenario file's directory (a built-in scenario, the
	// server), only the built-ins can be named.
	_, err := Parse(groupJSON(3, `"0s"`, `{"kind": "empirical", "file": "hpcc.txt"}`))
	if err == nil || !strings.Contains(err.Error(), "only when the scenario comes from a file") {
		t.Errorf("Parse without a directory: %v", err)
	}
}

// A group's flows are reported at the group, once: those that would start
// after the run ends are counted, and an error they share (no route) is
// said once, not once per flow.
func TestGroupErrorsSaidOnce(t *testing.T) {
	raw := groupJSON(10, `{"kind": "periodic", "at": "0s", "every": "300s", "batch": 2}`, `"10KB"`)
	_, err := Parse(raw) // rounds at 0, 300, 600, 900 and 1,200 s; the run ends at 1,000 s
	var fe *Errors
	if !errors.As(err, &fe) || len(fe.List) != 1 || !matches(fe.List[0], want{"flows[web].start", "2 of the group's 10 flows would start after the run ends at 1000s (the first at 1200s)"}) {
		t.Errorf("Parse error = %v, want one at flows[web].start counting 2 late flows", err)
	}
	raw, err = Apply(groupJSON(50, `"0s"`, `"10KB"`), []string{`links=[{"id": "a", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"}]`})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(raw)
	if !errors.As(err, &fe) || len(fe.List) != 2 { // h2's and h9's routes: one error each, not 50
		t.Errorf("Parse error = %v, want two, one per unreachable pair", err)
	}
	// A host per flow attached to a node that is missing, or that forwards
	// nothing: one error at the group's attach, not one per flow and route.
	for attach, reason := range map[string]string{
		"nope": `no node with id "nope"`,
		"h2":   `node "h2" is an endpoint, which forwards nothing`,
	} {
		raw, err = Apply(groupJSON(50, `"0s"`, `"10KB"`), []string{`flows.web.src={"attach": "` + attach + `", "rate": "1Gbps", "delay": "1ms"}`})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(raw)
		if !errors.As(err, &fe) || len(fe.List) != 1 || !matches(fe.List[0], want{"flows[web].src.attach", reason}) {
			t.Errorf("attach %q: Parse error = %v, want one at flows[web].src.attach", attach, err)
		}
	}
}

// Starts past the longest run stay past it rather than wrap to before the
// run: a periodic group at 10^6 s spacing passes int64 picoseconds at its
// tenth round, and a Poisson group at one arrival in 10^6 s soon after.
func TestGroupStartsPastAnyRun(t *testing.T) {
	for start, want := range map[string]string{
		`{"kind": "periodic", "at": "0s", "every": "1000000s"}`: "19 of the group's 20 flows would start after the run ends",
		`{"kind": "poisson", "rate": "0.000001/s"}`:             "20 of the group's 20 flows would start after the run ends",
	} {
		_, err := Parse(groupJSON(20, start, `"10KB"`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Parse error = %v, want %q", start, err, want)
		}
	}
}

// Bad groups are reported with the path of the bad field.
func TestGroupErrors(t *testing.T) {
	cases := []struct{ set, path string }{
		{"flows.web.count=0", "flows[web].count"},
		{`flows.web.size={"kind":"pareto","min":"1KB"}`, "flows[web].size.alpha"},
		{`flows.web.size={"kind":"uniform","min":"1KB","max":"2KB","sigma":1}`, "flows[web].size.sigma"},
		{`flows.web.start={"kind":"poisson"}`, "flows[web].start.rate"},
		{`flows.web.start={"kind":"poisson","rate":"fast"}`, "flows[web].start.rate"},
		{`flows.web.size={"kind":"empirical","file":"nosuch"}`, "flows[web].size.file"},
		{`flows.web.src={"rate":"1Gbps","delay":"1ms"}`, "flows[web].src.attach"},
		{`flows.web.dst={"attach":"","rate":"1Gbps","delay":"1ms"}`, "flows[web].dst.attach"}, // found by FuzzParse: a division by zero
		{`flows.web.src=[]`, "flows[web].src"},
		{`flows.web.start={"kind":"poisson","rate":"10/s","jitter":"1ms"}`, "flows[web].start.jitter"},
		{`flows.web.start={"kind":"periodic","every":"1ms","jitter":"0s"}`, "flows[web].start.jitter"},
		{`flows.web.size={"kind":"uniform","min":"0B","max":"1B"}`, "flows[web].size.min"}, // a size of 0 is bulk
	}
	for _, c := range cases {
		t.Run(c.set, func(t *testing.T) {
			raw, err := Apply(groupJSON(3, `"0s"`, `"10KB"`), []string{c.set})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(raw)
			if err == nil || !strings.Contains(err.Error(), c.path+":") {
				t.Errorf("Parse error = %v, want one at %s", err, c.path)
			}
		})
	}
}
