package link

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
)

// jitterSample draws n extra delays (in ms) for nominal arrivals spread
// uniformly at random over [0, 1000 s), each 1 ms or more after the one
// before in expectation, far apart for the stateful models. It draws as a
// link direction does (Dir.jitter, which takes a redrawn Gaussian's draw
// inline and the rest through extra).
func jitterSample(c config.Jitter, n int, delay sim.Duration) []float64 {
	d := &Dir{jit: newJitterModel(c, rng.PCG(11, "test/jitter")), delay: delay}
	phase := rng.Stream(12, "test/phase")
	out := make([]float64, n)
	at := sim.Time(0)
	for i := range out {
		at = at.Add(sim.Duration(phase.Int64N(int64(20 * sim.Millisecond))))
		out[i] = float64(d.jitter(at)) / float64(sim.Millisecond)
	}
	return out
}

// Each jitter model's draws over 10^5 packets match its distribution: mean
// and σ within 4 standard errors, quantiles by the binomial SE of the ECDF,
// and a Kolmogorov-Smirnov test against the CDF at significance 0.001. The
// SE of the sample σ is σ·√((κ−1)/(4n)) (delta method), κ the model's
// kurtosis in closed form: Pareto's is far above a normal's.
func TestJitterModelsMatchDistributions(t *testing.T) {
	const n = 100_000
	type dist struct {
		mean, sd float64
		kurt     float64               // μ₄/σ⁴
		cdf      func(float64) float64 // of the extra delay in ms
		quant    func(p float64) float64
	}
	normal := func(s float64) dist {
		return dist{0, s, 3, func(x float64) float64 { return phi(x / s) }, func(p float64) float64 { return s * math.Sqrt2 * math.Erfinv(2*p-1) }}
	}
	uniform := func(a, b float64) dist {
		return dist{(a + b) / 2, (b - a) / math.Sqrt(12), 9.0 / 5,
			func(x float64) float64 { return min(1, max(0, (x-a)/(b-a))) },
			func(p float64) float64 { return a + p*(b-a) }}
	}
	// Pareto's excess kurtosis is 6(α³+α²−6α−2)/(α(α−3)(α−4)): 70.8 at α = 5.
	// (X−μ)² has a tail of index α/2, so σ̂ is skewed: one draw above ~35
	// x_m pushes it past +4 SE, and the σ check fails about 0.2 % of seeds
	// (n·35^−α; 4 of 3,000 in a trial), not the normal 6·10⁻⁵.
	const xm, alpha = 1.0, 5.0
	pareto := dist{alpha * xm / (alpha - 1), xm / (alpha - 1) * math.Sqrt(alpha/(alpha-2)),
		3 + 6*(alpha*alpha*alpha+alpha*alpha-6*alpha-2)/(alpha*(alpha-3)*(alpha-4)),
		func(x float64) float64 { return max(0, 1-math.Pow(xm/x, alpha)) },
		func(p float64) float64 { return xm * math.Pow(1-p, -1/alpha) }}
	// max(0, X), X ~ N(0, σ): an atom of 1/2 at 0, mean c = σ/√(2π) ≈
	// 0.399σ, variance σ²(1/2 − 1/(2π)). Its raw moments are σ²/2, 2cσ²
	// and 3σ⁴/2 (half the normal's ∫x^k φ over x > 0), so μ₄ = 3σ⁴/2 −
	// 4c·2cσ² + 6c²·σ²/2 − 3c⁴ = 3σ⁴/2 − 5c²σ² − 3c⁴.
	const s0 = 2.0
	c0, v0 := s0/math.Sqrt(2*math.Pi), s0*s0*(0.5-1/(2*math.Pi))
	clampZero := dist{c0, math.Sqrt(v0), (1.5*s0*s0*s0*s0 - 5*c0*c0*s0*s0 - 3*c0*c0*c0*c0) / (v0 * v0),
		func(x float64) float64 {
			if x < 0 {
				return 0
			}
			return phi(x / s0)
		}, nil}
	// max(−d, X), X ~ N(0, σ), on a 2 ms link with σ 2 ms: the one-way delay
	// d + X clamped at 0, as netem clamps its drawn delay. An atom of Φ(−1)
	// = 15.9 % at −d, and N(0, σ) above; moments by integration.
	const dTotal = 2.0
	mT, sdT, kT := clampedMoments(-dTotal, s0)
	// The integration against closed forms: max(0, X)'s moments above, and
	// E[max(a, X)] = aΦ(a/σ) + σφ(a/σ).
	if m, sd, k := clampedMoments(0, s0); math.Abs(m-clampZero.mean) > 1e-9 || math.Abs(sd-clampZero.sd) > 1e-9 || math.Abs(k-clampZero.kurt) > 1e-6 {
		t.Fatalf("clampedMoments(0, σ) = %v, %v, %v; want %v, %v, %v", m, sd, k, clampZero.mean, clampZero.sd, clampZero.kurt)
	}
	if want := -dTotal*phi(-dTotal/s0) + s0*math.Exp(-0.5*dTotal*dTotal/(s0*s0))/math.Sqrt(2*math.Pi); math.Abs(mT-want) > 1e-9 {
		t.Fatalf("clampedMoments(−d, σ) mean %v, want %v", mT, want)
	}
	// The default clamp redraws: on a 2 ms link with σ 2 ms, X ~ N(0, σ)
	// given X ≥ −d, a normal truncated at −1σ (15.9 % of draws redrawn).
	// Its mean is σφ(α)/(1 − Φ(α)) with α = −d/σ.
	mR, sdR, kR := truncatedMoments(-dTotal, s0)
	if want := s0 * math.Exp(-0.5*dTotal*dTotal/(s0*s0)) / math.Sqrt(2*math.Pi) / (1 - phi(-dTotal/s0)); math.Abs(mR-want) > 1e-9 {
		t.Fatalf("truncatedMoments(−d, σ) mean %v, want %v", mR, want)
	}
	redrawn := dist{mR, sdR, kR,
		func(x float64) float64 {
			if x < -dTotal {
				return 0
			}
			return (phi(x/s0) - phi(-dTotal/s0)) / (1 - phi(-dTotal/s0))
		}, nil}
	clampTotal := dist{mT, sdT, kT,
		func(x float64) float64 {
			if x < -dTotal {
				return 0
			}
			return phi(x / s0)
		}, nil}
	for _, tc := range []struct {
		name  string
		c     config.Jitter
		d     dist
		delay sim.Duration // the link's; 100 ms if 0
	}{
		{"gaussian", config.Jitter{Kind: config.Gaussian, Sigma: 2 * sim.Millisecond}, normal(2), 0},
		{"gaussian redrawn", config.Jitter{Kind: config.Gaussian, Sigma: s0 * sim.Millisecond}, redrawn, dTotal * sim.Millisecond},
		{"gaussian clamp zero", config.Jitter{Kind: config.Gaussian, Sigma: s0 * sim.Millisecond, Clamp: config.ClampZero}, clampZero, 0},
		{"gaussian clamp total", config.Jitter{Kind: config.Gaussian, Sigma: s0 * sim.Millisecond, Clamp: config.ClampTotal}, clampTotal, dTotal * sim.Millisecond},
		{"uniform", config.Jitter{Kind: config.Uniform, Min: sim.Millisecond, Max: 3 * sim.Millisecond}, uniform(1, 3), 0},
		{"pareto", config.Jitter{Kind: config.Pareto, Scale: sim.Millisecond, Shape: alpha}, pareto, 0},
		// Nominal arrivals at uniform phases: the wait to the next boundary
		// is U[0, period).
		{"lte_subframe", config.Jitter{Kind: config.LTESubframe, Period: sim.Millisecond}, uniform(0, 1), 0},
		{"5g_nr", config.Jitter{Kind: config.NR5G, Period: 500 * sim.Microsecond}, uniform(0, 0.5), 0},
		// Sparse frames (one per 10 ms on average, TXOPs every 4 ms, room
		// for 4): each waits U[0, interval) for its TXOP.
		{"wifi_txop σ=0", config.Jitter{Kind: config.WiFiTXOP, Interval: 4 * sim.Millisecond, BurstSize: 4}, uniform(0, 4), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			delay := tc.delay
			if delay == 0 {
				delay = 100 * sim.Millisecond
			}
			x := jitterSample(tc.c, n, delay)
			m, sd := meanSD(x)
			within(t, "mean (ms)", m, tc.d.mean, tc.d.sd/math.Sqrt(n))
			within(t, "σ (ms)", sd, tc.d.sd, tc.d.sd*math.Sqrt((tc.d.kurt-1)/(4*n)))
			if tc.d.quant != nil {
				for _, p := range []float64{0.1, 0.5, 0.9, 0.99} {
					quantileCheck(t, tc.name, x, p, tc.d.quant(p))
				}
			}
			if d := ks(x, tc.d.cdf); d > ksCritical(n)+1e-6 {
				t.Errorf("KS D = %.5f, critical %.5f at α = 0.001", d, ksCritical(n))
			}
		})
	}
}

