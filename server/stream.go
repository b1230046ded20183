package server

import (
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ccscope/ccscope/engine/trace"
)

// pushRows is the row count at which a table's pending records leave as one
// push: it keeps a push frame to a few megabytes.
const pushRows = trace.DefaultFlushRows

// tracer is a session's trace sink. Every flushed table is kept, as a copy
// of its columns, for the signals op and, when the table is subscribed,
// filtered into Arrow records waiting to be pushed.
type tracer struct {
	mem      memory.Allocator
	kept     map[string][]*trace.Recorder // each holds one flushed chunk of one table
	subs     map[string]trace.Filter
	pending  map[string][]arrow.Record
	keptRows int64
	maxKept  int64            // rows kept over all tables before the oldest go
	dropped  map[string]int64 // rows per table dropped to stay under maxKept
}

// arrowMem is the allocator of every session's record batches. It keeps
// up to 64 MiB of freed buffers over all sessions: a 20 s every-change
// flows table snapshot is about 17 MB.
var arrowMem = newReuseAllocator(64 << 20)

func newTracer(maxKept int64) *tracer {
	return &tracer{mem: arrowMem, kept: map[string][]*trace.Recorder{},
		subs: map[string]trace.Filter{}, pending: map[string][]arrow.Record{}, maxKept: maxKept,
		dropped: map[string]int64{}}
}

// trim drops table's oldest kept chunks while the session keeps more rows
// than maxKept, always keeping the newest chunk.
func (t *tracer) trim(table string) {
	for t.keptRows > t.maxKept && len(t.kept[table]) > 1 {
		n := int64(tableLen(t.kept[table][0], table))
		t.kept[table][0] = nil
		t.kept[table] = t.kept[table][1:]
		t.keptRows -= n
		t.dropped[table] += n
	}
}

// chunkOf copies one table of r into a recorder of its own.
func chunkOf(r *trace.Recorder, table string) *trace.Recorder {
	c := &trace.Recorder{}
	switch table {
	case trace.TableQueue:
		q := &r.Queue
		c.Queue = trace.QueueTable{T: slices.Clone(q.T), Link: slices.Clone(q.Link), DirAB: slices.Clone(q.DirAB),
			BacklogBytes: slices.Clone(q.BacklogBytes), BacklogPkts: slices.Clone(q.BacklogPkts),
			SojournPs: slices.Clone(q.SojournPs), Drops: slices.Clone(q.Drops), Marks: slices.Clone(q.Marks)}
	case trace.TableDelivery:
		d := &r.Delivery
		c.Delivery = trace.DeliveryTable{T: slices.Clone(d.T), Flow: slices.Clone(d.Flow), BytesDelivered: slices.Clone(d.BytesDelivered)}
	case trace.TableFlows:
		c.FlowsT = trace.FlowTable{Rows: slices.Clone(r.FlowsT.Rows)}
	case trace.TableSignals:
		g := &r.SignalT
		c.SignalT = trace.SignalTable{T: slices.Clone(g.T), Flow: slices.Clone(g.Flow), Signal: slices.Clone(g.Signal), Value: slices.Clone(g.Value)}
	case trace.TableEvents:
		e := &r.EventT
		c.EventT = trace.EventTable{T: slices.Clone(e.T), Flow: slices.Clone(e.Flow), Kind: slices.Clone(e.Kind), Seq: slices.Clone(e.Seq), Length: slices.Clone(e.Length)}
	case trace.TableLink:
		l := &r.LinkT
		c.LinkT = trace.LinkTable{T: slices.Clone(l.T), Link: slices.Clone(l.Link), DirAB: slices.Clone(l.DirAB),
			RateBps: slices.Clone(l.RateBps), DelayPs: slices.Clone(l.DelayPs)}
	}
	return c
}

// tableLen is the number of rows a recorder holds for table.
func tableLen(r *trace.Recorder, table string) int {
	switch table {
	case trace.TableQueue:
		return r.Queue.Len()
	case trace.TableDelivery:
		return r.Delivery.Len()
	case trace.TableFlows:
		return r.FlowsT.Len()
	case trace.TableSignals:
		return r.SignalT.Len()
	case trace.TableEvents:
		return r.EventT.Len()
	case trace.TableLink:
		return r.LinkT.Len()
	}
	return 0
}

