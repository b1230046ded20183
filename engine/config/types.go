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
	Flows       []Flow  // groups expanded in place
	Groups      []Group // as written, for the canonical form and summaries
	Changes     []Change
	Trace       Trace
}

// Runtime holds the run's seed and length.
type Runtime struct {
	Seed     uint64
	Duration sim.Duration // the run stops at this simulated time
	// KernelClock is where the hosts' kernel clock stands at t = 0.
	KernelClock KernelClock
}

// KernelClock is where the kernel clock the hosts share (jiffies, whose
// ticks the TCP timers' wheel and the CCs' jiffies stamps count, and the
// millisecond timestamp clock) stands when the run starts. They share one,
// as the network namespaces of an emulated testbed share one kernel's.
type KernelClock uint8

// Kernel clock settings.
const (
	// ClockRandom: the clock stands at a whole number of microseconds drawn
	// from the stream "runtime/clock", as a kernel's stands wherever its
	// uptime puts it when a run starts.
	ClockRandom KernelClock = iota
	// ClockAligned: the clock reads zero at t = 0, so ticks fall on
	// multiples of the tick from the run's start (the simulator until
	// 2026-12-07, and what hand-worked timelines assume).
	ClockAligned
)

// NodeKind is what a node does.
type NodeKind uint8

// Node kinds.
const (
	Endpoint NodeKind = iota // hosts flows
	Router                   // forwards on shortest-path routes
	Switch                   // L2: forwards by learned source addresses, floods until learned
	Proxy                    // splits the TCP flows routed through it; forwards the rest as a router
)

// Routing is how a router picks among equal-cost next hops.
type Routing uint8

// Routing modes.
const (
	RouteFirst Routing = iota // the first found: lower node index, then link order
	RouteECMP                 // a seeded hash of the flow's 5-tuple
	RouteSpray                // a seeded random choice per packet
)

// Node is one vertex of the topology.
type Node struct {
	ID      string
	Kind    NodeKind
	Routing Routing     // routers only
	Buffer  units.Bytes // proxies only: the relay buffer between a flow's two legs
	Group   string      // the flow group that created this per-flow host, if any
}

// Link joins nodes A and B. AB is the direction from A to B, BA the reverse;
// values given on the link itself apply to both directions unless a direction
// overrides them.
type Link struct {
	ID     string
	A, B   string
	AB, BA Direction
	Group  string // the flow group that created this access link, if any
}

// Direction is one direction of a link: egress qdisc at the sending node,
// serialisation at Rate, propagation Delay, then impairments.
type Direction struct {
	Rate  units.BitRate
	Delay sim.Duration
	// Overhead is what the rate (or capacity process) serialises of each
	// packet beyond its IP bytes: a link header, as tc's and netem's
	// packet overhead count it (14 B for Ethernet's, which netem and tbf
	// on a veth or Ethernet device charge; 38 B with the FCS, preamble and
	// gap of Ethernet on the wire). 0 by default: IP bytes only.
	Overhead units.Bytes
	Qdisc    Qdisc
	Loss     Loss
	// Duplicate is the fraction of packets the direction sends twice, as
	// netem's duplicate: the copy goes first and meets loss, queue and
	// jitter as any packet. 0 by default.
	Duplicate float64
	Jitter    Jitter
	Capacity  *Capacity  // nil: a constant Rate
	Trace     *TraceLink // nil: no trace; else it replaces Rate
	Outages   *Outages   // nil: always up
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
	PIE               // sch_pie (RFC 8033)
	FQPIE             // sch_fq_pie
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

	// Target is CoDel's and FQ-CoDel's sojourn target, or DualPI2's and
	// PIE's target queueing delay.
	Target   sim.Duration
	Interval sim.Duration // CoDel, FQ-CoDel
	ECN      bool         // CoDel, FQ-CoDel, PIE: mark ECT packets instead of dropping
	// CEThreshold (CoDel, FQ-CoDel) CE-marks ECT packets whose sojourn
	// exceeds it, whatever the control law says; zero: off.
	CEThreshold sim.Duration
	Flows       int64       // FQ-CoDel hash buckets
	Quantum     units.Bytes // FQ-CoDel, FQ: DRR quantum

	TUpdate       sim.Duration // DualPI2, PIE: probability update interval
	StepThreshold sim.Duration // DualPI2: L-queue sojourn that CE-marks
	Coupling      int64        // DualPI2: k in p_L = k·p'
	CProtection   int64        // DualPI2: classic queue's WRR weight in %

	Alpha, Beta     int64 // PIE: the PI gains in 1/16 Hz, 0..32 (tc pie's alpha and beta)
	ECNProb         int64 // FQ-PIE: the probability in percent up to which ECT packets are marked
	ByteMode        bool  // PIE: scale the drop probability by packet size
	DQRateEstimator bool  // PIE: queue delay by Little's law on a measured drain rate

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
	NoLoss         LossKind = iota
	Bernoulli               // each packet lost with probability P
	GilbertElliott          // two-state Markov chain stepped once per packet
	Periodic                // every Every-th packet lost
	BernoulliTrain          // trains of mean length TrainLength start with probability P
)

