package engine

import (
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

// Observe returns flow id's observation now; ok is false when there is no
// such flow or it is not a TCP flow. A group's flow has no ends before it
// starts and after it finishes (groupflows.go): it observes as zeros then,
// but for the bytes it delivered.
func (r *Run) Observe(id string) (obs Observation, ok bool) {
	for i, f := range r.Scenario.Flows {
		if f.ID != id {
			continue
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
	return obs, false
}
