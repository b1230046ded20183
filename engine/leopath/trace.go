package leopath

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// TraceColumns are the CSV header ParseTrace expects: the interval's start
// in seconds, its round-trip time in milliseconds, its bandwidth in Mbit/s
// and, optionally, its loss probability. Decimals are parsed exactly.
var TraceColumns = []string{"time_s", "rtt_ms", "bandwidth_mbps", "loss"}

// ParseTrace reads a measured LEO path as per-interval rows, e.g.
//
//	time_s,rtt_ms,bandwidth_mbps,loss
//	0,38.5,120,0
//	12,52.1,85.5,0.002
//
// The loss column may be left out. Rows start at 0 and their times rise.
// Errors name the line and column.
func ParseTrace(data []byte) ([]Interval, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("leopath: trace: no header row; want %s", strings.Join(TraceColumns, ","))
	}
	if err != nil {
		return nil, csvError(err)
	}
	n := len(header)
	if n < 3 || n > 4 || !equalFold(header, TraceColumns[:n]) {
		return nil, fmt.Errorf("leopath: trace line 1: header %q; want %s (loss optional)", strings.Join(header, ","), strings.Join(TraceColumns, ","))
	}
	var out []Interval
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != n {
			return nil, fmt.Errorf("leopath: trace line %d: %d fields, want %d", line, len(rec), n)
		}
		bad := func(col int, format string, a ...any) error {
			return fmt.Errorf("leopath: trace line %d, %s: %s", line, TraceColumns[col], fmt.Sprintf(format, a...))
		}
		var iv Interval
		var at, rtt, rate int64
		if at, err = cell(rec[0], int64(sim.Second)); err != nil {
			return nil, bad(0, "%v", err)
		}
		if rtt, err = positiveCell(rec[1], int64(sim.Millisecond)); err != nil {
			return nil, bad(1, "%v", err)
		}
		if rate, err = positiveCell(rec[2], int64(units.Mbps)); err != nil {
			return nil, bad(2, "%v", err)
		}
		iv.At, iv.RTT, iv.Rate = sim.Duration(at), sim.Duration(rtt), units.BitRate(rate)
		if n == 4 {
			p, err := strconv.ParseFloat(rec[3], 64)
			if err != nil || !(p >= 0 && p < 1) {
				return nil, bad(3, "%q is not a probability in [0, 1)", rec[3])
			}
			if config.Underflows(rec[3], p) {
				return nil, bad(3, "%q is below the smallest float64 and would read as 0; write 0 for none", rec[3])
			}
			iv.LossP = p
		}
		switch {
		case len(out) == 0 && iv.At != 0:
			return nil, bad(0, "the first row starts at %v; it must start at 0", iv.At)
		case len(out) > 0 && iv.At <= out[len(out)-1].At:
			return nil, bad(0, "%v does not follow %v; times must rise", iv.At, out[len(out)-1].At)
		}
		out = append(out, iv)
	}
	if len(out) == 0 {
		return nil, errors.New("leopath: trace: no rows after the header")
	}
	return out, nil
}

// csvError is a malformed CSV record's error (a stray quote, say), naming
// its line and column as the row errors do. A csv.Reader's record has no
// field positions after such an error, so they come from the error itself.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("leopath: trace line %d, column %d: %w", pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("leopath: trace: %w", err)
}

// Replay returns the changes of a measured path (ParseTrace's intervals)
// up to duration, as Changes makes them: outage and announce apply at each
// interval after the first. An outage must end before the next interval
// starts, as a synthetic path's must within its period.
func Replay(iv []Interval, duration, outage sim.Duration, announce *sim.Duration) ([]Change, error) {
	var errs []error
	if duration <= 0 {
		errs = append(errs, fmt.Errorf("leopath: duration: %v is not positive; how long the path runs", duration))
	}
	iv = Until(iv, duration)
	if len(iv) > MaxIntervals {
		errs = append(errs, fmt.Errorf("leopath: duration: the trace has %d rows before %v, more than the %d a path may have; shorten the duration or the trace", len(iv), duration, MaxIntervals))
	}
	if outage < 0 {
		errs = append(errs, fmt.Errorf("leopath: outage: %v is negative", outage))
	}
	for i := 1; i+1 < len(iv); i++ {
		if n := iv[i+1].At - iv[i].At; outage >= n {
			errs = append(errs, fmt.Errorf("leopath: outage: %v is not shorter than the trace's interval at %v (%v long)", outage, iv[i].At, n))
			break
		}
	}
	if announce != nil && *announce < 0 {
		errs = append(errs, fmt.Errorf("leopath: announce: %v is negative", *announce))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return Changes(iv, outage, announce), nil
}

// cell parses a trace cell, a plain decimal number of its column's unit
// (scale: picoseconds or bits per second in one), exactly. Its errors give
// the reason as ccscope's duration and rate parsers do: a sign, an
// exponent, too large, finer than a picosecond or a bit per second.
func cell(s string, scale int64) (int64, error) {
	if err := sim.FormError(s); err != nil {
		return 0, err
	}
	return sim.ScaleDecimal(strings.TrimSpace(s), uint64(scale))
}

// positiveCell is cell for a column that must be above zero.
func positiveCell(s string, scale int64) (int64, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		return 0, fmt.Errorf("%q is not positive", s)
	}
	v, err := cell(s, scale)
	if err == nil && v == 0 {
		err = fmt.Errorf("%q is not positive", s)
	}
	return v, err
}

// Until keeps the intervals that start before d.
func Until(iv []Interval, d sim.Duration) []Interval {
	for i, v := range iv {
		if v.At >= d {
			return iv[:i]
		}
	}
	return iv
}

func equalFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(strings.TrimSpace(a[i]), b[i]) {
			return false
		}
	}
	return true
}

// ExampleTrace is a small synthetic LEO trace shipped with ccscope (not a
// measurement): 300 s of Starlink-like intervals, an RTT step and a new
// bandwidth at each reassignment (12 s + k·15 s), light loss in some.
//
//go:embed traces/leo-example.csv
var ExampleTrace []byte
