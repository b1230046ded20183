package server

import (
	"encoding/binary"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
)

// ObservationFields names the values of a step's "obs" array, in order
// (proto/README.md, "step"): the observed flow's sender state as the flows
// table records it, then the bytes its receiving application got.
var ObservationFields = []string{"t_ps", "cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "srtt_ps", "min_rtt_ps",
	"pacing_rate_bps", "delivery_rate_bps", "delivered_pkts", "lost_pkts", "retrans_pkts", "ca_state", "bytes_delivered"}

// stepArgs are a step's arguments but its session, read and checked: a
// time or an event count, and for a learning loop (one round trip per
// environment step) an action applied (and logged) just before the step
// and a flow observed just after it.
type stepArgs struct {
	byTime  bool
	time    sim.Duration
	events  uint64
	action  *engine.Action
	observe string
	obsBin  bool // obs_format "int64le"
}

// parseStep reads step's arguments from a, with no side effect. With a
// session it also checks that observe names one of its TCP flows; without
// one (a batch, read before its sessions run) the session's step does.
func parseStep(a *args, s *session) (stepArgs, *Error) {
	var p stepArgs
	if a.has("action") {
		m, e := a.mapArg("action")
		if e != nil {
			return p, e
		}
		act, e := parseAction(m, a.path("action."))
		if e != nil {
			return p, e
		}
		p.action = &act
	}
	if a.has("observe") {
		f, e := a.str("observe")
		if e != nil {
			return p, e
		}
		p.observe = f
		if s != nil {
			if e := s.checkObserve(p, a.prefix); e != nil {
				return p, e
			}
		}
	}
	if a.has("obs_format") {
		f, e := a.str("obs_format")
		if e != nil {
			return p, e
		}
		switch {
		case p.observe == "":
			return p, errorf(CodeBadArgs, a.path("obs_format"), "%sobs_format applies to an observation; give observe too", a.prefix)
		case f == "int64le":
			p.obsBin = true
		case f != "array":
			return p, errorf(CodeBadArgs, a.path("obs_format"), "%sobs_format is %q, want \"array\" or \"int64le\"", a.prefix, f)
		}
	}
	hasT, hasN := a.has("time"), a.has("events")
	switch {
	case hasT == hasN:
		a.get("time")
		a.get("events")
		if e := a.done(); e != nil {
			return p, e
		}
		return p, errorf(CodeBadArgs, a.path("time"), "give exactly one of time (a duration) and events (a count)")
	case hasT:
		d, e := a.duration("time")
		if e != nil {
			return p, e
		}
		p.byTime, p.time = true, d
	default:
		n, e := a.uint("events")
		if e != nil {
			return p, e
		}
		if e := a.done(); e != nil {
			return p, e
		}
		if n == 0 {
			return p, errorf(CodeBadArgs, a.path("events"), "events must be positive")
		}
		p.events = n
	}
	return p, a.done()
}

// checkObserve refuses an observe that is not one of the session's TCP
// flows; prefix is the path of the step's arguments.
func (s *session) checkObserve(p stepArgs, prefix string) *Error {
	if p.observe == "" {
		return nil
	}
	if _, ok := s.st.run.Observe(p.observe); !ok {
		return errorf(CodeBadArgs, prefix+"observe", "%sobserve: %q is not a TCP flow of this session", prefix, p.observe)
	}
	return nil
}

