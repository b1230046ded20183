package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// chartRow is a catalog row of one flow with the given parameters (path →
// JSON value) and goodput.
func chartRow(run string, seed uint64, flow, cc string, goodputBps int64, params map[string]string) Row {
	ps := map[string]json.RawMessage{}
	for k, v := range params {
		ps[k] = json.RawMessage(v)
	}
	g := goodputBps
	return Row{Run: run, Seed: seed, Flow: flow, CC: cc, Params: ps, GoodputBps: &g}
}

// catalogPage writes the catalog page of rows under spec and returns it.
func catalogPage(t *testing.T, spec *Spec, rows []Row, metric string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.html")
	if err := WriteCatalogHTML(path, spec, rows, metric); err != nil {
		t.Fatalf("WriteCatalogHTML error %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("catalog page: %v", err)
	}
	return string(b)
}

var (
	legendRe = regexp.MustCompile(`<rect x="[0-9.]+" y="[0-9.]+" width="10" height="10" fill="[^"]+"/><text [^>]*>([^<]*)</text>`)
	titleRe  = regexp.MustCompile(`<title>([^<]*)</title>`)
)

// legend returns the series labels of a catalog page, in order.
func legend(page string) []string {
	var labels []string
	for _, m := range legendRe.FindAllStringSubmatch(page, -1) {
		labels = append(labels, m[1])
	}
	return labels
}

// With a second grid parameter, a series is one combination of every swept
// parameter but the x axis: cubic and bbr at two buffer limits are four
// series, each labelled with both, and a dot's hover names every parameter.
func TestCatalogSeriesAreParameterCombinations(t *testing.T) {
	spec := mustSpec(t, `{"scenario": "p-rtr-p",
		"grid": {"flows.f0.cc": ["cubic", "bbr"], "links.bottleneck.ab.qdisc.limit": ["0.25BDP", "4BDP"]},
		"axes": {"links.bottleneck.delay": ["5ms", "50ms"]}}`)
	var rows []Row
	n := 0
	for _, cc := range []string{"cubic", "bbr"} {
		for _, lim := range []string{"0.25BDP", "4BDP"} {
			for _, d := range []string{"5ms", "50ms"} {
				n++
				r := chartRow(strings.Repeat("a", n), 1, "f0", cc, int64(n)*1e6, map[string]string{
					"flows.f0.cc": `"` + cc + `"`, "links.bottleneck.ab.qdisc.limit": `"` + lim + `"`, "links.bottleneck.delay": `"` + d + `"`})
				r.Axis = "links.bottleneck.delay"
				rows = append(rows, r)
			}
		}
	}
	page := catalogPage(t, spec, rows, "goodput_bps")
	labels := legend(page)
	want := []string{
		"flows.f0.cc=cubic, links.bottleneck.ab.qdisc.limit=0.25BDP",
		"flows.f0.cc=cubic, links.bottleneck.ab.qdisc.limit=4BDP",
		"flows.f0.cc=bbr, links.bottleneck.ab.qdisc.limit=0.25BDP",
		"flows.f0.cc=bbr, links.bottleneck.ab.qdisc.limit=4BDP",
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("legend = %q, want %q", labels, want)
	}
	// One chart (one axis), one dot per row: the page's title and 8 dots'.
	// A dot's hover names every swept parameter, the seed, flow and CC,
	// the metric (row n's goodput is n Mbps) and the run.
	wantTitles := []string{"ccscope sweep catalog"}
	for i, r := range rows {
		wantTitles = append(wantTitles, fmt.Sprintf("flows.f0.cc=%s  links.bottleneck.ab.qdisc.limit=%s  links.bottleneck.delay=%s  seed 1  flow f0 (%s): goodput (Mbps) = %d  (run %s)",
			r.CC, display(r.Params["links.bottleneck.ab.qdisc.limit"]), display(r.Params["links.bottleneck.delay"]), r.CC, i+1, r.Run))
	}
	var titles []string
	for _, m := range titleRe.FindAllStringSubmatch(page, -1) {
		titles = append(titles, m[1])
	}
	if len(titles) != len(wantTitles) {
		t.Fatalf("catalog page has %d titles, want %d: the page's and 8 dots'", len(titles), len(wantTitles))
	}
	// The dots come series by series; which order is the legend's concern.
	slices.Sort(titles[1:])
	slices.Sort(wantTitles[1:])
	for i := range titles {
		if titles[i] != wantTitles[i] {
			t.Errorf("title %d = %q, want %q", i, titles[i], wantTitles[i])
		}
	}
}

// In a run of several flow groups (rrul: up/0-3, down/0-3, one seed), a
// series is one group's flows, not all eight, and the caption says a bar
// spans the group's flows as well as the seeds.
func TestCatalogBarsSpanOneFlowGroup(t *testing.T) {
	spec := mustSpec(t, `{"scenario": "rrul", "axes": {"links.bottleneck.delay": ["10ms", "20ms"]}, "seeds": [1]}`)
	var rows []Row
	for i, d := range []string{"10ms", "20ms"} {
		for _, g := range []string{"up", "down"} {
			for k := range 4 {
				r := chartRow(strings.Repeat("b", i+1), 1, g+"/"+string(rune('0'+k)), "cubic", int64(1e6+k*1e5),
					map[string]string{"links.bottleneck.delay": `"` + d + `"`})
				r.Axis = "links.bottleneck.delay"
				rows = append(rows, r)
			}
		}
	}
	page := catalogPage(t, spec, rows, "goodput_bps")
	labels := legend(page)
	if want := []string{"flow up/*, cubic", "flow down/*, cubic"}; strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("legend = %q, want %q", labels, want)
	}
	for _, want := range []string{"over its one seed and every flow of its group", "up: 4 flows, up/0 … up/3", "down: 4 flows"} {
		if !strings.Contains(page, want) {
			t.Errorf("catalog page does not say %q", want)
		}
	}
	if strings.Contains(page, "the bar spans the seeds") {
		t.Errorf("catalog page says a bar spans the seeds only")
	}
}

