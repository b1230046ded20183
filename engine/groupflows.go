package engine

import (
	"fmt"
	"slices"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Flows of a group (config.Group) can number in the thousands, most of them
// short. So that a run's memory follows the flows alive at once rather than
// all it will ever have, a group's TCP flows are built when they start and
// released when they finish: a flowStarter builds each at its start time
// (one re-armed timer for all of them, so the event queue does not grow
// with the flows waiting), and a finished flow keeps only its summary. Its
// ends' timers stop, events still scheduled for them reach nothing, and
// packets of it still in the network are freed on arrival. Flows listed one
// by one are built at the start of the run and kept, as before.

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
	}
}

// lazy reports whether flow f is built at its start and released when done.
func lazy(f config.Flow) bool {
	return f.Group != "" && f.CC != config.Pump && f.CC != config.Ping
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

// release keeps flow t's summary and drops everything else it holds. The
// CC's final signal values are kept as a slice beside names the run shares
// among the flows of a CC, and made a map again when the summary is asked
// for: a map per flow held some 500 bytes, about a quarter of what a
// finished flow kept.
func (t *tcpFlow) release() {
	r := t.run
	final := t.liveSummary(r.Sim.Now())
	t.final = &final
	names, vals := t.snd.CCSignals()
	t.ccNames, t.ccVals = r.shareNames(t.cfg.CC, names), vals
	r.Sim.Release(t.marks[0], t.marks[1])
	drop := discard{r.Pool}
	r.Net.Node(t.cfg.Src).Attach(t.idx, drop)
	r.Net.Node(t.cfg.Dst).Attach(t.idx, drop)
	t.snd, t.rcv = nil, nil
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