// step runs a parsed step: the action, if any, applied and logged as act
// does, then the step, then the observation. prefix is the path of the
// step's arguments, for errors ("" for a step request, "steps[2]." in a
// batch).
func (s *session) step(p stepArgs, prefix string) (any, *Error) {
	if e := s.checkObserve(p, prefix); e != nil {
		return nil, e
	}
	var idx *int
	if p.action != nil {
		i, e := s.st.act(*p.action, prefix+"action.")
		if e != nil {
			return nil, e
		}
		idx = &i
	}
	var cancelled bool
	var e *Error
	if p.byTime {
		start := time.Now()
		cancelled, e = s.st.runTo(s.ctx, s.st.run.Now().Add(p.time), s.cancelled, func() *Error { return s.pushDue(false) })
		s.lastStepSim, s.lastStepWall = p.time, time.Since(start)
	} else {
		cancelled, e = s.st.stepEvents(s.ctx, p.events, s.cancelled)
	}
	if pe := s.pushDue(true); e == nil {
		e = pe
	}
	if e != nil {
		return nil, e
	}
	r := s.st.result()
	r.Cancelled = cancelled
	if p.observe == "" && idx == nil {
		return r, nil
	}
	out := stepResultObs{stepResult: r, ActionIndex: idx}
	if p.observe != "" {
		o, _ := s.st.run.Observe(p.observe)
		out.Obs = [...]int64{int64(o.T), int64(o.CwndPkts), int64(o.SSThreshPkts), int64(o.InflightPkts), int64(o.SRTT),
			int64(o.MinRTT), o.PacingRateBps, o.DeliveryRateBps, int64(o.Delivered), int64(o.Lost), int64(o.Retrans),
			int64(o.CAState), int64(o.BytesDelivered)}
		out.observed, out.obsBin = true, p.obsBin
	}
	return out, nil
}

// stepResultObs is step's result with the answers to action and observe.
type stepResultObs struct {
	stepResult
	ActionIndex *int
	Obs         [13]int64 // ObservationFields, when observed
	observed    bool
	obsBin      bool // obs as a bin of little-endian int64s
}

// EncodeMsgpack writes r as the map the protocol specifies (proto/README.md,
// "step"), without reflection: a learning loop encodes one per environment
// step.
func (r stepResult) EncodeMsgpack(enc *msgpack.Encoder) error {
	return r.encode(enc, 0)
}

// encode writes r's fields as a map with extra more entries to follow.
func (r stepResult) encode(enc *msgpack.Encoder, extra int) error {
	errs := [...]error{enc.EncodeMapLen(r.fields() + extra),
		enc.EncodeString("sim_time_ps"), enc.EncodeInt(r.SimTimePs),
		enc.EncodeString("events"), enc.EncodeUint(r.Events),
		enc.EncodeString("done"), enc.EncodeBool(r.Done)}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if r.Digest != "" {
		if err := enc.EncodeString("digest"); err != nil {
			return err
		}
		if err := enc.EncodeString(r.Digest); err != nil {
			return err
		}
	}
	if r.Cancelled {
		if err := enc.EncodeString("cancelled"); err != nil {
			return err
		}
		return enc.EncodeBool(true)
	}
	return nil
}

// fields is the number of entries r's map has.
func (r stepResult) fields() int {
	n := 3
	if r.Digest != "" {
		n++
	}
	if r.Cancelled {
		n++
	}
	return n
}

// EncodeMsgpack writes r as step's result map, with action_index and obs
// when present.
func (r stepResultObs) EncodeMsgpack(enc *msgpack.Encoder) error {
	extra := 0
	if r.ActionIndex != nil {
		extra++
	}
	if r.observed {
		extra++
	}
	if err := r.stepResult.encode(enc, extra); err != nil {
		return err
	}
	if r.ActionIndex != nil {
		if err := enc.EncodeString("action_index"); err != nil {
			return err
		}
		if err := enc.EncodeInt(int64(*r.ActionIndex)); err != nil {
			return err
		}
	}
	if r.observed && r.obsBin {
		if err := enc.EncodeString("obs"); err != nil {
			return err
		}
		var b [8 * len(r.Obs)]byte
		for i, v := range r.Obs {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
		return enc.EncodeBytes(b[:])
	}
	if r.observed {
		if err := enc.EncodeString("obs"); err != nil {
			return err
		}
		if err := enc.EncodeArrayLen(len(r.Obs)); err != nil {
			return err
		}
		for _, v := range r.Obs {
			if err := enc.EncodeInt(v); err != nil {
				return err
			}
		}
	}
	return nil
}