// With one flow per run the caption says a bar spans the seeds alone.
func TestCatalogBarsSpanSeeds(t *testing.T) {
	spec := mustSpec(t, `{"scenario": "pump", "axes": {"links.bottleneck.delay": ["10ms", "20ms"]}, "seeds": [1, 2]}`)
	var rows []Row
	for i, d := range []string{"10ms", "20ms"} {
		for s := range 2 {
			r := chartRow(strings.Repeat("c", 2*i+s+1), uint64(s+1), "f0", "cubic", 1e6, map[string]string{"links.bottleneck.delay": `"` + d + `"`})
			r.Axis = "links.bottleneck.delay"
			rows = append(rows, r)
		}
	}
	page := catalogPage(t, spec, rows, "goodput_bps")
	if want := "A bar spans the values of a series at one x over its seeds (one flow each)."; !strings.Contains(page, want) {
		t.Errorf("catalog page does not say %q", want)
	}
}

// An x axis of numbers is spaced by value: linearly, or logarithmically
// when the positive values span a decade (0 then set apart at the left);
// other values are evenly spaced, and each chart's caption says which.
func TestCatalogXAxisSpacing(t *testing.T) {
	tickRe := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">([^<]*)</text>`)
	// 0 has no place on a log scale, so the page gives it the axis's left
	// end and the break "//" after it, and lays the positive values out
	// logarithmically over the rest: their domain [lo, hi] maps onto
	// [zeroGap, 1] of the axis, v at zeroGap + (1-zeroGap)·log(v/lo)/log(hi/lo).
	// zeroGap is the 12 % of the axis the page sets 0 apart in
	// (logZeroGap); with 0, 0.001, 0.01 and 0.1 the domain is [0.001, 0.1],
	// so 0.001, its lower end, sits at zeroGap = 0.12, 0.01 halfway along
	// the rest at 0.56, and 0.1 at 1.
	const zeroGap = 0.12
	logPos := func(v, lo, hi float64) float64 {
		return zeroGap + (1-zeroGap)*math.Log(v/lo)/math.Log(hi/lo)
	}
	for _, tc := range []struct {
		name    string
		values  []string // JSON, as written
		want    []float64
		caption string
	}{
		{"log with 0 apart", []string{"0", "0.001", "0.01", "0.1"}, []float64{0, logPos(0.001, 0.001, 0.1), logPos(0.01, 0.001, 0.1), logPos(0.1, 0.001, 0.1)},
			"logarithmic in the value, with 0 set apart"},
		{"log", []string{"0.001", "0.01", "0.1"}, []float64{0, 0.5, 1}, "logarithmic in the value."},
		{"linear", []string{"10", "20", "40"}, []float64{0, 1.0 / 3, 1}, "linear in the value"},
		{"one unit", []string{`"40ms"`, `"10ms"`, `"20ms"`}, []float64{0, 1.0 / 3, 1}, "linear in the value"},
		{"categorical", []string{`"fifo"`, `"codel"`, `"fq_codel"`}, []float64{0, 0.5, 1}, "categorical"},
		{"mixed units", []string{`"1s"`, `"5ms"`, `"20ms"`}, []float64{0, 0.5, 1}, "categorical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const path = "links.bottleneck.x"
			js, _ := json.Marshal(map[string]any{"scenario": "pump", "axes": map[string]any{path: rawValues(tc.values)}})
			spec := mustSpec(t, string(js))
			var rows []Row
			for i, v := range tc.values {
				r := chartRow(strings.Repeat("d", i+1), 1, "f0", "cubic", int64(i+1)*1e6, map[string]string{path: v})
				r.Axis = path
				rows = append(rows, r)
			}
			page := catalogPage(t, spec, rows, "goodput_bps")
			var xs []float64
			for _, m := range tickRe.FindAllStringSubmatch(page, -1) {
				if m[2] == path || m[2] == "//" {
					continue
				}
				x, _ := strconv.ParseFloat(m[1], 64)
				xs = append(xs, x)
			}
			if len(xs) != len(tc.want) {
				t.Fatalf("%d x labels, want %d", len(xs), len(tc.want))
			}
			for i, x := range xs {
				if got := (x - xs[0]) / (xs[len(xs)-1] - xs[0]); math.Abs(got-tc.want[i]) > 0.01 {
					t.Errorf("x label %d at %.3f of the axis, want %.3f", i, got, tc.want[i])
				}
			}
			if !strings.Contains(page, tc.caption) {
				t.Errorf("catalog page does not say %q", tc.caption)
			}
		})
	}
}

