package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Qdisc defaults. A FIFO holds txqueuelen packets (1000 on Linux Ethernet);
// CoDel follows sch_codel.c's codel_init and codel_params_init in
// include/net/codel.h: limit DEFAULT_CODEL_LIMIT = 1000 packets, target
// 5 ms, interval 100 ms and ECN off (fq_codel turns ECN on; codel does not).
// FQ-CoDel follows fq_codel_init: limit 10*1024 packets, 1024 flows, quantum
// psched_mtu() (1514 on Ethernet; 1500 here, since packet sizes here leave
// out the 14-byte link header), ECN on. DualPI2 follows
// dualpi2_reset_default: limit 10000, target 15 ms, tupdate 16 ms, step
// threshold 1 ms, coupling 2, C-queue protection 10 %. PIE follows
// pie_params_init: limit 1000, target 15 ms, tupdate 15 ms, alpha 2 and
// beta 20 (1/8 and 1.25 Hz), ECN, byte mode and the drain-rate estimator
// off. FQ-PIE follows fq_pie_init: PIE's defaults with limit 10240, 1024
// flows, quantum psched_mtu (1500 here) and ecn_prob 10 %. FQ follows fq_init:
// limit 10000, flow_limit 100, quantum 2 MTU, initial quantum 10 MTU,
// horizon 10 s.
const (
	DefaultQueuePackets  = 1000
	DefaultCoDelTarget   = 5 * sim.Millisecond
	DefaultCoDelInterval = 100 * sim.Millisecond

	DefaultFQCoDelPackets = 10 * 1024
	DefaultFQCoDelFlows   = 1024
	MaxFQCoDelFlows       = 65536
	DefaultMTU            = 1500

	DefaultDualPI2Packets     = 10000
	DefaultDualPI2Target      = 15 * sim.Millisecond
	DefaultDualPI2TUpdate     = 16 * sim.Millisecond
	DefaultDualPI2Step        = sim.Millisecond
	DefaultDualPI2Coupling    = 2
	DefaultDualPI2CProtection = 10

	DefaultPIEPackets = 1000
	DefaultPIETarget  = 15 * sim.Millisecond
	DefaultPIETUpdate = 15 * sim.Millisecond
	DefaultPIEAlpha   = 2
	DefaultPIEBeta    = 20

	DefaultFQPIEPackets = 10 * 1024
	DefaultFQPIEECNProb = 10

	DefaultFQPackets     = 10000
	DefaultFQFlowLimit   = 100
	DefaultFQQuantum     = 2 * DefaultMTU
	DefaultFQInitQuantum = 10 * DefaultMTU
	DefaultFQHorizon     = 10 * sim.Second
)

// opt is a field that may be absent, remembering the path it came from so
// that errors found after merging name where the user wrote the value.
type opt[T any] struct {
	v    T
	path string
	set  bool // present in the JSON
	bad  bool // present but invalid (already reported)
}

func (f *opt[T]) put(v T, ok bool, path string) { *f = opt[T]{v: v, path: path, set: true, bad: !ok} }

// or returns the value, or def when absent.
func (f opt[T]) or(def T) T {
	if f.set {
		return f.v
	}
	return def
}

// pick returns over if it is present, else base.
func pick[T any](base, over opt[T]) opt[T] {
	if over.set {
		return over
	}
	return base
}

// maxOverhead bounds a direction's overhead: more than any link layer's
// header and framing.
const maxOverhead = 256

// dirSpec is a direction as written: on the link itself or under ab/ba.
type dirSpec struct {
	rate     opt[units.BitRate]
	delay    opt[sim.Duration]
	overhead opt[units.Bytes]
	dup      opt[float64]
	qdisc    qdiscSpec
	loss     modelSpec
	jitter   modelSpec
	// Whole objects: a direction's own replaces the link's.
	capacity, trace, outages rawField
}

type qdiscSpec struct {
	path                string
	kind                opt[QdiscKind]
	limit, ecnThreshold opt[QueueLimit]
	target, interval    opt[sim.Duration]
	ceThreshold         opt[sim.Duration]
	tupdate, step       opt[sim.Duration]
	horizon             opt[sim.Duration]
	ecn                 opt[bool]
	byteMode, dqRate    opt[bool]
	alpha, beta         opt[int64]
	ecnProb             opt[int64]
	flows, coupling     opt[int64]
	cProtection         opt[int64]
	flowLimit           opt[int64]
	quantum, initQuant  opt[units.Bytes]
}

