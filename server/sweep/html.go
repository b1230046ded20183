package sweep

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
)

// palette is the series colours (Okabe–Ito, readable by colour-blind
// readers).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}

// metricValue returns row r's value of a fixed numeric column, scaled to its
// display unit, and that unit's label.
func metricValue(name string, r *Row) (float64, bool) {
	for _, c := range fixedColumns {
		if c.name != name {
			continue
		}
		v := c.get(r)
		switch x := v.(type) {
		case int64:
			return scale(name, float64(x)), true
		case float64:
			return scale(name, x), true
		}
		return 0, false
	}
	return 0, false
}

func scale(name string, v float64) float64 {
	switch {
	case strings.HasSuffix(name, "_bps"):
		return v / 1e6
	case strings.HasSuffix(name, "_ps"):
		return v / float64(sim.Millisecond)
	}
	return v
}

func unitLabel(name string) string {
	switch {
	case strings.HasSuffix(name, "_bps"):
		return strings.TrimSuffix(name, "_bps") + " (Mbps)"
	case strings.HasSuffix(name, "_ps"):
		return strings.TrimSuffix(name, "_ps") + " (ms)"
	}
	return name
}

// CheckMetric says why name cannot be the catalog page's metric: it is not
// a numeric fixed column.
func CheckMetric(name string) error {
	for _, c := range fixedColumns {
		if c.name == name && c.kind != kString {
			return nil
		}
	}
	return fmt.Errorf("sweep: --metric %q: not a numeric catalog column (one of %s)", name, strings.Join(MetricNames(), ", "))
}

// MetricNames lists the columns the catalog page can chart.
func MetricNames() []string {
	var out []string
	for _, c := range fixedColumns {
		if c.kind != kString {
			out = append(out, c.name)
		}
	}
	return out
}

type chart struct {
	Axis    string
	SVG     template.HTML
	Caption string // what a bar spans, how the x axis is scaled
	// Planes are the axis's throughput–delay planes, one per value, and
	// PlaneNote what they show or why there are none (svgPlanes).
	Planes    template.HTML
	PlaneNote string
}

