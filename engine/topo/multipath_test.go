package topo

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// fabric is h1 — r1 — {m0 … m(k−1)} — r2 — h2, every link 1 ms, so r1 has
// k = len(rates) equal-cost next hops to r2 and h2. Path j's two links run
// at rates[j].
func fabric(mode config.Routing, rates []units.BitRate) *config.Scenario {
	scn := &config.Scenario{Runtime: config.Runtime{Seed: 9}}
	scn.Nodes = []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router, Routing: mode}, {ID: "r2", Kind: config.Router}, {ID: "h2"}}
	scn.Links = []config.Link{lnk("a", "h1", "r1", sim.Millisecond), lnk("z", "r2", "h2", sim.Millisecond)}
	scn.Links[0].AB.Rate, scn.Links[0].BA.Rate = 10*units.Gbps, 10*units.Gbps
	for k, r := range rates {
		m := fmt.Sprintf("m%d", k)
		scn.Nodes = append(scn.Nodes, config.Node{ID: m, Kind: config.Router})
		up, down := lnk("u"+m, "r1", m, sim.Millisecond), lnk("d"+m, m, "r2", sim.Millisecond)
		up.AB.Rate, down.AB.Rate = r, r
		scn.Links = append(scn.Links, up, down)
	}
	return scn
}

// gigs is k paths of 1 Gbps.
func gigs(k int) []units.BitRate {
	return slices.Repeat([]units.BitRate{units.Gbps}, k)
}

// chi2 is Pearson's statistic of counts against equal cell probabilities.
func chi2(counts []int) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	e := float64(n) / float64(len(counts))
	x := 0.0
	for _, c := range counts {
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}

// ECMP hashes 10^6 5-tuples (flows 0 … 249,999 from h1 and from r1, to h2
// and to r2) over 3, 4 and 5 equal-cost paths as a fair hash would: each
// tuple's path is uniform and independent of the others'. Pearson's
// chi-square tests, each at α = 0.001 (12 in all, so a fair hash fails one
// with probability at most 1.2 %), on
//   - the paths' counts against 1/k each (k−1 dof);
//   - the path pairs of flows 2j and 2j+1, of one flow from h1 and from
//     r1, and of one flow to h2 and to r2, against 1/k² each (k²−1 dof):
//     a hash that ignores a field, or is linear in the flow (flow mod k
//     spreads flows evenly), puts the pairs on a few cells.
//
// Every packet of a flow takes its flow's path.
func TestECMPSpreadsFlowsUniformly(t *testing.T) {
	// χ²_{0.999} quantiles by degrees of freedom.
	crit := map[int]float64{2: 13.82, 3: 16.27, 4: 18.47, 8: 26.12, 15: 37.70, 24: 51.18}
	const flows = 250_000
	for _, k := range []int{3, 4, 5} {
		t.Run(fmt.Sprintf("%d paths", k), func(t *testing.T) {
			nw, err := Build(sim.New(), &packet.Pool{}, fabric(config.RouteECMP, gigs(k)))
			if err != nil {
				t.Fatal(err)
			}
			r1 := nw.Node("r1")
			path := map[*link.Dir]int{}
			for j := range k {
				d, _ := nw.Dir(fmt.Sprintf("um%d", j), "ab")
				path[d] = j
			}
			srcs := []int32{nw.Node("h1").Index, r1.Index}
			dsts := []int32{nw.Node("h2").Index, nw.Node("r2").Index}
			// paths[s][d][f] is the path of flow f from srcs[s] to dsts[d].
			var paths [2][2][flows]uint8
			counts := make([]int, k)
			for s, src := range srcs {
				for d, dst := range dsts {
					for f := range flows {
						p := &packet.Packet{Flow: int32(f), Src: src, Dst: dst}
						dir := r1.multi.pick(p)
						j, ok := path[dir]
						if !ok {
							t.Fatalf("flow %d from %d to %d: next hop %v, not one of r1's %d paths", f, src, dst, dir, k)
						}
						if again := r1.multi.pick(p); again != dir {
							t.Fatalf("flow %d from %d to %d took %s, then %s", f, src, dst, dir.Link, again.Link)
						}
						paths[s][d][f] = uint8(j)
						counts[j]++
					}
				}
			}
			if x := chi2(counts); x > crit[k-1] {
				t.Errorf("paths' counts %v: χ² = %.2f, want ≤ %.2f (%d dof, α = 0.001)", counts, x, crit[k-1], k-1)
			}
			pairs := map[string][]int{"flows 2j, 2j+1": make([]int, k*k), "from h1, r1": make([]int, k*k), "to h2, r2": make([]int, k*k)}
			for s := range 2 {
				for d := range 2 {
					for f := 0; f < flows; f += 2 {
						pairs["flows 2j, 2j+1"][int(paths[s][d][f])*k+int(paths[s][d][f+1])]++
					}
				}
			}
			for f := range flows {
				for d := range 2 {
					pairs["from h1, r1"][int(paths[0][d][f])*k+int(paths[1][d][f])]++
				}
				for s := range 2 {
					pairs["to h2, r2"][int(paths[s][0][f])*k+int(paths[s][1][f])]++
				}
			}
			for name, c := range pairs {
				if x := chi2(c); x > crit[k*k-1] {
					t.Errorf("paths of %s: χ² = %.2f, want ≤ %.2f (%d dof, α = 0.001)", name, x, crit[k*k-1], k*k-1)
				}
			}
		})
	}
}

// The simulated fabric sends each flow where r1's hash says: 96 one-packet
// flows from h1 to h2 over 4 paths all arrive, each path's first link
// carries exactly the flows the hash gives it, and every path carries some
// (a fair hash leaves one empty with probability 4·(3/4)^96 ≈ 4·10⁻¹²).
func TestECMPFabricUsesThePaths(t *testing.T) {
	const flows, k = 96, 4 // within h1's FIFO of 100
	s, pool := sim.New(), &packet.Pool{}
	nw, err := Build(s, pool, fabric(config.RouteECMP, gigs(k)))
	if err != nil {
		t.Fatal(err)
	}
	h1, h2, r1 := nw.Node("h1"), nw.Node("h2"), nw.Node("r1")
	got := 0
	want := map[*link.Dir]uint64{}
	for f := range int32(flows) {
		h2.Attach(f, recv(func(id packet.ID) { got++; pool.Free(id) }))
		id := pool.Alloc()
		p := pool.Get(id)
		p.Flow, p.Src, p.Dst, p.Size = f, h1.Index, h2.Index, 1500
		want[r1.multi.pick(p)]++
		h1.Send(id)
	}
	s.Run()
	if got != flows {
		t.Fatalf("h2 received %d packets, want %d", got, flows)
	}
	for j := range k {
		d, _ := nw.Dir(fmt.Sprintf("um%d", j), "ab")
		if d.Stats.Delivered != want[d] || want[d] == 0 {
			t.Errorf("path %d carried %d packets, want %d by the hash, and more than 0", j, d.Stats.Delivered, want[d])
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
	rates := []units.BitRate{units.Gbps, 100 * units.Mbps, units.Gbps, 100 * units.Mbps}
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
