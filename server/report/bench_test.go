package report

import (
	"io"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
)

// BenchmarkBuilder measures the report's cost per trace row: the tables
// of a 5 s every-change p-rtr-p/BBR run (held in memory, built once) are
// fed to a fresh Builder, and the page is written to io.Discard.
func BenchmarkBuilder(b *testing.B) {
	raw, err := config.Builtin("p-rtr-p")
	if err != nil {
		b.Fatal(err)
	}
	prep, err := engine.Prepare(raw, []string{"trace.detail=change", "flows.f0.cc=bbr", "runtime.duration=5s"})
	if err != nil {
		b.Fatal(err)
	}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RunToEnd()
	meta := Meta{Scenario: "p-rtr-p", HorizonPs: int64(r.Horizon()), Flows: []FlowMeta{{ID: "f0", CC: "bbr", Path: r.Path(0)}}}
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		bl, err := New(meta, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range trace.Tables {
			bl.Flush(r.Trace, t)
		}
		if err := bl.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
		rows = bl.Rows()
	}
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}