var qdiscKinds = map[string]QdiscKind{"fifo": FIFO, "codel": CoDel, "fq_codel": FQCoDel, "dualpi2": DualPI2, "fq": FQ, "pie": PIE, "fq_pie": FQPIE}

// link decodes a link: its shared direction values, then ab and ba, each
// merged over the shared ones field by field.
func (c *collector) link(path string, o obj, id string) Link {
	l := Link{ID: id}
	for _, end := range []struct {
		key string
		dst *string
	}{{"a", &l.A}, {"b", &l.B}} {
		if v, p, ok := o.get(end.key); ok {
			*end.dst, _ = c.str(p, v)
		} else {
			c.add(p, "missing; name the node at this end")
		}
	}
	shared := c.dirSpec(o)
	for _, d := range []struct {
		key string
		dst *Direction
	}{{"ab", &l.AB}, {"ba", &l.BA}} {
		spec := shared
		if v, p, ok := o.get(d.key); ok {
			if do, ok := c.object(p, v, directionShape); ok {
				spec = mergeDir(shared, c.dirSpec(do))
			}
		}
		*d.dst = c.direction(join(path, d.key), spec)
	}
	return l
}

// dirSpec decodes the direction fields present in o.
func (c *collector) dirSpec(o obj) dirSpec {
	var d dirSpec
	if v, p, ok := o.get("rate"); ok {
		r, ok := c.rate(p, v)
		d.rate.put(r, ok, p)
	}
	if v, p, ok := o.get("delay"); ok {
		t, ok := c.duration(p, v)
		d.delay.put(t, ok, p)
	}
	if v, p, ok := o.get("overhead"); ok {
		n, ok := c.size(p, v)
		if ok && n > maxOverhead {
			c.add(p, "%v is more than any link header (at most %v)", n, units.Bytes(maxOverhead))
			ok = false
		}
		d.overhead.put(n, ok, p)
	}
	if v, p, ok := o.get("duplicate"); ok {
		x, ok := c.prob(p, v)
		d.dup.put(x, ok, p)
	}
	if v, p, ok := o.get("qdisc"); ok {
		d.qdisc = c.qdiscSpec(p, v)
	}
	if v, p, ok := o.get("loss"); ok {
		d.loss = c.modelSpec(p, v, lossShape)
	}
	if v, p, ok := o.get("jitter"); ok {
		d.jitter = c.modelSpec(p, v, jitterShape)
	}
	for _, f := range []struct {
		key string
		dst *rawField
	}{{"capacity", &d.capacity}, {"trace", &d.trace}, {"outages", &d.outages}} {
		if v, p, ok := o.get(f.key); ok {
			*f.dst = rawField{v, p}
		}
	}
	// A trace or a capacity process sets the rate; written beside a rate
	// in the same object, one of them would be ignored.
	if d.rate.set {
		for _, f := range []rawField{d.trace, d.capacity} {
			if f.path != "" {
				c.add(f.path, "replaces rate; remove %q from this object", "rate")
			}
		}
	}
	if d.trace.path != "" && d.capacity.path != "" {
		c.add(d.capacity.path, "a direction has a trace or a capacity process, not both")
	}
	return d
}