// WriteCatalogHTML writes the catalog page: one chart per impairment axis
// (without axes, one chart against the last grid parameter) of metric, one
// series per combination of the other swept parameters, each x showing the seeds' spread (a min–max bar, every seed a dot
// linking to its run's page) and the median joined by a line.
func WriteCatalogHTML(path string, spec *Spec, rows []Row, metric string) error {
	if err := CheckMetric(metric); err != nil {
		return err
	}
	// A run's page is linked only where it is: a resumed sweep may write
	// this page elsewhere than the one that wrote the runs' pages.
	rows = slices.Clone(rows)
	for i := range rows {
		if r := rows[i].Report; r != nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), *r)); err != nil {
				rows[i].Report = nil
			}
		}
	}
	var axes []string
	for _, a := range spec.Axes {
		axes = append(axes, a.Path)
	}
	byAxis := len(axes) > 0
	if !byAxis && len(spec.Grid) > 0 {
		for _, g := range spec.Grid {
			if g.Path != "flows.f0.cc" || len(axes) == 0 {
				axes = append(axes[:0], g.Path)
			}
		}
	}
	var charts []chart
	for _, ax := range axes {
		var sel []*Row
		for i := range rows {
			r := &rows[i]
			if _, ok := r.Params[ax]; !ok {
				continue
			}
			if byAxis && r.Axis != ax {
				continue
			}
			sel = append(sel, r)
		}
		paths := sweptPaths(spec, sel)
		svg, caption := svgChart(ax, paths, sel, metric)
		planes, note := svgPlanes(fmt.Sprintf("plane%d", len(charts)), ax, paths, sel, metric)
		charts = append(charts, chart{Axis: ax, SVG: template.HTML(svg), Caption: caption, Planes: template.HTML(planes), PlaneNote: note})
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	specJSON, _ := json.MarshalIndent(specView(spec), "", "  ")
	runs := map[string]bool{}
	for i := range rows {
		runs[rows[i].Run] = true
	}
	err = catalogTmpl.Execute(f, map[string]any{
		"Metric": unitLabel(metric), "Charts": charts, "Runs": len(runs), "Rows": len(rows), "Spec": string(specJSON),
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// specView renders a spec back as JSON-friendly maps (ordered by key; the
// page is for reading).
func specView(s *Spec) map[string]any {
	m := map[string]any{"scenario": json.RawMessage(s.Scenario)}
	for _, sec := range []struct {
		name string
		ps   Params
	}{{"set", s.Set}, {"grid", s.Grid}, {"axes", s.Axes}} {
		if len(sec.ps) == 0 {
			continue
		}
		o := map[string]any{}
		for _, p := range sec.ps {
			o[p.Path] = p.Values
		}
		m[sec.name] = o
	}
	if len(s.Explicit) > 0 {
		var pts []map[string]json.RawMessage
		for _, pt := range s.Explicit {
			o := map[string]json.RawMessage{}
			for _, p := range pt {
				o[p.Path] = p.Values[0]
			}
			pts = append(pts, o)
		}
		m["points"] = pts
	}
	if len(s.Seeds) > 0 {
		m["seeds"] = s.Seeds
	}
	return m
}

type seriesPoint struct {
	vals []float64
	rows []*Row
}

// series is one line of a chart: the rows sharing a value of every swept
// parameter but the x axis.
type series struct {
	label string
	pts   map[int]*seriesPoint
}

// sweptPaths lists the parameters rows carry, in the spec's order (grid,
// axes, explicit points), then any others by name.
func sweptPaths(spec *Spec, rows []*Row) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, ps := range append([]Params{spec.Grid, spec.Axes}, spec.Explicit...) {
		for _, p := range ps {
			if p.Path != "seed" {
				add(p.Path)
			}
		}
	}
	var rest []string
	for _, r := range rows {
		for p := range r.Params {
			if !seen[p] {
				rest = append(rest, p)
			}
		}
	}
	sort.Strings(rest)
	for _, p := range rest {
		add(p)
	}
	return out
}

// paramText names row r's value of each of paths it carries, skipping
// except.
func paramText(r *Row, paths []string, except string) []string {
	var out []string
	for _, p := range paths {
		if v, ok := r.Params[p]; ok && p != except {
			out = append(out, p+"="+display(v))
		}
	}
	return out
}

// flowGroup is the group a flow belongs to: "up" for rrul's "up/3" (a
// group's flows are named group/index), else the flow itself.
func flowGroup(id string) string {
	i := strings.LastIndexByte(id, '/')
	if i <= 0 || i == len(id)-1 {
		return id
	}
	if _, err := strconv.Atoi(id[i+1:]); err != nil {
		return id
	}
	return id[:i]
}

// seriesLabel names a series by its swept parameters (other than the x
// axis), its flow group when the chart has several, and its CC when the
// parameters do not already say it.
func seriesLabel(r *Row, paths []string, axis string, byGroup bool) string {
	parts := paramText(r, paths, axis)
	if byGroup {
		g := flowGroup(r.Flow)
		if g != r.Flow {
			g += "/*"
		}
		parts = append(parts, "flow "+g)
	}
	named := false
	for _, p := range parts {
		named = named || strings.HasSuffix(p, "="+r.CC)
	}
	if !named {
		parts = append(parts, r.CC)
	}
	return strings.Join(parts, ", ")
}

// spanCaption says what a bar spans: the seeds, and in a flow group of
// several flows (flows, group → its flows), those flows too.
func spanCaption(seeds int, flows map[string]map[string]bool) string {
	seedText := "its seeds"
	if seeds == 1 {
		seedText = "its one seed"
	}
	var multi []string
	for _, g := range sortedKeys(flows) {
		if n := len(flows[g]); n > 1 {
			fs := sortedKeys(flows[g])
			multi = append(multi, fmt.Sprintf("%s: %d flows, %s … %s", g, n, fs[0], fs[n-1]))
		}
	}
	if len(multi) == 0 {
		return "A bar spans the values of a series at one x over " + seedText + " (one flow each)."
	}
	return "A bar spans the values of a series at one x over " + seedText + " and every flow of its group (" +
		strings.Join(multi, "; ") + "): each dot is one flow of one run."
}

// svgChart draws one axis's chart as inline SVG: one series per value of
// the swept parameters (paths, in order) other than axis, and per flow
// group when the runs have several, the legend under the plot. It returns
// the chart and its caption.
func svgChart(axis string, paths []string, rows []*Row, metric string) (string, string) {
	const W, ml, mr, mt, mb = 720.0, 70.0, 20.0, 20.0, 50.0
	xs, sc := axisValues(axis, rows)
	xi := map[string]int{}
	for i, x := range xs {
		xi[x] = i
	}
	flows, seeds := flowGroups(rows, metric)
	colours := seriesColours(axis, paths, rows, metric, len(flows) > 1)
	caption := spanCaption(len(seeds), flows) + " " + sc.caption()
	var ss []*series
	byLabel := map[string]*series{}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		v, ok := metricValue(metric, r)
		if !ok {
			continue
		}
		label := seriesLabel(r, paths, axis, len(flows) > 1)
		s := byLabel[label]
		if s == nil {
			s = &series{label: label, pts: map[int]*seriesPoint{}}
			byLabel[label] = s
			ss = append(ss, s)
		}
		i := xi[string(r.Params[axis])]
		sp := s.pts[i]
		if sp == nil {
			sp = &seriesPoint{}
			s.pts[i] = sp
		}
		sp.vals = append(sp.vals, v)
		sp.rows = append(sp.rows, r)
		ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
	}
	const legendLine = 16.0
	H := 290.0 + mt + mb + legendLine*float64(len(ss))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="11">`, W, H, W, H)
	if len(ss) == 0 || len(xs) == 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g">no values of %s</text></svg>`, ml, H/2, html.EscapeString(metric))
		return b.String(), ""
	}
	ymin, ymax, ystep := yAxis(metric, ymin, ymax)
	pw, ph := W-ml-mr, 290.0-mt
	xpos := func(i int) float64 { return ml + pw*sc.pos(xs, i) }
	ypos := func(v float64) float64 { return mt + ph*(1-(v-ymin)/(ymax-ymin)) }
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`, ml, mt, pw, ph)
	if sc.zeroApart {
		x := ml + pw*logZeroGap/2 // the break between 0 and the log scale
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">//</text>`, x, mt+ph+4)
	}
	decimals := max(0, -int(math.Floor(math.Log10(ystep)+1e-9)))
	for k := 0; ymin+float64(k)*ystep <= ymax+ystep/2; k++ {
		v := ymin + float64(k)*ystep
		y := ypos(v)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`,
			ml, ml+pw, y, y, ml-4, y+4, strconv.FormatFloat(v, 'f', decimals, 64))
	}
	lastLabel := math.Inf(-1)
	for i, x := range xs {
		if xpos(i)-lastLabel < 40 { // would overlap the label before
			continue
		}
		lastLabel = xpos(i)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`, xpos(i), mt+ph+14, html.EscapeString(display(json.RawMessage(x))))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, ml+pw/2, mt+ph+mb-18, html.EscapeString(axis))
	fmt.Fprintf(&b, `<text transform="translate(14 %g) rotate(-90)" text-anchor="middle">%s</text>`, mt+ph/2, html.EscapeString(unitLabel(metric)))
	for si, s := range ss {
		col := colours[s.label]
		off := (float64(si) - float64(len(ss)-1)/2) * 3 // small dodge so spreads do not overlap
		var line []string
		for i := range xs {
			sp := s.pts[i]
			if sp == nil {
				continue
			}
			x := xpos(i) + off
			lo, hi, med := spread(sp.vals)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2" opacity="0.5"/>`, x, x, ypos(lo), ypos(hi), col)
			line = append(line, fmt.Sprintf("%.1f,%.1f", x, ypos(med)))
			for j, v := range sp.vals {
				r := sp.rows[j]
				tip := fmt.Sprintf("%s  seed %d  flow %s (%s): %s = %s  (run %s)", strings.Join(paramText(r, paths, ""), "  "), r.Seed, r.Flow, r.CC,
					unitLabel(metric), strconv.FormatFloat(v, 'g', 5, 64), r.Run)
				dot := fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s</title></circle>`, x, ypos(v), col, html.EscapeString(tip))
				if r.Report != nil {
					dot = fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(filepath.ToSlash(*r.Report)), dot)
				}
				b.WriteString(dot)
			}
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.Join(line, " "), col)
		ly := mt + ph + mb + legendLine*float64(si)
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g">%s</text>`,
			ml, ly, col, ml+14, ly+9, html.EscapeString(s.label))
	}
	b.WriteString(`</svg>`)
	return b.String(), caption
}

