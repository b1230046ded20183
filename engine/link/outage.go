package link

import (
	"slices"
	"sort"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// window is an outage [at, end).
type window struct{ at, end sim.Time }

// outages says when a direction is down: sorted, merged windows from the
// scenario and from actions, and an optional periodic form. It draws
// nothing and costs no events: the serialiser asks when it would start.
//
// The serialiser asks once or twice per packet, so it remembers a span it
// found free of outages, [upFrom, upTo): a query inside it is answered by
// two comparisons rather than a search and a division. add forgets it.
type outages struct {
	win                   []window
	start, every, periodD sim.Duration
	drop                  bool
	upFrom, upTo          sim.Time // empty when upTo <= upFrom
}

func newOutages(c *config.Outages) *outages {
	if c == nil {
		return nil
	}
	o := &outages{start: c.Start, every: c.Every, periodD: c.Duration, drop: c.DropOnOutage}
	for _, w := range c.Windows {
		o.add(sim.Time(w.At), w.Duration)
	}
	return o
}

// add adds a window, merging it with those it overlaps.
func (o *outages) add(at sim.Time, d sim.Duration) {
	w := window{at, at.Add(d)}
	i := sort.Search(len(o.win), func(k int) bool { return o.win[k].end >= w.at })
	j := i
	for j < len(o.win) && o.win[j].at <= w.end {
		w.at, w.end = min(w.at, o.win[j].at), max(w.end, o.win[j].end)
		j++
	}
	o.win = slices.Replace(o.win, i, j, w)
	o.upFrom, o.upTo = 0, 0
}

// up reports whether t lies in the span last found free of outages: two
// comparisons, inlined where the serialiser asks per packet. false means
// only that downUntil must look.
func (o *outages) up(t sim.Time) bool { return t >= o.upFrom && t < o.upTo }

// downUntil reports whether the direction is down at t, and until when.
func (o *outages) downUntil(t sim.Time) (sim.Time, bool) {
	if o.up(t) {
		return 0, false
	}
	end, down := sim.Time(0), false
	i := sort.Search(len(o.win), func(k int) bool { return o.win[k].end > t })
	if i < len(o.win) && o.win[i].at <= t {
		end, down = o.win[i].end, true
	}
	// next is the start of the first periodic window after t, when t is
	// past the current one's end.
	next := sim.Never
	if o.every > 0 {
		if t >= sim.Time(o.start) {
			ws := sim.Time(o.start).Add((t.Sub(sim.Time(o.start)) / o.every) * o.every)
			if e := ws.Add(o.periodD); t < e && e > end {
				end, down = e, true
			}
			next = ws.Add(o.every)
		} else {
			next = sim.Time(o.start)
		}
	}
	if !down {
		// Up until the next window of either kind starts: the first listed
		// window at or after i (none before it ends after t) and next.
		if i < len(o.win) {
			next = min(next, o.win[i].at)
		}
		o.upFrom, o.upTo = t, next
	}
	return end, down
}

// nextChange is the first instant after t at which the direction goes down
// or comes back up, as the windows known now have it (an end where another
// window goes on is one too: the link log writes only what changed).
func (o *outages) nextChange(t sim.Time) sim.Time {
	if end, down := o.downUntil(t); down {
		return end
	}
	return o.upTo // downUntil found t up, until the next window starts
}
