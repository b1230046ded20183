package sweep

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The 1-σ ellipse against hand-computed covariances. Four points at the
// corners of a square 2 apart: the variances (with n − 1) are 4/3 each and
// the covariance 0, so the ellipse is a circle of radius sqrt(4/3) about
// the centre. Three points on y = 2x, (1,2), (2,4), (3,6): variances 1 and
// 4, covariance 2, eigenvalues 5 and 0, so the ellipse is the segment of
// half-length sqrt(5) on the line through the mean (2,4): x from 1 to 3.
func TestSigmaEllipse(t *testing.T) {
	ring := sigmaEllipse([]float64{1, 3, 1, 3}, []float64{1, 1, 3, 3}, 64)
	r := math.Sqrt(4.0 / 3)
	for _, v := range ring {
		if d := math.Hypot(v[0]-2, v[1]-2); math.Abs(d-r) > 1e-12 {
			t.Fatalf("square: vertex %v is %g from the centre, want %g", v, d, r)
		}
	}
	ring = sigmaEllipse([]float64{1, 2, 3}, []float64{2, 4, 6}, 64)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ring {
		if math.Abs(v[1]-2*v[0]) > 1e-9 {
			t.Fatalf("line: vertex %v is off y = 2x", v)
		}
		lo, hi = math.Min(lo, v[0]), math.Max(hi, v[0])
	}
	if math.Abs(lo-1) > 1e-9 || math.Abs(hi-3) > 1e-9 {
		t.Errorf("line: x spans %g to %g, want 1 to 3", lo, hi)
	}
	if sigmaEllipse([]float64{1}, []float64{1}, 8) != nil {
		t.Error("one point: an ellipse, want none")
	}
}

var (
	planeRe = regexp.MustCompile(`(?s)<svg [^>]*class="plane".*?</svg>`)
	meanRe  = regexp.MustCompile(`<path class="mean" d="M([0-9.]+) ([0-9.]+)l5 5l-5 5l-5 -5z" fill="([^"]+)"`)
)

// Under each axis's chart, one plane per value: every series a mean
// diamond in the chart's colour, a series with several seeds an ellipse,
// the larger delay drawn to the left (the axis inverted) and the larger
// goodput higher.
func TestCatalogPlanes(t *testing.T) {
	spec := mustSpec(t, `{"scenario": "p-rtr-p", "grid": {"flows.f0.cc": ["cubic", "bbr"]},
		"axes": {"links.bottleneck.ab.qdisc.limit": ["1BDP", "8BDP"]}, "seeds": "1-2"}`)
	var rows []Row
	for _, buf := range []string{"1BDP", "8BDP"} {
		for _, cc := range []string{"cubic", "bbr"} {
			for seed := uint64(1); seed <= 2; seed++ {
				// CUBIC fills the FIFO: its RTT tail grows with the buffer;
				// BBR's does not. CUBIC's goodput is a little lower.
				rtt, mbps := int64(45), int64(95)
				if cc == "cubic" {
					rtt, mbps = 80, 90
					if buf == "8BDP" {
						rtt = 360
					}
				}
				r := chartRow(fmt.Sprintf("%s-%s-%d", cc, buf, seed), seed, "f0", cc, (mbps+int64(seed))*1e6,
					map[string]string{"flows.f0.cc": `"` + cc + `"`, "links.bottleneck.ab.qdisc.limit": `"` + buf + `"`})
				r.Axis = "links.bottleneck.ab.qdisc.limit"
				p99 := (rtt + int64(seed)) * 1e9
				r.RTTP99Ps = &p99
				rows = append(rows, r)
			}
		}
	}
	page := catalogPage(t, spec, rows, "goodput_bps")
	planes := planeRe.FindAllString(page, -1)
	if len(planes) != 2 || !strings.Contains(planes[0], ">links.bottleneck.ab.qdisc.limit=1BDP<") {
		t.Fatalf("%d planes, want one per buffer, 1BDP first", len(planes))
	}
	chartColour := map[string]string{}
	for _, m := range regexp.MustCompile(`<rect x="[0-9.]+" y="[0-9.]+" width="10" height="10" fill="([^"]+)"/><text [^>]*>([^<]*)</text>`).FindAllStringSubmatch(page, -1) {
		chartColour[m[2]] = m[1]
	}
	for i, pl := range planes {
		means := meanRe.FindAllStringSubmatch(pl, -1)
		if len(means) != 2 || strings.Count(pl, `class="sigma"`) != 2 {
			t.Fatalf("plane %d: %d means and %d ellipses, want 2 of each", i, len(means), strings.Count(pl, `class="sigma"`))
		}
		x := func(m []string) float64 { v, _ := strconv.ParseFloat(m[1], 64); return v }
		y := func(m []string) float64 { v, _ := strconv.ParseFloat(m[2], 64); return v }
		cubic, bbr := means[0], means[1]
		if cubic[3] != chartColour["flows.f0.cc=cubic"] || bbr[3] != chartColour["flows.f0.cc=bbr"] {
			t.Errorf("plane %d: colours %s and %s, the chart's %v", i, cubic[3], bbr[3], chartColour)
		}
		if x(cubic) >= x(bbr) || y(cubic) <= y(bbr) {
			t.Errorf("plane %d: CUBIC's mean at (%g, %g), BBR's at (%g, %g); want CUBIC left (more delay) and lower (less goodput)",
				i, x(cubic), y(cubic), x(bbr), y(bbr))
		}
	}
}

// An axis of more values than a page draws planes for gets a note instead.
func TestCatalogPlanesBounded(t *testing.T) {
	spec := mustSpec(t, `{"scenario": "p-rtr-p", "axes": {"links.bottleneck.delay": ["1ms"]}}`)
	var rows []Row
	for i := range maxPlanes + 1 {
		r := chartRow(fmt.Sprint(i), 1, "f0", "cubic", 1e6, map[string]string{"links.bottleneck.delay": fmt.Sprintf(`"%dms"`, i+1)})
		r.Axis = "links.bottleneck.delay"
		p99 := int64(i+1) * 1e9
		r.RTTP99Ps = &p99
		rows = append(rows, r)
	}
	page := catalogPage(t, spec, rows, "goodput_bps")
	if n := len(planeRe.FindAllString(page, -1)); n != 0 || !strings.Contains(page, "takes 25 values, more than the 24 planes") {
		t.Errorf("%d planes and no note; want none and a note", n)
	}
}

// A plane's delay ticks: 1, 2 and 5 per decade, every digit where those
// leave fewer than two, round steps in a narrower range, and decimals as
// written.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{40, 400, "50 100 200"},
		{75, 95, "80 90"},
		{0.15, 0.6, "0.2 0.5"},
		{0.012, 0.031, "0.02 0.03"},
		{105, 290, "150 200 250"},
		{12.2, 14.5, "13 14"},
	} {
		var got []string
		for _, v := range logTicks(c.lo, c.hi) {
			got = append(got, strconv.FormatFloat(v, 'f', -1, 64))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("logTicks(%g, %g) = %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
