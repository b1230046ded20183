package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccscope/ccscope/engine/trace"
)

// beside holds the runs drawn on a page with its own (Builder.Beside): the
// simulator's beside the kernel's (compare --report), or traces of one
// scenario under other CCs or settings (report A --beside B --beside C).
type beside struct {
	label  string     // the page's own run's, in legends and titles
	runs   []*Builder // drawn in the page's panels, each in a dash pattern of its own
	labels []string   // theirs
}

// maxBeside is how many runs a page draws beside its own: report.js has a
// dash pattern for each.
const maxBeside = 3

// Beside draws b's run on a's page: panel by panel, each of b's series
// after a's, dashed, in the colour of a's series of the same name, so the
// runs read as one line against another. Each further call adds a run, up
// to maxBeside, in a dash pattern of its own; labelA must stay the same.
// Event ticks keep a panel per run (their rows are the kinds each run
// saw); panels, flows and queues not every run has say whose they are.
// The runs must share the time axis: the same span and bucket count
// (ReadBeside and FromRecorder with one Options see to it).
func (a *Builder) Beside(b *Builder, labelA, labelB string) error {
	if a.g != b.g {
		return fmt.Errorf("report: the runs' time axes differ (%d buckets of %d ps against %d of %d); give them the same span and buckets",
			a.g.n, a.g.w, b.g.n, b.g.w)
	}
	o := a.beside
	if o == nil {
		o = &beside{label: labelA}
	}
	if labelA != o.label {
		return fmt.Errorf("report: the page's own run is labelled %q, not %q", o.label, labelA)
	}
	if labelA == "" || labelB == "" || labelB == labelA || slices.Contains(o.labels, labelB) {
		return fmt.Errorf("report: the runs need different, non-empty labels (got %q beside %q)", labelB, append([]string{labelA}, o.labels...))
	}
	if len(o.runs) == maxBeside {
		return fmt.Errorf("report: at most %d runs beside a page's own", maxBeside)
	}
	o.runs, o.labels = append(o.runs, b), append(o.labels, labelB)
	a.beside = o
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

// ReadBeside reads the traces at prefixes (see ResolveTrace) onto one time
// axis, the longest of their spans, and draws the others beside the first,
// each named by its label.
func ReadBeside(prefixes, labels []string, opt Options) (*Builder, error) {
	if len(prefixes) != len(labels) || len(prefixes) < 2 {
		return nil, fmt.Errorf("report: %d traces and %d labels; want two or more of each, as many labels as traces", len(prefixes), len(labels))
	}
	paths, metas := make([]string, len(prefixes)), make([]Meta, len(prefixes))
	var span int64
	flows := 0
	for i, p := range prefixes {
		var err error
		if paths[i], metas[i], err = readMeta(p); err != nil {
			return nil, err
		}
		span, flows = max(span, metas[i].HorizonPs), max(flows, len(metas[i].Flows))
	}
	if opt.Buckets <= 0 {
		opt.Buckets = defaultBuckets(drawnFlows(flows, opt))
	}
	var page *Builder
	for i := range prefixes {
		metas[i].HorizonPs = span
		b, err := readTables(paths[i], metas[i], opt)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			page = b
		} else if err := page.Beside(b, labels[0], labels[i]); err != nil {
			return nil, err
		}
	}
	return page, nil
}

// groups lays out the page's panels: its run's flows and queues, with the
// runs beside it drawn into them.
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
			var others []*group
			for _, b := range o.runs {
				var gb *group
				if j, ok := b.flowIdx[f.id]; ok {
					x := b.flowGroup(i, b.flows[j])
					gb = &x
				}
				others = append(others, gb)
			}
			g = o.overlay(g, others)
		}
		add(g, f.id)
	}
	if o != nil {
		next := len(a.flows) // chart ids of flows the page's run lacks
		for k, b := range o.runs {
			for _, f := range b.flows {
				if _, ok := a.flowIdx[f.id]; !ok {
					add(o.only(b.flowGroup(next, f), k), f.id+" ("+o.labels[k]+")")
					next++
				}
			}
		}
	}
	shown := map[string]bool{}
	qs, _ := a.shownQueues()
	for _, q := range qs {
		shown[q.name] = true
		g := a.queueGroup(q)
		if o != nil {
			var others []*group
			for _, b := range o.runs {
				var gb *group
				if j, ok := b.qIdx[q.name]; ok && b.queues[j].seen && b.queues[j].drawn {
					x := b.queueGroup(b.queues[j])
					gb = &x
				}
				others = append(others, gb)
			}
			g = o.overlay(g, others)
		}
		gs = append(gs, g)
	}
	if o != nil {
		for k, b := range o.runs {
			qs, _ := b.shownQueues()
			for _, q := range qs {
				if !shown[q.name] {
					gs = append(gs, o.only(b.queueGroup(q), k))
				}
			}
		}
	}
	return gs, empty
}

