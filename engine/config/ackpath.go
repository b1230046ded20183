package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

// RcvPath is a flow's receive path beyond the TCP receiver itself: how
// data reaches the receiving stack and how its ACKs leave it (the WarpSIM
// paper, section 5.4). Each model is off unless configured.
type RcvPath struct {
	// Hold delays every data segment's arrival at the receiving stack by a
	// fixed interval (interrupt coalescing on a wired client); 0: off.
	Hold sim.Duration
	// AckHold holds pure ACKs while the flow saturates the path; nil: off.
	AckHold *AckHold
	// Grant sends ACKs only at the uplink's transmit opportunities; nil: off.
	Grant *AckGrant
}

// On reports whether any receive-path model is configured.
func (p RcvPath) On() bool { return p.Hold > 0 || p.AckHold != nil || p.Grant != nil }

// AckHold holds each pure ACK for a delay drawn from measured quantiles
// once the flow's arrival rate saturates the path, releasing held ACKs in
// order, so that long holds arrive at the sender as clumps.
type AckHold struct {
	// Quantiles of the hold at evenly spaced probabilities from 0 (the
	// minimum) to 1 (the maximum); a draw interpolates linearly between
	// them. At least two, non-decreasing.
	Quantiles []sim.Duration
	// Saturation is the fraction of the path's bottleneck rate at which the
	// flow counts as saturating it (default 0.9).
	Saturation float64
	// Window is the interval over which the arrival rate is measured
	// (default 10 ms).
	Window sim.Duration
}

// AckGrant is the uplink grant process of a handset or satellite terminal:
// ACKs wait until a grant, which releases up to PerGrant of them.
type AckGrant struct {
	Profile  string         // the profile the other fields started from ("" for none)
	Gap      []sim.Duration // quantiles of the gap between grants, as AckHold.Quantiles
	PerGrant uint32         // ACKs one grant releases at most
	Loss     float64        // probability that a released ACK is lost
	Filter   bool           // the CPE drops a queued ACK that a newer cumulative ACK makes redundant
	Slot     sim.Duration   // grants fall on multiples of the uplink slot; 0: no quantisation
}

// Default ACK-hold parameters.
const (
	DefaultAckHoldSaturation = 0.9
	DefaultAckHoldWindow     = 10 * sim.Millisecond
)

// AckProfiles are the built-in grant profiles, by name. They are
// representative values taken from the media's specifications and the
// measurement studies named in README's model table, not fits to one
// trace: a study that has its own measurements sets the fields it knows.
var AckProfiles = map[string]AckGrant{
	// LTE FDD: 1 ms TTI; while backlogged the UE is granted every few
	// TTIs on its buffer status reports, and a new burst waits for a
	// scheduling request (10 ms SR period, grant 4 ms later: 3GPP TS
	// 36.213 §8, TS 36.321 §5.4.4).
	"lte": {Gap: ms(1, 2, 4, 8, 14), PerGrant: 32, Loss: 0.001, Filter: false, Slot: sim.Millisecond},
	// 5G NR at 30 kHz subcarrier spacing: 0.5 ms slots, faster
	// scheduling-request cycles and larger grants (3GPP TS 38.213 §9.2.4,
	// TS 38.214 §6.1).
	"5g": {Gap: ms(0.5, 0.5, 1, 2, 5), PerGrant: 64, Loss: 0.0005, Slot: 500 * sim.Microsecond},
	// 802.11 Wi-Fi: the client's ACKs leave in its own contended TXOPs,
	// aggregated in an A-MPDU of up to 64 (802.11n/ac), on the 9 µs slot
	// grid of OFDM PHYs (IEEE 802.11-2020 §17.4.4).
	"wifi": {Gap: ms(0.1, 0.4, 1, 2.5, 8), PerGrant: 64, Loss: 0.001, Slot: 9 * sim.Microsecond},
	// LEO (Starlink-like) terminal: uplink TDMA frames of 1/750 s, one
	// grant per frame or a few, with CPE ACK filtering and a little ACK
	// loss on the radio link.
	"leo": {Gap: ms(1.333, 1.333, 2.667, 4, 13.333), PerGrant: 32, Loss: 0.002, Filter: true, Slot: 1333333 * sim.Picosecond},
}

