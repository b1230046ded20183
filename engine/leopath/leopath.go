// Package leopath generates the scheduled changes of a LEO satellite path
// for one link of a scenario: a Starlink-like reassignment every 15 s that
// steps the RTT and the bandwidth, an optional hard-handover outage at each
// reassignment, optional non-congestive loss, and an optional announcement
// of each reassignment ahead of time (for SaTCP). It draws from its own
// named random stream, so a seed gives the same schedule on any machine;
// it can also replay a measured per-interval trace (ParseTrace).
//
// The generator owns the link's propagation delay (both directions, half
// the RTT each), the rate of its data direction (ab) and the loss of both
// directions; the ACK direction's rate stays as configured.
//
// Outages: links have no outage primitive on main yet, so a hard handover
// is emitted as loss probability 1 on both directions for its length,
// followed by the next interval's values. Packets serialised into the
// outage are lost rather than held, as a link that drops everything while
// the terminal re-associates; the queue in front keeps draining at the old
// rate.
package leopath

import (
	"errors"
	"fmt"

	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Change is one scheduled change of the link, as a scenario's changes[i]
// takes it. Nil fields are left as they were.
type Change struct {
	At       sim.Duration
	Dir      string // "ab" or "ba"
	Rate     *units.BitRate
	Delay    *sim.Duration
	LossP    *float64      // a Bernoulli loss probability; 0 clears loss
	Announce *sim.Duration // lead of the link layer's prediction (SaTCP)
}

// Interval is one period of the path: from At on, the link has this
// round-trip propagation delay, data-direction rate and loss.
type Interval struct {
	At    sim.Duration
	RTT   sim.Duration
	Rate  units.BitRate
	LossP float64
}

// Params describe the synthetic path. Zero fields take Default's values
// (Offset only along with Period: an explicit period keeps offset 0),
// except Outage, LossP and Announce, whose zero means "none".
type Params struct {
	Seed     uint64
	Duration sim.Duration // changes are emitted before this time; required

	// Period and Offset place the reassignments at Offset + k·Period.
	// Starlink reassigns on a global 15 s schedule 12 s into each period
	// (the schedule LeoCC's module assumes); the path's first interval
	// runs from 0 to Offset.
	Period, Offset sim.Duration
	// RTTMin and RTTMax bound the round trip the link contributes in an
	// interval; each interval draws uniformly at 100 us resolution.
	RTTMin, RTTMax sim.Duration
	// RateMin and RateMax bound the data direction's rate in an interval;
	// each interval draws uniformly at 1 Mbps resolution.
	RateMin, RateMax units.BitRate
	// Outage is the hard-handover outage at each reassignment.
	Outage sim.Duration
	// LossP is the non-congestive Bernoulli loss of the data direction
	// outside outages.
	LossP float64
	// Announce, when set, attaches this lead to each reassignment's first
	// change, so flows crossing the link hear of it that long before.
	Announce *sim.Duration
}

// Default returns the defaults: the Starlink schedule (15 s, 12 s), RTT
// 25–60 ms and rate 50–200 Mbps. The ranges are illustrative, chosen to
// span what published Starlink measurements report, not fitted to a trace.
func Default() Params {
	return Params{
		Period: 15 * sim.Second, Offset: 12 * sim.Second,
		RTTMin: 25 * sim.Millisecond, RTTMax: 60 * sim.Millisecond,
		RateMin: 50_000_000, RateMax: 200_000_000,
	}
}

// withDefaults fills zero fields from Default.
func (p Params) withDefaults() Params {
	d := Default()
	if p.Period == 0 { // no schedule given: Starlink's
		p.Period = d.Period
		if p.Offset == 0 {
			p.Offset = d.Offset
		}
	}
	if p.RTTMin == 0 && p.RTTMax == 0 {
		p.RTTMin, p.RTTMax = d.RTTMin, d.RTTMax
	}
	if p.RateMin == 0 && p.RateMax == 0 {
		p.RateMin, p.RateMax = d.RateMin, d.RateMax
	}
	return p
}

// Validate checks p after defaults, naming the parameter at fault.
func (p Params) Validate() error {
	p = p.withDefaults()
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("leopath: %s: %s", field, fmt.Sprintf(format, a...)))
	}
	if p.Duration <= 0 {
		bad("duration", "%v is not positive; how long the path runs", p.Duration)
	}
	if p.Period <= 0 {
		bad("period", "%v is not positive", p.Period)
	}
	if p.Offset < 0 || p.Offset >= p.Period {
		bad("offset", "%v is outside [0, period %v)", p.Offset, p.Period)
	}
	if p.RTTMin <= 0 || p.RTTMax < p.RTTMin {
		bad("rtt", "range %v–%v must be positive and ordered", p.RTTMin, p.RTTMax)
	}
	if p.RateMin <= 0 || p.RateMax < p.RateMin {
		bad("rate", "range %v–%v must be positive and ordered", p.RateMin, p.RateMax)
	}
	if p.Outage < 0 || p.Outage >= p.Period {
		bad("outage", "%v is outside [0, period %v)", p.Outage, p.Period)
	}
	if !(p.LossP >= 0 && p.LossP < 1) {
		bad("loss", "%v is not a probability in [0, 1)", p.LossP)
	}
	if p.Announce != nil && *p.Announce < 0 {
		bad("announce", "%v is negative", *p.Announce)
	}
	return errors.Join(errs...)
}

