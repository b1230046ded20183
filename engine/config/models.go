package config

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

// modelSpec is a loss or jitter object as written: its kind and its other
// fields kept raw, so the link's shared object and a direction's own merge
// field by field before the fields are decoded against the final kind.
type modelSpec struct {
	path   string
	kind   opt[string]
	fields map[string]rawField
}

type rawField struct {
	v    any
	path string
}

func (c *collector) modelSpec(path string, v any, sh *shape) modelSpec {
	m := modelSpec{path: path, fields: map[string]rawField{}}
	o, ok := c.object(path, v, sh)
	if !ok {
		return m
	}
	for k := range sh.fields {
		v, p, ok := o.get(k)
		switch {
		case !ok:
		case k == "kind":
			s, ok := c.str(p, v)
			m.kind.put(s, ok, p)
		default:
			m.fields[k] = rawField{v, p}
		}
	}
	return m
}

// mergeModel lays over's fields on base's; naming a different kind starts
// afresh, so parameters of the shared kind do not carry over.
func mergeModel(base, over modelSpec) modelSpec {
	if over.path == "" {
		return base
	}
	if base.kind.set && over.kind.set && base.kind.v != over.kind.v {
		return over
	}
	out := modelSpec{path: over.path, kind: pick(base.kind, over.kind), fields: map[string]rawField{}}
	for k, f := range base.fields {
		out.fields[k] = f
	}
	for k, f := range over.fields {
		out.fields[k] = f
	}
	return out
}

