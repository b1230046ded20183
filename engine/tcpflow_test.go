package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// linuxOpts are the TCP options of a default Linux host.
func linuxOpts() config.TCPOptions { return config.DefaultTCPOptions() }

// tcpScenario is h1 —access— r1 —bottleneck— h2 with one TCP flow f0.
func tcpScenario(ccName string, access, bn config.Direction, size units.Bytes, dur sim.Duration, opts config.TCPOptions) *config.Scenario {
	return &config.Scenario{
		Name:    "test-tcp",
		Runtime: config.Runtime{Seed: 1, Duration: dur},
		Nodes:   []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: access, BA: access},
			{ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn},
		},
		Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", Size: size, Params: &config.Params{CC: ccName, TCP: opts}}},
	}
}

func fifo(pkts int64) config.Qdisc {
	return config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: pkts}}
}

// Slow start from IW10 on a clean path (100 Mbps, 40 ms base RTT, a buffer
// that never fills): Linux Reno grows cwnd by the segments each ACK
// covers (tcp_slow_start), so the window doubles every RTT whatever the
// delayed-ACK ratio. Hand computation of the time from the first data byte
// to 10 MB delivered (6907 segments of 1448 B, 1500 B on the wire):
//
//   - rounds of 10, 20, 40, 80 and 160 segments (310 in all) take 5 RTTs
//     = 200 ms, each round's ACKs returning one RTT after it started;
//   - the sixth round's window (320) covers the BDP (100 Mbps · 40 ms /
//     1500 B = 333 packets), so from 200 ms the bottleneck stays busy:
//     the remaining 6597 segments take 6597 · 120 µs = 791.6 ms;
//   - the last one reaches the receiver one propagation delay (20 ms)
//     after it leaves the bottleneck.
//
// T ≈ 200 + 791.6 + 20 = 1011.6 ms; the test allows one RTT either way.
func TestSlowStartTimeTo10MB(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(100000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: fifo(100000)}
	r := run(t, tcpScenario("reno", access, bn, 10*units.MB, 10*sim.Second, linuxOpts()))
	f := r.Summary("").Flows[0]
	if f.T10MBPs == nil {
		t.Fatalf("10 MB not delivered")
	}
	want := sim.Duration(1011600 * sim.Microsecond)
	if got := sim.Duration(*f.T10MBPs); got < want-40*sim.Millisecond || got > want+40*sim.Millisecond {
		t.Errorf("t_10MB = %v, want %v ± 40 ms", got, want)
	}
	if *f.Retransmits != 0 {
		t.Errorf("retransmits = %d on a clean path, want 0", *f.Retransmits)
	}
	if f.BytesDelivered != 10*int64(units.MB) {
		t.Errorf("bytes_delivered = %d, want %d", f.BytesDelivered, 10*units.MB)
	}
}

// A sampled trace keeps the row of a sized flow's last byte, whenever it
// arrives between samples (a plot of delivered bytes ends at the flow's
// size, and compare reads its milestones, t_10MB of a 10 MB flow, off these
// rows), and the sender's row of the ACK that completes it. The flow is
// TestSlowStartTimeTo10MB's; a 37 ms interval does not divide its
// completion time.
func TestSampledTraceKeepsLastByte(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(100000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: fifo(100000)}
	scn := tcpScenario("reno", access, bn, 10*units.MB, 3*sim.Second, linuxOpts())
	scn.Trace = config.Trace{Detail: config.TraceSampled, Interval: 37 * sim.Millisecond}
	r := run(t, scn)
	d := &r.Trace.Delivery
	if d.Len() == 0 {
		t.Fatal("no delivery rows")
	}
	last := d.Len() - 1
	if d.BytesDelivered[last] != 10*int64(units.MB) {
		t.Errorf("last row has %d bytes delivered, want the flow's %d", d.BytesDelivered[last], 10*units.MB)
	}
	if got, want := sim.Time(d.T[last]), r.Flows[0].(*tcpFlow).done; got != want {
		t.Errorf("last row at %v, want the last byte's arrival %v", got, want)
	}
	// The sender's rows end in the state it finishes in: everything acked.
	rows := r.Trace.FlowsT.Rows
	end := rows[len(rows)-1]
	if done := r.Flows[0].(*tcpFlow).snd.Stats.Done; end.T != done || end.InflightPkts != 0 || end.Delivered < 6907 {
		t.Errorf("last flows row at %v with %d in flight, %d delivered; want at the last ACK %v, 0 in flight, all 6907 segments",
			end.T, end.InflightPkts, end.Delivered, done)
	}
}

