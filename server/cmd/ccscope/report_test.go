package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A split flow's legs (p-we-p's f0.0 and f0.1) are the run's flows: the
// page of `run --report` names each with its CC and path, as `ccscope
// report` does from the same run's trace files, and does not say the
// scenario's flow f0 has no rows.
func TestRunReportSplitFlowLegs(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := ccscope(t, "run", "p-we-p", "--duration", "200ms", "--report", page); code != 0 {
		t.Fatalf("run --report: exit %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	for _, want := range []string{`"title":"flow f0.0 · cubic","subtitle":"path: bottleneck `, `"title":"flow f0.1 · cubic","subtitle":"path: bottleneck `} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks the leg heading %q", want)
		}
	}
	if strings.Contains(html, "has no trace rows") {
		t.Error("the page says a flow has no trace rows")
	}
}
