//go:build !linux

package emulate

import (
	"context"
	"errors"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// Options configure an emulated run.
type Options struct {
	Sink           trace.Sink
	SampleInterval sim.Duration
	MaxRateBps     int64
}

// Result is an emulated run's summary and trace.
type Result struct {
	Summary Summary
	Trace   *trace.Recorder
}

// Run is available on Linux only.
func Run(ctx context.Context, scn *config.Scenario, hash string, opt Options) (*Result, error) {
	return nil, errors.New("emulate: needs Linux (network namespaces and TUN devices)")
}

// Available reports why emulation cannot run here.
func Available() error { return errors.New("emulate: needs Linux") }
