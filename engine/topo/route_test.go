package topo

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Every hop-by-hop path through the next-hop tables has the least total
// delay, as Floyd–Warshall over the same graph (hosts not forwarding)
// computes it independently: a 6×6 grid of routers with random delays and
// a host on each router, some hosts dual-homed.
func TestRoutesMatchFloydWarshall(t *testing.T) {
	const side = 6
	r := rand.New(rand.NewPCG(1, 2))
	var scn config.Scenario
	id := func(x, y int) string { return fmt.Sprintf("r%d_%d", x, y) }
	for y := range side {
		for x := range side {
			scn.Nodes = append(scn.Nodes, config.Node{ID: id(x, y), Kind: config.Router})
		}
	}
	delay := func() sim.Duration { return sim.Duration(1+r.IntN(20)) * sim.Millisecond }
	add := func(a, b string) {
		d := delay()
		scn.Links = append(scn.Links, lnk(fmt.Sprintf("l%d", len(scn.Links)), a, b, d))
	}
	for y := range side {
		for x := range side {
			if x+1 < side {
				add(id(x, y), id(x+1, y))
			}
			if y+1 < side {
				add(id(x, y), id(x, y+1))
			}
		}
	}
	for i := range side * side {
		h := fmt.Sprintf("h%d", i)
		scn.Nodes = append(scn.Nodes, config.Node{ID: h})
		add(h, scn.Nodes[i].ID)
		if i%5 == 0 {
			add(h, scn.Nodes[(i*7+3)%(side*side)].ID)
		}
	}
	nw, err := Build(sim.New(), &packet.Pool{}, &scn)
	if err != nil {
		t.Fatal(err)
	}
	n := len(scn.Nodes)
	const inf = sim.Duration(1) << 60
	dist := make([][]sim.Duration, n)
	for i := range dist {
		dist[i] = make([]sim.Duration, n)
		for j := range dist[i] {
			dist[i][j] = inf
		}
		dist[i][i] = 0
	}
	for _, l := range scn.Links {
		a, b := nw.byID[l.A], nw.byID[l.B]
		dist[a][b] = min(dist[a][b], l.AB.Delay)
		dist[b][a] = min(dist[b][a], l.BA.Delay)
	}
	for k := range n {
		if scn.Nodes[k].Kind == config.Endpoint {
			continue // hosts do not forward
		}
		for i := range n {
			for j := range n {
				if dist[i][k]+dist[k][j] < dist[i][j] {
					dist[i][j] = dist[i][k] + dist[k][j]
				}
			}
		}
	}
	for src := range n {
		for dst := range n {
			if src == dst || scn.Nodes[src].Kind != config.Endpoint || scn.Nodes[dst].Kind != config.Endpoint {
				continue
			}
			var got sim.Duration
			for _, d := range nw.Path(int32(src), int32(dst)) {
				got += d.Delay()
			}
			if got != dist[src][dst] {
				t.Fatalf("delay of path %s→%s = %v, want %v (Floyd–Warshall)", scn.Nodes[src].ID, scn.Nodes[dst].ID, got, dist[src][dst])
			}
		}
	}
}
