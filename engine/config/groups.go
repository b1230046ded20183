package config

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// MaxGroupCount bounds a group's flows, so a typo cannot ask for a billion.
const MaxGroupCount = 1_000_000

// Group is a flow group as written: Count flows "<ID>/0" … "<ID>/<Count-1>"
// sharing a CC, app and TCP options, each with its ends, start time and size
// drawn deterministically from the run's seed. Parse expands a group into
// Scenario.Flows (and, for per-flow hosts, Nodes and Links, each marked with
// the group) at the group's place in the flows array; Canonical writes the
// group back, not its expansion.
type Group struct {
	ID       string
	Count    int
	Src, Dst GroupEnds
	Start    StartDist
	Size     SizeDist
	Template Flow // its Params (CC, App, TCP, a pump's Rate, …) are every flow's, shared
}

// GroupEnds is where a group's flows start or end: flow i uses
// Nodes[i % len(Nodes)], or, when Attach is set, a host of its own named
// "<flow>/src" or "<flow>/dst", joined to node Attach by a link of the same
// name whose two directions are Link.
type GroupEnds struct {
	Nodes  []string
	Attach string
	Link   Direction
}

// StartKind is how a group's flows are spread in time.
type StartKind uint8

// Start distributions.
const (
	StartAt       StartKind = iota // every flow at At
	StartPoisson                   // arrivals of a Poisson process of PerSecond from At
	StartUniform                   // each flow uniform in [At, At+Span)
	StartPeriodic                  // rounds of Batch flows, one round every Every from At
)

// StartDist is a group's start-time distribution.
type StartDist struct {
	Kind      StartKind
	At        sim.Duration
	PerSecond float64 // StartPoisson: mean arrivals per second
	Span      sim.Duration
	Every     sim.Duration // StartPeriodic
	Batch     int          // StartPeriodic: flows per round
	// Jitter (StartAt, StartPeriodic) delays each flow's start by a
	// uniform draw in [0, Jitter), as the threads of real senders scatter
	// an incast's responses by tens of microseconds: whether a late flow
	// loses its whole first window depends on it.
	Jitter sim.Duration
}

// SizeKind is a group's flow-size distribution.
type SizeKind uint8

// Size distributions.
const (
	SizeFixed     SizeKind = iota // Value (0: bulk)
	SizeUniform                   // uniform integer in [Min, Max]
	SizeLognormal                 // exp(ln Median + Sigma·N(0,1))
	SizePareto                    // Min / U^(1/Alpha), capped at Max if set
	SizeEmpirical                 // piecewise-linear inverse of CDF
)

// CDFPoint is one point of an empirical size distribution: P(size ≤ Size) = P.
type CDFPoint struct {
	Size units.Bytes
	P    float64
}

// SizeDist is a group's flow-size distribution.
type SizeDist struct {
	Kind     SizeKind
	Value    units.Bytes
	Min, Max units.Bytes
	Median   units.Bytes
	Sigma    float64
	Alpha    float64
	File     string // SizeEmpirical: the built-in CDF it came from, if any (a file's points are in CDF)
	CDF      []CDFPoint
}

var (
	startKinds = map[string]StartKind{"at": StartAt, "poisson": StartPoisson, "uniform": StartUniform, "periodic": StartPeriodic}
	sizeKinds  = map[string]SizeKind{"fixed": SizeFixed, "uniform": SizeUniform, "lognormal": SizeLognormal, "pareto": SizePareto, "empirical": SizeEmpirical}
)

// builtinCDFs are flow-size distributions data-centre papers use, as
// (bytes, percent) points. websearch is the web-search workload of the
// DCTCP paper (Alizadeh et al., SIGCOMM 2010, fig. 4) in the form pFabric
// and HPCC's traffic generator use; datamining the data-mining workload of
// VL2 (Greenberg et al., SIGCOMM 2009, fig. 2) in the form of the DCTCP
// authors' empirical-traffic-gen (VL2_CDF), as pFabric, CONGA and Homa use
// it: half the flows under 1.1 KB, the largest 1 GB.
var builtinCDFs = map[string][][2]float64{
	"websearch": {{0, 0}, {10000, 15}, {20000, 20}, {30000, 30}, {50000, 40}, {80000, 53},
		{200000, 60}, {1000000, 70}, {2000000, 80}, {5000000, 90}, {10000000, 97}, {30000000, 100}},
	"datamining": {{0, 0}, {180, 10}, {216, 20}, {560, 30}, {900, 40}, {1100, 50}, {1870, 60},
		{3160, 70}, {10000, 80}, {400000, 90}, {3160000, 95}, {100000000, 98}, {1000000000, 100}},
}

