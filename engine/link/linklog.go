package link

import (
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// LinkLogger receives a direction's service rate and propagation delay
// whenever either changes: the trace's link table.
type LinkLogger interface {
	LinkChanged(d *Dir, at sim.Time, rate units.BitRate, delay sim.Duration)
}

// linkLog is what a direction has written of its rate and delay: every
// instant up to upTo, and the last values written.
type linkLog struct {
	to    LinkLogger
	upTo  sim.Time
	rate  units.BitRate
	delay sim.Duration
}

// LogLink starts the direction's log: its rate and delay now, then at each
// change. The rate is 0 while an outage holds the direction down; a
// capacity process gives its state's rate, in a dip depth × that (its
// grant ramp, which follows the traffic, is left out); a trace-driven
// direction gives its trace's mean rate of 1500-byte packets (the trace
// itself is its schedule). The changes a direction makes by itself (a
// capacity process, outage windows) are written as time reaches them, when
// a packet starts and when the run is read (CatchUp); scheduled changes as
// they are made. Logging draws nothing and schedules nothing: a run's
// events and digest do not depend on it.
func (d *Dir) LogLink(to LinkLogger) {
	d.log = &linkLog{to: to, upTo: d.s.Now()}
	d.logRow(d.s.Now(), true)
}

// logTo writes the log up to t: in time order, each instant in (upTo, t]
// at which the capacity process changes state or a dip starts or ends, or
// an outage starts or ends. The process advances with it, as it would at
// the next packet's start.
func (d *Dir) logTo(t sim.Time) {
	l := d.log
	if l == nil || t <= l.upTo {
		return
	}
	for {
		c := sim.Never
		if d.capa != nil {
			c = d.capa.nextChange(l.upTo)
		}
		if d.out != nil {
			c = min(c, d.out.nextChange(l.upTo))
		}
		if c > t {
			break
		}
		if d.capa != nil {
			d.capa.advance(c)
		}
		l.upTo = c
		d.logRow(c, false)
	}
	l.upTo = t
}

// logChange writes the log up to now before a scheduled change, and the
// direction's rate and delay after it. Without a log the capacity process
// still advances to now, as writing the log advances it: a change may end
// the process (a rate, another capacity process), and one that follows
// continues its streams, so where the old one left them must not depend
// on whether the run is traced.
func (d *Dir) logChange(change func()) {
	if d.log == nil {
		if d.capa != nil {
			d.capa.advance(d.s.Now())
		}
		change()
		return
	}
	now := d.s.Now()
	d.logTo(now)
	change()
	d.logRow(now, false)
}

// logRow writes the rate and delay at t, if they changed (or first).
func (d *Dir) logRow(t sim.Time, first bool) {
	l := d.log
	r := d.rate // a trace's mean rate, as config.TraceLink.MeanRate has it, on a trace-driven direction
	if d.capa != nil {
		r = d.capa.rateAt(t)
	}
	if d.out != nil {
		if _, down := d.out.downUntil(t); down {
			r = 0
		}
	}
	if !first && r == l.rate && d.delay == l.delay {
		return
	}
	l.rate, l.delay = r, d.delay
	l.to.LinkChanged(d, t, r, d.delay)
}
