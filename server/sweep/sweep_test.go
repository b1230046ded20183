package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
)

func mustSpec(t *testing.T, js string) *Spec {
	t.Helper()
	s, err := ParseSpec([]byte(js))
	if err != nil {
		t.Fatalf("ParseSpec(%s) error %v", js, err)
	}
	return s
}

// The points are grid × (each axis value alone) × seeds: with a 2-value
// grid, axes of 3 and 2 values and seeds "1-2", 2 × 5 × 2 = 20 points, the
// seeds varying fastest and every axis point carrying only its own axis.
func TestPointsExpandGridAxesSeeds(t *testing.T) {
	s := mustSpec(t, `{"scenario": "pump", "set": {"runtime.duration": "1s"},
		"grid": {"flows.f0.cc": ["cubic", "bbr"]},
		"axes": {"links.bottleneck.delay": ["5ms", "10ms", "20ms"], "links.bottleneck.rate": ["10Mbps", "20Mbps"]},
		"seeds": "1-2"}`)
	pts := s.Points()
	if len(pts) != 20 {
		t.Fatalf("len(Points()) = %d, want 20", len(pts))
	}
	perAxis := map[string]int{}
	for _, p := range pts {
		perAxis[p.Axis]++
		if len(p.Params) != 2 || p.Params[0].Path != "flows.f0.cc" || p.Params[1].Path != p.Axis {
			t.Errorf("point %+v: want params [flows.f0.cc, %s]", p, p.Axis)
		}
	}
	if perAxis["links.bottleneck.delay"] != 12 || perAxis["links.bottleneck.rate"] != 8 {
		t.Errorf("points per axis = %v, want delay 12, rate 8", perAxis)
	}
	got := strings.Join(pts[1].Sets(s), " ")
	want := `runtime.duration="1s" flows.f0.cc="cubic" links.bottleneck.delay="5ms" runtime.seed=2`
	if got != want {
		t.Errorf("Points()[1].Sets() = %s, want %s", got, want)
	}
}

func TestSpecErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ name, js, want string }{
		{"no scenario", `{"grid": {"a": [1]}}`, "scenario: missing"},
		{"unknown key", `{"scenario": "pump", "grids": {}}`, `unknown field "grids"`},
		{"empty axis", `{"scenario": "pump", "axes": {"links.bottleneck.rate": []}}`, "axes.links.bottleneck.rate: no values"},
		{"seed swept", `{"scenario": "pump", "grid": {"runtime.seed": [1, 2]}}`, `give seeds in "seeds"`},
		{"twice", `{"scenario": "pump", "grid": {"x": [1]}, "axes": {"x": [2]}}`, "axes.x: already in grid"},
		{"list in set", `{"scenario": "cellular", "set": {"flows.f0.ack_grant.gap": ["1ms", "2ms", "30ms"]}}`,
			`set.flows.f0.ack_grant.gap: one value, not a list of 3 (to sweep the values, give them in grid or axes; a list-valued field is written as a list in a list, [["1ms", "2ms", "30ms"]])`},
		{"list in a point", `{"scenario": "cellular", "points": [{"flows.f0.ack_grant.gap": ["1ms", "2ms"]}]}`,
			`points[0].flows.f0.ack_grant.gap: one value, not a list of 2 (a list-valued field is written as a list in a list, [["1ms", "2ms"]])`},
		{"bad seeds", `{"scenario": "pump", "seeds": "5-1"}`, `seeds: "5-1" is not a range`},
		{"repeated seeds", `{"scenario": "pump", "seeds": [2, 1, 2]}`, "seeds: 2 repeats"},
		{"negative seed", `{"scenario": "pump", "seeds": [1, -1]}`, "sweep spec: seeds: expected an array of integers"},
		// Each field's error names it, and a point's its index.
		{"grid not an object", `{"scenario": "pump", "grid": 5}`, "sweep spec: grid: a JSON number; want an object of path: [values]"},
		{"set not an object", `{"scenario": "pump", "set": ["a"]}`, "sweep spec: set: a JSON array; want an object of path: value"},
		{"point not an object", `{"scenario": "pump", "points": [{"a": 1}, 7]}`, "sweep spec: points[1]: a JSON number; want an object of path: value"},
		{"points not an array", `{"scenario": "pump", "points": {"a": 1}}`, "sweep spec: points: want an array of points"},
		{"scenario a number", `{"scenario": 5}`, "sweep spec: scenario: 5 is not a built-in name or file path"},
		// JSON keeps one of two equal keys; which one was meant is unknown.
		{"path twice in set", `{"scenario": "pump", "set": {"a": 1, "a": 2}}`, "sweep spec: set: a: given twice"},
		{"path twice in a point", `{"scenario": "pump", "points": [{"a": 1, "a": 2}]}`, "sweep spec: points[0]: a: given twice"},
		{"field twice", `{"scenario": "pump", "seeds": [1], "seeds": [2]}`, "sweep spec: seeds: given twice"},
		// JSON that does not parse is placed by line and column, and
		// nothing may follow the spec.
		{"syntax", "{\"scenario\": \"pump\",\n  \"set\": {\"a\" 1}}", "sweep spec: line 2, column 15: invalid character '1' after object key"},
		{"trailing", `{"scenario": "pump"} {"scenario": "cellular"}`, "sweep spec: line 1, column 22: invalid character '{' after top-level value"},
		{"not an object", `["pump"]`, "sweep spec: line 1: must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.js))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseSpec(%s) error %v, want one containing %q", tc.js, err, tc.want)
			}
		})
	}
}

