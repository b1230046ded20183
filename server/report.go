package server

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server/report"
)

// maxReportBuckets bounds report's buckets, as `ccscope report --buckets`.
const maxReportBuckets = 100_000

// opReport draws the session's trace so far as the HTML page `ccscope run
// --report` writes: from the rows the session keeps (a note says how many
// of the oldest it dropped to stay under max_trace_rows), the panels of
// the flows the flows argument names (a split flow's id both its legs;
// default the first 32), the summary so far and the scenario, on a time
// axis up to the session's clock.
func (s *session) opReport(a *args, _ any) (any, *Error) {
	opt := report.Options{}
	if a.has("buckets") {
		n, e := a.uint("buckets")
		if e != nil {
			return nil, e
		}
		if n < 1 || n > maxReportBuckets {
			return nil, errorf(CodeBadArgs, "buckets", "buckets is %d, want 1 to %d", n, maxReportBuckets)
		}
		opt.Buckets = int(n)
	}
	if a.has("flows") {
		flows, e := a.strList("flows")
		if e != nil {
			return nil, e
		}
		opt.Flows = make([]string, 0, len(flows))
		for i, fl := range flows {
			legs := s.st.run.TraceNames(fl) // a split flow's id draws both legs, as signals selects them
			if legs == nil {
				return nil, errorf(CodeNotFound, fmt.Sprintf("flows[%d]", i), "flows: no flow %q in this session (%s)", fl, flowIDs(s.st.summary().Flows))
			}
			opt.Flows = append(opt.Flows, legs...)
		}
	}
	if e := a.done(); e != nil {
		return nil, e
	}
	sum := s.st.summary()
	if sum.SimTimePs <= 0 {
		return nil, errorf(CodeBadRequest, "", "the session has not run yet: its report would span nothing (step or run it first)")
	}
	meta := report.MetaFromSummary(&sum)
	meta.Config, meta.Detail = string(s.st.config), s.st.run.Scenario.Trace.Detail.String()
	meta.Source = "ccscope serve, session " + s.id
	b, err := report.New(meta, opt)
	if err == nil {
		err = s.tr.feed(s.st.run.Trace, b)
	}
	if err != nil {
		return nil, errorf(CodeInternal, "", "report: %v", err)
	}
	for _, t := range trace.Tables {
		if n := s.tr.dropped[t]; n > 0 {
			b.AddNote(fmt.Sprintf("the session kept its newest trace rows only: the %d oldest of the %s table were dropped (the server's max_trace_rows)", n, t))
		}
	}
	var page bytes.Buffer
	if err := b.Write(&page); err != nil {
		return nil, errorf(CodeInternal, "", "report: %v", err)
	}
	return map[string]any{"html": page.Bytes(), "rows": b.Rows()}, nil
}

// flowIDs lists flows' ids for an error, the first few of many.
func flowIDs(fs []engine.FlowSummary) string {
	var ids []string
	for i, f := range fs {
		if i == 8 {
			return strings.Join(ids, ", ") + fmt.Sprintf(", … (%d flows)", len(fs))
		}
		ids = append(ids, f.ID)
	}
	return strings.Join(ids, ", ")
}
