package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// designCCs are the algorithms DESIGN.md lists, by their kernel names.
var designCCs = []string{"reno", "cubic", "bbr", "bbr3", "bbrb", "dctcp", "prague"}

// TestBuiltins checks each built-in against the experiment it stands for:
// the bottleneck's rate and queue, the base RTT (twice the one-way delays
// along f0's path), the flows and the run length.
func TestBuiltins(t *testing.T) {
	bulk := func(cc string) string { return cc + " bulk" }
	cases := []struct {
		name     string
		rate     units.BitRate
		baseRTT  sim.Duration
		limit    QueueLimit
		flows    []string // "cc kind" of f0, f1, …
		duration sim.Duration
		check    func(t *testing.T, s *Scenario)
	}{
		{"pump", 100 * units.Mbps, 40 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{"pump 120Mbps"}, 10 * sim.Second, nil},
		{"p-rtr-p", 100 * units.Mbps, 40 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{bulk("cubic")}, 20 * sim.Second, nil},
		{"dumbbell-1g", units.Gbps, 30 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{bulk("cubic")}, 60 * sim.Second,
			func(t *testing.T, s *Scenario) {
				for _, l := range s.Links {
					if l.ID != "bottleneck" && l.AB.Rate != 10*units.Gbps {
						t.Errorf("access link %s rate = %v, want 10Gbps", l.ID, l.AB.Rate)
					}
				}
			}},
		{"rebbr", 100 * units.Mbps, 100 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{bulk("cubic")}, 30 * sim.Second,
			func(t *testing.T, s *Scenario) {
				if l := bottleneck(s).AB.Loss; l != (Loss{Kind: Bernoulli, P: 0}) {
					t.Errorf("bottleneck ab loss = %+v, want bernoulli p=0 (the knob)", l)
				}
			}},
		{"dctcp-dc", units.Gbps, 100 * sim.Microsecond, QueueLimit{Packets: 1000}, []string{bulk("dctcp")}, 5 * sim.Second,
			func(t *testing.T, s *Scenario) {
				if !s.Flows[0].TCP.ECN {
					t.Errorf("dctcp-dc f0 ECN = false, want true: DCTCP needs ECN")
				}
				// The DCTCP paper (§3.4) asks K > C·RTT/7 (1.2 packets here) and
				// used 20 at 1 Gbps, 65 at 10 Gbps; the built-in takes 65.
				if k := bottleneck(s).AB.Qdisc.ECNThreshold; k != (QueueLimit{Packets: 65}) {
					t.Errorf("dctcp-dc ecn_threshold = %+v, want 65 packets (step marking)", k)
				}
			}},
		{"l4s", 100 * units.Mbps, 40 * sim.Millisecond, QueueLimit{Packets: 10000}, []string{bulk("prague"), bulk("cubic")}, 30 * sim.Second,
			func(t *testing.T, s *Scenario) {
				// RFC 9332 §2.5 and Appendix A defaults: 15 ms classic target,
				// 16 ms Tupdate, 1 ms L4S step, coupling k = 2.
				q := bottleneck(s).AB.Qdisc
				if q.Target != 15*sim.Millisecond || q.StepThreshold != sim.Millisecond || q.Coupling != 2 {
					t.Errorf("l4s dualpi2 target, step, k = %v, %v, %d; want 15ms, 1ms, 2", q.Target, q.StepThreshold, q.Coupling)
				}
				if !s.Flows[0].TCP.ECN || s.Flows[1].TCP.ECN {
					t.Errorf("l4s ECN f0, f1 = %v, %v; want Prague with ECN, CUBIC without", s.Flows[0].TCP.ECN, s.Flows[1].TCP.ECN)
				}
			}},
		{"jitter-kumar", units.Gbps, 10 * sim.Millisecond, QueueLimit{Packets: 1000}, []string{bulk("cubic")}, 20 * sim.Second,
			func(t *testing.T, s *Scenario) {
				if j := bottleneck(s).AB.Jitter; j != (Jitter{Kind: Gaussian, Sigma: sim.Millisecond}) {
					t.Errorf("bottleneck ab jitter = %+v, want gaussian sigma 1ms", j)
				}
			}},
		{"bufferbloat", 10 * units.Mbps, 20 * sim.Millisecond, QueueLimit{Packets: 1000}, []string{bulk("cubic"), "cubic 100Kbps"}, 30 * sim.Second, nil},
		{"p-rtr-rtr-p", 50 * units.Mbps, 62 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{bulk("cubic")}, 20 * sim.Second, nil},
		// A proxy between the router and the client: a long lossy leg
		// and a short clean one (the WarpSIM paper's p-we-p).
		{"p-we-p", 50 * units.Mbps, 84 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, []string{bulk("cubic")}, 20 * sim.Second,
			func(t *testing.T, s *Scenario) {
				if n := s.Nodes[2]; n.Kind != Proxy || n.Buffer != 4*units.MB {
					t.Errorf("node %s = kind %d buffer %v, want a proxy with a 4MB buffer", n.ID, n.Kind, n.Buffer)
				}
				if l := bottleneck(s).AB.Loss; l.P != 0.001 {
					t.Errorf("long leg loss = %+v, want p = 0.001", l)
				}
			}},
		// The N-flow dumbbell: 32 CUBIC flows by default, each
		// between hosts of its own.
		{"dumbbell-n", 10 * units.Gbps, 30 * sim.Millisecond, QueueLimit{MilliBDPs: 1000}, slices.Repeat([]string{bulk("cubic")}, 32), sim.Second,
			func(t *testing.T, s *Scenario) {
				hosts := map[string]bool{}
				for _, f := range s.Flows {
					hosts[f.Src], hosts[f.Dst] = true, true
				}
				if len(hosts) != 64 {
					t.Errorf("%d distinct hosts, want 64", len(hosts))
				}
			}},
	}
	if got, want := len(Builtins()), len(cases)+len(pathBuiltins)+len(otherBuiltins); got != want {
		t.Errorf("len(Builtins()) = %d, want %d", got, want)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := Builtin(tc.name)
			if err != nil {
				t.Fatalf("Builtin(%q): %v", tc.name, err)
			}
			s := mustParse(t, raw, WithCCs(designCCs))
			if s.Name != tc.name {
				t.Errorf("name = %q, want %q", s.Name, tc.name)
			}
			b := bottleneck(s)
			if b == nil {
				t.Fatalf("no link named bottleneck")
			}
			if b.AB.Rate != tc.rate || b.BA.Rate != tc.rate {
				t.Errorf("bottleneck rates = %v/%v, want %v both ways", b.AB.Rate, b.BA.Rate, tc.rate)
			}
			kind := FIFO
			if tc.name == "l4s" {
				kind = DualPI2
			}
			if b.AB.Qdisc.Kind != kind || b.AB.Qdisc.Limit != tc.limit {
				t.Errorf("bottleneck ab qdisc = %+v, want kind %d limit %+v", b.AB.Qdisc, kind, tc.limit)
			}
			if s.Runtime.Duration != tc.duration {
				t.Errorf("duration = %v, want %v", s.Runtime.Duration, tc.duration)
			}
			if len(s.Flows) != len(tc.flows) {
				t.Fatalf("%d flows, want %d", len(s.Flows), len(tc.flows))
			}
			for i, f := range s.Flows {
				want := "f" + string(rune('0'+i))
				if f.Group != "" {
					want = fmt.Sprintf("%s/%d", f.Group, i)
				}
				if f.ID != want {
					t.Errorf("flow %d id = %q, want %q", i, f.ID, want)
				}
				kind := f.CC + " bulk"
				switch {
				case f.CC == Pump:
					kind = f.CC + " " + f.Rate.String()
				case f.App.Kind == AppRate:
					kind = f.CC + " " + f.App.Rate.String()
				case f.Size != 0:
					kind = f.CC + " sized"
				}
				if kind != tc.flows[i] {
					t.Errorf("flow %s = %q, want %q", f.ID, kind, tc.flows[i])
				}
			}
			oneWay, dirs := pathDelay(s, s.Flows[0].Src, s.Flows[0].Dst)
			if 2*oneWay != tc.baseRTT {
				t.Errorf("base RTT = 2 × %v = %v, want %v", oneWay, 2*oneWay, tc.baseRTT)
			}
			if !strings.Contains(dirs, "bottleneck.ab") {
				t.Errorf("f0's path %s does not cross bottleneck in its ab direction", dirs)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	for _, name := range []string{"nope", "../config", ""} {
		if _, err := Builtin(name); err == nil || !strings.Contains(err.Error(), "built-ins: bufferbloat, cellular, dc-incast, dctcp-dc") {
			t.Errorf("Builtin(%q) error = %v, want one listing the built-ins", name, err)
		}
	}
}

func TestBuiltinsListed(t *testing.T) {
	for _, b := range Builtins() {
		if b.Description == "" {
			t.Errorf("built-in %s has no description", b.Name)
		}
	}
}

func bottleneck(s *Scenario) *Link {
	for i := range s.Links {
		if s.Links[i].ID == "bottleneck" {
			return &s.Links[i]
		}
	}
	return nil
}

// pathDelay sums the propagation delays along the (tree) path from src to
// dst and names the link directions it crosses.
func pathDelay(s *Scenario, src, dst string) (sim.Duration, string) {
	var walk func(at, from string) (sim.Duration, string, bool)
	walk = func(at, from string) (sim.Duration, string, bool) {
		if at == dst {
			return 0, "", true
		}
		for _, l := range s.Links {
			next, d, name := l.B, l.AB.Delay, l.ID+".ab"
			if l.B == at {
				next, d, name = l.A, l.BA.Delay, l.ID+".ba"
			} else if l.A != at {
				continue
			}
			if next == from {
				continue
			}
			if rest, dirs, ok := walk(next, at); ok {
				return d + rest, name + " " + dirs, true
			}
		}
		return 0, "", false
	}
	d, dirs, _ := walk(src, "")
	return d, dirs
}

// otherBuiltins are the built-ins whose shape the table of TestBuiltins
// does not fit, checked by TestOtherBuiltins.
var otherBuiltins = []string{"rrul", "dc-incast"}

// TestOtherBuiltins checks rrul against flent's RRUL (4 flows up, 4 down,
// a ping; here on a 20/5 Mbps link with a 1000-packet FIFO) and dc-incast
// against the fabric: 2 spines, 4 leaves of 8 hosts, 100 and
// 25 Gbps, ECMP, DCTCP with step marking, 32 senders of 64 KB per round.
func TestOtherBuiltins(t *testing.T) {
	parse := func(name string) *Scenario {
		raw, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		return mustParse(t, raw, WithCCs(designCCs))
	}
	s := parse("rrul")
	b := bottleneck(s)
	if b.AB.Rate != 5*units.Mbps || b.BA.Rate != 20*units.Mbps || b.AB.Qdisc.Limit.Packets != 1000 || b.BA.Qdisc.Limit.Packets != 1000 {
		t.Errorf("rrul bottleneck = up %v, down %v, FIFO %d/%d packets; want 5 Mbps, 20 Mbps, 1000/1000", b.AB.Rate, b.BA.Rate, b.AB.Qdisc.Limit.Packets, b.BA.Qdisc.Limit.Packets)
	}
	count := map[string]int{}
	for _, f := range s.Flows {
		switch {
		case f.CC == Ping:
			count["ping"]++
		case f.Src == "client" && f.Size == 0:
			count["up"]++
		case f.Src == "server" && f.Size == 0:
			count["down"]++
		}
	}
	if count["up"] != 4 || count["down"] != 4 || count["ping"] != 1 {
		t.Errorf("rrul flows = %v, want 4 up, 4 down, 1 ping", count)
	}

	s = parse("dc-incast")
	kinds := map[NodeKind]int{}
	ecmp := 0
	for _, n := range s.Nodes {
		kinds[n.Kind]++
		if n.Routing == RouteECMP {
			ecmp++
		}
	}
	if kinds[Router] != 6 || ecmp != 6 || kinds[Endpoint] != 33 {
		t.Errorf("dc-incast nodes = %v (%d ECMP), want 6 ECMP routers and 32 senders + 1 receiver", kinds, ecmp)
	}
	senders := map[string]bool{}
	for _, f := range s.Flows {
		senders[f.Src] = true
		if f.Dst != "rx" || f.CC != "dctcp" || f.Size != 64*units.KB {
			t.Fatalf("dc-incast flow %s = %s → %s %s %v, want → rx dctcp 64KB", f.ID, f.Src, f.Dst, f.CC, f.Size)
		}
	}
	if len(senders) != 32 || len(s.Flows)%32 != 0 || s.Flows[32].Start-s.Flows[0].Start != 10*sim.Millisecond {
		t.Errorf("dc-incast: %d senders, %d flows, rounds %v apart; want 32, a multiple of 32, 10ms", len(senders), len(s.Flows), s.Flows[32].Start-s.Flows[0].Start)
	}
	for _, l := range s.Links {
		if l.AB.Qdisc.ECNThreshold.Packets != 65 {
			t.Errorf("dc-incast link %s ecn_threshold = %+v, want 65 packets", l.ID, l.AB.Qdisc.ECNThreshold)
		}
	}
}