// Flush keeps the table's rows and queues them for subscribers.
func (t *tracer) Flush(r *trace.Recorder, table string) error {
	if tableLen(r, table) == 0 {
		return nil
	}
	t.kept[table] = append(t.kept[table], chunkOf(r, table))
	t.keptRows += int64(tableLen(r, table))
	t.trim(table)
	f, ok := t.subs[table]
	if !ok {
		return nil
	}
	rec, err := r.BatchFiltered(table, t.mem, f)
	if err != nil {
		return err
	}
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	t.pending[table] = append(t.pending[table], rec)
	return nil
}

// hasPending reports whether rows wait to be pushed.
func (t *tracer) hasPending() bool {
	for _, p := range t.pending {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

// subscribed lists the subscribed tables in trace.Tables order.
func (t *tracer) subscribed() []string {
	out := []string{}
	for _, tb := range trace.Tables {
		if _, ok := t.subs[tb]; ok {
			out = append(out, tb)
		}
	}
	return out
}

// takePending removes and returns up to pushRows rows' worth of a table's
// pending records (at least one record).
func (t *tracer) takePending(table string) []arrow.Record {
	p := t.pending[table]
	var rows int64
	n := 0
	for n < len(p) && (n == 0 || rows+p[n].NumRows() <= pushRows) {
		rows += p[n].NumRows()
		n++
	}
	out := slices.Clone(p[:n])
	t.pending[table] = p[n:]
	if len(t.pending[table]) == 0 {
		t.pending[table] = p[:0]
	}
	return out
}

// unsubscribe drops a table's subscription and its undelivered rows.
func (t *tracer) unsubscribe(table string) {
	delete(t.subs, table)
	releaseAll(t.pending[table])
	delete(t.pending, table)
}

// chunks are table's rows recorded so far: the kept chunks, then r itself
// when it holds rows not yet flushed, each naming links, flows and signals
// as r does (names are interned append-only, so the live lists index every
// chunk).
func (t *tracer) chunks(r *trace.Recorder, table string) []*trace.Recorder {
	cs := t.kept[table]
	if tableLen(r, table) > 0 {
		cs = append(slices.Clip(cs), r)
	}
	for _, c := range cs {
		c.Links, c.Flows, c.Signals = r.Links, r.Flows, r.Signals
	}
	return cs
}

// snapshot builds every row of table recorded so far, filtered. The caller
// releases the records.
func (t *tracer) snapshot(r *trace.Recorder, table string, f trace.Filter) ([]arrow.Record, int64, error) {
	var recs []arrow.Record
	var rows int64
	for _, c := range t.chunks(r, table) {
		rec, err := c.BatchFiltered(table, t.mem, f)
		if err != nil {
			releaseAll(recs)
			return nil, 0, err
		}
		recs = append(recs, rec)
		rows += rec.NumRows()
	}
	return recs, rows, nil
}

// feed hands sink every row of every table recorded so far, table by
// table in time order (report reads them so).
func (t *tracer) feed(r *trace.Recorder, sink trace.Sink) error {
	for _, table := range trace.Tables {
		for _, c := range t.chunks(r, table) {
			if err := sink.Flush(c, table); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseAll releases every record of recs.
func releaseAll(recs []arrow.Record) {
	for _, rec := range recs {
		rec.Release()
	}
}

// ipcBound is a generous bound on the size of the IPC stream of recs: the
// column buffers, each padded to 8 bytes, plus room for the schema and each
// batch's metadata. Growing a frame to it up front writes the stream once,
// without the doublings and copies of a growing buffer.
func ipcBound(recs []arrow.Record) int {
	n := 4 << 10
	for _, rec := range recs {
		n += 1<<10 + 64*int(rec.NumCols())
		for _, col := range rec.Columns() {
			for _, buf := range col.Data().Buffers() {
				if buf != nil {
					n += buf.Len() + 8
				}
			}
		}
	}
	return n
}

// close releases every record.
func (t *tracer) close() {
	for _, l := range t.pending {
		releaseAll(l)
	}
	t.kept, t.pending = map[string][]*trace.Recorder{}, map[string][]arrow.Record{}
}
