package emulate

import (
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
)

// TestGroupRows lines up two group summaries whose buckets differ: a
// bucket only one side has flows in gets a row with the other side empty,
// and rows follow the buckets' sizes.
func TestGroupRows(t *testing.T) {
	ms := int64(sim.Millisecond)
	j := 0.9
	sg := engine.GroupSummary{Group: "web", Completed: 3, JainBulk: &j, Buckets: []engine.FCTBucket{
		{MinBytes: 10_000, MaxBytes: 100_000, Count: 2, FCTP50Ps: 100 * ms, FCTP99Ps: 150 * ms}}}
	kg := engine.GroupSummary{Group: "web", Completed: 2, Buckets: []engine.FCTBucket{
		{MinBytes: 0, MaxBytes: 10_000, Count: 1, FCTP50Ps: 60 * ms, FCTP99Ps: 60 * ms},
		{MinBytes: 10_000, MaxBytes: 100_000, Count: 1, FCTP50Ps: 110 * ms, FCTP99Ps: 110 * ms}}}
	rows := groupRows(7, sg, kg)
	type want struct {
		metric    string
		sim, kern float64 // -1: none
	}
	wants := []want{{"completed", 3, 2}, {"fct_p50[,10KB)", -1, 60}, {"fct_p99[,10KB)", -1, 60},
		{"fct_p50[10KB,100KB)", 100, 110}, {"fct_p99[10KB,100KB)", 150, 110}, {"jain_bulk", 0.9, -1}}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(wants), rows)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for i, w := range wants {
		r := rows[i]
		if r.Seed != 7 || r.Flow != "web" || r.Group != "" || r.Metric != w.metric || val(r.Sim) != w.sim || val(r.Kernel) != w.kern {
			t.Errorf("row %d = %s %s sim %v kernel %v; want web %s sim %v kernel %v", i, r.Flow, r.Metric, val(r.Sim), val(r.Kernel), w.metric, w.sim, w.kern)
		}
	}
	if d := rows[3].RelDiff; d == nil || *d < 0.0999 || *d > 0.1001 {
		t.Errorf("rel_diff of fct_p50[10KB,100KB) = %v, want +0.1", d)
	}
}
