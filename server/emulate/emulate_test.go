//go:build linux

package emulate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// The emulation tests run real TCP over namespaces in wall-clock time, one
// at a time (none is parallel). Their budget: about 57 s of wall time in
// all — the 6 s clean-path run (shared by two tests), a 4 s run with a
// scheduled change, a 4 s run of two senders, a 3 s run with a ping probe,
// a 2 s run with receive-path models, a 2 s sized flow, a 2 s lossy run,
// a 5 s calibration capture, a 3 s run read with bpftrace, two 4 s runs
// through a split-TCP proxy, a 2 s run with tcp_cubic's parameters set,
// and short setup-and-cancel runs.

// requireEmulation skips, loudly, only where emulation cannot run at all:
// not root, or no TUN device.
func requireEmulation(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("EMULATION TESTS NOT RUN: %v (they need root and /dev/net/tun)", err)
	}
}

// cleanPath is the reference path: 50 Mbps, 40 ms base RTT, a
// 250 KB FIFO at the bottleneck, no loss, one CUBIC flow. The flow is
// paced (pacing: true, as on a host running fq; in the kernel,
// SO_MAX_PACING_RATE): unpaced, CUBIC's slow start on the kernel is
// bimodal here — in some runs HyStart's delay test ends it early, after a
// TSO burst's own queueing, and t_10MB grows from 1.81 s to 2.89 s — which
// is a finding for the comparison, not a stable test.
const cleanPath = `{
  "name": "emu-clean",
  "runtime": {"seed": 1, "duration": "6s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "bottleneck", "a": "h1", "b": "h2", "rate": "50Mbps", "delay": "20ms",
     "ab": {"qdisc": {"kind": "fifo", "limit": "250KB"}}}
  ],
  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic", "tcp": {"pacing": true}}]
}`

var (
	cleanOnce sync.Once
	cleanRes  *Result
	cleanErr  error
)

// lateTolerance is the relay's p99 lateness above which a run is taken
// again (runOnTime): the relay fell behind real time (on this 2-core VM, beside
// `make test`'s Python suite, its p99 reached 12.8 ms, max 55 ms, even in
// the SCHED_FIFO class), so the link idled and the run measured the machine,
// not the kernel's CUBIC (goodput 2.1% short). Quiet, p99 is under 0.2 ms.
const lateTolerance = sim.Millisecond

// cleanRun emulates cleanPath once for the tests that read it.
func cleanRun(t *testing.T) *Result {
	t.Helper()
	requireEmulation(t)
	cleanOnce.Do(func() {
		prep, err := engine.Prepare([]byte(cleanPath), nil)
		if err != nil {
			cleanErr = err
			return
		}
		cleanRes, cleanErr = runOnTime(t, prep)
	})
	if cleanErr != nil {
		t.Fatalf("Run(clean path) = %v", cleanErr)
	}
	return cleanRes
}

// runOnTime emulates prep up to five times while the relay runs late
// (lateTolerance) and returns the least late run. The last two tries wait
// a few seconds first: on this VM the host's load comes and goes within
// minutes, and three runs back to back can all fall in a busy spell (p99
// 2-13 ms in one, with the tests alone; under a millisecond minutes later).
func runOnTime(t *testing.T, prep *engine.Prepared) (*Result, error) {
	res, _, err := leastLate(func() (*Result, error) {
		return Run(context.Background(), prep.Scenario, prep.Hash, Options{})
	}, 4, lateAgain(t, prep.Scenario.Name))
	return res, err
}

// lateAgain is leastLate's again for the tests: it logs each late run, and
// waits a few seconds before the fourth and fifth (runOnTime).
func lateAgain(t *testing.T, name string) func(sim.Duration) {
	runs := 0
	return func(late sim.Duration) {
		runs++
		t.Logf("%s, run %d: the relay ran late (p99 %v)", name, runs, late)
		if runs >= 3 {
			time.Sleep(5 * time.Second)
		}
	}
}

