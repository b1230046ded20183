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
//
// Two runs of one scenario can share a page (Beside): the second's series
// are drawn dashed in the first's panels, as compare --report draws the
// kernel's beside the simulator's.
package report

import (
	"fmt"
	"slices"

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
	// Flows names the flows whose panels the page draws, a split flow's
	// id both its legs (default: the first maxDrawnFlows in trace order).
	Flows []string
}

// maxDrawnFlows is how many flows' panels a page draws unless
// Options.Flows names them, and maxDrawnQueues how many link directions it
// keeps the series of beside the drawn flows' bottlenecks. dumbbell-n's
// 1,024 flows drawn whole made a 77 MB page of 7,000 charts, which took
// 2 GB to build; their summary rows say more than their panels would.
const (
	maxDrawnFlows  = 32
	maxDrawnQueues = 32
)

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
	notes   []string // what the page says at the top: what is missing, AddNote's
	partial bool     // the trace files lack tables or columns (notes say which)
	beside  *beside  // the runs drawn on the page beside its own, if any
	tables  []Table  // tables shown under the summary
	// undrawn are the flows whose rows the page leaves out (Options.Flows,
	// maxDrawnFlows); bott the drawn flows' bottlenecks, whose queues are
	// drawn whatever maxDrawnQueues; drawnQueues counts the directions drawn.
	undrawn     map[string]bool
	bott        map[string]bool
	drawnQueues int
}

// New returns a Builder for a run spanning meta.HorizonPs.
func New(meta Meta, opt Options) (*Builder, error) {
	if meta.HorizonPs <= 0 {
		return nil, fmt.Errorf("report: the run's span is %d ps; nothing to draw", meta.HorizonPs)
	}
	if opt.WirePacketBytes <= 0 {
		opt.WirePacketBytes = 1500
	}
	if len(meta.Flows) > 0 && opt.Flows != nil {
		flows := make([]string, 0, len(opt.Flows))
		for _, id := range opt.Flows {
			names := meta.traceNames(id)
			if names == nil {
				return nil, fmt.Errorf("report: flows: the run has no flow %q", id)
			}
			flows = append(flows, names...)
		}
		opt.Flows = flows
	}
	if opt.Buckets <= 0 {
		opt.Buckets = defaultBuckets(drawnFlows(len(meta.Flows), opt))
	}
	b := &Builder{meta: meta, opt: opt, g: newGrid(meta.HorizonPs, opt.Buckets), flowIdx: map[string]int{}, qIdx: map[string]int{},
		undrawn: map[string]bool{}, bott: map[string]bool{}}
	for _, f := range meta.Flows {
		b.flow(f.ID)
	}
	return b, nil
}

// traceNames are the trace's names of flow id: its own, or a split flow's
// legs, id.0 and id.1 (ids have no dots, so a leg's name is no other
// flow's); nil if the run has neither.
func (m *Meta) traceNames(id string) []string {
	has := func(name string) bool {
		return slices.ContainsFunc(m.Flows, func(f FlowMeta) bool { return f.ID == name })
	}
	switch {
	case has(id):
		return []string{id}
	case has(id+".0") && has(id+".1"):
		return []string{id + ".0", id + ".1"}
	}
	return nil
}

// missingFlows is an error naming the flows Options.Flows asks for that
// the trace has no rows of, once it has been read.
func (b *Builder) missingFlows() error {
	for _, id := range b.opt.Flows {
		if _, ok := b.flowIdx[id]; !ok {
			return fmt.Errorf("report: flows: the trace has no rows of flow %q", id)
		}
	}
	return nil
}

// drawnFlows is how many of a run's n flows a page draws.
func drawnFlows(n int, opt Options) int {
	if opt.Flows != nil {
		return len(opt.Flows)
	}
	return min(n, maxDrawnFlows)
}

