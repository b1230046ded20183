package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

var changeDirs = map[string]bool{"ab": true, "ba": true}

// change decodes one scheduled change. Its loss, jitter or capacity, if
// given, replaces the direction's model whole; a rate ends a capacity
// process or trace; an outage takes the direction down from at.
func (c *collector) change(path string, o obj) Change {
	var ch Change
	if v, p, ok := o.get("at"); ok {
		ch.At, _ = c.duration(p, v)
	} else {
		c.add(p, "missing; when the change happens, e.g. \"12s\"")
	}
	if v, p, ok := o.get("link"); ok {
		ch.Link, _ = c.str(p, v)
	} else {
		c.add(p, "missing; the id of the link to change")
	}
	if v, p, ok := o.get("dir"); ok {
		if s, ok := c.str(p, v); ok {
			if !changeDirs[s] {
				c.add(p, "%q is not a direction; expected \"ab\" or \"ba\"", s)
			}
			ch.Dir = s
		}
	} else {
		c.add(p, "missing; \"ab\" or \"ba\"")
	}
	changed := false
	if v, p, ok := o.get("rate"); ok {
		changed = true
		if r, ok := c.rate(p, v); ok {
			ch.Rate = &r
		}
	}
	if v, p, ok := o.get("delay"); ok {
		changed = true
		if d, ok := c.duration(p, v); ok {
			ch.Delay = &d
		}
	}
	if v, p, ok := o.get("loss"); ok {
		changed = true
		l := c.loss(c.modelSpec(p, v, lossShape))
		ch.Loss = &l
	}
	if v, p, ok := o.get("jitter"); ok {
		changed = true
		j := c.jitter(c.modelSpec(p, v, jitterShape))
		ch.Jitter = &j
	}
	if v, p, ok := o.get("capacity"); ok {
		changed = true
		ch.Capacity = c.capacity(p, v)
	}
	if v, p, ok := o.get("outage"); ok {
		changed = true
		if d, ok := c.duration(p, v); ok {
			if d == 0 {
				c.add(p, "must be positive")
			}
			ch.Outage = &d
		}
	}
	if v, p, ok := o.get("duplicate"); ok {
		changed = true
		if x, ok := c.prob(p, v); ok {
			ch.Duplicate = &x
		}
	}
	if !changed {
		c.add(path, "changes nothing; give rate, delay, loss, jitter, capacity, outage or duplicate")
	}
	if v, p, ok := o.get("announce"); ok {
		if d, ok := c.duration(p, v); ok {
			if d > ch.At {
				c.add(p, "a lead of %v puts the announcement before the run starts (the change is at %v)", d, ch.At)
			}
			ch.Announce = &d
		}
	}
	return ch
}

