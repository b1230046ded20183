package engine

import (
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/units"
)

// dumbbell1G parses the built-in dumbbell-1g scenario: h1 —10 Gbps, 1 ms—
// r1 —1 Gbps, 13 ms, 1-BDP FIFO— r2 —10 Gbps, 1 ms— h2 (30 ms base RTT),
// one CUBIC bulk flow for 60 s, summary-only trace.
func dumbbell1G(b *testing.B) *config.Scenario {
	raw, err := config.Builtin("dumbbell-1g")
	if err != nil {
		b.Fatalf("Builtin: %v", err)
	}
	scn, err := config.Parse(raw, config.WithCCs(cc.Names()))
	if err != nil {
		b.Fatalf("Parse: %v", err)
	}
	return scn
}

// BenchmarkDumbbell1G runs the whole dumbbell-1g scenario (one CUBIC bulk
// flow, 60 simulated seconds, ~4.3 M data packets) per iteration with the
// summary-only trace, and reports wall seconds per run, dispatched events
// per wall second, wall nanoseconds per data packet sent, and the process
// CPU seconds per run (on a shared machine wall time includes waiting for
// a core; CPU time is what one uncontended core would take). With Linux's
// default buffers (4 MB send buffer, 6 MiB receive buffer) this flow is
// buffer-limited and never fills the bottleneck queue.
func BenchmarkDumbbell1G(b *testing.B) { benchDumbbell(b, dumbbell1G(b)) }

// BenchmarkDumbbell1GLossy is dumbbell-1g with unlimited send and 64 MiB
// receive buffers, so CUBIC fills the 1-BDP FIFO and recovers from its
// overflows (SACK, RACK, PRR on the per-ACK path).
func BenchmarkDumbbell1GLossy(b *testing.B) {
	scn := dumbbell1G(b)
	scn.Flows[0].TCP.SndBuf = 0
	scn.Flows[0].TCP.RcvBufMax = 64 * units.MiB
	benchDumbbell(b, scn)
}

func benchDumbbell(b *testing.B, scn *config.Scenario) {
	b.ReportAllocs()
	var events, pkts uint64
	var wall time.Duration
	cpu0 := cpuTime()
	for b.Loop() {
		start := time.Now()
		r, err := New(scn, nil)
		if err != nil {
			b.Fatalf("New: %v", err)
		}
		r.RunToEnd()
		wall += time.Since(start)
		events += r.Sim.Events()
		pkts += r.Flows[0].(*tcpFlow).snd.Stats.SegsSent
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/op")
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(wall.Nanoseconds())/float64(pkts), "ns/packet")
	b.ReportMetric(float64(pkts)/float64(b.N), "pkts/op")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
