package topo

import (
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

func dir(rate units.BitRate, delay sim.Duration) config.Direction {
	return config.Direction{Rate: rate, Delay: delay, Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 100}}}
}

func lnk(id, a, b string, delay sim.Duration) config.Link {
	d := dir(units.Gbps, delay)
	return config.Link{ID: id, A: a, B: b, AB: d, BA: d}
}

// Routes follow the least propagation delay; equal delays go to fewer hops,
// then to the link listed first — never to map order.
func TestRoutesShortestDelayDeterministicTieBreak(t *testing.T) {
	nodes := []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "r2", Kind: config.Router}, {ID: "h2"}}
	cases := []struct {
		name  string
		links []config.Link
		want  []string // link ids from h1 to h2
	}{
		{"faster two-hop beats slower direct", []config.Link{
			lnk("direct", "h1", "h2", 10*sim.Millisecond),
			lnk("a", "h1", "r1", 2*sim.Millisecond), lnk("b", "r1", "h2", 2*sim.Millisecond),
		}, []string{"a", "b"}},
		{"equal delay prefers fewer hops", []config.Link{
			lnk("a", "h1", "r1", 2*sim.Millisecond), lnk("b", "r1", "h2", 2*sim.Millisecond),
			lnk("direct", "h1", "h2", 4*sim.Millisecond),
		}, []string{"direct"}},
		{"parallel links: first listed wins", []config.Link{
			lnk("p1", "h1", "h2", 3*sim.Millisecond), lnk("p2", "h1", "h2", 3*sim.Millisecond),
		}, []string{"p1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scn := &config.Scenario{Nodes: nodes, Links: c.links}
			nw, err := Build(sim.New(), &packet.Pool{}, scn)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range nw.Path(0, 3) {
				got = append(got, d.Link)
			}
			if len(got) != len(c.want) {
				t.Fatalf("path = %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("path = %v, want %v", got, c.want)
				}
			}
		})
	}
}

// A 1 BDP limit is the direction's rate times the base RTT of the flow
// crossing it: 100 Mbps × 2·(1 ms + 19 ms) = 500,000 bytes.
func TestBDPLimit(t *testing.T) {
	bn := dir(100*units.Mbps, 19*sim.Millisecond)
	bn.Qdisc.Limit = config.QueueLimit{MilliBDPs: 1000}
	scn := &config.Scenario{
		Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{lnk("access", "h1", "r1", sim.Millisecond), {ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn}},
		Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2"}},
	}
	s := sim.New()
	pool := &packet.Pool{}
	nw, err := Build(s, pool, scn)
	if err != nil {
		t.Fatal(err)
	}
	if got := nw.BaseRTT(0, 2); got != 40*sim.Millisecond {
		t.Errorf("BaseRTT = %v, want 40ms", got)
	}
	d, _ := nw.Dir("bottleneck", "ab")
	// Fill the queue with 1500-byte packets: it must take exactly
	// floor(500000/1500) = 333 of them.
	accepted := 0
	for i := 0; i < 1000; i++ {
		id := pool.Alloc()
		pool.Get(id).Size = 1500
		if d.Qdisc().Enqueue(id, 0) {
			accepted++
		} else {
			pool.Free(id)
		}
	}
	if accepted != 333 {
		t.Errorf("1BDP fifo accepted %d packets of 1500 B, want 333", accepted)
	}
}

// A BDP limit or ECN threshold that resolves to 0 B is refused rather than
// taken as none: 1 kbps × 2·(1 ms + 4 ms) is a BDP of 1 B, and 0.001BDP of
// it rounds down to 0 B.
func TestBDPResolvingToZeroRefused(t *testing.T) {
	build := func(q config.Qdisc) error {
		bn := dir(units.Kbps, 4*sim.Millisecond)
		bn.Qdisc = q
		scn := &config.Scenario{
			Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
			Links: []config.Link{lnk("access", "h1", "r1", sim.Millisecond), {ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn}},
			Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", Params: &config.Params{CC: "cubic", TCP: config.TCPOptions{MSS: 1448}}}},
		}
		_, err := Build(sim.New(), &packet.Pool{}, scn)
		return err
	}
	tiny := config.QueueLimit{MilliBDPs: 1}
	for _, c := range []struct {
		q    config.Qdisc
		want string
	}{
		{config.Qdisc{Kind: config.FIFO, Limit: tiny}, "limit: 0.001BDP is 0 B here (the BDP is 1 B), and a limit of 0 would mean none"},
		{config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 100}, ECNThreshold: tiny}, "ecn_threshold: 0.001BDP is 0 B here (the BDP is 1 B), and a threshold of 0 would mark nothing"},
	} {
		if err := build(c.q); err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("err = %v, want …%q", err, c.want)
		}
	}
}