// clampedMoments is the mean, σ and kurtosis of max(a, X), X ~ N(0, s): the
// atom Φ(a/s) at a, plus the normal's density above a.
func clampedMoments(a, s float64) (mean, sd, kurt float64) { return momentsAbove(a, s, true) }

// truncatedMoments is the mean, σ and kurtosis of X ~ N(0, s) given X ≥ a.
func truncatedMoments(a, s float64) (mean, sd, kurt float64) { return momentsAbove(a, s, false) }

// momentsAbove integrates the normal's density over [a, a + 12s] by
// Simpson's rule, with the mass below a as an atom at a (clamp) or left
// out and the rest renormalised.
func momentsAbove(a, s float64, clamp bool) (mean, sd, kurt float64) {
	const steps = 20_000
	h := 12 * s / steps
	moment := func(g func(float64) float64) float64 {
		sum := 0.0
		if clamp {
			sum = g(a) * phi(a/s)
		}
		for i := 0; i <= steps; i++ {
			x := a + float64(i)*h
			w := 2.0
			switch {
			case i == 0 || i == steps:
				w = 1
			case i%2 == 1:
				w = 4
			}
			sum += w * h / 3 * g(x) * math.Exp(-x*x/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
		}
		if !clamp {
			sum /= 1 - phi(a/s)
		}
		return sum
	}
	mean = moment(func(x float64) float64 { return x })
	v := moment(func(x float64) float64 { return (x - mean) * (x - mean) })
	m4 := moment(func(x float64) float64 { return math.Pow(x-mean, 4) })
	return mean, math.Sqrt(v), m4 / (v * v)
}

// Within-burst spread of wifi_txop: with σ > 0 a sparse frame's extra delay
// is U[0, I) + |N(0, σ)|: mean I/2 + σ·sqrt(2/π), variance I²/12 +
// σ²(1 − 2/π).
func TestWiFiTXOPSpread(t *testing.T) {
	const n = 100_000
	const iv, s = 4.0, 0.5
	x := jitterSample(config.Jitter{Kind: config.WiFiTXOP, Interval: 4 * sim.Millisecond, BurstSize: 4, Sigma: 500 * sim.Microsecond}, n, 0)
	m, sd := meanSD(x)
	wantSD := math.Sqrt(iv*iv/12 + s*s*(1-2/math.Pi))
	within(t, "mean (ms)", m, iv/2+s*math.Sqrt(2/math.Pi), wantSD/math.Sqrt(n))
	within(t, "σ (ms)", sd, wantSD, wantSD*math.Sqrt(2.0/(4*n)))
}

// A TXOP carries at most burst_size frames: 10 frames arriving at once
// with room for 4 per TXOP leave in TXOPs of 4, 4 and 2, one interval apart.
func TestWiFiTXOPBurstSize(t *testing.T) {
	m := newJitterModel(config.Jitter{Kind: config.WiFiTXOP, Interval: 4 * sim.Millisecond, BurstSize: 4}, rng.PCG(1, "x"))
	at := sim.Time(sim.Millisecond)
	var got []sim.Time
	for i := 0; i < 10; i++ {
		got = append(got, at.Add(m.extra(at, 0)))
	}
	for i, g := range got {
		want := sim.Time(4*sim.Millisecond) + sim.Time(i/4)*sim.Time(4*sim.Millisecond)
		if g != want {
			t.Errorf("frame %d delivered at %v, want %v", i, g, want)
		}
	}
}

// burst: packets whose nominal arrival falls in the first length of each
// period get the extra delay, the others none: the fraction delayed is
// length/period (binomial SE).
func TestBurstJitterFraction(t *testing.T) {
	const n = 100_000
	x := jitterSample(config.Jitter{Kind: config.Burst, Period: 10 * sim.Millisecond, Length: 2 * sim.Millisecond, Extra: 5 * sim.Millisecond}, n, 0)
	hit := 0
	for _, v := range x {
		switch v {
		case 5:
			hit++
		case 0:
		default:
			t.Fatalf("burst extra delay %v ms, want 0 or 5", v)
		}
	}
	within(t, "fraction delayed", float64(hit)/n, 0.2, math.Sqrt(0.2*0.8/n))
}

// reorder: a fraction p of packets waits delay, the rest none.
func TestReorderJitterFraction(t *testing.T) {
	const n, p = 100_000, 0.03
	x := jitterSample(config.Jitter{Kind: config.Reorder, P: p, Delay: 3 * sim.Millisecond}, n, 0)
	held := 0
	for _, v := range x {
		if v == 3 {
			held++
		}
	}
	within(t, "fraction held", float64(held)/n, p, math.Sqrt(p*(1-p)/n))
}

// reorder holds each packet independently with probability p (netem's draw
// per packet), though it draws once per held packet: the packet after a
// held one is held with probability p, and the gaps between held packets
// are geometric, of mean 1/p and σ √(1−p)/p.
func TestReorderJitterIndependent(t *testing.T) {
	const n, p = 400_000, 0.05
	x := jitterSample(config.Jitter{Kind: config.Reorder, P: p, Delay: 3 * sim.Millisecond}, n, 0)
	var gaps []float64
	after, afterHeld, last := 0, 0, -1
	for i, v := range x {
		if i > 0 && x[i-1] == 3 {
			after++
			if v == 3 {
				afterHeld++
			}
		}
		if v == 3 {
			if last >= 0 {
				gaps = append(gaps, float64(i-last))
			}
			last = i
		}
	}
	within(t, "P(held | the one before held)", float64(afterHeld)/float64(after), p, math.Sqrt(p*(1-p)/float64(after)))
	mean, sd := 1/p, math.Sqrt(1-p)/p
	gm, gsd := meanSD(gaps)
	within(t, "mean gap between held packets", gm, mean, sd/math.Sqrt(float64(len(gaps))))
	// The gaps' variance: its SE from the geometric's fourth central moment.
	m4 := (1 - p) * (p*p - 9*p + 9) / (p * p * p * p)
	within(t, "variance of the gaps", gsd*gsd, sd*sd, math.Sqrt((m4-sd*sd*sd*sd)/float64(len(gaps))))
}

// Probabilities 0 and 1 hold no packet and every packet.
func TestReorderJitterEdges(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want float64
	}{{0, 0}, {1, 3}} {
		for i, v := range jitterSample(config.Jitter{Kind: config.Reorder, P: c.p, Delay: 3 * sim.Millisecond}, 1000, 0) {
			if v != c.want {
				t.Fatalf("p=%v: packet %d delayed %v ms, want %v", c.p, i, v, c.want)
			}
		}
	}
}

