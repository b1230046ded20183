package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server/report"
)

// openTrace returns the file sink for --trace (nil when not asked for),
// writing what --trace-select picks. A trace file of a summary-only run
// would be empty, so asking for one raises the detail to every change, and
// says so. The trace of an earlier run under the same name is replaced
// whole (removeStale), so that a report never draws tables of two runs.
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
	sink, err := trace.NewFileSink(path, trace.WithSelection(sel))
	if err != nil {
		return nil, err
	}
	if err := removeStale(path, sink.Paths()); err != nil {
		sink.Close()
		return nil, err
	}
	return sink, nil
}

// removeStale removes the files an earlier trace under path left that
// this one does not write over: the tables it leaves out, which it names on
// stderr, and the run-info file, which this run writes anew once it ends
// (one that ends early leaves none, rather than the earlier run's).
func removeStale(path string, writing []string) error {
	var stale []string
	for _, t := range trace.Tables {
		if p := trace.TablePath(path, t); !slices.Contains(writing, p) {
			stale = append(stale, p)
		}
	}
	var removed []string
	for _, p := range stale {
		switch err := os.Remove(p); {
		case err == nil:
			removed = append(removed, p)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("--trace %q: removing %s, left by an earlier trace: %w", path, p, err)
		}
	}
	info := report.RunInfoPath(path)
	if err := os.Remove(info); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--trace %q: removing %s, left by an earlier trace: %w", path, info, err)
	}
	if len(removed) > 0 {
		fmt.Fprintf(os.Stderr, "ccscope: removed %s, left by an earlier trace under this name (this run does not write them)\n", strings.Join(removed, " "))
	}
	return nil
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