// crossCheck checks what spans several parts of the scenario: references
// between ids, that each flow joins two endpoints with a route between them,
// and that timed events fall inside the run.
func (c *collector) crossCheck(s *Scenario) {
	nodes := make(map[string]int, len(s.Nodes))
	for i, n := range s.Nodes {
		if _, dup := nodes[n.ID]; !dup && n.ID != "" {
			nodes[n.ID] = i
		}
	}
	adj := make([][]int, len(s.Nodes))
	badHosts := map[string]bool{} // groups whose own hosts hang off no forwarding node
	for i, l := range s.Links {
		path := elemPath("links", l.ID, i)
		aPath, bPath := join(path, "a"), join(path, "b")
		if l.Group != "" {
			// A group's own host link "<flow>/src" or "<flow>/dst": its far
			// end is the group's attach, reported there once for all flows.
			end := l.ID[strings.LastIndexByte(l.ID, '/')+1:]
			aPath = join(join(elemPath("flows", l.Group, i), end), "attach")
			bPath = aPath
		}
		a, aOK := c.nodeRef(nodes, aPath, l.A)
		b, bOK := c.nodeRef(nodes, bPath, l.B)
		if l.Group != "" && aOK && bOK && s.Nodes[a].Kind == Endpoint && s.Nodes[b].Kind == Endpoint {
			attach := l.A
			if attach == l.ID {
				attach = l.B
			}
			c.add(aPath, "node %q is an endpoint, which forwards nothing; attach the group's hosts to a router or switch", attach)
			badHosts[l.Group] = true
		}
		if l.Group != "" && !(aOK && bOK) {
			badHosts[l.Group] = true
		}
		if aOK && bOK {
			if a == b {
				c.add(join(path, "b"), "a link must join two different nodes; both ends are %q", l.A)
			}
			adj[a] = append(adj[a], b)
			adj[b] = append(adj[b], a)
		}
	}
	reach := newReachability(s.Nodes, adj)
	links := map[string]bool{}
	for _, l := range s.Links {
		links[l.ID] = true
	}
	end := s.Runtime.Duration
	// A group's flows are reported at the group, as written: an error
	// they share is said once (add drops repeats), and starts after the
	// end are counted rather than listed, as a shorter --duration makes
	// many of them.
	type lateStarts struct {
		n     int
		first sim.Duration
	}
	late := map[string]*lateStarts{}
	for i, f := range s.Flows {
		path := elemPath("flows", f.ID, i)
		if f.Group != "" {
			path = elemPath("flows", f.Group, i)
		}
		src, srcOK := c.endpointRef(s, nodes, join(path, "src"), f.Src)
		dst, dstOK := c.endpointRef(s, nodes, join(path, "dst"), f.Dst)
		switch {
		case !srcOK || !dstOK, badHosts[f.Group]:
		case src == dst:
			c.add(join(path, "dst"), "a flow needs two different endpoints; src and dst are both %q", f.Src)
		case !reach.between(src, dst):
			c.add(path, "no route from %q to %q over the links (only routers forward)", f.Src, f.Dst)
		}
		switch {
		case end == 0 || f.Start <= end:
		case f.Group == "":
			c.add(join(path, "start"), "%v is after the run ends at %v", f.Start, end)
		default:
			l := late[f.Group]
			if l == nil {
				l = &lateStarts{first: f.Start}
				late[f.Group] = l
			}
			l.n++
			l.first = min(l.first, f.Start)
		}
	}
	for i, g := range s.Groups {
		if l := late[g.ID]; l != nil {
			c.add(join(elemPath("flows", g.ID, i), "start"), "%d of the group's %d flows would start after the run ends at %v (the first at %v); run longer, or lower count or the arrival rate", l.n, g.Count, end, l.first)
		}
	}
	for i, l := range s.Links {
		if l.Group == "" {
			c.lateOutages(elemPath("links", l.ID, i), &l, end)
		}
	}
	// Changes after the end are said once, at the first, and counted, as
	// a group's late starts are: a shorter --duration makes many of them.
	firstLate, lateChanges, lastAt := -1, 0, sim.Duration(0)
	type changeKey struct {
		at              sim.Duration
		link, dir, what string
	}
	first := map[changeKey]int{} // the change that set a field of a direction at an instant
	for i, ch := range s.Changes {
		path := fmt.Sprintf("changes[%d]", i)
		if ch.Link != "" && !links[ch.Link] {
			c.add(join(path, "link"), "no link with id %q", ch.Link)
		}
		// Two changes of one field of a direction at one instant: only the
		// later would hold, and which was meant is not known.
		for _, what := range ch.sets() {
			k := changeKey{ch.At, ch.Link, ch.Dir, what}
			if j, dup := first[k]; dup {
				c.add(join(path, what), "changes[%d] sets %s/%s's %s at %v too; give one value", j, ch.Link, ch.Dir, what, ch.At)
			} else {
				first[k] = i
			}
		}
		if end > 0 && ch.At > end {
			if firstLate < 0 {
				firstLate = i
			}
			lateChanges++
			lastAt = max(lastAt, ch.At)
		}
	}
	switch {
	case lateChanges == 1:
		c.add(fmt.Sprintf("changes[%d].at", firstLate), "%v is after the run ends at %v: run at least until then, or leave the change out (set changes=[] drops them all)", s.Changes[firstLate].At, end)
	case lateChanges > 1:
		c.add(fmt.Sprintf("changes[%d].at", firstLate), "%v is after the run ends at %v, and so are %d more changes (the latest at %v): run at least until %v, or leave them out (set changes=[] drops them all)",
			s.Changes[firstLate].At, end, lateChanges-1, lastAt, lastAt)
	}
}

