package trace

import (
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// Sampler is one entity's clock in a sampled trace (a link direction's
// queue, a flow's state or deliveries, one CC signal of a flow): it
// records at most once per Interval. A row its interval skips is held,
// and written at the entity's next sample time if the entity records
// nothing by then: a queue that empties within an interval and stays
// empty, or a signal set twice in one, would otherwise keep showing the
// value it had left until its next change, for good at a run's end. The
// zero value is ready; the typed samplers embed it.
//
// A flow's rows are recorded as its events happen, so the recorder writes
// a held one as soon as any row of the run is recorded at or after its
// sample time (release), and each table stays in time order. A lazily
// served queue records its rows when it is caught up, after the fact
// (link.Dir.CatchUp), so its held row waits for its own next row, which
// writes it first, or for the run's end (ReleaseHeld): the queue table is
// in time order per direction.
type Sampler struct {
	next   sim.Time // when the entity may record next; while held, its row's time
	id     uint32   // order among held rows of one time: first held, first written
	held   bool     // a skipped row waits in the typed sampler
	queued bool     // on the recorder's heap (or list of queues) of held samplers
	force  bool     // the next row is written even within the interval
}

// Force has the entity's next row written even within its interval: a
// sized flow's rows end with its last byte.
func (s *Sampler) Force() { s.force = true }

// admit writes the rows held until now, then reports whether the entity's
// row at now is written now; if not, the caller holds it.
func (r *Recorder) admit(s *Sampler, now sim.Time) bool {
	if r.Detail != config.TraceSampled {
		return true
	}
	r.release(now)
	if !s.force && now < s.next {
		return false
	}
	s.next, s.held, s.force = now.Add(r.Interval), false, false
	return true
}

// QueueSampler samples a link direction's queue rows.
type QueueSampler struct {
	Sampler
	row QueueRow
}

// FlowSampler samples a flow's sender-state rows.
type FlowSampler struct {
	Sampler
	row FlowRow
}

// DeliverySampler samples a flow's delivery rows.
type DeliverySampler struct {
	Sampler
	flow      int32
	delivered int64
}

// SignalSampler samples one CC signal of a flow. shown is the value the
// table last took, so a signal that returns to it within the interval
// holds nothing.
type SignalSampler struct {
	Sampler
	flow, signal int32
	v, shown     float64
	seen         bool // shown is set
}

// heldRow is a flow's typed sampler, whose row the recorder may write
// later.
type heldRow interface {
	sampler() *Sampler
	write(r *Recorder, at sim.Time)
}

func (s *FlowSampler) sampler() *Sampler     { return &s.Sampler }
func (s *DeliverySampler) sampler() *Sampler { return &s.Sampler }
func (s *SignalSampler) sampler() *Sampler   { return &s.Sampler }

func (s *QueueSampler) write(r *Recorder, at sim.Time) {
	s.row.T = at
	r.appendQueue(&s.row)
}

func (s *FlowSampler) write(r *Recorder, at sim.Time) {
	s.row.T = at
	r.appendFlow(&s.row)
}

func (s *DeliverySampler) write(r *Recorder, at sim.Time) {
	r.appendDelivery(at, s.flow, s.delivered)
}

func (s *SignalSampler) write(r *Recorder, at sim.Time) {
	s.shown, s.seen = s.v, true
	r.appendSignal(at, s.flow, s.signal, s.v)
}

// hold puts a sampler whose row its interval skipped on the heap, keyed by
// its next sample time.
func (r *Recorder) hold(h heldRow) {
	s := h.sampler()
	s.held = true
	if !s.queued {
		if s.id == 0 {
			r.heldIDs++
			s.id = r.heldIDs
		}
		s.queued = true
		r.held.push(heldEntry{s.next, s.id, h})
	}
}

// holdQueue holds a queue's row until the queue's next row or the run's
// end (see Sampler).
func (r *Recorder) holdQueue(s *QueueSampler, row *QueueRow) {
	s.row, s.held = *row, true
	if !s.queued {
		s.queued = true
		r.heldQueues = append(r.heldQueues, s)
	}
}

// releaseQueue writes a queue's held row at its sample time once the
// queue records at or after it.
func (r *Recorder) releaseQueue(s *QueueSampler, now sim.Time) {
	if s.held && now >= s.next {
		s.write(r, s.next)
		s.next, s.held = s.next.Add(r.Interval), false
	}
}

// release writes every held flow row whose sample time has come by now, at
// that time. Every Record method calls it before it appends, so each
// table stays in time order: no row later than a held row's sample time
// is written before it.
func (r *Recorder) release(now sim.Time) {
	for len(r.held) > 0 && r.held[0].at <= now {
		e := r.held.pop()
		s := e.h.sampler()
		s.queued = false
		switch {
		case !s.held:
		case s.next > e.at: // it recorded since, and holds a later row
			s.queued = true
			r.held.push(heldEntry{s.next, s.id, e.h})
		default:
			e.h.write(r, s.next)
			s.next, s.held = s.next.Add(r.Interval), false
		}
	}
}

// ReleaseHeld writes every held row at its sample time or at end, whichever
// comes first: the state each entity is in when a run ends. Lazily served
// queues must be caught up to end first.
func (r *Recorder) ReleaseHeld(end sim.Time) {
	if !r.On() {
		return
	}
	r.release(end)
	for len(r.held) > 0 {
		e := r.held.pop()
		s := e.h.sampler()
		s.queued = false
		if s.held {
			e.h.write(r, min(s.next, end))
			s.held = false
		}
	}
	for _, s := range r.heldQueues {
		s.queued = false
		if s.held {
			s.write(r, min(s.next, end))
			s.held = false
		}
	}
	r.heldQueues = r.heldQueues[:0]
}

// heldEntry is a held sampler and the sample time it was queued for.
type heldEntry struct {
	at sim.Time
	id uint32
	h  heldRow
}

func (e *heldEntry) before(f *heldEntry) bool { return e.at < f.at || e.at == f.at && e.id < f.id }

// heldHeap is a binary min-heap of held samplers on their sample time, then
// the order they were first held in, so that rows of one time come out in
// the same order however the releases fall.
type heldHeap []heldEntry

func (q *heldHeap) push(e heldEntry) {
	*q = append(*q, e)
	a := *q
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&a[p]) {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = e
}

func (q *heldHeap) pop() heldEntry {
	a := *q
	top, last := a[0], a[len(a)-1]
	a[len(a)-1] = heldEntry{}
	a = a[:len(a)-1]
	*q = a
	if len(a) == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(a) {
			break
		}
		if c+1 < len(a) && a[c+1].before(&a[c]) {
			c++
		}
		if !a[c].before(&last) {
			break
		}
		a[i] = a[c]
		i = c
	}
	a[i] = last
	return top
}
