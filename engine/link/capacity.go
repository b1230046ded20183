package link

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// capacityModel is a dwell process on the service rate. It is evaluated
// lazily: the direction asks when a packet it starts serialising will have
// left (finish), and the process catches up to that instant. Its draws are
// consumed in simulated-time order whatever the traffic, so the rate at any
// instant depends only on the seed, and the process costs no events.
type capacityModel struct {
	c       config.Capacity
	rngSrc  *rand.PCG  // states: "link/<id>/<dir>/capacity"
	rng     *rand.Rand // over rngSrc
	dipsSrc *rand.PCG  // dips: "link/<id>/<dir>/capacity/dips"
	dips    *rand.Rand // over dipsSrc
	state   int
	until   sim.Time // end of the current dwell
	// Dips: the current or next dip is [dipAt, dipEnd).
	dipAt, dipEnd sim.Time
}

func newCapacityModel(c *config.Capacity, now sim.Time, states, dips *rand.PCG) *capacityModel {
	if c == nil {
		return nil
	}
	m := &capacityModel{c: *c, rngSrc: states, rng: rand.New(states), dipsSrc: dips, dips: rand.New(dips)}
	m.until = now.Add(m.expo(m.rng, c.States[0].Dwell))
	if c.Dips != nil {
		m.dipAt = now.Add(m.expo(m.dips, c.Dips.Every))
		m.dipEnd = m.dipAt.Add(m.dipLength())
	}
	return m
}

// expo draws an exponential time of the given mean, at least 1 ps and at
// most sim.MaxDuration, the longest run: a longer dwell outlasts any run
// just the same, and would overflow a Time.
func (m *capacityModel) expo(r *rand.Rand, mean sim.Duration) sim.Duration {
	return max(1, sim.Duration(math.Min(math.Round(r.ExpFloat64()*float64(mean)), float64(sim.MaxDuration))))
}

func (m *capacityModel) dipLength() sim.Duration {
	d := m.c.Dips
	u := 1 - m.dips.Float64()
	x := float64(d.Scale) * math.Pow(u, float64(-1/d.Shape))
	if d.Cap > 0 && x > float64(d.Cap) {
		return d.Cap
	}
	return max(1, sim.Duration(math.Min(x, float64(sim.MaxDuration))))
}

// finish is when a packet of n bytes that starts serialising at now has
// left. Its bits go at the rate of each instant, as a fluid server's: when
// the state changes or a dip starts or ends under the packet, the bits
// still to go take the new rate, so a packet that starts in a dip leaves
// at the pace of the full rate once the dip is over; and while the grant
// ramp rises (the direction busy since busySince), the rate rises with it
// under the packet. The process itself advances to now only: a packet that
// a change comes under walks a copy of it, so that the link log (linkLog)
// sees each change as time reaches it.
func (m *capacityModel) finish(now, busySince sim.Time, n units.Bytes) sim.Time {
	m.advance(now)
	ramp := busySince // the ramp rises until ramp; none if it is past
	if g := m.c.Grant; g != nil {
		ramp = busySince.Add(g.Ramp)
	}
	// The bits to go, in bit-picoseconds per second (bits × 10^12), so a
	// rate in bps serves r of them per ps: exact, and well within 64 bits
	// for any packet (1.15 MB would reach them).
	left := uint64(n) * 8 * uint64(sim.Second)
	if t, done := m.serve(now, &left, busySince, ramp); done {
		return t // the common case: nothing changes under the packet
	}
	c := m.copy()
	t := now
	for {
		t = c.nextChange(t)
		c.advance(t)
		if end, done := c.serve(t, &left, busySince, ramp); done {
			return end
		}
	}
}

