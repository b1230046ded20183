package config

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/google/go-cmp/cmp"
)

// lineErr matches an error that names the line it is about.
var lineErr = regexp.MustCompile(`^line ([0-9]+): `)

// namesLine checks that err names a line of text, or is one of the
// whole-file errors in fileWide (a file with no line to name).
func namesLine(t *testing.T, what string, text []byte, err error, fileWide ...string) {
	t.Helper()
	msg := err.Error()
	if slices.Contains(fileWide, msg) {
		return
	}
	m := lineErr.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("%s(%q) error %q names no line", what, text, msg)
	}
	n, _ := strconv.Atoi(m[1])
	if lines := bytes.Count(text, []byte("\n")) + 1; n < 1 || n > lines {
		t.Fatalf("%s(%q) error %q names line %d of %d", what, text, msg, n, lines)
	}
}

// mahimahiLoads reads a trace as mahimahi's mm-link does (LinkQueue's
// constructor in src/frontend/link_queue.cc and myatoi in src/util/util.cc
// of ravinet/mahimahi): std::getline splits at '\n' (a final newline ends
// the last line, it opens no empty one); an empty line is refused; a line
// is strtol(…, 10) and must be consumed whole, so C whitespace may precede
// the number, a sign may lead it, and nothing may follow it; timestamps
// must not decrease, there must be one, and the last must be after 0. ok
// is false where mahimahi refuses the file, and where it takes a negative
// number (strtol's result, stored in a uint64, wraps to a huge one).
func mahimahiLoads(text []byte) (ms []uint64, ok bool) {
	s := string(text)
	if s == "" {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for _, line := range lines {
		if line == "" {
			return nil, false // "invalid empty line"
		}
		num := strings.TrimLeft(line, " \t\n\v\f\r") // C isspace, which strtol skips
		num = strings.TrimPrefix(num, "+")
		if num == "" || strings.Trim(num, "0123456789") != "" {
			return nil, false // strtol stopped before the end of the line
		}
		v, err := strconv.ParseInt(num, 10, 64) // long on mahimahi's platforms
		if err != nil {
			return nil, false // ERANGE
		}
		if n := len(ms); n > 0 && uint64(v) < ms[n-1] {
			return nil, false
		}
		ms = append(ms, uint64(v))
	}
	return ms, ms[len(ms)-1] != 0
}

// FuzzParseTrace feeds arbitrary text to ParseTrace, the Mahimahi trace
// reader, seeded with the shipped traces and the forms mahimahi's own
// traces come in. It must never panic; an error names its line (or says
// there is none); an accepted trace has opportunities, never decreasing,
// within ccscope's longest duration, the last after 0, and its normalised
// text reads back to the same trace; and every file mahimahi's mm-link
// loads (mahimahiLoads) loads unchanged.
func FuzzParseTrace(f *testing.F) {
	for _, name := range []string{"traces/cellular.trace", "traces/const-12mbps.trace"} {
		b, err := builtinFS.ReadFile("scenarios/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4000)])
	}
	for _, s := range []string{
		"1\n", "0\n0\n5\n", "1\r\n2\r\n3", " 7\n", "+3\n", "\n\n4\n\n", "5\n4\n", "0\n",
		"18446744073709551615\n", "-1\n1\n", "1 2\n", "x\n", "",
	} {
		f.Add([]byte(s))
	}
	maxMs := uint64(sim.MaxDuration / sim.Millisecond)
	f.Fuzz(func(t *testing.T, text []byte) {
		ops, err := ParseTrace(text)
		if mm, ok := mahimahiLoads(text); ok && mm[len(mm)-1] <= maxMs {
			if err != nil {
				t.Fatalf("ParseTrace(%q) error %v; mahimahi loads it as %v", text, err, mm)
			}
			if !slices.Equal(ops, mm) {
				t.Fatalf("ParseTrace(%q) = %v, mahimahi reads %v", text, ops, mm)
			}
		}
		if err != nil {
			namesLine(t, "ParseTrace", text, err, "no timestamps")
			return
		}
		if len(ops) == 0 || ops[len(ops)-1] == 0 || ops[len(ops)-1] > maxMs {
			t.Fatalf("ParseTrace(%q) = %v: empty, ending at 0 or later than %d ms", text, ops, maxMs)
		}
		for i := 1; i < len(ops); i++ {
			if ops[i] < ops[i-1] {
				t.Fatalf("ParseTrace(%q) = %v: decreases at %d", text, ops, i)
			}
		}
		tl := &TraceLink{Opportunities: ops}
		back, err := ParseTrace([]byte(tl.Text()))
		if err != nil || !slices.Equal(back, ops) {
			t.Fatalf("ParseTrace(Text()) = %v, %v; want %v", back, err, ops)
		}
		if r := tl.MeanRate(); r <= 0 {
			t.Fatalf("MeanRate of %v = %v, want positive", ops, r)
		}
	})
}

// cdfSeeds are CDF files in each form ParseCDF reads: the built-ins as
// HPCC's percent files and as empirical-traffic-gen's fraction and
// three-column files write them, and small ones with comments, commas and
// CRLF.
func cdfSeeds() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(builtinCDFs)) {
		var pct, frac, ns2 strings.Builder
		for i, p := range builtinCDFs[name] {
			fmt.Fprintf(&pct, "%v %v\n", p[0], p[1])
			fmt.Fprintf(&frac, "%g\t%v\n", p[0], p[1]/100)
			fmt.Fprintf(&ns2, "%v %d %v\n", p[0], i+1, p[1]/100)
		}
		out = append(out, pct.String(), "# "+name+"\n"+frac.String(), ns2.String())
	}
	return append(out,
		"0,0\r\n10000,0.15\r\n1000000, 0.7\r\n30000000,1",
		"1 0.5 # half\n2 1\n", "0 0\n10 1e-400\n20 1\n", "5 0\n5 0\n5 1\n", "0 nan\n1 1\n", "0 0\n1 100\n",
		"0x1p4 0\n32 1\n", "1 0\n2 0.5\n")
}

