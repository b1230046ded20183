package main

import (
	"fmt"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
)

// openTrace returns the sink for --trace (nil when not asked for).
func openTrace(path string, scn *config.Scenario) (trace.Sink, error) {
	if path == "" {
		return nil, nil
	}
	return nil, fmt.Errorf("--trace: file output is not built yet")
}

func closeTrace(s trace.Sink, r *engine.Run) error { return r.Trace.Err() }
