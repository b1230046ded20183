package config

import (
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
	}
	if got := len(Builtins()); got != len(cases)+len(pathBuiltins) {
		t.Errorf("len(Builtins()) = %d, want %d", got, len(cases)+len(pathBuiltins))
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
				if want := "f" + string(rune('0'+i)); f.ID != want {
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
		if _, err := Builtin(name); err == nil || !strings.Contains(err.Error(), "built-ins: bufferbloat, cellular, dctcp-dc") {
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
