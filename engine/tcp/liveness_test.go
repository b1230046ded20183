package tcp

import (
	"fmt"
	"os"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// TestMain checks the liveness invariant (LivenessViolation) on every
// sender event of this package's tests.
func TestMain(m *testing.M) {
	LivenessViolation = func(flow int32, now sim.Time, what string) {
		panic(fmt.Sprintf("liveness: flow %d at %v: %s", flow, now, what))
	}
	os.Exit(m.Run())
}
