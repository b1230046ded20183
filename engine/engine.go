// Package engine assembles a run from a validated scenario — the network,
// its flows, scheduled changes and the trace — and drives it: step by events
// or by time, run to the end, apply actions, summarise.
package engine

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/ping"
	"github.com/ccscope/ccscope/engine/pump"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Version is the engine version stamped into checkpoints: runs replay bit for
// bit only on the same version.
const Version = "0.2.1"

// Flow is one flow of a run, as the engine sees it.
type Flow interface {
	// Summary reports the flow's end-of-run figures at time now.
	Summary(now sim.Time) FlowSummary
}

// Run is one simulation run.
type Run struct {
	Scenario *config.Scenario
	Sim      *sim.Sim
	Pool     *packet.Pool
	Net      *topo.Network
	Trace    *trace.Recorder
	Flows    []Flow

	horizon sim.Time
	clock   sim.Duration // the kernel clock's reading at time 0 (kernelClock)
	paths   pathTable
	queues  []*queueObs
	changes changer
	ccNames map[string][]string // by CC, the signal names released flows share
	rings   tcp.Recycler        // scoreboard rings released flows gave back
	// copies says some direction has sent or may send packets twice (a
	// duplicate model, built or set by an action): pumps then deliver each
	// packet once (pump.Config.Copies).
	copies bool
}

// New builds a run of scn. sink receives full trace tables (nil: they
// accumulate in Run.Trace).
func New(scn *config.Scenario, sink trace.Sink) (*Run, error) {
	r := &Run{Scenario: scn, Sim: sim.New(), Pool: &packet.Pool{}, horizon: sim.Time(scn.Runtime.Duration),
		clock: kernelClock(scn.Runtime)}
	r.Trace = trace.NewRecorder(scn.Trace.Detail, scn.Trace.Interval, sink)
	nw, err := topo.Build(r.Sim, r.Pool, scn)
	if err != nil {
		return nil, err
	}
	r.Net = nw
	for _, d := range nw.Dirs {
		r.copies = r.copies || d.Duplicates()
	}
	for _, l := range scn.Links {
		r.Trace.Links = append(r.Trace.Links, l.ID)
	}
	for i, d := range nw.Dirs {
		q := &queueObs{QueueRecorder: QueueRecorder{Trace: r.Trace, Link: int32(i / 2), AB: d.AB}, run: r}
		r.queues = append(r.queues, q)
		d.Observe(q)
		if r.Trace.On() {
			d.LogLink(&q.QueueRecorder)
		}
	}
	var later []*tcpFlow               // group flows, built when they start
	var legs1 []*tcpFlow               // second legs of flows split by proxies
	split := map[*config.Params]bool{} // settings with legs a proxy split (a group's are shared)
	for i, f := range scn.Flows {
		r.Trace.Flows = append(r.Trace.Flows, f.ID)
		px, err := SplitAt(nw, f)
		if err != nil {
			return nil, err
		}
		if px != nil {
			split[f.Params] = true
			next := int32(len(scn.Flows) + len(legs1))
			l0, l1, err := r.splitFlow(int32(i), next, f, px)
			if err != nil {
				return nil, fmt.Errorf("engine: flows[%s]: %w", f.ID, err)
			}
			r.Trace.Flows[i] = l0.cfg.ID
			r.Flows = append(r.Flows, l0)
			r.paths.add(nw, l0.cfg)
			legs1 = append(legs1, l1)
			continue
		}
		fl, err := r.newFlow(int32(i), &scn.Flows[i])
		if err != nil {
			return nil, fmt.Errorf("engine: flows[%s]: %w", f.ID, err)
		}
		if t, ok := fl.(*tcpFlow); ok && t.snd == nil {
			later = append(later, t)
		}
		r.Flows = append(r.Flows, fl)
		r.paths.add(nw, &scn.Flows[i])
	}
	if err := unsplitLegs(scn.Flows, split); err != nil {
		return nil, err
	}
	for _, l1 := range legs1 {
		r.Trace.Flows = append(r.Trace.Flows, l1.cfg.ID)
		r.Flows = append(r.Flows, l1)
		r.paths.add(nw, l1.cfg)
	}
	if len(later) > 0 {
		newFlowStarter(r, later)
	}
	r.changes.init(r)
	return r, nil
}

