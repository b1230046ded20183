// Package topo builds a scenario's graph: nodes, link directions with their
// qdiscs and impairments, and shortest-path routes.
package topo

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Node is an endpoint or a router. It forwards packets not addressed to it
// along its routes and hands the others to the flow end it hosts.
type Node struct {
	Name  string
	Index int32
	Kind  config.NodeKind

	pool *packet.Pool
	next []*link.Dir     // next hop by destination node index
	ends []link.Receiver // flow ends hosted here, by flow index
}

// Receive takes a packet arriving from a link.
func (n *Node) Receive(id packet.ID) {
	p := n.pool.Get(id)
	if p.Dst == n.Index {
		if int(p.Flow) < len(n.ends) && n.ends[p.Flow] != nil {
			n.ends[p.Flow].Receive(id)
			return
		}
		panic(fmt.Sprintf("topo: packet for flow %d at node %s, which hosts no end of it", p.Flow, n.Name))
	}
	n.Send(id)
}

// Send forwards a packet towards its destination.
func (n *Node) Send(id packet.ID) {
	n.next[n.pool.Get(id).Dst].Send(id)
}

// Attach makes r receive the packets of flow addressed to this node.
func (n *Node) Attach(flow int32, r link.Receiver) {
	for int(flow) >= len(n.ends) {
		n.ends = append(n.ends, nil)
	}
	n.ends[flow] = r
}

// Network is the built graph.
type Network struct {
	Nodes []*Node
	Dirs  []*link.Dir // in scenario order: link 0 ab, link 0 ba, link 1 ab, ...
	byID  map[string]int32
	links map[string][2]*link.Dir
	// hops[src][dst] is the path from src to dst as directions.
	hops [][][]*link.Dir
}

// Node returns the node named id.
func (nw *Network) Node(id string) *Node { return nw.Nodes[nw.byID[id]] }

// Dir returns the direction of link id ("ab" or "ba").
func (nw *Network) Dir(linkID, dir string) (*link.Dir, bool) {
	l, ok := nw.links[linkID]
	if !ok {
		return nil, false
	}
	switch dir {
	case "ab":
		return l[0], true
	case "ba":
		return l[1], true
	}
	return nil, false
}

// Path is the sequence of directions from node src to node dst.
func (nw *Network) Path(src, dst int32) []*link.Dir { return nw.hops[src][dst] }

// BaseRTT is the round-trip propagation delay between two nodes.
func (nw *Network) BaseRTT(src, dst int32) sim.Duration {
	var d sim.Duration
	for _, x := range nw.hops[src][dst] {
		d += x.Delay()
	}
	for _, x := range nw.hops[dst][src] {
		d += x.Delay()
	}
	return d
}

// Bottleneck is the lowest rate on the path from src to dst.
func (nw *Network) Bottleneck(src, dst int32) units.BitRate {
	var r units.BitRate
	for _, x := range nw.hops[src][dst] {
		if r == 0 || x.Rate() < r {
			r = x.Rate()
		}
	}
	return r
}

// Build creates the network of scn in s. Randomness for a direction's models
// comes from streams named "link/<id>/<dir>/loss|jitter|capacity" and
// "link/<id>/<dir>/capacity/dips".
func Build(s *sim.Sim, pool *packet.Pool, scn *config.Scenario) (*Network, error) {
	nw := &Network{byID: map[string]int32{}, links: map[string][2]*link.Dir{}}
	for i, n := range scn.Nodes {
		nw.byID[n.ID] = int32(i)
		nw.Nodes = append(nw.Nodes, &Node{Name: n.ID, Index: int32(i), Kind: n.Kind, pool: pool})
	}
	seed := scn.Runtime.Seed
	for _, l := range scn.Links {
		var pair [2]*link.Dir
		for k, dc := range []config.Direction{l.AB, l.BA} {
			dir := [2]string{"ab", "ba"}[k]
			name := l.ID + "/" + dir
			d := link.New(s, pool, link.Config{
				Name: name, Link: l.ID, AB: k == 0, Rate: dc.Rate, Delay: dc.Delay,
				Loss: dc.Loss, Jitter: dc.Jitter, Capacity: dc.Capacity, Trace: dc.Trace, Outages: dc.Outages,
				Streams: link.Streams{
					Loss:     rng.Stream(seed, "link/"+name+"/loss"),
					Jitter:   rng.Stream(seed, "link/"+name+"/jitter"),
					Capacity: rng.Stream(seed, "link/"+name+"/capacity"),
					Dips:     rng.Stream(seed, "link/"+name+"/capacity/dips"),
				},
			})
			pair[k] = d
			nw.Dirs = append(nw.Dirs, d)
		}
		a, b := nw.byID[l.A], nw.byID[l.B]
		pair[0].Connect(nw.Nodes[b])
		pair[1].Connect(nw.Nodes[a])
		nw.links[l.ID] = pair
	}
	nw.route(scn)
	// Queues are built once routes are known, since a BDP limit needs the
	// base RTT of the path through the direction.
	for li, l := range scn.Links {
		for k, dc := range []config.Direction{l.AB, l.BA} {
			d := nw.Dirs[2*li+k]
			q, err := nw.newQdisc(d, dc.Qdisc, scn)
			if err != nil {
				return nil, fmt.Errorf("topo: links[%s].%s.qdisc: %w", l.ID, [2]string{"ab", "ba"}[k], err)
			}
			d.SetQdisc(q)
		}
	}
	return nw, nil
}

