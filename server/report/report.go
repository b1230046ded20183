// Package report writes a run as one self-contained HTML file: per flow,
// panels on one shared time axis (rates; inflight against the BDP and the
// CC's ceilings; ACK/SACK/TLP/RTO/retransmit/drop/mark ticks; the CA state;
// the CC's phase; srtt, min_rtt and the CC's estimators in their own units),
// a queue panel per bottleneck, the summary tables and the run's identity
// (scenario, seed, config hash, digest). The page embeds uPlot and its data
// and fetches nothing, so it opens from disk, offline.
//
// A Builder reads the trace tables as they are flushed — it is a
// trace.Sink — or from trace files (ReadTrace), and keeps only a decimated
// picture: the run's span is cut into a fixed number of buckets shared by
// every chart, and each signal keeps per bucket its minimum and maximum (in
// the order they happened) and its last value. Memory and page size are
// therefore bounded by the bucket count, not by the run's length: a 60 s
// every-change trace gives the same few megabytes as a 6 s one, and no
// spike disappears in the thinning.
package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/trace"
)

// Meta identifies the run a report shows.
type Meta struct {
	Scenario   string
	Seed       uint64
	ConfigHash string
	Digest     string
	Detail     string // the trace detail: "sampled" or "change"
	HorizonPs  int64  // the run's span, which the time axis covers
	Config     string // canonical scenario JSON, shown folded
	// Summary is the end-of-run summary (nil: the page says it is missing).
	Summary *engine.Summary
	// Flows lists the run's flows in trace order (the trace's flow index).
	Flows []FlowMeta
	// Source says where the data came from, e.g. "ccscope run" or the
	// trace files' prefix.
	Source string
}

// FlowMeta describes one flow.
type FlowMeta struct {
	ID, CC string
	Path   engine.PathFacts
}

// MetaFromSummary fills a Meta's identity and flows from a run summary.
func MetaFromSummary(s *engine.Summary) Meta {
	m := Meta{Scenario: s.Scenario, Seed: s.Seed, ConfigHash: s.ConfigHash, Digest: s.Digest,
		HorizonPs: s.SimTimePs, Summary: s}
	for _, f := range s.Flows {
		m.Flows = append(m.Flows, FlowMeta{ID: f.ID, CC: f.CC, Path: f.PathFacts})
	}
	return m
}

// MetaFromRun fills a Meta's identity, span and flows from run r before it
// runs, from the same summary MetaFromSummary reads: its flows are the
// run's, as the traces name them (a split flow's legs "f0.0" and "f0.1",
// each with its own CC and path), not the scenario's. hash is the
// scenario's config hash; the summary itself and the digest are set once
// the run is over (SetSummary).
func MetaFromRun(r *engine.Run, hash string) Meta {
	s := r.Summary(hash)
	m := MetaFromSummary(&s)
	m.Summary, m.Digest, m.HorizonPs = nil, "", int64(r.Horizon())
	return m
}

// Options tune a report.
type Options struct {
	// Buckets is the number of time buckets every chart shares (default
	// 4000 for up to four flows, fewer beyond so the page stays small).
	Buckets int
	// WirePacketBytes converts the BDP to packets (default 1500).
	WirePacketBytes int64
}

// Builder accumulates a run's decimated trace. Feed it with Flush (as the
// run's trace sink) or ReadTrace, then call Write.
type Builder struct {
	meta    Meta
	opt     Options
	g       grid
	flows   []*flowAcc
	flowIdx map[string]int
	queues  []*queueAcc
	qIdx    map[string]int
	rows    int64
	notes   []string // what the page should say is missing
	partial bool     // the trace files lack tables or columns (notes say which)
}

// New returns a Builder for a run spanning meta.HorizonPs.
func New(meta Meta, opt Options) (*Builder, error) {
	if meta.HorizonPs <= 0 {
		return nil, fmt.Errorf("report: the run's span is %d ps; nothing to draw", meta.HorizonPs)
	}
	if opt.WirePacketBytes <= 0 {
		opt.WirePacketBytes = 1500
	}
	if opt.Buckets <= 0 {
		opt.Buckets = 4000
		if n := len(meta.Flows); n > 4 {
			opt.Buckets = max(500, 16000/n)
		}
	}
	b := &Builder{meta: meta, opt: opt, g: newGrid(meta.HorizonPs, opt.Buckets), flowIdx: map[string]int{}, qIdx: map[string]int{}}
	for _, f := range meta.Flows {
		b.flow(f.ID)
	}
	return b, nil
}

