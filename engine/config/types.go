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
	FIFO    QdiscKind = iota
	CoDel             // sch_codel
	FQCoDel           // sch_fq_codel
	DualPI2           // sch_dualpi2 (RFC 9332)
	FQ                // sch_fq, a host's pacing qdisc
)

// Qdisc configures a direction's egress queue. Each kind reads only its own
// parameters; the parser rejects the others and fills in the kind's kernel
// defaults (see the Default* constants).
type Qdisc struct {
	Kind  QdiscKind
	Limit QueueLimit
	// ECNThreshold (fifo) CE-marks ECN-capable packets arriving to a queue
	// at least this long: a step marker, RED with min = max = K and
	// probability 1 as DCTCP deployments configure it. Zero: no marking.
	ECNThreshold QueueLimit

	// Target is CoDel's and FQ-CoDel's sojourn target, or DualPI2's PI2
	// target queueing delay.
	Target   sim.Duration
	Interval sim.Duration // CoDel, FQ-CoDel
	ECN      bool         // CoDel, FQ-CoDel: mark ECT packets instead of dropping
	// CEThreshold (CoDel, FQ-CoDel) CE-marks ECT packets whose sojourn
	// exceeds it, whatever the control law says; zero: off.
	CEThreshold sim.Duration
	Flows       int64       // FQ-CoDel hash buckets
	Quantum     units.Bytes // FQ-CoDel, FQ: DRR quantum

	TUpdate       sim.Duration // DualPI2: PI2 update interval
	StepThreshold sim.Duration // DualPI2: L-queue sojourn that CE-marks
	Coupling      int64        // DualPI2: k in p_L = k·p'
	CProtection   int64        // DualPI2: classic queue's WRR weight in %

	InitialQuantum units.Bytes  // FQ: credit of a new flow
	FlowLimit      int64        // FQ: packets per flow
	Horizon        sim.Duration // FQ: packets departing later are dropped
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
	ECN        ECNField    // codepoint of every packet, default NotECT

	App AppPattern
	TCP TCPOptions
	// Rcv is the receive path at the destination: receive hold, ACK hold
	// and ACK grant models (TCP flows only).
	Rcv RcvPath
}

// ECNField is the IP ECN codepoint a pump puts on its packets (RFC 3168;
// ECT(1) identifies L4S traffic, RFC 9331).
type ECNField uint8

// ECN codepoints a pump can send.
const (
	NotECT ECNField = iota
	ECT0
	ECT1
)

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

// Pacing is a flow's pacing switch: "auto" (the default), true or false.
type Pacing uint8

// Pacing modes.
const (
	// PacingAuto follows the kernel: a flow is paced when its CC asks for
	// it (sk_pacing_status = SK_PACING_NEEDED, as BBR and Prague set; TCP
	// then paces internally, tcp_needs_internal_pacing) or when its
	// sending host's egress qdisc is fq (which sets SK_PACING_FQ and
	// enforces TCP's EDT timestamps). Otherwise, as CUBIC, Reno and DCTCP
	// on a stock host, it sends unpaced TSO-sized bursts.
	PacingAuto Pacing = iota
	PacingOn          // always paced, as if the host ran fq
	PacingOff         // never paced, unless the CC needs pacing
)

// TCPOptions are a TCP flow's mechanism switches and sizes. Every switch
// defaults to on (as on a Linux host) except ECN and ECNLow; Pacing
// defaults to PacingAuto.
type TCPOptions struct {
	SACK, RACK, TLP, PRR, FRTO, TSO, GRO, DelayedAck, ECN bool

	// Pacing chooses internal pacing; see PacingAuto.
	Pacing Pacing

	// ECNLow is the route feature ecn_low of the google/bbr v3 branch
	// (RTAX_FEATURE_ECN_LOW, which sets TCP_ECN_LOW on an ECN connection):
	// the path CE-marks at a shallow threshold and both ends echo CE
	// precisely, so BBRv3 may respond to ECN. Default false.
	ECNLow bool

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