// LossPosition is where on the direction a loss model drops.
type LossPosition uint8

// Loss positions.
const (
	// LossPre drops as the packet enters the direction, before the qdisc,
	// as netem does: the lost packet takes neither queue space nor link time.
	LossPre LossPosition = iota
	// LossPost drops after serialisation (Mahimahi's mm-loss outside
	// mm-link, an ns-3 error model on the receiving device): the lost packet
	// used queue space and link time.
	LossPost
)

// Loss configures random loss. Each kind reads only its own parameters;
// probabilities are in [0, 1].
type Loss struct {
	Kind     LossKind
	Position LossPosition
	// P is bernoulli's loss probability, or bernoulli_train's probability
	// that a packet outside a train starts one.
	P float64
	// Gilbert-Elliott: P(good→bad) and P(bad→good) per packet, and the loss
	// probability in each state.
	PGB, PBG, LossGood, LossBad float64
	Every                       int64   // periodic: the Every-th, 2·Every-th, ... packets are lost
	TrainLength                 float64 // bernoulli_train: mean train length in packets, ≥ 1
}

// JitterKind selects a jitter model.
type JitterKind uint8

// Jitter models.
const (
	NoJitter    JitterKind = iota
	Gaussian               // N(0, Sigma); Clamp decides what a negative delay becomes
	Uniform                // U[Min, Max]
	Pareto                 // Scale·U^(-1/Shape), capped at Cap when Cap > 0
	Burst                  // Extra delay for packets arriving in [k·Period, k·Period+Length)
	WiFiTXOP               // delivered in TXOPs every Interval, BurstSize per TXOP, spread |N(0, Sigma)|
	LTESubframe            // arrivals quantised up to the next multiple of Period (1 ms)
	NR5G                   // arrivals quantised up to the next multiple of Period (a slot, 0.5 ms)
	Reorder                // a fraction P of packets held back by Delay (netem's reorder 1 − P)
)

// JitterClamp is what a Gaussian draw that would make the one-way delay
// negative becomes.
type JitterClamp uint8

// Gaussian clamps.
const (
	ClampRedraw JitterClamp = iota // draw again until delay + X ≥ 0
	ClampZero                      // max(0, X): mean 0.399σ, never below the delay
	// ClampTotal is max(−delay, X): the one-way delay delay + X clamped at
	// 0, as netem's (a packet whose drawn delay is negative leaves at once).
	ClampTotal
)

// JitterOrder is whether jitter may reorder packets.
type JitterOrder uint8

// Jitter orders.
const (
	// OrderFIFO: a delayed packet holds back the ones behind it; a link never
	// reorders.
	OrderFIFO JitterOrder = iota
	// OrderReorder: every packet keeps its own delivery time and later ones
	// overtake it, as Linux netem's delay jitter does.
	OrderReorder
)