// flow returns the accumulator of the flow named id, creating it.
func (b *Builder) flow(id string) *flowAcc {
	if i, ok := b.flowIdx[id]; ok {
		return b.flows[i]
	}
	f := &flowAcc{id: id, g: b.g, first: -1, sigIdx: map[string]int{}}
	for _, m := range b.meta.Flows {
		if m.ID == id {
			f.cc, f.path = m.CC, m.Path
		}
	}
	b.flowIdx[id] = len(b.flows)
	b.flows = append(b.flows, f)
	return f
}

// queue returns the accumulator of direction name ("<link>/ab"), creating it.
func (b *Builder) queue(name string) *queueAcc {
	if i, ok := b.qIdx[name]; ok {
		return b.queues[i]
	}
	q := &queueAcc{name: name, g: b.g}
	b.qIdx[name] = len(b.queues)
	b.queues = append(b.queues, q)
	return q
}

// Flush consumes one of a recorder's tables (trace.Sink). It keeps nothing
// of the table itself.
func (b *Builder) Flush(r *trace.Recorder, table string) error {
	switch table {
	case trace.TableFlows:
		for i := range r.FlowsT.Rows {
			row := &r.FlowsT.Rows[i]
			b.flow(r.Flows[row.Flow]).addRow(row, hasAll)
		}
		b.rows += int64(len(r.FlowsT.Rows))
	case trace.TableSignals:
		s := &r.SignalT
		for i := range s.T {
			b.flow(r.Flows[s.Flow[i]]).addSignal(s.T[i], r.Signals[s.Signal[i]], s.Value[i])
		}
		b.rows += int64(len(s.T))
	case trace.TableEvents:
		e := &r.EventT
		for i := range e.T {
			b.flow(r.Flows[e.Flow[i]]).addEvent(e.T[i], e.Kind[i])
		}
		b.rows += int64(len(e.T))
	case trace.TableDelivery:
		d := &r.Delivery
		for i := range d.T {
			b.flow(r.Flows[d.Flow[i]]).addDelivery(d.T[i], d.BytesDelivered[i])
		}
		b.rows += int64(len(d.T))
	case trace.TableQueue:
		q := &r.Queue
		name := dirNames(r.Links)
		for i := range q.T {
			r := queueRow{bytes: q.BacklogBytes[i], pkts: q.BacklogPkts[i], sojournPs: q.SojournPs[i], drops: q.Drops[i], marks: q.Marks[i]}
			b.queue(name(q.Link[i], q.DirAB[i])).add(q.T[i], r, hasAll)
		}
		b.rows += int64(len(q.T))
	case trace.TableLink:
		l := &r.LinkT
		name := dirNames(r.Links)
		for i := range l.T {
			b.queue(name(l.Link[i], l.DirAB[i])).addLink(l.T[i], l.RateBps[i], l.DelayPs[i])
		}
		b.rows += int64(len(l.T))
	}
	return nil
}

// dirNames names the directions of links by link index and direction,
// "<link>/ab" or "<link>/ba", each string made once per flush rather than
// per row.
func dirNames(links []string) func(link int32, ab bool) string {
	names := make([][2]string, len(links))
	for i, l := range links {
		names[i] = [2]string{l + "/ba", l + "/ab"}
	}
	return func(link int32, ab bool) string {
		if ab {
			return names[link][1]
		}
		return names[link][0]
	}
}

// SetSummary records the end-of-run summary (and its digest) once the run
// is over.
func (b *Builder) SetSummary(s *engine.Summary) {
	b.meta.Summary, b.meta.Digest = s, s.Digest
}

// Rows is the number of trace rows the builder has consumed.
func (b *Builder) Rows() int64 { return b.rows }

// flowAcc accumulates one flow's signals.
type flowAcc struct {
	id, cc string
	path   engine.PathFacts
	g      grid

	first, last int // buckets of the flow's first and last row; first -1: none

	inflight, cwnd, ssthresh, srtt, minRTT, pacing, rate, ca *extremes
	sent, goodput                                            []float64 // bytes per bucket
	prevSent, prevDeliv                                      float64
	hasRows, hasDeliv                                        bool
	events                                                   [len(trace.EventKindNames)][]float64

	sigs   []*sigAcc
	sigIdx map[string]int
}

// sigAcc is one CC signal of a flow.
type sigAcc struct {
	name string
	ext  *extremes
}

func (f *flowAcc) ext(p **extremes) *extremes {
	if *p == nil {
		*p = newExtremes(f.g.n)
	}
	return *p
}

func (f *flowAcc) touch(b int) {
	if f.first < 0 {
		f.first = b
	}
	f.last = max(f.last, b)
}

// infiniteSSThresh is the sender's "no ssthresh yet" (TCP_INFINITE_SSTHRESH).
const infiniteSSThresh = 0x7fffffff

// rowHas says which fields of a trace row a trace holds: all of them live,
// those whose columns a --trace-select subset kept from files.
type rowHas uint16