// defaultBuckets is the bucket count of a run of n flows: 4000 for up to
// four, fewer beyond so the page stays small.
func defaultBuckets(n int) int {
	if n > 4 {
		return max(500, 16000/n)
	}
	return 4000
}

// Table is a table of figures the page shows under the summary, such as
// compare's metrics beside the kernel's.
type Table struct {
	Title string
	Head  []string
	Rows  [][]string
}

// AddTable shows t on the page.
func (b *Builder) AddTable(t Table) { b.tables = append(b.tables, t) }

// AddNote puts a note at the top of the page.
func (b *Builder) AddNote(n string) { b.notes = append(b.notes, n) }

// flow returns the accumulator of the flow named id, creating it, or nil
// for a flow whose panels the page does not draw (its rows are skipped).
func (b *Builder) flow(id string) *flowAcc {
	if i, ok := b.flowIdx[id]; ok {
		return b.flows[i]
	}
	if b.undrawn[id] {
		return nil
	}
	if b.opt.Flows != nil && !slices.Contains(b.opt.Flows, id) || b.opt.Flows == nil && len(b.flows) == maxDrawnFlows {
		b.undrawn[id] = true
		return nil
	}
	f := &flowAcc{id: id, g: b.g, first: -1, sigIdx: map[string]int{}}
	for _, m := range b.meta.Flows {
		if m.ID == id {
			f.cc, f.path = m.CC, m.Path
		}
	}
	if f.path.Bottleneck != "" {
		b.bott[f.path.Bottleneck] = true
	}
	b.flowIdx[id] = len(b.flows)
	b.flows = append(b.flows, f)
	return f
}

// queue returns the accumulator of direction name ("<link>/ab"), creating
// it. It keeps the series of the drawn flows' bottlenecks and of the first
// maxDrawnQueues directions besides, and of every direction the counts
// that say whether it queued or dropped.
func (b *Builder) queue(name string) *queueAcc {
	if i, ok := b.qIdx[name]; ok {
		return b.queues[i]
	}
	q := &queueAcc{name: name, g: b.g, drawn: b.bott[name] || b.drawnQueues < maxDrawnQueues}
	if q.drawn {
		b.drawnQueues++
	}
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

// Rows is the number of trace rows the builder has consumed (both runs', for a page that shows two).
func (b *Builder) Rows() int64 {
	n := b.rows
	if b.beside != nil {
		for _, r := range b.beside.runs {
			n += r.rows
		}
	}
	return n
}

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
	if f == nil {
		return
	}
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
	if f == nil {
		return
	}
	b := f.g.bucket(t)
	f.touch(b)
	if f.goodput == nil {
		f.goodput = make([]float64, f.g.n)
	}
	f.goodput[b] += float64(delivered) - f.prevDeliv
	f.prevDeliv, f.hasDeliv = float64(delivered), true
}

func (f *flowAcc) addEvent(t int64, k trace.EventKind) {
	if f == nil || int(k) >= len(f.events) {
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
	if f == nil {
		return
	}
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
	drawn                  bool   // its series are kept (Builder.queue); else its counts alone
}

// addLink takes a link row: the rate and delay from t on.
func (q *queueAcc) addLink(t, rateBps, delayPs int64) {
	if !q.drawn {
		return
	}
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
	q.seen = true
	q.has |= has
	if has&hasPkts != 0 {
		q.maxPkts = max(q.maxPkts, r.pkts)
	}
	if !q.drawn {
		if has&hasDrops != 0 {
			q.totalDrops = r.drops
		}
		if has&hasMarks != 0 {
			q.totalMarks = r.marks
		}
		return
	}
	if q.pkts == nil {
		q.pkts, q.kb, q.sojourn = newExtremes(q.g.n), newExtremes(q.g.n), newExtremes(q.g.n)
		q.drops, q.marks = make([]float64, q.g.n), make([]float64, q.g.n)
	}
	b := q.g.bucket(t)
	if has&hasPkts != 0 {
		q.pkts.add(b, t, float64(r.pkts))
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
