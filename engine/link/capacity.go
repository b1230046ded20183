package link

import (
	"math"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// capacityModel is a dwell process on the service rate. It is evaluated
// lazily: the direction asks for the rate when it starts serialising a
// packet, and the process first catches up to that instant. Its draws are
// consumed in simulated-time order whatever the traffic, so the rate at any
// instant depends only on the seed, and the process costs no events.
type capacityModel struct {
	c     config.Capacity
	rng   *rand.Rand // states: "link/<id>/<dir>/capacity"
	dips  *rand.Rand // dips: "link/<id>/<dir>/capacity/dips"
	state int
	until sim.Time // end of the current dwell
	// Dips: the current or next dip is [dipAt, dipEnd).
	dipAt, dipEnd sim.Time
}

func newCapacityModel(c *config.Capacity, now sim.Time, rng, dips *rand.Rand) *capacityModel {
	if c == nil {
		return nil
	}
	m := &capacityModel{c: *c, rng: rng, dips: dips}
	m.until = now.Add(m.expo(m.rng, c.States[0].Dwell))
	if c.Dips != nil {
		m.dipAt = now.Add(m.expo(m.dips, c.Dips.Every))
		m.dipEnd = m.dipAt.Add(m.dipLength())
	}
	return m
}

// expo draws an exponential time of the given mean, at least 1 ps.
func (m *capacityModel) expo(r *rand.Rand, mean sim.Duration) sim.Duration {
	return max(1, sim.Duration(math.Round(r.ExpFloat64()*float64(mean))))
}

func (m *capacityModel) dipLength() sim.Duration {
	d := m.c.Dips
	u := 1 - m.dips.Float64()
	x := float64(d.Scale) * math.Pow(u, float64(-1/d.Shape))
	if d.Cap > 0 && x > float64(d.Cap) {
		return d.Cap
	}
	return max(1, sim.Duration(math.Min(x, float64(1e6*sim.Second))))
}

// rate is the service rate at now; busySince is when the direction last
// started serving after being idle (for the grant ramp).
func (m *capacityModel) rate(now, busySince sim.Time) units.BitRate {
	for m.until <= now {
		m.state = m.next(m.state)
		m.until = m.until.Add(m.expo(m.rng, m.c.States[m.state].Dwell))
	}
	r := m.c.States[m.state].Rate
	if d := m.c.Dips; d != nil {
		for m.dipEnd <= now {
			m.dipAt = m.dipEnd.Add(m.expo(m.dips, d.Every))
			m.dipEnd = m.dipAt.Add(m.dipLength())
		}
		if now >= m.dipAt {
			r = scaleRate(r, d.Depth)
		}
	}
	if g := m.c.Grant; g != nil && now.Sub(busySince) < g.Ramp {
		frac := float64(now.Sub(busySince)) / float64(g.Ramp)
		f := g.Start + float64((1-g.Start)*frac)
		r = scaleRate(r, f)
	}
	return r
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
