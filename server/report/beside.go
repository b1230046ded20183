package report

import (
	"fmt"
	"strings"

	"github.com/ccscope/ccscope/engine/trace"
)

// beside is a second run drawn on a page with the first (Builder.Beside):
// the simulator beside the kernel (compare --report), or any two traces of
// one scenario (report A --beside B).
type beside struct {
	b      *Builder
	labels [2]string // the first run's and this one's, in legends and titles
}

// Beside draws b's run on a's page: panel by panel, each of b's series
// after a's, dashed, in the colour of a's series of the same name, so the
// two runs read as one line against another. Event ticks keep a panel per
// run (their rows are the kinds each run saw); panels, flows and queues
// only one run has are drawn with its label in their titles. The two must
// share the time axis: the same span and bucket count (ReadBeside and
// FromRecorder with one Options see to it).
func (a *Builder) Beside(b *Builder, labelA, labelB string) error {
	if a.g != b.g {
		return fmt.Errorf("report: the two runs' time axes differ (%d buckets of %d ps against %d of %d); give both the same span and buckets",
			a.g.n, a.g.w, b.g.n, b.g.w)
	}
	if labelA == "" || labelB == "" || labelA == labelB {
		return fmt.Errorf("report: the two runs need two different, non-empty labels (got %q and %q)", labelA, labelB)
	}
	a.beside = &beside{b: b, labels: [2]string{labelA, labelB}}
	return nil
}

// FromRecorder builds a report from the tables a recorder holds (a run
// kept in memory, as compare keeps both of its runs).
func FromRecorder(meta Meta, opt Options, r *trace.Recorder) (*Builder, error) {
	b, err := New(meta, opt)
	if err != nil {
		return nil, err
	}
	for _, t := range trace.Tables {
		if err := b.Flush(r, t); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ReadBeside reads the traces at prefixes a and b (see ResolveTrace) onto
// one time axis, the longer of their spans, and draws b beside a, each
// labelled with its given label.
func ReadBeside(a, b, labelA, labelB string, opt Options) (*Builder, error) {
	pa, ma, err := readMeta(a)
	if err != nil {
		return nil, err
	}
	pb, mb, err := readMeta(b)
	if err != nil {
		return nil, err
	}
	ma.HorizonPs = max(ma.HorizonPs, mb.HorizonPs)
	mb.HorizonPs = ma.HorizonPs
	if opt.Buckets <= 0 {
		opt.Buckets = defaultBuckets(max(len(ma.Flows), len(mb.Flows)))
	}
	ba, err := readTables(pa, ma, opt)
	if err != nil {
		return nil, err
	}
	bb, err := readTables(pb, mb, opt)
	if err != nil {
		return nil, err
	}
	if err := ba.Beside(bb, labelA, labelB); err != nil {
		return nil, err
	}
	return ba, nil
}

// groups lays out the page's panels: a's flows and queues, with b's drawn
// into them when b is beside a.
func (a *Builder) groups() (gs []group, empty []string) {
	o := a.beside
	add := func(g group, id string) {
		if len(g.Charts) == 0 {
			empty = append(empty, id)
			return
		}
		gs = append(gs, g)
	}
	for i, f := range a.flows {
		g := a.flowGroup(i, f)
		if o != nil {
			if j, ok := o.b.flowIdx[f.id]; ok {
				g = o.overlay(g, o.b.flowGroup(i, o.b.flows[j]))
			} else {
				g = o.only(g, 0)
			}
		}
		add(g, f.id)
	}
	if o != nil {
		for j, f := range o.b.flows {
			if _, ok := a.flowIdx[f.id]; !ok {
				add(o.only(o.b.flowGroup(len(a.flows)+j, f), 1), f.id+" ("+o.labels[1]+")")
			}
		}
	}
	shown := map[string]bool{}
	qs, _ := a.shownQueues()
	for _, q := range qs {
		shown[q.name] = true
		g := a.queueGroup(q)
		if o != nil {
			if j, ok := o.b.qIdx[q.name]; ok && o.b.queues[j].seen && o.b.queues[j].drawn {
				g = o.overlay(g, o.b.queueGroup(o.b.queues[j]))
			} else {
				g = o.only(g, 0)
			}
		}
		gs = append(gs, g)
	}
	if o != nil {
		qs, _ := o.b.shownQueues()
		for _, q := range qs {
			if !shown[q.name] {
				gs = append(gs, o.only(o.b.queueGroup(q), 1))
			}
		}
	}
	return gs, empty
}

// overlay draws gb's series into ga's panels.
func (o *beside) overlay(ga, gb group) group {
	la, lb := o.labels[0], o.labels[1]
	g := group{Title: ga.Title, Subtitle: ga.Subtitle}
	switch {
	case strings.HasPrefix(gb.Title, ga.Title):
		g.Title = gb.Title // the kernel's trace may not name the CC
	case !strings.HasPrefix(ga.Title, gb.Title):
		g.Title = ga.Title + " (" + la + ") · " + gb.Title + " (" + lb + ")"
	}
	if g.Subtitle == "" {
		g.Subtitle = gb.Subtitle
	}
	byID := map[string]*chart{}
	for _, c := range gb.Charts {
		byID[c.ID] = c
	}
	done := map[string]bool{}
	for _, c := range ga.Charts {
		d := byID[c.ID]
		done[c.ID] = true
		switch {
		case d == nil:
			g.Charts = append(g.Charts, titled(c, la))
		case c.Ticks:
			d.ID += "-beside"
			g.Charts = append(g.Charts, titled(c, la), titled(d, lb))
		default:
			g.Charts = append(g.Charts, merge(c, d, la, lb))
		}
	}
	for _, d := range gb.Charts {
		if !done[d.ID] {
			g.Charts = append(g.Charts, titled(d, lb))
		}
	}
	return g
}

// only marks a group that one run alone has (side 0 or 1).
func (o *beside) only(g group, side int) group {
	g.Title += " (" + o.labels[side] + " only)"
	for _, c := range g.Charts {
		if side == 1 {
			c.ID += "-beside"
		}
		relabel(c, o.labels[side])
	}
	return g
}

// titled names the run a panel of one run's series shows.
func titled(c *chart, label string) *chart {
	c.Title += " · " + label
	relabel(c, label)
	return c
}

// relabel adds the run's label to each series' name.
func relabel(c *chart, label string) {
	for _, s := range c.Series {
		s.Label += " · " + label
	}
}

// merge appends d's series to c's, dashed, each in the colour of c's
// series of the same name. The BDP, a fact of the path, is drawn once.
func merge(c, d *chart, la, lb string) *chart {
	color := map[string]string{}
	for _, s := range c.Series {
		color[s.Label] = s.Color
	}
	n := len(c.Series)
	relabel(c, la)
	for _, s := range d.Series {
		col, ok := color[s.Label]
		if s.Label == "BDP" && ok {
			continue
		}
		if !ok {
			col = palette[n%len(palette)]
			n++
		}
		s.Label += " · " + lb
		s.Color, s.Dash = col, true
		c.Series = append(c.Series, s)
	}
	for k := range c.Axes {
		if m, dm := c.Axes[k].Max, d.Axes[k].Max; m != nil && dm != nil && *dm > *m {
			c.Axes[k].Max = dm
		}
	}
	return c
}