// axisValues lists the values of axis the rows take, ascending when all
// are numbers of one unit, else in the order first seen, and their scale.
func axisValues(axis string, rows []*Row) ([]string, xScale) {
	var xs []string
	seen := map[string]bool{}
	for _, r := range rows {
		if k := string(r.Params[axis]); !seen[k] {
			seen[k] = true
			xs = append(xs, k)
		}
	}
	sc := newXScale(xs)
	if sc.kind != xCategorical {
		sort.SliceStable(xs, func(i, j int) bool { return sc.value[xs[i]] < sc.value[xs[j]] })
	}
	return xs, sc
}

// flowGroups maps each flow group of the rows with a value of metric to
// its flows, and lists those rows' seeds.
func flowGroups(rows []*Row, metric string) (flows map[string]map[string]bool, seeds map[uint64]bool) {
	flows, seeds = map[string]map[string]bool{}, map[uint64]bool{}
	for _, r := range rows {
		if _, ok := metricValue(metric, r); !ok {
			continue
		}
		g := flowGroup(r.Flow)
		if flows[g] == nil {
			flows[g] = map[string]bool{}
		}
		flows[g][r.Flow] = true
		seeds[r.Seed] = true
	}
	return flows, seeds
}

// seriesColours gives each series of axis's chart its colour, in the order
// the rows with a value of metric first show them, so that the chart and
// its throughput–delay planes colour a series alike; byGroup is
// seriesLabel's (the rows' flowGroups are several).
func seriesColours(axis string, paths []string, rows []*Row, metric string, byGroup bool) map[string]string {
	colours := map[string]string{}
	for _, r := range rows {
		if _, ok := metricValue(metric, r); !ok {
			continue
		}
		if l := seriesLabel(r, paths, axis, byGroup); colours[l] == "" {
			colours[l] = palette[len(colours)%len(palette)]
		}
	}
	return colours
}

