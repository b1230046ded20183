// Package leopath generates the scheduled changes of a LEO satellite path
// for one link of a scenario: a Starlink-like reassignment every 15 s that
// steps the RTT and the bandwidth, an optional hard-handover outage at each
// reassignment, optional non-congestive loss, and an optional announcement
// of each reassignment ahead of time (for SaTCP). It draws from its own
// named random stream, so a seed gives the same schedule on any machine;
// it can also replay a measured per-interval trace (ParseTrace, Replay).
//
// The generator owns the link's propagation delay (both directions, half
// the RTT each), the rate of its data direction (ab) and the loss of both
// directions; the ACK direction's rate stays as configured.
//
// A hard handover is a scheduled outage (changes[i].outage) of both
// directions at the reassignment, carried by the same changes that set the
// new interval's values: while the terminal re-associates the serialisers
// start nothing and arrivals queue (or drop, with the direction's
// drop_on_outage), and the new satellite's delay and rate hold from then.
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
	Outage   *sim.Duration // the direction goes down at At for this long
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

// Params describe the synthetic path. Start from Default: a zero Period,
// RTT or rate is refused, not taken as "use the default". Zero Offset,
// Outage and LossP and a nil Announce mean none.
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

// Validate checks p, naming the parameter at fault.
func (p Params) Validate() error {
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
	// Offset and Outage are parts of a period: a bad period is its own
	// error, not theirs.
	inPeriod := func(field string, d sim.Duration) {
		if d < 0 || p.Period > 0 && d >= p.Period {
			bad(field, "%v is outside [0, period %v)", d, p.Period)
		}
	}
	inPeriod("offset", p.Offset)
	// The draw takes steps of drawStep: a range narrower than one but not
	// empty would give its minimum every time, unsaid.
	switch {
	case p.RTTMin <= 0 || p.RTTMax < p.RTTMin:
		bad("rtt", "range %v–%v must be positive and ordered", p.RTTMin, p.RTTMax)
	case p.RTTMax > p.RTTMin && p.RTTMax-p.RTTMin < rttStep:
		bad("rtt", "range %v–%v is narrower than the %v step RTTs are drawn in; widen it, or give one RTT", p.RTTMin, p.RTTMax, rttStep)
	}
	switch {
	case p.RateMin <= 0 || p.RateMax < p.RateMin:
		bad("rate", "range %v–%v must be positive and ordered", p.RateMin, p.RateMax)
	case p.RateMax > p.RateMin && p.RateMax-p.RateMin < rateStep:
		bad("rate", "range %v–%v is narrower than the %v step rates are drawn in; widen it, or give one rate", p.RateMin, p.RateMax, rateStep)
	}
	inPeriod("outage", p.Outage)
	if !(p.LossP >= 0 && p.LossP < 1) {
		bad("loss", "%v is not a probability in [0, 1)", p.LossP)
	}
	if p.Announce != nil && *p.Announce < 0 {
		bad("announce", "%v is negative", *p.Announce)
	}
	if len(errs) == 0 {
		if n := p.intervalCount(); n > MaxIntervals {
			bad("period", "%v over a duration of %v makes %d intervals, more than the %d a path may have; lengthen the period or shorten the duration",
				p.Period, p.Duration, n, MaxIntervals)
		}
	}
	return errors.Join(errs...)
}

// The steps intervals' RTTs and rates are drawn in, from their minimum.
const (
	rttStep  = 100 * sim.Microsecond
	rateStep = units.BitRate(1_000_000)
)

// MaxIntervals bounds the intervals of a path, drawn or replayed (two
// changes each): 41 h of Starlink's 15 s schedule, 2.7 h of one reassignment
// a second. A path is a list of scheduled changes held whole in memory and
// written into a scenario, so a microsecond period over seconds would make
// hundreds of MB of JSON and several GB to build it; Validate refuses it
// before anything is drawn.
const MaxIntervals = 10_000

// intervalCount is how many intervals Intervals draws from a valid p: the
// first at 0 and one at each Offset + k·Period before Duration, counting
// one at 0 once.
func (p Params) intervalCount() int64 {
	if p.Offset >= p.Duration {
		return 1
	}
	n := 1 + int64((p.Duration-1-p.Offset)/p.Period) + 1
	if p.Offset == 0 {
		n-- // the reassignment at 0 is the first interval
	}
	return n
}

// Intervals draws the synthetic path's intervals: one at 0 and one at each
// reassignment before Duration. Each draws its RTT, then its rate, from the
// stream "leopath" of the seed.
func (p Params) Intervals() ([]Interval, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := rng.Stream(p.Seed, "leopath")
	draw := func(at sim.Duration) Interval {
		rtt := p.RTTMin + sim.Duration(r.Int64N(int64((p.RTTMax-p.RTTMin)/rttStep)+1))*rttStep
		rate := p.RateMin + units.BitRate(r.Int64N(int64((p.RateMax-p.RateMin)/rateStep)+1))*rateStep
		return Interval{At: at, RTT: min(rtt, p.RTTMax), Rate: min(rate, p.RateMax), LossP: p.LossP}
	}
	n := int(p.intervalCount())
	out := make([]Interval, 0, n)
	out = append(out, draw(0))
	at := p.Offset
	if at == 0 {
		at = p.Period // the first interval already starts at 0
	}
	for len(out) < n {
		out = append(out, draw(at))
		at += p.Period
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

// Changes turns intervals into link changes, two per interval (ab, then
// ba). The first interval (at 0) sets the link's starting values. At every
// later one both directions also go down for outage (if positive), and
// announce, if set, rides on the ab change.
func Changes(iv []Interval, outage sim.Duration, announce *sim.Duration) []Change {
	var out []Change
	for i, v := range iv {
		ab := Change{At: v.At, Dir: "ab", Rate: ptr(v.Rate), Delay: ptr(v.RTT / 2), LossP: ptr(v.LossP)}
		ba := Change{At: v.At, Dir: "ba", Delay: ptr(v.RTT - v.RTT/2), LossP: ptr(0.0)}
		if !(i == 0 && v.At == 0) { // the starting values are no handover
			ab.Announce = announce
			if outage > 0 {
				ab.Outage, ba.Outage = ptr(outage), ptr(outage)
			}
		}
		out = append(out, ab, ba)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