// isGroup reports whether a flows element is a group.
func isGroup(o obj) bool {
	_, has := o.m["group"]
	return has
}

// group decodes a group and appends its expansion to s.
func (c *collector) group(path string, o obj, id string, opts options, s *Scenario) {
	g := Group{ID: id}
	if _, p, ok := o.get("id"); ok {
		c.add(p, "a group names its flows \"<group>/<i>\"; give \"group\" or \"id\", not both")
	}
	if v, p, ok := o.get("count"); ok {
		if n, ok := c.countIn(p, v, 1, MaxGroupCount); ok {
			g.Count = int(n)
		}
	} else {
		c.add(join(path, "count"), "missing; how many flows the group has")
	}
	g.Src = c.groupEnds(o, "src")
	g.Dst = c.groupEnds(o, "dst")
	if v, p, ok := o.get("start"); ok {
		g.Start = c.startDist(p, v)
	}
	if v, p, ok := o.get("size"); ok {
		g.Size = c.sizeDist(p, v)
	}
	g.Template = c.flowCommon(path, o, id, opts)
	s.Groups = append(s.Groups, g)
	if len(c.errs) == 0 {
		g.expand(s)
	}
}

// groupEnds decodes a group's src or dst: a node id, a list of them, or an
// object asking for a host per flow.
func (c *collector) groupEnds(o obj, key string) GroupEnds {
	var e GroupEnds
	v, p, ok := o.get(key)
	if !ok {
		c.add(p, "missing; a node id, a list of node ids, or {\"attach\": router, \"rate\", \"delay\"} for a host per flow")
		return e
	}
	switch t := v.(type) {
	case string:
		e.Nodes = []string{t}
	case []any:
		if len(t) == 0 {
			c.add(p, "at least one node id is required")
		}
		for i, x := range t {
			if s, ok := c.str(fmt.Sprintf("%s[%d]", p, i), x); ok {
				e.Nodes = append(e.Nodes, s)
			}
		}
	case map[string]any:
		h, ok := c.object(p, v, hostShape)
		if !ok {
			return e
		}
		if v, ap, ok := h.get("attach"); ok {
			if e.Attach, ok = c.str(ap, v); ok && e.Attach == "" {
				c.add(ap, "empty; the node each flow's own host links to")
			}
		} else {
			c.add(join(p, "attach"), "missing; the node each flow's own host links to")
		}
		e.Link = c.direction(p, c.dirSpec(h))
	default:
		c.add(p, "must be a node id, a list of node ids or a host object, not %s", describe(v))
	}
	return e
}

