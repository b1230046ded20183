package report

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// grid divides the run's time span into equal buckets. Every chart of a
// report shares it, so the panels' x values coincide and one zoom range
// means the same samples everywhere.
//
// Each bucket has slots x positions: a line series puts at most three
// values in a bucket — the earlier of its minimum and maximum, the later
// one, and the bucket's last value — so the drawn envelope keeps every
// extreme however many rows fell into the bucket, and a step line leaves
// the bucket at the level the signal really had.
type grid struct {
	w int64 // bucket width, ps
	n int   // buckets
}

const slots = 3

// newGrid covers [0, horizon] with n buckets of at least 1 ps.
func newGrid(horizon int64, n int) grid {
	w := (horizon + int64(n) - 1) / int64(n)
	return grid{w: max(w, 1), n: n}
}

// bucket is the bucket holding time t (clamped to the grid).
func (g grid) bucket(t int64) int {
	b := t / g.w
	return int(min(max(b, 0), int64(g.n-1)))
}

// style says how the browser draws a series.
type style string

const (
	styleLine   style = "line"
	styleStep   style = "step"
	stylePoints style = "points"
)

// series is one decimated signal. Values are stored already converted to
// the unit the chart shows (Mbps, ms, packets).
type series struct {
	Label string `json:"label"`
	Unit  string `json:"unit"`
	Style style  `json:"style"`
	Color string `json:"color"`
	Axis  int    `json:"axis"` // 0: the chart's left axis, 1: its right one
	Data  string `json:"data"` // slot values, comma-separated, empty for none
	// Counts are per-slot counts for event ticks (the hover shows them).
	Counts string `json:"counts,omitempty"`
	// Dash draws the series in a dash pattern (points hollow): 1 to
	// maxBeside for the runs drawn beside the page's own (Builder.Beside).
	Dash int `json:"dash,omitempty"`
}

// extremes keeps, per bucket, the minimum and maximum with the times they
// occurred and the last value.
type extremes struct {
	has              []bool
	minV, maxV, last []float64
	minT, maxT       []int64
}

func newExtremes(n int) *extremes {
	return &extremes{has: make([]bool, n), minV: make([]float64, n), maxV: make([]float64, n),
		last: make([]float64, n), minT: make([]int64, n), maxT: make([]int64, n)}
}

// add records v at t in bucket b. NaN and ±Inf (a CC's "unset" bound) are
// gaps, not values.
func (e *extremes) add(b int, t int64, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if !e.has[b] {
		e.has[b] = true
		e.minV[b], e.maxV[b], e.last[b], e.minT[b], e.maxT[b] = v, v, v, t, t
		return
	}
	if v < e.minV[b] {
		e.minV[b], e.minT[b] = v, t
	}
	if v > e.maxV[b] {
		e.maxV[b], e.maxT[b] = v, t
	}
	e.last[b] = v
}

// slotValues lays the extremes out in slots (NaN: empty): per bucket the
// earlier extreme, the later one, then the last value where it differs.
// A bucket without rows after the first one and up to fillTo (inclusive)
// repeats the level the signal holds, so a panel zoomed in between two
// changes still draws it.
func (e *extremes) slotValues(fillTo int) []float64 {
	out := make([]float64, len(e.has)*slots)
	for i := range out {
		out[i] = math.NaN()
	}
	held, holding := 0.0, false
	for b, ok := range e.has {
		o := out[b*slots : b*slots+slots]
		if !ok {
			if holding && b <= fillTo {
				o[0] = held
			}
			continue
		}
		first, second := e.minV[b], e.maxV[b]
		if e.maxT[b] < e.minT[b] {
			first, second = second, first
		}
		o[0] = first
		if second != first {
			o[1] = second
		}
		if e.last[b] != second {
			o[2] = e.last[b]
		}
		held, holding = e.last[b], true
	}
	return out
}

// encode writes values with 5 significant digits, NaN as nothing; trailing
// empties are kept so every series has the grid's length.
func encode(vals []float64) string {
	var sb strings.Builder
	sb.Grow(len(vals) * 2)
	var buf [32]byte
	for i, v := range vals {
		if i > 0 {
			sb.WriteByte(',')
		}
		if math.IsNaN(v) {
			continue
		}
		sb.Write(trimFloat(strconv.AppendFloat(buf[:0], v, 'g', 5, 64)))
	}
	return sb.String()
}

// trimFloat shortens Go's exponent "1e+06" to "1e6" (JavaScript's Number
// reads either).
func trimFloat(b []byte) []byte {
	i := bytes.IndexByte(b, 'e')
	if i < 0 {
		return b
	}
	j := i + 1
	if j < len(b) && b[j] == '+' {
		j++
	}
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	for j < len(b)-1 && b[j] == '0' {
		j++
	}
	out := append(b[:i+1:i+1], nil...)
	if neg {
		out = append(out, '-')
	}
	return append(out, b[j:]...)
}

// movingRate turns per-bucket byte sums into a rate in Mbps averaged over
// k buckets ending at each bucket, placed in the bucket's middle slot.
// Buckets before first or after last (the flow not yet started or
// finished) stay empty.
func movingRate(sum []float64, k int, w int64, first, last int) []float64 {
	out := make([]float64, len(sum)*slots)
	for i := range out {
		out[i] = math.NaN()
	}
	if first < 0 {
		return out
	}
	var acc float64
	for b := range sum {
		acc += sum[b]
		if b >= k {
			acc -= sum[b-k]
		}
		if b < first || b > last {
			continue
		}
		n := min(b+1, k)
		out[b*slots+1] = acc * 8 / (float64(n) * float64(w) / 1e12) / 1e6
	}
	return out
}