// Path is flow i's path as the scenario built it (see PathFacts).
func (r *Run) Path(i int) PathFacts { return r.paths.facts[r.paths.of[i]] }

// pathTable holds each flow's path facts, as built, once for each pair of
// ends: a group's thousands of flows share a few pairs.
type pathTable struct {
	of    []int32 // by flow index, into facts
	facts []PathFacts
	index map[[2]int32]int32 // by source and destination node, into facts
}

// add measures the path of the next flow, f, in the freshly built network.
func (t *pathTable) add(nw *topo.Network, f *config.Flow) {
	ends := [2]int32{nw.Node(f.Src).Index, nw.Node(f.Dst).Index}
	i, ok := t.index[ends]
	if !ok {
		if t.index == nil {
			t.index = map[[2]int32]int32{}
		}
		i = int32(len(t.facts))
		t.facts = append(t.facts, pathFacts(nw, ends[0], ends[1]))
		t.index[ends] = i
	}
	t.of = append(t.of, i)
}

// pathFacts measures the path from node src to node dst.
func pathFacts(nw *topo.Network, src, dst int32) PathFacts {
	var p PathFacts
	for _, d := range nw.Path(src, dst) {
		if p.Bottleneck == "" || int64(d.Rate()) < p.BottleneckBps {
			p.BottleneckBps, p.Bottleneck = int64(d.Rate()), d.Name
		}
	}
	rtt := nw.BaseRTT(src, dst)
	p.BaseRTTPs = int64(rtt)
	p.BDPBytes = int64(units.BytesIn(units.BitRate(p.BottleneckBps), rtt))
	return p
}

// pumpECN maps a pump's configured codepoint to the IP field.
var pumpECN = [...]packet.ECN{config.NotECT: packet.NotECT, config.ECT0: packet.ECT0, config.ECT1: packet.ECT1}

func (r *Run) newFlow(idx int32, f *config.Flow) (Flow, error) {
	src, dst := r.Net.Node(f.Src), r.Net.Node(f.Dst)
	if f.CC == "pump" {
		p := pump.New(r.Sim, r.Pool, src, r.Trace, pump.Config{
			Flow: idx, Src: src.Index, Dst: dst.Index, Rate: f.Rate, PacketSize: f.PacketSize,
			Start: sim.Time(f.Start), Size: f.Size, ECN: pumpECN[f.ECN], Copies: r.copies,
		})
		dst.Attach(idx, p)
		return pumpFlow{p, *f}, nil
	}
	if f.CC == config.Ping {
		return pingFlow{NewPing(r.Sim, r.Pool, r.Net, r.Trace, idx, *f), *f}, nil
	}
	return r.newTCPFlow(idx, f)
}

// NewPing sets up ping flow f, flow index idx, on nw: the probe at its
// source and the echo at its destination. The emulator runs its ping flows
// with it too.
func NewPing(s *sim.Sim, pool *packet.Pool, nw *topo.Network, rec *trace.Recorder, idx int32, f config.Flow) *ping.Probe {
	src, dst := nw.Node(f.Src), nw.Node(f.Dst)
	p := ping.New(s, pool, src, rec, ping.Config{
		Flow: idx, Src: src.Index, Dst: dst.Index, Interval: f.Interval,
		PacketSize: f.PacketSize, Start: sim.Time(f.Start),
	})
	src.Attach(idx, p)
	dst.Attach(idx, ping.Echo{Pool: pool, Out: dst})
	return p
}

// Now is the current simulated time.
func (r *Run) Now() sim.Time { return r.Sim.Now() }

// Horizon is the time the run ends.
func (r *Run) Horizon() sim.Time { return r.horizon }

// Done reports whether the run reached its horizon.
func (r *Run) Done() bool {
	return r.Sim.Now() >= r.horizon
}

// RunUntil advances to time t (capped at the horizon).
func (r *Run) RunUntil(t sim.Time) {
	r.Sim.RunUntil(min(t, r.horizon))
	r.catchUpLinks()
	r.releaseAtEnd()
}