// startDist decodes a start time or distribution.
func (c *collector) startDist(p string, v any) StartDist {
	d := StartDist{Kind: StartAt}
	if _, isObj := v.(map[string]any); !isObj {
		d.At, _ = c.duration(p, v)
		return d
	}
	o, ok := c.object(p, v, startShape)
	if !ok {
		return d
	}
	if v, kp, ok := o.get("kind"); ok {
		d.Kind, _ = enum(c, kp, v, startKinds)
	} else {
		c.add(join(p, "kind"), "missing; expected one of %s", keys(startKinds))
	}
	if v, ap, ok := o.get("at"); ok {
		d.At, _ = c.duration(ap, v)
	}
	rv, rp, rok := o.get("rate")
	sv, sp, sok := o.get("span")
	switch {
	case d.Kind == StartPoisson && rok:
		d.PerSecond, _ = c.perSecond(rp, rv)
	case d.Kind == StartPoisson:
		c.add(rp, "missing; the mean arrival rate, e.g. \"200/s\"")
	case rok:
		c.add(rp, "only for kind \"poisson\"")
	}
	switch {
	case d.Kind == StartUniform && sok:
		if x, ok := c.duration(sp, sv); ok {
			if x == 0 {
				c.add(sp, "must be positive")
			}
			d.Span = x
		}
	case d.Kind == StartUniform:
		c.add(sp, "missing; starts are uniform in [at, at+span)")
	case sok:
		c.add(sp, "only for kind \"uniform\"")
	}
	ev, ep, eok := o.get("every")
	bv, bp, bok := o.get("batch")
	switch {
	case d.Kind == StartPeriodic && eok:
		if x, ok := c.duration(ep, ev); ok {
			if x == 0 {
				c.add(ep, "must be positive")
			}
			d.Every = x
		}
	case d.Kind == StartPeriodic:
		c.add(ep, "missing; the time between rounds, e.g. \"10ms\"")
	case eok:
		c.add(ep, "only for kind \"periodic\"")
	}
	switch {
	case d.Kind == StartPeriodic && bok:
		if n, ok := c.countIn(bp, bv, 1, MaxGroupCount); ok {
			d.Batch = int(n)
		}
	case d.Kind == StartPeriodic:
		d.Batch = 1
	case bok:
		c.add(bp, "only for kind \"periodic\"")
	}
	if v, jp, ok := o.get("jitter"); ok {
		if x, ok := c.duration(jp, v); ok {
			switch {
			case d.Kind != StartAt && d.Kind != StartPeriodic:
				c.add(jp, "only for kinds \"at\" and \"periodic\" (the others draw every start already)")
			case x == 0:
				c.add(jp, "must be positive (leave it out for none)")
			}
			d.Jitter = x
		}
	}
	return d
}