// A sized pump's delivery rows end at its size too: 100 packets of 1500 B
// at 120 Mbps into the pump scenario's 100 Mbps bottleneck, which its
// 1-BDP FIFO holds without loss; a 37 ms interval does not divide the
// instant the last one lands.
func TestSampledTraceKeepsPumpsLastByte(t *testing.T) {
	prep, err := Prepare(mustBuiltin(t, "pump"), []string{"flows.f0.size=150KB", "runtime.duration=1s",
		`trace={"detail":"sampled","interval":"37ms"}`})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, prep.Scenario)
	d := &r.Trace.Delivery
	p := r.Flows[0].(pumpFlow).p
	last := d.Len() - 1
	if p.Done == 0 || d.BytesDelivered[last] != 150_000 || sim.Time(d.T[last]) != p.Done {
		t.Errorf("last delivery row %d bytes at %v; want 150000 at the last byte's arrival %v", d.BytesDelivered[last], sim.Time(d.T[last]), p.Done)
	}
}

// A sized pump sends and delivers exactly its size when the size is not a
// whole number of packets: 4,895 B in 1,500 B packets is three full ones
// and a last one of 395 B (whole packets delivered 6,000 B of a 4,895 B
// flow).
func TestPumpSizeNotWholePackets(t *testing.T) {
	prep, err := Prepare(mustBuiltin(t, "pump"), []string{"flows.f0.size=4895B", "runtime.duration=1s"})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, prep.Scenario)
	p := r.Flows[0].(pumpFlow).p
	if p.BytesSent != 4895 || p.BytesDelivered != 4895 || p.Sent != 4 || p.Done == 0 {
		t.Errorf("sent %d B in %d packets, delivered %d B, done at %v; want 4895 B in 4 packets, all delivered",
			p.BytesSent, p.Sent, p.BytesDelivered, p.Done)
	}
}

// Reno under random loss follows the Mathis et al. model
//
//	goodput = MSS/RTT · sqrt(3/(2p))
//
// (b = 1 packet acked per ACK in the derivation's window growth of 1/b per
// RTT). Linux Reno counts acked packets in congestion avoidance
// (tcp_cong_avoid_ai with acked = newly delivered), so cwnd grows by one per
// RTT even with delayed ACKs, and the b = 1 constant applies, not the
// delayed-ACK one sqrt(3/(4p)). The path does not bind: 10 Gbps links,
// 50 ms RTT, a buffer that never fills, loss only on the data direction.
func TestRenoMathis(t *testing.T) {
	for _, tc := range []struct {
		p   float64
		dur sim.Duration
	}{
		{0.001, 300 * sim.Second},
		{0.005, 120 * sim.Second},
		{0.01, 120 * sim.Second},
		{0.02, 120 * sim.Second},
	} {
		t.Run(fmt.Sprintf("p=%v", tc.p), func(t *testing.T) {
			access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(100000)}
			bn := config.Direction{Rate: 10 * units.Gbps, Delay: 24 * sim.Millisecond, Qdisc: fifo(100000)}
			scn := tcpScenario("reno", access, bn, 0, tc.dur, linuxOpts())
			scn.Links[1].AB.Loss = config.Loss{Kind: config.Bernoulli, P: tc.p}
			r := run(t, scn)
			f := r.Summary("").Flows[0]
			want := 1448 * 8 / 0.050 * math.Sqrt(3/(2*tc.p))
			got := float64(*f.GoodputBps)
			t.Logf("goodput = %.4g bps, Mathis %.4g, ratio %.3f", got, want, got/want)
			if got < 0.8*want || got > 1.2*want {
				t.Errorf("goodput = %.3g bps, want Mathis %.3g ± 20%%", got, want)
			}
		})
	}
}