func (c *collector) qdiscSpec(path string, v any) qdiscSpec {
	q := qdiscSpec{path: path}
	o, ok := c.object(path, v, qdiscShape)
	if !ok {
		return q
	}
	if v, p, ok := o.get("kind"); ok {
		k, ok := enum(c, p, v, qdiscKinds)
		q.kind.put(k, ok, p)
	}
	for _, f := range []struct {
		key string
		dst *opt[QueueLimit]
	}{{"limit", &q.limit}, {"ecn_threshold", &q.ecnThreshold}} {
		if v, p, ok := o.get(f.key); ok {
			l, ok := c.limit(p, v)
			if ok && l == (QueueLimit{}) && f.key == "ecn_threshold" {
				c.add(p, "%q is for limit; leave ecn_threshold out to mark nothing", unlimited)
				ok = false
			}
			f.dst.put(l, ok, p)
		}
	}
	for _, f := range []struct {
		key string
		dst *opt[sim.Duration]
	}{
		{"target", &q.target}, {"interval", &q.interval}, {"ce_threshold", &q.ceThreshold},
		{"tupdate", &q.tupdate}, {"step_threshold", &q.step}, {"horizon", &q.horizon},
	} {
		if v, p, ok := o.get(f.key); ok {
			d, ok := c.duration(p, v)
			if ok && d == 0 {
				c.add(p, "must be positive")
				ok = false
			}
			f.dst.put(d, ok, p)
		}
	}
	for _, f := range []struct {
		key      string
		min, max uint64
		dst      *opt[int64]
	}{
		{"flows", 1, MaxFQCoDelFlows, &q.flows}, {"coupling", 1, 255, &q.coupling},
		{"c_protection", 0, 100, &q.cProtection}, {"flow_limit", 1, 1 << 31, &q.flowLimit},
		{"alpha", 0, 32, &q.alpha}, {"beta", 0, 32, &q.beta}, {"ecn_prob", 0, 100, &q.ecnProb},
	} {
		if v, p, ok := o.get(f.key); ok {
			n, ok := c.countIn(p, v, f.min, f.max)
			f.dst.put(int64(n), ok, p)
		}
	}
	for _, f := range []struct {
		key string
		dst *opt[units.Bytes]
	}{{"quantum", &q.quantum}, {"initial_quantum", &q.initQuant}} {
		if v, p, ok := o.get(f.key); ok {
			n, ok := c.size(p, v)
			if ok && n == 0 {
				c.add(p, "must be positive")
				ok = false
			}
			f.dst.put(n, ok, p)
		}
	}
	for _, f := range []struct {
		key string
		dst *opt[bool]
	}{{"ecn", &q.ecn}, {"bytemode", &q.byteMode}, {"dq_rate_estimator", &q.dqRate}} {
		if v, p, ok := o.get(f.key); ok {
			b, ok := c.boolean(p, v)
			f.dst.put(b, ok, p)
		}
	}
	return q
}

// mergeDir lays a direction's own values over the link's shared ones. Within
// qdisc, loss and jitter the merge is per field too, except that naming a
// different kind starts that object afresh: parameters of the shared kind do
// not carry over to another kind.
func mergeDir(base, over dirSpec) dirSpec {
	out := dirSpec{rate: pick(base.rate, over.rate), delay: pick(base.delay, over.delay), overhead: pick(base.overhead, over.overhead),
		dup: pick(base.dup, over.dup)}

	out.qdisc = base.qdisc
	if kindChanged(base.qdisc.kind, over.qdisc.kind) {
		out.qdisc = over.qdisc
	} else if over.qdisc.path != "" {
		out.qdisc = base.qdisc.under(over.qdisc)
	}

	out.loss = mergeModel(base.loss, over.loss)
	out.jitter = mergeModel(base.jitter, over.jitter)
	out.capacity, out.trace, out.outages = base.capacity, base.trace, base.outages
	// A direction's own trace or capacity process replaces the link's rate
	// model of either kind.
	if over.trace.path != "" || over.capacity.path != "" {
		out.trace, out.capacity = over.trace, over.capacity
	}
	if over.outages.path != "" {
		out.outages = over.outages
	}
	if over.rate.set && over.trace.path == "" && over.capacity.path == "" {
		out.trace, out.capacity = rawField{}, rawField{}
	}
	return out
}

func kindChanged[K comparable](base, over opt[K]) bool {
	return base.set && over.set && base.v != over.v
}