// overlay draws the other runs' groups (nil: the run lacks it) into ga's
// panels, the k-th run's series in dash pattern k+1. A panel no other run
// has, and each run's event ticks, say whose they are.
func (o *beside) overlay(ga group, others []*group) group {
	g := group{Title: ga.Title, Subtitle: ga.Subtitle}
	byID := map[string]*chart{}
	for _, c := range ga.Charts {
		relabel(c, o.label)
		byID[c.ID] = c
	}
	matched := map[string]bool{}
	ticks := map[string][]*chart{} // the other runs' ticks, by the page's ticks panel
	var extra []*chart
	var lacking []string
	g.Title = o.title(ga, others)
	for k, gb := range others {
		lb := o.labels[k]
		if gb == nil {
			lacking = append(lacking, lb)
			continue
		}
		if g.Subtitle == "" {
			g.Subtitle = gb.Subtitle
		}
		for _, d := range gb.Charts {
			c := byID[d.ID]
			switch {
			case c != nil && d.Ticks:
				ticks[c.ID] = append(ticks[c.ID], titled(d, lb, k))
			case c != nil:
				matched[c.ID] = true
				merge(c, d, o.label, lb, k+1)
			default:
				extra = append(extra, titled(d, lb, k))
			}
		}
	}
	for _, c := range ga.Charts {
		if c.Ticks || !matched[c.ID] && len(lacking) < len(others) {
			c.Title += " · " + o.label
		}
		g.Charts = append(append(g.Charts, c), ticks[c.ID]...)
	}
	g.Charts = append(g.Charts, extra...)
	if len(lacking) == len(others) {
		g.Title += " (" + o.label + " only)"
	} else if len(lacking) > 0 {
		g.Subtitle = strings.TrimPrefix(g.Subtitle+"; not in "+strings.Join(lacking, ", "), "; ")
	}
	return g
}

// title is a group's title ("flow f0 · cubic") for every run: one CC as
// it is, several each followed by the run's label where that is not the
// CC's name ("flow f0 · cubic · bbr", "flow f0 · cubic (run 1) · bbr (run
// 2)"). A trace that does not name the CC (bare tables) adds none.
func (o *beside) title(ga group, others []*group) string {
	head, own, _ := strings.Cut(ga.Title, " · ")
	tails, labels := []string{own}, []string{o.label}
	for k, gb := range others {
		if gb != nil {
			_, t, _ := strings.Cut(gb.Title, " · ")
			tails, labels = append(tails, t), append(labels, o.labels[k])
		}
	}
	var named []string
	for _, t := range tails {
		if t != "" && !slices.Contains(named, t) {
			named = append(named, t)
		}
	}
	if len(named) <= 1 {
		return strings.Join(append([]string{head}, named...), " · ")
	}
	parts := []string{head}
	for i, t := range tails {
		switch {
		case t == "":
		case t == labels[i]:
			parts = append(parts, t)
		default:
			parts = append(parts, t+" ("+labels[i]+")")
		}
	}
	return strings.Join(parts, " · ")
}

// only marks a group the k-th run beside the page has and its own lacks.
func (o *beside) only(g group, k int) group {
	g.Title += " (" + o.labels[k] + " only)"
	for _, c := range g.Charts {
		c.ID += fmt.Sprintf("-beside%d", k+1)
		relabel(c, o.labels[k])
	}
	return g
}

// titled is a panel of the k-th run's alone, its id and title made its own.
func titled(c *chart, label string, k int) *chart {
	c.ID += fmt.Sprintf("-beside%d", k+1)
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

// merge appends d's series to c's in dash pattern dash, each named with
// its run's label and in the colour of the page's own series of the same
// name (c's, named with own). The BDP, a fact of the path, is drawn once.
func merge(c, d *chart, own, label string, dash int) {
	color := map[string]string{}
	for _, s := range c.Series {
		if s.Dash == 0 {
			color[strings.TrimSuffix(s.Label, " · "+own)] = s.Color
		}
	}
	n := len(c.Series)
	for _, s := range d.Series {
		col, ok := color[s.Label]
		if s.Label == "BDP" && ok {
			continue
		}
		if !ok {
			col = palette[n%len(palette)]
			n++
		}
		s.Label += " · " + label
		s.Color, s.Dash = col, dash
		c.Series = append(c.Series, s)
	}
	for k := range c.Axes {
		if m, dm := c.Axes[k].Max, d.Axes[k].Max; m != nil && dm != nil && *dm > *m {
			c.Axes[k].Max = dm
		}
	}
}