// Jitter configures extra per-packet delay. Each kind reads only its own
// parameters.
type Jitter struct {
	Kind  JitterKind
	Order JitterOrder
	Clamp JitterClamp // gaussian
	// Sigma is gaussian's standard deviation, or wifi_txop's within-burst σ.
	Sigma    sim.Duration
	Min, Max sim.Duration // uniform
	Scale    sim.Duration // pareto: the minimum (x_m)
	Shape    float64      // pareto: tail index α > 0
	Cap      sim.Duration // pareto: upper bound, 0 = none
	// Period is burst's period, or lte_subframe's and 5g_nr's quantum.
	Period    sim.Duration
	Length    sim.Duration // burst: length of a burst
	Extra     sim.Duration // burst: extra delay inside a burst
	Interval  sim.Duration // wifi_txop: time between TXOPs
	BurstSize int64        // wifi_txop: packets delivered per TXOP
	P         float64      // reorder: fraction of packets held back
	Delay     sim.Duration // reorder: how long a held-back packet is held
}

// Capacity is a dwell process on a direction's service rate: the direction
// stays in state i for an exponential time of mean States[i].Dwell, then
// moves to state j with probability Transitions[i][j]. It starts in state 0.
type Capacity struct {
	States      []CapacityState
	Transitions [][]float64
	Dips        *CapacityDips  // optional heavy-tailed dips
	Grant       *CapacityGrant // optional demand-responsive grant ramp
}

// CapacityState is one rate of a capacity process.
type CapacityState struct {
	Rate  units.BitRate
	Dwell sim.Duration // mean dwell time
}

// CapacityDips are rate dips starting at Poisson times of mean gap Every,
// each lasting a Pareto(Scale, Shape) time capped at Cap, during which the
// rate is Depth times the state's.
type CapacityDips struct {
	Every sim.Duration
	Depth float64
	Scale sim.Duration
	Shape float64
	Cap   sim.Duration
}

// CapacityGrant is a radio scheduler's grant ramp: when the direction starts
// serving after being idle it gets Start times the rate, growing linearly to
// the full rate over Ramp of continuous backlog.
type CapacityGrant struct {
	Start float64
	Ramp  sim.Duration
}

// Outages are windows in which a direction serves nothing: a list and a
// periodic form (Every > 0), both optional.
type Outages struct {
	Windows []OutageWindow
	// Periodic: down for Duration at Start, Start+Every, Start+2·Every, ...
	Start, Every, Duration sim.Duration
	// DropOnOutage drops what arrives while the direction is down instead of
	// queueing it.
	DropOnOutage bool
}

// OutageWindow is one outage.
type OutageWindow struct {
	At, Duration sim.Duration
}

// TraceLink is a Mahimahi trace driving a direction's rate: Opportunities
// are the milliseconds at which one 1500-byte delivery opportunity occurs.
type TraceLink struct {
	SHA256        string // hex SHA-256 of the normalised trace text (Text)
	Loop          bool
	Opportunities []uint64
}

// Flow is one transfer from Src to Dst.
type Flow struct {
	ID    string
	Group string // the group this flow was expanded from, if any
	Src   string
	Dst   string
	Start sim.Duration // first send, relative to the start of the run
	Size  units.Bytes  // payload bytes to transfer; 0 = bulk (unbounded)

	// The flow's CC and endpoints' settings: the flows of a group share
	// their group's (88 bytes a flow rather than 264, for groups of
	// thousands). Shared, they are read-only once parsed: a flow that
	// needs other settings points at a copy of them.
	*Params
}