// A list-valued field takes a list in a list in "set" and in a point, as
// the refusal of a bare list says, and is set to the inner list.
func TestListValuedFieldInSpec(t *testing.T) {
	s := mustSpec(t, `{"scenario": "cellular", "set": {"runtime.duration": "100ms", "flows.f0.ack_grant.gap": [["1ms", "2ms", "30ms"]]},
		"points": [{"flows.f0.ack_hold.quantiles": [["0ms", "1ms"]]}]}`)
	sets := s.Points()[0].Sets(s)
	want := []string{`runtime.duration="100ms"`, `flows.f0.ack_grant.gap=["1ms", "2ms", "30ms"]`, `flows.f0.ack_hold.quantiles=["0ms", "1ms"]`}
	if !slices.Equal(sets, want) {
		t.Fatalf("Sets() = %q, want %q", sets, want)
	}
	raw, err := scenarioBytes(s.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Prepare(raw, sets); err != nil {
		t.Errorf("Prepare(cellular, %q) error %v", sets, err)
	}
}

// A spec keeps each value as written, a number beyond float64 too: the
// scenario, not the spec, judges it.
func TestSpecKeepsValuesAsWritten(t *testing.T) {
	s := mustSpec(t, `{"scenario": "pump", "set": {"flows.f0.start": 1e400}, "grid": {"runtime.duration": [12345678901234567890123, "1s"]}}`)
	want := []string{`flows.f0.start=1e400`, `runtime.duration=12345678901234567890123`}
	if got := s.Points()[0].Sets(s); !slices.Equal(got, want) {
		t.Errorf("Sets() = %q, want %q", got, want)
	}
}

// ParseSeeds ends at the largest seed (counting up to it wrapped and never
// ended) and refuses more than MaxSeeds seeds, in one range or in all,
// before it expands them.
func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{"1-3,7", []uint64{1, 2, 3, 7}, ""},
		{" 1 - 2 ", []uint64{1, 2}, ""},
		{"18446744073709551615", []uint64{math.MaxUint64}, ""},
		{"18446744073709551613-18446744073709551615", []uint64{math.MaxUint64 - 2, math.MaxUint64 - 1, math.MaxUint64}, ""},
		{"1-100000", nil, ""},
		{"1-100001", nil, "more than 100000 seeds"},
		{"1-100000000", nil, "more than 100000 seeds"},
		{"0-18446744073709551615", nil, "more than 100000 seeds"},
		{"1-60000,100001-160000", nil, "more than 100000 seeds"},
		{"5-1", nil, `"5-1" is not a range of seeds`},
		{"x", nil, `"x" is not a seed`},
		{"1,1,1", nil, `"1,1,1": seed 1 repeats`},
		{"1-5,3", nil, `"1-5,3": seed 3 repeats`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSeeds(tc.in, MaxSeeds)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("ParseSeeds(%q) error %v, want one containing %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("ParseSeeds(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := ParseSpec([]byte(`{"scenario": "pump", "seeds": [` + strings.Repeat("1,", MaxSeeds) + `1]}`)); err == nil ||
		!strings.Contains(err.Error(), "100001 seeds, more than 100000") {
		t.Errorf("ParseSpec of %d seeds: error %v, want one naming the limit", MaxSeeds+1, err)
	}
}

// ParseGrid separates values only at the commas outside objects, arrays
// and JSON strings, and refuses an empty value.
func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []string
		err  string
	}{
		{"flows.f0.cc=cubic,bbr", []string{`"cubic"`, `"bbr"`}, ""},
		{`l.loss={"kind":"bernoulli","p":0.01},{"kind":"bernoulli","p":0.02}`,
			[]string{`{"kind":"bernoulli","p":0.01}`, `{"kind":"bernoulli","p":0.02}`}, ""},
		{`g.gap=["1ms","2ms"],["3ms","4ms"]`, []string{`["1ms","2ms"]`, `["3ms","4ms"]`}, ""},
		{`x=[{"a":[1,2]},3],"a,b","q\",r",7`, []string{`[{"a":[1,2]},3]`, `"a,b"`, `"q\",r"`, `7`}, ""},
		{"x=a],b", []string{`"a]"`, `"b"`}, ""},
		{"x=cubic,,bbr", nil, `"x=cubic,,bbr": value 2 is empty`},
		{"x=cubic,", nil, `"x=cubic,": value 2 is empty`},
		{"x=", nil, "expected path=v1,v2 (one value or more"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			p, err := ParseGrid(tc.arg)
			var got []string
			for _, v := range p.Values {
				got = append(got, string(v))
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || tc.err == "" && (err != nil || !slices.Equal(got, tc.want)) {
				t.Errorf("ParseGrid(%q) = %q, %v; want %q (error %q)", tc.arg, got, err, tc.want, tc.err)
			}
		})
	}
}

// pumpGoodput is the pump's goodput through a bottleneck of rate R for a
// run of T seconds: min(120 Mbps, R) from the first packet's arrival, which
// takes the 20 ms of propagation and its serialisation at 1 Gbps and at R,
// counted over the whole run (as client-python's sweep test).
func pumpGoodput(rMbps, tS float64) float64 {
	return math.Min(120, rMbps) * 1e6 * (tS - 0.020 - 12000/1e9 - 12000/(rMbps*1e6)) / tS
}

func TestRunCatalogResumeAndPages(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "cat.parquet")
	rep := filepath.Join(dir, "report")
	js := `{"scenario": "pump", "set": {"runtime.duration": "1s", "links.bottleneck.rate": "60Mbps"},
		"axes": {"links.bottleneck.rate": ["30Mbps", "60Mbps", "150Mbps"], "links.bottleneck.delay": ["19ms"]},
		"seeds": [1]}`
	res, err := Run(context.Background(), mustSpec(t, js), Options{Catalog: cat, Jobs: 2, ReportDir: rep})
	if err != nil {
		t.Fatalf("Run error %v", err)
	}
	// The delay axis's one point is the baseline (60 Mbps, 19 ms), the rate
	// axis's 60 Mbps point: run once, catalogued under both axes.
	if res.Ran != 3 || res.Reused != 1 || res.Skipped != 0 {
		t.Errorf("first Run = %+v, want 3 runs, 1 reused (4 points, one shared), 0 skipped", res)
	}
	rows, err := ReadCatalog(cat)
	if err != nil {
		t.Fatalf("ReadCatalog error %v", err)
	}
	if len(rows) != 4 {
		t.Fatalf("catalog has %d rows, want 4", len(rows))
	}
	for _, r := range rows {
		if r.Axis != "links.bottleneck.rate" {
			continue
		}
		var mbps float64
		switch display(r.Params["links.bottleneck.rate"]) {
		case "30Mbps":
			mbps = 30
		case "60Mbps":
			mbps = 60
		case "150Mbps":
			mbps = 150
		}
		want := pumpGoodput(mbps, 1)
		if r.GoodputBps == nil || math.Abs(float64(*r.GoodputBps)-want)/want > 1e-3 {
			t.Errorf("rate %v Mbps: goodput %v, want %.0f ± 0.1%%", mbps, r.GoodputBps, want)
		}
		if r.Report == nil {
			t.Errorf("row %s has no report page", r.Run)
		} else if _, err := os.Stat(filepath.Join(rep, *r.Report)); err != nil {
			t.Errorf("report page of row %s: %v", r.Run, err)
		}
	}
	// Resume: the same spec with a second seed runs only the new seed's
	// points and keeps the old rows as they were.
	js2 := strings.Replace(js, `"seeds": [1]`, `"seeds": [1, 2]`, 1)
	res2, err := Run(context.Background(), mustSpec(t, js2), Options{Catalog: cat, Jobs: 2, ReportDir: rep})
	if err != nil {
		t.Fatalf("second Run error %v", err)
	}
	if res2.Skipped != 4 || res2.Ran+res2.Reused != 4 {
		t.Errorf("second Run = %+v, want 4 skipped and 4 new", res2)
	}
	rows2, err := ReadCatalog(cat)
	if err != nil {
		t.Fatalf("ReadCatalog error %v", err)
	}
	if len(rows2) != 8 {
		t.Fatalf("resumed catalog has %d rows, want 8", len(rows2))
	}
	for i := range rows {
		if rows2[i].Digest != rows[i].Digest || rows2[i].Run != rows[i].Run || rows2[i].Axis != rows[i].Axis {
			t.Errorf("row %d changed on resume: %+v, was %+v", i, rows2[i], rows[i])
		}
	}
	res3, err := Run(context.Background(), mustSpec(t, js2), Options{Catalog: cat, Jobs: 2})
	if err != nil || res3.Ran != 0 || res3.Skipped != 8 {
		t.Errorf("third Run = %+v, %v; want everything skipped", res3, err)
	}
	// The catalog page: one chart per axis, each seed's dot linking to an
	// existing run page.
	page, err := os.ReadFile(filepath.Join(rep, "index.html"))
	if err != nil {
		t.Fatalf("catalog page: %v", err)
	}
	if n := strings.Count(string(page), "<svg"); n != 2 {
		t.Errorf("catalog page has %d charts, want 2 (one per axis)", n)
	}
	links := regexp.MustCompile(`href="(runs/[0-9a-f]+\.html)"`).FindAllStringSubmatch(string(page), -1)
	if len(links) != 8 {
		t.Errorf("catalog page has %d run links, want 8 (one per row)", len(links))
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(rep, l[1])); err != nil {
			t.Errorf("link %s: %v", l[1], err)
		}
	}
}

