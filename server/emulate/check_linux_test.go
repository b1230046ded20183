package emulate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
)

// TestNodeSysctls: flows with an end on one host must agree on the tcp
// options that are namespace sysctls where they matter at that end (Linux
// has no per-socket switch for them): a sender's ECN or send buffer, a
// receiver's receive buffer, both ends' SACK. A conflict is refused before
// anything is set up, naming the option, both flows and the node; flows
// that differ where it does not matter, or in per-socket options (cc,
// pacing), are run, each host with the values its own ends need.
func TestNodeSysctls(t *testing.T) {
	const hosts = `{"name": "three", "runtime": {"seed": 1, "duration": "1s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h3", "kind": "endpoint"}, {"id": "r1", "kind": "router"},
            {"id": "h2", "kind": "endpoint"}],
  "links": [{"id": "a1", "a": "h1", "b": "r1", "rate": "50Mbps", "delay": "1ms"},
            {"id": "a3", "a": "h3", "b": "r1", "rate": "50Mbps", "delay": "1ms"},
            {"id": "a2", "a": "r1", "b": "h2", "rate": "50Mbps", "delay": "1ms"}],
  "flows": [{"id": "x", "src": "h1", "dst": "h2", "cc": "cubic"}]}`
	value := func(vals map[string][]nsSysctl, node, key string) string {
		for _, v := range vals[node] {
			if v.key == key {
				return v.value
			}
		}
		return "?"
	}
	for _, c := range []struct {
		name  string
		flows string
		want  []string // error prefixes
		check func(t *testing.T, vals map[string][]nsSysctl)
	}{
		{"two senders on one host", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"ecn":true,"sndbuf":"8MiB"}},
			{"id":"f1","src":"h1","dst":"h2","cc":"bbr","tcp":{"pacing":true}}]`, []string{
			`flows[f1].tcp.ecn: differs from flows[f0]'s at node h1, where f1 sends and f0 sends (net.ipv4.tcp_ecn "2" against "1")`,
			`flows[f1].tcp.sndbuf: differs from flows[f0]'s at node h1, where f1 sends and f0 sends (net.ipv4.tcp_wmem "4096 16384 4194304" against "4096 16384 8388608")`,
		}, nil},
		{"ECN and not into one receiver", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"ecn":true}},
			{"id":"f1","src":"h3","dst":"h2","cc":"cubic"}]`, nil, func(t *testing.T, vals map[string][]nsSysctl) {
			if e1, e3, e2 := value(vals, "h1", "net.ipv4.tcp_ecn"), value(vals, "h3", "net.ipv4.tcp_ecn"), value(vals, "h2", "net.ipv4.tcp_ecn"); e1 != "1" || e3 != "2" || e2 != "2" {
				t.Errorf("tcp_ecn h1 %s, h3 %s, h2 %s; want 1 (asks), 2, 2 (accepts)", e1, e3, e2)
			}
		}},
		{"a host sends one and receives the other", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"ecn":true,"rcvbuf_max":"16MiB"}},
			{"id":"f1","src":"h2","dst":"h1","cc":"cubic"}]`, nil, func(t *testing.T, vals map[string][]nsSysctl) {
			if r1, r2 := value(vals, "h1", "net.ipv4.tcp_rmem"), value(vals, "h2", "net.ipv4.tcp_rmem"); r1 != "4096 131072 33554432" || r2 != "4096 131072 16777216" {
				t.Errorf("tcp_rmem h1 %q, h2 %q; want f1's receiver the default, f0's 16 MiB", r1, r2)
			}
		}},
		{"offsets or none", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"timestamps":2}},
			{"id":"f1","src":"h2","dst":"h3","cc":"cubic"}]`, nil, func(t *testing.T, vals map[string][]nsSysctl) {
			if t1, t2, t3 := value(vals, "h1", "net.ipv4.tcp_timestamps"), value(vals, "h2", "net.ipv4.tcp_timestamps"), value(vals, "h3", "net.ipv4.tcp_timestamps"); t1 != "1" || t2 != "2" || t3 != "1" {
				t.Errorf("tcp_timestamps h1 %s, h2 %s, h3 %s; want 1, 2 (f0's receiver), 1", t1, t2, t3)
			}
		}},
		{"timestamps into one receiver", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"timestamps":2}},
			{"id":"f1","src":"h3","dst":"h2","cc":"cubic"}]`, []string{
			`flows[f1].tcp.timestamps: differs from flows[f0]'s at node h2, where f1 receives and f0 receives (net.ipv4.tcp_timestamps "1" against "2")`,
		}, nil},
		{"receive buffers into one receiver", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"rcvbuf_max":"16MiB"}},
			{"id":"f1","src":"h3","dst":"h2","cc":"cubic","tcp":{"sack":false}}]`, []string{
			`flows[f1].tcp.sack: differs from flows[f0]'s at node h2, where f1 receives and f0 receives (net.ipv4.tcp_sack "0" against "1")`,
			`flows[f1].tcp.rcvbuf_init/rcvbuf_max: differs from flows[f0]'s at node h2, where f1 receives and f0 receives`,
		}, nil},
	} {
		prep, err := engine.Prepare([]byte(hosts), []string{"flows=" + c.flows})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		vals, got := nodeSysctls(prep.Scenario.Flows)
		if len(got) != len(c.want) {
			t.Errorf("%s: conflicts = %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: conflict %d = %q, want it to start %q", c.name, i, got[i], w)
			}
		}
		if c.check != nil {
			c.check(t, vals)
		}
	}
}

