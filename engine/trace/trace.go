// Package trace records a run's signals into columnar tables that leave as
// Arrow record batches: queue state, per-flow delivery, per-flow sender
// state, CC-registered signals (long format), discrete events, and the
// links' rate and delay as they change.
//
// Rows are appended to plain Go column slices (no per-row allocation once a
// table has grown). When a table reaches its flush size the recorder hands it
// to the Sink and starts it afresh, so a long run's memory stays bounded.
package trace

import (
	"errors"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// Table names, as they appear in files and on the wire.
const (
	TableQueue    = "queue"
	TableDelivery = "delivery"
	TableFlows    = "flows"
	TableSignals  = "signals"
	TableEvents   = "events"
	TableLink     = "link"
)

// Sink receives full tables. It must copy what it keeps: the recorder resets
// the table after Flush returns.
type Sink interface {
	Flush(r *Recorder, table string) error
}

// Tee is a sink that hands each flushed table to sinks in order before the
// recorder clears it, and joins their errors. A sink that takes the
// table's columns (FileSink) must come last.
func Tee(sinks ...Sink) Sink { return tee(sinks) }

type tee []Sink

func (t tee) Flush(r *Recorder, table string) error {
	var errs []error
	for _, s := range t {
		if err := s.Flush(r, table); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Recorder owns a run's trace tables.
type Recorder struct {
	Detail   config.TraceDetail
	Interval sim.Duration

	Links   []string // link names, indexed by QueueTable.Link and LinkTable.Link
	Flows   []string // flow ids, indexed by the Flow columns
	Signals []string // signal names, indexed by SignalTable.Signal

	Queue    QueueTable
	Delivery DeliveryTable
	FlowsT   FlowTable
	SignalT  SignalTable
	EventT   EventTable
	LinkT    LinkTable

	held       heldHeap        // flows' samplers whose skipped rows wait for their sample time
	heldQueues []*QueueSampler // queues' samplers that have held a row since the last ReleaseHeld
	heldIDs    uint32          // Sampler.id's last
	sink       Sink
	skip       [len(Tables)]bool // tables the sink does not write: not recorded
	flushRows  int
	err        error // sticky first sink error
}

// DefaultFlushRows is the table size at which a recorder with a sink flushes.
const DefaultFlushRows = 1 << 16

// NewRecorder returns a recorder at the given detail. With a nil sink tables
// accumulate in memory: flushing keeps them.
func NewRecorder(detail config.TraceDetail, interval sim.Duration, sink Sink) *Recorder {
	r := &Recorder{Detail: detail, Interval: interval, flushRows: DefaultFlushRows}
	r.SetSink(sink)
	return r
}

// tableChooser is a sink that writes only some tables (a FileSink with a
// Selection): the recorder skips the others.
type tableChooser interface{ wants(i int) bool }

// On reports whether the recorder records time series at all.
func (r *Recorder) On() bool { return r != nil && r.Detail != config.TraceSummary }

// Err is the first error the sink returned.
func (r *Recorder) Err() error { return r.err }

// SetSink replaces the sink (nil: accumulate).
func (r *Recorder) SetSink(s Sink) {
	r.sink = s
	tc, _ := s.(tableChooser)
	for i := range r.skip {
		r.skip[i] = tc != nil && !tc.wants(i)
	}
}

// SignalIndex interns a signal name.
func (r *Recorder) SignalIndex(name string) int32 {
	for i, s := range r.Signals {
		if s == name {
			return int32(i)
		}
	}
	r.Signals = append(r.Signals, name)
	return int32(len(r.Signals) - 1)
}

func (r *Recorder) maybeFlush(table string, rows int) {
	if r.sink == nil || rows < r.flushRows {
		return
	}
	r.FlushTable(table)
}

// FlushTable hands a table to the sink and clears it. Without a sink it does
// nothing, so a run's trace stays readable after RunToEnd.
func (r *Recorder) FlushTable(table string) {
	if r.sink == nil {
		return
	}
	if r.err == nil {
		if err := r.sink.Flush(r, table); err != nil {
			r.err = err
		}
	}
	switch table {
	case TableQueue:
		r.Queue.reset()
	case TableDelivery:
		r.Delivery.reset()
	case TableFlows:
		r.FlowsT.reset()
	case TableSignals:
		r.SignalT.reset()
	case TableEvents:
		r.EventT.reset()
	case TableLink:
		r.LinkT.reset()
	}
}

// FlushAll flushes every table, e.g. at the end of a run.
func (r *Recorder) FlushAll() {
	for _, t := range Tables {
		r.FlushTable(t)
	}
}

// tableSet is spare column storage for every table. A sink that writes on
// a goroutine of its own takes a flushed table's storage from the recorder
// in exchange for a spare one (swapTable), so the recorder goes on
// appending while the batch that borrows the old columns is written.
type tableSet struct {
	queue    QueueTable
	delivery DeliveryTable
	flows    FlowTable
	signals  SignalTable
	events   EventTable
	link     LinkTable
}

// swapTable exchanges the recorder's storage of table Tables[i] with t's.
func (r *Recorder) swapTable(i int, t *tableSet) {
	switch Tables[i] {
	case TableQueue:
		r.Queue, t.queue = t.queue, r.Queue
	case TableDelivery:
		r.Delivery, t.delivery = t.delivery, r.Delivery
	case TableFlows:
		r.FlowsT, t.flows = t.flows, r.FlowsT
	case TableSignals:
		r.SignalT, t.signals = t.signals, r.SignalT
	case TableEvents:
		r.EventT, t.events = t.events, r.EventT
	case TableLink:
		r.LinkT, t.link = t.link, r.LinkT
	}
}

// reset empties t's storage of table Tables[i], keeping its capacity.
func (t *tableSet) reset(i int) {
	switch Tables[i] {
	case TableQueue:
		t.queue.reset()
	case TableDelivery:
		t.delivery.reset()
	case TableFlows:
		t.flows.reset()
	case TableSignals:
		t.signals.reset()
	case TableEvents:
		t.events.reset()
	case TableLink:
		t.link.reset()
	}
}
