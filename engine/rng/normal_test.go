package rng

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Normal is rand.Rand's NormFloat64, draw for draw: the same values, bit
// for bit, and the generator in the same place after each, over ten
// million draws from each of three streams. The draws that take more than
// one sample are the slow path's: their share is what the boxes leave out
// of the strips, 1 − Σ box/(128·2³¹) (2.7 %), within four standard errors.
func TestNormalMatchesStdlib(t *testing.T) {
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	for _, seed := range []uint64{0, 1, 2026} {
		a, b := PCG(seed, "t"), PCG(seed, "t")
		norm, ref := NewNormal(a), rand.New(b)
		slow := 0
		for k := range n {
			one := *a
			one.Uint64()
			x, y := norm.Draw(), ref.NormFloat64()
			if math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("seed %d, draw %d: %v, want %v", seed, k, x, y)
			}
			if *a != *b {
				t.Fatalf("seed %d, draw %d: the generators are apart", seed, k)
			}
			if *a != one {
				slow++
			}
		}
		boxed := 0.0
		for _, k := range zigK {
			boxed += float64(k) / (128 << 31)
		}
		p := 1 - boxed
		f := float64(slow) / float64(n)
		if se := math.Sqrt(p * (1 - p) / float64(n)); math.Abs(f-p) > 4*se {
			t.Errorf("seed %d: %.5f of the draws took more than one sample, want %.5f ± %.5f", seed, f, p, 4*se)
		}
	}
}

// The boxes read from the standard library are Marsaglia and Tsang's
// (2000) ziggurat of 128 strips: the base strip's edge r = 3.442619855899
// and area v = 9.91256303526217e-3, so the base's scale q = v/e^(−r²/2),
// strip 127's scale r, the base's box r/q of it, and no box in strip 1.
func TestZigguratBoxes(t *testing.T) {
	const r, v = 3.442619855899, 9.91256303526217e-3
	q := v / math.Exp(-0.5*r*r)
	const m = 1 << 31
	if got := zigW[127] * m; math.Abs(got/r-1) > 1e-7 {
		t.Errorf("strip 127 scale·2^31 = %.9g, want r = %.9g", got, r)
	}
	if got := zigW[0] * m; math.Abs(got/q-1) > 1e-7 {
		t.Errorf("base strip scale·2^31 = %.9g, want v/e^(-r²/2) = %.9g", got, q)
	}
	if got, want := float64(zigK[0]), r/q*m; math.Abs(got-want) > 1 {
		t.Errorf("base strip box %v, want (r/q)·2^31 = %.1f", got, want)
	}
	if zigK[1] != 0 {
		t.Errorf("strip 1 box %d, want none", zigK[1])
	}
}

func BenchmarkNormal(b *testing.B) {
	b.Run("Draw", func(b *testing.B) {
		n := NewNormal(PCG(1, "b"))
		s := 0.0
		for b.Loop() {
			s += n.Draw()
		}
		b.ReportMetric(s, "sum")
	})
	b.Run("NormFloat64", func(b *testing.B) {
		r := Stream(1, "b")
		s := 0.0
		for b.Loop() {
			s += r.NormFloat64()
		}
		b.ReportMetric(s, "sum")
	})
}
