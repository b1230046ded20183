package engine

import (
	"fmt"
	"slices"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/rcvpath"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
)

// Flows of a group (config.Group) can number in the thousands, most of them
// short. So that a run's memory follows the flows alive at once rather than
// all it will ever have, a group's TCP flows are built when they start and
// released when they finish: a flowStarter builds each at its start time
// (one re-armed timer for all of them, so the event queue does not grow
// with the flows waiting), and a finished flow keeps only its summary. Its
// ends' timers stop, their slots in the simulation go to the next flow
// built (sim.Owned), and packets of it still in the network are freed on
// arrival. Flows listed one by one are built at the start of the run and
// kept, as before.

// flowStarter builds the pending group flows in order of (start, index).
type flowStarter struct {
	run   *Run
	order []*tcpFlow
	next  int
	timer *sim.Timer
}

const kindStartFlow sim.Kind = 1

// newFlowStarter schedules the building of flows, which have not started.
func newFlowStarter(r *Run, flows []*tcpFlow) *flowStarter {
	fs := &flowStarter{run: r, order: flows}
	slices.SortStableFunc(fs.order, func(a, b *tcpFlow) int {
		switch {
		case a.cfg.Start < b.cfg.Start:
			return -1
		case a.cfg.Start > b.cfg.Start:
			return 1
		}
		return 0
	})
	fs.timer = r.Sim.NewTimer(r.Sim.Register(fs, "flow-starter"), kindStartFlow)
	fs.timer.Arm(sim.Time(fs.order[0].cfg.Start))
	return fs
}

// Handle builds every flow due now and re-arms for the next.
func (fs *flowStarter) Handle(ev sim.Event) {
	for fs.next < len(fs.order) && sim.Time(fs.order[fs.next].cfg.Start) <= ev.At {
		t := fs.order[fs.next]
		fs.order[fs.next] = nil
		fs.next++
		if err := t.build(); err != nil {
			panic(fmt.Sprintf("engine: flow %s: %v (validated at New)", t.cfg.ID, err))
		}
	}
	if fs.next < len(fs.order) {
		fs.timer.Arm(sim.Time(fs.order[fs.next].cfg.Start))
	} else {
		fs.run.rings.Close() // the last has started
	}
}

// lazy reports whether flow f is built at its start and released when done.
func lazy(f *config.Flow) bool {
	return f.Group != "" && f.CC != config.Pump && f.CC != config.Ping
}

// recycler is where flow f's sender borrows its scoreboard ring: the run's
// Recycler for a flow released when done, which gives it back, else none.
func (r *Run) recycler(f *config.Flow) *tcp.Recycler {
	if lazy(f) {
		return &r.rings
	}
	return nil
}

// senderEnd is the sending node's hook for a released-when-done flow: it
// hands the ACK to the sender, then releases the flow once the sender has
// had its last byte acknowledged.
type senderEnd struct{ t *tcpFlow }

func (h senderEnd) Receive(id packet.ID) {
	t := h.t
	t.snd.Receive(id)
	if t.snd.Stats.Done != 0 {
		t.release()
	}
}

// release puts flow t's summary in its place among the run's flows
// (doneFlow) and drops everything else it holds.
func (t *tcpFlow) release() {
	r := t.run
	names, vals := t.snd.CCSignals()
	r.Flows[t.idx] = &doneFlow{cfg: t.cfg, final: packSummary(t.liveSummary(r.Sim.Now())),
		ccNames: r.shareNames(t.cfg.CC, names), ccVals: vals}
	r.Sim.Release(&t.owned)
	t.snd.Recycle()
	// The receive-path models' timers went with the flow's: what they
	// hold is dropped, as the flow's packets still in the network are
	// when they arrive.
	for _, m := range t.rcvModels {
		rcvpath.Discard(m, r.Pool.Free)
	}
	t.rcvModels = nil
	drop := discard{r.Pool}
	r.Net.Node(t.cfg.Src).Attach(t.idx, drop)
	r.Net.Node(t.cfg.Dst).Attach(t.idx, drop)
	t.snd, t.rcv = nil, nil
}

// doneFlow is a released flow: its summary, kept as values (finalSummary),
// and its CC's final signal values as a slice beside names the run shares
// among the flows of a CC, made a map again when the summary is asked for
// (a map per flow held some 500 bytes). About 160 bytes, where the flow's
// tcpFlow and its summary took 300.
type doneFlow struct {
	cfg     *config.Flow
	final   finalSummary
	ccNames []string // Run.shareNames
	ccVals  []float64
}

func (d *doneFlow) Summary(sim.Time) FlowSummary {
	s := d.final.unpack(d.cfg)
	s.CCFinal = cc.FinalValues(d.ccNames, d.ccVals)
	return s
}

// Act refuses: the flow has finished.
func (d *doneFlow) Act(Action) error { return notRunning(d.cfg) }

// notRunning is the error of an action on group flow f while it has no ends.
func notRunning(f *config.Flow) error {
	return fmt.Errorf("engine: flow %q is not running (it has not started, or has finished)", f.ID)
}

// finalSummary is what a released flow keeps of its FlowSummary: the
// optional values as values, not as pointers that were each an allocation
// of their own, and nothing the flow's configuration gives again (its id,
// kind and CC): about 100 bytes, against some 270 for a FlowSummary and
// its values.
type finalSummary struct {
	sent, delivered int64
	opt             [10]int64 // FlowSummary.optional's values
	set             uint16    // bit i: opt[i] is present
	rcvPath         *rcvpath.Stats
}

// optional lists s's optional values, for finalSummary: every *int64 field
// (TestFinalSummaryKeepsEverything).
func (s *FlowSummary) optional() [10]**int64 {
	return [...]**int64{&s.GoodputBps, &s.Retransmits, &s.T10MBPs, &s.T100MBPs, &s.RTTP50Ps, &s.RTTP99Ps,
		&s.FCTPs, &s.ProbesSent, &s.ProbesReceived, &s.AbortedPs}
}

// packSummary keeps s as a released flow does: all of it but its id, kind,
// CC, path facts and CC values, which the flow's configuration, the run and
// the flow's CC values give again.
func packSummary(s FlowSummary) finalSummary {
	f := finalSummary{sent: s.BytesSent, delivered: s.BytesDelivered, rcvPath: s.RcvPath}
	for i, p := range s.optional() {
		if *p != nil {
			f.opt[i], f.set = **p, f.set|1<<i
		}
	}
	return f
}

// unpack is the summary packSummary kept, of TCP flow cfg.
func (f finalSummary) unpack(cfg *config.Flow) FlowSummary {
	s := FlowSummary{ID: cfg.ID, Kind: "tcp", CC: cfg.CC, CCParams: cfg.CCParams, BytesSent: f.sent, BytesDelivered: f.delivered, RcvPath: f.rcvPath}
	for i, p := range s.optional() {
		if f.set&(1<<i) != 0 {
			*p = ptr(f.opt[i])
		}
	}
	return s
}

// shareNames returns the names of CC alg's signals, the same slice for every
// flow whose CC defined the same ones.
func (r *Run) shareNames(alg string, names []string) []string {
	if n, ok := r.ccNames[alg]; ok && slices.Equal(n, names) {
		return n
	}
	if r.ccNames == nil {
		r.ccNames = map[string][]string{}
	}
	r.ccNames[alg] = names
	return names
}

// discard frees the packets of a finished flow still in the network.
type discard struct{ pool *packet.Pool }

func (d discard) Receive(id packet.ID) { d.pool.Free(id) }