// FuzzParseCDF feeds arbitrary text to ParseCDF, the flow-size CDF file
// reader, seeded with the built-in distributions in every file form. It
// must never panic; an error names its line (or says the file has too few
// points); an accepted CDF has at least two points, whole sizes, finite
// probabilities in [0, 1], both never decreasing, the last probability 1;
// the points written back as a two-column file read back the same; and a
// scenario whose group names the file keeps the points through its
// canonical form, where they travel inline.
func FuzzParseCDF(f *testing.F) {
	for _, s := range cdfSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		pts, err := ParseCDF(text)
		if err != nil {
			namesLine(t, "ParseCDF", text, err, "fewer than two points")
			return
		}
		if len(pts) < 2 || pts[len(pts)-1].P != 1 {
			t.Fatalf("ParseCDF(%q) = %v: fewer than two points, or not ending at 1", text, pts)
		}
		var file strings.Builder
		for i, p := range pts {
			if p.Size < 0 || p.Size > 1<<53 || math.IsNaN(p.P) || p.P < 0 || p.P > 1 {
				t.Fatalf("ParseCDF(%q) point %d = %v: size or probability out of range", text, i, p)
			}
			if i > 0 && (p.Size < pts[i-1].Size || p.P < pts[i-1].P) {
				t.Fatalf("ParseCDF(%q) = %v: decreases at point %d", text, pts, i)
			}
			fmt.Fprintf(&file, "%d %s\n", p.Size, strconv.FormatFloat(p.P, 'g', -1, 64))
		}
		back, err := ParseCDF([]byte(file.String()))
		if err != nil || !slices.Equal(back, pts) {
			t.Fatalf("ParseCDF of %q written back as\n%s= %v, %v; want %v", text, file.String(), back, err, pts)
		}
		raw := groupJSON(2, `"0s"`, `{"kind": "empirical", "file": "sizes.cdf"}`)
		s, err := Parse(raw, WithFiles(map[string][]byte{"sizes.cdf": text}))
		if err != nil {
			t.Fatalf("Parse of a group whose CDF file is %q: %v", text, err)
		}
		if d := cmp.Diff(pts, s.Groups[0].Size.CDF); d != "" {
			t.Fatalf("the group's CDF differs from ParseCDF's (-ParseCDF +group):\n%s", d)
		}
		again, err := Parse(s.Canonical())
		if err != nil {
			t.Fatalf("Parse(Canonical) error: %v\ncanonical: %s", err, s.Canonical())
		}
		if d := cmp.Diff(pts, again.Groups[0].Size.CDF); d != "" {
			t.Fatalf("the CDF through the canonical form differs (-file +canonical):\n%s", d)
		}
	})
}
