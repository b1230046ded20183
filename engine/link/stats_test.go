package link

import (
	"math"
	"slices"
	"testing"
)

// ratioSE is the batch-means standard error of ΣL/ΣB, the ratio estimator of
// E[L]/E[B] over k batches (delta method): sqrt(Σ(L_b − R·B_b)² / (k(k−1)))
// / mean(B_b). Batches absorb the correlation of a Markov model's draws.
func ratioSE(l, b []float64) (r, se float64) {
	var sl, sb float64
	for i := range l {
		sl += l[i]
		sb += b[i]
	}
	r = sl / sb
	k := float64(len(l))
	var ss float64
	for i := range l {
		d := l[i] - float64(r*b[i])
		ss += float64(d * d)
	}
	return r, math.Sqrt(ss/(k*(k-1))) / (sb / k)
}

// mean, sd of a sample.
func meanSD(x []float64) (float64, float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	var ss float64
	for _, v := range x {
		d := v - m
		ss += float64(d * d)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

// ks is the Kolmogorov-Smirnov statistic of sample x against cdf, over the
// distinct values so that an atom (a clamp at zero) compares the jump of
// the ECDF with the jump of the CDF.
func ks(x []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		v := s[i]
		d = max(d, math.Abs(float64(j)/n-cdf(v)), math.Abs(cdf(math.Nextafter(v, math.Inf(-1)))-float64(i)/n))
		i = j
	}
	return d
}

// ksCritical is the KS critical value at significance 0.001 (c(α) = 1.949).
func ksCritical(n int) float64 { return 1.949 / math.Sqrt(float64(n)) }

// quantileCheck checks that the empirical CDF at the true p-quantile q is p
// within 4 binomial standard errors.
func quantileCheck(t *testing.T, name string, x []float64, p, q float64) {
	t.Helper()
	below := 0
	for _, v := range x {
		if v <= q {
			below++
		}
	}
	n := float64(len(x))
	f := float64(below) / n
	se := math.Sqrt(p * (1 - p) / n)
	if math.Abs(f-p) > 4*se {
		t.Errorf("%s: F_n(q_%.2f = %.4g) = %.5f, want %.2f ± %.5f (4 SE)", name, p, q, f, p, 4*se)
	}
}

func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func within(t *testing.T, what string, got, want, se float64) {
	t.Helper()
	if math.Abs(got-want) > 4*se {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (4 SE)", what, got, want, 4*se)
	}
}
