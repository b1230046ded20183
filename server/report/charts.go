package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/trace"
)

// chart is one panel of the page.
type chart struct {
	ID     string    `json:"id"`
	Title  string    `json:"title"`
	Axes   [2]axis   `json:"axes"`
	Series []*series `json:"series"`
	// Ticks: the series are event kinds drawn as rows of points.
	Ticks bool `json:"ticks,omitempty"`

	fillTo int // the last bucket a line holds its level to
}

// axis labels a y axis; Names label integer values (an enum's names).
type axis struct {
	Label string   `json:"label"`
	Names []string `json:"names,omitempty"`
	Min   *float64 `json:"min,omitempty"`
	// Max caps the axis: values above it are clipped (the legend still
	// shows them).
	Max *float64 `json:"max,omitempty"`
}

type group struct {
	Title    string   `json:"title"`
	Subtitle string   `json:"subtitle"`
	Charts   []*chart `json:"charts"`
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2", "#8c564b", "#bcbd22", "#3949ab", "#00897b", "#c2185b"}

func (c *chart) add(s *series) {
	if s.Color == "" {
		s.Color = palette[len(c.Series)%len(palette)]
	}
	c.Series = append(c.Series, s)
}

// lineOf encodes e, holding its level up to bucket fillTo.
func lineOf(e *extremes, label, unit string, st style, fillTo int) *series {
	if e == nil || !slices.Contains(e.has, true) {
		return nil
	}
	return &series{Label: label, Unit: unit, Style: st, Data: encode(e.slotValues(fillTo))}
}

func (c *chart) addLine(e *extremes, label, unit string, st style, ax int) {
	if s := lineOf(e, label, unit, st, c.fillTo); s != nil {
		s.Axis = ax
		c.add(s)
	}
}

// rateWindow is the averaging window of send rate and goodput: 10 ms, or
// 1/400 of the run if longer, in whole buckets.
func (b *Builder) rateWindow() int {
	win := max(int64(10e9), b.meta.HorizonPs/400)
	return int((win + b.g.w - 1) / b.g.w)
}

// caNames are the CA states' names (cc.CAState), for the phase axis.
var caNames = func() []string {
	var n []string
	for i := cc.CAState(0); i <= cc.CALoss; i++ {
		n = append(n, i.String())
	}
	return n
}()

// pktCounters are CC signals counted in packets that are counters or
// ratios, not windows: drawn with the windows they would set the inflight
// panel's scale (CUBIC's ack_cnt climbs to twice the cwnd before each
// Reno-friendly increase). They get a panel of their own.
var pktCounters = map[string]bool{
	"ack_cnt":         true, // CUBIC: packets acked towards the next increase
	"ack_ratio":       true, // BIC: packets per ACK
	"snd_cwnd_cents":  true, // window increments below one packet
	"ai_ack_increase": true, // Prague: additive increase per packet
}

// flowGroup lays out one flow's panels.
func (b *Builder) flowGroup(i int, f *flowAcc) group {
	g := group{Title: "flow " + f.id}
	if f.cc != "" {
		g.Title += " · " + f.cc
	}
	if f.path.BottleneckBps > 0 {
		g.Subtitle = fmt.Sprintf("path: bottleneck %s at %s, base RTT %s, BDP %s (%s packets of %d B)",
			f.path.Bottleneck, rateStr(f.path.BottleneckBps), msStr(f.path.BaseRTTPs), sizeStr(f.path.BDPBytes),
			decimal(math.Round(float64(f.path.BDPBytes)/float64(b.opt.WirePacketBytes)), 1), b.opt.WirePacketBytes)
	}
	id := func(s string) string { return fmt.Sprintf("f%d-%s", i, s) }
	k := b.rateWindow()
	winMs := float64(int64(k)*b.g.w) / 1e9

	rates := &chart{ID: id("rates"), Title: "Rates", Axes: [2]axis{{Label: "Mbps", Min: ptr0()}}, fillTo: f.last}
	if f.sent != nil {
		sent := make([]float64, len(f.sent))
		for j, n := range f.sent {
			sent[j] = n * float64(b.opt.WirePacketBytes)
		}
		rates.add(&series{Label: fmt.Sprintf("send rate (%.0f ms avg)", winMs), Unit: "Mbps", Style: styleLine,
			Data: encode(movingRate(sent, k, b.g.w, f.first, f.last))})
	}
	rates.addLine(f.rate, "delivery rate (sampler)", "Mbps", styleLine, 0)
	if f.goodput != nil {
		rates.add(&series{Label: fmt.Sprintf("goodput (%.0f ms avg)", winMs), Unit: "Mbps", Style: styleLine,
			Data: encode(movingRate(f.goodput, k, b.g.w, f.first, f.last))})
	}
	if f.pacing != nil && slices.ContainsFunc(f.pacing.maxV, func(v float64) bool { return v > 0 }) {
		rates.addLine(f.pacing, "pacing rate", "Mbps", styleStep, 0)
	}

	infl := &chart{ID: id("inflight"), Title: "Inflight against the BDP and the CC's ceilings", Axes: [2]axis{{Label: "packets", Min: ptr0()}}, fillTo: f.last}
	infl.addLine(f.inflight, "inflight", "pkts", styleStep, 0)
	infl.addLine(f.cwnd, "cwnd", "pkts", styleStep, 0)
	infl.addLine(f.ssthresh, "ssthresh", "pkts", styleStep, 0)
	if f.path.BDPBytes > 0 && f.first >= 0 {
		bdp := make([]float64, b.g.n*slots)
		for j := range bdp {
			bdp[j] = math.NaN()
		}
		bdp[0], bdp[len(bdp)-1] = float64(f.path.BDPBytes)/float64(b.opt.WirePacketBytes), float64(f.path.BDPBytes)/float64(b.opt.WirePacketBytes)
		infl.add(&series{Label: "BDP", Unit: "pkts", Style: styleLine, Color: "#555555", Data: encode(bdp)})
	}

	ticks := &chart{ID: id("events"), Title: "Events (ticks; hover: count per bucket)", Ticks: true, Axes: [2]axis{{Label: "event"}}}
	for kind, counts := range f.events {
		if counts == nil {
			continue
		}
		row := float64(len(ticks.Series))
		vals, cnt := make([]float64, len(counts)*slots), make([]float64, len(counts)*slots)
		for j := range vals {
			vals[j], cnt[j] = math.NaN(), math.NaN()
		}
		for j, c := range counts {
			if c > 0 {
				vals[j*slots+1], cnt[j*slots+1] = row, c
			}
		}
		ticks.Axes[0].Names = append(ticks.Axes[0].Names, trace.EventKindNames[kind])
		ticks.add(&series{Label: trace.EventKindNames[kind], Style: stylePoints, Data: encode(vals), Counts: encode(cnt)})
	}

	phase := &chart{ID: id("phase"), Title: "CA state", Axes: [2]axis{{Label: "CA state", Names: caNames}}, fillTo: f.last}
	phase.addLine(f.ca, "CA state", "", styleStep, 0)
	// The CC's enums have a panel of their own: on the CA state's second
	// axis a 0/1 flag lined up with the "open" and "loss" rows.
	ccPhase := &chart{ID: id("cc-phase"), Title: "CC phase (the CC's enums; their meanings in the legend)", Axes: [2]axis{{Label: "value"}}, fillTo: f.last}

	rtt := &chart{ID: id("rtt"), Title: "RTT and the CC's delay estimators", Axes: [2]axis{{Label: "ms", Min: ptr0()}}, fillTo: f.last}
	rtt.addLine(f.srtt, "srtt", "ms", styleLine, 0)
	rtt.addLine(f.minRTT, "min_rtt (sender)", "ms", styleStep, 0)

	// The CC's own signals go where their unit says: windows with the
	// inflight, rates with the rates, delays with the RTT, enums on the
	// CC phase panel, the rest on a panel per unit.
	other := map[string]*chart{}
	var otherOrder []string
	for _, s := range f.sigs {
		def := signalDefs[f.cc][s.name]
		label := "cc " + s.name
		e := s.ext
		switch {
		case pktCounters[s.name]:
			c, ok := other["counters"]
			if !ok {
				c = &chart{ID: id("cc-counters"), Title: "CC counters in packets (not windows)", Axes: [2]axis{{Label: "pkts"}}, fillTo: f.last}
				other["counters"] = c
				otherOrder = append(otherOrder, "counters")
			}
			c.addLine(e, label, "pkts", styleStep, 0)
			continue
		}
		switch def.Unit {
		case "pkts":
			infl.addLine(e, label, "pkts", styleStep, 0)
		case "bps":
			rates.addLine(scaled(e, 1e-6), label, "Mbps", styleStep, 0)
		case "us":
			rtt.addLine(scaled(e, 1e-3), label, "ms", styleStep, 0)
		case "enum":
			if def.Help != "" {
				label += " (" + def.Help + ")"
			}
			ccPhase.addLine(e, label, "", styleStep, 0)
		default:
			unit := def.Unit
			if unit == "" {
				unit = "value"
			}
			c, ok := other[unit]
			if !ok {
				c = &chart{ID: id("cc-" + unit), Title: "CC signals in " + unit, Axes: [2]axis{{Label: unit}}, fillTo: f.last}
				other[unit] = c
				otherOrder = append(otherOrder, unit)
			}
			c.addLine(e, label, unit, styleStep, 0)
		}
	}
	b.clipRates(rates, f)
	for _, c := range []*chart{rates, infl, ticks, phase, ccPhase, rtt} {
		if len(c.Series) > 0 {
			g.Charts = append(g.Charts, c)
		}
	}
	for _, u := range otherOrder {
		if c := other[u]; len(c.Series) > 0 {
			g.Charts = append(g.Charts, c)
		}
	}
	return g
}

// clipRates caps the Rates panel's axis at 1.5× the path's bottleneck rate
// (the highest the trace shows its direction serving at, if that moved up)
// when a series goes above it: goodput spikes when a repaired hole releases
// queued data at once, and a 600 Mbps spike on a 100 Mbps path would
// squash the rates that matter. The title says so; the data keep the
// peaks, which the legend shows.
func (b *Builder) clipRates(c *chart, f *flowAcc) {
	top := float64(f.path.BottleneckBps) / 1e6
	if i, ok := b.qIdx[f.path.Bottleneck]; ok && b.queues[i].rate != nil {
		for _, v := range b.queues[i].rate.maxV {
			top = math.Max(top, v)
		}
	}
	if top <= 0 {
		return
	}
	lim := 1.5 * top
	peak := 0.0
	for _, s := range c.Series {
		for _, f := range strings.Split(s.Data, ",") {
			if v, err := strconv.ParseFloat(f, 64); err == nil {
				peak = math.Max(peak, v)
			}
		}
	}
	if peak <= lim {
		return
	}
	c.Axes[0].Max = &lim
	c.Title += fmt.Sprintf(" (axis cut at %s, 1.5× the bottleneck rate: spikes up to %s are clipped; the legend shows their values)",
		rateStr(int64(lim*1e6)), rateStr(int64(peak*1e6)))
}

// scaled is e with every stored value multiplied by k (unit conversion);
// e itself is left as it is, so that a page can be written again.
func scaled(e *extremes, k float64) *extremes {
	out := *e
	out.minV, out.maxV, out.last = slices.Clone(e.minV), slices.Clone(e.maxV), slices.Clone(e.last)
	for i := range out.has {
		out.minV[i], out.maxV[i], out.last[i] = e.minV[i]*k, e.maxV[i]*k, e.last[i]*k
	}
	return &out
}

// queueGroup lays out one direction's queue panels.
func (b *Builder) queueGroup(q *queueAcc) group {
	var sub []string // what the trace holds of max backlog, drops and marks
	for _, x := range []struct {
		has rowHas
		s   string
	}{{hasPkts, fmt.Sprintf("max backlog %d packets", q.maxPkts)}, {hasDrops, fmt.Sprintf("%d drops", q.totalDrops)},
		{hasMarks, fmt.Sprintf("%d CE marks", q.totalMarks)}} {
		if q.has&x.has != 0 {
			sub = append(sub, x.s)
		}
	}
	g := group{Title: "queue " + q.name, Subtitle: strings.Join(sub, ", ")}
	id := "q-" + strings.ReplaceAll(q.name, "/", "-")
	bl := &chart{ID: id + "-backlog", Title: "Backlog", Axes: [2]axis{{Label: "packets", Min: ptr0()}, {Label: "KB"}}, fillTo: q.g.n - 1}
	bl.addLine(q.pkts, "backlog (packets)", "pkts", styleStep, 0)
	bl.addLine(q.kb, "backlog (KB)", "KB", styleStep, 1)
	so := &chart{ID: id + "-sojourn", Title: "Sojourn time and drops/marks", Axes: [2]axis{{Label: "ms", Min: ptr0()}, {Label: "per bucket"}}}
	so.addLine(q.sojourn, "sojourn", "ms", styleLine, 0)
	for _, x := range []struct {
		name string
		v    []float64
		col  string
	}{{"drops", q.drops, "#000000"}, {"CE marks", q.marks, "#00897b"}} {
		vals := make([]float64, len(x.v)*slots)
		any := false
		for j := range vals {
			vals[j] = math.NaN()
		}
		for j, c := range x.v {
			if c > 0 {
				vals[j*slots+1], any = c, true
			}
		}
		if any {
			so.add(&series{Label: x.name, Unit: "count", Style: stylePoints, Color: x.col, Axis: 1, Data: encode(vals)})
		}
	}
	charts := []*chart{bl, so}
	if q.linkRows > 1 { // the rate or delay moved: a capacity process, outages, changes
		rd := &chart{ID: id + "-rate", Title: "Service rate (0 while down) and propagation delay",
			Axes: [2]axis{{Label: "Mbps", Min: ptr0()}, {Label: "ms", Min: ptr0()}}, fillTo: q.g.n - 1}
		rd.addLine(q.rate, "service rate", "Mbps", styleStep, 0)
		rd.addLine(q.delay, "delay", "ms", styleStep, 1)
		charts = append(charts, rd)
	}
	for _, c := range charts {
		if len(c.Series) > 0 {
			g.Charts = append(g.Charts, c)
		}
	}
	return g
}

// shownQueues are the directions worth a panel: every drawn flow's path
// bottleneck, and any other direction that queued (two packets or more) or
// dropped, in the order the trace first saw them; and how many more such
// directions the builder kept no series of (Builder.queue).
func (b *Builder) shownQueues() (out []*queueAcc, undrawn int) {
	for _, q := range b.queues {
		if q.seen && (b.bott[q.name] || q.maxPkts >= 2 || q.totalDrops > 0) {
			if !q.drawn {
				undrawn++
				continue
			}
			out = append(out, q)
		}
	}
	return out, undrawn
}

func ptr0() *float64 { z := 0.0; return &z }