// Intervals draws the synthetic path's intervals: one at 0 and one at each
// reassignment before Duration. Each draws its RTT, then its rate, from the
// stream "leopath" of the seed.
func (p Params) Intervals() ([]Interval, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.withDefaults()
	r := rng.Stream(p.Seed, "leopath")
	const rttStep, rateStep = 100 * sim.Microsecond, units.BitRate(1_000_000)
	draw := func(at sim.Duration) Interval {
		rtt := p.RTTMin + sim.Duration(r.Int64N(int64((p.RTTMax-p.RTTMin)/rttStep)+1))*rttStep
		rate := p.RateMin + units.BitRate(r.Int64N(int64((p.RateMax-p.RateMin)/rateStep)+1))*rateStep
		return Interval{At: at, RTT: min(rtt, p.RTTMax), Rate: min(rate, p.RateMax), LossP: p.LossP}
	}
	out := []Interval{draw(0)}
	for at := p.Offset; at < p.Duration; at += p.Period {
		if at == 0 {
			continue // the first interval already starts at 0
		}
		out = append(out, draw(at))
	}
	return out, nil
}

// Generate draws the synthetic path and returns its changes.
func Generate(p Params) ([]Change, error) {
	iv, err := p.Intervals()
	if err != nil {
		return nil, err
	}
	return Changes(iv, p.Outage, p.Announce), nil
}

// Changes turns intervals into link changes. The first interval (at 0)
// sets the link's starting values. At every later one, with an outage the
// link first drops everything in both directions for outage, then takes
// the interval's values; announce, if set, rides on the first change of
// each reassignment.
func Changes(iv []Interval, outage sim.Duration, announce *sim.Duration) []Change {
	var out []Change
	for i, v := range iv {
		at := v.At
		lead := announce
		if i == 0 && at == 0 {
			lead = nil // the starting values are no handover
		}
		if outage > 0 && !(i == 0 && at == 0) {
			out = append(out,
				Change{At: at, Dir: "ab", LossP: ptr(1.0), Announce: lead},
				Change{At: at, Dir: "ba", LossP: ptr(1.0)})
			at += outage
			lead = nil
		}
		half := v.RTT / 2
		out = append(out,
			Change{At: at, Dir: "ab", Rate: ptr(v.Rate), Delay: ptr(half), LossP: ptr(v.LossP), Announce: lead},
			Change{At: at, Dir: "ba", Delay: ptr(v.RTT - half), LossP: ptr(0.0)})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