// A byte limit below one full-size packet of a flow crossing the direction
// is refused: a FIFO drops a packet larger than its limit even when empty
// (bfifo's test is backlog + len <= limit), so the flow could never deliver.
// 2 Mbps × 2·(1 ms + 4 ms) = 2,500 B; half of it, 1,250 B, is less than a
// 1,448 B segment and its 52 B of headers. The reverse direction carries
// only 52 B ACKs, so the same limit is accepted there.
func TestLimitBelowOnePacketRefused(t *testing.T) {
	build := func(ab, ba config.QueueLimit) error {
		bn := dir(2*units.Mbps, 4*sim.Millisecond)
		rev := bn
		bn.Qdisc.Limit, rev.Qdisc.Limit = ab, ba
		scn := &config.Scenario{
			Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
			Links: []config.Link{lnk("access", "h1", "r1", sim.Millisecond), {ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: rev}},
			Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", Params: &config.Params{CC: "cubic", TCP: config.TCPOptions{MSS: 1448}}}},
		}
		_, err := Build(sim.New(), &packet.Pool{}, scn)
		return err
	}
	half, one := config.QueueLimit{MilliBDPs: 500}, config.QueueLimit{MilliBDPs: 1000}
	want := "topo: links[bottleneck].ab.qdisc: limit: 0.5BDP is 1250 B here (the BDP is 2500 B), less than one 1500 B packet of flow f0"
	if err := build(half, one); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("0.5BDP on the data direction: err = %v, want %q…", err, want)
	}
	want = "topo: links[bottleneck].ab.qdisc: limit: 1499 B, less than one 1500 B packet of flow f0"
	if err := build(config.QueueLimit{Bytes: 1499}, one); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("1499 B on the data direction: err = %v, want %q…", err, want)
	}
	for _, c := range []struct {
		name   string
		ab, ba config.QueueLimit
	}{{"1BDP", one, one}, {"1500 B", config.QueueLimit{Bytes: 1500}, one}, {"0.5BDP on the ACK direction", one, half}} {
		if err := build(c.ab, c.ba); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A router clears a packet's departure time (skb->tstamp) as it forwards
// it (ip_forward), so an fq on its egress sends a packet stamped for 50 ms
// at once: it reaches h2 after the two hops' serialisation and delay,
// 2 × (12,000 bit / 1 Gbps + 1 ms) = 2 × 1.012 ms = 2.024 ms, not after
// 50 ms.
func TestForwardingClearsDepartureTime(t *testing.T) {
	fq := dir(units.Gbps, sim.Millisecond)
	fq.Qdisc = config.Qdisc{Kind: config.FQ}
	scn := &config.Scenario{
		Nodes: []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{lnk("a", "h1", "r1", sim.Millisecond), {ID: "b", A: "r1", B: "h2", AB: fq, BA: fq}},
	}
	s, pool := sim.New(), &packet.Pool{}
	nw, err := Build(s, pool, scn)
	if err != nil {
		t.Fatal(err)
	}
	var at sim.Time
	nw.Node("h2").Attach(0, recv(func(id packet.ID) { at = s.Now(); pool.Free(id) }))
	id := pool.Alloc()
	p := pool.Get(id)
	p.Src, p.Dst, p.Size, p.TxTime = nw.Node("h1").Index, nw.Node("h2").Index, 1500, sim.Time(50*sim.Millisecond)
	nw.Node("h1").Send(id)
	s.Run()
	hop := sim.Duration(1500*8*int64(sim.Second)/int64(units.Gbps)) + sim.Millisecond
	if want := sim.Time(2 * hop); at != want {
		t.Errorf("the packet reached h2 at %v, want %v (its departure time cleared at r1)", at, want)
	}
}