// The quantising kinds round a packet's nominal arrival up to the next
// multiple of their period, and burst delays exactly those in the first
// Length of each period, for nominal arrivals in any order: a delay change
// can move them backwards, and equal or nearby ones repeat.
func TestQuantisedJitterAnyOrder(t *testing.T) {
	const q = 125 * sim.Microsecond
	lte := newJitterModel(config.Jitter{Kind: config.NR5G, Period: q}, nil)
	burst := newJitterModel(config.Jitter{Kind: config.Burst, Period: q, Length: 40 * sim.Microsecond, Extra: sim.Millisecond}, nil)
	r := rng.Stream(13, "test/order")
	at := sim.Time(sim.Second)
	for i := range 100000 {
		switch r.IntN(5) {
		case 0: // a delay change back by up to 3 periods
			at = max(0, at.Add(-sim.Duration(r.Int64N(int64(3*q)))))
		case 1: // the same instant again
		case 2: // the next period boundary, exactly
			at = sim.Time((int64(at)/int64(q) + 1) * int64(q))
		default:
			at = at.Add(sim.Duration(r.Int64N(int64(q / 4))))
		}
		// The next multiple of q at or after at, by counting periods.
		k := (int64(at) + int64(q) - 1) / int64(q)
		if got, want := at.Add(lte.extra(at, 0)), sim.Time(k*int64(q)); got != want {
			t.Fatalf("step %d: 5g_nr: %v + extra = %v, want %v", i, at, got, want)
		}
		want := sim.Duration(0)
		if int64(at)-int64(at)/int64(q)*int64(q) < int64(40*sim.Microsecond) {
			want = sim.Millisecond
		}
		if got := burst.extra(at, 0); got != want {
			t.Fatalf("step %d: burst: extra(%v) = %v, want %v", i, at, got, want)
		}
	}
}

// roundPs rounds as sim.Duration(math.Round(x)) does: halves away from
// zero, the float just below ½, whole floats beyond 2^52, values the
// conversion cannot hold, and scaled normal draws as the jitter makes them.
func TestRoundPsIsMathRound(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
		0.49999999999999994, -0.49999999999999994, math.Nextafter(0.5, 1), math.Nextafter(-0.5, -1),
		1 << 52, 1<<52 + 1, -(1<<52 + 1), 1<<52 - 0.5, -(1<<52 - 0.5), 1 << 53, 1 << 62,
		1 << 63, -(1 << 63), math.Nextafter(1<<63, 0), 1 << 64, -(1 << 64),
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	r := rng.Stream(1, "test/round")
	for range 100000 {
		xs = append(xs, float64(r.NormFloat64()*1e7), float64(r.Float64()*8)-4)
	}
	for _, x := range xs {
		if got, want := roundPs(x), sim.Duration(math.Round(x)); got != want {
			t.Errorf("roundPs(%v) = %d, want %d", x, got, want)
		}
	}
}
