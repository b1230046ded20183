package emulate

import (
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
)

// TestSysctlConflicts: flows with an end on one host must agree on the
// tcp options that are namespace sysctls (Linux has no per-socket switch
// for them). A conflict is refused before anything is set up, naming the
// option, both flows and the node; options that are per-socket (cc,
// pacing) may differ.
func TestSysctlConflicts(t *testing.T) {
	prep, err := engine.Prepare([]byte(cleanPath), []string{`flows=[
		{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"ecn":true,"sndbuf":"8MiB"}},
		{"id":"f1","src":"h1","dst":"h2","cc":"bbr","tcp":{"pacing":true}}]`})
	if err != nil {
		t.Fatal(err)
	}
	got := sysctlConflicts(prep.Scenario)
	want := []string{
		`flows[f1].tcp.ecn: differs from flows[f0]'s at node h1 (net.ipv4.tcp_ecn "2" against "1")`,
		`flows[f1].tcp.sndbuf: differs from flows[f0]'s at node h1 (net.ipv4.tcp_wmem "4096 16384 4000000" against "4096 16384 8388608")`,
		`flows[f1].tcp.ecn: differs from flows[f0]'s at node h2`,
		`flows[f1].tcp.sndbuf: differs from flows[f0]'s at node h2`,
	}
	if len(got) != len(want) {
		t.Fatalf("conflicts = %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("conflict %d = %q, want it to start %q", i, got[i], w)
		}
	}
	prep, err = engine.Prepare([]byte(cleanPath), []string{`flows=[
		{"id":"f0","src":"h1","dst":"h2","cc":"cubic"},
		{"id":"f1","src":"h1","dst":"h2","cc":"bbr","tcp":{"pacing":true}}]`})
	if err != nil {
		t.Fatal(err)
	}
	if got := sysctlConflicts(prep.Scenario); got != nil {
		t.Errorf("conflicts = %q for flows that differ only in per-socket options, want none", got)
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
		if got := offeredRate(prep.Scenario); got != c.want {
			t.Errorf("%s: offered %d bps, want %d", c.name, got, c.want)
		}
	}
}
