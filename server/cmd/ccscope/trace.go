package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
)

// openTrace returns the file sink for --trace (nil when not asked for),
// writing what --trace-select picks. A trace file of a summary-only run
// would be empty, so asking for one raises the detail to every change, and
// says so.
func openTrace(path, selection string, scn *config.Scenario) (*trace.FileSink, error) {
	if path == "" {
		if selection != "" {
			return nil, fmt.Errorf("--trace-select %q: needs --trace FILE", selection)
		}
		return nil, nil
	}
	var items []string
	if selection != "" {
		items = strings.Split(selection, ",")
	}
	sel, err := trace.ParseSelection(items)
	if err != nil {
		return nil, fmt.Errorf("--trace-select: %w", err)
	}
	if !strings.HasSuffix(path, ".arrow") && !strings.HasSuffix(path, ".parquet") {
		return nil, fmt.Errorf("--trace %q: the file name must end in .arrow (Arrow IPC) or .parquet", path)
	}
	if scn.Trace.Detail == config.TraceSummary {
		scn.Trace.Detail = config.TraceChange
		fmt.Fprintln(os.Stderr, "ccscope: the scenario's trace.detail is \"summary\"; --trace records every change (set trace.detail to \"sampled\" for less)")
	}
	return trace.NewFileSink(path, trace.WithSelection(sel))
}

// closeTrace finishes the files and lists them on stderr.
func closeTrace(s *trace.FileSink, r *engine.Run) error {
	if s == nil {
		return r.Trace.Err()
	}
	if err := s.Close(); err != nil {
		return err
	}
	if err := r.Trace.Err(); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "ccscope: trace written to", strings.Join(s.Paths(), " "))
	return nil
}