// route computes shortest paths by propagation delay with Dijkstra from every
// node, forwarding only through routers (as config validates); ties go to fewer hops, then to the link listed first in the scenario,
// so routes never depend on map order.
func (nw *Network) route(scn *config.Scenario) {
	n := len(nw.Nodes)
	type edge struct {
		to  int32
		dir *link.Dir
	}
	adj := make([][]edge, n)
	for li, l := range scn.Links {
		a, b := nw.byID[l.A], nw.byID[l.B]
		adj[a] = append(adj[a], edge{b, nw.Dirs[2*li]})
		adj[b] = append(adj[b], edge{a, nw.Dirs[2*li+1]})
	}
	nw.hops = make([][][]*link.Dir, n)
	for src := 0; src < n; src++ {
		dist := make([]sim.Duration, n)
		hops := make([]int, n)
		prev := make([]*link.Dir, n)
		from := make([]int32, n)
		done := make([]bool, n)
		for i := range dist {
			dist[i] = -1
		}
		dist[src] = 0
		for {
			u := -1
			for i := 0; i < n; i++ {
				if !done[i] && dist[i] >= 0 && (u < 0 || dist[i] < dist[u] || dist[i] == dist[u] && hops[i] < hops[u]) {
					u = i
				}
			}
			if u < 0 {
				break
			}
			done[u] = true
			if u != src && nw.Nodes[u].Kind == config.Endpoint {
				continue // endpoints do not forward
			}
			for _, e := range adj[u] {
				nd, nh := dist[u]+e.dir.Delay(), hops[u]+1
				if dist[e.to] < 0 || nd < dist[e.to] || nd == dist[e.to] && nh < hops[e.to] {
					dist[e.to], hops[e.to], prev[e.to], from[e.to] = nd, nh, e.dir, int32(u)
				}
			}
		}
		nw.hops[src] = make([][]*link.Dir, n)
		for dst := 0; dst < n; dst++ {
			if dst == src || dist[dst] < 0 {
				continue
			}
			var path []*link.Dir
			for v := int32(dst); v != int32(src); v = from[v] {
				path = append([]*link.Dir{prev[v]}, path...)
			}
			nw.hops[src][dst] = path
		}
		nw.Nodes[src].next = make([]*link.Dir, n)
		for dst := 0; dst < n; dst++ {
			if p := nw.hops[src][dst]; len(p) > 0 {
				nw.Nodes[src].next[dst] = p[0]
			}
		}
	}
}

// bdp is the bandwidth-delay product of d: its rate times the base RTT of the
// first flow whose path crosses it, or of its own link's round trip if none.
func (nw *Network) bdp(d *link.Dir, scn *config.Scenario) units.Bytes {
	for _, f := range scn.Flows {
		src, dst := nw.byID[f.Src], nw.byID[f.Dst]
		for _, x := range nw.hops[src][dst] {
			if x == d {
				return units.BytesIn(d.Rate(), nw.BaseRTT(src, dst))
			}
		}
	}
	return units.BytesIn(d.Rate(), 2*d.Delay())
}

// codelParams are a CoDel or FQ-CoDel config's struct codel_params.
func codelParams(c config.Qdisc, limPkts int) qdisc.CoDelParams {
	return qdisc.CoDelParams{Target: c.Target, Interval: c.Interval, ECN: c.ECN, LimitPkts: limPkts, CEThreshold: c.CEThreshold}
}

// newQdisc builds a direction's queue. A discipline that draws random
// numbers (a hash perturbation, DualPI2's coin flips) gets the stream
// "link/<id>/<dir>/qdisc".
func (nw *Network) newQdisc(d *link.Dir, c config.Qdisc, scn *config.Scenario) (qdisc.Qdisc, error) {
	limBytes, limPkts := c.Limit.Bytes, int(c.Limit.Packets)
	if c.Limit.MilliBDPs > 0 {
		limBytes = nw.bdp(d, scn) * units.Bytes(c.Limit.MilliBDPs) / 1000
	}
	env := d.QdiscEnv()
	switch c.Kind {
	case config.FIFO:
		f := qdisc.NewFIFO(env, limBytes, limPkts)
		k := c.ECNThreshold
		if k.MilliBDPs > 0 {
			k.Bytes = nw.bdp(d, scn) * units.Bytes(k.MilliBDPs) / 1000
		}
		f.SetECNThreshold(k.Bytes, int(k.Packets))
		return f, nil
	case config.CoDel:
		if limBytes > 0 {
			return nil, fmt.Errorf("codel limits packets (sch->limit), not bytes")
		}
		return qdisc.NewCoDel(env, codelParams(c, limPkts)), nil
	case config.FQCoDel:
		if limBytes > 0 {
			return nil, fmt.Errorf("fq_codel limits packets (sch->limit), not bytes")
		}
		return qdisc.NewFQCoDel(env, qdisc.FQCoDelParams{
			CoDel: codelParams(c, limPkts), Flows: int(c.Flows), Quantum: c.Quantum,
			HashSeed: rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc").Uint32(),
		}), nil
	case config.DualPI2:
		if limBytes > 0 {
			return nil, fmt.Errorf("dualpi2 limits packets (sch->limit), not bytes")
		}
		return qdisc.NewDualPI2(env, rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc"), qdisc.DualPI2Params{
			LimitPkts: limPkts, Target: c.Target, TUpdate: c.TUpdate, StepThreshold: c.StepThreshold,
			Coupling: uint32(c.Coupling), CProtection: uint32(c.CProtection), CProtectionSet: true,
		}), nil
	case config.FQ:
		if limBytes > 0 {
			return nil, fmt.Errorf("fq limits packets (sch->limit), not bytes")
		}
		return qdisc.NewFQ(env, qdisc.FQParams{LimitPkts: limPkts, FlowLimit: int(c.FlowLimit),
			Quantum: c.Quantum, InitialQuantum: c.InitialQuantum, Horizon: c.Horizon}), nil
	}
	return nil, fmt.Errorf("unknown qdisc kind %d", c.Kind)
}
