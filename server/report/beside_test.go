package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartIDs are the panels of a page.
func chartIDs(d pageData) map[string]string {
	ids := map[string]string{}
	for _, g := range d.Groups {
		for _, c := range g.Charts {
			ids[c.ID] = c.Title
		}
	}
	return ids
}

// findRun is the series of chart id whose label starts with prefix and
// names run.
func findRun(d pageData, id, prefix, run string) *series {
	for _, g := range d.Groups {
		for _, c := range g.Charts {
			for _, s := range c.Series {
				if c.ID == id && strings.HasPrefix(s.Label, prefix) && strings.HasSuffix(s.Label, " · "+run) {
					return s
				}
			}
		}
	}
	return nil
}

// Two runs on one page: the second's series go into the first's panels,
// dashed, in the colour of the first's series of the same name, holding
// the values the second run's own page shows; the first's keep theirs.
// The BDP, a fact of the path, is drawn once; event ticks keep a panel per
// run; a panel only one run has says whose it is.
func TestBesideOverlaysTwoRuns(t *testing.T) {
	cubic := []string{"runtime.duration=2s"}
	bbr := []string{"runtime.duration=2s", "flows.f0.cc=bbr"}
	ownA, ownB := writePage(t, runReport(t, "p-rtr-p", cubic)), writePage(t, runReport(t, "p-rtr-p", bbr))
	a := runReport(t, "p-rtr-p", cubic)
	if err := a.Beside(runReport(t, "p-rtr-p", bbr), "cubic", "bbr"); err != nil {
		t.Fatal(err)
	}
	d := writePage(t, a)

	for _, c := range []struct{ chart, label string }{
		{"f0-rtt", "srtt"}, {"f0-rates", "goodput"}, {"f0-inflight", "cwnd"}, {"f0-phase", "CA state"},
		{"q-bottleneck-ab-backlog", "backlog (packets)"}, {"q-bottleneck-ab-sojourn", "sojourn"},
	} {
		sa, sb := findRun(d, c.chart, c.label, "cubic"), findRun(d, c.chart, c.label, "bbr")
		wa, wb := findSeries(ownA, c.chart, c.label), findSeries(ownB, c.chart, c.label)
		if sa == nil || sb == nil || wa == nil || wb == nil {
			t.Errorf("%s: no %q of both runs (cubic %v, bbr %v) or of their own pages (%v, %v)", c.chart, c.label, sa != nil, sb != nil, wa != nil, wb != nil)
			continue
		}
		if sa.Dash != 0 || sb.Dash != 1 {
			t.Errorf("%s %q: dashed cubic %v, bbr %v; want the second run's alone dashed", c.chart, c.label, sa.Dash, sb.Dash)
		}
		if sa.Color != sb.Color {
			t.Errorf("%s %q: colours %s and %s, want one", c.chart, c.label, sa.Color, sb.Color)
		}
		if sa.Data != wa.Data || sb.Data != wb.Data {
			t.Errorf("%s %q: the values differ from each run's own page", c.chart, c.label)
		}
		if sa.Data == sb.Data {
			t.Errorf("%s %q: CUBIC and BBR drew the same values; the test needs two different runs", c.chart, c.label)
		}
	}

	bdp := 0
	for _, g := range d.Groups {
		for _, c := range g.Charts {
			for _, s := range c.Series {
				if strings.HasPrefix(s.Label, "BDP") {
					bdp++
				}
			}
		}
	}
	if bdp != 1 {
		t.Errorf("%d BDP lines, want one", bdp)
	}

	ids, idsA, idsB := chartIDs(d), chartIDs(ownA), chartIDs(ownB)
	if !strings.HasSuffix(ids["f0-events"], " · cubic") || !strings.HasSuffix(ids["f0-events-beside1"], " · bbr") {
		t.Errorf("event ticks: panels %q and %q, want one per run, titled with its label", ids["f0-events"], ids["f0-events-beside1"])
	}
	only := 0
	for id, title := range ids {
		_, inA := idsA[id]
		_, inB := idsB[strings.TrimSuffix(id, "-beside1")]
		switch {
		case inA && !inB:
			only++
			if !strings.HasSuffix(title, " · cubic") {
				t.Errorf("panel %s, CUBIC's alone, is titled %q: want it to say cubic", id, title)
			}
		case inB && !inA:
			only++
			if !strings.HasSuffix(title, " · bbr") {
				t.Errorf("panel %s, BBR's alone, is titled %q: want it to say bbr", id, title)
			}
		}
	}
	if only == 0 {
		t.Error("no panel one run alone has: CUBIC's and BBR's signals should make some")
	}
	for id := range idsA {
		if _, ok := ids[id]; !ok {
			t.Errorf("CUBIC's panel %s is missing from the page", id)
		}
	}
	for id := range idsB {
		if _, ok := ids[id]; !ok && ids[id+"-beside1"] == "" {
			t.Errorf("BBR's panel %s is missing from the page", id)
		}
	}
}