// Every invalid point is named, once whatever its seeds, before any point
// runs: the catalog is neither written nor, when there is one, changed.
func TestInvalidPointsFailBeforeAnyRun(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	bad := mustSpec(t, `{"scenario": "pump", "set": {"runtime.duration": "200ms"},
		"axes": {"links.bottleneck.rate": ["lots", "10Mbps", "many"]}, "seeds": [1, 2]}`)
	res, err := Run(context.Background(), bad, Options{Catalog: cat, Jobs: 1})
	var pes PointErrors
	if !errors.As(err, &pes) || res.Ran != 0 {
		t.Fatalf("Run = %+v, %v; want PointErrors and no run", res, err)
	}
	var named []string
	for _, pe := range pes {
		named = append(named, pe.Describe())
	}
	if want := []string{"links.bottleneck.rate=lots", "links.bottleneck.rate=many"}; !slices.Equal(named, want) {
		t.Errorf("bad points %q, want %q", named, want)
	}
	if _, err := os.Stat(cat); err == nil {
		t.Errorf("a sweep with invalid points wrote its catalog")
	}
	good := mustSpec(t, `{"scenario": "pump", "set": {"runtime.duration": "200ms"}}`)
	if _, err := Run(context.Background(), good, Options{Catalog: cat, Jobs: 1}); err != nil {
		t.Fatalf("Run error %v", err)
	}
	before, _ := os.ReadFile(cat)
	if _, err := Run(context.Background(), bad, Options{Catalog: cat, Jobs: 1}); err == nil {
		t.Fatalf("Run of invalid points over a catalog: no error")
	}
	if after, _ := os.ReadFile(cat); !bytes.Equal(before, after) {
		t.Errorf("a sweep with invalid points changed the catalog")
	}
}

