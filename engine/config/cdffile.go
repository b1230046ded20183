package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	var lines []int // the line of each point
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
		if Underflows(f[len(f)-1], q) {
			return nil, fmt.Errorf("line %d: %q is below the smallest float64 and would read as 0; write 0 for none", i+1, f[len(f)-1])
		}
		if n := len(out); n > 0 && (units.Bytes(size) < out[n-1].Size || q < out[n-1].P) {
			return nil, fmt.Errorf("line %d: sizes and probabilities must not decrease", i+1)
		}
		out, lines = append(out, CDFPoint{units.Bytes(size), q}), append(lines, i+1)
	}
	if len(out) < 2 {
		return nil, errors.New("fewer than two points")
	}
	switch last := out[len(out)-1].P; last {
	case 1:
	case 100: // in percent
		for i := range out {
			p := out[i].P / 100
			if p == 0 && out[i].P != 0 {
				return nil, fmt.Errorf("line %d: %v %% is below the smallest float64 as a fraction and would read as 0; write 0 for none", lines[i], out[i].P)
			}
			out[i].P = p
		}
	default:
		return nil, fmt.Errorf("line %d: the last point's cumulative probability is %v; want 1, or 100 in percent", lines[len(lines)-1], last)
	}
	return out, nil
}

// noFile says why a name the scenario gives is no file it can read; the
// shipped traces are looked up next.
type noFile string

func (e noFile) Error() string { return string(e) }

// errNoFiles: the scenario came with no directory and no files.
const errNoFiles = noFile("a file is read relative to the scenario file only when the scenario comes from a file, or sent with it as the Python client sends the files a scenario names")

// scenarioFile reads a file the scenario names: one sent with it
// (WithFiles), else relative to the scenario file's directory (WithDir). A
// file larger than limit bytes is refused. A noFile error means there is
// no such file.
func (c *collector) scenarioFile(name string, limit int64, what string) ([]byte, error) {
	if b, ok := c.files[name]; ok {
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s file is larger than %d MiB", what, limit>>20)
		}
		return b, nil
	}
	if c.dir == "" {
		if c.files != nil {
			return nil, noFile("no file of that name was sent with the scenario")
		}
		return nil, errNoFiles
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.dir, name)
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noFile("no file " + p)
	}
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s file is larger than %d MiB", what, limit>>20)
	}
	return os.ReadFile(p)
}

// FileNames lists the file names scenario JSON gives, in order: the string
// value of every "file" key (a direction's trace, a group's size CDF). A
// client finds in it the files to send with a scenario (WithFiles). JSON
// that does not decode names none.
func FileNames(raw []byte) []string {
	tree, err := decodeTree(raw)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if s, ok := v[k].(string); ok && k == "file" && !slices.Contains(out, s) {
					out = append(out, s)
				}
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(tree)
	return out
}
