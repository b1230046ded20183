//go:build !linux

package emulate

import (
	"context"
	"errors"

	"github.com/ccscope/ccscope/engine/config"
)

// Run is available on Linux only.
func Run(ctx context.Context, scn *config.Scenario, hash string, opt Options) (*Result, error) {
	return nil, errors.New("emulate: needs Linux (network namespaces and TUN devices)")
}

// Available reports why emulation cannot run here.
func Available() error { return errors.New("emulate: needs Linux") }

// checkCCs has nothing to check where Run cannot run.
func checkCCs(*config.Scenario) error { return nil }