// A point with no swept parameters is named as such.
func TestPointErrorDescribe(t *testing.T) {
	for _, tc := range []struct {
		p    Point
		want string
	}{
		{Point{}, "(no swept parameters)"},
		{Point{Seed: 3, HasSeed: true}, "seed=3"},
		{Point{Params: []Param{{Path: "a", Values: []json.RawMessage{[]byte(`"x"`)}}}}, "a=x"},
	} {
		if got := (&PointError{Point: tc.p}).Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// A metric the catalog page cannot chart is refused before any run, with
// or without a report directory.
func TestRunRefusesABadMetricFirst(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	s := mustSpec(t, `{"scenario": "pump", "set": {"runtime.duration": "100ms"}}`)
	res, err := Run(context.Background(), s, Options{Catalog: cat, Metric: "nope"})
	if err == nil || !strings.Contains(err.Error(), `--metric "nope"`) || res.Ran != 0 {
		t.Errorf("Run with metric nope = %+v, %v; want no run and an error naming the metric", res, err)
	}
	if _, err := os.Stat(cat); err == nil {
		t.Errorf("Run with metric nope wrote the catalog")
	}
}

// A grid value that replaces an object and drops fields the scenario had
// is noted once, however many points carry it: a qdisc axis of kinds
// without their limit drops the FIFO's 1BDP limit (p-rtr-p's bottleneck).
func TestRunNotesDroppedFields(t *testing.T) {
	s := mustSpec(t, `{"scenario": "p-rtr-p", "set": {"runtime.duration": "100ms"},
		"axes": {"links.bottleneck.ab.qdisc": [{"kind": "fifo"}, {"kind": "fifo", "limit": "100p"}]}, "seeds": [1, 2]}`)
	res, err := Run(context.Background(), s, Options{Catalog: filepath.Join(t.TempDir(), "c.parquet"), Jobs: 2})
	if err != nil {
		t.Fatalf("Run error %v", err)
	}
	want := []string{`set links.bottleneck.ab.qdisc replaces the whole object and drops its "limit"; to change one field, set links.bottleneck.ab.qdisc.FIELD alone`}
	if !slices.Equal(res.Notes, want) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
}

// With RunReports each run's page is its full report (server/report), which
// names the run's config hash; the catalog page links to it.
func TestRunReportsArePages(t *testing.T) {
	dir := t.TempDir()
	s := mustSpec(t, `{"scenario": "p-rtr-p", "set": {"runtime.duration": "300ms"}, "axes": {"flows.f0.cc": ["cubic", "bbr"]}}`)
	if _, err := Run(context.Background(), s, Options{Catalog: filepath.Join(dir, "c.parquet"), ReportDir: dir, RunReports: true}); err != nil {
		t.Fatalf("Run error %v", err)
	}
	rows, err := ReadCatalog(filepath.Join(dir, "c.parquet"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("catalog: %d rows, %v; want 2", len(rows), err)
	}
	for _, r := range rows {
		page, err := os.ReadFile(filepath.Join(dir, *r.Report))
		if err != nil {
			t.Fatalf("report page: %v", err)
		}
		if !strings.Contains(string(page), r.ConfigHash) || !strings.Contains(string(page), "<canvas") && !strings.Contains(string(page), "uPlot") {
			t.Errorf("page %s: not a report naming config hash %s", *r.Report, r.ConfigHash)
		}
	}
	// Resumed with its page elsewhere, the sweep runs nothing and writes no
	// run pages there: the new page links none, rather than pages that are
	// not beside it.
	other := filepath.Join(t.TempDir(), "rep2")
	if _, err := Run(context.Background(), s, Options{Catalog: filepath.Join(dir, "c.parquet"), ReportDir: other}); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(other, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(index), `href="runs/`) {
		t.Error("the resumed sweep's page links run pages that are not beside it")
	}
	if index, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || !strings.Contains(string(index), `href="runs/`) {
		t.Errorf("the first page links no run pages (%v)", err)
	}
}

// A sweep stopped before all its points ran (its context cancelled, as
// SIGINT does) says so with Interrupted, keeps what ran in the catalog, and
// the same sweep run again resumes: it ran before as if complete, exit 0.
func TestInterruptedSweepSaysSoAndResumes(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	js := `{"scenario": "pump", "set": {"runtime.duration": "200ms"},
		"grid": {"links.bottleneck.rate": ["10Mbps", "20Mbps", "30Mbps", "40Mbps", "50Mbps", "60Mbps"]}, "seeds": [1]}`
	ctx, cancel := context.WithCancel(context.Background())
	ran := 0
	res, err := Run(ctx, mustSpec(t, js), Options{Catalog: cat, Jobs: 1, Progress: func(Progress) {
		if ran++; ran == 2 {
			cancel() // after the second point
		}
	}})
	var stopped *Interrupted
	if !errors.As(err, &stopped) || stopped.Points != 6 || stopped.NotRun != 6-res.Ran || res.Ran >= 6 {
		t.Fatalf("cancelled sweep: %+v, error %v; want Interrupted with the points not run", res, err)
	}
	rows, err := ReadCatalog(cat)
	if err != nil || len(rows) != res.Ran {
		t.Fatalf("catalog after the interruption: %d rows, %v; want the %d that ran", len(rows), err, res.Ran)
	}
	res2, err := Run(context.Background(), mustSpec(t, js), Options{Catalog: cat, Jobs: 1})
	if err != nil || res2.Skipped != res.Ran || res2.Ran != 6-res.Ran {
		t.Errorf("resumed sweep: %+v, %v; want %d skipped and %d run", res2, err, res.Ran, 6-res.Ran)
	}
}

// A sweep whose fixed settings differ (here the duration) does not resume
// into a catalog another sweep wrote: their rows would share the swept
// columns and be charted as one's seeds. The same sweep with more points
// does resume.
func TestCatalogOfAnotherSweepRefused(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	spec := func(dur string, rates string) *Spec {
		return mustSpec(t, `{"scenario": "pump", "set": {"runtime.duration": "`+dur+`"}, "grid": {"links.bottleneck.rate": [`+rates+`]}, "seeds": [1]}`)
	}
	if _, err := Run(context.Background(), spec("200ms", `"10Mbps"`), Options{Catalog: cat, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), spec("200ms", `"10Mbps", "20Mbps"`), Options{Catalog: cat, Jobs: 1})
	if err != nil || res.Skipped != 1 || res.Ran != 1 {
		t.Fatalf("the same sweep with a point more: %+v, %v; want 1 skipped, 1 run", res, err)
	}
	_, err = Run(context.Background(), spec("300ms", `"10Mbps"`), Options{Catalog: cat, Jobs: 1})
	if err == nil || !strings.Contains(err.Error(), "holds the runs of a sweep with other fixed settings") || !strings.Contains(err.Error(), `runtime.duration=\"300ms\"`) {
		t.Fatalf("a sweep of another duration into the catalog: %v; want it refused, naming both settings", err)
	}
	if rows, err := ReadCatalog(cat); err != nil || len(rows) != 2 {
		t.Errorf("the catalog after the refusal: %d rows, %v; want the 2 it had", len(rows), err)
	}
}

// Seeds up to 2^64 − 1 are catalogued as they were run (the seed column is
// uint64; as int64 they came back negative).
func TestCatalogKeepsLargeSeeds(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	js := `{"scenario": "pump", "set": {"runtime.duration": "10ms"}, "seeds": [18446744073709551615, 9223372036854775808, 1]}`
	if _, err := Run(context.Background(), mustSpec(t, js), Options{Catalog: cat, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadCatalog(cat)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, r := range rows {
		got = append(got, r.Seed)
	}
	if want := []uint64{18446744073709551615, 9223372036854775808, 1}; !slices.Equal(got, want) {
		t.Errorf("catalogued seeds %v, want %v", got, want)
	}
}

// Plan says what Run will do, point by point: the spec of
// TestRunCatalogResumeAndPages, whose delay axis's one point is the rate
// axis's 60 Mbps point (the baseline, run once), then the same spec with a
// second seed over the catalog the first made.
func TestPlanIsWhatRunDoes(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.parquet")
	js := `{"scenario": "pump", "set": {"runtime.duration": "300ms", "links.bottleneck.rate": "60Mbps"},
		"axes": {"links.bottleneck.rate": ["30Mbps", "60Mbps", "150Mbps"], "links.bottleneck.delay": ["19ms"]},
		"seeds": [1]}`
	statuses := func(plan []Planned) []string {
		var out []string
		for _, p := range plan {
			out = append(out, p.Status)
		}
		return out
	}
	plan, err := Plan(mustSpec(t, js), Options{Catalog: cat})
	if err != nil {
		t.Fatalf("Plan error %v", err)
	}
	if got, want := statuses(plan), []string{PlanRun, PlanRun, PlanRun, PlanShared}; !slices.Equal(got, want) {
		t.Errorf("plan before any run %q, want %q", got, want)
	}
	if _, err := os.Stat(cat); err == nil {
		t.Errorf("Plan wrote the catalog")
	}
	if got, want := plan[3].Sets, []string{`runtime.duration="300ms"`, `links.bottleneck.rate="60Mbps"`, `links.bottleneck.delay="19ms"`, "runtime.seed=1"}; !slices.Equal(got, want) {
		t.Errorf("the delay point's sets %q, want %q", got, want)
	}
	res, err := Run(context.Background(), mustSpec(t, js), Options{Catalog: cat, Jobs: 2})
	if err != nil || res.Ran != 3 || res.Reused != 1 {
		t.Fatalf("Run = %+v, %v; want 3 runs and 1 reused", res, err)
	}
	rows, err := ReadCatalog(cat)
	if err != nil {
		t.Fatalf("ReadCatalog error %v", err)
	}
	for i, r := range rows { // one flow: a row per point, in the points' order
		if r.ConfigHash != plan[i].Hash || r.Axis != plan[i].Point.Axis {
			t.Errorf("row %d: hash %s on axis %q, planned %s on %q", i, r.ConfigHash, r.Axis, plan[i].Hash, plan[i].Point.Axis)
		}
	}
	js2 := strings.Replace(js, `"seeds": [1]`, `"seeds": [1, 2]`, 1)
	plan2, err := Plan(mustSpec(t, js2), Options{Catalog: cat})
	if err != nil {
		t.Fatalf("Plan over the catalog error %v", err)
	}
	want := []string{PlanCatalogued, PlanRun, PlanCatalogued, PlanRun, PlanCatalogued, PlanRun, PlanCatalogued, PlanShared}
	if got := statuses(plan2); !slices.Equal(got, want) {
		t.Errorf("plan over the catalog %q, want %q", got, want)
	}
	// Invalid points are refused as Run refuses them, every one named.
	bad := mustSpec(t, `{"scenario": "pump", "axes": {"links.bottleneck.rate": ["lots", "10Mbps", "many"]}, "seeds": [1, 2]}`)
	_, err = Plan(bad, Options{})
	var pes PointErrors
	if !errors.As(err, &pes) || len(pes) != 2 || !strings.Contains(pes[0].Error(), `rate: "lots"`) {
		t.Errorf("Plan of invalid points: %v; want both named", err)
	}
}
