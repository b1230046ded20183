package server

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/units"
)

// WireAction is an action in the canonical wire form checkpoints carry:
// rates and delays as exact unit strings, queue limits as "NB" or "Np".
type WireAction struct {
	Link  string `msgpack:"link,omitempty"`
	Dir   string `msgpack:"dir,omitempty"`
	Flow  string `msgpack:"flow,omitempty"`
	Rate  string `msgpack:"rate,omitempty"`
	Delay string `msgpack:"delay,omitempty"`
	// Loss is a Bernoulli probability (float64) or a loss model's
	// canonical object; Jitter and Capacity are canonical objects.
	Loss       any            `msgpack:"loss,omitempty"`
	Jitter     map[string]any `msgpack:"jitter,omitempty"`
	Capacity   map[string]any `msgpack:"capacity,omitempty"`
	Outage     string         `msgpack:"outage,omitempty"`
	Duplicate  *float64       `msgpack:"duplicate,omitempty"`
	QueueLimit string         `msgpack:"queue_limit,omitempty"`
	Cwnd       *uint32        `msgpack:"cwnd,omitempty"`
	PacingRate string         `msgpack:"pacing_rate,omitempty"`
}

// wireAction is the canonical wire form of a.
func wireAction(a engine.Action) WireAction {
	w := WireAction{Link: a.Link, Dir: a.Dir, Flow: a.Flow, Cwnd: a.CwndPkts, Duplicate: a.Duplicate}
	switch {
	case a.LossP != nil:
		w.Loss = *a.LossP
	case a.LossModel != nil:
		w.Loss = a.LossModel.Canonical()
	}
	if a.JitterModel != nil {
		w.Jitter = a.JitterModel.Canonical()
	}
	if a.Capacity != nil {
		w.Capacity = a.Capacity.Canonical()
	}
	if a.Outage != nil {
		w.Outage = a.Outage.String()
	}
	if a.Rate != nil {
		w.Rate = a.Rate.String()
	}
	if a.Delay != nil {
		w.Delay = a.Delay.String()
	}
	if a.PacingRate != nil {
		w.PacingRate = a.PacingRate.String()
	}
	if q := a.QueueLimit; q != nil {
		switch {
		case q.Packets > 0:
			w.QueueLimit = strconv.FormatInt(q.Packets, 10) + "p"
		case q.Bytes > 0:
			w.QueueLimit = q.Bytes.String()
		default:
			w.QueueLimit = "unlimited"
		}
	}
	return w
}

// The keys of an action map: its target, then the values for a link
// direction and for a flow.
var (
	linkOnly   = []string{"rate", "delay", "loss", "duplicate", "jitter", "capacity", "outage", "queue_limit"}
	flowOnly   = []string{"cwnd", "pacing_rate"}
	actionKeys = slices.Concat([]string{"link", "dir", "flow"}, linkOnly, flowOnly)
)

// parseAction reads an action map (proto/README.md, "act"); prefix is its
// path ("action.", "actions[2].").
func parseAction(m map[string]any, prefix string) (engine.Action, *Error) {
	var a engine.Action
	ar := newArgs(m, prefix, actionKeys)
	var err *Error
	if a.Link, _, err = ar.optStr("link"); err != nil {
		return a, err
	}
	if a.Dir, _, err = ar.optStr("dir"); err != nil {
		return a, err
	}
	if a.Flow, _, err = ar.optStr("flow"); err != nil {
		return a, err
	}
	switch {
	case a.Link != "" && a.Flow != "":
		return a, errorf(CodeBadArgs, prefix+"flow", "%sflow and %slink both given; an action has one target", prefix, prefix)
	case a.Link == "" && a.Flow == "":
		return a, errorf(CodeBadArgs, prefix+"link", "%slink (with %sdir) or %sflow is required", prefix, prefix, prefix)
	case a.Link != "" && !ar.has("dir"):
		return a, errorf(CodeBadArgs, prefix+"dir", "%sdir is missing; a link action names its direction, \"ab\" or \"ba\"", prefix)
	case a.Link != "" && a.Dir != "ab" && a.Dir != "ba":
		return a, errorf(CodeBadArgs, prefix+"dir", "%sdir is %q, want \"ab\" or \"ba\"", prefix, a.Dir)
	case a.Flow != "" && ar.has("dir"):
		return a, errorf(CodeBadArgs, prefix+"dir", "%sdir applies to a link, not a flow", prefix)
	}
	wrong, target := flowOnly, "link"
	if a.Flow != "" {
		wrong, target = linkOnly, "flow"
	}
	for _, k := range wrong {
		if ar.has(k) {
			return a, errorf(CodeBadArgs, prefix+k, "%s%s does not apply to a %s", prefix, k, target)
		}
	}
	if ar.has("rate") {
		r, err := ar.rate("rate")
		if err != nil {
			return a, err
		}
		a.Rate = &r
	}
	if ar.has("delay") {
		d, err := ar.duration("delay")
		if err != nil {
			return a, err
		}
		a.Delay = &d
	}
	if v, _ := ar.get("loss"); v != nil {
		if _, isObj := v.(map[string]any); isObj {
			l, err := config.ParseLoss(v, prefix+"loss")
			if err != nil {
				return a, modelError(err, prefix+"loss")
			}
			a.LossModel = &l
		} else {
			p, err := ar.probability("loss")
			if err != nil {
				return a, err
			}
			a.LossP = &p
		}
	}
	if ar.has("duplicate") {
		p, err := ar.probability("duplicate")
		if err != nil {
			return a, err
		}
		a.Duplicate = &p
	}
	if ar.has("jitter") {
		v, _ := ar.get("jitter")
		j, err := config.ParseJitter(v, prefix+"jitter")
		if err != nil {
			return a, modelError(err, prefix+"jitter")
		}
		a.JitterModel = &j
	}
	if ar.has("capacity") {
		v, _ := ar.get("capacity")
		c, err := config.ParseCapacity(v, prefix+"capacity")
		if err != nil {
			return a, modelError(err, prefix+"capacity")
		}
		a.Capacity = c
	}
	if ar.has("outage") {
		d, err := ar.duration("outage")
		if err != nil {
			return a, err
		}
		if d <= 0 {
			return a, errorf(CodeBadArgs, prefix+"outage", "%soutage must be positive", prefix)
		}
		a.Outage = &d
	}
	if ar.has("queue_limit") {
		q, err := ar.queueLimit("queue_limit")
		if err != nil {
			return a, err
		}
		a.QueueLimit = &q
	}
	if ar.has("cwnd") {
		n, err := ar.uint("cwnd")
		if err != nil {
			return a, err
		}
		if n == 0 || n > math.MaxUint32 {
			return a, errorf(CodeBadArgs, prefix+"cwnd", "%scwnd is %d packets, want 1..%d", prefix, n, uint32(math.MaxUint32))
		}
		c := uint32(n)
		a.CwndPkts = &c
	}
	if ar.has("pacing_rate") {
		r, err := ar.rate("pacing_rate")
		if err != nil {
			return a, err
		}
		a.PacingRate = &r
	}
	if err := ar.done(); err != nil {
		return a, err
	}
	if a.Rate == nil && a.Delay == nil && a.LossP == nil && a.QueueLimit == nil && a.CwndPkts == nil && a.PacingRate == nil &&
		a.LossModel == nil && a.JitterModel == nil && a.Capacity == nil && a.Outage == nil && a.Duplicate == nil {
		return a, errorf(CodeBadArgs, strings.TrimSuffix(prefix, "."), "the action sets nothing: give %s", strings.Join(append(linkOnly, flowOnly...), ", "))
	}
	// A pacing_rate of 0 is no rate: it clears an earlier override and
	// hands pacing back to the CC and the sender (engine.Runner.Act).
	if a.Rate != nil && *a.Rate <= 0 {
		return a, errorf(CodeBadArgs, prefix+"rate", "%srate must be positive", prefix)
	}
	return a, nil
}

