package topo

import (
	"container/heap"
	"slices"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/sim"
)

// edge is one outgoing direction of a node in the routing graph.
type edge struct {
	to  int32
	dir *link.Dir
}

// route fills every node's next-hop table: shortest paths by propagation
// delay, forwarding only through nodes that forward (as config validates);
// ties go to fewer hops, then to the lower node index, then to the link
// listed first in the scenario, so routes never depend on map order.
//
// The table is computed once, and a hop costs one slice index. A node with
// a single link (a host on an access link) needs no table: every packet
// leaves on that link, which is the route a shortest-path search from it
// would give, since all its paths begin there. Only nodes that forward, or
// hosts with several links, run a search, each O(E log V), so building a
// dumbbell of N hosts costs O(N log N) rather than the O(N³) of a search
// from every node.
func (nw *Network) route(scn *config.Scenario) {
	n := len(nw.Nodes)
	adj := make([][]edge, n)
	for li, l := range scn.Links {
		a, b := nw.byID[l.A], nw.byID[l.B]
		adj[a] = append(adj[a], edge{b, nw.Dirs[2*li]})
		adj[b] = append(adj[b], edge{a, nw.Dirs[2*li+1]})
	}
	sp := newSearch(n)
	for src := range nw.Nodes {
		node := nw.Nodes[src]
		if len(adj[src]) == 1 && node.Kind == config.Endpoint {
			node.only = adj[src][0].dir
			continue
		}
		if len(adj[src]) == 0 {
			continue
		}
		node.next = sp.run(nw.Nodes, adj, int32(src))
		if node.Kind == config.Router && scn.Nodes[src].Routing != config.RouteFirst {
			node.setMultipath(scn.Nodes[src].Routing, sp.equalCost(nw.Nodes, adj, int32(src)), scn.Runtime.Seed)
		}
	}
}

// equalCost returns, after run from src, the next hops of every shortest
// path to each destination: all first directions of paths of the least
// delay and, among those, the fewest hops, in the order run would prefer
// them. An entry is nil where there is a single such next hop.
func (sp *search) equalCost(nodes []*Node, adj [][]edge, src int32) [][]*link.Dir {
	sets := make([][]*link.Dir, len(nodes))
	for _, u := range sp.order {
		if u != src && nodes[u].Kind == config.Endpoint {
			continue
		}
		for _, e := range adj[u] {
			v := e.to
			if v == src || sp.dist[u]+e.dir.Delay() != sp.dist[v] || sp.hops[u]+1 != sp.hops[v] {
				continue
			}
			from := sets[u]
			if u == src {
				from = []*link.Dir{e.dir}
			}
			for _, d := range from {
				if !slices.Contains(sets[v], d) {
					sets[v] = append(sets[v], d)
				}
			}
		}
	}
	for v := range sets {
		if len(sets[v]) < 2 {
			sets[v] = nil
		}
	}
	return sets
}

// search is Dijkstra's algorithm over the routing graph, its scratch space
// reused from one source to the next.
type search struct {
	dist  []sim.Duration
	hops  []int32
	first []*link.Dir // first direction on the best path found so far
	done  []bool
	order []int32 // nodes in the order they were settled
	pq    searchHeap
}

func newSearch(n int) *search {
	return &search{dist: make([]sim.Duration, n), hops: make([]int32, n), first: make([]*link.Dir, n), done: make([]bool, n)}
}

// run returns src's next-hop table by destination node index. Nodes are
// settled in order of (delay, hops, index) and a route is replaced only by
// a strictly better one, so among equal-cost paths the one found first —
// through the lower-numbered node, then the link listed first — wins.
func (sp *search) run(nodes []*Node, adj [][]edge, src int32) []*link.Dir {
	for i := range sp.dist {
		sp.dist[i], sp.hops[i], sp.first[i], sp.done[i] = -1, 0, nil, false
	}
	sp.dist[src] = 0
	sp.order = sp.order[:0]
	sp.pq = append(sp.pq[:0], searchItem{0, 0, src})
	for len(sp.pq) > 0 {
		it := heap.Pop(&sp.pq).(searchItem)
		u := it.node
		if sp.done[u] || it.dist != sp.dist[u] || it.hops != sp.hops[u] {
			continue // stale entry
		}
		sp.done[u] = true
		sp.order = append(sp.order, u)
		if u != src && nodes[u].Kind == config.Endpoint {
			continue // endpoints do not forward
		}
		for _, e := range adj[u] {
			nd, nh := sp.dist[u]+e.dir.Delay(), sp.hops[u]+1
			if sp.done[e.to] {
				continue
			}
			if sp.dist[e.to] < 0 || nd < sp.dist[e.to] || nd == sp.dist[e.to] && nh < sp.hops[e.to] {
				sp.dist[e.to], sp.hops[e.to] = nd, nh
				if u == src {
					sp.first[e.to] = e.dir
				} else {
					sp.first[e.to] = sp.first[u]
				}
				heap.Push(&sp.pq, searchItem{nd, nh, e.to})
			}
		}
	}
	next := make([]*link.Dir, len(nodes))
	for dst := range next {
		if int32(dst) != src && sp.dist[dst] >= 0 {
			next[dst] = sp.first[dst]
		}
	}
	return next
}

// searchItem is a tentative distance in the search's priority queue.
type searchItem struct {
	dist sim.Duration
	hops int32
	node int32
}

// searchHeap orders items by (delay, hops, node index).
type searchHeap []searchItem

func (h searchHeap) Len() int { return len(h) }
func (h searchHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	if a.hops != b.hops {
		return a.hops < b.hops
	}
	return a.node < b.node
}
func (h searchHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *searchHeap) Push(x any)   { *h = append(*h, x.(searchItem)) }
func (h *searchHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
