package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// TestParseDefaults checks every default against its source: Linux's
// txqueuelen (1000), sch_codel's codel_init (limit 1000, target 5 ms,
// interval 100 ms, ECN off), tcp_rmem = 4096 131072 33554432, the 4 MiB
// tcp_wmem ceiling, TCP_INIT_CWND = 10, a 1448-byte MSS (1500 − 20 IPv4 − 20
// TCP − 12 timestamp option), CUBIC as the default CC, a 1500-byte pump
// packet.
func TestParseDefaults(t *testing.T) {
	raw := `{
	  "runtime": {"duration": "1s"},
	  "nodes": [{"id": "a", "kind": "endpoint"}, {"id": "b", "kind": "endpoint"}],
	  "links": [{"id": "l", "a": "a", "b": "b", "rate": "10Mbps", "delay": "2ms",
	             "ba": {"qdisc": {"kind": "codel"}}}],
	  "flows": [{"id": "f0", "src": "a", "dst": "b"}, {"id": "p", "src": "b", "dst": "a", "cc": "pump", "rate": "1Mbps"}]
	}`
	fifo := Direction{Rate: 10 * units.Mbps, Delay: 2 * sim.Millisecond,
		Qdisc: Qdisc{Kind: FIFO, Limit: QueueLimit{Packets: 1000}}}
	codel := fifo
	codel.Qdisc = Qdisc{Kind: CoDel, Limit: QueueLimit{Packets: 1000}, Target: 5 * sim.Millisecond, Interval: 100 * sim.Millisecond, ECN: false}
	want := &Scenario{
		Runtime: Runtime{Seed: 0, Duration: sim.Second},
		Nodes:   []Node{{ID: "a", Kind: Endpoint}, {ID: "b", Kind: Endpoint}},
		Links:   []Link{{ID: "l", A: "a", B: "b", AB: fifo, BA: codel}},
		Flows: []Flow{
			{ID: "f0", Src: "a", Dst: "b", Params: &Params{CC: "cubic", App: AppPattern{Kind: Greedy}, TCP: TCPOptions{
				SACK: true, RACK: true, TLP: true, PRR: true, FRTO: true, Pacing: PacingAuto, TSO: true, GRO: true, DelayedAck: true, ECN: false,
				MSS: 1448, InitCwnd: 10, SndBuf: 4194304, RcvBufInit: 131072, RcvBufMax: 33554432, GROInterval: 0, HZ: 1000, Timestamps: 1,
			}}},
			{ID: "p", Src: "b", Dst: "a", Params: &Params{CC: "pump", Rate: units.Mbps, PacketSize: 1500}},
		},
		Trace: Trace{Detail: TraceSummary},
	}
	got := mustParse(t, []byte(raw))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse(minimal) mismatch (-want +got):\n%s", d)
	}
}

// TestParseQdiscDefaults checks each kind's defaults against the kernel's
// init functions: fq_codel_init (limit 10*1024, flows 1024, quantum
// psched_mtu, ECN on, target 5 ms, interval 100 ms), dualpi2_reset_default
// (limit 10000, target 15 ms, tupdate 16 ms, step 1 ms, coupling 2, wc 10 %)
// and fq_init (limit 10000, flow_plimit 100, quantum 2 MTU, initial quantum
// 10 MTU, horizon 10 s), with our 1500-byte MTU.
func TestParseQdiscDefaults(t *testing.T) {
	cases := []struct {
		kind string
		want Qdisc
	}{
		{"fq_codel", Qdisc{Kind: FQCoDel, Limit: QueueLimit{Packets: 10240}, Target: 5 * sim.Millisecond,
			Interval: 100 * sim.Millisecond, ECN: true, Flows: 1024, Quantum: 1500}},
		{"dualpi2", Qdisc{Kind: DualPI2, Limit: QueueLimit{Packets: 10000}, Target: 15 * sim.Millisecond,
			TUpdate: 16 * sim.Millisecond, StepThreshold: sim.Millisecond, Coupling: 2, CProtection: 10}},
		{"fq", Qdisc{Kind: FQ, Limit: QueueLimit{Packets: 10000}, Quantum: 3000, InitialQuantum: 15000,
			FlowLimit: 100, Horizon: 10 * sim.Second}},
		{"fifo", Qdisc{Kind: FIFO, Limit: QueueLimit{Packets: 1000}}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			s := mustParse(t, mutate(t, func(m map[string]any) {
				at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": c.kind}
			}))
			if d := cmp.Diff(c.want, s.Links[1].AB.Qdisc); d != "" {
				t.Errorf("Parse(%s defaults) mismatch (-want +got):\n%s", c.kind, d)
			}
		})
	}
}