// goodputFrom is flow f's goodput in bit/s from time from to the run's end,
// read off the trace's delivered counts.
func goodputFrom(res *Result, f int32, from sim.Time) float64 {
	b0, t0 := deliveredOf(res.Trace.FlowsT.Rows, f, from)
	b1, t1 := deliveredOf(res.Trace.FlowsT.Rows, f, sim.Time(res.Summary.SimTimePs))
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

// checkGoodput checks flow 0's goodput from from to the run's end against
// want (bit/s) within the relative tolerance tol.
func checkGoodput(t *testing.T, res *Result, from sim.Time, want, tol float64, what string) {
	t.Helper()
	got := goodputFrom(res, 0, from)
	t.Logf("%s: %.3f Mbps (want %.3f)", what, got/1e6, want/1e6)
	if math.Abs(got-want)/want > tol {
		t.Errorf("%s = %.2f Mbps, want %.2f ± %.0f%%", what, got/1e6, want/1e6, 100*tol)
	}
}

// deliveredOf is flow f's packets delivered (the sender kernel's
// tcpi_delivered, sampled by the relay's loop) times the MSS, at the last
// flows row at or before t, and that row's time. The kernel's count does
// not depend on when the receiving application gets to read.
func deliveredOf(rows []trace.FlowRow, f int32, t sim.Time) (int64, sim.Time) {
	var b int64
	var at sim.Time
	for _, r := range rows {
		if r.Flow == f && r.T <= t {
			b, at = int64(r.Delivered)*1448, r.T
		}
	}
	return b, at
}

// TestCleanPathCubic checks the kernel's CUBIC against the path's analytic
// figures: once out of slow start, a 1-BDP FIFO keeps the bottleneck busy,
// so goodput is the link rate times the payload share of a full segment,
// 50 Mbps × 1448/1500 (TCP/IP headers with timestamps: 52 B); and the
// smallest RTT the kernel measures is the 40 ms propagation delay plus one
// segment's serialisation (1500 B at 50 Mbps: 0.24 ms).
func TestCleanPathCubic(t *testing.T) {
	res := cleanRun(t)
	s := res.Summary
	t.Logf("lateness p50 %v p99 %v max %v over %d packets, realtime %v", dur(s.Lateness.P50Ps), dur(s.Lateness.P99Ps),
		sim.Duration(s.Lateness.MaxPs), s.Lateness.Packets, s.Realtime)
	if s.Mode != "emulate" || s.Kernel == "" {
		t.Errorf("mode, kernel = %q, %q; want \"emulate\" and the release", s.Mode, s.Kernel)
	}
	// Steady state: from 2 s (slow start and its recovery are over by
	// ~1.5 s on this path) to the end.
	checkGoodput(t, res, sim.Time(2*sim.Second), 50e6*1448/1500, 0.02, "steady goodput")
	rows := res.Trace.FlowsT.Rows
	if len(rows) == 0 {
		t.Fatalf("no TCP_INFO samples in the flows table")
	}
	minRTT := rows[len(rows)-1].MinRTT
	t.Logf("kernel min_rtt %v", minRTT)
	if d := minRTT - 40*sim.Millisecond; d < 0 || d > sim.Millisecond/2 {
		t.Errorf("kernel min_rtt = %v, want 40ms + [0, 0.5ms]", minRTT)
	}
	if f := s.Flows[0]; f.Retransmits == nil || f.RTTP50Ps == nil || f.T10MBPs == nil {
		t.Errorf("flow summary %+v lacks retransmits, rtt_p50 or t_10MB", f)
	}
	if len(s.Queues) == 0 || s.Queues[0].MaxBacklogBytes > 250_000 {
		t.Errorf("queues = %+v, want the bottleneck's backlog within its 250 KB limit", s.Queues)
	}
}

// TestSimVsEmulate checks that the simulator and the kernel agree on the
// clean path within 2 % on goodput (TestCleanPathCubic's bound on the same
// run) and 3 % on the time to deliver 10 MB, which slow start's exit moves
// more: two kernel runs (2026-12-06) were within 0.01 % and 0.04 %.
func TestSimVsEmulate(t *testing.T) {
	res := cleanRun(t)
	simF, emuF := simulate(t, []byte(cleanPath), nil).Flows[0], res.Summary.Flows[0]
	for _, c := range []struct {
		name     string
		sim, emu *int64
		within   float64
	}{{"goodput_bps", simF.GoodputBps, emuF.GoodputBps, 0.02}, {"t_10MB_ps", simF.T10MBPs, emuF.T10MBPs, 0.03}} {
		if c.sim == nil || c.emu == nil {
			t.Errorf("%s: sim %v, emulate %v; want both", c.name, c.sim, c.emu)
			continue
		}
		d := math.Abs(float64(*c.emu-*c.sim)) / float64(*c.sim)
		t.Logf("%s: emulate %d, sim %d (%.2f%%)", c.name, *c.emu, *c.sim, 100*d)
		if d > c.within {
			t.Errorf("%s: emulate %d, sim %d: differ by %.1f%%, want ≤ %.0f%%", c.name, *c.emu, *c.sim, 100*d, 100*c.within)
		}
	}
}

// TestCleanupOnCancel cancels a run midway (what Ctrl-C does through the
// command's signal context) and checks that nothing it created is left:
// no namespace of this process, no goroutine, no file descriptor.
func TestCleanupOnCancel(t *testing.T) {
	requireEmulation(t)
	before := snapshot(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=30s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Run(ctx, prep.Scenario, prep.Hash, Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run(cancelled) = %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("a cancelled run took %v to return", el)
	}
	checkClean(t, before)
}

// TestCleanupOnError makes setup fail late — a CC the simulator has and
// the kernel lacks — and checks the error names the kernel's CCs and that
// the namespaces made before the failure are gone.
func TestCleanupOnError(t *testing.T) {
	requireEmulation(t)
	before := snapshot(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"flows.f0.cc=bbr3"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), prep.Scenario, prep.Hash, Options{})
	if err == nil || !strings.Contains(err.Error(), `no congestion control "bbr3"`) || !strings.Contains(err.Error(), availableCCs()) {
		t.Errorf("Run(cc=bbr3) = %v, want an error naming the kernel's CCs (%s)", err, availableCCs())
	}
	checkClean(t, before)
}

// TestCompareRefusesMissingCCFirst: compare refuses a CC the kernel lacks
// before it simulates any seed, naming the flow and the kernel's CCs.
func TestCompareRefusesMissingCCFirst(t *testing.T) {
	requireEmulation(t)
	var progress []string
	_, err := Compare(context.Background(), []byte(cleanPath), []string{"flows.f0.cc=bbr3"},
		CompareOptions{Seeds: []uint64{1, 2}, Progress: func(s string) { progress = append(progress, s) }})
	if err == nil || !strings.Contains(err.Error(), `flows[f0].cc: the kernel has no congestion control "bbr3"`) || !strings.Contains(err.Error(), availableCCs()) {
		t.Errorf("Compare(cc=bbr3) = %v, want an error naming flows[f0] and the kernel's CCs (%s)", err, availableCCs())
	}
	if len(progress) > 0 {
		t.Errorf("progress %q before the refusal, want none", progress)
	}
}

// TestCompareHandsEachSeed: Compare hands CompareOptions.Seed each seed's
// two runs (what compare --report draws): their traces with the flow's
// rows, the summaries, and the seed's own comparison rows alone.
func TestCompareHandsEachSeed(t *testing.T) {
	requireEmulation(t)
	var got []SeedRuns
	c, err := Compare(context.Background(), []byte(cleanPath), []string{"runtime.duration=1s"},
		CompareOptions{Seeds: []uint64{1, 2}, Seed: func(s SeedRuns) error { got = append(got, s); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Seed heard %d seeds, want 2", len(got))
	}
	for i, s := range got {
		if s.Seed != c.Seeds[i] || len(s.Rows) != len(CompareMetrics) || s.Rows[0].Seed != s.Seed || s.Rows[len(s.Rows)-1].Seed != s.Seed {
			t.Errorf("seed %d: %d rows (seeds %d..%d), want the seed's %d", s.Seed, len(s.Rows), s.Rows[0].Seed, s.Rows[len(s.Rows)-1].Seed, len(CompareMetrics))
		}
		if len(s.Sim.FlowsT.Rows) == 0 || len(s.Kernel.FlowsT.Rows) == 0 || s.KernelRelease != c.Kernel ||
			s.SimSummary.Seed != s.Seed || len(s.KernelSummary.Flows) != 1 || len(s.Config) == 0 {
			t.Errorf("seed %d: flows rows %d sim, %d kernel; kernel %q; summaries' seed %d, kernel flows %d; config %d B",
				s.Seed, len(s.Sim.FlowsT.Rows), len(s.Kernel.FlowsT.Rows), s.KernelRelease, s.SimSummary.Seed, len(s.KernelSummary.Flows), len(s.Config))
		}
	}
	stop := errors.New("stop")
	if _, err := Compare(context.Background(), []byte(cleanPath), []string{"runtime.duration=1s"},
		CompareOptions{Seed: func(SeedRuns) error { return stop }}); !errors.Is(err, stop) {
		t.Errorf("a Seed that fails: Compare = %v, want its error", err)
	}
}

// TestRefusesBeyondCeiling checks that a path beyond the real-time ceiling
// is refused before anything is created.
func TestRefusesBeyondCeiling(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"links.bottleneck.rate=10Gbps"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), prep.Scenario, prep.Hash, Options{})
	if err == nil || !strings.Contains(err.Error(), "real-time ceiling") {
		t.Errorf("Run(10 Gbps) = %v, want a refusal naming the real-time ceiling", err)
	}
}

// TestSegmentsCarryMSS checks that a flow's mss is the kernel's payload per
// segment, as in the simulator: TCP_INFO's snd_mss is 536 for mss 536
// (the kernel takes the 12-byte timestamp option from TCP_MAXSEG, so the
// emulator sets 548), and 8948 for a jumbo mss, which the TUN devices
// carry at an MTU of 9000. Beside a jumbo flow, a flow of the default mss
// keeps 1448 on the same 9000-byte devices (until 2026-12-06 it took the
// devices' MTU, 8948, and two CUBIC flows that split 125.8 / 22.7 Mbps
// simulated split 79.0 / 73.5 on the kernel).
func TestSegmentsCarryMSS(t *testing.T) {
	requireEmulation(t)
	second := `flows=[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"mss":8948}},{"id":"f1","src":"h1","dst":"h2","cc":"cubic"}]`
	for _, c := range []struct {
		sets []string
		want map[string]uint32
	}{
		{[]string{"flows.f0.tcp.mss=536"}, map[string]uint32{"f0": 536}},
		{[]string{"flows.f0.tcp.mss=8948"}, map[string]uint32{"f0": 8948}},
		{[]string{second}, map[string]uint32{"f0": 8948, "f1": 1448}},
	} {
		prep, err := engine.Prepare([]byte(cleanPath), append([]string{"runtime.duration=500ms"}, c.sets...))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range res.Capture {
			seen[s.Flow] = true
			if want := c.want[s.Flow]; s.MSS != want {
				t.Fatalf("%v: %s at %d µs: snd_mss %d, want %d", c.sets, s.Flow, s.TUs, s.MSS, want)
			}
		}
		if len(seen) != len(c.want) {
			t.Fatalf("%v: TCP_INFO samples of flows %v, want %d flows", c.sets, seen, len(c.want))
		}
	}
}

// TestDuplicatesReachTheKernel copies a fifth of the bottleneck's packets
// on their way to the kernel's receiver, which must answer each second copy
// with a D-SACK and carry on: the relay hands the copy its packet's bytes
// (packet.Pool.OnClone), and the kernel flow's goodput stays within 3 % of
// the simulator's over the same copies. Of the bottleneck's enqueued
// packets a sixth (0.2/1.2) are copies, within 4 standard errors.
func TestDuplicatesReachTheKernel(t *testing.T) {
	requireEmulation(t)
	sets := []string{"runtime.duration=3s", "links.bottleneck.ab.duplicate=0.2"}
	prep, err := engine.Prepare([]byte(cleanPath), sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var q *engine.QueueSummary
	for i := range res.Summary.Queues {
		if r := &res.Summary.Queues[i]; r.Link == "bottleneck" && r.Dir == "ab" {
			q = r
		}
	}
	if q == nil || q.Enqueued == 0 {
		t.Fatalf("no bottleneck row in %+v", res.Summary.Queues)
	}
	n := float64(q.Enqueued)
	frac, want := float64(q.Duplicated)/n, 0.2/1.2
	if se := math.Sqrt(want * (1 - want) / n); math.Abs(frac-want) > 4*se {
		t.Errorf("%d copies of %d enqueued: %.4f, want %.4f ± %.4f", q.Duplicated, q.Enqueued, frac, want, 4*se)
	}
	simF, emuF := simulate(t, []byte(cleanPath), sets).Flows[0], res.Summary.Flows[0]
	if simF.GoodputBps == nil || emuF.GoodputBps == nil {
		t.Fatalf("goodput: sim %v, kernel %v", simF.GoodputBps, emuF.GoodputBps)
	}
	t.Logf("%d copies of %d enqueued; goodput kernel %d, sim %d bps", q.Duplicated, q.Enqueued, *emuF.GoodputBps, *simF.GoodputBps)
	if d := math.Abs(float64(*emuF.GoodputBps-*simF.GoodputBps)) / float64(*simF.GoodputBps); d > 0.03 {
		t.Errorf("goodput: kernel %d, sim %d bps: %.1f %% apart, want ≤ 3 %%", *emuF.GoodputBps, *simF.GoodputBps, 100*d)
	}
}

// simulate runs the scenario raw with the overrides sets in the simulator
// and returns its summary.
func simulate(t *testing.T, raw []byte, sets []string) *engine.Summary {
	t.Helper()
	prep, err := engine.Prepare(raw, sets)
	if err != nil {
		t.Fatal(err)
	}
	return simulatePrepared(t, prep)
}

// simulatePrepared runs a prepared scenario in the simulator to its end.
func simulatePrepared(t *testing.T, prep *engine.Prepared) *engine.Summary {
	t.Helper()
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.RunToEnd()
	sum := r.Summary(prep.Hash)
	return &sum
}

// TestProxyBesideSimulator runs p-we-p's split-TCP proxy on the kernel: a
// namespace whose application accepts leg 0, opens leg 1 and relays
// between them through the proxy's buffer. Each leg is a kernel connection
// with its own CC, so each sees its own RTT, and the long leg's losses
// (0.1 %, drawn from the same seed on both sides) are retransmitted by leg 0
// alone: the reason proxies exist. Both legs' goodput agrees with the
// simulator's. Then, with the short leg made the slow one and a 300 KB
// buffer, the relay's back pressure holds leg 0 to leg 1's rate, with no
// more than the buffer between them, and a sized flow's end crosses the
// proxy: the client gets every byte.
func TestProxyBesideSimulator(t *testing.T) {
	requireEmulation(t)
	raw, err := config.Builtin("p-we-p")
	if err != nil {
		t.Fatal(err)
	}
	both := func(sets ...string) (*engine.Summary, *Result) {
		t.Helper()
		sets = append(sets, "runtime.duration=4s", "flows.f0.tcp.hz=250")
		prep, err := engine.Prepare(raw, sets)
		if err != nil {
			t.Fatal(err)
		}
		sum := simulate(t, raw, sets)
		// A kernel run can part from the simulator's at an edge the kernel
		// itself crosses from run to run. In 2 of some 50 kernel runs here
		// its HyStart did not end slow start near the 1,000th segment, where
		// the simulator's and the other kernel runs' did (sender-side pcaps:
		// the same segments at the same times within 1.5 ms until then), and
		// the 1-BDP FIFO overflowed (156 and 818 retransmissions against 5).
		// In 3 more the relay's loss draws, taken packet by packet from the
		// seed, fell on other packets: 4 losses instead of 5, one of them
		// with 3.2 % less goodput (not traced further). The comparison this test
		// makes is of runs that lost the same packets, so a run whose leg 0
		// retransmitted otherwise is logged and taken again, up to twice.
		for try := 1; ; try++ {
			res, err := runOnTime(t, prep)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Summary.Flows) != 2 || res.Summary.Flows[0].ID != "f0.0" || res.Summary.Flows[1].ID != "f0.1" {
				t.Fatalf("kernel flows %+v, want the legs f0.0 and f0.1", res.Summary.Flows)
			}
			k, s := *res.Summary.Flows[0].Retransmits, *sum.Flows[0].Retransmits
			if k == s || try == 3 {
				return sum, res
			}
			t.Logf("kernel run %d: leg 0 retransmitted %d, the simulator %d: the runs parted, run again", try, k, s)
		}
	}
	mbps := func(p *int64) float64 {
		if p == nil {
			return 0
		}
		return float64(*p) / 1e6
	}
	ss, kern := both()
	for i, f := range kern.Summary.Flows {
		s := ss.Flows[i]
		t.Logf("%s: goodput %.2f Mbps (simulated %.2f), retransmits %d (%d), rtt p50 %v (%v)", f.ID,
			mbps(f.GoodputBps), mbps(s.GoodputBps), *f.Retransmits, *s.Retransmits, dur(f.RTTP50Ps), dur(s.RTTP50Ps))
		if g, w := mbps(f.GoodputBps), mbps(s.GoodputBps); math.Abs(g-w)/w > 0.03 {
			t.Errorf("%s: goodput %.2f Mbps, simulated %.2f: want within 3 %%", f.ID, g, w)
		}
	}
	l0, l1 := kern.Summary.Flows[0], kern.Summary.Flows[1]
	if p50 := dur(l0.RTTP50Ps); p50 < 82*sim.Millisecond || p50 > 130*sim.Millisecond {
		t.Errorf("leg 0's rtt p50 %v, want its own path's: 82 ms of propagation and at most a 1-BDP queue", p50)
	}
	if p50 := dur(l1.RTTP50Ps); p50 < 2*sim.Millisecond || p50 > 4*sim.Millisecond {
		t.Errorf("leg 1's rtt p50 %v, want its own path's 2 ms", p50)
	}
	// Leg 1's path loses nothing, but its probe timeout is a few ms (2
	// srtt of a 2 ms path): a host loaded enough to hold an ACK that long
	// sends one tail loss probe, counted as a retransmission (seen once
	// in a CI run). Losses are leg 0's.
	if *l0.Retransmits == 0 || *l1.Retransmits > 1 {
		t.Errorf("retransmits: leg 0 %d, leg 1 %d; want the lossy long leg's only (a probe at most on leg 1)", *l0.Retransmits, *l1.Retransmits)
	}

	const buffer, size = 300_000, 3_000_000
	ss, kern = both("links.last.rate=10Mbps", "nodes.pep.buffer=300KB", "flows.f0.size=3MB")
	l0, l1 = kern.Summary.Flows[0], kern.Summary.Flows[1]
	t.Logf("slow leg 1: leg 0 read %d bytes, leg 1 delivered %d, goodput %.2f / %.2f Mbps (simulated %.2f / %.2f)",
		l0.BytesDelivered, l1.BytesDelivered, mbps(l0.GoodputBps), mbps(l1.GoodputBps), mbps(ss.Flows[0].GoodputBps), mbps(ss.Flows[1].GoodputBps))
	if l0.BytesDelivered != size || l1.BytesDelivered != size {
		t.Errorf("delivered %d to the proxy and %d to the client, want the flow's %d to each", l0.BytesDelivered, l1.BytesDelivered, size)
	}
	if g, w := mbps(l1.GoodputBps), mbps(ss.Flows[1].GoodputBps); math.Abs(g-w)/w > 0.03 {
		t.Errorf("leg 1's goodput %.2f Mbps, simulated %.2f: want within 3 %%", g, w)
	}
	// What the proxy has read and leg 1 has not had acknowledged is at most
	// the buffer. The client's application reads a little after its kernel
	// acknowledges, and the delivery table samples the legs one after the
	// other, so their difference there may pass it by a few segments.
	got := [2]int64{}
	d := &kern.Trace.Delivery
	most := int64(0)
	for i := range d.T {
		got[d.Flow[i]] = d.BytesDelivered[i]
		most = max(most, got[0]-got[1])
	}
	t.Logf("most bytes between the legs: %d (buffer %d)", most, buffer)
	if most > buffer+16_000 || most < buffer/2 {
		t.Errorf("the proxy held up to %d bytes read and not delivered, want up to its %d B buffer (and a few segments), filled", most, buffer)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// baseline is what a run must leave as it found: goroutines, open file
// descriptors, and the kernel's orphaned TCP sockets (closed, but still
// holding buffers while they send what was left in them).
type baseline struct{ goroutines, fds, orphans int }

func snapshot(t *testing.T) baseline {
	return baseline{runtime.NumGoroutine(), openFDs(), tcpOrphans(t)}
}

// tcpOrphans is the kernel's count of orphaned TCP sockets, all namespaces
// together (/proc/net/sockstat: "TCP: inuse N orphan N ...").
func tcpOrphans(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == "TCP:" && f[3] == "orphan" {
			n, err := strconv.Atoi(f[4])
			if err != nil {
				t.Fatalf("/proc/net/sockstat: %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("/proc/net/sockstat has no TCP orphan count:\n%s", b)
	return 0
}

func checkClean(t *testing.T, before baseline) {
	t.Helper()
	if n := openFDs(); n > before.fds {
		t.Errorf("%d file descriptors open after the run, %d before (sockets, TUN devices, epoll)", n, before.fds)
	}
	if left := leftoverNamespaces(NamespacePrefix + strconv.Itoa(os.Getpid()) + "-"); len(left) > 0 {
		t.Errorf("namespaces left behind: %v", left)
	}
	// Sockets closed with data unsent or unacknowledged would linger as
	// orphans, retransmitting into namespaces that are gone.
	if n := tcpOrphans(t); n > before.orphans {
		t.Errorf("%d orphaned TCP sockets after the run, %d before: the run's sockets were not aborted", n, before.orphans)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before.goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before.goroutines {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the run, %d before:\n%s", n, before.goroutines, buf[:runtime.Stack(buf, true)])
	}
}

func dur(p *int64) sim.Duration {
	if p == nil {
		return -1
	}
	return sim.Duration(*p)
}

// TestScheduledChange checks that a scenario's changes reach the emulated
// link in real time: the bottleneck drops from 50 to 20 Mbps at 2 s, and
// over the last second CUBIC (its 250 KB buffer is now 2.5 BDP) delivers
// the new rate's payload share, 20 Mbps × 1448/1500, within 3%.
func TestScheduledChange(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=4s",
		`changes=[{"at":"2s","link":"bottleneck","dir":"ab","rate":"20Mbps"}]`})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	checkGoodput(t, res, sim.Time(3*sim.Second), 20e6*1448/1500, 0.03, "goodput after the change")
}

// TestTwoSendersOneReceiver runs a dumbbell of three hosts: two CUBIC
// senders share the clean path's bottleneck into one receiver (the relay
// once gave every flow a receiver at every host, which the network refuses
// beyond two). Once both are out of slow start the bottleneck stays busy,
// so together they deliver its rate times the payload share, 50 Mbps ×
// 1448/1500, and each gets a share of it.
func TestTwoSendersOneReceiver(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(`{
  "name": "emu-two-senders",
  "runtime": {"seed": 1, "duration": "4s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h3", "kind": "endpoint"},
            {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "a1", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
    {"id": "a3", "a": "h3", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
    {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "50Mbps", "delay": "19ms",
     "ab": {"qdisc": {"kind": "fifo", "limit": "250KB"}}}
  ],
  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic", "tcp": {"pacing": true}},
            {"id": "f1", "src": "h3", "dst": "h2", "cc": "cubic", "tcp": {"pacing": true}}]
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	var each [2]float64
	for f := range int32(2) {
		each[f] = goodputFrom(res, f, sim.Time(2*sim.Second))
		total += each[f]
	}
	want := 50e6 * 1448 / 1500
	t.Logf("goodput 2 s to the end: %.3f + %.3f Mbps (want %.3f together)", each[0]/1e6, each[1]/1e6, want/1e6)
	if math.Abs(total-want)/want > 0.03 {
		t.Errorf("goodput together = %.2f Mbps, want %.2f ± 3%%", total/1e6, want/1e6)
	}
	for f, g := range each {
		if g < 0.1*want {
			t.Errorf("flow %d: %.2f Mbps, want a share of the bottleneck", f, g/1e6)
		}
	}
}

// TestPingBesideKernelFlow runs a ping probe beside the kernel's CUBIC
// flow on the clean path. The relay runs the engine's probe, so its
// packets queue behind the kernel's: every probe is answered, and each RTT
// is the 40 ms propagation delay, the two serialisations of a 100 B probe
// and its reply at 50 Mbps (16 µs each), and the queueing the CUBIC flow
// puts in the 250 KB FIFO, at most 40 ms; once the flow fills the FIFO the
// median probe waits behind a good part of it.
func TestPingBesideKernelFlow(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=3s",
		`flows=[{"id":"f0","src":"h1","dst":"h2","cc":"cubic","tcp":{"pacing":true}},
		        {"id":"ping","src":"h1","dst":"h2","cc":"ping","interval":"20ms","packet_size":"100B"}]`})
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's probe beside its own CUBIC: the kernel's flow keeps
	// the FIFO about as full (TestSimVsEmulate), so the medians agree, and
	// the flows' goodputs. In ten kernel runs (2026-12-06) the probe's p50
	// was 63.9–64.9 ms against 64.4 simulated and the goodput 45.79–45.81
	// Mbps against 45.81; in an eleventh, within a CI run, 62.3 ms. So
	// a run more than 3 % off is run once more: the kernel's HyStart exits
	// vary from run to run.
	simSum := simulatePrepared(t, prep)
	simP50 := dur(simSum.Flows[1].RTTP50Ps)
	var res *Result
	var p50, p99 sim.Duration
	for try := 1; ; try++ {
		var err error
		if res, err = runOnTime(t, prep); err != nil {
			t.Fatal(err)
		}
		fs := res.Summary.Flows[1]
		if fs.Kind != "ping" || fs.ProbesSent == nil || fs.RTTP50Ps == nil || fs.RTTP99Ps == nil {
			t.Fatalf("ping flow summary = %+v, want probes and RTT quantiles", fs)
		}
		p50, p99 = dur(fs.RTTP50Ps), dur(fs.RTTP99Ps)
		t.Logf("run %d: probes %d sent, %d answered; RTT p50 %v, p99 %v", try, *fs.ProbesSent, *fs.ProbesReceived, p50, p99)
		// In flight at the end: at most the last 80 ms / 20 ms = 4.
		if *fs.ProbesSent != 151 || *fs.ProbesReceived < *fs.ProbesSent-4 {
			t.Errorf("probes sent %d, answered %d; want 151 (0 to 3 s every 20 ms), all answered but the 4 in flight", *fs.ProbesSent, *fs.ProbesReceived)
		}
		if d := math.Abs(float64(p50-simP50)) / float64(simP50); d <= 0.03 || try == 2 {
			if d > 0.03 {
				t.Errorf("probe RTT p50 %v beside the kernel, %v simulated: differ by %.1f%%, want ≤ 3%%", p50, simP50, 100*d)
			}
			break
		}
	}
	base := 40*sim.Millisecond + 32*sim.Microsecond
	if p50 < base+10*sim.Millisecond || p99 > base+40*sim.Millisecond+sim.Millisecond {
		t.Errorf("probe RTT p50 %v, p99 %v; want within %v + the FIFO's 40 ms, the median 10 ms or more above it", p50, p99, base)
	}
	g, simG := res.Summary.Flows[0].GoodputBps, simSum.Flows[0].GoodputBps
	if g == nil || simG == nil {
		t.Fatalf("the CUBIC flow's goodput = %v beside the kernel, %v simulated; want both", g, simG)
	}
	t.Logf("simulated probe RTT p50 %v; CUBIC goodput %.3f Mbps beside the kernel, %.3f simulated", simP50, float64(*g)/1e6, float64(*simG)/1e6)
	if d := math.Abs(float64(*g-*simG)) / float64(*simG); d > 0.03 {
		t.Errorf("CUBIC goodput %.2f Mbps beside the kernel, %.2f simulated: differ by %.1f%%, want ≤ 3%%", float64(*g)/1e6, float64(*simG)/1e6, 100*d)
	}
}

// TestApplicationPatterns runs the two applications that are not greedy
// on the clean path, as the simulator's run them. A rate application
// writes one 1448 B segment per segment time at its rate, far below the
// path's 50 Mbps, so its goodput is its rate. An on/off application (on
// 300 ms, off 500 ms from the handshake's end) keeps up with its socket
// while on, so once an off period's first round trips have drained what it
// wrote, nothing is acked until the next on period.
func TestApplicationPatterns(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=4s",
		`flows=[{"id":"rate","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"rate","rate":"2Mbps"}},
		        {"id":"onoff","src":"h1","dst":"h2","cc":"cubic","app":{"kind":"onoff","on":"300ms","off":"500ms"}}]`})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	rows, end := res.Trace.FlowsT.Rows, sim.Time(res.Summary.SimTimePs)
	rate := goodputFrom(res, 0, sim.Time(sim.Second))
	t.Logf("rate application: %.4f Mbps from 1 s to the end", rate/1e6)
	if math.Abs(rate-2e6)/2e6 > 0.03 {
		t.Errorf("rate application's goodput = %.3f Mbps, want 2 Mbps ± 3%%", rate/1e6)
	}

	// The first ACK of data comes a round trip (40 ms) after the
	// handshake, within a 5 ms trace sample: on periods start at a0 - 40
	// ms + k·800 ms. What an on period wrote is acked by its end + the
	// FIFO's 40 ms + two round trips, which the quiet windows leave out.
	var a0 sim.Time
	for _, r := range rows {
		if r.Flow == 1 && r.Delivered > 0 {
			a0 = r.T
			break
		}
	}
	if a0 == 0 {
		t.Fatal("the on/off application had nothing acked")
	}
	period := 800 * sim.Millisecond
	for k := 0; ; k++ {
		on := a0.Add(sim.Duration(k) * period)
		quiet, next := on.Add(450*sim.Millisecond), on.Add(period-50*sim.Millisecond)
		if next > end {
			break
		}
		bOn, _ := deliveredOf(rows, 1, on.Add(-sim.Millisecond))
		bQ0, _ := deliveredOf(rows, 1, quiet)
		bQ1, _ := deliveredOf(rows, 1, next)
		t.Logf("period %d: %d B acked while on, %d B in the quiet window", k, bQ0-bOn, bQ1-bQ0)
		// 300 ms of the path's payload rate is 1.81 MB (50 Mbps × 1448/1500);
		// a period starts again from the initial window (the 500 ms off is
		// longer than the RTO: tcp_cwnd_restart), so want half of it.
		if bQ0-bOn < 905_000 {
			t.Errorf("period %d: %d B acked while on; want at least half of 300 ms at the path's rate, 905 KB", k, bQ0-bOn)
		}
		if bQ1 != bQ0 {
			t.Errorf("period %d: %d B acked %v to %v after the on period started; want none while off", k, bQ1-bQ0, quiet.Sub(on), next.Sub(on))
		}
	}

	// The simulator runs the same applications: the on/off flow's goodput
	// agrees within 5 % (three kernel runs, 2026-12-06: 18.02–18.45 Mbps
	// against 18.26 simulated).
	simG, emuG := simulatePrepared(t, prep).Flows[1].GoodputBps, res.Summary.Flows[1].GoodputBps
	if simG == nil || emuG == nil {
		t.Fatalf("on/off goodput: sim %v, emulate %v; want both", simG, emuG)
	}
	d := math.Abs(float64(*emuG-*simG)) / float64(*simG)
	t.Logf("on/off application: %.2f Mbps beside the kernel, %.2f simulated", float64(*emuG)/1e6, float64(*simG)/1e6)
	if d > 0.05 {
		t.Errorf("on/off goodput %d bps on the kernel, %d simulated: differ by %.1f%%, want ≤ 5%%", *emuG, *simG, 100*d)
	}
}

// TestShortFlowsFCT runs a group of four 30 KB CUBIC flows, one every
// 500 ms, on the kernel on the clean path (idle between them), and checks
// their completion times against the hand count: the handshake (40 ms),
// the initial window of 10 segments (its first ACK back 40 ms + one
// 1500 B serialisation, 0.24 ms, later), then the 11 segments left
// (10 × 1500 B + 1092 B), sent two per ACK, back to back at 50 Mbps
// (2.575 ms), and 20 ms to the receiver: 102.8 ms (the simulator's
// 102.84). The group summary holds them in its [10KB,100KB) bucket, as the
// simulator's does.
func TestShortFlowsFCT(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=2.3s",
		`flows=[{"group":"short","count":4,"src":"h1","dst":"h2","cc":"cubic",
		         "start":{"kind":"periodic","at":"100ms","every":"500ms"},"size":{"kind":"fixed","value":"30KB"}}]`})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	// The relay adds 0.1-0.3 ms to each of the 5 crossings (reading the
	// TUN device), more on a busy machine. When every try of runOnTime ran
	// late (a hypervisor taking the vCPU: p99 1-3 ms in every run for
	// minutes on end here), each crossing may be late by as much again
	// beyond the tolerance, and the bounds widen by that: the test judges
	// the kernel, not the host. Any run may also have a stall far beyond
	// its p99: one flow of four finished 27 ms late in a CI run whose
	// least late try had p99 1.08 ms, and in runs on time at p99 (max 1.5
	// ms) one flow of four took 6.4 and 17.6 ms more, once in about five
	// runs, with the relay on time: the stall was elsewhere on the host
	// (an application's thread, or the kernel's own). So one
	// flow of the four may exceed its bound (it is logged); no flow may be
	// faster than the hand count allows, and the median keeps the tighter
	// bound.
	want := 40*sim.Millisecond + 40*sim.Millisecond + 240*sim.Microsecond + 2575*sim.Microsecond + 20*sim.Millisecond
	slack := 5 * max(0, dur(res.Summary.Lateness.P99Ps)-lateTolerance)
	stall := sim.Duration(res.Summary.Lateness.MaxPs)
	t.Logf("relay lateness p99 %v, max %v: bounds widened by %v, a flow's by %v more", dur(res.Summary.Lateness.P99Ps), stall, slack, stall)
	var over []string
	for _, f := range res.Summary.Flows {
		if f.FCTPs == nil {
			t.Errorf("%s: no FCT; want it completed", f.ID)
			continue
		}
		fct := dur(f.FCTPs)
		t.Logf("%s: FCT %v", f.ID, fct)
		if fct < want-500*sim.Microsecond {
			t.Errorf("%s: FCT %v, want at least %v - 0.5 ms", f.ID, fct, want)
		}
		if fct > want+5*sim.Millisecond+slack+stall {
			over = append(over, fmt.Sprintf("%s %v", f.ID, fct))
		}
	}
	if len(over) > 1 {
		t.Errorf("FCT over %v + 5 ms + %v: %v; want at most one flow (a host stall)", want, slack+stall, over)
	} else if len(over) == 1 {
		t.Logf("one flow over %v + 5 ms + %v, taken as a host stall: %v", want, slack+stall, over[0])
	}
	gs := res.Summary.Groups
	if len(gs) != 1 || gs[0].Completed != 4 || len(gs[0].Buckets) != 1 || gs[0].Buckets[0].MinBytes != 10_000 {
		t.Fatalf("group summary = %+v, want the 4 flows completed in bucket [10KB,100KB)", gs)
	}
	if p50 := sim.Duration(gs[0].Buckets[0].FCTP50Ps); p50 < want-500*sim.Microsecond || p50 > want+2500*sim.Microsecond+slack {
		t.Errorf("FCT p50 %v, want %v - 0.5 ms + 2.5 ms + %v", p50, want, slack)
	}
	simP50, kernP50 := sim.Duration(simulatePrepared(t, prep).Groups[0].Buckets[0].FCTP50Ps), sim.Duration(gs[0].Buckets[0].FCTP50Ps)
	t.Logf("FCT p50: %v simulated, %v on the kernel; slowdown p50 %.3f on the kernel", simP50, kernP50, gs[0].Buckets[0].SlowdownP50)
	// Within 3 %, and the slack of a relay late in every try.
	if d := math.Abs(float64(kernP50 - simP50)); d > 0.03*float64(simP50)+float64(slack) {
		t.Errorf("FCT p50 %v on the kernel, %v simulated: differ by %.1f%%, want ≤ 3%% + %v", kernP50, simP50, 100*d/float64(simP50), slack)
	}
}

// TestSwitchFloods runs a flow between two of three hosts on an L2
// switch. Until the switch has learned the receiver's port it floods the
// frames for it, so the SYN reaches the receiver as a flooded copy (the
// receiver's port comes before b's, which takes the original): the relay
// copies the frame's bytes with it. (It did not, the copy carried
// another packet's bytes, and the connection was reset.) Once past the
// handshake the flow runs at the 50 Mbps ports' rate times the payload
// share of a segment.
func TestSwitchFloods(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(`{
  "name": "emu-switch",
  "runtime": {"seed": 1, "duration": "3s"},
  "nodes": [{"id": "a", "kind": "endpoint"}, {"id": "b", "kind": "endpoint"}, {"id": "c", "kind": "endpoint"},
            {"id": "sw", "kind": "switch"}],
  "links": [
    {"id": "la", "a": "a", "b": "sw", "rate": "50Mbps", "delay": "10ms"},
    {"id": "lc", "a": "c", "b": "sw", "rate": "50Mbps", "delay": "10ms",
     "ba": {"qdisc": {"kind": "fifo", "limit": "250KB"}}},
    {"id": "lb", "a": "b", "b": "sw", "rate": "50Mbps", "delay": "10ms"}
  ],
  "flows": [{"id": "f0", "src": "a", "dst": "c", "cc": "cubic", "tcp": {"pacing": true}}]
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	flooded := false
	for _, q := range res.Summary.Queues {
		flooded = flooded || q.Link == "lb" && q.Dir == "ba" && q.Enqueued > 0
	}
	if !flooded {
		t.Errorf("queues = %+v; want a flooded copy sent to b (lb, ba)", res.Summary.Queues)
	}
	checkGoodput(t, res, sim.Time(sim.Second), 50e6*1448/1500, 0.03, "goodput from 1 s")
}

// TestRelayOnTimeAsFlowsComeAndGo runs 24 flows of 64 KB, two at a time
// every 250 ms, from two hosts into one behind a 100 Mbps link: between
// rounds every application blocks in a system call, holding a P. The relay
// must still write on time: p99 under LateWarn, plus however long the
// machine itself stalled a real-time thread meanwhile (hostStall; on a
// busy CI host the relay's p99 reached 4-8 ms in five runs in a row, and
// nothing in the process can make up for a vCPU the hypervisor takes
// away). With GOMAXPROCS at the 2 cores, the runtime's preemption of the
// loop left it waiting 10-20 ms for a P after each round started: p99
// about 10 ms in every run, on a quiet machine too, and a note.
func TestRelayOnTimeAsFlowsComeAndGo(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(`{
  "name": "emu-rounds",
  "runtime": {"seed": 1, "duration": "3s"},
  "nodes": [{"id": "h0", "kind": "endpoint"}, {"id": "h1", "kind": "endpoint"},
            {"id": "r1", "kind": "router"}, {"id": "rx", "kind": "endpoint"}],
  "links": [
    {"id": "l0", "a": "h0", "b": "r1", "rate": "1Gbps", "delay": "50us"},
    {"id": "l1", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "50us"},
    {"id": "lrx", "a": "r1", "b": "rx", "rate": "100Mbps", "delay": "50us", "ab": {"qdisc": {"kind": "fifo", "limit": "64p"}}}
  ],
  "flows": [{"group": "rounds", "count": 24, "src": ["h0", "h1"], "dst": "rx", "cc": "cubic",
             "start": {"kind": "periodic", "at": "100ms", "every": "250ms", "batch": 2}, "size": {"kind": "fixed", "value": "64KB"}}]
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	for try := 1; try <= 5; try++ {
		if try > 3 {
			time.Sleep(5 * time.Second)
		}
		stall := hostStall(t, func() {
			res, err = Run(context.Background(), prep.Scenario, prep.Hash, Options{})
		})
		if err != nil {
			t.Fatal(err)
		}
		l := res.Summary.Lateness
		t.Logf("run %d: lateness p50 %v, p99 %v, max %v over %d packets; the host stalled up to %v", try,
			dur(l.P50Ps), dur(l.P99Ps), sim.Duration(l.MaxPs), l.Packets, stall)
		if dur(l.P99Ps) <= LateWarn+stall {
			break
		}
		if try == 5 {
			t.Errorf("lateness p99 %v, want under %v plus the host's stall", dur(l.P99Ps), LateWarn)
		}
	}
	late := dur(res.Summary.Lateness.P99Ps) > LateWarn
	noted := false
	for _, n := range res.Summary.Notes {
		noted = noted || strings.HasPrefix(n, "lateness:")
	}
	if noted != late {
		t.Errorf("notes %q: a lateness note %v, want one exactly when p99 is over %v", res.Summary.Notes, noted, LateWarn)
	}
	if g := res.Summary.Groups; len(g) != 1 || g[0].Completed != 24 {
		t.Errorf("groups = %+v, want the 24 flows completed", g)
	}
}

// TestReceivePathModels checks that the relay puts a flow's receive-path
// models (config.RcvPath) around the kernel's receiver, as the simulator
// puts them around its own: on the clean path with a 10 ms receive hold
// the kernel's min_rtt is the 40 ms propagation delay plus the hold (and
// at most the 4 ms a first ACK waits for its grant), and a grant every
// 4 ms (a constant gap) while ACKs are waiting releases them, as many
// grants as the simulator's receiver path takes for the same flow. A
// gro_interval, which the TUN path cannot apply, is run without and named
// in the summary's notes.
func TestReceivePathModels(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=2s", "flows.f0.tcp.gro_interval=100us",
		`flows.f0.rcv_hold=10ms`, `flows.f0.ack_grant={"gap":["4ms","4ms"],"per_grant":1000}`})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runOnTime(t, prep)
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Trace.FlowsT.Rows
	if len(rows) == 0 {
		t.Fatalf("no TCP_INFO samples in the flows table")
	}
	minRTT := rows[len(rows)-1].MinRTT
	t.Logf("kernel min_rtt %v", minRTT)
	if d := minRTT - 50*sim.Millisecond; d < 0 || d > 4*sim.Millisecond+sim.Millisecond/2 {
		t.Errorf("kernel min_rtt = %v, want 40ms + the 10ms hold + [0, 4.5ms]", minRTT)
	}
	rp := res.Summary.Flows[0].RcvPath
	if rp == nil {
		t.Fatalf("flow summary has no rcv_path counts")
	}
	// The grants the simulator's own receiver path gives the same flow:
	// the relay draws them from the same process, so they come while ACKs
	// wait, as the kernel's receiver makes them: 421–425 in five kernel
	// runs (2026-12-06) against 414 simulated, of at most 2 s / 4 ms =
	// 500; 5 % leaves the kernel's spread room on either side.
	simRP := simulatePrepared(t, prep).Flows[0].RcvPath
	if simRP == nil {
		t.Fatalf("the simulated flow's summary has no rcv_path counts")
	}
	t.Logf("rcv_path %+v beside the kernel, %+v simulated", *rp, *simRP)
	if d := math.Abs(float64(rp.Grants)-float64(simRP.Grants)) / float64(simRP.Grants); rp.Grants > 501 || d > 0.05 ||
		rp.AcksLost != 0 || rp.AcksFiltered != 0 {
		t.Errorf("rcv_path = %+v, want the simulator's %d grants ± 5 %% (at most 2 s / 4 ms), no ACK lost or filtered", *rp, simRP.Grants)
	}
	gro := 0
	for _, n := range res.Summary.Notes {
		if strings.Contains(n, "flows[f0].tcp.gro_interval: 100us not applied") {
			gro++
		}
	}
	if n := res.Summary.Notes; gro != 1 {
		t.Errorf("notes = %q, want the f0 gro_interval named as not applied", n)
	}
}

// TestSizedFlowSendsFIN runs a sized flow held by a small send buffer and
// checks, in the sender's packet capture, that its application closes its
// end once it has written the last byte: a FIN follows the flow's last
// byte (ISN + 1 + size), within 2 ms of that byte's first transmission,
// carried by the same segment when the segment had not left yet. Left
// open, the sub-MSS segment of the last write waited under Nagle until a
// small segment that an earlier 1 MB write had left mid-stream was
// acknowledged, a round trip later (Linux's tcp_nagle_check, Minshall's
// test), and the kernel's completion came that much after the
// simulator's.
func TestSizedFlowSendsFIN(t *testing.T) {
	requireEmulation(t)
	const size = 2<<20 + 10_000
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=2s",
		"flows.f0.size=" + strconv.Itoa(size), "flows.f0.tcp.sndbuf=128KB"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{Pcap: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Summary.Flows[0]; f.BytesDelivered != size {
		t.Fatalf("bytes delivered = %d, want the flow's %d", f.BytesDelivered, size)
	}
	segs := senderSegments(t, res.Pcap)
	var isn uint32
	for _, s := range segs {
		if s.flags&0x12 == 0x02 {
			isn = s.seq
		}
	}
	end := isn + 1 + size
	lastByte, fin := int64(-1), int64(-1)
	for _, s := range segs {
		if s.payload > 0 && s.seq+s.payload == end && lastByte < 0 {
			lastByte = s.tNs
		}
		if s.flags&0x01 != 0 {
			if s.seq+s.payload != end {
				t.Errorf("FIN at sequence %d (+%d payload), want it after the last byte, %d", s.seq-isn, s.payload, end-isn)
			}
			if fin < 0 {
				fin = s.tNs
			}
		}
	}
	if lastByte < 0 || fin < 0 {
		t.Fatalf("last byte sent at %d ns, FIN at %d ns (-1: never); want both", lastByte, fin)
	}
	t.Logf("last byte at %.3f ms, FIN %.3f ms later", float64(lastByte)/1e6, float64(fin-lastByte)/1e6)
	if d := fin - lastByte; d < 0 || d > 2e6 {
		t.Errorf("FIN %.3f ms after the last byte's first transmission, want within 2 ms", float64(d)/1e6)
	}
}

// segment is a TCP segment the sender wrote, from an emulator pcap.
type segment struct {
	tNs          int64
	seq, payload uint32
	flags        uint8
}

// senderSegments reads the segments the flow's sender wrote (destination
// port basePort) from a pcap of Options.Pcap: nanosecond timestamps, raw
// IPv4 (calibrate.PcapWriter).
func senderSegments(t *testing.T, raw []byte) []segment {
	t.Helper()
	if len(raw) < 24 || binary.LittleEndian.Uint32(raw) != 0xa1b23c4d {
		t.Fatalf("pcap of %d bytes without the nanosecond little-endian header", len(raw))
	}
	var segs []segment
	le := binary.LittleEndian
	for off := 24; off+16 <= len(raw); {
		tNs := int64(le.Uint32(raw[off:]))*1e9 + int64(le.Uint32(raw[off+4:]))
		incl := int(le.Uint32(raw[off+8:]))
		b := raw[off+16 : off+16+incl]
		off += 16 + incl
		if len(b) < 20 || b[9] != 6 {
			continue
		}
		ihl := int(b[0]&15) * 4
		tcp := b[ihl:]
		if binary.BigEndian.Uint16(tcp[2:]) != basePort {
			continue
		}
		tot, doff := int(binary.BigEndian.Uint16(b[2:])), int(tcp[12]>>4)*4
		segs = append(segs, segment{tNs: tNs, seq: binary.BigEndian.Uint32(tcp[4:]),
			payload: uint32(tot - ihl - doff), flags: tcp[13]})
	}
	return segs
}

// TestLostCountsAsTheSimulators checks the kernel side's lost_pkts, which
// TCP_INFO does not give (tcpi_lost is the packets lost now): summed with
// delivered_pkts and inflight_pkts, as the simulator's columns sum, it must
// count every segment the kernel sent, which its own tcpi_bytes_sent counts
// in bytes (full segments of 1448 B on this bulk flow; delivered counts the
// SYN as well). Over 2 s at 2 % loss, tens of segments are resent, and
// tcpi_lost alone fell short by nearly all of them (17 of 17 in one run).
func TestLostCountsAsTheSimulators(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(cleanPath), []string{"runtime.duration=2s",
		`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.02}`})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Trace.FlowsT.Rows
	if len(rows) == 0 || len(res.Capture) == 0 {
		t.Fatalf("%d flows rows, %d capture samples; want both", len(rows), len(res.Capture))
	}
	// The last row and the last sample come from one read of TCP_INFO.
	r, c := rows[len(rows)-1], res.Capture[len(res.Capture)-1]
	sent := int64(r.Delivered) - 1 + int64(r.Lost) + int64(r.InflightPkts)
	want := int64(c.BytesSent) / 1448
	t.Logf("delivered %d + lost %d + inflight %d − SYN = %d segments; bytes_sent / MSS %d (remainder %d); total_retrans %d",
		r.Delivered, r.Lost, r.InflightPkts, sent, want, c.BytesSent%1448, c.TotalRetrans)
	if c.TotalRetrans < 10 {
		t.Fatalf("total_retrans %d at 2 %% loss: the test needs retransmissions", c.TotalRetrans)
	}
	if d := sent - want; d < -1 || d > 1 {
		t.Errorf("delivered + lost + inflight = %d segments, bytes_sent counts %d: %+d", sent, want, d)
	}
}
