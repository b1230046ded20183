package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// Each seed's kernel clock stands at a whole number of microseconds below
// 2^27 µs, the same for the same seed and another for another; an aligned
// run's stands at zero and its summary leaves the field out, so that it
// reads as every summary did before the clock was drawn.
func TestKernelClockInSummary(t *testing.T) {
	raw, err := config.Builtin("p-rtr-p")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]uint64{}
	for seed := uint64(1); seed <= 8; seed++ {
		set := []string{"runtime.duration=100ms", fmt.Sprintf("runtime.seed=%d", seed)}
		_, s := runJSON(t, raw, set...)
		_, again := runJSON(t, raw, set...)
		c := s.KernelClockPs
		if c != again.KernelClockPs || c <= 0 || c%int64(sim.Microsecond) != 0 || c >= int64(1<<27)*int64(sim.Microsecond) {
			t.Errorf("seed %d: kernel clock %d ps (again %d); want the same whole µs in (0, 2^27 µs)", seed, c, again.KernelClockPs)
		}
		if s0, ok := seen[c]; ok {
			t.Errorf("seeds %d and %d draw the same kernel clock, %d ps", s0, seed, c)
		}
		seen[c] = seed
	}
	_, s := runJSON(t, raw, "runtime.duration=100ms", "runtime.kernel_clock=aligned")
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if s.KernelClockPs != 0 || strings.Contains(string(js), "kernel_clock_ps") {
		t.Errorf("aligned: kernel clock %d ps; want 0 and no kernel_clock_ps in %s", s.KernelClockPs, js[:120])
	}
}