// perSecondPattern is an arrival rate as a string: a plain decimal number
// (an exponent allowed) with the unit "/s", as the schema's pattern has it.
var perSecondPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/s$`)

// perSecond decodes an arrival rate "200/s" (or a plain JSON number per
// second). A string needs the unit, as durations do: "200" alone could as
// well mean a minute's arrivals.
func (c *collector) perSecond(p string, v any) (float64, bool) {
	var s string
	switch t := v.(type) {
	case string:
		if !perSecondPattern.MatchString(t) {
			c.add(p, "%s is not an arrival rate; expected a number with the unit \"/s\", e.g. \"200/s\"", describe(v))
			return 0, false
		}
		s = strings.TrimSuffix(t, "/s")
	case json.Number:
		s = t.String()
	default:
		c.add(p, "must be an arrival rate such as \"200/s\", not %s", describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		c.add(p, "%s is not a positive rate; expected e.g. \"200/s\"", describe(v))
		return 0, false
	}
	return x, true
}

// sizeDist decodes a flow size or a size distribution.
func (c *collector) sizeDist(p string, v any) SizeDist {
	d := SizeDist{Kind: SizeFixed}
	if _, isObj := v.(map[string]any); !isObj {
		d.Value, _ = c.size(p, v)
		return d
	}
	o, ok := c.object(p, v, sizeDistShape)
	if !ok {
		return d
	}
	v, kp, ok := o.get("kind")
	if !ok {
		c.add(kp, "missing; expected one of %s", keys(sizeKinds))
		return d
	}
	if d.Kind, ok = enum(c, kp, v, sizeKinds); !ok {
		return d
	}
	allowed := map[SizeKind][]string{
		SizeFixed: {"value"}, SizeUniform: {"min", "max"}, SizeLognormal: {"median", "sigma", "max"},
		SizePareto: {"min", "alpha", "max"}, SizeEmpirical: {"file", "cdf"},
	}[d.Kind]
	required := map[SizeKind][]string{
		SizeFixed: {"value"}, SizeUniform: {"min", "max"}, SizeLognormal: {"median", "sigma"},
		SizePareto: {"min", "alpha"},
	}[d.Kind]
	for _, k := range fieldNames(sizeDistShape) {
		_, fp, present := o.get(k)
		switch {
		case k == "kind":
		case present && !contains(allowed, k):
			c.add(fp, "not a parameter of kind %q; it takes %s", nameOf(sizeKinds, d.Kind), strings.Join(allowed, ", "))
		case !present && contains(required, k):
			c.add(fp, "missing; kind %q needs %s", nameOf(sizeKinds, d.Kind), strings.Join(required, ", "))
		}
	}
	sizeAt := func(k string) units.Bytes {
		if v, fp, ok := o.get(k); ok && contains(allowed, k) {
			n, _ := c.size(fp, v)
			return n
		}
		return 0
	}
	numAt := func(k string) float64 {
		if v, fp, ok := o.get(k); ok && contains(allowed, k) {
			if x, ok := positive(v); ok {
				return x
			}
			c.add(fp, "must be a positive number, not %s", describe(v))
		}
		return 0
	}
	d.Value, d.Min, d.Max, d.Median = sizeAt("value"), sizeAt("min"), sizeAt("max"), sizeAt("median")
	d.Sigma, d.Alpha = numAt("sigma"), numAt("alpha")
	if d.Kind == SizeUniform && d.Max < d.Min {
		c.add(join(p, "max"), "%v is below min %v", d.Max, d.Min)
	}
	if _, fp, ok := o.get("min"); ok && d.Kind == SizeUniform && d.Min == 0 {
		c.add(fp, "must be at least 1B: a flow whose size is 0 is a bulk flow")
	}
	if (d.Kind == SizePareto || d.Kind == SizeLognormal) && d.Max > 0 && d.Max < max(d.Min, d.Median) {
		c.add(join(p, "max"), "%v is below the distribution's scale", d.Max)
	}
	if (d.Kind == SizePareto && d.Min == 0) || (d.Kind == SizeLognormal && d.Median == 0) {
		c.add(p, "the scale (min or median) must be positive")
	}
	if d.Kind == SizeEmpirical {
		d.File, d.CDF = c.cdf(p, o)
	}
	return d
}

// cdf decodes an empirical distribution: a built-in by name, a CDF file
// relative to the scenario file (ParseCDF), or inline [bytes, cumulative
// probability] points, sizes and probabilities both non-decreasing and the
// last probability 1. A file's points travel inline in the canonical form,
// so a checkpoint replays without it; a built-in keeps its name.
func (c *collector) cdf(p string, o obj) (string, []CDFPoint) {
	fv, fp, fok := o.get("file")
	cv, cp, cok := o.get("cdf")
	if fok == cok {
		c.add(p, "kind \"empirical\" needs exactly one of \"file\" (a built-in, %s, or a CDF file) and \"cdf\"", keys(builtinCDFs))
		return "", nil
	}
	if fok {
		name, ok := c.str(fp, fv)
		if !ok {
			return "", nil
		}
		if pts, known := builtinCDFs[name]; known {
			out := make([]CDFPoint, len(pts))
			for i, x := range pts {
				out[i] = CDFPoint{units.Bytes(x[0]), x[1] / 100}
			}
			return name, out
		}
		text, err := c.scenarioFile(name, MaxCDFBytes, "CDF")
		if _, ok := err.(noFile); ok {
			c.add(fp, "no built-in distribution %q (built-ins: %s); %v; or give its points inline as \"cdf\"", name, keys(builtinCDFs), err)
			return "", nil
		}
		if err != nil {
			c.add(fp, "%v", err)
			return "", nil
		}
		out, err := ParseCDF(text)
		if err != nil {
			c.add(fp, "not a flow-size CDF: %v", err)
			return "", nil
		}
		return "", out
	}
	arr, ok := cv.([]any)
	if !ok || len(arr) < 2 {
		c.add(cp, "must be an array of at least two [bytes, probability] points")
		return "", nil
	}
	var out []CDFPoint
	for i, e := range arr {
		ep := fmt.Sprintf("%s[%d]", cp, i)
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			c.add(ep, "must be a [bytes, probability] pair")
			continue
		}
		n, ok1 := c.size(ep+"[0]", pair[0])
		q, ok2 := c.prob(ep+"[1]", pair[1])
		if !ok1 || !ok2 {
			continue
		}
		if len(out) > 0 && (n < out[len(out)-1].Size || q < out[len(out)-1].P) {
			c.add(ep, "sizes and probabilities must not decrease")
		}
		out = append(out, CDFPoint{n, q})
	}
	if len(out) > 0 && out[len(out)-1].P != 1 {
		c.add(cp, "the last point's probability must be 1")
	}
	return "", out
}

func positive(v any) (float64, bool) {
	n, ok := v.(interface{ Float64() (float64, error) })
	if !ok {
		return 0, false
	}
	x, err := n.Float64()
	return x, err == nil && x > 0 && !math.IsInf(x, 0)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fieldNames(sh *shape) []string {
	return strings.Split(fieldList(sh), ", ")
}

// expand appends g's flows (and per-flow hosts and links) to s. Start times
// come from the stream "group/<id>/start", their jitter from
// "group/<id>/jitter", sizes from "group/<id>/size", one draw after another
// in flow order, so a group's flows depend only on the seed and the
// group's own parameters.
func (g *Group) expand(s *Scenario) {
	startRNG := rng.Stream(s.Runtime.Seed, "group/"+g.ID+"/start")
	jitterRNG := rng.Stream(s.Runtime.Seed, "group/"+g.ID+"/jitter")
	sizeRNG := rng.Stream(s.Runtime.Seed, "group/"+g.ID+"/size")
	t := g.Start.At
	s.Flows = slices.Grow(s.Flows, g.Count) // room for all: a group can be most of a run's memory
	for i := range g.Count {
		f := g.Template
		f.ID = g.ID + "/" + strconv.Itoa(i)
		f.Group = g.ID
		f.Src = g.Src.node(s, g.ID, f.ID, "src", i)
		f.Dst = g.Dst.node(s, g.ID, f.ID, "dst", i)
		switch g.Start.Kind {
		case StartAt:
			f.Start = g.Start.At
		case StartPoisson:
			// Exponential inter-arrival times of mean 1/rate seconds.
			gap := float64(startRNG.ExpFloat64()) / g.Start.PerSecond * float64(sim.Second)
			if gap < float64(sim.MaxDuration) {
				t = min(t+sim.Duration(gap), afterAnyRun)
			} else {
				t = afterAnyRun
			}
			f.Start = t
		case StartUniform:
			f.Start = g.Start.At + sim.Duration(startRNG.Int64N(int64(g.Start.Span)))
		case StartPeriodic:
			f.Start = afterAnyRun
			if n := int64(i / g.Start.Batch); g.Start.Every == 0 || n <= int64(sim.MaxDuration)/int64(g.Start.Every) {
				f.Start = min(g.Start.At+sim.Duration(n)*g.Start.Every, afterAnyRun)
			}
		}
		if g.Start.Jitter > 0 {
			f.Start += sim.Duration(jitterRNG.Int64N(int64(g.Start.Jitter)))
		}
		f.Size = g.Size.draw(sizeRNG)
		s.Flows = append(s.Flows, f)
	}
}

// afterAnyRun stands for a group's start later than the longest run: such a
// flow starts no more than it would have, and its start overflows no Time.
const afterAnyRun = sim.MaxDuration + sim.Second

// node returns the node flow i uses at this end, adding its own host and
// access link when the group asks for them.
func (e *GroupEnds) node(s *Scenario, group, flow, end string, i int) string {
	if e.Attach == "" {
		return e.Nodes[i%len(e.Nodes)]
	}
	id := flow + "/" + end
	s.Nodes = append(s.Nodes, Node{ID: id, Kind: Endpoint, Group: group})
	l := Link{ID: id, A: id, B: e.Attach, AB: e.Link, BA: e.Link, Group: group}
	if end == "dst" {
		l.A, l.B = e.Attach, id
	}
	s.Links = append(s.Links, l)
	return id
}

// draw returns one flow size; 0 is a bulk flow.
func (d *SizeDist) draw(r interface {
	Float64() float64
	NormFloat64() float64
	Int64N(int64) int64
}) units.Bytes {
	clamp := func(x float64) units.Bytes {
		if d.Max > 0 && x > float64(d.Max) {
			return d.Max
		}
		return units.Bytes(max(1, math.Round(x)))
	}
	switch d.Kind {
	case SizeUniform:
		return d.Min + units.Bytes(r.Int64N(int64(d.Max-d.Min)+1))
	case SizeLognormal:
		return clamp(math.Exp(float64(math.Log(float64(d.Median))) + float64(d.Sigma*r.NormFloat64())))
	case SizePareto:
		// Inverse transform: 1-U is in (0, 1], so the draw is finite.
		return clamp(float64(d.Min) / math.Pow(1-r.Float64(), 1/d.Alpha))
	case SizeEmpirical:
		u := r.Float64()
		for i := 1; i < len(d.CDF); i++ {
			a, b := d.CDF[i-1], d.CDF[i]
			if u < b.P {
				if b.P == a.P {
					return clamp(float64(b.Size))
				}
				// Linear interpolation between the two points.
				frac := float64(u-a.P) / float64(b.P-a.P)
				return clamp(float64(a.Size) + float64(frac*float64(b.Size-a.Size)))
			}
		}
		return clamp(float64(d.CDF[len(d.CDF)-1].Size))
	}
	return d.Value
}

// group returns the group named id.
func (s *Scenario) group(id string) *Group {
	for i := range s.Groups {
		if s.Groups[i].ID == id {
			return &s.Groups[i]
		}
	}
	panic("config: flow of unknown group " + id)
}

// tree writes the group as written, every default filled in; its flows'
// shared settings come from the template as a flow writes them.
func (g *Group) tree() tree {
	t := g.Template.tree()
	delete(t, "id")
	t["group"] = g.ID
	t["count"] = json.Number(strconv.Itoa(g.Count))
	t["src"], t["dst"] = g.Src.tree(), g.Dst.tree()
	t["start"] = g.Start.tree()
	t["size"] = g.Size.tree()
	return t
}

func (e GroupEnds) tree() any {
	if e.Attach != "" {
		t := e.Link.tree()
		t["attach"] = e.Attach
		return t
	}
	out := make([]any, len(e.Nodes))
	for i, n := range e.Nodes {
		out[i] = n
	}
	return out
}

func (d StartDist) tree() any {
	if d.Kind == StartAt && d.Jitter == 0 {
		return d.At.String()
	}
	t := tree{"kind": nameOf(startKinds, d.Kind), "at": d.At.String()}
	switch d.Kind {
	case StartPoisson:
		t["rate"] = strconv.FormatFloat(d.PerSecond, 'g', -1, 64) + "/s"
	case StartUniform:
		t["span"] = d.Span.String()
	case StartPeriodic:
		t["every"], t["batch"] = d.Every.String(), json.Number(strconv.Itoa(d.Batch))
	}
	if d.Jitter > 0 { // absent keeps older scenarios' hashes
		t["jitter"] = d.Jitter.String()
	}
	return t
}

func (d SizeDist) tree() any {
	num := func(x float64) json.Number { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }
	t := tree{"kind": nameOf(sizeKinds, d.Kind)}
	switch d.Kind {
	case SizeFixed:
		return formatSize(d.Value)
	case SizeUniform:
		t["min"], t["max"] = formatSize(d.Min), formatSize(d.Max)
	case SizeLognormal:
		t["median"], t["sigma"] = formatSize(d.Median), num(d.Sigma)
	case SizePareto:
		t["min"], t["alpha"] = formatSize(d.Min), num(d.Alpha)
	case SizeEmpirical:
		if d.File != "" {
			t["file"] = d.File
			return t
		}
		pts := make([]any, len(d.CDF))
		for i, p := range d.CDF {
			pts[i] = []any{formatSize(p.Size), num(p.P)}
		}
		t["cdf"] = pts
	}
	if d.Max > 0 && (d.Kind == SizeLognormal || d.Kind == SizePareto) {
		t["max"] = formatSize(d.Max)
	}
	return t
}
