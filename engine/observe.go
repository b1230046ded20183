package engine

import (
	"slices"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Observation is a TCP flow's state at one instant: the sender's row of the
// flows table (its T is the simulation clock, not the sender's last
// update) and the payload bytes its receiver's application got in order.
// It is what a learned CC observes after each step.
type Observation struct {
	trace.FlowRow
	BytesDelivered units.Bytes
}

// Observe returns flow id's observation now (id as FlowIndex takes it); ok
// is false when there is no such flow or it is not a TCP flow. A group's
// flow has no ends before it starts and after it finishes (groupflows.go):
// it observes as zeros then, but for the bytes it delivered.
func (r *Run) Observe(id string) (obs Observation, ok bool) {
	i, ok := r.FlowIndex(id)
	if !ok {
		return obs, false
	}
	switch t := r.Flows[i].(type) {
	case *tcpFlow:
		if t.snd != nil {
			obs.FlowRow, obs.BytesDelivered = t.observe()
		}
	case *doneFlow:
		obs.BytesDelivered = units.Bytes(t.final.delivered)
	default:
		return obs, false
	}
	obs.T = r.Sim.Now()
	return obs, true
}

// FlowIndex is the index in r.Flows (and r.Trace.Flows) of the flow named
// name: a name the traces give ("f0", "web/3", a split flow's legs "f0.0"
// and "f0.1"), or a split flow's scenario id, which names its leg 0 (the
// sender at the flow's source). Scenario ids have no '.', so the two never
// collide.
func (r *Run) FlowIndex(name string) (int, bool) {
	if i := slices.Index(r.Trace.Flows, name); i >= 0 {
		return i, true
	}
	i := slices.IndexFunc(r.Scenario.Flows, func(f config.Flow) bool { return f.ID == name })
	return i, i >= 0
}

// FlowConfig is the configuration of r.Flows[i] as the run was built: the
// scenario's flow, or the leg a split-TCP proxy made of one (LegFlows).
func (r *Run) FlowConfig(i int) *config.Flow {
	if t, ok := r.Flows[i].(*tcpFlow); ok && t.relay != nil {
		return t.cfg
	}
	return &r.Scenario.Flows[i]
}

// TraceNames are the names the traces give scenario flow or leg id: its
// own, or a split flow's two legs; nil if there is none.
func (r *Run) TraceNames(id string) []string {
	i, ok := r.FlowIndex(id)
	if !ok {
		return nil
	}
	if t, ok := r.Flows[i].(*tcpFlow); ok && t.relay != nil && r.Trace.Flows[i] != id {
		return []string{t.relay.legs[0].cfg.ID, t.relay.legs[1].cfg.ID}
	}
	return []string{r.Trace.Flows[i]}
}
