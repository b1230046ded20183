package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

// Pump is the cc name of a constant-rate flow: it sends PacketSize-byte
// packets at Rate, without TCP.
const Pump = "pump"

// DefaultCC is the congestion control of a flow that names none, as on a
// Linux host (net.ipv4.tcp_congestion_control).
const DefaultCC = "cubic"

// Option adjusts how Parse validates.
type Option func(*options)

type options struct {
	ccs      []string                                    // known CC names; nil means any name is accepted
	param    func(cc, name string, v int64) error        // checks a CC's module parameter; nil accepts any
	paramSet func(cc string, set map[string]int64) error // checks a flow's module parameters together; nil accepts any
	dir      string                                      // directory trace and CDF files are relative to
	files    map[string][]byte                           // trace and CDF files sent with the scenario, by name
}

// WithCCs makes Parse reject a flow whose cc is neither Pump nor one of
// names. Pass cc.Names(); config itself does not import the algorithms.
func WithCCs(names []string) Option {
	return func(o *options) { o.ccs = slices.Clone(names) }
}

// WithCCParams makes Parse check each of a flow's cc_params with check
// (cc.CheckParam); config itself does not import the algorithms.
func WithCCParams(check func(cc, name string, v int64) error) Option {
	return func(o *options) { o.param = check }
}

// WithCCParamSet makes Parse check a flow's cc_params together with check
// (cc.CheckParams), for rules that tie one parameter to another; it runs
// when each passed WithCCParams's check.
func WithCCParamSet(check func(cc string, set map[string]int64) error) Option {
	return func(o *options) { o.paramSet = check }
}

