package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A ping probe beside the pump: the pump's 120 Mbps into the 100 Mbps
// bottleneck keeps its 1-BDP FIFO (L = 500,000 B) full: a 1500-byte pump
// packet is taken whenever at most L - 1500 bytes are queued, and arrives
// every 100 µs, in which the queue drains 1250 bytes. So every probe, sent
// after the queue has filled, waits behind between L - 1500 - 1250 - 84
// and L - 84 bytes, plus at most the residual packet in service. Its
// RTT is the base RTT (2 × (1 + 19) ms) plus the 84-byte request's and
// reply's serialisation at 1 Gbps and 100 Mbps, plus that wait.
func TestPingRTTUnderPump(t *testing.T) {
	raw := mustBuiltin(t, "pump")
	r, sum := runJSON(t, raw, `flows=[{"id":"f0","src":"h1","dst":"h2","cc":"pump","rate":"120Mbps"},`+
		`{"id":"p","src":"h1","dst":"h2","cc":"ping","interval":"100ms","start":"2s"}]`)
	const bneck, access = 100 * units.Mbps, units.Gbps
	const limit = 500_000
	ser := 2 * (units.TxTime(84, access) + units.TxTime(84, bneck))
	base := 40*sim.Millisecond + ser
	lo := base + units.TxTime(limit-1500-1250-84, bneck)
	hi := base + units.TxTime(limit-84, bneck) + units.TxTime(1500, bneck)
	p := r.Flows[1].(pingFlow).p
	if p.Sent != 81 || p.Received < 76 {
		t.Fatalf("probes sent, received = %d, %d; want 81 sent (2 s to 10 s inclusive, every 100 ms), at most 5 not answered (the last is still in flight)", p.Sent, p.Received)
	}
	for i, rtt := range p.RTTs {
		if rtt < lo || rtt > hi {
			t.Errorf("probe %d RTT = %v, want in [%v, %v]", i, rtt, lo, hi)
		}
	}
	f := sum.Flows[1]
	if f.Kind != "ping" || f.RTTP50Ps == nil || *f.RTTP50Ps < int64(lo) || *f.RTTP50Ps > int64(hi) {
		t.Errorf("summary = %+v, want kind ping with rtt_p50 in [%v, %v]", f, lo, hi)
	}
}

// On an idle path a probe's RTT is the base RTT plus its serialisations,
// exactly.
func TestPingRTTIdle(t *testing.T) {
	raw := mustBuiltin(t, "pump")
	r, _ := runJSON(t, raw, `flows=[{"id":"p","src":"h1","dst":"h2","cc":"ping","packet_size":"100B"}]`)
	want := 40*sim.Millisecond + 2*(units.TxTime(100, units.Gbps)+units.TxTime(100, 100*units.Mbps))
	p := r.Flows[0].(pingFlow).p
	if p.Received != 50 {
		t.Fatalf("received %d replies, want 50 (10 s at the default 200 ms)", p.Received)
	}
	for i, rtt := range p.RTTs {
		if rtt != want {
			t.Fatalf("probe %d RTT = %v, want %v", i, rtt, want)
		}
	}
}

// Over a bottleneck that sends every packet twice each way, every request
// reaches the echo twice and each of its two replies is copied again, so
// four replies of each probe arrive, all at the idle path's RTT or one
// 100-byte serialisation at 100 Mbps (8 µs) per copy behind it; the probe
// counts one, as ping reports the rest as DUP!.
func TestPingCountsDuplicateRepliesOnce(t *testing.T) {
	raw := mustBuiltin(t, "pump")
	r, sum := runJSON(t, raw, `flows=[{"id":"p","src":"h1","dst":"h2","cc":"ping","packet_size":"100B"}]`,
		"links.bottleneck.duplicate=1")
	idle := 40*sim.Millisecond + 2*(units.TxTime(100, units.Gbps)+units.TxTime(100, 100*units.Mbps))
	p := r.Flows[0].(pingFlow).p
	if p.Sent != 51 || p.Received != 50 || len(p.RTTs) != 50 {
		t.Fatalf("sent %d, received %d, %d RTTs; want 51 sent (0 to 10 s), 50 answered by 10 s", p.Sent, p.Received, len(p.RTTs))
	}
	for i, rtt := range p.RTTs {
		if rtt != idle {
			t.Fatalf("probe %d RTT = %v, want the first copy's %v", i, rtt, idle)
		}
	}
	var dup uint64
	for _, q := range sum.Queues {
		if q.Link == "bottleneck" {
			dup += q.Duplicated
		}
	}
	if dup != 150 {
		t.Errorf("bottleneck copies = %d, want 150: 50 requests and 100 replies", dup)
	}
}