// Params are a flow's CC and the settings of its endpoints.
type Params struct {
	CC string // "pump" for a constant-rate flow, else a TCP CC name

	// Pump: constant-rate flow of fixed-size packets.
	Rate       units.BitRate
	PacketSize units.Bytes // wire bytes per packet, default 1500
	ECN        ECNField    // codepoint of every packet, default NotECT

	// Ping: one echo request of PacketSize bytes every Interval.
	Interval sim.Duration

	// CCParams are the CC's module parameters set by the flow, under the
	// kernel's names (tcp_cubic's beta, hystart, …) and in its units; nil
	// when none are, and the kernel's defaults hold.
	CCParams map[string]int64

	App AppPattern
	TCP TCPOptions
	// Rcv is the receive path at the destination: receive hold, ACK hold
	// and ACK grant models (TCP flows only).
	Rcv RcvPath
	// Legs are the CC and TCP options of the two legs of a flow split by a
	// proxy on its path: leg 0 from Src to the proxy, leg 1 from the proxy
	// to Dst. Nil (no "legs" given): both take the flow's own. A pointer,
	// as few flows have legs and a group's flows are many.
	Legs *[2]Leg
}

// Leg is one leg of a flow split by a proxy.
type Leg struct {
	CC       string
	CCParams map[string]int64
	TCP      TCPOptions
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
	// Write is what a greedy application writes per call (send or write),
	// 0 for DefaultAppWrite. The kernel checks for an app-limited gap once
	// per call (tcp_sendmsg_locked), so the size sets where a flow held by
	// its send buffer can be marked app-limited.
	Write units.Bytes
}

// A greedy application's write per call: 1 MiB by default, as the
// emulator's writer (iperf3 writes 128 KiB), and at most MaxAppWrite.
const (
	DefaultAppWrite = units.MiB
	MaxAppWrite     = 16 * units.MiB
)

// WriteSize is the application's write per call, the default filled in.
func (a AppPattern) WriteSize() units.Bytes {
	if a.Write == 0 {
		return DefaultAppWrite
	}
	return a.Write
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
	SndBuf      units.Bytes  // send-buffer ceiling, default 4 MiB; 0 = unlimited
	RcvBufInit  units.Bytes  // initial receive window, default 128 KiB (tcp_rmem[1])
	RcvBufMax   units.Bytes  // autotuning ceiling, default 32 MiB (tcp_rmem[2])
	GROInterval sim.Duration // coalescing interval, default 0 (back-to-back only)

	// HZ is the kernel's CONFIG_HZ: its timers tick 1/HZ s apart, and the
	// delayed-ACK, loss-probe, reordering and RTO timers and the CCs' clocks
	// (CUBIC's epoch, BBR's min_rtt stamp) count in those ticks. One of 100,
	// 250, 300 or 1000 (the default); Debian's kernels run 250, Arch's 300.
	HZ int

	// Timestamps is sysctl tcp_timestamps: 1 (the default) stamps each
	// connection's timestamps with a random offset (secure_tcp_ts_off),
	// 2 with none. Only the peer's offset shows, in rcv_tsval, which of
	// the CCs only TCP-LP reads.
	Timestamps int
}

// Change is a scheduled change of a link direction at time At. Nil fields
// keep their value.
type Change struct {
	At       sim.Duration
	Link     string
	Dir      string // "ab" or "ba"
	Rate     *units.BitRate
	Delay    *sim.Duration
	Loss     *Loss
	Jitter   *Jitter
	Capacity *Capacity
	Outage   *sim.Duration // the direction goes down at At for this long
	// Duplicate replaces the direction's duplicate fraction.
	Duplicate *float64
	// Announce, when set, is the lead with which the link layer predicts
	// this change: at At − Announce every flow whose route crosses the
	// link hears of it (cc.EventHandover; SaTCP acts on it).
	Announce *sim.Duration
}

// TraceDetail is how much a run records.
type TraceDetail uint8

// Trace detail levels.
const (
	TraceSummary TraceDetail = iota // summary only
	TraceSampled                    // state sampled every Interval
	TraceChange                     // every change
)

// String is the detail's name in the scenario format.
func (d TraceDetail) String() string { return nameOf(traceDetails, d) }

// Trace configures recording.
type Trace struct {
	Detail   TraceDetail
	Interval sim.Duration // for TraceSampled
}
