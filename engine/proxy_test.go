package engine

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// p-we-p splits the server's flow at the proxy. Each leg sees its own
// path: leg 0's median RTT lies between its base RTT (2 × (1 + 40) ms) and
// that plus its full 1-BDP queue (84 ms at 50 Mbps); leg 1's between 2 ms
// and 2 ms plus its 1000-packet queue at 1 Gbps (12 ms). The 0.1% loss on
// the long leg makes only leg 0 retransmit. The proxy relays every byte it
// reads and holds at most its 4 MB buffer.
func TestProxyLegsSeeTheirOwnPaths(t *testing.T) {
	_, sum := runJSON(t, mustBuiltin(t, "p-we-p"))
	l0, l1 := sum.Flows[0], sum.Flows[1]
	if l0.ID != "f0.0" || l1.ID != "f0.1" {
		t.Fatalf("flows = %s, %s; want f0.0, f0.1", l0.ID, l1.ID)
	}
	within := func(name string, v *int64, lo, hi sim.Duration) {
		t.Helper()
		if v == nil || sim.Duration(*v) < lo || sim.Duration(*v) > hi {
			t.Errorf("%s = %v, want in [%v, %v]", name, v, lo, hi)
		}
	}
	within("leg 0 rtt_p50", l0.RTTP50Ps, 82*sim.Millisecond, (82+84)*sim.Millisecond)
	within("leg 1 rtt_p50", l1.RTTP50Ps, 2*sim.Millisecond, 14*sim.Millisecond)
	if *l0.Retransmits == 0 || *l1.Retransmits != 0 {
		t.Errorf("retransmits = %d (long lossy leg), %d (short clean leg); want > 0, 0", *l0.Retransmits, *l1.Retransmits)
	}
	if held := l0.BytesDelivered - l1.BytesDelivered; held < 0 || held > 4_000_000 {
		t.Errorf("proxy holds %d bytes (leg 0 delivered %d, leg 1 %d), want in [0, 4MB]", held, l0.BytesDelivered, l1.BytesDelivered)
	}
}

// With a short leg of 5 Mbps, the slower leg sets the end-to-end goodput:
// 5 Mbps × 1448/1500 (payload per packet) within 5%. Leg 0 could carry
// more, but the relay buffer fills and leg 0's receive window closes, so
// it delivers no more than leg 1 plus the 4 MB buffer.
func TestProxyGoodputIsTheSlowerLegs(t *testing.T) {
	_, sum := runJSON(t, mustBuiltin(t, "p-we-p"), "links.last.rate=5Mbps",
		`links.last.qdisc={"kind":"fifo","limit":"100p"}`, "runtime.duration=60s")
	l0, l1 := sum.Flows[0], sum.Flows[1]
	want := float64(5*units.Mbps) * 1448 / 1500
	if got := float64(*l1.GoodputBps); math.Abs(got-want) > 0.05*want {
		t.Errorf("end-to-end goodput = %.3g bps, want %.3g ± 5%%", got, want)
	}
	if held := l0.BytesDelivered - l1.BytesDelivered; held < 0 || held > 4_000_000 {
		t.Errorf("leg 0 delivered %d bytes, leg 1 %d: the relay holds %d, want at most its 4 MB", l0.BytesDelivered, l1.BytesDelivered, held)
	}
}

// A group's flows share their group's settings (config.Params); a flow the
// proxy splits gives each leg its own CC (legs) without touching them:
// every leg runs the CC its legs entry names, and the scenario's flows
// still have the group's.
func TestProxyLegsOfAGroup(t *testing.T) {
	r, sum := runJSON(t, mustBuiltin(t, "p-we-p"), "runtime.duration=2s",
		`flows=[{"group":"g","count":2,"src":"server","dst":"client","cc":"cubic","size":"100KB",`+
			`"start":{"kind":"periodic","at":"0s","every":"500ms","batch":1},"legs":[{"cc":"reno"},{"cc":"bbr"}]}]`)
	want := map[string]string{"g/0.0": "reno", "g/1.0": "reno", "g/0.1": "bbr", "g/1.1": "bbr"}
	for _, f := range sum.Flows {
		if f.CC != want[f.ID] || f.BytesDelivered != 100_000 {
			t.Errorf("flow %s: cc %s, delivered %d B; want %s, 100,000", f.ID, f.CC, f.BytesDelivered, want[f.ID])
		}
	}
	for _, f := range r.Scenario.Flows {
		if f.CC != "cubic" {
			t.Errorf("scenario flow %s: cc %s after the run, want the group's cubic", f.ID, f.CC)
		}
	}
}