// sets names the fields ch changes.
func (ch *Change) sets() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"rate", ch.Rate != nil}, {"delay", ch.Delay != nil}, {"loss", ch.Loss != nil}, {"jitter", ch.Jitter != nil},
		{"capacity", ch.Capacity != nil}, {"outage", ch.Outage != nil}, {"duplicate", ch.Duplicate != nil}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// lateOutages refuses outages of link l (at path) that begin after the run
// ends at end, as changes after it are: the run never reaches them, which a
// shorter --duration makes easy to miss. Directions given the same outages
// (the link's own) are said once, at the link.
func (c *collector) lateOutages(path string, l *Link, end sim.Duration) {
	if end == 0 {
		return
	}
	ab, ba := l.AB.Outages.lateAfter(end), l.BA.Outages.lateAfter(end)
	if ab != nil && ba != nil && reflect.DeepEqual(l.AB.Outages, l.BA.Outages) {
		c.add(join(path, "outages"), "%s", ab)
		return
	}
	if ab != nil {
		c.add(join(path, "ab.outages"), "%s", ab)
	}
	if ba != nil {
		c.add(join(path, "ba.outages"), "%s", ba)
	}
}

// lateAfter says why o has outages that begin after end; nil if none does.
func (o *Outages) lateAfter(end sim.Duration) error {
	switch {
	case o == nil:
		return nil
	case o.Every > 0:
		if o.Start > end {
			return fmt.Errorf("the first outage, at %v, is after the run ends at %v: run at least until then, or leave them out", o.Start, end)
		}
		return nil
	}
	late, first := 0, sim.Duration(0)
	for _, w := range o.Windows {
		if w.At > end {
			if late == 0 || w.At < first {
				first = w.At
			}
			late++
		}
	}
	switch {
	case late == 1:
		return fmt.Errorf("the outage at %v is after the run ends at %v: run at least until then, or leave it out", first, end)
	case late > 1:
		return fmt.Errorf("%d outages, the first at %v, are after the run ends at %v: run at least until then, or leave them out", late, first, end)
	}
	return nil
}

// elemPath addresses an element of an id-addressed array as list does.
func elemPath(key, id string, i int) string {
	if id == "" {
		return fmt.Sprintf("%s[#%d]", key, i)
	}
	return fmt.Sprintf("%s[%s]", key, id)
}

func (c *collector) nodeRef(nodes map[string]int, path, id string) (int, bool) {
	i, ok := nodes[id]
	if !ok && id != "" {
		c.add(path, "no node with id %q", id)
	}
	return i, ok
}

func (c *collector) endpointRef(s *Scenario, nodes map[string]int, path, id string) (int, bool) {
	i, ok := c.nodeRef(nodes, path, id)
	if ok && s.Nodes[i].Kind != Endpoint {
		c.add(path, "node %q is a %s; flows run between endpoints", id, nameOf(nodeKinds, s.Nodes[i].Kind))
		return i, false
	}
	return i, ok
}

// reachability answers whether one endpoint reaches another through
// routers and switches (endpoints originate and terminate traffic but do not
// forward it): the forwarding nodes' connected components are found once,
// then src reaches dst if they share a link or a neighbour of each lies in
// one component. A scenario of many flows costs O(links + flows), not a
// search per flow.
type reachability struct {
	nodes  []Node
	adj    [][]int
	parent []int
}

func newReachability(nodes []Node, adj [][]int) *reachability {
	r := &reachability{nodes: nodes, adj: adj, parent: make([]int, len(nodes))}
	for i := range r.parent {
		r.parent[i] = i
	}
	for a, ns := range adj {
		if nodes[a].Kind == Endpoint {
			continue
		}
		for _, b := range ns {
			if nodes[b].Kind != Endpoint {
				r.parent[r.root(a)] = r.root(b)
			}
		}
	}
	return r
}

func (r *reachability) root(x int) int {
	for r.parent[x] != x {
		r.parent[x] = r.parent[r.parent[x]]
		x = r.parent[x]
	}
	return x
}

func (r *reachability) between(src, dst int) bool {
	for _, a := range r.adj[src] {
		if a == dst {
			return true
		}
		if r.nodes[a].Kind == Endpoint {
			continue
		}
		for _, b := range r.adj[dst] {
			if r.nodes[b].Kind != Endpoint && r.root(a) == r.root(b) {
				return true
			}
		}
	}
	return false
}
