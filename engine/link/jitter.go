package link

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
)

// jitterModel draws the extra delay of each packet on a direction, from the
// direction's own stream ("link/<id>/<dir>/jitter"). The deterministic kinds
// (burst, lte_subframe, 5g_nr) draw nothing.
//
// It runs once per packet, so what depends only on the parameters is worked
// out once, when the model is made.
type jitterModel struct {
	c       config.Jitter
	src     *rand.PCG // the stream rng and norm draw from
	rng     *rand.Rand
	norm    *rng.Normal
	reorder bool // packets keep their own delivery times (reorders())
	// redrawn: a Gaussian truncated by redrawing (the default clamp), which
	// Dir.jitter draws itself.
	redrawn bool
	// gaussian, wifi_txop: σ in ps.
	sigma float64
	// uniform: the number of values in [Min, Max].
	span int64
	// pareto: the exponent −1/Shape, x_m, and whether it is −½ (Shape 2).
	exp      float64
	scale    float64
	halfRoot bool
	// wifi_txop: the TXOP being filled and how many packets it holds.
	txop   sim.Time
	inTxop int64
	// reorder: ln(1 − P), and the packets left until the next held one.
	logKeep float64
	toHeld  int64
}

// newJitterModel makes the model of c, drawing from src. Its normal draws
// (rng.Normal) and the rest (rand.Rand) take turns on the one generator,
// in the order of one rand.Rand's.
func newJitterModel(c config.Jitter, src *rand.PCG) *jitterModel {
	if c.Kind == config.NoJitter {
		return nil
	}
	j := &jitterModel{c: c, reorder: c.Order == config.OrderReorder || c.Kind == config.Reorder,
		redrawn: c.Kind == config.Gaussian && c.Clamp == config.ClampRedraw, sigma: float64(c.Sigma)}
	if src != nil {
		j.src, j.rng, j.norm = src, rand.New(src), rng.NewNormal(src)
	}
	switch c.Kind {
	case config.Uniform:
		j.span = int64(c.Max-c.Min) + 1
	case config.Pareto:
		j.exp = float64(-1 / c.Shape)
		j.scale = float64(c.Scale)
		j.halfRoot = j.exp == -0.5
	case config.Reorder:
		j.logKeep = math.Log1p(-c.P)
		j.toHeld = j.heldGap()
	}
	return j
}

// heldGap draws how many packets from the last held one (or the model's
// start) the next held one is (geometricGap).
func (j *jitterModel) heldGap() int64 { return geometricGap(j.rng, j.c.P, j.logKeep) }

// geometricGap draws how many packets from the last chosen one the next is,
// when each is chosen independently with probability p: geometric on 1, 2,
// … by inversion, 1 + ⌊ln U / ln(1 − p)⌋ with U in (0, 1], logKeep being
// ln(1 − p). Choosing the first packet whose countdown ends is the same
// process as a draw per packet, with one draw per chosen packet instead.
func geometricGap(r *rand.Rand, p, logKeep float64) int64 {
	switch {
	case p >= 1:
		return 1
	case p <= 0:
		return math.MaxInt64
	}
	g := math.Floor(math.Log(1-r.Float64()) / logKeep)
	if g >= math.MaxInt64/2 {
		return math.MaxInt64
	}
	return 1 + int64(g)
}

// reorders reports whether packets keep their own delivery times.
func (j *jitterModel) reorders() bool { return j.reorder }

// extra returns the extra delay of a packet whose nominal arrival (departure
// plus propagation delay) is at; delay is the propagation delay. at + extra
// is never before at − delay, the packet's departure.
func (j *jitterModel) extra(at sim.Time, delay sim.Duration) sim.Duration {
	c := &j.c
	switch c.Kind {
	case config.Gaussian:
		switch c.Clamp {
		case config.ClampZero:
			return max(0, roundPs(float64(j.norm.Draw()*j.sigma)))
		case config.ClampTotal:
			return max(-delay, roundPs(float64(j.norm.Draw()*j.sigma)))
		}
		// Truncated by redrawing, so the one-way delay never goes below zero.
		for {
			x := roundPs(float64(j.norm.Draw() * j.sigma))
			if delay+x >= 0 {
				return x
			}
		}
	case config.Uniform:
		return c.Min + sim.Duration(j.rng.Int64N(j.span))
	case config.Pareto:
		// Inverse CDF of Pareto type I: x_m·U^(−1/α) with U in (0, 1].
		// math.Pow(u, −½) is 1/math.Sqrt(u), after the special cases that u
		// in (0, 1] never meets: Shape 2 skips them, bit for bit.
		u := 1 - j.rng.Float64()
		var x float64
		if j.halfRoot {
			x = j.scale * (1 / math.Sqrt(u))
		} else {
			x = j.scale * math.Pow(u, j.exp)
		}
		if c.Cap > 0 && x > float64(c.Cap) {
			return c.Cap
		}
		if x > float64(math.MaxInt64/4) {
			x = float64(math.MaxInt64 / 4)
		}
		return roundPs(float64(x))
	case config.Burst:
		if sim.Duration(int64(at)%int64(c.Period)) < c.Length {
			return c.Extra
		}
		return 0
	case config.WiFiTXOP:
		// 802.11 contention as burst-and-gap: the station wins the medium
		// once per Interval and its TXOP carries up to BurstSize frames; a
		// frame waits for the first TXOP at or after its arrival with room,
		// and lands within the burst |N(0, σ)| after the TXOP starts.
		t := ceilTo(at, c.Interval)
		if t < j.txop {
			t = j.txop
		}
		if t == j.txop && j.inTxop >= c.BurstSize {
			t += sim.Time(c.Interval)
		}
		if t != j.txop {
			j.txop, j.inTxop = t, 0
		}
		j.inTxop++
		spread := sim.Duration(0)
		if c.Sigma > 0 {
			spread = roundPs(float64(math.Abs(j.norm.Draw()) * j.sigma))
		}
		return t.Sub(at) + spread
	case config.LTESubframe, config.NR5G:
		return ceilTo(at, c.Period).Sub(at)
	case config.Reorder:
		// A fraction P waits Delay and the packets behind it overtake it
		// (netem's reorder mirrored: there a fraction P goes early).
		if j.toHeld--; j.toHeld > 0 {
			return 0
		}
		j.toHeld = j.heldGap()
		return c.Delay
	}
	return 0
}

// roundPs is sim.Duration(math.Round(x)), half away from zero, in fewer
// instructions and without a branch on the draw, for the draws of every
// packet: the conversion truncates toward zero, x minus its truncation (the
// fraction of a float) is exact, and so is twice it, which truncates to 1
// from ½ up, to −1 from −½ down and to 0 between. Beyond 2^52 every float
// is whole, so math.Round would return x itself, and the conversion is all
// there is to do (for values it cannot hold and NaN too). Without a call it
// is small enough to be inlined. Callers convert the product they pass
// explicitly, so that it cannot fuse with the subtraction.
func roundPs(x float64) sim.Duration {
	r := sim.Duration(x)
	if math.Abs(x) < 1<<52 {
		r += sim.Duration(2 * (x - float64(r)))
	}
	return r
}

// ceilTo rounds t up to a multiple of q.
func ceilTo(t sim.Time, q sim.Duration) sim.Time {
	r := int64(t) % int64(q)
	if r == 0 {
		return t
	}
	return t + sim.Time(int64(q)-r)
}
