package config

import (
	"bytes"
	"flag"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/ccscope/ccscope/engine/rng"
)

var updateTraces = flag.Bool("update-traces", false, "regenerate the shipped traces under scenarios/traces")

// cellularTrace generates the shipped cellular trace from a documented
// stochastic model (README, "Trace-driven links"):
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
//   - Radio link interruptions (handover, fading) start at Poisson times,
//     0.1 per second, and last U[50, 300] ms without any opportunity.
//
// The trace covers 20 s and is written in Mahimahi's format, one line per
// opportunity (the TTI's millisecond, 1-based). Seed 1, stream
// "traces/cellular".
func cellularTrace() []byte {
	r := rng.Stream(1, "traces/cellular")
	rates := []float64{1.5e6, 6e6, 15e6, 30e6}
	const dwellMs, tti, lengthMs = 2000.0, 1, 20000
	state := 2
	next := r.ExpFloat64() * dwellMs
	gapAt, gapEnd := r.ExpFloat64()*10000, 0.0
	var b bytes.Buffer
	last := 0
	for ms := tti; ms <= lengthMs; ms++ {
		t := float64(ms)
		for t >= next {
			switch state {
			case 0:
				state = 1
			case len(rates) - 1:
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
			continue
		}
		// Knuth's Poisson sampler: the means are below 3.
		lambda := rates[state] * 1e-3 / 12000
		k, p, lim := 0, 1.0, math.Exp(-lambda)
		for {
			p *= r.Float64()
			if p <= lim {
				break
			}
			k++
		}
		for ; k > 0; k-- {
			b.WriteString(strconv.Itoa(ms))
			b.WriteByte('\n')
			last = ms
		}
	}
	// Mahimahi loops a trace after its last line; end it on the last
	// millisecond so the loop keeps the 20 s period.
	if last != lengthMs {
		b.WriteString(strconv.Itoa(lengthMs) + "\n")
	}
	return b.Bytes()
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
