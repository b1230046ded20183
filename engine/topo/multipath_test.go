package topo

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// fabric is h1 — r1 — {m1 … m4} — r2 — h2, every link 1 ms, so r1 has four
// equal-cost next hops to h2. Link k's rates come from rates.
func fabric(mode config.Routing, rates [4]units.BitRate) *config.Scenario {
	scn := &config.Scenario{Runtime: config.Runtime{Seed: 9}}
	scn.Nodes = []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router, Routing: mode}, {ID: "r2", Kind: config.Router}, {ID: "h2"}}
	scn.Links = []config.Link{lnk("a", "h1", "r1", sim.Millisecond), lnk("z", "r2", "h2", sim.Millisecond)}
	scn.Links[0].AB.Rate, scn.Links[0].BA.Rate = 10*units.Gbps, 10*units.Gbps
	for k := range 4 {
		m := fmt.Sprintf("m%d", k)
		scn.Nodes = append(scn.Nodes, config.Node{ID: m, Kind: config.Router})
		up, down := lnk("u"+m, "r1", m, sim.Millisecond), lnk("d"+m, m, "r2", sim.Millisecond)
		up.AB.Rate, down.AB.Rate = rates[k], rates[k]
		scn.Links = append(scn.Links, up, down)
	}
	return scn
}

var gig4 = [4]units.BitRate{units.Gbps, units.Gbps, units.Gbps, units.Gbps}

// ECMP spreads 1,024 flows over 4 equal-cost paths as a fair hash would:
// each path's count is Binomial(1024, 1/4), mean 256 and standard
// deviation 13.9, so all four lie within 4 standard deviations; and every
// packet of a flow takes its flow's path.
func TestECMPSpreadsFlowsBinomially(t *testing.T) {
	nw, err := Build(sim.New(), &packet.Pool{}, fabric(config.RouteECMP, gig4))
	if err != nil {
		t.Fatal(err)
	}
	r1 := nw.Node("r1")
	count := map[string]int{}
	for f := range 1024 {
		p := &packet.Packet{Flow: int32(f), Src: nw.Node("h1").Index, Dst: nw.Node("h2").Index}
		d := r1.multi.pick(p)
		if d == nil {
			t.Fatal("r1 has no equal-cost choice towards h2")
		}
		count[d.Link]++
		for range 3 {
			if again := r1.multi.pick(p); again != d {
				t.Fatalf("flow %d took %s, then %s", f, d.Link, again.Link)
			}
		}
	}
	sd := math.Sqrt(1024 * 0.25 * 0.75)
	if len(count) != 4 {
		t.Fatalf("flows per path = %v, want all 4 paths used", count)
	}
	for l, n := range count {
		if math.Abs(float64(n)-256) > 4*sd {
			t.Errorf("path %s carries %d flows, want 256 ± %.0f", l, n, 4*sd)
		}
	}
}

// arrivals sends n (at most 100, the FIFO limit) packets of one flow from h1 at time 0 and returns the
// order in which h2 received them.
func arrivals(t *testing.T, scn *config.Scenario, n int) ([]uint64, *packet.Pool) {
	s, pool := sim.New(), &packet.Pool{}
	nw, err := Build(s, pool, scn)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	h1, h2 := nw.Node("h1"), nw.Node("h2")
	h2.Attach(0, recv(func(id packet.ID) { got = append(got, pool.Get(id).Seq); pool.Free(id) }))
	for i := range n {
		id := pool.Alloc()
		p := pool.Get(id)
		p.Flow, p.Src, p.Dst, p.Size, p.Seq = 0, h1.Index, h2.Index, 1500, uint64(i)
		h1.Send(id)
	}
	s.Run()
	return got, pool
}

type recv func(packet.ID)

func (r recv) Receive(id packet.ID) { r(id) }

func reordered(seqs []uint64) int {
	n := 0
	for i := 1; i < len(seqs); i++ {
		if seqs[i] < seqs[i-1] {
			n++
		}
	}
	return n
}

// Spraying one flow's packets over paths of 1 Gbps and 100 Mbps reorders
// them; ECMP keeps the flow on one path, in order.
func TestSprayReorders(t *testing.T) {
	rates := [4]units.BitRate{units.Gbps, 100 * units.Mbps, units.Gbps, 100 * units.Mbps}
	got, pool := arrivals(t, fabric(config.RouteSpray, rates), 90)
	if len(got) != 90 || pool.Live() != 0 {
		t.Fatalf("delivered %d of 90, %d live", len(got), pool.Live())
	}
	if n := reordered(got); n == 0 {
		t.Errorf("spray delivered in order: %v", got)
	}
	got, _ = arrivals(t, fabric(config.RouteECMP, rates), 90)
	if n := reordered(got); len(got) != 90 || n != 0 {
		t.Errorf("ECMP: %d delivered, %d reordered; want 90, 0", len(got), n)
	}
}