// yAxis returns the y axis's ends and tick step for values from lo to hi of
// metric: a rate or delay axis starts at 0 (so is any other whose values
// are under half their maximum away from it), and the ends are multiples of
// a step of 1, 2 or 5 times a power of ten, two to six steps apart.
func yAxis(metric string, lo, hi float64) (bottom, top, step float64) {
	zeroBased := strings.HasSuffix(metric, "_bps") || strings.HasSuffix(metric, "_ps")
	if lo > 0 && (zeroBased || lo < 0.5*hi) {
		lo = 0
	}
	if hi == lo {
		hi = lo + math.Max(1, math.Abs(lo))
	}
	step = niceStep((hi - lo) / 5)
	bottom, top = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	return bottom, top, step
}

// niceStep returns the least of 1, 2, 5 or 10 times a power of ten that is
// at least x (x > 0).
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if x <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

type xKind int

const (
	xCategorical xKind = iota // evenly spaced, in the order written
	xLinear                   // by value
	xLog                      // by the value's logarithm
)

// logZeroGap is the share of a log-scaled x axis that sets 0 apart, at
// the left.
const logZeroGap = 0.12

// xScale places x values: by value when every value is a number of one
// unit (0.01, or "19ms" with "5ms"), on a log scale when the positive ones
// span a decade or more and none is negative (0 then set apart at the
// left), else evenly as categories.
type xScale struct {
	kind      xKind
	unit      string
	value     map[string]float64 // by raw JSON value, when not categorical
	lo, hi    float64            // the smallest and largest value (positive ones, on a log scale)
	zeroApart bool               // a log scale with 0 among the values
}

var numberWithUnit = regexp.MustCompile(`^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)([A-Za-z%]*)$`)