// Two runs must share the time axis and have two names.
func TestBesideRefuses(t *testing.T) {
	a := runReport(t, "pump", []string{"runtime.duration=1s"})
	if err := a.Beside(runReport(t, "pump", []string{"runtime.duration=2s"}), "a", "b"); err == nil || !strings.Contains(err.Error(), "time axes differ") {
		t.Errorf("runs of 1 s and 2 s: %v, want an error saying their time axes differ", err)
	}
	for _, l := range [][2]string{{"x", "x"}, {"", "b"}, {"a", ""}} {
		if err := a.Beside(runReport(t, "pump", []string{"runtime.duration=1s"}), l[0], l[1]); err == nil || !strings.Contains(err.Error(), "labels") {
			t.Errorf("labels %q: %v, want an error about the labels", l, err)
		}
	}
}

// From trace files, as compare --trace writes them (the kernel's tables
// without a .run.json): the page's time axis spans the longer run, and a
// run shorter than the other keeps its values where they were.
func TestReadBesideSharesTheLongerSpan(t *testing.T) {
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "sim-seed1.parquet"), filepath.Join(dir, "kernel-seed1.parquet")
	runReportTrace(t, "p-rtr-p", []string{"runtime.duration=3s"}, pa)
	runReportTrace(t, "p-rtr-p", []string{"runtime.duration=2s", "flows.f0.cc=bbr"}, pb)
	if err := os.Remove(RunInfoPath(pb)); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBeside([]string{strings.TrimSuffix(pa, ".parquet"), pb}, []string{"sim", "kernel"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.meta.HorizonPs != 3e12 || b.beside.runs[0].g != b.g {
		t.Errorf("span %d ps, grids %+v and %+v: want 3 s on one grid", b.meta.HorizonPs, b.g, b.beside.runs[0].g)
	}
	d := writePage(t, b)
	k := findRun(d, "f0-rtt", "srtt", "kernel")
	if k == nil {
		t.Fatal("no kernel srtt")
	}
	vals := decodeSlots(t, k.Data)
	last := len(vals) - 1
	for last >= 0 && math.IsNaN(vals[last]) {
		last--
	}
	if end := float64(last/slots) * float64(b.g.w) / 1e12; end < 1.9 || end > 2 {
		t.Errorf("the 2 s run's srtt ends at %.3f s of the 3 s axis, want at 2 s", end)
	}
}

// Up to three runs beside a page's own, each in a dash pattern of its own
// and the colour of the page's series of the same name, the page's note
// saying which is which; a fourth, or another name for the page's own
// run, is refused.
func TestBesideThreeRuns(t *testing.T) {
	sets := func(cc string) []string { return []string{"runtime.duration=1s", "flows.f0.cc=" + cc} }
	a := runReport(t, "p-rtr-p", sets("cubic"))
	for _, cc := range []string{"bbr", "reno", "vegas"} {
		if err := a.Beside(runReport(t, "p-rtr-p", sets(cc)), "cubic", cc); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Beside(runReport(t, "p-rtr-p", sets("bic")), "cubic", "bic"); err == nil || !strings.Contains(err.Error(), "at most 3") {
		t.Errorf("a fourth run beside: %v, want refused", err)
	}
	if err := a.Beside(runReport(t, "p-rtr-p", sets("bic")), "CUBIC", "bic"); err == nil || !strings.Contains(err.Error(), `labelled "cubic"`) {
		t.Errorf("another name for the page's own run: %v, want refused", err)
	}
	var page bytes.Buffer
	if err := a.Write(&page); err != nil {
		t.Fatal(err)
	}
	d := pageJSON(t, page.Bytes())
	if got := d.Groups[0].Title; got != "flow f0 · cubic · bbr · reno · vegas" {
		t.Errorf("the flow's title %q, want each run's CC once", got)
	}
	own := findRun(d, "f0-rtt", "srtt", "cubic")
	for i, cc := range []string{"bbr", "reno", "vegas"} {
		s := findRun(d, "f0-rtt", "srtt", cc)
		if s == nil || own == nil || s.Dash != i+1 || s.Color != own.Color || s.Data == own.Data {
			t.Errorf("srtt of %s: %+v, want dash %d in cubic's colour, its own values", cc, s, i+1)
		}
	}
	if !bytes.Contains(page.Bytes(), []byte("4 runs on one page: solid lines are cubic (test), dashed ones bbr (test), dotted ones reno (test), dash-dotted ones vegas (test)")) {
		t.Error("the page's note does not say which run is drawn how")
	}
}
