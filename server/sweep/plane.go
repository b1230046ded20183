package sweep

import (
	"fmt"
	"html"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// maxPlanes is how many throughput–delay planes an axis's chart gets at
// most, one per value: beyond it the page says so and draws none.
const maxPlanes = 24

// svgPlanes draws, under axis's chart, one throughput–delay plane per
// value of axis, as Pantheon's summary plots compare schemes on one path:
// each flow of each run a dot at its RTT p99 and goodput, each series (in
// the chart's colours) a diamond at the mean of its dots and the shaded
// 1-σ ellipse of their spread, delay on a logarithmic axis inverted so
// that better (more goodput, less delay) is up and to the right. It
// returns the planes, or a note saying why there are none; id, unique on
// the page, prefixes their clip paths' ids.
func svgPlanes(id, axis string, paths []string, rows []*Row, metric string) (string, string) {
	xs, _ := axisValues(axis, rows)
	if len(xs) > maxPlanes {
		return "", fmt.Sprintf("No throughput–delay planes: %s takes %d values, more than the %d planes a page draws (ccscope.plot.plane draws any point's).", axis, len(xs), maxPlanes)
	}
	flows, _ := flowGroups(rows, metric)
	byGroup := len(flows) > 1
	colours := seriesColours(axis, paths, rows, metric, byGroup)
	var b strings.Builder
	drawn := 0
	for _, x := range xs {
		var pts []planePoint
		for _, r := range rows {
			if string(r.Params[axis]) != x || r.GoodputBps == nil || r.RTTP99Ps == nil || *r.RTTP99Ps <= 0 {
				continue
			}
			label := seriesLabel(r, paths, axis, byGroup)
			if colours[label] == "" { // a series the chart's metric has no value of
				colours[label] = palette[len(colours)%len(palette)]
			}
			pts = append(pts, planePoint{delayMs: float64(*r.RTTP99Ps) / 1e9, mbps: float64(*r.GoodputBps) / 1e6, label: label, row: r})
		}
		if len(pts) == 0 {
			continue
		}
		b.WriteString(svgPlane(fmt.Sprintf("%s-%d", id, drawn), axis+"="+display([]byte(x)), pts, colours, paths))
		drawn++
	}
	if drawn == 0 {
		return "", "No throughput–delay planes: no run has both a goodput and an RTT p99."
	}
	return b.String(), "Throughput against delay at each value of " + axis + ": each dot one flow of one run at its RTT p99 and goodput, each series (coloured as in the chart) a diamond at its mean and a shaded 1-σ ellipse of its dots; delay on a logarithmic axis, inverted, so that better is up and to the right."
}

// planePoint is one flow of one run on a plane.
type planePoint struct {
	delayMs, mbps float64
	label         string
	row           *Row
}

// svgPlane draws one plane of pts, titled title; id, unique on the page,
// names its clip path, which keeps a wide ellipse inside the plot.
func svgPlane(id, title string, pts []planePoint, colours map[string]string, paths []string) string {
	const W, H, ml, mr, mt, mb = 340.0, 260.0, 50.0, 12.0, 22.0, 36.0
	pw, ph := W-ml-mr, H-mt-mb
	dlo, dhi, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, p := range pts {
		dlo, dhi, ymax = math.Min(dlo, p.delayMs), math.Max(dhi, p.delayMs), math.Max(ymax, p.mbps)
	}
	// A decade's margin would waste the plane; a tenth of the span's
	// logarithm on each side, and at least a factor 1.2 across.
	span := math.Max(math.Log(dhi/dlo), math.Log(1.2))
	lx0, lx1 := math.Log(dlo)-span/10, math.Log(dhi)+span/10
	_, ytop, ystep := yAxis("goodput_bps", 0, ymax)
	// Inverted: the largest delay at the left.
	xpos := func(ms float64) float64 { return ml + pw*(lx1-math.Log(ms))/(lx1-lx0) }
	ypos := func(v float64) float64 { return mt + ph*(1-v/ytop) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="plane" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="10">`, W, H, W, H)
	fmt.Fprintf(&b, `<text x="%g" y="14" font-weight="bold">%s</text>`, ml, html.EscapeString(title))
	fmt.Fprintf(&b, `<clipPath id="%s"><rect x="%g" y="%g" width="%g" height="%g"/></clipPath>`, id, ml, mt, pw, ph)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`, ml, mt, pw, ph)
	decimals := max(0, -int(math.Floor(math.Log10(ystep)+1e-9)))
	for k := 0; float64(k)*ystep <= ytop+ystep/2; k++ {
		v := float64(k) * ystep
		y := ypos(v)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`,
			ml, ml+pw, y, y, ml-3, y+3, strconv.FormatFloat(v, 'f', decimals, 64))
	}
	for _, ms := range logTicks(math.Exp(lx0), math.Exp(lx1)) {
		x := xpos(ms)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#eee"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`,
			x, x, mt, mt+ph, x, mt+ph+12, strconv.FormatFloat(ms, 'f', -1, 64))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">RTT p99 (ms) — better to the right</text>`, ml+pw/2, H-6)
	fmt.Fprintf(&b, `<text transform="translate(11 %g) rotate(-90)" text-anchor="middle">goodput (Mbps)</text>`, mt+ph/2)
	var order []string
	byLabel := map[string][]planePoint{}
	for _, p := range pts {
		if byLabel[p.label] == nil {
			order = append(order, p.label)
		}
		byLabel[p.label] = append(byLabel[p.label], p)
	}
	for _, l := range order {
		col, ps := colours[l], byLabel[l]
		xs, ys := make([]float64, len(ps)), make([]float64, len(ps))
		for i, p := range ps {
			xs[i], ys[i] = p.delayMs, p.mbps
		}
		if ring := sigmaEllipse(xs, ys, 48); ring != nil {
			var poly []string
			for _, v := range ring {
				poly = append(poly, fmt.Sprintf("%.1f,%.1f", xpos(math.Max(v[0], dlo/10)), ypos(v[1])))
			}
			fmt.Fprintf(&b, `<polygon class="sigma" points="%s" fill="%s" fill-opacity="0.18" stroke="none" clip-path="url(#%s)"/>`, strings.Join(poly, " "), col, id)
		}
		for _, p := range ps {
			tip := fmt.Sprintf("%s  seed %d  flow %s (%s): goodput %s Mbps, RTT p99 %s ms  (run %s)", strings.Join(paramText(p.row, paths, ""), "  "),
				p.row.Seed, p.row.Flow, p.row.CC, strconv.FormatFloat(p.mbps, 'g', 5, 64), strconv.FormatFloat(p.delayMs, 'g', 5, 64), p.row.Run)
			dot := fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s" opacity="0.7"><title>%s</title></circle>`, xpos(p.delayMs), ypos(p.mbps), col, html.EscapeString(tip))
			if p.row.Report != nil {
				dot = fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(filepath.ToSlash(*p.row.Report)), dot)
			}
			b.WriteString(dot)
		}
		mx, my := mean(xs), mean(ys)
		cx, cy := xpos(mx), ypos(my)
		fmt.Fprintf(&b, `<path class="mean" d="M%.1f %.1fl5 5l-5 5l-5 -5z" fill="%s" stroke="#000"><title>%s: mean goodput %s Mbps, RTT p99 %s ms over %d</title></path>`,
			cx, cy-5, col, html.EscapeString(l), strconv.FormatFloat(my, 'g', 5, 64), strconv.FormatFloat(mx, 'g', 5, 64), len(ps))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// sigmaEllipse is the 1-σ ellipse of points (xs, ys) as n vertices: the
// mean plus one standard deviation (n − 1 in the variance) along each
// principal axis of their covariance; nil for fewer than two points.
func sigmaEllipse(xs, ys []float64, n int) [][2]float64 {
	if len(xs) < 2 {
		return nil
	}
	mx, my := mean(xs), mean(ys)
	var sxx, syy, sxy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx, syy, sxy = sxx+dx*dx, syy+dy*dy, sxy+dx*dy
	}
	k := float64(len(xs) - 1)
	sxx, syy, sxy = sxx/k, syy/k, sxy/k
	// The symmetric 2×2 matrix's eigenvalues and the angle of the first
	// eigenvector.
	tr, det := sxx+syy, sxx*syy-sxy*sxy
	d := math.Sqrt(math.Max(tr*tr/4-det, 0))
	l1, l2 := tr/2+d, math.Max(tr/2-d, 0)
	theta := 0.5 * math.Atan2(2*sxy, sxx-syy)
	a, c := math.Sqrt(l1), math.Sqrt(l2)
	ring := make([][2]float64, n)
	for i := range ring {
		t := 2 * math.Pi * float64(i) / float64(n)
		u, v := a*math.Cos(t), c*math.Sin(t)
		ring[i] = [2]float64{mx + u*math.Cos(theta) - v*math.Sin(theta), my + u*math.Sin(theta) + v*math.Cos(theta)}
	}
	return ring
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// logTicks are a plane's delay ticks from lo to hi (0 < lo < hi): the
// values 1, 2 and 5 times a power of ten, or where fewer than two of
// those fall in the range, every digit times one, or in a range narrower
// still, the multiples of a round step (niceStep) a quarter of it apart.
// Each is parsed from its decimal form, so that 0.2 is 0.2.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	for _, ms := range [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		out = out[:0]
		for e := int(math.Floor(math.Log10(lo))) - 1; math.Pow(10, float64(e)) <= hi; e++ {
			for _, m := range ms {
				v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
				if v >= lo && v <= hi {
					out = append(out, v)
				}
			}
		}
		if len(out) >= 2 {
			return out
		}
	}
	step := niceStep((hi - lo) / 4)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	out = out[:0]
	for k := math.Ceil(lo / step); k*step <= hi; k++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(k*step, 'f', decimals, 64), 64)
		out = append(out, v)
	}
	return out
}