const (
	hasCwnd rowHas = 1 << iota
	hasSSThresh
	hasInflight
	hasSRTT
	hasMinRTT
	hasPacing
	hasRate
	hasDelivered
	hasLost
	hasCA
	hasAll rowHas = 1<<16 - 1
)

// The queue table's fields (a queue row is not a flow row: the bits reuse).
const (
	hasBytes rowHas = 1 << iota
	hasPkts
	hasSojourn
	hasDrops
	hasMarks
)

// addRow takes a flows-table row, of which only the fields has names are
// known.
func (f *flowAcc) addRow(r *trace.FlowRow, has rowHas) {
	t := int64(r.T)
	b := f.g.bucket(t)
	f.touch(b)
	if has&hasInflight != 0 {
		f.ext(&f.inflight).add(b, t, float64(r.InflightPkts))
	}
	if has&hasCwnd != 0 {
		f.ext(&f.cwnd).add(b, t, float64(r.CwndPkts))
	}
	if has&hasSSThresh != 0 && r.SSThreshPkts < infiniteSSThresh {
		f.ext(&f.ssthresh).add(b, t, float64(r.SSThreshPkts))
	}
	if has&hasSRTT != 0 && r.SRTT > 0 {
		f.ext(&f.srtt).add(b, t, float64(r.SRTT)/1e9)
	}
	if has&hasMinRTT != 0 && r.MinRTT > 0 {
		f.ext(&f.minRTT).add(b, t, float64(r.MinRTT)/1e9)
	}
	if has&hasPacing != 0 {
		f.ext(&f.pacing).add(b, t, float64(r.PacingRateBps)/1e6)
	}
	if has&hasRate != 0 {
		f.ext(&f.rate).add(b, t, float64(r.DeliveryRateBps)/1e6)
	}
	if has&hasCA != 0 {
		f.ext(&f.ca).add(b, t, float64(r.CAState))
	}
	const sentHas = hasDelivered | hasLost | hasInflight
	if has&sentHas != sentHas {
		return
	}
	// Every packet sent is delivered, marked lost or still in flight, so
	// their sum counts transmissions (retransmissions included); its growth
	// per bucket is the send rate, in wire packets.
	sent := float64(r.Delivered + r.Lost + uint64(r.InflightPkts))
	if f.sent == nil {
		f.sent = make([]float64, f.g.n)
	}
	if f.hasRows {
		f.sent[b] += sent - f.prevSent
	} else {
		f.sent[b] += sent
	}
	f.prevSent, f.hasRows = sent, true
}

func (f *flowAcc) addDelivery(t, delivered int64) {
	b := f.g.bucket(t)
	f.touch(b)
	if f.goodput == nil {
		f.goodput = make([]float64, f.g.n)
	}
	f.goodput[b] += float64(delivered) - f.prevDeliv
	f.prevDeliv, f.hasDeliv = float64(delivered), true
}

func (f *flowAcc) addEvent(t int64, k trace.EventKind) {
	if int(k) >= len(f.events) {
		return
	}
	b := f.g.bucket(t)
	f.touch(b)
	if f.events[k] == nil {
		f.events[k] = make([]float64, f.g.n)
	}
	f.events[k][b]++
}

func (f *flowAcc) addSignal(t int64, name string, v float64) {
	i, ok := f.sigIdx[name]
	if !ok {
		i = len(f.sigs)
		f.sigIdx[name] = i
		f.sigs = append(f.sigs, &sigAcc{name: name, ext: newExtremes(f.g.n)})
	}
	b := f.g.bucket(t)
	f.touch(b)
	f.sigs[i].ext.add(b, t, v)
}

// queueAcc accumulates one link direction's queue, and its service rate
// and delay as they change (the link table).
type queueAcc struct {
	name                   string
	g                      grid
	pkts, kb, sojourn      *extremes
	drops, marks           []float64
	prevDrops, prevMarks   uint64
	maxPkts                int64
	totalDrops, totalMarks uint64
	rate, delay            *extremes
	linkRows               int
	seen                   bool   // the queue table has rows of it
	has                    rowHas // the queue table's fields it has
}

// addLink takes a link row: the rate and delay from t on.
func (q *queueAcc) addLink(t, rateBps, delayPs int64) {
	if q.rate == nil {
		q.rate, q.delay = newExtremes(q.g.n), newExtremes(q.g.n)
	}
	b := q.g.bucket(t)
	q.rate.add(b, t, float64(rateBps)/1e6)
	q.delay.add(b, t, float64(delayPs)/1e9)
	q.linkRows++
}

// queueRow is a queue-table row's values.
type queueRow struct {
	bytes, pkts, sojournPs int64
	drops, marks           uint64
}

