package cc

import (
	"math"
	"testing"
)

// TestCubicRootVsCbrt compares the kernel's table-plus-Newton cube root with
// math.Cbrt over the arguments bictcp_update gives it: cube_factor·(W_max −
// cwnd) for W_max − cwnd from 1 to 10^6 packets (the kernel's stated design
// range), i.e. a from about 2^31 to 2^51. The kernel's comment claims an
// average error of about 0.195%; here the average must not exceed that and
// no single root may be off by more than 0.2%. Measured: mean 0.029%,
// max 0.15%.
func TestCubicRootVsCbrt(t *testing.T) {
	c := newCubic(DefaultCubicParams())
	var sum, worst float64
	var worstDelta uint64
	n := 0
	for delta := uint64(1); delta <= 1_000_000; delta += 1 + delta/2000 {
		a := c.cubeFactor * delta
		got := float64(cubicRoot(a))
		want := math.Cbrt(float64(a))
		e := math.Abs(got/want - 1)
		sum += e
		n++
		if e > worst {
			worst, worstDelta = e, delta
		}
	}
	mean := sum / float64(n)
	t.Logf("%d roots: mean error %.4f%%, max %.4f%% at W_max−cwnd = %d", n, 100*mean, 100*worst, worstDelta)
	if mean > 0.00195 {
		t.Errorf("mean |cubicRoot(a)/cbrt(a) − 1| = %.4f%%, want ≤ 0.195%%", 100*mean)
	}
	if worst > 0.002 {
		a := c.cubeFactor * worstDelta
		t.Errorf("cubicRoot(%d) = %d, want %.1f within 0.2%%", a, cubicRoot(a), math.Cbrt(float64(a)))
	}
}

// TestCubicScaleFactors checks cubictcp_register's precomputation against
// hand arithmetic with the default β = 717 and bic_scale = 41:
// beta_scale = 8·(1024+717)/3/(1024−717) = 13928/3/307 = 4642/307 = 15;
// cube_rtt_scale = 410; cube_factor = 2^40/410 = 2681735677.
func TestCubicScaleFactors(t *testing.T) {
	c := newCubic(DefaultCubicParams())
	if c.betaScale != 15 {
		t.Errorf("beta_scale = %d, want 15", c.betaScale)
	}
	if c.cubeRTTScale != 410 {
		t.Errorf("cube_rtt_scale = %d, want 410", c.cubeRTTScale)
	}
	if c.cubeFactor != 2681735677 {
		t.Errorf("cube_factor = %d, want 2681735677", c.cubeFactor)
	}
}