// sortedFields lists a spec's fields in key order, for stable errors.
func (m modelSpec) sortedFields() []string {
	ks := make([]string, 0, len(m.fields))
	for k := range m.fields {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

var (
	lossKinds = map[string]LossKind{
		"none": NoLoss, "bernoulli": Bernoulli, "gilbert_elliott": GilbertElliott,
		"periodic": Periodic, "bernoulli_train": BernoulliTrain,
	}
	lossPositions = map[string]LossPosition{"pre": LossPre, "post": LossPost}
	jitterKinds   = map[string]JitterKind{
		"none": NoJitter, "gaussian": Gaussian, "uniform": Uniform, "pareto": Pareto, "burst": Burst,
		"wifi_txop": WiFiTXOP, "lte_subframe": LTESubframe, "5g_nr": NR5G, "reorder": Reorder,
	}
	jitterOrders = map[string]JitterOrder{"fifo": OrderFIFO, "reorder": OrderReorder}
	jitterClamps = map[string]JitterClamp{"redraw": ClampRedraw, "zero": ClampZero, "total": ClampTotal}
)

// Default periods of the quantising jitter models: an LTE subframe (3GPP TS
// 36.211 §4.1) and a 5G NR slot at 30 kHz subcarrier spacing (TS 38.211
// §4.3.2, numerology 1).
const (
	DefaultLTESubframe = sim.Millisecond
	DefaultNRSlot      = 500 * sim.Microsecond
)

// lossParams: the kinds each loss parameter belongs to, and the ones a kind
// requires.
var (
	lossParams = map[string][]LossKind{
		"position": {Bernoulli, GilbertElliott, Periodic, BernoulliTrain},
		"p":        {Bernoulli, BernoulliTrain},
		"p_gb":     {GilbertElliott}, "p_bg": {GilbertElliott},
		"loss_good": {GilbertElliott}, "loss_bad": {GilbertElliott},
		"every":        {Periodic},
		"train_length": {BernoulliTrain},
	}
	lossRequired = map[LossKind][]string{
		Bernoulli: {"p"}, GilbertElliott: {"p_gb", "p_bg"}, Periodic: {"every"}, BernoulliTrain: {"p", "train_length"},
	}
	jitterParams = map[string][]JitterKind{
		"order": {Gaussian, Uniform, Pareto, Burst, WiFiTXOP, LTESubframe, NR5G, Reorder},
		"clamp": {Gaussian},
		"sigma": {Gaussian, WiFiTXOP},
		"min":   {Uniform}, "max": {Uniform},
		"scale": {Pareto}, "shape": {Pareto}, "cap": {Pareto},
		"period": {Burst, LTESubframe, NR5G}, "length": {Burst}, "extra": {Burst},
		"interval": {WiFiTXOP}, "burst_size": {WiFiTXOP},
		"p": {Reorder}, "delay": {Reorder},
	}
	jitterRequired = map[JitterKind][]string{
		Gaussian: {"sigma"}, Uniform: {"max"}, Pareto: {"scale", "shape"},
		Burst: {"period", "length", "extra"}, WiFiTXOP: {"interval", "burst_size"}, Reorder: {"p", "delay"},
	}
)

// onlyFor reports a parameter given under a kind that does not take it.
func onlyFor[K comparable](c *collector, path, what string, kinds []K, names map[string]K) {
	q := make([]string, len(kinds))
	for i, k := range kinds {
		q[i] = strconv.Quote(nameOf(names, k))
	}
	c.add(path, "only for %s kind %s", what, strings.Join(q, ", "))
}

// kindMissing reports parameters given without the kind they belong to,
// once, at the kind: a model has no default kind to read them under.
func kindMissing[K comparable](c *collector, m modelSpec, what string, params map[string][]K, names map[string]K, example string) bool {
	keys := m.sortedFields()
	if len(keys) == 0 {
		return false
	}
	q := make([]string, len(params[keys[0]]))
	for i, k := range params[keys[0]] {
		q[i] = strconv.Quote(nameOf(names, k))
	}
	c.add(join(m.path, "kind"), "missing; %q is a parameter of %s kind %s; name the kind, e.g. %s", keys[0], what, strings.Join(q, ", "), example)
	return true
}

func (c *collector) loss(m modelSpec) Loss {
	out := Loss{Kind: NoLoss}
	if m.kind.set {
		k, ok := lookup(c, m.kind, lossKinds)
		if !ok {
			return out
		}
		out.Kind = k
	} else if kindMissing(c, m, "loss", lossParams, lossKinds, `{"kind": "bernoulli", "p": 0.01}`) {
		return out
	}
	if out.Kind == GilbertElliott {
		out.LossBad = 1 // Gilbert's model: the bad state loses every packet
	}
	valid := map[string]bool{} // probabilities given and valid
	for _, key := range m.sortedFields() {
		f := m.fields[key]
		if !slices.Contains(lossParams[key], out.Kind) {
			onlyFor(c, f.path, "loss", lossParams[key], lossKinds)
			continue
		}
		switch key {
		case "position":
			if s, ok := c.str(f.path, f.v); ok {
				out.Position, _ = enum(c, f.path, s, lossPositions)
			}
		case "p", "p_gb", "p_bg", "loss_good", "loss_bad":
			p, ok := c.prob(f.path, f.v)
			valid[key] = ok
			*map[string]*float64{"p": &out.P, "p_gb": &out.PGB, "p_bg": &out.PBG, "loss_good": &out.LossGood, "loss_bad": &out.LossBad}[key] = p
		case "every":
			n, _ := c.countIn(f.path, f.v, 1, math.MaxInt64)
			out.Every = int64(n)
		case "train_length":
			x, ok := c.number(f.path, f.v)
			if ok && x < 1 {
				c.add(f.path, "%v is below 1; a train holds at least one packet", x)
			}
			out.TrainLength = x
		}
	}
	for _, key := range lossRequired[out.Kind] {
		if _, ok := m.fields[key]; !ok {
			c.add(join(m.path, key), "missing; %s loss needs %s", nameOf(lossKinds, out.Kind), strings.Join(lossRequired[out.Kind], ", "))
		}
	}
	// Said only of two valid zeros, not of a value refused or missing above.
	if out.Kind == GilbertElliott && valid["p_gb"] && valid["p_bg"] && out.PGB == 0 && out.PBG == 0 {
		c.add(join(m.path, "p_gb"), "p_gb and p_bg are both 0; the chain never moves")
	}
	return out
}

func (c *collector) jitter(m modelSpec) Jitter {
	out := Jitter{Kind: NoJitter}
	if m.kind.set {
		k, ok := lookup(c, m.kind, jitterKinds)
		if !ok {
			return out
		}
		out.Kind = k
	} else if kindMissing(c, m, "jitter", jitterParams, jitterKinds, `{"kind": "gaussian", "sigma": "1ms"}`) {
		return out
	}
	switch out.Kind {
	case Reorder:
		out.Order = OrderReorder
	case LTESubframe:
		out.Period = DefaultLTESubframe
	case NR5G:
		out.Period = DefaultNRSlot
	}
	durations := map[string]*sim.Duration{
		"sigma": &out.Sigma, "min": &out.Min, "max": &out.Max, "scale": &out.Scale, "cap": &out.Cap,
		"period": &out.Period, "length": &out.Length, "extra": &out.Extra, "interval": &out.Interval, "delay": &out.Delay,
	}
	positive := map[string]bool{"scale": true, "period": true, "interval": true, "delay": true}
	for _, key := range m.sortedFields() {
		f := m.fields[key]
		if !slices.Contains(jitterParams[key], out.Kind) {
			onlyFor(c, f.path, "jitter", jitterParams[key], jitterKinds)
			continue
		}
		switch key {
		case "order":
			if s, ok := c.str(f.path, f.v); ok {
				o, ok := enum(c, f.path, s, jitterOrders)
				if ok && out.Kind == Reorder && o != OrderReorder {
					c.add(f.path, "jitter kind \"reorder\" always reorders")
					continue
				}
				out.Order = o
			}
		case "clamp":
			if s, ok := c.str(f.path, f.v); ok {
				out.Clamp, _ = enum(c, f.path, s, jitterClamps)
			}
		case "shape":
			out.Shape, _ = c.number(f.path, f.v)
		case "burst_size":
			n, _ := c.countIn(f.path, f.v, 1, math.MaxInt64)
			out.BurstSize = int64(n)
		case "p":
			out.P, _ = c.prob(f.path, f.v)
		default:
			d, ok := c.duration(f.path, f.v)
			if ok && d == 0 && positive[key] {
				c.add(f.path, "must be positive")
			}
			*durations[key] = d
		}
	}
	for _, key := range jitterRequired[out.Kind] {
		if _, ok := m.fields[key]; !ok {
			c.add(join(m.path, key), "missing; %s jitter needs %s", nameOf(jitterKinds, out.Kind), strings.Join(jitterRequired[out.Kind], ", "))
		}
	}
	switch {
	case out.Kind == Uniform && out.Min > out.Max:
		c.add(join(m.path, "min"), "%v is above max %v", out.Min, out.Max)
	case out.Kind == Burst && out.Length > out.Period:
		c.add(join(m.path, "length"), "%v is longer than the period %v", out.Length, out.Period)
	case out.Kind == Pareto && out.Cap != 0 && out.Cap < out.Scale:
		c.add(join(m.path, "cap"), "%v is below scale %v, the smallest value Pareto draws", out.Cap, out.Scale)
	}
	return out
}

// lookup resolves a kind name already decoded as a string.
func lookup[K any](c *collector, kind opt[string], m map[string]K) (K, bool) {
	var zero K
	if kind.bad {
		return zero, false
	}
	return enum(c, kind.path, kind.v, m)
}

// number decodes a positive finite JSON number.
func (c *collector) number(path string, v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		c.add(path, "must be a positive number, not %s", describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		c.add(path, "%s is not a positive finite number", n)
		return 0, false
	}
	return x, true
}

// MinCapacityDwell bounds a capacity state's mean dwell and the mean gap
// between dips from below: the process catches up transition by transition
// when asked for the rate, so a far shorter mean would cost time without
// meaning anything at packet scale (an LTE TTI is 1 ms).
const MinCapacityDwell = 100 * sim.Microsecond

// capacity decodes a capacity process.
func (c *collector) capacity(path string, v any) *Capacity {
	o, ok := c.object(path, v, capacityShape)
	if !ok {
		return nil
	}
	out := &Capacity{}
	sv, sp, ok := o.get("states")
	if !ok {
		c.add(sp, "missing; give at least one state {\"rate\": \"50Mbps\", \"dwell\": \"2s\"}")
		return out
	}
	arr, isArr := sv.([]any)
	switch {
	case !isArr:
		c.add(sp, "must be an array of states, not %s", describe(sv))
		return out
	case len(arr) == 0:
		c.add(sp, "must hold at least one state")
		return out
	}
	stateShape := capacityShape.fields["states"].elem
	for i, e := range arr {
		ep := sp + "[" + strconv.Itoa(i) + "]"
		var st CapacityState
		if so, ok := c.object(ep, e, stateShape); ok {
			if v, p, ok := so.get("rate"); ok {
				st.Rate, _ = c.rate(p, v)
			} else {
				c.add(p, "missing; the state's service rate")
			}
			if v, p, ok := so.get("dwell"); ok {
				if d, ok := c.duration(p, v); ok && d < MinCapacityDwell {
					c.add(p, "%v is below %v; the process is stepped through every transition", d, MinCapacityDwell)
				} else {
					st.Dwell = d
				}
			} else {
				c.add(p, "missing; the mean time spent in the state")
			}
		}
		out.States = append(out.States, st)
	}
	n := len(out.States)
	if tv, tp, ok := o.get("transitions"); ok {
		out.Transitions = c.matrix(tp, tv, n)
	} else if n == 1 {
		out.Transitions = [][]float64{{1}}
	} else {
		c.add(tp, "missing; a %d×%d matrix of transition probabilities", n, n)
	}
	if dv, dp, ok := o.get("dips"); ok {
		if do, ok := c.object(dp, dv, capacityShape.fields["dips"]); ok {
			d := &CapacityDips{}
			for _, f := range []struct {
				key string
				dst *sim.Duration
				req bool
			}{{"every", &d.Every, true}, {"scale", &d.Scale, true}, {"cap", &d.Cap, false}} {
				if v, p, ok := do.get(f.key); ok {
					x, ok := c.duration(p, v)
					switch {
					case ok && f.key == "every" && x < MinCapacityDwell:
						c.add(p, "%v is below %v; the process is stepped through every dip", x, MinCapacityDwell)
					case ok && x == 0 && f.req:
						c.add(p, "must be positive")
					}
					*f.dst = x
				} else if f.req {
					c.add(p, "missing")
				}
			}
			if v, p, ok := do.get("depth"); ok {
				d.Depth, _ = c.prob(p, v)
			} else {
				c.add(p, "missing; the fraction of the rate left during a dip")
			}
			if v, p, ok := do.get("shape"); ok {
				d.Shape, _ = c.number(p, v)
			} else {
				c.add(p, "missing; the Pareto tail index of a dip's length")
			}
			out.Dips = d
		}
	}
	if gv, gp, ok := o.get("grant"); ok {
		if g, ok := c.object(gp, gv, capacityShape.fields["grant"]); ok {
			out.Grant = &CapacityGrant{}
			if v, p, ok := g.get("start"); ok {
				x, _ := c.prob(p, v)
				out.Grant.Start = x
			} else {
				c.add(p, "missing; the fraction of the rate granted after idle")
			}
			if v, p, ok := g.get("ramp"); ok {
				x, ok := c.duration(p, v)
				if ok && x == 0 {
					c.add(p, "must be positive")
				}
				out.Grant.Ramp = x
			} else {
				c.add(p, "missing; the backlog time to reach the full rate")
			}
		}
	}
	return out
}

// matrix decodes an n×n row-stochastic matrix.
func (c *collector) matrix(path string, v any, n int) [][]float64 {
	rows, ok := v.([]any)
	if !ok || len(rows) != n {
		c.add(path, "must be a %d×%d array of arrays (one row per state), not %s", n, n, describe(v))
		return nil
	}
	out := make([][]float64, n)
	for i, r := range rows {
		rp := path + "[" + strconv.Itoa(i) + "]"
		cols, ok := r.([]any)
		if !ok || len(cols) != n {
			c.add(rp, "must be an array of %d probabilities, not %s", n, describe(r))
			return nil
		}
		sum, valid := 0.0, true
		out[i] = make([]float64, n)
		for j, x := range cols {
			p, ok := c.prob(rp+"["+strconv.Itoa(j)+"]", x)
			out[i][j] = p
			sum += p
			valid = valid && ok
		}
		if valid && math.Abs(sum-1) > 1e-9 {
			c.add(rp, "sums to %v; each row must sum to 1", sum)
		}
	}
	return out
}

// outages decodes a direction's outages: a list of windows, or the object
// that adds the periodic form and drop_on_outage to it.
func (c *collector) outages(path string, v any) *Outages {
	switch x := v.(type) {
	case []any:
		return &Outages{Windows: c.outageWindows(path, x)}
	case map[string]any:
	default:
		c.add(path, "must be a list of {\"at\", \"duration\"} or an object ({\"windows\": [...]}, or start, every and duration), not %s", describe(v))
		return nil
	}
	o, _ := c.object(path, v, outagesShape.alt) // v is an object: the switch saw to it
	out := &Outages{}
	if wv, wp, ok := o.get("windows"); ok {
		arr, isArr := wv.([]any)
		if !isArr {
			c.add(wp, "must be an array of {\"at\", \"duration\"}, not %s", describe(wv))
		}
		out.Windows = c.outageWindows(wp, arr)
	}
	for _, f := range []struct {
		key string
		dst *sim.Duration
	}{{"start", &out.Start}, {"every", &out.Every}, {"duration", &out.Duration}} {
		if v, p, ok := o.get(f.key); ok {
			*f.dst, _ = c.duration(p, v)
		}
	}
	_, sp, hasStart := o.get("start")
	_, ep, hasEvery := o.get("every")
	_, dp, hasDur := o.get("duration")
	switch {
	case hasEvery && !hasDur:
		c.add(dp, "missing; periodic outages need every and duration")
	case hasDur && !hasEvery:
		c.add(ep, "missing; periodic outages need every and duration")
	case hasStart && !hasEvery:
		c.add(sp, "only with every and duration (periodic outages)")
	case hasEvery && (out.Duration == 0 || out.Duration >= out.Every):
		c.add(dp, "%v must be positive and shorter than every (%v)", out.Duration, out.Every)
	}
	if v, p, ok := o.get("drop_on_outage"); ok {
		out.DropOnOutage, _ = c.boolean(p, v)
	}
	return out
}

// outageWindows decodes a list of {at, duration} outages at path.
func (c *collector) outageWindows(path string, arr []any) []OutageWindow {
	var out []OutageWindow
	for i, e := range arr {
		ep := path + "[" + strconv.Itoa(i) + "]"
		var w OutageWindow
		if eo, ok := c.object(ep, e, outageShape); ok {
			if v, p, ok := eo.get("at"); ok {
				w.At, _ = c.duration(p, v)
			} else {
				c.add(p, "missing; when the outage starts")
			}
			if v, p, ok := eo.get("duration"); ok {
				d, ok := c.duration(p, v)
				if ok && d == 0 {
					c.add(p, "must be positive")
				}
				w.Duration = d
			} else {
				c.add(p, "missing; how long the direction is down")
			}
		}
		out = append(out, w)
	}
	return out
}

// fromGeneric turns a generic value (a JSON or msgpack decoder's output)
// into the tree the decoders read (numbers as json.Number).
func fromGeneric(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeTree(b)
}

// decodeModel runs one model decoder on a generic value; path names the
// value in errors ("action.loss").
func decodeModel[T any](v any, path string, dec func(c *collector, t any) T) (T, error) {
	var zero T
	t, err := fromGeneric(v)
	if err != nil {
		return zero, &Errors{List: []FieldError{{Path: path, Reason: "cannot be read as JSON: " + err.Error()}}}
	}
	c := &collector{}
	out := dec(c, t)
	if err := c.err(); err != nil {
		return zero, err
	}
	return out, nil
}

// ParseLoss decodes a loss model object as a scenario writes it, for
// actions; errors are *Errors under path.
func ParseLoss(v any, path string) (Loss, error) {
	return decodeModel(v, path, func(c *collector, t any) Loss { return c.loss(c.modelSpec(path, t, lossShape)) })
}

// ParseJitter decodes a jitter model object as a scenario writes it.
func ParseJitter(v any, path string) (Jitter, error) {
	return decodeModel(v, path, func(c *collector, t any) Jitter { return c.jitter(c.modelSpec(path, t, jitterShape)) })
}

// ParseCapacity decodes a capacity process object as a scenario writes it.
func ParseCapacity(v any, path string) (*Capacity, error) {
	return decodeModel(v, path, func(c *collector, t any) *Capacity { return c.capacity(path, t) })
}

// generic is a canonical tree as plain Go values (numbers float64), for
// wire encoders.
func generic(t tree) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(encodeTree(t), &m); err != nil {
		panic("config: canonical tree does not decode: " + err.Error())
	}
	return m
}

// Canonical is the loss model's canonical object, as plain Go values;
// ParseLoss reads it back to the same model.
func (l Loss) Canonical() map[string]any { return generic(l.tree()) }

// Canonical is the jitter model's canonical object; ParseJitter reads it
// back.
func (j Jitter) Canonical() map[string]any { return generic(j.tree()) }

// Canonical is the capacity process's canonical object; ParseCapacity reads
// it back.
func (c *Capacity) Canonical() map[string]any { return generic(c.tree()) }
