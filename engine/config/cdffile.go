package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/ccscope/ccscope/engine/units"
)

// MaxCDFBytes bounds a flow-size CDF file; published ones have tens of
// lines.
const MaxCDFBytes = 1 << 20

// ParseCDF reads a flow-size distribution in the forms the data-centre
// traffic generators ship, so that their files load as they are: one point
// per line, its size in bytes and the cumulative probability of flows up to
// that size, as a fraction ending at 1 (empirical-traffic-gen's VL2_CDF) or
// a percentage ending at 100 (HPCC's WebSearch_distribution.txt); or three
// columns, ns-2's RandomVariable/Empirical form, whose middle one (a count
// or an index) ns-2 skips, as this does (empirical-traffic-gen's
// DCTCP_CDF). Columns are separated by spaces, tabs or commas; numbers may
// be written as 1e+06; blank lines and text after '#' are skipped.
func ParseCDF(text []byte) ([]CDFPoint, error) {
	var out []CDFPoint
	for i, line := range strings.Split(string(text), "\n") {
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 && len(f) != 3 {
			return nil, fmt.Errorf("line %d: %d columns; want bytes and cumulative probability (or ns-2's bytes, a skipped column, probability)", i+1, len(f))
		}
		size, err := strconv.ParseFloat(f[0], 64)
		if err != nil || size < 0 || size > 1<<53 || size != math.Trunc(size) {
			return nil, fmt.Errorf("line %d: %q is not a whole number of bytes", i+1, f[0])
		}
		q, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil || q < 0 || math.IsInf(q, 0) || math.IsNaN(q) {
			return nil, fmt.Errorf("line %d: %q is not a cumulative probability", i+1, f[len(f)-1])
		}
		if n := len(out); n > 0 && (units.Bytes(size) < out[n-1].Size || q < out[n-1].P) {
			return nil, fmt.Errorf("line %d: sizes and probabilities must not decrease", i+1)
		}
		out = append(out, CDFPoint{units.Bytes(size), q})
	}
	if len(out) < 2 {
		return nil, errors.New("fewer than two points")
	}
	switch last := out[len(out)-1].P; last {
	case 1:
	case 100: // in percent
		for i := range out {
			out[i].P /= 100
		}
	default:
		return nil, fmt.Errorf("the last point's cumulative probability is %v; want 1, or 100 in percent", last)
	}
	return out, nil
}

// readRelative reads a file a scenario names, relative to the directory of
// the scenario file, refusing one larger than limit bytes.
func readRelative(dir, name string, limit int64, what string) ([]byte, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, name)
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s file is larger than %d MiB", what, limit>>20)
	}
	return os.ReadFile(p)
}