// TestOfferedRate: what the flows can push through the relay, by the
// slowest direction on each path: its rate when a flow there is greedy,
// else what its rate applications write, with the 52 B of headers per
// 1448 B segment (100 Mbps of payload is 103.59 Mbps on the wire).
func TestOfferedRate(t *testing.T) {
	for _, c := range []struct {
		name  string
		flows string
		want  int64
	}{
		{"one greedy", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic"}]`, 10e9},
		{"two greedy, one bottleneck", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic"},{"id":"f1","src":"h1","dst":"h2","cc":"bbr"}]`, 10e9},
		{"a rate application", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"rate","rate":"100Mbps"}}]`, 100_000_000 * 1500 / 1448},
		{"a rate application and a ping", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"rate","rate":"100Mbps"}},
			{"id":"p","src":"h1","dst":"h2","cc":"ping","interval":"10ms"}]`, 100_000_000 * 1500 / 1448},
		{"rate beside greedy", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"rate","rate":"100Mbps"}},
			{"id":"f1","src":"h1","dst":"h2","cc":"cubic"}]`, 10e9},
		{"both ways", `[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"rate","rate":"100Mbps"}},
			{"id":"f1","src":"h2","dst":"h1","cc":"cubic","app":{"kind":"rate","rate":"50Mbps"}}]`, 100_000_000*1500/1448 + 50_000_000*1500/1448},
	} {
		prep, err := engine.Prepare([]byte(cleanPath), []string{"links.bottleneck.rate=10Gbps", "flows=" + c.flows})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pl, err := planFlows(prep.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if got := offeredRate(pl); got != c.want {
			t.Errorf("%s: offered %d bps, want %d", c.name, got, c.want)
		}
	}
}

// TestProxyPlan: a flow through a split-TCP proxy runs on the kernel as
// the simulator runs it, as two connections: leg 0 to the proxy in the
// flow's place, with the flow's application, and leg 1 from the proxy
// after the scenario's flows, each with its leg's CC and options. The
// proxy's namespace takes the sysctls of leg 0's receiving end and leg 1's
// sending end, and legs that disagree on one both ends share (SACK) are
// refused, naming the node. The relay carries the flow's bytes twice, each
// time at the slower leg's rate.
func TestProxyPlan(t *testing.T) {
	raw, err := config.Builtin("p-we-p")
	if err != nil {
		t.Fatal(err)
	}
	legs := `flows.f0.legs=[{"cc":"cubic","tcp":{"rcvbuf_max":"16MiB"}},{"cc":"bbr","tcp":{"sndbuf":"8MiB"}}]`
	prep, err := engine.Prepare(raw, []string{legs, "flows.f0.size=5MB"})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := planFlows(prep.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.flows) != 2 || pl.leg1[0] != 1 || pl.buffer[0] != 4_000_000 {
		t.Fatalf("plan: %d flows, leg1 %v, buffer %v; want f0.0, f0.1 and pep's 4 MB", len(pl.flows), pl.leg1, pl.buffer)
	}
	l0, l1 := pl.flows[0], pl.flows[1]
	if l0.ID != "f0.0" || l0.Src != "server" || l0.Dst != "pep" || l0.CC != "cubic" || l0.Size != 5_000_000 ||
		l1.ID != "f0.1" || l1.Src != "pep" || l1.Dst != "client" || l1.CC != "bbr" || l1.App.Kind != config.Greedy {
		t.Errorf("legs %+v / %+v", l0, l1)
	}
	vals, conflicts := nodeSysctls(pl.flows)
	if len(conflicts) != 0 {
		t.Errorf("conflicts %q", conflicts)
	}
	get := func(node, key string) string {
		for _, v := range vals[node] {
			if v.key == key {
				return v.value
			}
		}
		return "?"
	}
	if r, w := get("pep", "net.ipv4.tcp_rmem"), get("pep", "net.ipv4.tcp_wmem"); r != "4096 131072 16777216" || w != "4096 16384 8388608" {
		t.Errorf("pep's tcp_rmem %q (leg 0 receives: want its 16 MiB), tcp_wmem %q (leg 1 sends: want its 8 MiB)", r, w)
	}
	if got, want := offeredRate(pl), int64(2*50e6); got != want {
		t.Errorf("offered %d bps, want %d: leg 1 runs at most at leg 0's 50 Mbps", got, want)
	}
	prep, err = engine.Prepare(raw, []string{`flows.f0.legs=[{"cc":"cubic","tcp":{"sack":false}},{"cc":"cubic"}]`})
	if err != nil {
		t.Fatal(err)
	}
	pl, err = planFlows(prep.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if _, conflicts := nodeSysctls(pl.flows); len(conflicts) != 1 || !strings.HasPrefix(conflicts[0], "flows[f0.1].tcp.sack: differs from flows[f0.0]'s at node pep") {
		t.Errorf("legs that differ in SACK at the proxy: conflicts %q", conflicts)
	}
}

// TestHZNote: a run names each flow whose tcp.hz is not the running
// kernel's CONFIG_HZ, and none whose is; where the kernel's configuration
// cannot be read, it names none. kernelHZ reads this host's configuration
// and takes no other (notes calls it, with no seam to inject a value), so
// a host can test only the case it is in: the other subtest skips, saying
// why.
func TestHZNote(t *testing.T) {
	khz := kernelHZ()
	t.Logf("this kernel: CONFIG_HZ=%d (0: unread)", khz)
	// hzNotes returns the tcp.hz notes on cleanPath's flow f0 at tcp.hz=hz
	// (0: the scenario's default).
	hzNotes := func(t *testing.T, hz int) []string {
		t.Helper()
		var set []string
		if hz != 0 {
			set = append(set, "flows.f0.tcp.hz="+strconv.Itoa(hz))
		}
		prep, err := engine.Prepare([]byte(cleanPath), set)
		if err != nil {
			t.Fatalf("Prepare(cleanPath, %q) error %v", set, err)
		}
		var got []string
		for _, n := range notes(prep.Scenario.Flows) {
			if strings.HasPrefix(n, "flows[f0].tcp.hz:") {
				got = append(got, n)
			}
		}
		return got
	}
	// The CONFIG_HZ values the simulator runs (engine/config).
	hzs := []int{100, 250, 300, 1000}
	t.Run("configuration read", func(t *testing.T) {
		if khz == 0 {
			t.Skip("SKIPPED: this host's CONFIG_HZ cannot be read (no /proc/config.gz, no /boot/config-<release>), and kernelHZ takes no other value: the note for a tcp.hz that is not the kernel's goes untested here")
		}
		if !slices.Contains(hzs, khz) {
			t.Logf("CONFIG_HZ=%d is not a tcp.hz the simulator runs: only the noted case is tested", khz)
		}
		for _, hz := range hzs {
			got := hzNotes(t, hz)
			if hz == khz {
				if len(got) != 0 {
					t.Errorf("tcp.hz %d on a kernel at %d: notes %q, want none", hz, khz, got)
				}
				continue
			}
			want := fmt.Sprintf("flows[f0].tcp.hz: %d, but this kernel runs at CONFIG_HZ=%d", hz, khz)
			if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], fmt.Sprintf("set tcp.hz=%d to simulate it", khz)) {
				t.Errorf("tcp.hz %d on a kernel at %d: notes %q, want one starting %q and naming tcp.hz=%d", hz, khz, got, want, khz)
			}
		}
	})
	t.Run("configuration unread", func(t *testing.T) {
		if khz != 0 {
			t.Skipf("SKIPPED: this host's CONFIG_HZ=%d is readable, and kernelHZ reads no other: that no tcp.hz is noted where it is unread goes untested here", khz)
		}
		for _, hz := range append([]int{0}, hzs...) {
			if got := hzNotes(t, hz); len(got) != 0 {
				t.Errorf("tcp.hz %d on a kernel whose CONFIG_HZ is unread: notes %q, want none", hz, got)
			}
		}
	})
}

// A kernel's clock cannot be set to zero: emulate says that an aligned
// runtime.kernel_clock is not applied, and says nothing of the default.
func TestClockNote(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want int
	}{{nil, 0}, {[]string{"runtime.kernel_clock=random"}, 0}, {[]string{"runtime.kernel_clock=aligned"}, 1}} {
		prep, err := engine.Prepare([]byte(cleanPath), tc.set)
		if err != nil {
			t.Fatalf("Prepare(cleanPath, %q) error %v", tc.set, err)
		}
		got := clockNotes(prep.Scenario.Runtime)
		if len(got) != tc.want || tc.want == 1 && !strings.HasPrefix(got[0], "runtime.kernel_clock: aligned is not applied") {
			t.Errorf("%q: notes %q, want %d naming runtime.kernel_clock", tc.set, got, tc.want)
		}
	}
}
