package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run page of a split flow heads each leg with its CC and path, as
// `ccscope report` does: the report's flows are the run's legs, not the
// scenario's flows.
func TestRunReportsSplitFlowLegs(t *testing.T) {
	dir := t.TempDir()
	s := mustSpec(t, `{"scenario": "p-we-p", "set": {"runtime.duration": "200ms"}, "axes": {"flows.f0.cc": ["cubic"]}}`)
	if _, err := Run(context.Background(), s, Options{Catalog: filepath.Join(dir, "c.parquet"), ReportDir: dir, RunReports: true}); err != nil {
		t.Fatalf("Run error %v", err)
	}
	rows, err := ReadCatalog(filepath.Join(dir, "c.parquet"))
	if err != nil || len(rows) == 0 || rows[0].Report == nil {
		t.Fatalf("catalog: %d rows, %v; want rows with a report", len(rows), err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, *rows[0].Report))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{`"title":"flow f0.0 · cubic","subtitle":"path: bottleneck `, `"title":"flow f0.1 · cubic","subtitle":"path: bottleneck `} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks the leg heading %q", want)
		}
	}
	if strings.Contains(page, "has no trace rows") {
		t.Error("the run page says a flow has no trace rows")
	}
}