// A group flow split by a proxy completes when its destination has the
// last byte, which leg 1 sees: the group's summary counts it, with leg 1's
// FCT. Leg 0's FCT, when the proxy had the last byte, is earlier by at
// least the last link's 1 ms and the serialisation of the segment holding
// that byte on it at 1 Gbps: 100,000 B leave 88 B after 69 full segments
// of 1,448, so 140 B on the wire, 1.12 µs (and here exactly that: the
// relay forwards it at once). Before, the legs reported no FCT and a
// proxied group completed no flow.
func TestProxyGroupFCTIsEndToEnd(t *testing.T) {
	_, sum := runJSON(t, mustBuiltin(t, "p-we-p"), "runtime.duration=3s",
		`flows=[{"group":"g","count":2,"src":"server","dst":"client","cc":"cubic","size":"100KB",`+
			`"start":{"kind":"periodic","at":"0s","every":"1s","batch":1}}]`)
	fct := map[string]int64{}
	for _, f := range sum.Flows {
		if f.FCTPs == nil {
			t.Fatalf("flow %s: no FCT, %d B delivered", f.ID, f.BytesDelivered)
		}
		fct[f.ID] = *f.FCTPs
	}
	for _, id := range []string{"g/0", "g/1"} {
		gap := sim.Duration(fct[id+".1"] - fct[id+".0"])
		if min := sim.Millisecond + units.TxTime(88+52, units.Gbps); gap < min {
			t.Errorf("%s: leg 1 done %v after leg 0, want at least %v", id, gap, min)
		}
	}
	g := sum.Groups[0]
	if g.Completed != 2 || len(g.Buckets) != 1 || g.Buckets[0].Count != 2 {
		t.Fatalf("group summary %+v, want 2 completed in one bucket", g)
	}
	if hi := max(fct["g/0.1"], fct["g/1.1"]); g.Buckets[0].FCTP99Ps != hi {
		t.Errorf("group FCT p99 %d ps, want leg 1's largest, %d", g.Buckets[0].FCTP99Ps, hi)
	}
}

// A split flow's receive-path models (rcv_hold, ack_hold, ack_grant) are
// its destination's: they stand around leg 1's receiver, at the client,
// and not around leg 0's at the proxy. Before, leg 0's ACKs left the proxy
// through the client's LTE grants too.
func TestProxyReceivePathIsTheDestinations(t *testing.T) {
	_, sum := runJSON(t, mustBuiltin(t, "p-we-p"), "runtime.duration=3s",
		`flows.f0.ack_grant={"profile":"lte"}`, "flows.f0.rcv_hold=100us")
	legs := map[string]FlowSummary{}
	for _, f := range sum.Flows {
		legs[f.ID] = f
	}
	l0, ok0 := legs["f0.0"]
	l1, ok1 := legs["f0.1"]
	if !ok0 || !ok1 {
		t.Fatalf("flows %v, want f0 split into f0.0 and f0.1", slices.Sorted(maps.Keys(legs)))
	}
	if l0.RcvPath != nil {
		t.Errorf("leg 0 (at the proxy) has receive-path counts %+v, want none", *l0.RcvPath)
	}
	if l1.RcvPath == nil || l1.RcvPath.Grants == 0 {
		t.Errorf("leg 1 (at the client) has receive-path counts %v, want its grants", l1.RcvPath)
	}
}

