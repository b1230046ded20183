package emulate

import (
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server/calibrate"
)

// Options configure an emulated run.
type Options struct {
	// Sink receives the trace tables at the end of the run (nil: they stay
	// in Result.Trace). They are kept in memory while the relay runs, so
	// that writing files never delays a packet.
	Sink trace.Sink
	// SampleInterval is how often TCP_INFO is sampled; default the
	// scenario's trace.interval when it is sampled, else 5 ms.
	SampleInterval sim.Duration
	// MaxRateBps is the refusal threshold: the sum of the flows'
	// bottleneck rates may not exceed it. Zero: DefaultMaxRateBps.
	MaxRateBps int64
	// Capture keeps every TCP_INFO sample of every flow in
	// Result.Capture, for a TCP_INFO CSV (calibrate.WriteCSV).
	Capture bool
	// Pcap records the packets crossing the first flow's sender's TUN
	// device (headers, 128 bytes of each) into Result.Pcap.
	Pcap bool
	// CCState reads each sender's kernel CC state (BBR's rounds, mode and
	// counts; CUBIC's epoch) with bpftrace into the signals table, named
	// as the simulator's CC names its signals (ccstate_linux.go).
	CCState bool
}

// DefaultMaxRateBps is the real-time ceiling measured on the project's
// 2-core machine while other work loaded it (load average 15-20; README,
// "The real kernel beside the simulator"): one CUBIC flow's goodput matched the simulator's within
// 1% up to 200 Mbps and within 2% at 300 Mbps, fell 7% short at 400 Mbps
// (relay lateness p99 5 ms) and reached only 60% of 800 Mbps. Above it the
// relay falls behind its schedule and the kernels see a different path
// from the one configured.
const DefaultMaxRateBps = 300_000_000

// Result is an emulated run's summary and trace.
type Result struct {
	Summary Summary
	Trace   *trace.Recorder
	Capture []calibrate.Sample // with Options.Capture
	Pcap    []byte             // with Options.Pcap: a pcap file
}

// NamespacePrefix starts the name of every namespace a run creates; the
// process id follows, so concurrent runs do not collide and a run can
// remove what a killed earlier one left.
const NamespacePrefix = "ccscope-"

// defaultSample is how often a kernel run samples TCP_INFO when neither
// the options nor a sampled trace say: each sample is a getsockopt per
// flow on the relay's own thread.
const defaultSample = 5 * sim.Millisecond

// sampleInterval is the kernel run's TCP_INFO sampling interval: set, the
// sampled trace's, or defaultSample. Never 0: the relay's loop would then
// sample on every turn and fall behind its packets (compare turns a
// change trace into a sampled one with no interval of its own; such runs
// ran hundreds of milliseconds late).
func sampleInterval(set sim.Duration, t config.Trace) sim.Duration {
	switch {
	case set > 0:
		return set
	case t.Detail == config.TraceSampled && t.Interval > 0:
		return t.Interval
	}
	return defaultSample
}

// RecordedDetail is the detail a kernel run records its trace at: the
// scenario's, but a summary-only scenario is sampled (the relay's TCP_INFO
// samples are what the kernel side shows).
func RecordedDetail(t config.Trace) config.TraceDetail {
	if t.Detail == config.TraceSummary {
		return config.TraceSampled
	}
	return t.Detail
}