// direction applies defaults to a merged direction and checks it; path is
// the direction's own path ("links[bottleneck].ab").
func (c *collector) direction(path string, d dirSpec) Direction {
	var out Direction
	// A link's direction path ends in ab or ba; a group's host object's
	// is the object's own, whose values serve both directions.
	where := "in the host object"
	if dir := path[max(0, len(path)-3):]; dir == ".ab" || dir == ".ba" {
		where = fmt.Sprintf("on the link or in %q", dir[1:])
	}
	if !d.rate.set && d.trace.path == "" && d.capacity.path == "" {
		c.add(join(path, "rate"), "missing; give \"rate\" %s (or a trace or a capacity process)", where)
	}
	if !d.delay.set {
		c.add(join(path, "delay"), "missing; give \"delay\" %s", where)
	}
	out.Rate, out.Delay, out.Overhead, out.Duplicate = d.rate.v, d.delay.v, d.overhead.v, d.dup.v
	if d.overhead.v > 0 && d.trace.path != "" {
		c.add(d.overhead.path, "a trace link counts mm-link's own 4-byte TUN header with each packet; remove overhead or the trace")
	}
	out.Qdisc = c.qdisc(d.qdisc)
	out.Loss = c.loss(d.loss)
	out.Jitter = c.jitter(d.jitter)
	if d.capacity.path != "" {
		out.Capacity = c.capacity(d.capacity.path, d.capacity.v)
		if out.Capacity != nil && len(out.Capacity.States) > 0 {
			out.Rate = out.Capacity.States[0].Rate
		}
	}
	if d.trace.path != "" {
		if out.Trace = c.traceLink(d.trace.path, d.trace.v); out.Trace != nil {
			out.Rate = out.Trace.MeanRate()
		}
	}
	if d.outages.path != "" {
		out.Outages = c.outages(d.outages.path, d.outages.v)
	}
	return out
}

// under lays over's present fields on q's, field by field.
func (q qdiscSpec) under(over qdiscSpec) qdiscSpec {
	return qdiscSpec{
		path: over.path, kind: pick(q.kind, over.kind),
		limit: pick(q.limit, over.limit), ecnThreshold: pick(q.ecnThreshold, over.ecnThreshold),
		target: pick(q.target, over.target), interval: pick(q.interval, over.interval),
		ceThreshold: pick(q.ceThreshold, over.ceThreshold), tupdate: pick(q.tupdate, over.tupdate),
		step: pick(q.step, over.step), horizon: pick(q.horizon, over.horizon), ecn: pick(q.ecn, over.ecn),
		byteMode: pick(q.byteMode, over.byteMode), dqRate: pick(q.dqRate, over.dqRate),
		alpha: pick(q.alpha, over.alpha), beta: pick(q.beta, over.beta), ecnProb: pick(q.ecnProb, over.ecnProb),
		flows: pick(q.flows, over.flows), coupling: pick(q.coupling, over.coupling),
		cProtection: pick(q.cProtection, over.cProtection), flowLimit: pick(q.flowLimit, over.flowLimit),
		quantum: pick(q.quantum, over.quantum), initQuant: pick(q.initQuant, over.initQuant),
	}
}

// qdiscParam is an optional qdisc parameter as written, with the kinds that
// take it.
type qdiscParam struct {
	set   bool
	path  string
	kinds []QdiscKind
}

// params lists the optional parameters; the parser rejects one given under
// any other kind.
func (q qdiscSpec) params() []qdiscParam {
	return []qdiscParam{
		{q.ecnThreshold.set, q.ecnThreshold.path, []QdiscKind{FIFO}},
		{q.target.set, q.target.path, []QdiscKind{CoDel, FQCoDel, DualPI2, PIE, FQPIE}},
		{q.interval.set, q.interval.path, []QdiscKind{CoDel, FQCoDel}},
		{q.ecn.set, q.ecn.path, []QdiscKind{CoDel, FQCoDel, PIE, FQPIE}},
		{q.ceThreshold.set, q.ceThreshold.path, []QdiscKind{CoDel, FQCoDel}},
		{q.flows.set, q.flows.path, []QdiscKind{FQCoDel, FQPIE}},
		{q.quantum.set, q.quantum.path, []QdiscKind{FQCoDel, FQ, FQPIE}},
		{q.tupdate.set, q.tupdate.path, []QdiscKind{DualPI2, PIE, FQPIE}},
		{q.alpha.set, q.alpha.path, []QdiscKind{PIE, FQPIE}},
		{q.beta.set, q.beta.path, []QdiscKind{PIE, FQPIE}},
		{q.byteMode.set, q.byteMode.path, []QdiscKind{PIE, FQPIE}},
		{q.dqRate.set, q.dqRate.path, []QdiscKind{PIE, FQPIE}},
		{q.ecnProb.set, q.ecnProb.path, []QdiscKind{FQPIE}},
		{q.step.set, q.step.path, []QdiscKind{DualPI2}},
		{q.coupling.set, q.coupling.path, []QdiscKind{DualPI2}},
		{q.cProtection.set, q.cProtection.path, []QdiscKind{DualPI2}},
		{q.initQuant.set, q.initQuant.path, []QdiscKind{FQ}},
		{q.flowLimit.set, q.flowLimit.path, []QdiscKind{FQ}},
		{q.horizon.set, q.horizon.path, []QdiscKind{FQ}},
	}
}