// A TCP flow's summary says what it is, and flow actions take effect at
// once: a cwnd action sets snd_cwnd, a pacing_rate action overrides the
// pacing rate until a 0 rate hands it back to the sender, which sets it on
// each ACK as tcp_update_pacing_rate does, in bytes per second:
//
//	mss_cache · (USEC_PER_SEC/100 << 3) · ratio · max(cwnd, packets_out) / srtt_us
//
// with srtt_us in µs scaled by 8, ratio tcp_pacing_ss_ratio (200) while
// cwnd < ssthresh/2 and tcp_pacing_ca_ratio (120) after. bytes_sent counts
// retransmissions on top of a first sending of every delivered byte.
func TestTCPSummaryAndActions(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(1000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
	r, err := New(tcpScenario("cubic", access, bn, 0, 10*sim.Second, linuxOpts()), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunUntil(sim.Time(2 * sim.Second))
	f := r.Flows[0].(*tcpFlow)
	cwnd := uint32(7)
	if err := r.Act(Action{Flow: "f0", CwndPkts: &cwnd}); err != nil {
		t.Fatalf("Act(cwnd): %v", err)
	}
	if got := f.snd.Cwnd(); got != 7 {
		t.Errorf("cwnd after action = %d, want 7", got)
	}
	rate := 5 * units.Mbps
	if err := r.Act(Action{Flow: "f0", PacingRate: &rate}); err != nil {
		t.Fatalf("Act(pacing_rate): %v", err)
	}
	r.RunUntil(sim.Time(3 * sim.Second))
	if got := f.snd.PacingRate(); got != rate {
		t.Errorf("pacing rate under override = %v, want %v", got, rate)
	}
	zero := units.BitRate(0)
	if err := r.Act(Action{Flow: "f0", PacingRate: &zero}); err != nil {
		t.Fatalf("Act(pacing_rate 0): %v", err)
	}
	r.RunUntil(sim.Time(4 * sim.Second))
	// At 4 s the flow is in congestion avoidance (cwnd 649, ssthresh 490),
	// and Open: nothing is SACKed or lost, so packets_out is what is in
	// flight, at most cwnd, and was no more at the last ACK (only sends
	// since), which set the rate from this cwnd and srtt.
	snap := f.snd.Snapshot()
	cwnd, ssthresh := f.snd.Cwnd(), f.snd.SSThresh()
	if f.snd.CAState() != cc.CAOpen || snap.InflightPkts > cwnd || cwnd < ssthresh/2 {
		t.Fatalf("at 4 s: CA state %v, %d in flight, cwnd %d, ssthresh %d; want Open, at most cwnd in flight, cwnd ≥ ssthresh/2",
			f.snd.CAState(), snap.InflightPkts, cwnd, ssthresh)
	}
	// SRTT drops srtt_us's three fractional bits: the rate is the kernel's
	// for one of the eight values they leave.
	const mssCache, caRatio = 1448, 120 // 1500 − 40 − 12 (timestamps); tcp_pacing_ca_ratio
	srttUs := uint64(f.snd.SRTT() / sim.Microsecond)
	got, match := f.snd.PacingRate(), false
	for frac := range uint64(8) {
		bytesPerSec := mssCache * (1_000_000 / 100 << 3) * caRatio * uint64(cwnd) / (srttUs<<3 + frac)
		match = match || got == units.BitRate(8*bytesPerSec)
	}
	if !match {
		t.Errorf("pacing rate after clearing = %v, want 120%% of %d × 1448 B / %d µs = %.0f bps (integer, srtt_us scaled by 8)",
			got, cwnd, srttUs, 1.2*8*1448*float64(cwnd)/float64(srttUs)*1e6)
	}
	r.RunToEnd()
	fs := r.Summary("").Flows[0]
	if fs.Kind != "tcp" || fs.CC != "cubic" {
		t.Errorf("kind, cc = %q, %q; want tcp, cubic", fs.Kind, fs.CC)
	}
	if fs.GoodputBps == nil || fs.RTTP50Ps == nil || fs.Retransmits == nil {
		t.Fatalf("goodput, rtt_p50, retransmits missing: %+v", fs)
	}
	if *fs.RTTP50Ps < int64(40*sim.Millisecond) || *fs.RTTP50Ps > int64(80*sim.Millisecond) {
		t.Errorf("rtt_p50 = %v, want between the base RTT (40 ms) and base + a full BDP buffer (80 ms)", sim.Duration(*fs.RTTP50Ps))
	}
	if len(fs.CCFinal) == 0 {
		t.Errorf("cc_final is empty; CUBIC defines signals")
	}
	// A bulk flow sends whole segments, so each retransmission adds 1448 B.
	if *fs.Retransmits == 0 || fs.BytesSent < fs.BytesDelivered+1448*(*fs.Retransmits) {
		t.Errorf("bytes_sent %d, bytes_delivered %d, %d retransmits; want bytes_sent at least delivered + 1448 B per retransmit, some retransmits",
			fs.BytesSent, fs.BytesDelivered, *fs.Retransmits)
	}
}

// Runs are deterministic: the same scenario and seed give the same event
// digest, with random loss and a CC that draws on its stream. With the
// trace at change detail the sender records its state, events and the CC's
// signals.
func TestTCPDeterministicAndTraced(t *testing.T) {
	build := func(detail config.TraceDetail) *Run {
		access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(1000)}
		bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO(),
			Loss: config.Loss{Kind: config.Bernoulli, P: 0.001}}
		scn := tcpScenario("cubic", access, bn, 0, 5*sim.Second, linuxOpts())
		scn.Trace.Detail = detail
		r, err := New(scn, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		r.RunUntil(r.Horizon())
		return r
	}
	a, b := build(config.TraceSummary), build(config.TraceChange)
	if a.Sim.Digest() != b.Sim.Digest() {
		t.Errorf("digests differ: %x vs %x (trace detail must not change the run)", a.Sim.Digest(), b.Sim.Digest())
	}
	if n := a.Trace.FlowsT.Len() + a.Trace.EventT.Len() + a.Trace.SignalT.Len(); n != 0 {
		t.Errorf("summary detail recorded %d rows, want 0", n)
	}
	tr := b.Trace
	if tr.FlowsT.Len() == 0 || tr.EventT.Len() == 0 || tr.SignalT.Len() == 0 {
		t.Errorf("change detail recorded flows, events, signals = %d, %d, %d rows; want all > 0",
			tr.FlowsT.Len(), tr.EventT.Len(), tr.SignalT.Len())
	}
	kinds := map[trace.EventKind]bool{}
	for _, k := range tr.EventT.Kind {
		kinds[k] = true
	}
	for _, k := range []trace.EventKind{trace.EvSend, trace.EvAck, trace.EvSack, trace.EvRetransmit, trace.EvRecoveryEnter, trace.EvLoss} {
		if !kinds[k] {
			t.Errorf("no %s event recorded", trace.EventKindNames[k])
		}
	}
}

// Classic ECN end to end: CoDel marks ECT packets instead of dropping them
// (RFC 8289 with ECN), the receiver echoes ECE, the sender reduces in CWR
// once per window and sends CWR. Slow start overshoots the 1000-packet
// buffer before CoDel's first 100 ms interval ends, so the start has drops;
// after it a Reno flow loses and retransmits nothing while the queue stays
// near CoDel's 5 ms target.
func TestTCPClassicECNThroughCoDel(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(1000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond,
		Qdisc: config.Qdisc{Kind: config.CoDel, Limit: config.QueueLimit{Packets: 1000},
			Target: 5 * sim.Millisecond, Interval: 100 * sim.Millisecond, ECN: true}}
	opts := linuxOpts()
	opts.ECN = true
	r, err := New(tcpScenario("reno", access, bn, 0, 20*sim.Second, opts), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunUntil(sim.Time(5 * sim.Second))
	d, _ := r.Net.Dir("bottleneck", "ab")
	snd := r.Flows[0].(*tcpFlow).snd
	drops0, marks0, retx0, cwr0 := d.Stats.Drops, d.Stats.Marks, snd.Stats.Retransmits, snd.Stats.Recoveries
	r.RunToEnd()
	f := r.Summary("").Flows[0]
	drops, marks, retx := d.Stats.Drops-drops0, d.Stats.Marks-marks0, snd.Stats.Retransmits-retx0
	if marks == 0 || drops != 0 || retx != 0 || snd.Stats.Recoveries != cwr0 {
		t.Errorf("after 5 s: marks, drops, retransmits, recoveries = %d, %d, %d, %d; want > 0, 0, 0, 0",
			marks, drops, retx, snd.Stats.Recoveries-cwr0)
	}
	if p50 := sim.Duration(*f.RTTP50Ps); p50 > 40*sim.Millisecond+15*sim.Millisecond {
		t.Errorf("rtt p50 = %v, want within 15 ms of the 40 ms base (CoDel's 5 ms target)", p50)
	}
}

// The cong_control path: BBR sets cwnd and the pacing rate itself from the
// sender's rate samples. On a 100 Mbps, 40 ms path with a 1-BDP FIFO it fills
// the pipe (≥ 90% of the 96.5 Mbps payload rate over 30 s, PROBE_RTT and
// startup included) while keeping the median RTT within 10% of the base
// RTT — unlike loss-based CUBIC, which fills the buffer (median RTT well
// above the base).
func TestTCPCongControlPath(t *testing.T) {
	payload := 100e6 * 1448 / 1500.0
	for _, tc := range []struct {
		cc        string
		maxP50    sim.Duration
		minP50    sim.Duration
		minFilled float64
	}{
		{"bbr", 44 * sim.Millisecond, 40 * sim.Millisecond, 0.9},
		{"bbr3", 44 * sim.Millisecond, 40 * sim.Millisecond, 0.9},
		{"cubic", 80 * sim.Millisecond, 50 * sim.Millisecond, 0.95},
	} {
		t.Run(tc.cc, func(t *testing.T) {
			access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(10000)}
			bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
			r := run(t, tcpScenario(tc.cc, access, bn, 0, 30*sim.Second, linuxOpts()))
			f := r.Summary("").Flows[0]
			if got := float64(*f.GoodputBps); got < tc.minFilled*payload {
				t.Errorf("goodput = %.4g bps, want ≥ %.0f%% of %.4g", got, 100*tc.minFilled, payload)
			}
			if p50 := sim.Duration(*f.RTTP50Ps); p50 < tc.minP50 || p50 > tc.maxP50 {
				t.Errorf("rtt p50 = %v, want in [%v, %v]", p50, tc.minP50, tc.maxP50)
			}
		})
	}
}

// A queue_limit action below one full-size packet of a flow crossing the
// direction is refused, as the same limit in the scenario is; one of
// exactly a packet (1,448 B of payload and 52 B of headers) is taken, and
// the ACK direction may be smaller.
func TestQueueLimitActionBelowOnePacket(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(1000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
	r, err := New(tcpScenario("cubic", access, bn, 0, sim.Second, linuxOpts()), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	limit := func(dir string, b units.Bytes) error {
		return r.Act(Action{Link: "bottleneck", Dir: dir, QueueLimit: &config.QueueLimit{Bytes: b}})
	}
	want := "engine: action.queue_limit: 1499 B is less than one 1500 B packet of flow f0"
	if err := limit("ab", 1499); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("1499 B: err = %v, want %q…", err, want)
	}
	if err := limit("ab", 1500); err != nil {
		t.Errorf("1500 B: %v", err)
	}
	if err := limit("ba", 100); err != nil {
		t.Errorf("100 B on the ACK direction: %v", err)
	}
}

// The summary's queue rows give the limits as they stand: p-rtr-p's 1BDP
// resolved to 100 Mbps × 40 ms = 500,000 B, the access link's default 1000
// packets, and after a queue_limit action the new limit in its own unit.
func TestSummaryQueueLimits(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "runtime.duration=200ms")
	r.RunUntil(sim.Time(100 * sim.Millisecond))
	limits := func() map[string][2]int64 {
		m := map[string][2]int64{}
		for _, q := range r.Summary("").Queues {
			m[q.Link+"/"+q.Dir] = [2]int64{q.LimitBytes, q.LimitPackets}
		}
		return m
	}
	if got := limits(); got["bottleneck/ab"] != [2]int64{500_000, 0} || got["access/ab"] != [2]int64{0, 1000} {
		t.Errorf("limits %v, want bottleneck/ab 500,000 B and access/ab 1000 packets", got)
	}
	if err := r.Act(Action{Link: "bottleneck", Dir: "ab", QueueLimit: &config.QueueLimit{Packets: 50}}); err != nil {
		t.Fatal(err)
	}
	if got := limits()["bottleneck/ab"]; got != [2]int64{0, 50} {
		t.Errorf("after queue_limit 50p: %v, want 50 packets and no byte limit", got)
	}
}

// A queue_limit action below what an fq_codel bottleneck holds sheds the
// excess at once (fq_codel_change), where a FIFO keeps it: CUBIC's slow
// start has filled p-rtr-p's bottleneck by 1 s (a CoDel target of 50 ms
// lets it queue); cut to 10 packets, the fq_codel queue holds 10 at that
// very instant.
func TestQueueLimitActionTrims(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "runtime.duration=2s", `links.bottleneck.ab.qdisc={"kind":"fq_codel","limit":"1000p","target":"50ms","interval":"500ms"}`)
	r.RunUntil(sim.Time(sim.Second))
	d, _ := r.Net.Dir("bottleneck", "ab")
	if _, n := d.Qdisc().Backlog(); n <= 10 {
		t.Fatalf("%d packets queued at 1 s, want more than 10", n)
	}
	if err := r.Act(Action{Link: "bottleneck", Dir: "ab", QueueLimit: &config.QueueLimit{Packets: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, n := d.Qdisc().Backlog(); n != 10 {
		t.Errorf("%d packets queued right after the limit fell to 10, want 10", n)
	}
	r.RunToEnd()
}
