package config

import (
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Qdisc defaults. A FIFO holds txqueuelen packets (1000 on Linux Ethernet);
// CoDel follows sch_codel.c's codel_init and codel_params_init in
// include/net/codel.h: limit DEFAULT_CODEL_LIMIT = 1000 packets, target
// 5 ms, interval 100 ms and ECN off (fq_codel turns ECN on; codel does not).
const (
	DefaultQueuePackets  = 1000
	DefaultCoDelTarget   = 5 * sim.Millisecond
	DefaultCoDelInterval = 100 * sim.Millisecond
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

// dirSpec is a direction as written: on the link itself or under ab/ba.
type dirSpec struct {
	rate   opt[units.BitRate]
	delay  opt[sim.Duration]
	qdisc  qdiscSpec
	loss   lossSpec
	jitter jitterSpec
}

type qdiscSpec struct {
	path             string
	kind             opt[QdiscKind]
	limit            opt[QueueLimit]
	target, interval opt[sim.Duration]
	ecn              opt[bool]
}

type lossSpec struct {
	path string
	kind opt[LossKind]
	p    opt[float64]
}

type jitterSpec struct {
	path  string
	kind  opt[JitterKind]
	sigma opt[sim.Duration]
}

var (
	qdiscKinds  = map[string]QdiscKind{"fifo": FIFO, "codel": CoDel}
	lossKinds   = map[string]LossKind{"none": NoLoss, "bernoulli": Bernoulli}
	jitterKinds = map[string]JitterKind{"none": NoJitter, "gaussian": Gaussian}
)

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
	if v, p, ok := o.get("qdisc"); ok {
		d.qdisc = c.qdiscSpec(p, v)
	}
	if v, p, ok := o.get("loss"); ok {
		d.loss = c.lossSpec(p, v)
	}
	if v, p, ok := o.get("jitter"); ok {
		d.jitter = c.jitterSpec(p, v)
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
	if v, p, ok := o.get("limit"); ok {
		l, ok := c.limit(p, v)
		q.limit.put(l, ok, p)
	}
	for _, f := range []struct {
		key string
		dst *opt[sim.Duration]
	}{{"target", &q.target}, {"interval", &q.interval}} {
		if v, p, ok := o.get(f.key); ok {
			d, ok := c.duration(p, v)
			if ok && d == 0 {
				c.add(p, "must be positive")
				ok = false
			}
			f.dst.put(d, ok, p)
		}
	}
	if v, p, ok := o.get("ecn"); ok {
		b, ok := c.boolean(p, v)
		q.ecn.put(b, ok, p)
	}
	return q
}

func (c *collector) lossSpec(path string, v any) lossSpec {
	l := lossSpec{path: path}
	o, ok := c.object(path, v, lossShape)
	if !ok {
		return l
	}
	if v, p, ok := o.get("kind"); ok {
		k, ok := enum(c, p, v, lossKinds)
		l.kind.put(k, ok, p)
	}
	if v, p, ok := o.get("p"); ok {
		f, ok := c.prob(p, v)
		l.p.put(f, ok, p)
	}
	return l
}

func (c *collector) jitterSpec(path string, v any) jitterSpec {
	j := jitterSpec{path: path}
	o, ok := c.object(path, v, jitterShape)
	if !ok {
		return j
	}
	if v, p, ok := o.get("kind"); ok {
		k, ok := enum(c, p, v, jitterKinds)
		j.kind.put(k, ok, p)
	}
	if v, p, ok := o.get("sigma"); ok {
		d, ok := c.duration(p, v)
		j.sigma.put(d, ok, p)
	}
	return j
}

// mergeDir lays a direction's own values over the link's shared ones. Within
// qdisc, loss and jitter the merge is per field too, except that naming a
// different kind starts that object afresh: parameters of the shared kind do
// not carry over to another kind.
func mergeDir(base, over dirSpec) dirSpec {
	out := dirSpec{rate: pick(base.rate, over.rate), delay: pick(base.delay, over.delay)}

	out.qdisc = base.qdisc
	if kindChanged(base.qdisc.kind, over.qdisc.kind) {
		out.qdisc = over.qdisc
	} else if over.qdisc.path != "" {
		out.qdisc = qdiscSpec{
			path: over.qdisc.path, kind: pick(base.qdisc.kind, over.qdisc.kind),
			limit:  pick(base.qdisc.limit, over.qdisc.limit),
			target: pick(base.qdisc.target, over.qdisc.target), interval: pick(base.qdisc.interval, over.qdisc.interval),
			ecn: pick(base.qdisc.ecn, over.qdisc.ecn),
		}
	}

	out.loss = base.loss
	if kindChanged(base.loss.kind, over.loss.kind) {
		out.loss = over.loss
	} else if over.loss.path != "" {
		out.loss = lossSpec{path: over.loss.path, kind: pick(base.loss.kind, over.loss.kind), p: pick(base.loss.p, over.loss.p)}
	}

	out.jitter = base.jitter
	if kindChanged(base.jitter.kind, over.jitter.kind) {
		out.jitter = over.jitter
	} else if over.jitter.path != "" {
		out.jitter = jitterSpec{path: over.jitter.path, kind: pick(base.jitter.kind, over.jitter.kind), sigma: pick(base.jitter.sigma, over.jitter.sigma)}
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
	dir := path[len(path)-2:]
	if !d.rate.set {
		c.add(join(path, "rate"), "missing; give \"rate\" on the link or in %q", dir)
	}
	if !d.delay.set {
		c.add(join(path, "delay"), "missing; give \"delay\" on the link or in %q", dir)
	}
	out.Rate, out.Delay = d.rate.v, d.delay.v
	out.Qdisc = c.qdisc(d.qdisc)
	out.Loss = c.loss(d.loss)
	out.Jitter = c.jitter(d.jitter)
	return out
}

func (c *collector) qdisc(q qdiscSpec) Qdisc {
	out := Qdisc{Kind: q.kind.or(FIFO), Limit: q.limit.or(QueueLimit{Packets: DefaultQueuePackets})}
	if out.Kind == CoDel {
		out.Target = q.target.or(DefaultCoDelTarget)
		out.Interval = q.interval.or(DefaultCoDelInterval)
		out.ECN = q.ecn.or(false)
		return out
	}
	for _, f := range []struct {
		set  bool
		path string
	}{{q.target.set, q.target.path}, {q.interval.set, q.interval.path}, {q.ecn.set, q.ecn.path}} {
		if f.set && !q.kind.bad {
			c.add(f.path, "only for qdisc kind \"codel\"")
		}
	}
	return out
}

func (c *collector) loss(l lossSpec) Loss {
	out := Loss{Kind: l.kind.or(NoLoss), P: l.p.v}
	switch {
	case out.Kind == NoLoss && l.p.set && !l.kind.bad:
		c.add(l.p.path, "only for loss kind \"bernoulli\"")
		out.P = 0
	case out.Kind == Bernoulli && !l.p.set:
		c.add(join(l.path, "p"), "missing; bernoulli loss needs a probability p")
	}
	return out
}

func (c *collector) jitter(j jitterSpec) Jitter {
	out := Jitter{Kind: j.kind.or(NoJitter), Sigma: j.sigma.v}
	switch {
	case out.Kind == NoJitter && j.sigma.set && !j.kind.bad:
		c.add(j.sigma.path, "only for jitter kind \"gaussian\"")
		out.Sigma = 0
	case out.Kind == Gaussian && !j.sigma.set:
		c.add(join(j.path, "sigma"), "missing; gaussian jitter needs sigma")
	}
	return out
}
