package trace

import (
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// QueueTable holds queue state: one row per change of a direction's backlog
// (a packet that passes an idle link yields one row, at its dequeue).
type QueueTable struct {
	T            []int64 // t_ps
	Link         []int32 // index into Recorder.Links
	DirAB        []bool  // true: the a→b direction
	BacklogBytes []int64
	BacklogPkts  []int64
	SojournPs    []int64 // of the packet just dequeued; 0 on enqueue
	Drops        []uint64
	Marks        []uint64
}

func (t *QueueTable) reset() {
	*t = QueueTable{T: t.T[:0], Link: t.Link[:0], DirAB: t.DirAB[:0], BacklogBytes: t.BacklogBytes[:0], BacklogPkts: t.BacklogPkts[:0], SojournPs: t.SojournPs[:0], Drops: t.Drops[:0], Marks: t.Marks[:0]}
}

// Len is the number of rows.
func (t *QueueTable) Len() int { return len(t.T) }

// QueueRow is one row of the queue table.
type QueueRow struct {
	T            sim.Time
	Link         int32
	DirAB        bool
	BacklogBytes int64
	BacklogPkts  int64
	Sojourn      sim.Duration
	Drops, Marks uint64
}

// RecordQueue appends a queue row, or holds it for the direction's next
// sample (Sampler). The row comes by pointer: passed by value, its 64
// bytes were copied on every enqueue and dequeue of every link direction.
func (r *Recorder) RecordQueue(s *QueueSampler, row *QueueRow) {
	if r.skip[iQueue] || !r.On() {
		return
	}
	if r.Detail == config.TraceSampled {
		r.releaseQueue(s, row.T)
	}
	if !r.admit(&s.Sampler, row.T) {
		r.holdQueue(s, row)
		return
	}
	r.appendQueue(row)
}

func (r *Recorder) appendQueue(row *QueueRow) {
	q := &r.Queue
	q.T = append(q.T, int64(row.T))
	q.Link = append(q.Link, row.Link)
	q.DirAB = append(q.DirAB, row.DirAB)
	q.BacklogBytes = append(q.BacklogBytes, row.BacklogBytes)
	q.BacklogPkts = append(q.BacklogPkts, row.BacklogPkts)
	q.SojournPs = append(q.SojournPs, int64(row.Sojourn))
	q.Drops = append(q.Drops, row.Drops)
	q.Marks = append(q.Marks, row.Marks)
	r.maybeFlush(TableQueue, len(q.T))
}

// LinkTable holds each link direction's service rate and propagation delay,
// one row whenever either changes (a capacity process's state or dip, an
// outage, a scheduled change) and one when recording starts. The rate is 0
// while an outage holds the direction down; a trace-driven direction
// gives its trace's mean rate (the trace itself is its schedule).
type LinkTable struct {
	T       []int64 // t_ps
	Link    []int32 // index into Recorder.Links
	DirAB   []bool  // true: the a→b direction
	RateBps []int64
	DelayPs []int64
}

func (t *LinkTable) reset() {
	*t = LinkTable{T: t.T[:0], Link: t.Link[:0], DirAB: t.DirAB[:0], RateBps: t.RateBps[:0], DelayPs: t.DelayPs[:0]}
}

// Len is the number of rows.
func (t *LinkTable) Len() int { return len(t.T) }

// RecordLink appends a link row. Rows are few, so every detail but summary
// records each one: sampling could drop the end of an outage.
func (r *Recorder) RecordLink(at sim.Time, link int32, ab bool, rate int64, delay sim.Duration) {
	if r.skip[iLink] || !r.On() {
		return
	}
	l := &r.LinkT
	l.T = append(l.T, int64(at))
	l.Link = append(l.Link, link)
	l.DirAB = append(l.DirAB, ab)
	l.RateBps = append(l.RateBps, rate)
	l.DelayPs = append(l.DelayPs, int64(delay))
	r.maybeFlush(TableLink, len(l.T))
}

// DeliveryTable holds per-flow cumulative payload bytes delivered.
type DeliveryTable struct {
	T              []int64
	Flow           []int32
	BytesDelivered []int64
}

func (t *DeliveryTable) reset() {
	*t = DeliveryTable{T: t.T[:0], Flow: t.Flow[:0], BytesDelivered: t.BytesDelivered[:0]}
}

// Len is the number of rows.
func (t *DeliveryTable) Len() int { return len(t.T) }

// RecordDelivery appends a delivery row, or holds it for the flow's next
// sample (Sampler).
func (r *Recorder) RecordDelivery(s *DeliverySampler, now sim.Time, flow int32, delivered int64) {
	if r.skip[iDelivery] || !r.On() {
		return
	}
	if !r.admit(&s.Sampler, now) {
		s.flow, s.delivered = flow, delivered
		r.hold(s)
		return
	}
	r.appendDelivery(now, flow, delivered)
}

func (r *Recorder) appendDelivery(now sim.Time, flow int32, delivered int64) {
	d := &r.Delivery
	d.T = append(d.T, int64(now))
	d.Flow = append(d.Flow, flow)
	d.BytesDelivered = append(d.BytesDelivered, delivered)
	r.maybeFlush(TableDelivery, len(d.T))
}

// FlowRow is one sample of a TCP sender's state.
type FlowRow struct {
	T               sim.Time
	Flow            int32
	CwndPkts        uint32
	SSThreshPkts    uint32
	InflightBytes   int64
	InflightPkts    uint32
	SRTT, RTTVar    sim.Duration
	MinRTT          sim.Duration
	PacingRateBps   int64
	DeliveryRateBps int64
	Delivered       uint64 // packets
	Lost            uint64 // packets
	Retrans         uint64 // packets
	CAState         uint8
}

// FlowTable holds per-flow sender state.
type FlowTable struct {
	Rows []FlowRow
}

func (t *FlowTable) reset() { t.Rows = t.Rows[:0] }

// Len is the number of rows.
func (t *FlowTable) Len() int { return len(t.Rows) }

// RecordFlow appends a sender-state row, or holds it for the flow's next
// sample (Sampler).
func (r *Recorder) RecordFlow(s *FlowSampler, row *FlowRow) {
	if r.skip[iFlows] || !r.On() {
		return
	}
	if !r.admit(&s.Sampler, row.T) {
		s.row = *row
		r.hold(s)
		return
	}
	r.appendFlow(row)
}

func (r *Recorder) appendFlow(row *FlowRow) {
	r.FlowsT.Rows = append(r.FlowsT.Rows, *row)
	r.maybeFlush(TableFlows, len(r.FlowsT.Rows))
}

// SignalTable holds CC-registered signals in long format.
type SignalTable struct {
	T      []int64
	Flow   []int32
	Signal []int32 // index into Recorder.Signals
	Value  []float64
}

func (t *SignalTable) reset() {
	*t = SignalTable{T: t.T[:0], Flow: t.Flow[:0], Signal: t.Signal[:0], Value: t.Value[:0]}
}

// Len is the number of rows.
func (t *SignalTable) Len() int { return len(t.T) }

// RecordSignal appends a signal's new value, or holds it for the
// signal's next sample (Sampler); a value equal to the one the table shows
// holds nothing.
func (r *Recorder) RecordSignal(s *SignalSampler, now sim.Time, flow, signal int32, v float64) {
	if r.skip[iSignals] || !r.On() {
		return
	}
	if !r.admit(&s.Sampler, now) {
		if s.seen && v == s.shown {
			s.held = false
			return
		}
		s.flow, s.signal, s.v = flow, signal, v
		r.hold(s)
		return
	}
	s.shown, s.seen = v, true
	r.appendSignal(now, flow, signal, v)
}

func (r *Recorder) appendSignal(now sim.Time, flow, signal int32, v float64) {
	s := &r.SignalT
	s.T = append(s.T, int64(now))
	s.Flow = append(s.Flow, flow)
	s.Signal = append(s.Signal, signal)
	s.Value = append(s.Value, v)
	r.maybeFlush(TableSignals, len(s.T))
}

// MergeSignals adds rows that were recorded apart from the run's clock (an
// emulated run's kernel CC state, read by a tracer of its own) to the
// signals table, which stays sorted by time; add must be sorted by time.
// At equal times the rows already there come first.
func (r *Recorder) MergeSignals(add *SignalTable) {
	if r.skip[iSignals] || r.Detail == config.TraceSummary || add.Len() == 0 {
		return
	}
	s, n := &r.SignalT, r.SignalT.Len()+add.Len()
	m := SignalTable{T: make([]int64, 0, n), Flow: make([]int32, 0, n), Signal: make([]int32, 0, n), Value: make([]float64, 0, n)}
	for i, j := 0, 0; i < s.Len() || j < add.Len(); {
		from, k := s, i
		if i == s.Len() || j < add.Len() && add.T[j] < s.T[i] {
			from, k = add, j
			j++
		} else {
			i++
		}
		m.T = append(m.T, from.T[k])
		m.Flow = append(m.Flow, from.Flow[k])
		m.Signal = append(m.Signal, from.Signal[k])
		m.Value = append(m.Value, from.Value[k])
	}
	r.SignalT = m
}

// EventKind is a discrete event in the events table.
type EventKind uint8

// Event kinds.
const (
	EvAck EventKind = iota
	EvSack
	EvDSack
	EvTLP
	EvRTO
	EvRetransmit
	EvDrop
	EvECNMark
	EvRecoveryEnter
	EvRecoveryExit
	EvUndo
	EvSend
	EvLoss        // marked lost by the sender
	EvWindowProbe // a zero-window probe (tcp_send_probe0)
)

// EventKindNames are the events' names in traces, indexed by EventKind.
var EventKindNames = [...]string{"ack", "sack", "dsack", "tlp", "rto", "retransmit", "drop", "ecn_mark",
	"recovery_enter", "recovery_exit", "undo", "send", "loss", "window_probe"}

// EventTable holds discrete events.
type EventTable struct {
	T      []int64
	Flow   []int32
	Kind   []EventKind
	Seq    []int64
	Length []int32
}

func (t *EventTable) reset() {
	*t = EventTable{T: t.T[:0], Flow: t.Flow[:0], Kind: t.Kind[:0], Seq: t.Seq[:0], Length: t.Length[:0]}
}

// Len is the number of rows.
func (t *EventTable) Len() int { return len(t.T) }

// RecordEvent appends an event; events are recorded at change detail only.
func (r *Recorder) RecordEvent(now sim.Time, flow int32, kind EventKind, seq int64, length int32) {
	if r.skip[iEvents] || r.Detail != config.TraceChange {
		return
	}
	e := &r.EventT
	e.T = append(e.T, int64(now))
	e.Flow = append(e.Flow, flow)
	e.Kind = append(e.Kind, kind)
	e.Seq = append(e.Seq, seq)
	e.Length = append(e.Length, length)
	r.maybeFlush(TableEvents, len(e.T))
}