// ms turns millisecond quantiles into durations (exact to the picosecond
// for the values the profiles use).
func ms(v ...float64) []sim.Duration {
	out := make([]sim.Duration, len(v))
	for i, x := range v {
		out[i] = sim.Duration(float64(x*1e3)+0.5) * sim.Microsecond // float64(): no FMA
	}
	return out
}

// profileNames lists AckProfiles' names in order, for messages.
func profileNames() string {
	names := make([]string, 0, len(AckProfiles))
	for n := range AckProfiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (c *collector) rcvPath(flow obj) RcvPath {
	var rp RcvPath
	if v, p, ok := flow.get("rcv_hold"); ok {
		rp.Hold, _ = c.duration(p, v)
	}
	if v, p, ok := flow.get("ack_hold"); ok {
		if o, ok := c.object(p, v, ackHoldShape); ok {
			rp.AckHold = c.ackHold(p, o)
		}
	}
	if v, p, ok := flow.get("ack_grant"); ok {
		if o, ok := c.object(p, v, ackGrantShape); ok {
			rp.Grant = c.ackGrant(p, o)
		}
	}
	return rp
}

func (c *collector) ackHold(path string, o obj) *AckHold {
	h := &AckHold{Saturation: DefaultAckHoldSaturation, Window: DefaultAckHoldWindow}
	if v, p, ok := o.get("quantiles"); ok {
		h.Quantiles = c.quantiles(p, v)
	} else {
		c.add(path+".quantiles", "missing; give the hold's quantiles, e.g. [\"0ms\", \"1ms\", \"2ms\", \"5ms\", \"20ms\"]")
	}
	if v, p, ok := o.get("saturation"); ok {
		if x, ok := c.prob(p, v); ok {
			if x == 0 {
				c.add(p, "must be above 0 (a fraction of the path's bottleneck rate)")
			}
			h.Saturation = x
		}
	}
	if v, p, ok := o.get("window"); ok {
		if d, ok := c.duration(p, v); ok {
			if d == 0 {
				c.add(p, "must be positive")
			}
			h.Window = d
		}
	}
	return h
}

func (c *collector) ackGrant(path string, o obj) *AckGrant {
	g := &AckGrant{}
	v, p, ok := o.get("profile")
	if ok {
		if name, ok := c.str(p, v); ok {
			prof, known := AckProfiles[name]
			if !known {
				c.add(p, "unknown profile %q; known: %s", name, profileNames())
			}
			*g = prof
			g.Gap = slices.Clone(prof.Gap)
			g.Profile = name
		}
	}
	if v, p, ok := o.get("gap"); ok {
		g.Gap = c.quantiles(p, v)
	} else if g.Profile == "" {
		c.add(path+".gap", "missing; give a profile (%s) or the gap quantiles", profileNames())
	}
	if v, p, ok := o.get("per_grant"); ok {
		if n, ok := c.countIn(p, v, 1, 1<<20); ok {
			g.PerGrant = uint32(n)
		}
	} else if g.Profile == "" {
		c.add(path+".per_grant", "missing; how many ACKs one grant releases")
	}
	if v, p, ok := o.get("loss"); ok {
		g.Loss, _ = c.prob(p, v)
	}
	if v, p, ok := o.get("filter"); ok {
		g.Filter, _ = c.boolean(p, v)
	}
	if v, p, ok := o.get("slot"); ok {
		g.Slot, _ = c.duration(p, v)
	}
	return g
}

// quantiles decodes a list of at least two non-decreasing durations.
func (c *collector) quantiles(path string, v any) []sim.Duration {
	list, ok := v.([]any)
	if !ok {
		c.add(path, "%s is not a list; give at least two durations, smallest first", describe(v))
		return nil
	}
	if len(list) < 2 {
		c.add(path, "has %d values; give at least two (the minimum and the maximum)", len(list))
		return nil
	}
	q := make([]sim.Duration, len(list))
	for i, x := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		d, ok := c.duration(p, x)
		if !ok {
			return nil
		}
		if i > 0 && d < q[i-1] {
			c.add(p, "%v is below the previous quantile %v; quantiles must not decrease", d, q[i-1])
			return nil
		}
		q[i] = d
	}
	return q
}
