package config

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/ccscope/ccscope/engine/rng"
)

var updateTraces = flag.Bool("update-traces", false, "regenerate the shipped traces under scenarios/traces")

// cellularTrace generates the shipped cellular trace from a documented
// stochastic model (README, "Path models", the shipped traces):
//
//   - The channel is a birth-death Markov chain over four rate levels,
//     1.5, 6, 15 and 30 Mbps (poor to good radio conditions), starting at
//     15 Mbps. It stays in a level for an exponential time of mean 2 s,
//     then moves to a neighbouring level, up or down with probability 1/2
//     (from an end level, always inward). Its stationary distribution is
//     (1, 2, 2, 1)/6, a mean of 12.25 Mbps.
//   - Time runs in 1 ms transmission time intervals (an LTE subframe). In
//     a TTI at rate R the scheduler grants Poisson(R·1 ms / 12000 bit)
//     delivery opportunities of 1500 B.
//   - Radio link interruptions (handover, fading) last U[50, 300] ms
//     without any opportunity; the next starts an exponential time of mean
//     10 s after one ends (0.1 per second of connected time).
//
// The trace covers 20 s and is written in Mahimahi's format, one line per
// opportunity (the TTI's millisecond, 1-based). Seed 1, stream
// "traces/cellular".
func cellularTrace() []byte {
	const lengthMs = 20000
	var b bytes.Buffer
	last := 0
	cellularModel(rng.Stream(1, "traces/cellular"), lengthMs, func(ms, _ int, _ bool, k int) {
		for ; k > 0; k-- {
			b.WriteString(strconv.Itoa(ms))
			b.WriteByte('\n')
			last = ms
		}
	})
	// Mahimahi loops a trace after its last line; end it on the last
	// millisecond so the loop keeps the 20 s period.
	if last != lengthMs {
		b.WriteString(strconv.Itoa(lengthMs) + "\n")
	}
	return b.Bytes()
}

// cellularRates are the model's rate levels, poor to good.
var cellularRates = []float64{1.5e6, 6e6, 15e6, 30e6}

// cellularModel runs the cellular trace's model for lengthMs TTIs on r,
// handing tti each TTI's millisecond, rate level (an index into
// cellularRates), whether an interruption covers it, and its opportunities.
func cellularModel(r *rand.Rand, lengthMs int, tti func(ms, state int, gap bool, k int)) {
	const dwellMs = 2000.0
	state := 2
	next := r.ExpFloat64() * dwellMs
	gapAt, gapEnd := r.ExpFloat64()*10000, 0.0
	for ms := 1; ms <= lengthMs; ms++ {
		t := float64(ms)
		for t >= next {
			switch state {
			case 0:
				state = 1
			case len(cellularRates) - 1:
				state--
			default:
				if r.Float64() < 0.5 {
					state--
				} else {
					state++
				}
			}
			next += float64(r.ExpFloat64() * dwellMs) // float64(): no fused multiply-add
		}
		if t >= gapAt {
			gapEnd = gapAt + 50 + float64(250*r.Float64())
			gapAt = gapEnd + float64(r.ExpFloat64()*10000)
		}
		if t < gapEnd {
			tti(ms, state, true, 0)
			continue
		}
		// Knuth's Poisson sampler: the means are below 3.
		lambda := cellularRates[state] * 1e-3 / 12000
		k, p, lim := 0, 1.0, math.Exp(-lambda)
		for {
			p *= r.Float64()
			if p <= lim {
				break
			}
			k++
		}
		tti(ms, state, false, k)
	}
}

// The shipped cellular trace is exactly what the generator produces, so
// anyone can rebuild it (go test ./engine/config -run ShippedTraces
// -update-traces), and the constant trace is one opportunity per ms for 1 s
// (12 Mbps).
func TestShippedTraces(t *testing.T) {
	constant := make([]byte, 0, 4000)
	for ms := 1; ms <= 1000; ms++ {
		constant = strconv.AppendInt(constant, int64(ms), 10)
		constant = append(constant, '\n')
	}
	for _, tc := range []struct {
		file string
		want []byte
	}{{"scenarios/traces/cellular.trace", cellularTrace()}, {"scenarios/traces/const-12mbps.trace", constant}} {
		if *updateTraces {
			if err := os.WriteFile(tc.file, tc.want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatalf("reading %s: %v", tc.file, err)
		}
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s differs from its generator; run with -update-traces if the generator changed on purpose", tc.file)
		}
		ops, err := ParseTrace(got)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		tl := TraceLink{Opportunities: ops}
		t.Logf("%s: %d opportunities over %d ms, mean %v", tc.file, len(ops), ops[len(ops)-1], tl.MeanRate())
	}
}

// The cellular model's long run matches the laws its comment states. Over
// 5·10^4 s of model time (5·10^7 TTIs, seed 2), cut into 50 batches of
// 1,000 s (500 dwells, 100 interruptions: far longer than the chain's
// relaxation time, 2 s/(1 − cos π/3) = 4 s), each of these is within 4
// batch-means SEs of its closed form:
//   - the fraction of TTIs at each level, (1, 2, 2, 1)/6;
//   - the interruption fraction: an interruption starts an Exp(10 s) after
//     the last one ends and lasts 175 ms on average, 175/(10,000 + 175) of
//     the time (Poisson starts with overlaps merged would give
//     1 − e^−0.0175, 0.9 % more, below this resolution);
//   - the mean rate of the opportunities, 12.25 Mbps (the levels'
//     stationary mean) outside interruptions, so 12.25 Mbps·(1 − that
//     fraction) over all TTIs: a TTI's grant is Poisson of mean R·1 ms /
//     12,000 bit, independent of interruptions.
//
// The SEs come from 50 batches, so each check is a t test on 49 dof at
// ±4: about 2·10⁻⁴ false alarms per check.
func TestCellularModelLaws(t *testing.T) {
	const lengthMs, batches = 50_000_000, 50
	type batch struct {
		level     [4]float64
		gap, bits float64
	}
	var b [batches]batch
	cellularModel(rng.Stream(2, "test/cellular"), lengthMs, func(ms, state int, gap bool, k int) {
		x := &b[(ms-1)/(lengthMs/batches)]
		x.level[state]++
		if gap {
			x.gap++
		}
		x.bits += float64(k) * 12000
	})
	per := float64(lengthMs / batches)
	check := func(name string, want float64, of func(x batch) float64) {
		t.Helper()
		var v [batches]float64
		for i := range b {
			v[i] = of(b[i])
		}
		var m, ss float64
		for _, y := range v {
			m += y / batches
		}
		for _, y := range v {
			ss += (y - m) * (y - m)
		}
		se := math.Sqrt(ss / (batches - 1) / batches)
		if math.Abs(m-want) > 4*se {
			t.Errorf("%s = %.6g, want %.6g ± %.3g (4 batch SEs)", name, m, want, 4*se)
		}
	}
	for i, w := range []float64{1, 2, 2, 1} {
		check(fmt.Sprintf("fraction of TTIs at %g Mbps", cellularRates[i]/1e6), w/6, func(x batch) float64 { return x.level[i] / per })
	}
	gap := 175.0 / (10000 + 175)
	check("interruption fraction", gap, func(x batch) float64 { return x.gap / per })
	check("mean rate (Mbps)", 12.25*(1-gap), func(x batch) float64 { return x.bits / per / 1e3 })
}
