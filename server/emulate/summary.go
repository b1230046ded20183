// Package emulate runs a scenario on this machine's Linux TCP stack instead
// of the simulated one: each endpoint is a network namespace, each flow a
// real TCP socket between two of them, and every link the engine's own link
// direction, qdisc and impairment code (engine/topo, engine/link,
// engine/qdisc) driven in real time by one event loop that relays packets
// between the namespaces' TUN devices. Its output has the shapes of a
// simulated run — the same summary and trace tables — so the two compare
// line by line. It is Linux-only and needs root; the engine stays free of
// OS networking.
package emulate

import (
	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
)

// Summary is an emulated run's report: the fields of a simulated run's
// summary (engine.Summary, whose digest is empty here: a run on real
// kernels does not replay) plus what makes a kernel run interpretable.
type Summary struct {
	Mode string `json:"mode"` // "emulate"
	engine.Summary
	// Receivers are the flows' receiver-side milestones, in flow order.
	Receivers []ReceiverMilestones `json:"receivers"`
	// Kernel is the running kernel's release (uname -r).
	Kernel string `json:"kernel"`
	// Sysctls are the values set in every namespace, by namespace (node id).
	Sysctls map[string]map[string]string `json:"sysctls"`
	// Lateness is how late the relay wrote packets against the times the
	// engine scheduled them for.
	Lateness Lateness `json:"lateness"`
	// Realtime says whether the relay ran in the SCHED_FIFO class.
	Realtime bool `json:"realtime"`
	// Foreign counts packets the relay could not place (not IPv4, or for
	// no endpoint); they are dropped.
	Foreign uint64 `json:"foreign_packets"`
	// Notes name, by field, what the kernel run takes differently from the
	// scenario (a receiver's gro_interval), and say when the relay ran
	// late (lateness over LateWarn at p99); nil when nothing.
	Notes []string `json:"notes,omitempty"`
}

// LateWarn is the relay's lateness at the 99th percentile above which a
// run's summary carries a note that the kernel run was disturbed.
const LateWarn = sim.Millisecond

// Lateness summarises actual minus scheduled send times, in ps.
type Lateness struct {
	Packets uint64 `json:"packets"`
	P50Ps   *int64 `json:"p50_ps"`
	P99Ps   *int64 `json:"p99_ps"`
	MaxPs   int64  `json:"max_ps"`
}

// ReceiverMilestones are times measured at a flow's receiving application:
// when its first payload byte arrived (since the run started), and how long
// from then until 1, 10 and 100 MB (decimal) had arrived; null where not
// reached.
type ReceiverMilestones struct {
	ID        string `json:"id"`
	FirstByte *int64 `json:"first_byte_ps"`
	T1MBPs    *int64 `json:"t_1MB_ps"`
	T10MBPs   *int64 `json:"t_10MB_ps"`
	T100MBPs  *int64 `json:"t_100MB_ps"`
}

// milestoneBytes are the receiver-side milestones, in bytes (decimal MB).
var milestoneBytes = [3]int64{1_000_000, 10_000_000, 100_000_000}
