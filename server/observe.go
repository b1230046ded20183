package server

import "github.com/ccscope/ccscope/engine"

// ObservationFields names the values of a step's "obs" array, in order
// (proto/README.md, "step"): the observed flow's sender state as the flows
// table records it, then the bytes its receiving application got.
var ObservationFields = []string{"t_ps", "cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "srtt_ps", "min_rtt_ps",
	"pacing_rate_bps", "delivery_rate_bps", "delivered_pkts", "lost_pkts", "retrans_pkts", "ca_state", "bytes_delivered"}

// stepExtras are step's optional arguments for a learning loop, which make
// one round trip per environment step: an action applied (and logged) just
// before the step, and a flow observed just after it.
type stepExtras struct {
	action    *engine.Action
	observe   string
	hasAction bool
}

// stepResultObs is step's result with the extras' answers.
type stepResultObs struct {
	stepResult
	ActionIndex *int    `msgpack:"action_index,omitempty"`
	Obs         []int64 `msgpack:"obs,omitempty"`
}

// parseStepExtras reads "action" and "observe" without side effects.
func (s *session) parseStepExtras(a *args) (stepExtras, *Error) {
	var x stepExtras
	if a.has("action") {
		m, e := a.mapArg("action")
		if e != nil {
			return x, e
		}
		act, e := parseAction(m, "action.")
		if e != nil {
			return x, e
		}
		x.action, x.hasAction = &act, true
	}
	if a.has("observe") {
		f, e := a.str("observe")
		if e != nil {
			return x, e
		}
		if _, ok := s.st.run.Observe(f); !ok {
			return x, errorf(CodeBadArgs, "observe", "observe: %q is not a TCP flow of this session", f)
		}
		x.observe = f
	}
	return x, nil
}

// apply applies the action, if any, logging it as act does.
func (x *stepExtras) apply(s *session) (*int, *Error) {
	if !x.hasAction {
		return nil, nil
	}
	i, e := s.st.act(*x.action, "action.")
	if e != nil {
		return nil, e
	}
	return &i, nil
}

// result adds the observation to the step's result.
func (x *stepExtras) result(s *session, r stepResult, idx *int) any {
	if x.observe == "" && idx == nil {
		return r
	}
	out := stepResultObs{stepResult: r, ActionIndex: idx}
	if x.observe != "" {
		o, _ := s.st.run.Observe(x.observe)
		out.Obs = []int64{int64(o.T), int64(o.CwndPkts), int64(o.SSThreshPkts), int64(o.InflightPkts), int64(o.SRTT),
			int64(o.MinRTT), o.PacingRateBps, o.DeliveryRateBps, int64(o.Delivered), int64(o.Lost), int64(o.Retrans),
			int64(o.CAState), int64(o.BytesDelivered)}
	}
	return out
}
