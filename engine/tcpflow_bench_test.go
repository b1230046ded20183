package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
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
// flow, 60 simulated seconds, ~3.6 M data packets) per iteration with the
// summary-only trace, and reports wall seconds per run, dispatched events
// per wall second, wall nanoseconds per data packet sent, the process CPU
// seconds per run (on a shared machine wall time includes waiting for a
// core; CPU time is what one uncontended core would take) and the process's
// peak resident set during the runs. Targets (issue 3): at most 6 s and
// 100 MB per run. With Linux's
// default buffers (4 MB send buffer, 6 MiB receive buffer) this flow is
// held by its send buffer, about two thirds of which it keeps in flight
// (696 Mbps), and never fills the bottleneck queue.
func BenchmarkDumbbell1G(b *testing.B) { benchDumbbell(b, dumbbell1G(b), "") }

// BenchmarkDumbbell1GParquet is BenchmarkDumbbell1G recording every change
// (queue, delivery, sender state, signals, events: ~20 M rows) to Parquet
// files in a temporary directory, closed inside the timed run. Targets:
// at most twice BenchmarkDumbbell1G's time, and a peak resident set that
// does not grow with the run's length (the recorder flushes every 2^16
// rows, so memory holds one flush per table plus the writers' buffers).
func BenchmarkDumbbell1GParquet(b *testing.B) {
	scn := dumbbell1G(b)
	scn.Trace.Detail = config.TraceChange
	benchDumbbell(b, scn, filepath.Join(b.TempDir(), "run.parquet"))
}

// BenchmarkDumbbell1GLossy is dumbbell-1g with unlimited send and 64 MiB
// receive buffers, so CUBIC fills the 1-BDP FIFO and recovers from its
// overflows (SACK, RACK, PRR on the per-ACK path).
func BenchmarkDumbbell1GLossy(b *testing.B) {
	scn := dumbbell1G(b)
	scn.Flows[0].TCP.SndBuf = 0
	scn.Flows[0].TCP.RcvBufMax = 64 * units.MiB
	benchDumbbell(b, scn, "")
}

// benchDumbbell runs scn to its end per iteration, writing the trace to
// files at tracePath ("": no sink) and timing the whole run.
func benchDumbbell(b *testing.B, scn *config.Scenario, tracePath string) {
	releaseLiveness(b)
	b.ReportAllocs()
	var events, pkts uint64
	var traceBytes int64
	var wall time.Duration
	resetPeakRSS(b)
	cpu0 := cpuTime()
	for b.Loop() {
		start := time.Now()
		var sink *trace.FileSink
		var ts trace.Sink
		if tracePath != "" {
			var err error
			if sink, err = trace.NewFileSink(tracePath); err != nil {
				b.Fatalf("NewFileSink: %v", err)
			}
			ts = sink
		}
		r, err := New(scn, ts)
		if err != nil {
			b.Fatalf("New: %v", err)
		}
		r.RunToEnd()
		if sink != nil {
			if err := sink.Close(); err != nil {
				b.Fatalf("trace: %v", err)
			}
		}
		if err := r.Trace.Err(); err != nil {
			b.Fatalf("trace: %v", err)
		}
		wall += time.Since(start)
		events += r.Sim.Events()
		pkts += r.Flows[0].(*tcpFlow).snd.Stats.SegsSent
		if sink != nil {
			traceBytes += filesSize(b, sink.Paths())
		}
	}
	b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-RSS-MB")
	if tracePath != "" {
		b.ReportMetric(float64(traceBytes)/float64(b.N)/1e6, "trace-MB/op")
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

// resetPeakRSS returns freed heap to the OS and resets the kernel's record
// of the process's peak resident set (VmHWM), so that peakRSS measures what
// follows rather than earlier benchmarks in the same binary.
func resetPeakRSS(b *testing.B) {
	debug.FreeOSMemory()
	// "5" resets the peak RSS (proc(5), /proc/pid/clear_refs, Linux 4.0+).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS not reset (%v): it includes earlier benchmarks", err)
	}
}

// peakRSS is the process's peak resident set in bytes (VmHWM), 0 where
// /proc is missing.
func peakRSS(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Logf("no peak RSS: %v", err)
		return 0
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(v, []byte("kB")))), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	return 0
}

// filesSize is the total size of the files at paths.
func filesSize(b *testing.B, paths []string) int64 {
	var n int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}