func newXScale(xs []string) xScale {
	sc := xScale{value: map[string]float64{}}
	units := map[string]bool{}
	for _, x := range xs {
		m := numberWithUnit.FindStringSubmatch(display(json.RawMessage(x)))
		if m == nil {
			return xScale{}
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil || math.IsInf(v, 0) {
			return xScale{}
		}
		units[m[2]] = true
		sc.value[x] = v
	}
	if len(units) != 1 || len(xs) < 2 {
		return xScale{}
	}
	for u := range units {
		sc.unit = u
	}
	sc.lo, sc.hi = math.Inf(1), math.Inf(-1)
	posLo, posHi, neg, zero := math.Inf(1), math.Inf(-1), false, false
	for _, v := range sc.value {
		sc.lo, sc.hi = math.Min(sc.lo, v), math.Max(sc.hi, v)
		switch {
		case v < 0:
			neg = true
		case v == 0:
			zero = true
		default:
			posLo, posHi = math.Min(posLo, v), math.Max(posHi, v)
		}
	}
	if sc.hi == sc.lo { // one value written two ways
		return xScale{}
	}
	sc.kind = xLinear
	if !neg && posHi >= 10*posLo {
		sc.kind, sc.lo, sc.hi, sc.zeroApart = xLog, posLo, posHi, zero
	}
	return sc
}

// pos returns xs[i]'s place across the plot, from 0 (left) to 1.
func (sc xScale) pos(xs []string, i int) float64 {
	switch {
	case len(xs) == 1:
		return 0.5
	case sc.kind == xCategorical:
		return float64(i) / float64(len(xs)-1)
	case sc.kind == xLinear:
		return (sc.value[xs[i]] - sc.lo) / (sc.hi - sc.lo)
	}
	v := sc.value[xs[i]]
	if v == 0 {
		return 0
	}
	start := 0.0
	if sc.zeroApart {
		start = logZeroGap
	}
	return start + (1-start)*math.Log(v/sc.lo)/math.Log(sc.hi/sc.lo)
}

// caption says how the x axis is scaled.
func (sc xScale) caption() string {
	switch sc.kind {
	case xLinear:
		return "The x axis is linear in the value."
	case xLog:
		if sc.zeroApart {
			return "The x axis is logarithmic in the value, with 0 set apart at the left (past the //)."
		}
		return "The x axis is logarithmic in the value."
	}
	return "The x axis is categorical: its values are evenly spaced in the order written, whatever their size."
}

// spread returns the minimum, maximum and median of vs.
func spread(vs []float64) (lo, hi, med float64) {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return s[0], s[n-1], med
}

var catalogTmpl = template.Must(template.New("catalog").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>ccscope sweep catalog</title>
<style>body{font-family:sans-serif;margin:1.5em;max-width:80em} pre{background:#f6f6f6;padding:.5em} h2{font-size:1.1em;margin-top:1.5em} .planes{display:flex;flex-wrap:wrap;gap:.5em}</style>
</head><body>
<h1>Sweep catalog</h1>
<p>{{.Runs}} runs, {{.Rows}} catalog rows (one per run and flow). Each chart plots {{.Metric}} against one impairment axis,
one colour per series (a combination of the swept parameters other than the chart's x axis, the flow group when a run has several, and the CC): a bar spans what the chart's caption says, the line joins the medians, and each dot is one flow of one run (hover for its values, click for its run's page).</p>
{{range .Charts}}<h2>{{.Axis}}</h2>
{{.SVG}}
{{with .Caption}}<p>{{.}}</p>{{end}}
{{with .Planes}}<div class="planes">{{.}}</div>{{end}}
{{with .PlaneNote}}<p>{{.}}</p>{{end}}
{{end}}
<h2>Spec</h2><pre>{{.Spec}}</pre>
</body></html>
`))

// WriteRunHTML writes one run's page: its parameters, how to reproduce it,
// and its summary tables.
func WriteRunHTML(path string, p Point, spec *Spec, sum engine.Summary) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	var cmd string
	var name string
	if json.Unmarshal(spec.Scenario, &name) == nil {
		parts := []string{"ccscope", "run", shellQuote(name)}
		for _, s := range p.Sets(spec) {
			parts = append(parts, "--set", shellQuote(s))
		}
		cmd = strings.Join(parts, " ")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	sumJSON, _ := json.MarshalIndent(sum, "", "  ")
	err = runTmpl.Execute(f, map[string]any{"Sum": sum, "Point": p, "Cmd": cmd, "SumJSON": string(sumJSON)})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '=' || r == '/' || r == ',' || r == ':' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fmtScaled(v *int64, div float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(float64(*v)/div, 'f', 3, 64)
}

// queueLimit is a queue's limits in the run page's table: bytes, packets
// or both, "–" for none.
func queueLimit(q engine.QueueSummary) string {
	var parts []string
	if q.LimitBytes > 0 {
		parts = append(parts, strconv.FormatInt(q.LimitBytes, 10)+" B")
	}
	if q.LimitPackets > 0 {
		parts = append(parts, strconv.FormatInt(q.LimitPackets, 10)+" packets")
	}
	if parts == nil {
		return "–"
	}
	return strings.Join(parts, ", ")
}

var runTmpl = template.Must(template.New("run").Funcs(template.FuncMap{
	"Ms":   func(v *int64) string { return fmtScaled(v, float64(sim.Millisecond)) },
	"Mbps": func(v *int64) string { return fmtScaled(v, 1e6) },
	"Int": func(v *int64) string {
		if v == nil {
			return "–"
		}
		return strconv.FormatInt(*v, 10)
	},
	"Disp":  func(v json.RawMessage) string { return display(v) },
	"Limit": queueLimit,
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>run {{.Sum.ConfigHash}}</title>
<style>body{font-family:sans-serif;margin:1.5em;max-width:80em} td,th{padding:2px 8px;text-align:right} th{background:#eee} pre{background:#f6f6f6;padding:.5em;overflow:auto}</style>
</head><body>
<p><a href="../index.html">← catalog</a></p>
<h1>{{.Sum.Scenario}}, seed {{.Sum.Seed}}</h1>
<p>config hash <code>{{.Sum.ConfigHash}}</code>, digest <code>{{.Sum.Digest}}</code>, {{.Sum.Events}} events, wall {{printf "%.3f" .Sum.WallS}} s</p>
<table><tr><th>parameter</th><th>value</th></tr>
{{range .Point.Params}}<tr><td>{{.Path}}</td><td>{{index .Values 0 | Disp}}</td></tr>{{end}}</table>
{{if .Cmd}}<p>Reproduce (add <code>--trace run.parquet</code> for every signal):</p><pre>{{.Cmd}}</pre>{{end}}
<h2>Flows</h2>
<table><tr><th>flow</th><th>cc</th><th>goodput (Mbps)</th><th>delivered (B)</th><th>retransmits</th><th>rtt p50 (ms)</th><th>rtt p99 (ms)</th></tr>
{{range .Sum.Flows}}<tr><td>{{.ID}}</td><td>{{.CC}}</td><td>{{Mbps .GoodputBps}}</td><td>{{.BytesDelivered}}</td><td>{{Int .Retransmits}}</td><td>{{Ms .RTTP50Ps}}</td><td>{{Ms .RTTP99Ps}}</td></tr>
{{end}}</table>
<h2>Queues</h2>
<table><tr><th>queue</th><th>enqueued</th><th>drops</th><th>marks</th><th>wire losses</th><th>max backlog (B)</th><th>limit</th><th>sojourn p50 (ms)</th><th>sojourn p99 (ms)</th></tr>
{{range .Sum.Queues}}<tr><td>{{.Link}}/{{.Dir}}</td><td>{{.Enqueued}}</td><td>{{.Drops}}</td><td>{{.Marks}}</td><td>{{.WireLosses}}</td><td>{{.MaxBacklogBytes}}</td><td>{{Limit .}}</td><td>{{Ms .SojournP50Ps}}</td><td>{{Ms .SojournP99Ps}}</td></tr>
{{end}}</table>
<h2>Summary</h2><pre>{{.SumJSON}}</pre>
</body></html>
`))