// add takes a queue-table row, of which only the fields has names are
// known.
func (q *queueAcc) add(t int64, r queueRow, has rowHas) {
	if !q.seen {
		q.pkts, q.kb, q.sojourn = newExtremes(q.g.n), newExtremes(q.g.n), newExtremes(q.g.n)
		q.drops, q.marks = make([]float64, q.g.n), make([]float64, q.g.n)
		q.seen = true
	}
	b := q.g.bucket(t)
	q.has |= has
	if has&hasPkts != 0 {
		q.pkts.add(b, t, float64(r.pkts))
		q.maxPkts = max(q.maxPkts, r.pkts)
	}
	if has&hasBytes != 0 {
		q.kb.add(b, t, float64(r.bytes)/1e3)
	}
	if has&hasSojourn != 0 && r.sojournPs > 0 {
		q.sojourn.add(b, t, float64(r.sojournPs)/1e9)
	}
	if has&hasDrops != 0 {
		q.drops[b] += float64(r.drops - q.prevDrops)
		q.prevDrops, q.totalDrops = r.drops, r.drops
	}
	if has&hasMarks != 0 {
		q.marks[b] += float64(r.marks - q.prevMarks)
		q.prevMarks, q.totalMarks = r.marks, r.marks
	}
}

// signalDefs are the signals each registered algorithm defines (units and
// help), by algorithm and name, learned by initialising each one on the
// cctest harness: trace files carry signal names only, and algorithms
// share names in different units (DCTCP's alpha is a ratio, H-TCP's
// packets per RTT; BBR's min_rtt is in µs, H-TCP's in ms).
var signalDefs = func() map[string]map[string]cc.SignalDef {
	m := map[string]map[string]cc.SignalDef{}
	for _, name := range cc.Names() {
		a, err := cc.New(name)
		if err != nil {
			continue
		}
		c := cctest.New(a, cctest.Options{ECNOk: true})
		defs := map[string]cc.SignalDef{}
		for _, d := range c.St.Signals.Defs() {
			defs[d.Name] = d
		}
		m[name] = defs
	}
	return m
}()

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
		for j := range f.sent {
			f.sent[j] *= float64(b.opt.WirePacketBytes)
		}
		rates.add(&series{Label: fmt.Sprintf("send rate (%.0f ms avg)", winMs), Unit: "Mbps", Style: styleLine,
			Data: encode(movingRate(f.sent, k, b.g.w, f.first, f.last))})
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
			scale(e, 1e-6)
			rates.addLine(e, label, "Mbps", styleStep, 0)
		case "us":
			scale(e, 1e-3)
			rtt.addLine(e, label, "ms", styleStep, 0)
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

// scale multiplies every stored value of e by k (unit conversion).
func scale(e *extremes, k float64) {
	for i := range e.has {
		e.minV[i], e.maxV[i], e.last[i] = e.minV[i]*k, e.maxV[i]*k, e.last[i]*k
	}
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

// shownQueues are the directions worth a panel: every flow's path
// bottleneck, and any other direction that queued (two packets or more) or
// dropped, in the order the trace first saw them.
func (b *Builder) shownQueues() []*queueAcc {
	bott := map[string]bool{}
	for _, f := range b.flows {
		if f.path.Bottleneck != "" {
			bott[f.path.Bottleneck] = true
		}
	}
	var out []*queueAcc
	for _, q := range b.queues {
		if q.seen && (bott[q.name] || q.maxPkts >= 2 || q.totalDrops > 0) {
			out = append(out, q)
		}
	}
	return out
}

func ptr0() *float64 { z := 0.0; return &z }

// rateStr prints a rate in Mbps, or in Gbps from 1 Gbps on.
func rateStr(bps int64) string {
	if bps >= 1e9 {
		return decimal(float64(bps)/1e9, 4) + " Gbps"
	}
	return decimal(float64(bps)/1e6, 4) + " Mbps"
}

// msStr prints a duration in ms.
func msStr(ps int64) string { return decimal(float64(ps)/1e9, 4) + " ms" }

// secsStr prints a duration in seconds.
func secsStr(ps int64) string { return decimal(float64(ps)/1e12, 6) + " s" }

// sizeStr prints a size in KB, or in MB from 1 MB on.
func sizeStr(b int64) string {
	if b >= 1e6 {
		return decimal(float64(b)/1e6, 4) + " MB"
	}
	return decimal(float64(b)/1e3, 4) + " KB"
}

// decimal prints v to sig significant digits as a plain decimal, never in
// exponent notation, keeping every integer digit (12345.6 → "12,346") and
// grouping them in threes.
func decimal(v float64, sig int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	dec := max(0, sig-1-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var g strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			g.WriteByte(',')
		}
		g.WriteRune(d)
	}
	if hasFrac {
		return sign + g.String() + "." + frac
	}
	return sign + g.String()
}
