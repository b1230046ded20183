package topo

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Three hosts on a switch. The first frame h1 → h2 floods (h3's interface
// discards its copy); h2's reply goes out of the port h1 was learned on;
// from then on h1 → h2 is forwarded on one port, and h3 sees nothing more.
func TestSwitchLearnsThenForwards(t *testing.T) {
	scn := &config.Scenario{
		Nodes: []config.Node{{ID: "s1", Kind: config.Switch}, {ID: "h1"}, {ID: "h2"}, {ID: "h3"}},
		Links: []config.Link{lnk("l1", "h1", "s1", sim.Millisecond), lnk("l2", "h2", "s1", sim.Millisecond), lnk("l3", "h3", "s1", sim.Millisecond)},
	}
	s, pool := sim.New(), &packet.Pool{}
	nw, err := Build(s, pool, scn)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, h := range []string{"h1", "h2"} { // h3 hosts no end: a frame it took would panic
		nw.Node(h).Attach(0, recv(func(id packet.ID) { got[h]++; pool.Free(id) }))
	}
	send := func(from, to string) {
		id := pool.Alloc()
		p := pool.Get(id)
		p.Src, p.Dst, p.Size = nw.Node(from).Index, nw.Node(to).Index, 100
		nw.Node(from).Send(id)
		s.Run()
	}
	sw := nw.Node("s1")
	l3 := func() uint64 { d, _ := nw.Dir("l3", "ba"); return d.Stats.Enqueued }
	send("h1", "h2")
	if f, fw := sw.SwitchStats(); f != 1 || fw != 0 || got["h2"] != 1 || l3() != 1 {
		t.Fatalf("first frame: flooded %d, forwarded %d, h2 got %d, copies to h3 %d; want 1, 0, 1, 1", f, fw, got["h2"], l3())
	}
	send("h2", "h1")
	send("h1", "h2")
	if f, fw := sw.SwitchStats(); f != 1 || fw != 2 || got["h1"] != 1 || got["h2"] != 2 || l3() != 1 {
		t.Errorf("after learning: flooded %d, forwarded %d, h1 %d, h2 %d, copies to h3 %d; want 1, 2, 1, 2, 1", f, fw, got["h1"], got["h2"], l3())
	}
	if pool.Live() != 0 {
		t.Errorf("%d packets live, want 0", pool.Live())
	}
}

// A loop of switches is rejected.
func TestSwitchLoopRejected(t *testing.T) {
	scn := &config.Scenario{
		Nodes: []config.Node{{ID: "s1", Kind: config.Switch}, {ID: "s2", Kind: config.Switch}, {ID: "s3", Kind: config.Switch}},
		Links: []config.Link{lnk("a", "s1", "s2", sim.Millisecond), lnk("b", "s2", "s3", sim.Millisecond), lnk("c", "s3", "s1", sim.Millisecond)},
	}
	if _, err := Build(sim.New(), &packet.Pool{}, scn); err == nil {
		t.Error("Build accepts a loop of switches")
	}
}
