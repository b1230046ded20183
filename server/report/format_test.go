package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/trace"
)

// Figures on the page are plain decimals, never exponent notation: a
// 10 Gbps path (dumbbell-n) reads "10 Gbps" and its 37.5 MB BDP "37.5 MB",
// not "1e+04 Mbps" and "3.75e+04 KB".
func TestFiguresHaveNoExponent(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"rate 10 Gbps", rateStr(10e9), "10 Gbps"},
		{"rate 25 Gbps", rateStr(25e9), "25 Gbps"},
		{"rate 100 Mbps", rateStr(100e6), "100 Mbps"},
		{"rate 12.5 Mbps", rateStr(12.5e6), "12.5 Mbps"},
		{"rate 1.5 kbps", rateStr(1500), "0.0015 Mbps"},
		{"rate 1 Tbps", rateStr(1e12), "1,000 Gbps"},
		{"size 37.5 MB", sizeStr(37_500_000), "37.5 MB"},
		{"size 375 KB", sizeStr(375_000), "375 KB"},
		{"size 1.5 KB", sizeStr(1500), "1.5 KB"},
		{"size 12.3 GB", sizeStr(12_345_678_901), "12,346 MB"},
		{"ms 19", msStr(19e9), "19 ms"},
		{"ms 0.0012", msStr(1.2e6), "0.0012 ms"},
		{"ms 12345", msStr(12345e9), "12,345 ms"},
		{"secs", secsStr(60e12), "60 s"},
		{"secs small", secsStr(3), "0.000000000003 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// The page's headings and summary table print a 25 Gbps bottleneck and
// its BDP without exponents (dc-incast's summary read "2.5e+04 Mbps").
func TestPageFiguresHaveNoExponent(t *testing.T) {
	path := engine.PathFacts{BottleneckBps: 25e9, BaseRTTPs: 12e6, BDPBytes: 37_500, Bottleneck: "b/ab"}
	sum := &engine.Summary{Scenario: "x", SimTimePs: 1e12, Flows: []engine.FlowSummary{{ID: "f0", CC: "cubic", PathFacts: path}}}
	b, err := New(MetaFromSummary(sum), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.flow("f0").addRow(&trace.FlowRow{T: 1, CwndPkts: 10}, hasAll)
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if i := strings.Index(page, "e+0"); i >= 0 {
		t.Errorf("the page prints an exponent: %q", page[max(0, i-40):i+10])
	}
	if n := strings.Count(page, "25 Gbps"); n < 2 {
		t.Errorf("the page names the 25 Gbps bottleneck %d times, want in the heading and the summary table", n)
	}
}
