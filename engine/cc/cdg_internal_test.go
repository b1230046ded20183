package cc

import (
	"math"
	"testing"
)

// TestCDGNexp checks nexp_u32's table arithmetic against exp(−x): within
// 0.05 % of U32_MAX·e^(−ux/10⁶) plus 10⁻⁶ of U32_MAX (a backoff
// probability off by at most that), and 0 from ux = 2^24 on.
func TestCDGNexp(t *testing.T) {
	for _, ux := range []uint32{0, 1, 255, 256, 1000, 33_333, 100_000, 500_000, 1_000_000, 3_000_000, 10_000_000, 1<<24 - 1} {
		got := float64(nexpU32(ux))
		want := math.Exp(-float64(ux)/1e6) * math.MaxUint32
		if math.Abs(got-want) > 5e-4*want+1e-6*math.MaxUint32 {
			t.Errorf("nexp_u32(%d) = %.0f, want U32_MAX·e^−%g = %.0f (±0.05 %%)", ux, got, float64(ux)/1e6, want)
		}
	}
	if got := nexpU32(1 << 24); got != 0 {
		t.Errorf("nexp_u32(2^24) = %d, want 0 (the kernel's cut-off)", got)
	}
}