// serve takes what the rate from t, held until the next change of the
// process, serves of the bits left: the end of the packet if it ends by
// that change (done), else the bits still to go then. Before ramp the grant
// ramp scales the rate (ramped). The process must stand at t.
func (m *capacityModel) serve(t sim.Time, left *uint64, busySince, ramp sim.Time) (sim.Time, bool) {
	r := uint64(m.rateAt(t))
	span := m.nextChange(t).Sub(t)
	if t < ramp {
		rising := min(span, ramp.Sub(t))
		if end, done := m.ramped(t, left, r, busySince, rising); done {
			return end, true
		}
		if rising == span {
			return 0, false
		}
		t, span = ramp, span-rising // the rest of the span at the full rate
	}
	need := (*left + r - 1) / r // ps at r: units.TxTime, while nothing changes
	if need <= uint64(span) {
		return t.Add(sim.Duration(need)), true
	}
	*left -= r * uint64(span) // less than left, as need > span
	return 0, false
}

// ramped serves the bits left from t for up to span ps at the rate r times
// the grant ramp's factor, start + (1 − start)·(u − busySince)/ramp at
// instant u: a rate rising linearly, which serves r·(g·x + k·x²/2) in x ps
// from a factor g rising by k per ps. The packet ends where that reaches
// the bits left, the root of a quadratic, taken in the form that stays
// exact when g is 0 (a ramp from nothing) or k is (start 1); rounded up to
// the picosecond, as the constant rate's time is. Each product is rounded
// on its own (float64), so no CPU fuses it into an FMA.
func (m *capacityModel) ramped(t sim.Time, left *uint64, r uint64, busySince sim.Time, span sim.Duration) (sim.Time, bool) {
	gr := m.c.Grant
	k := (1 - gr.Start) / float64(gr.Ramp)
	g := gr.Start + float64(k*float64(t.Sub(busySince)))
	l := float64(*left) / float64(r) // ps the bits take at the full rate
	x := float64(span)
	if served := float64(g*x) + float64(k*x*x/2); served < l {
		*left -= min(*left-1, uint64(served*float64(r)))
		return 0, false
	}
	return t.Add(sim.Duration(math.Ceil(2 * l / (g + math.Sqrt(float64(g*g)+float64(2*k*l)))))), true
}

// copy is the process as it stands, drawing from copies of its streams: it
// can be stepped ahead and leave this one where it is.
func (m *capacityModel) copy() *capacityModel {
	c := *m
	states := *m.rngSrc
	c.rngSrc, c.rng = &states, rand.New(&states)
	if m.dipsSrc != nil {
		dips := *m.dipsSrc
		c.dipsSrc, c.dips = &dips, rand.New(&dips)
	}
	return &c
}

// advance steps the process to t: the state, and the dip current or next,
// in force at t.
func (m *capacityModel) advance(t sim.Time) {
	for m.until <= t {
		m.state = m.next(m.state)
		m.until = m.until.Add(m.expo(m.rng, m.c.States[m.state].Dwell))
	}
	if d := m.c.Dips; d != nil {
		for m.dipEnd <= t {
			m.dipAt = m.dipEnd.Add(m.expo(m.dips, d.Every))
			m.dipEnd = m.dipAt.Add(m.dipLength())
		}
	}
}

// rateAt is the rate at t, the process advanced to t: the state's, and in
// a dip depth × that. The grant ramp, which follows the traffic, is the
// direction's (ramped).
func (m *capacityModel) rateAt(t sim.Time) units.BitRate {
	r := m.c.States[m.state].Rate
	if m.c.Dips != nil && t >= m.dipAt {
		r = scaleRate(r, m.c.Dips.Depth)
	}
	return r
}

// nextChange is the first instant after t at which the rate changes (but
// for the grant ramp), the process advanced to t.
func (m *capacityModel) nextChange(t sim.Time) sim.Time {
	c := m.until
	if m.c.Dips != nil {
		if t < m.dipAt {
			c = min(c, m.dipAt)
		} else {
			c = min(c, m.dipEnd)
		}
	}
	return c
}

// next draws the state after i from row i of the transition matrix.
func (m *capacityModel) next(i int) int {
	u := m.rng.Float64()
	row := m.c.Transitions[i]
	for j, p := range row {
		if u < p {
			return j
		}
		u -= p
	}
	return len(row) - 1
}

// scaleRate is r·f, at least 1 bps.
func scaleRate(r units.BitRate, f float64) units.BitRate {
	return max(1, units.BitRate(math.Round(float64(r)*f)))
}
