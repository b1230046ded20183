package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
	var labels []string
	for _, m := range legendRe.FindAllStringSubmatch(page, -1) {
		labels = append(labels, m[1])
	}
	want := []string{
		"flows.f0.cc=cubic, links.bottleneck.ab.qdisc.limit=0.25BDP",
		"flows.f0.cc=cubic, links.bottleneck.ab.qdisc.limit=4BDP",
		"flows.f0.cc=bbr, links.bottleneck.ab.qdisc.limit=0.25BDP",
		"flows.f0.cc=bbr, links.bottleneck.ab.qdisc.limit=4BDP",
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("legend = %q, want %q", labels, want)
	}
	titles := titleRe.FindAllStringSubmatch(page, -1)
	if len(titles) < 2 {
		t.Fatalf("catalog page has %d titles, want the page's and 8 dots'", len(titles))
	}
	for _, m := range titles[1:] {
		for _, p := range []string{"flows.f0.cc=", "links.bottleneck.ab.qdisc.limit=", "links.bottleneck.delay="} {
			if !strings.Contains(m[1], p) {
				t.Errorf("hover %q does not name %s", m[1], strings.TrimSuffix(p, "="))
			}
		}
	}
}
