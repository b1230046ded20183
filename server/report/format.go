package report

import (
	"math"
	"strconv"
	"strings"
)

// rateStr prints a rate in Mbps, or in Gbps from 1 Gbps on.
func rateStr(bps int64) string {
	if bps >= 1e9 {
		return decimal(float64(bps)/1e9, 4) + " Gbps"
	}
	return decimal(float64(bps)/1e6, 4) + " Mbps"
}

// msStr prints a duration in ms.
func msStr(ps int64) string { return decimal(float64(ps)/1e9, 4) + " ms" }

// secsStr prints a duration in seconds.
func secsStr(ps int64) string { return decimal(float64(ps)/1e12, 6) + " s" }

// sizeStr prints a size in KB, or in MB from 1 MB on.
func sizeStr(b int64) string {
	if b >= 1e6 {
		return decimal(float64(b)/1e6, 4) + " MB"
	}
	return decimal(float64(b)/1e3, 4) + " KB"
}

// decimal prints v to sig significant digits as a plain decimal, never in
// exponent notation, keeping every integer digit (12345.6 → "12,346") and
// grouping them in threes.
func decimal(v float64, sig int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	dec := max(0, sig-1-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var g strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			g.WriteByte(',')
		}
		g.WriteRune(d)
	}
	if hasFrac {
		return sign + g.String() + "." + frac
	}
	return sign + g.String()
}