// StepEvents dispatches up to n events that fall before the horizon and
// reports how many it dispatched.
func (r *Run) StepEvents(n uint64) uint64 {
	done := r.Sim.StepUntil(n, r.horizon)
	if r.Sim.NextAt() > r.horizon {
		r.Sim.RunUntil(r.horizon)
	}
	r.catchUpLinks()
	r.releaseAtEnd()
	return done
}

// RunToEnd runs to the horizon and flushes the trace.
func (r *Run) RunToEnd() {
	r.Sim.RunUntil(r.horizon)
	r.catchUpLinks()
	r.releaseAtEnd()
	r.Trace.FlushAll()
}

// releaseAtEnd writes the rows a sampled trace holds (trace.Sampler) once
// the run has reached its horizon, however it was stepped there.
func (r *Run) releaseAtEnd() {
	if r.Sim.Now() >= r.horizon && r.Sim.NextAt() > r.horizon {
		r.Trace.ReleaseHeld(r.horizon)
	}
}

// catchUpLinks brings every lazily served link direction up to now (see
// link.Dir.CatchUp), so that whatever reads the run between steps — a
// summary, an observation, the trace, a checkpoint — sees each queue and
// its counters as they are at now. It schedules nothing: the events and
// the digest do not depend on where a run was stopped.
func (r *Run) catchUpLinks() {
	for _, d := range r.Net.Dirs {
		d.CatchUp()
	}
}

// QueueRecorder records one link direction's queue: a queue-table row per
// change of its backlog, and the sojourn times the summary's quantiles
// come from. The engine's observer embeds it, and so does the emulator's,
// so a simulated and an emulated run fill the queue table alike.
type QueueRecorder struct {
	Trace   *trace.Recorder
	Link    int32 // index into the trace's links
	AB      bool
	Sojourn trace.Hist // every dequeued packet's sojourn, in ps
	smp     trace.QueueSampler
}

// Enqueued records the backlog after an enqueue.
func (q *QueueRecorder) Enqueued(d *link.Dir, now sim.Time) {
	if q.Trace.On() {
		q.record(d, now, 0)
	}
}

// Dequeued records the backlog after a dequeue and the packet's sojourn.
// Both run for every packet of every link: without a trace they cost the
// histogram's count and one test, no call.
func (q *QueueRecorder) Dequeued(d *link.Dir, now sim.Time, sojourn sim.Duration) {
	q.Sojourn.Add(int64(sojourn))
	if q.Trace.On() {
		q.record(d, now, sojourn)
	}
}

// LinkChanged writes a link row (link.LinkLogger).
func (q *QueueRecorder) LinkChanged(d *link.Dir, at sim.Time, rate units.BitRate, delay sim.Duration) {
	q.Trace.RecordLink(at, q.Link, q.AB, int64(rate), delay)
}

// record writes a queue row; the trace is on.
func (q *QueueRecorder) record(d *link.Dir, now sim.Time, sojourn sim.Duration) {
	b, n := d.Qdisc().Backlog()
	q.Trace.RecordQueue(&q.smp, &trace.QueueRow{T: now, Link: q.Link, DirAB: q.AB, BacklogBytes: int64(b),
		BacklogPkts: int64(n), Sojourn: sojourn, Drops: d.Stats.Drops, Marks: d.Stats.Marks})
}

// queueObs records a direction's queue activity for the trace and summary,
// and tells flows of their drops.
type queueObs struct {
	QueueRecorder
	run *Run
}

func (q *queueObs) Dropped(d *link.Dir, now sim.Time, id packet.ID, onWire bool) {
	p := q.run.Pool.Get(id)
	q.run.Trace.RecordEvent(now, p.Flow, trace.EvDrop, int64(p.Seq), int32(p.Len))
	if n, ok := q.run.Flows[p.Flow].(dropNotifier); ok {
		n.NoteDrop(id)
	}
}

func (q *queueObs) Marked(d *link.Dir, now sim.Time, id packet.ID) {
	p := q.run.Pool.Get(id)
	q.run.Trace.RecordEvent(now, p.Flow, trace.EvECNMark, int64(p.Seq), int32(p.Len))
}

// dropNotifier is a flow that wants to know of its dropped packets (for
// ground-truth loss counts).
type dropNotifier interface{ NoteDrop(id packet.ID) }