// rawValues keeps JSON values as written.
func rawValues(vs []string) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = json.RawMessage(v)
	}
	return out
}

// A rate or delay axis starts at 0, and its ticks are round: multiples of
// 1, 2 or 5 times a power of ten, the top one at or above the largest value.
func TestCatalogYAxisFromZeroWithRoundTicks(t *testing.T) {
	yTickRe := regexp.MustCompile(`text-anchor="end">([^<]*)</text>`)
	for _, tc := range []struct {
		name, metric string
		values       []float64 // in the metric's unit (bps, ps)
		want         []string
	}{
		{"delay", "rtt_p50_ps", []float64{59.65e9, 70e9, 80e9}, []string{"0", "20", "40", "60", "80"}},
		{"rate", "goodput_bps", []float64{21.84e6, 43.68e6, 87.36e6}, []string{"0", "20", "40", "60", "80", "100"}},
		{"small rate", "goodput_bps", []float64{1.101e6, 1.343e6}, []string{"0.0", "0.5", "1.0", "1.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const path = "links.bottleneck.delay"
			spec := mustSpec(t, `{"scenario": "pump", "axes": {"links.bottleneck.delay": ["10ms", "20ms", "40ms"]}}`)
			var rows []Row
			for i, v := range tc.values {
				r := chartRow(strings.Repeat("e", i+1), 1, "f0", "cubic", int64(v), map[string]string{path: fmt.Sprintf(`"%dms"`, 10<<i)})
				p := int64(v)
				r.RTTP50Ps, r.Axis = &p, path
				rows = append(rows, r)
			}
			page := catalogPage(t, spec, rows, tc.metric)
			var got []string
			for _, m := range yTickRe.FindAllStringSubmatch(page, -1) {
				got = append(got, m[1])
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("y ticks = %q, want %q", got, tc.want)
			}
		})
	}
}