// TestParseUnits checks that values arrive exactly: the integers are the
// hand-computed products of the decimal and the unit.
func TestParseUnits(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		check  func(s *Scenario) (got, want any)
	}{
		{"0.5us is 500000 ps", func(m map[string]any) { at(m, "links", "access")["delay"] = "0.5us" },
			func(s *Scenario) (any, any) { return s.Links[0].AB.Delay, sim.Duration(500000) }},
		{"plain integer delay is picoseconds", func(m map[string]any) { at(m, "links", "access")["delay"] = 19000000000 },
			func(s *Scenario) (any, any) { return s.Links[0].BA.Delay, 19 * sim.Millisecond }},
		{"µs spelling", func(m map[string]any) { at(m, "links", "access")["delay"] = "2.5µs" },
			func(s *Scenario) (any, any) { return s.Links[0].AB.Delay, sim.Duration(2500000) }},
		{"1.2Tbps", func(m map[string]any) { at(m, "links", "access")["rate"] = "1.2Tbps" },
			func(s *Scenario) (any, any) { return s.Links[0].AB.Rate, units.BitRate(1200000000000) }},
		{"plain integer rate is bps", func(m map[string]any) { at(m, "links", "access")["rate"] = 64000 },
			func(s *Scenario) (any, any) { return s.Links[0].AB.Rate, 64 * units.Kbps }},
		{"1.5MB is 1500000 bytes", func(m map[string]any) { at(m, "flows", "f0")["size"] = "1.5MB" },
			func(s *Scenario) (any, any) { return s.Flows[0].Size, units.Bytes(1500000) }},
		{"4MiB", func(m map[string]any) { at(m, "flows", "f0")["size"] = "4MiB" },
			func(s *Scenario) (any, any) { return s.Flows[0].Size, units.Bytes(4 * 1024 * 1024) }},
		{"plain integer size is bytes", func(m map[string]any) { at(m, "flows", "p0")["packet_size"] = 9000 },
			func(s *Scenario) (any, any) { return s.Flows[1].PacketSize, units.Bytes(9000) }},
		{"largest seed is exact", func(m map[string]any) { at(m, "runtime")["seed"] = uint64(18446744073709551615) },
			func(s *Scenario) (any, any) { return s.Runtime.Seed, uint64(18446744073709551615) }},
		{"0.5BDP limit", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "0.5BDP" },
			func(s *Scenario) (any, any) { return s.Links[1].AB.Qdisc.Limit, QueueLimit{MilliBDPs: 500} }},
		{"packet limit", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "100p" },
			func(s *Scenario) (any, any) { return s.Links[1].AB.Qdisc.Limit, QueueLimit{Packets: 100} }},
		{"size limit", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "150KB" },
			func(s *Scenario) (any, any) { return s.Links[1].AB.Qdisc.Limit, QueueLimit{Bytes: 150000} }},
		{"plain integer limit is bytes", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = 150000 },
			func(s *Scenario) (any, any) { return s.Links[1].AB.Qdisc.Limit, QueueLimit{Bytes: 150000} }},
		{"probability", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "loss")["p"] = 0.25 },
			func(s *Scenario) (any, any) { return s.Links[1].AB.Loss, Loss{Kind: Bernoulli, P: 0.25} }},
		{"unlimited sndbuf is 0", func(m map[string]any) { at(m, "flows", "f0", "tcp")["sndbuf"] = "unlimited" },
			func(s *Scenario) (any, any) { return s.Flows[0].TCP.SndBuf, units.Bytes(0) }},
		{"change values", func(m map[string]any) {
			list(m, "changes")[0].(map[string]any)["delay"] = "30ms"
			list(m, "changes")[0].(map[string]any)["loss"] = map[string]any{"kind": "bernoulli", "p": 0.02}
		}, func(s *Scenario) (any, any) {
			c := s.Changes[0]
			return []any{c.At, *c.Rate, *c.Delay, *c.Loss}, []any{5 * sim.Second, 50 * units.Mbps, 30 * sim.Millisecond, Loss{Kind: Bernoulli, P: 0.02}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, mutate(t, tc.mutate))
			got, want := tc.check(s)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseDirectionMerge checks how ab/ba combine with the link's shared
// values: per field, per key inside an object, afresh when the kind differs.
func TestParseDirectionMerge(t *testing.T) {
	cases := []struct {
		name   string
		link   map[string]any
		ab, ba Direction
	}{
		{
			name: "shared values apply to both directions",
			link: map[string]any{"rate": "1Gbps", "delay": "1ms", "loss": map[string]any{"kind": "bernoulli", "p": 0.1}},
			ab:   Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}, Loss: Loss{Kind: Bernoulli, P: 0.1}},
			ba:   Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}, Loss: Loss{Kind: Bernoulli, P: 0.1}},
		},
		{
			name: "a direction overrides one field",
			link: map[string]any{"rate": "1Gbps", "delay": "1ms", "ba": map[string]any{"rate": "10Mbps"}},
			ab:   Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}},
			ba:   Direction{Rate: 10 * units.Mbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}},
		},
		{
			name: "qdisc keys merge under the same kind",
			link: map[string]any{"rate": "1Gbps", "delay": "1ms",
				"qdisc": map[string]any{"kind": "codel", "target": "1ms"},
				"ab":    map[string]any{"qdisc": map[string]any{"limit": "2BDP"}}},
			ab: Direction{Rate: units.Gbps, Delay: sim.Millisecond,
				Qdisc: Qdisc{Kind: CoDel, Limit: QueueLimit{MilliBDPs: 2000}, Target: sim.Millisecond, Interval: 100 * sim.Millisecond}},
			ba: Direction{Rate: units.Gbps, Delay: sim.Millisecond,
				Qdisc: Qdisc{Kind: CoDel, Limit: QueueLimit{Packets: 1000}, Target: sim.Millisecond, Interval: 100 * sim.Millisecond}},
		},
		{
			name: "another kind starts afresh",
			link: map[string]any{"rate": "1Gbps", "delay": "1ms",
				"qdisc": map[string]any{"kind": "codel", "target": "1ms", "ecn": true},
				"ab":    map[string]any{"qdisc": map[string]any{"kind": "fifo"}}},
			ab: Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Kind: FIFO, Limit: QueueLimit{Packets: 1000}}},
			ba: Direction{Rate: units.Gbps, Delay: sim.Millisecond,
				Qdisc: Qdisc{Kind: CoDel, Limit: QueueLimit{Packets: 1000}, Target: sim.Millisecond, Interval: 100 * sim.Millisecond, ECN: true}},
		},
		{
			name: "jitter on one direction only",
			link: map[string]any{"rate": "1Gbps", "delay": "1ms", "ab": map[string]any{"jitter": map[string]any{"kind": "gaussian", "sigma": "1ms"}}},
			ab:   Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}, Jitter: Jitter{Kind: Gaussian, Sigma: sim.Millisecond}},
			ba:   Direction{Rate: units.Gbps, Delay: sim.Millisecond, Qdisc: Qdisc{Limit: QueueLimit{Packets: 1000}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := mutate(t, func(m map[string]any) {
				l := at(m, "links", "access")
				for k := range l {
					if k != "id" && k != "a" && k != "b" {
						delete(l, k)
					}
				}
				for k, v := range tc.link {
					l[k] = v
				}
			})
			l := mustParse(t, raw).Links[0]
			if d := cmp.Diff(tc.ab, l.AB); d != "" {
				t.Errorf("links[access].ab mismatch (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ba, l.BA); d != "" {
				t.Errorf("links[access].ba mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseApps(t *testing.T) {
	cases := []struct {
		name string
		app  map[string]any
		want AppPattern
	}{
		{"greedy", map[string]any{"kind": "greedy"}, AppPattern{Kind: Greedy}},
		{"rate", map[string]any{"kind": "rate", "rate": "10Mbps"}, AppPattern{Kind: AppRate, Rate: 10 * units.Mbps}},
		{"onoff", map[string]any{"kind": "onoff", "on": "1s", "off": "500ms"}, AppPattern{Kind: OnOff, On: sim.Second, Off: 500 * sim.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, mutate(t, func(m map[string]any) { at(m, "flows", "f0")["app"] = tc.app }))
			if d := cmp.Diff(tc.want, s.Flows[0].App); d != "" {
				t.Errorf("flows[f0].app mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// TestParsePacing: pacing takes true, false or "auto", defaults to "auto",
// and the canonical form keeps each (so "auto" and true hash differently).
func TestParsePacing(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want Pacing
	}{
		{"absent", nil, PacingAuto},
		{"auto", "auto", PacingAuto},
		{"true", true, PacingOn},
		{"false", false, PacingOff},
	}
	hashes := map[string]Pacing{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := mutate(t, func(m map[string]any) {
				if tc.v != nil {
					at(m, "flows", "f0", "tcp")["pacing"] = tc.v
				}
			})
			s := mustParse(t, raw)
			if got := s.Flows[0].TCP.Pacing; got != tc.want {
				t.Errorf("flows[f0].tcp.pacing = %d, want %d", got, tc.want)
			}
			h, err := Hash(raw)
			if err != nil {
				t.Fatalf("Hash: %v", err)
			}
			if p, seen := hashes[h]; seen && p != tc.want {
				t.Errorf("pacing %d and %d hash alike", p, tc.want)
			}
			hashes[h] = tc.want
		})
	}
}
