package leopath

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// decimal writes v/scale exactly as a plain decimal, as the trace's
// columns are read.
func decimal(v, scale int64) string {
	s := strconv.FormatInt(v/scale, 10)
	if f := v % scale; f != 0 {
		digits := len(strconv.FormatInt(scale, 10)) - 1
		s += "." + strings.TrimRight(fmt.Sprintf("%0*d", digits, f), "0")
	}
	return s
}

// traceLine matches an error that names its line.
var traceLine = regexp.MustCompile(`^leopath: trace line ([0-9]+)[,:]`)

// FuzzParseTrace feeds arbitrary text to ParseTrace, seeded with the shipped
// example and small traces in each form. It must never panic; an error
// names its line (or says the header or every row is missing); an
// accepted trace starts at 0, its times rise, every RTT and rate is
// positive and every loss a probability in [0, 1); and written back as CSV
// it reads back to the same intervals.
func FuzzParseTrace(f *testing.F) {
	f.Add(ExampleTrace)
	for _, s := range []string{
		"time_s,rtt_ms,bandwidth_mbps\n0,10,10\n2,10,10\n3,10,10\n5,10,10\n",
		"# c\nTIME_S, rtt_ms, bandwidth_mbps, loss\r\n0, 38.5, 120, 0\r\n12, 52.1, 85.5, 0.002\r\n",
		"time_s,rtt_ms,bandwidth_mbps\n0,1,1\n1,\"2\"x,1\n",
		"time_s,rtt_ms,bandwidth_mbps,loss\n0,0.000001,0.000001,1e-5\n0.000000000001,1,1,0x1p-3\n",
		"time_s,rtt_ms,bandwidth_mbps\n\"0\",\"1\n\",1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		iv, err := ParseTrace(data)
		if err != nil {
			msg := err.Error()
			if !traceLine.MatchString(msg) && !strings.HasPrefix(msg, "leopath: trace: no header row;") && msg != "leopath: trace: no rows after the header" {
				t.Fatalf("ParseTrace(%q) error %q names no line", data, msg)
			}
			return
		}
		if len(iv) == 0 || iv[0].At != 0 {
			t.Fatalf("ParseTrace(%q) = %+v: empty or not starting at 0", data, iv)
		}
		var b strings.Builder
		b.WriteString("time_s,rtt_ms,bandwidth_mbps,loss\n")
		for i, v := range iv {
			if i > 0 && v.At <= iv[i-1].At || v.RTT <= 0 || v.Rate <= 0 || !(v.LossP >= 0 && v.LossP < 1) || math.IsNaN(v.LossP) {
				t.Fatalf("ParseTrace(%q) row %d = %+v: time not rising, or RTT, rate or loss out of range", data, i, v)
			}
			fmt.Fprintf(&b, "%s,%s,%s,%s\n", decimal(int64(v.At), int64(sim.Second)), decimal(int64(v.RTT), int64(sim.Millisecond)),
				decimal(int64(v.Rate), int64(units.Mbps)), strconv.FormatFloat(v.LossP, 'g', -1, 64))
		}
		back, err := ParseTrace([]byte(b.String()))
		if err != nil || len(back) != len(iv) {
			t.Fatalf("ParseTrace of %q written back as\n%s= %d rows, %v; want %d", data, b.String(), len(back), err, len(iv))
		}
		for i := range iv {
			if back[i] != iv[i] {
				t.Fatalf("row %d written back as\n%s reads %+v, want %+v", i, b.String(), back[i], iv[i])
			}
		}
	})
}
