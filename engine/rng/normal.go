package rng

import (
	"math"
	"math/rand/v2"
)

// Normal draws standard normal variates from a PCG: the values, and the
// generator's positions after each, of rand.New(src).NormFloat64. That is
// the Marsaglia–Tsang ziggurat over 128 strips, where a draw whose 32-bit
// sample lies inside its strip's box (97.3 % of them) is the sample scaled
// by the strip's width. Draw does that case itself, on the PCG (Boxed); for
// the rest it hands the same sample to the standard library (Rest), so the
// wedge and tail tests and any redraws are its own. A jitter model
// draws once per packet: without the call through rand.Rand's source
// interface and the call of NormFloat64, the pump with a 10 µs Gaussian
// jitter spends about ten points less over its baseline (PERFORMANCE.md).
type Normal struct {
	src    *rand.PCG
	replay replay
	slow   *rand.Rand // NormFloat64 over replay
}

// NewNormal returns standard normal draws from src.
func NewNormal(src *rand.PCG) *Normal {
	n := &Normal{src: src}
	n.replay.src = src
	n.slow = rand.New(&n.replay)
	return n
}

// Draw returns the next standard normal variate: the PCG's next sample
// through Boxed, or for the few outside their strip's box, Rest. Boxed and
// the PCG's Uint64 are small enough to be inlined where Draw is not, so a
// caller that draws for every packet can take them inline, on the PCG it
// gave NewNormal (link's Gaussian jitter: without the call, the pump at 1
// Gbps with σ 10 µs spends about three points less over its baseline,
// PERFORMANCE.md).
func (n *Normal) Draw() float64 {
	u := n.src.Uint64()
	if x, ok := Boxed(u); ok {
		return x
	}
	return n.Rest(u)
}

// Boxed is the variate of sample u and true when u lies inside its strip's
// box, as 97.3 % of samples do; otherwise false, and the variate is Rest's.
func Boxed(u uint64) (float64, bool) {
	j := int32(u)
	i := u >> 32 & 0x7F
	if abs32(j) < zigK[i] {
		return float64(j) * zigW[i], true
	}
	return 0, false
}

// Rest is the variate of sample u outside its strip's box: it hands u to
// NormFloat64, whose wedge and tail tests and any redraws are its own. It
// stays out of line, so that the common case is small where it is inlined.
//
//go:noinline
func (n *Normal) Rest(u uint64) float64 {
	n.replay.u, n.replay.pending = u, true
	return n.slow.NormFloat64()
}

// replay is a source that gives back one sample already drawn, then
// draws from src.
type replay struct {
	u       uint64
	pending bool
	src     *rand.PCG
}

func (r *replay) Uint64() uint64 {
	if r.pending {
		r.pending = false
		return r.u
	}
	return r.src.Uint64()
}

func abs32(j int32) uint32 {
	if j < 0 {
		return uint32(-j)
	}
	return uint32(j)
}

// The strips' boxes, read from the standard library's ziggurat itself
// (its tables are unexported): zigK[i] is the first |j| NormFloat64 does
// not accept at once in strip i, zigW[i] the strip's scale, the value it
// returns for j = 1. A sample that shows either is fed to NormFloat64
// through a source that says whether a second sample was asked for;
// after the first, that source gives zeros, which end any slow path.
// TestNormalMatchesStdlib holds Draw to NormFloat64 draw for draw.
var zigK, zigW = zigTables()

func zigTables() (k [128]uint32, w [128]float64) {
	var p probe
	r := rand.New(&p)
	fast := func(i uint64, j uint32) (float64, bool) {
		p.u, p.n = i<<32|uint64(j), 0
		x := r.NormFloat64()
		return x, p.n == 1
	}
	for i := range uint64(128) {
		x, ok := fast(i, 1)
		if !ok {
			continue // no box: every sample takes the slow path (k = 0)
		}
		w[i] = x
		lo, hi := uint32(1), uint32(math.MaxInt32)+1 // accepted at lo; find the first not
		if _, ok := fast(i, math.MaxInt32); ok {
			k[i] = hi
			continue
		}
		hi = math.MaxInt32
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if _, ok := fast(i, mid); ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		k[i] = hi
	}
	return k, w
}

// probe is zigTables' source: u first, then zeros, counting the draws.
type probe struct {
	u uint64
	n int
}

func (p *probe) Uint64() uint64 {
	p.n++
	if p.n == 1 {
		return p.u
	}
	return 0
}