// Parse decodes, defaults and validates scenario JSON. On failure the error
// is an *Errors listing every problem with its JSON path.
func Parse(data []byte, opts ...Option) (*Scenario, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	tree, err := decodeTree(data)
	if err != nil {
		return nil, &Errors{List: []FieldError{{Reason: "invalid JSON: " + err.Error()}}}
	}
	c := &collector{dir: o.dir, files: o.files}
	s := c.scenario(tree, o)
	if err := c.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// idPattern is what an id may contain: --set paths split on dots, so ids
// stay to letters, digits, '_' and '-'.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// scenario decodes the whole document.
func (c *collector) scenario(tree any, o options) *Scenario {
	root, ok := c.object("", tree, scenarioShape)
	if !ok {
		return nil
	}
	s := &Scenario{}
	if v, p, ok := root.get("name"); ok {
		s.Name, _ = c.str(p, v)
	}
	if v, p, ok := root.get("description"); ok {
		s.Description, _ = c.str(p, v)
	}
	s.Runtime = c.runtime(root)
	c.embeddedTraces(root)
	c.list(root, "nodes", func(path string, e obj, id string) {
		s.Nodes = append(s.Nodes, c.node(path, e, id))
	})
	c.list(root, "links", func(path string, e obj, id string) {
		s.Links = append(s.Links, c.link(path, e, id))
	})
	c.list(root, "flows", func(path string, e obj, id string) {
		if isGroup(e) {
			c.group(path, e, id, o, s)
			return
		}
		s.Flows = append(s.Flows, c.flow(path, e, id, o))
	})
	if _, _, ok := root.get("changes"); ok {
		c.list(root, "changes", func(path string, e obj, _ string) {
			s.Changes = append(s.Changes, c.change(path, e))
		})
	}
	s.Trace = c.trace(root)
	c.crossCheck(s)
	return s
}

// list decodes the array under key, calling each for every element object
// with its path. Elements of id-addressed arrays need a unique id.
func (c *collector) list(o obj, key string, each func(path string, e obj, id string)) {
	v, path, ok := o.get(key)
	sh := o.shape.fields[key]
	if !ok {
		c.add(path, "missing; at least one entry is required")
		return
	}
	arr, isArr := v.([]any)
	if !isArr {
		c.add(path, "must be an array, not %s", describe(v))
		return
	}
	if len(arr) == 0 && sh.byID {
		c.add(path, "at least one entry is required")
	}
	seen := map[string]bool{}
	for i, ev := range arr {
		ep := fmt.Sprintf("%s[%d]", key, i)
		id := ""
		if sh.byID {
			ep = fmt.Sprintf("%s[#%d]", key, i)
			if m, isObj := ev.(map[string]any); isObj {
				idKey := "id"
				if _, grp := m["group"]; grp && sh.elem.fields["group"] != nil && m["id"] == nil {
					idKey = "group" // a flow group is addressed by its name
				}
				switch raw := m[idKey].(type) {
				case nil:
					c.add(join(ep, "id"), "missing")
				case string:
					if !idPattern.MatchString(raw) {
						c.add(join(ep, idKey), "%q is not an id; use letters, digits, '_' and '-'", raw)
						break
					}
					id, ep = raw, fmt.Sprintf("%s[%s]", key, raw)
					if seen[id] {
						c.add(join(ep, idKey), "duplicate id %q", id)
					}
					seen[id] = true
				default:
					c.add(join(ep, idKey), "must be a string, not %s", describe(raw))
				}
			}
		}
		if e, ok := c.object(ep, ev, sh.elem); ok {
			each(ep, e, id)
		}
	}
}

func (c *collector) runtime(root obj) Runtime {
	var r Runtime
	v, path, ok := root.get("runtime")
	if !ok {
		c.add(path, "missing; give at least {\"duration\": \"10s\"}")
		return r
	}
	o, ok := c.object(path, v, root.shape.fields["runtime"])
	if !ok {
		return r
	}
	if v, p, ok := o.get("seed"); ok {
		r.Seed, _ = c.count(p, v, math.MaxUint64)
	}
	if v, p, ok := o.get("kernel_clock"); ok {
		r.KernelClock, _ = enum(c, p, v, kernelClocks)
	}
	v, p, ok := o.get("duration")
	if !ok {
		c.add(p, "missing; the run needs a length, e.g. \"10s\"")
		return r
	}
	if d, ok := c.duration(p, v); ok {
		if d == 0 {
			c.add(p, "must be positive")
		}
		r.Duration = d
	}
	return r
}

var (
	nodeKinds    = map[string]NodeKind{"endpoint": Endpoint, "router": Router, "switch": Switch, "proxy": Proxy}
	routingModes = map[string]Routing{"first": RouteFirst, "ecmp": RouteECMP, "spray": RouteSpray}
	kernelClocks = map[string]KernelClock{"random": ClockRandom, "aligned": ClockAligned}
)

func (c *collector) node(path string, o obj, id string) Node {
	n := Node{ID: id}
	v, p, ok := o.get("kind")
	if !ok {
		c.add(p, "missing; expected %s", keys(nodeKinds))
		return n
	}
	kindOK := false
	n.Kind, kindOK = enum(c, p, v, nodeKinds)
	if v, p, ok := o.get("routing"); ok {
		n.Routing, _ = enum(c, p, v, routingModes)
		if kindOK && n.Kind != Router {
			c.add(p, "only for routers; a switch forwards by learned addresses, an endpoint does not forward")
		}
	}
	if n.Kind == Proxy {
		n.Buffer = DefaultProxyBuffer
	}
	if v, p, ok := o.get("buffer"); ok {
		if b, ok := c.size(p, v); ok {
			if b == 0 {
				c.add(p, "must be positive")
			}
			n.Buffer = b
		}
		if kindOK && n.Kind != Proxy {
			c.add(p, "only for proxies")
		}
	}
	return n
}

// DefaultProxyBuffer is a proxy's relay buffer when it gives none: Linux's
// default send-buffer ceiling, tcp_wmem[2].
const DefaultProxyBuffer = DefaultSndBuf

var traceDetails = map[string]TraceDetail{"summary": TraceSummary, "sampled": TraceSampled, "change": TraceChange}

// DefaultTraceInterval is the sampling interval of a sampled trace that
// gives none.
const DefaultTraceInterval = 10 * sim.Millisecond

func (c *collector) trace(root obj) Trace {
	t := Trace{Detail: TraceSummary}
	v, path, ok := root.get("trace")
	if !ok {
		return t
	}
	o, ok := c.object(path, v, root.shape.fields["trace"])
	if !ok {
		return t
	}
	if v, p, ok := o.get("detail"); ok {
		t.Detail, _ = enum(c, p, v, traceDetails)
	}
	v, p, ok := o.get("interval")
	switch {
	case ok && t.Detail != TraceSampled:
		c.add(p, "only for detail \"sampled\" (to change a scenario's sampled trace, replace the object: trace={\"detail\":\"change\"})")
	case ok:
		if d, ok := c.duration(p, v); ok {
			if d == 0 {
				c.add(p, "must be positive")
			}
			t.Interval = d
		}
	case t.Detail == TraceSampled:
		t.Interval = DefaultTraceInterval
	}
	return t
}

// enum decodes a string that must be one of the keys of m.
func enum[T any](c *collector, path string, v any, m map[string]T) (T, bool) {
	var zero T
	s, ok := c.str(path, v)
	if !ok {
		return zero, false
	}
	k, ok := m[s]
	if !ok {
		c.add(path, "unknown value %q; expected one of %s", s, keys(m))
	}
	return k, ok
}

// keys lists a map's keys sorted and quoted, for error messages.
func keys[T any](m map[string]T) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, fmt.Sprintf("%q", k))
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}
