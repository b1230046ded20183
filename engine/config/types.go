package config

import (
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Scenario is a validated scenario. Everything the engine needs to build a
// run is here; nothing is left as a string to parse later.
type Scenario struct {
	Name        string
	Description string
	Runtime     Runtime
	Nodes       []Node
	Links       []Link
	Flows       []Flow
	Changes     []Change
	Trace       Trace
}

// Runtime holds the run's seed and length.
type Runtime struct {
	Seed     uint64
	Duration sim.Duration // the run stops at this simulated time
}

// NodeKind is what a node does.
type NodeKind uint8

// Node kinds.
const (
	Endpoint NodeKind = iota // hosts flows
	Router                   // forwards on shortest-path routes
)

// Node is one vertex of the topology.
type Node struct {
	ID   string
	Kind NodeKind
}

// Link joins nodes A and B. AB is the direction from A to B, BA the reverse;
// values given on the link itself apply to both directions unless a direction
// overrides them.
type Link struct {
	ID     string
	A, B   string
	AB, BA Direction
}

// Direction is one direction of a link: egress qdisc at the sending node,
// serialisation at Rate, propagation Delay, then impairments.
type Direction struct {
	Rate   units.BitRate
	Delay  sim.Duration
	Qdisc  Qdisc
	Loss   Loss
	Jitter Jitter
}

// QdiscKind selects a queueing discipline.
type QdiscKind uint8

// Queueing disciplines.
const (
	FIFO QdiscKind = iota
	CoDel
)

// Qdisc configures a direction's egress queue.
type Qdisc struct {
	Kind  QdiscKind
	Limit QueueLimit
	// CoDel parameters (sch_codel defaults: 5 ms target, 100 ms interval,
	// ECN off).
	Target   sim.Duration
	Interval sim.Duration
	ECN      bool
}

// QueueLimit bounds a queue in bytes, packets or bandwidth-delay products.
// Exactly one of the three is set. A BDP limit is resolved by the topology
// from the direction's rate and the base RTT of the path through it.
type QueueLimit struct {
	Bytes     units.Bytes
	Packets   int64
	MilliBDPs int64 // "1BDP" = 1000, "0.5BDP" = 500
}

// LossKind selects a loss model.
type LossKind uint8

// Loss models.
const (
	NoLoss LossKind = iota
	Bernoulli
)

// Loss configures random loss. P is a probability in [0, 1].
type Loss struct {
	Kind LossKind
	P    float64
}

// JitterKind selects a jitter model.
type JitterKind uint8

// Jitter models.
const (
	NoJitter JitterKind = iota
	Gaussian            // mean 0, Sigma; truncated so delay stays ≥ propagation delay
)

// Jitter configures extra per-packet delay. Order on the link is preserved.
type Jitter struct {
	Kind  JitterKind
	Sigma sim.Duration
}

// Flow is one transfer from Src to Dst.
type Flow struct {
	ID    string
	Src   string
	Dst   string
	CC    string       // "pump" for a constant-rate flow, else a TCP CC name
	Start sim.Duration // first send, relative to the start of the run
	Size  units.Bytes  // payload bytes to transfer; 0 = bulk (unbounded)

	// Pump: constant-rate flow of fixed-size packets.
	Rate       units.BitRate
	PacketSize units.Bytes // wire bytes per packet, default 1500

	App AppPattern
	TCP TCPOptions
}

// AppKind is how the application offers data to a TCP flow.
type AppKind uint8

// Application patterns.
const (
	Greedy  AppKind = iota // always has data (up to Size)
	AppRate                // writes at a fixed Rate
	OnOff                  // greedy for On, silent for Off, repeating
)

// AppPattern configures the sending application.
type AppPattern struct {
	Kind    AppKind
	Rate    units.BitRate
	On, Off sim.Duration
}

// TCPOptions are a TCP flow's mechanism switches and sizes. Every switch
// defaults to on (as on a Linux host) except ECN.
type TCPOptions struct {
	SACK, RACK, TLP, PRR, FRTO, Pacing, TSO, GRO, DelayedAck, ECN bool

	MSS         units.Bytes  // payload bytes per segment, default 1448
	InitCwnd    uint32       // packets, default 10
	SndBuf      units.Bytes  // send-buffer ceiling, default 4 MB; 0 = unlimited
	RcvBufInit  units.Bytes  // initial receive window, default 128 KiB (tcp_rmem[1])
	RcvBufMax   units.Bytes  // autotuning ceiling, default 6 MiB (tcp_rmem[2])
	GROInterval sim.Duration // coalescing interval, default 0 (back-to-back only)
}

// Change is a scheduled change of a link direction at time At. Nil fields
// keep their value.
type Change struct {
	At    sim.Duration
	Link  string
	Dir   string // "ab" or "ba"
	Rate  *units.BitRate
	Delay *sim.Duration
	Loss  *Loss
}

// TraceDetail is how much a run records.
type TraceDetail uint8

// Trace detail levels.
const (
	TraceSummary TraceDetail = iota // summary only
	TraceSampled                    // state sampled every Interval
	TraceChange                     // every change
)

// Trace configures recording.
type Trace struct {
	Detail   TraceDetail
	Interval sim.Duration // for TraceSampled
}