// A flow is split at one proxy at most: one whose path crosses two is
// refused, naming both, rather than split at the first while the second
// forwarded its leg 1 unsplit.
func TestProxyChainRefused(t *testing.T) {
	p, err := Prepare([]byte(`{"runtime":{"seed":1,"duration":"1s"},
 "nodes":[{"id":"server","kind":"endpoint"},{"id":"p1","kind":"proxy"},{"id":"p2","kind":"proxy"},{"id":"client","kind":"endpoint"}],
 "links":[{"id":"a","a":"server","b":"p1","rate":"100Mbps","delay":"10ms"},
  {"id":"b","a":"p1","b":"p2","rate":"50Mbps","delay":"20ms"},
  {"id":"c","a":"p2","b":"client","rate":"100Mbps","delay":"1ms"}],
 "flows":[{"id":"f0","src":"server","dst":"client","cc":"cubic"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(p.Scenario, nil)
	if err == nil || !strings.Contains(err.Error(), "flows[f0]: its path crosses two split-TCP proxies, p1 and p2") {
		t.Fatalf("New = %v, want a refusal naming flows[f0], p1 and p2", err)
	}
}

// Legs configure the two halves of a split flow; given to a flow, or to
// every flow of a group, that no proxy splits, they would be dropped
// silently: refused, naming the flow or group and its ends.
func TestLegsWithoutProxyRefused(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{`flows.f0.legs=[{"cc":"reno"},{"cc":"bbr"}]`, "flows[f0].legs: no split-TCP proxy is on the path from h1 to h2"},
		{`flows=[{"group":"g","count":2,"src":"h1","dst":"h2","cc":"cubic","legs":[{"cc":"reno"},{"cc":"bbr"}]}]`,
			"flows[g].legs: no split-TCP proxy is on the path from h1 to h2"},
	} {
		p, err := Prepare(mustBuiltin(t, "p-rtr-p"), []string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(p.Scenario, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%s) = %v, want %q", c.set, err, c.want)
		}
	}
}

// A handover announced on a link tells the legs whose own routes cross it,
// not the split flow as a whole: on p-we-p with SaTCP on both legs, an
// announcement on the proxy's last link (at 1 s, 100 ms ahead of a 50 ms
// outage) raises leg 1's handover signal at 1 s and leaves leg 0's down;
// one on the bottleneck (at 3 s) raises leg 0's at 3 s and not leg 1's.
// Before, the flow's whole route was checked and only leg 0 was told, of
// both.
func TestProxyLegsAnnouncedOnTheirOwnRoutes(t *testing.T) {
	r, _ := runJSON(t, mustBuiltin(t, "p-we-p"), "runtime.duration=4s", "flows.f0.cc=satcp", `trace.detail="change"`,
		`changes=[{"at": "1100ms", "link": "last", "dir": "ab", "outage": "50ms", "announce": "100ms"},
		          {"at": "3100ms", "link": "bottleneck", "dir": "ab", "outage": "50ms", "announce": "100ms"}]`)
	rises := map[string][]sim.Time{}
	id := r.Trace.SignalIndex("handover")
	s := &r.Trace.SignalT
	for i := range s.T {
		if s.Signal[i] == id && s.Value[i] == 1 {
			f := r.Trace.Flows[s.Flow[i]]
			rises[f] = append(rises[f], sim.Time(s.T[i]))
		}
	}
	first := func(f string) sim.Time {
		if len(rises[f]) == 0 {
			return -1
		}
		return rises[f][0]
	}
	if got := first("f0.1"); got != sim.Time(sim.Second) {
		t.Errorf("leg 1's handover signal first rose at %v, want 1s (the last link's announcement)", got)
	}
	if got := first("f0.0"); got != sim.Time(3*sim.Second) {
		t.Errorf("leg 0's handover signal first rose at %v, want 3s (the bottleneck's announcement)", got)
	}
	for _, f := range []string{"f0.0", "f0.1"} {
		for _, at := range rises[f] {
			if f == "f0.0" && at < sim.Time(3*sim.Second) || f == "f0.1" && at >= sim.Time(3*sim.Second) {
				t.Errorf("%s's handover signal rose at %v, from the other leg's link", f, at)
			}
		}
	}
}

// segmentCheck passes packets on to next and counts leg 1's data segments
// that are not whole MSS-sized segments from sequence 1 (the flow's last
// excepted).
type segmentCheck struct {
	next      link.Receiver
	pool      *packet.Pool
	flow      int32
	mss, end  uint64
	seen, bad int
}

func (c *segmentCheck) Receive(id packet.ID) {
	if p := c.pool.Get(id); p.Flow == c.flow && p.Len > 0 {
		c.seen++
		if (p.Seq-1)%c.mss != 0 || uint64(p.Len) > c.mss || uint64(p.Len) < c.mss && p.Seq+uint64(p.Len) != c.end {
			c.bad++
		}
	}
	c.next.Receive(id)
}

// A proxy's relay writes what leg 0 delivered, which ends anywhere when leg
// 0's MSS (997 B) is not leg 1's (1,448 B). Leg 1's greedy writer, held by
// its 16 KiB send buffer, topped its send head up to the relay's end: a
// sub-MSS segment in mid-stream, after which the scoreboard's segments
// (numbered by MSS from sequence 1) no longer matched what was sent, and
// retransmissions went out with the wrong ranges (one of 4 GB, its length
// wrapped, stalled a link for the rest of a run). Leg 1 now sends whole
// segments but for the flow's last, and with 2 % loss on its link it
// delivers every byte.
func TestProxyRelayKeepsWholeSegments(t *testing.T) {
	prep, err := Prepare(mustBuiltin(t, "p-we-p"), []string{"flows.f0.size=2MB", "runtime.duration=10s",
		`flows.f0.legs=[{"cc": "cubic", "tcp": {"mss": "997B"}}, {"cc": "cubic", "tcp": {"sndbuf": "16KiB"}}]`,
		`links.last.ab.loss={"kind": "bernoulli", "p": 0.02}`})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	leg1, _ := r.FlowIndex("f0.1")
	c := &segmentCheck{pool: r.Pool, flow: int32(leg1), mss: 1448, end: 1 + 2_000_000}
	if err := r.TapArrivals("last", "ab", func(next link.Receiver) link.Receiver { c.next = next; return c }); err != nil {
		t.Fatal(err)
	}
	r.RunToEnd()
	if c.bad > 0 || c.seen == 0 {
		t.Errorf("%d of leg 1's %d data segments were not whole segments from sequence 1", c.bad, c.seen)
	}
	if got := r.endToEnd(r.Summary("").Flows)[0].BytesDelivered; got != 2_000_000 {
		t.Errorf("delivered %d B end to end, want 2,000,000", got)
	}
}