// modelError reports the first field error of a model object at its path.
func modelError(err error, path string) *Error {
	var ce *config.Errors
	if errors.As(err, &ce) && len(ce.List) > 0 {
		fe := ce.List[0]
		return errorf(CodeBadArgs, fe.Path, "%s: %s", fe.Path, fe.Reason)
	}
	return errorf(CodeBadArgs, path, "%s: %v", path, err)
}

// probability reads a number in [0, 1].
func (a *args) probability(key string) (float64, *Error) {
	v, _ := a.get(key)
	var p float64
	switch n := v.(type) {
	case float64:
		p = n
	case int64:
		p = float64(n)
	case uint64:
		p = float64(n)
	default:
		return 0, a.typeErr(key, "a probability (a number in [0, 1])", v)
	}
	if !(p >= 0 && p <= 1) {
		return 0, errorf(CodeBadArgs, a.path(key), "%s is %v, want a probability in [0, 1]", a.path(key), p)
	}
	return p, nil
}

// queueLimit reads a queue limit: packets as an integer or "100p", bytes as
// a size string ("100KB"), or "unlimited" (a FIFO's; the zero QueueLimit).
func (a *args) queueLimit(key string) (config.QueueLimit, *Error) {
	v, _ := a.get(key)
	bad := func(why string) (config.QueueLimit, *Error) {
		return config.QueueLimit{}, errorf(CodeBadArgs, a.path(key), "%s: %s", a.path(key), why)
	}
	switch n := v.(type) {
	case string:
		if n == "unlimited" {
			return config.QueueLimit{}, nil
		}
		if num, ok := strings.CutSuffix(n, "p"); ok {
			p, err := strconv.ParseInt(num, 10, 64)
			if err != nil || p <= 0 {
				return bad(strconv.Quote(n) + " is not a positive whole number of packets")
			}
			return config.QueueLimit{Packets: p}, nil
		}
		if strings.HasSuffix(n, "BDP") {
			return bad("a limit in BDPs is resolved when the run is built; give bytes (\"100KB\") or packets (\"100p\") mid-run")
		}
		b, err := units.ParseSize(n)
		if err != nil {
			return bad(err.Error() + ", packets as \"100p\", or \"unlimited\"")
		}
		if b <= 0 {
			return bad("the limit must be positive")
		}
		return config.QueueLimit{Bytes: b}, nil
	}
	p, err := a.toUint(key, v)
	if err != nil {
		return config.QueueLimit{}, a.typeErr(key, `a size ("100KB") or a number of packets`, v)
	}
	if p == 0 || p > math.MaxInt64 {
		return bad(strconv.FormatUint(p, 10) + " packets is out of range")
	}
	return config.QueueLimit{Packets: int64(p)}, nil
}

// checkTarget reports a missing link direction or flow as not_found before
// the engine sees the action.
func checkTarget(r *engine.Run, a engine.Action, prefix string) *Error {
	if a.Flow != "" {
		if _, ok := r.FlowIndex(a.Flow); !ok {
			return errorf(CodeNotFound, prefix+"flow", "%sflow: no flow %q", prefix, a.Flow)
		}
		return nil
	}
	if _, ok := r.Net.Dir(a.Link, a.Dir); !ok {
		return errorf(CodeNotFound, prefix+"link", "%slink: no link %q", prefix, a.Link)
	}
	return nil
}