func (c *collector) qdisc(q qdiscSpec) Qdisc {
	out := Qdisc{Kind: q.kind.or(FIFO)}
	switch out.Kind {
	case FIFO:
		out.Limit = q.limit.or(QueueLimit{Packets: DefaultQueuePackets})
		out.ECNThreshold = q.ecnThreshold.v
	case CoDel:
		out.Limit = q.limit.or(QueueLimit{Packets: DefaultQueuePackets})
		out.Target = q.target.or(DefaultCoDelTarget)
		out.Interval = q.interval.or(DefaultCoDelInterval)
		out.ECN = q.ecn.or(false)
		out.CEThreshold = q.ceThreshold.v
	case FQCoDel:
		out.Limit = q.limit.or(QueueLimit{Packets: DefaultFQCoDelPackets})
		out.Target = q.target.or(DefaultCoDelTarget)
		out.Interval = q.interval.or(DefaultCoDelInterval)
		out.ECN = q.ecn.or(true)
		out.CEThreshold = q.ceThreshold.v
		out.Flows = q.flows.or(DefaultFQCoDelFlows)
		out.Quantum = q.quantum.or(DefaultMTU)
	case DualPI2:
		out.Limit = q.limit.or(QueueLimit{Packets: DefaultDualPI2Packets})
		out.Target = q.target.or(DefaultDualPI2Target)
		out.TUpdate = q.tupdate.or(DefaultDualPI2TUpdate)
		out.StepThreshold = q.step.or(DefaultDualPI2Step)
		out.Coupling = q.coupling.or(DefaultDualPI2Coupling)
		out.CProtection = q.cProtection.or(DefaultDualPI2CProtection)
	case PIE, FQPIE:
		limit := int64(DefaultPIEPackets)
		if out.Kind == FQPIE {
			limit = DefaultFQPIEPackets
			out.ECNProb = q.ecnProb.or(DefaultFQPIEECNProb)
			out.Flows = q.flows.or(DefaultFQCoDelFlows)
			out.Quantum = q.quantum.or(DefaultMTU)
		}
		out.Limit = q.limit.or(QueueLimit{Packets: limit})
		out.Target = q.target.or(DefaultPIETarget)
		out.TUpdate = q.tupdate.or(DefaultPIETUpdate)
		out.Alpha = q.alpha.or(DefaultPIEAlpha)
		out.Beta = q.beta.or(DefaultPIEBeta)
		out.ECN = q.ecn.or(false)
		out.ByteMode = q.byteMode.or(false)
		out.DQRateEstimator = q.dqRate.or(false)
	case FQ:
		out.Limit = q.limit.or(QueueLimit{Packets: DefaultFQPackets})
		out.Quantum = q.quantum.or(DefaultFQQuantum)
		out.InitialQuantum = q.initQuant.or(DefaultFQInitQuantum)
		out.FlowLimit = q.flowLimit.or(DefaultFQFlowLimit)
		out.Horizon = q.horizon.or(DefaultFQHorizon)
	}
	if q.kind.bad {
		return out
	}
	switch l := q.limit; {
	case l.set && !l.bad && l.v == (QueueLimit{}) && out.Kind != FIFO:
		c.add(l.path, "%q is for qdisc kind \"fifo\"; %q holds at most a limit, as its kernel qdisc does", unlimited, nameOf(qdiscKinds, out.Kind))
	case l.set && !l.bad && l.v.Packets == 0 && (out.Kind == FQCoDel || out.Kind == DualPI2 || out.Kind == FQ || out.Kind == PIE || out.Kind == FQPIE):
		c.add(l.path, "qdisc kind %q limits packets (sch->limit); write a count such as \"1000p\"", nameOf(qdiscKinds, out.Kind))
	}
	for _, f := range q.params() {
		if f.set && !slices.Contains(f.kinds, out.Kind) {
			names := make([]string, len(f.kinds))
			for i, k := range f.kinds {
				names[i] = strconv.Quote(nameOf(qdiscKinds, k))
			}
			c.add(f.path, "only for qdisc kind %s", strings.Join(names, ", "))
		}
	}
	return out
}
