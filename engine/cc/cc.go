// Package cc is the congestion-control plug-in boundary, shaped like the
// Linux kernel's struct tcp_congestion_ops (include/net/tcp.h).
//
// An algorithm sees only an explicit *State — the fields of struct tcp_sock
// and struct sock the kernel's CCs read or write — never the sender itself.
// Windows are in packets (segments) as in the kernel, so the kernel's
// fixed-point arithmetic ports unchanged. The required hooks are the
// Algorithm interface; optional hooks are one-method interfaces detected once
// when a flow attaches its CC (see Hooks).
package cc

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// CAState is the sender's congestion-avoidance state (enum tcp_ca_state).
type CAState uint8

// The kernel's CA states, in its order.
const (
	CAOpen CAState = iota
	CADisorder
	CACWR
	CARecovery
	CALoss
)

var caStateNames = [...]string{"open", "disorder", "cwr", "recovery", "loss"}

// String returns the kernel's name for s without the TCP_CA_ prefix, lower case.
func (s CAState) String() string {
	if int(s) < len(caStateNames) {
		return caStateNames[s]
	}
	return fmt.Sprintf("CAState(%d)", uint8(s))
}

// Event is a cwnd event (enum tcp_ca_event).
type Event uint8

// The kernel's cwnd events.
const (
	EventTxStart     Event = iota // first transmit when no packets in flight
	EventCwndRestart              // congestion window restart after idle
	EventCompleteCWR              // end of congestion recovery
	EventLoss                     // loss timeout (RTO)
	EventECNNoCE                  // ECT set, but not CE marked
	EventECNIsCE                  // received CE marked IP packet
	// EventTLPRecovery is CA_EVENT_TLP_RECOVERY of the google/bbr v3
	// branch: an ACK beyond a loss probe's retransmission shows the probe
	// repaired a real loss (tcp_process_tlp_ack, just before the cwnd
	// reduction). Mainline has no such event; other CCs ignore it.
	EventTLPRecovery
	// EventHandover announces a predicted link disruption (a satellite
	// handover or route update) ahead of time. Linux has no such event:
	// SaTCP's kernel CUBIC (LeoEM, emulation_stage/satcp/tcp_cubic.c)
	// learns it through a netlink flag a user-space relay sets; the
	// simulator delivers it through the cwnd_event hook when a scheduled
	// change with an announce lead comes due (engine/changes.go). Other
	// CCs ignore it.
	EventHandover
)

// AckFlags are the flags of the in_ack_event hook (enum tcp_ca_ack_event_flags).
type AckFlags uint8

// The kernel's in_ack_event flags.
const (
	AckSlowPath  AckFlags = 1 << iota // in slow path processing
	AckWindowUpd                      // ACK updated the window
	AckECE                            // ECE bit is set on the ACK
)

// State is what a CC reads and writes of its flow: the congestion window and
// slow-start threshold it controls and the counters the kernel exposes to
// tcp_congestion_ops through tcp_sock. The sender owns it and refreshes the
// read-only fields before each hook.
type State struct {
	Now sim.Time // tcp_mstamp: the time of the ACK or event being processed
	// HZ is the kernel's CONFIG_HZ, whose ticks (jiffies) the CCs' coarse
	// clocks count; 0 means 1000.
	HZ uint32
	// Clock is where the kernel clock stood at time 0
	// (config.KernelClock): jiffies count Now + Clock.
	Clock sim.Duration

	CwndPkts      uint32 // snd_cwnd, written by the CC
	CwndCnt       uint32 // snd_cwnd_cnt: linear-increase counter, written by the CC
	CwndClampPkts uint32 // snd_cwnd_clamp
	SSThreshPkts  uint32 // snd_ssthresh, written by the CC (via SSThresh or directly)
	PriorCwndPkts uint32 // prior_cwnd: cwnd when recovery began

	MSS          units.Bytes // mss_cache
	InFlightPkts uint32      // tcp_packets_in_flight()
	CwndLimited  bool        // tcp_is_cwnd_limited()
	// IsCwndLimited is the raw tp->is_cwnd_limited that tcp_cwnd_validate
	// keeps (the last window was used fully), without tcp_is_cwnd_limited's
	// slow-start allowance; the google/bbr v3 branch reads it.
	IsCwndLimited bool
	// TLPOrigDataAppLimited is tp->tlp_orig_data_app_limited (google/bbr
	// v3 branch): whether the segment the last loss probe retransmitted was
	// sent app-limited.
	TLPOrigDataAppLimited bool
	Delivered             uint32 // delivered: packets delivered so far, incl. retransmits
	DeliveredCE           uint32 // delivered_ce: of those, CE-marked
	Lost                  uint32 // lost: packets marked lost so far
	// AppLimited is app_limited: nonzero while the application limits
	// sending. BBR also writes it in PROBE_RTT, so the sampler treats that
	// low-inflight interval as app-limited; the sender reads it back after
	// CongControl.
	AppLimited     uint32
	SRTT           sim.Duration // tp->srtt_us / 8, exact: srtt_us counts eighths of a µs, 125 ns each
	MinRTT         sim.Duration // tcp_min_rtt(): windowed min RTT, 0 before the first sample
	CA             CAState
	ECNOk          bool   // ECN negotiated on this connection
	SndUna, SndNxt uint64 // byte sequence numbers (not wrapped) for per-window logic
	LastAckSeq     uint64 // cumulative ACK of the ACK being processed
	SackedOut      uint32 // sacked_out: packets SACKed (Reno: dupacks counted) above snd_una
	// RcvTSVal and RcvTSEcr are rx_opt.rcv_tsval and rcv_tsecr, the
	// timestamp option of the ACK being processed (the echo in the
	// sender's own clock), and TSNow is tcp_time_stamp_ts(tp), the
	// sender's timestamp clock at that ACK, in ms. TCP-LP reads them.
	RcvTSVal, RcvTSEcr, TSNow uint32
	// EnterCWR is set by an algorithm inside CongAvoid to call
	// tcp_enter_cwr, as tcp_cdg.c's delay backoff does: when the hook
	// returns, the sender enters CWR (its ssthresh hook then gives the
	// reduced window) and clears the flag.
	EnterCWR bool

	// DeliveredTime is delivered_mstamp: when Delivered last grew (the
	// ACK time of the most recent delivery), which BBR times its phases by.
	DeliveredTime sim.Time
	// NextDepartureTime is tcp_wstamp_ns: the earliest departure time the
	// pacer has set for the next packet; at or before Now when the sender
	// may transmit immediately.
	NextDepartureTime sim.Time
	// ECNLow is TCP_ECN_LOW (google/bbr v3 branch): the route declares
	// shallow-threshold CE marking, so BBRv3 may treat CE as congestion.
	ECNLow bool

	// PacingRate is sk_pacing_rate. The sender sets it from cwnd and srtt
	// (tcp_update_pacing_rate) unless the algorithm implements CongController,
	// in which case the algorithm sets it.
	PacingRate units.BitRate
	// GSOMaxSegs caps a TSO/GSO chunk, in segments (sk_gso_max_segs analogue).
	GSOMaxSegs uint32
	// Paced is sk_pacing_status != SK_PACING_NONE: the flow's packets are
	// paced (internal pacing or an fq qdisc). HyStart reads it. An
	// algorithm that needs pacing sets it in Init (SK_PACING_NEEDED, as
	// BBR and Prague do), and the sender then paces the flow even with its
	// pacing switch off.
	Paced bool
	// LastSend is lsndtime: when data was last sent. When EventTxStart fires
	// it still holds the send before the idle period (CUBIC reads it).
	LastSend sim.Time

	// Signals records the algorithm's internal variables. Never nil once the
	// flow attaches the algorithm; recording may be off.
	Signals *Signals
}

// AckSample is struct ack_sample, given to PktsAcked.
type AckSample struct {
	PktsAcked uint32
	RTT       sim.Duration // negative when the ACK gave no RTT sample
	// InFlightBytes is in_flight: mss_cache·(delivered − prior_delivered),
	// the bytes delivered while the most recently sent of the packets this
	// ACK delivered was out (6.x's estimate of what was in flight when it
	// left); mss_cache·delivered when the ACK delivered none. u32, as the
	// kernel's. TCP-NV reads it.
	InFlightBytes uint32
}

// RateSample is struct rate_sample (tcp_rate.c), given to CongControl.
type RateSample struct {
	PriorTime         sim.Time     // prior_mstamp: start of the sampling interval
	PriorDelivered    uint32       // delivered count at PriorTime
	PriorDeliveredCE  uint32       // delivered_ce count at PriorTime
	Delivered         int32        // packets delivered over the interval; -1 if no sample
	DeliveredCE       int32        // CE-marked packets delivered over the interval
	Interval          sim.Duration // sampling interval; -1 if no sample
	SendInterval      sim.Duration // snd_interval_us
	RecvInterval      sim.Duration // rcv_interval_us
	RTT               sim.Duration // RTT of the last (s)acked packet; -1 if none
	Losses            uint32       // packets newly marked lost on this ACK
	AckedSacked       uint32       // packets newly (s)acked on this ACK
	PriorInFlightPkts uint32       // in flight before this ACK
	LastEndSeq        uint64       // end seq of the most recently (s)acked packet
	IsAppLimited      bool
	IsRetrans         bool // sample taken from a retransmitted packet
	IsAckDelayed      bool // the ACK may have been delayed

	// The fields below exist in the google/bbr v3 branch's struct
	// rate_sample, not in mainline. They describe the packet that set
	// PriorDelivered (the most recently sent of those this ACK delivered).

	// TxInFlight is tx_in_flight: packets in flight just after that packet
	// was sent, counting itself.
	TxInFlight uint32
	// Lost is lost: State.Lost now minus State.Lost when that packet was
	// sent, i.e. packets marked lost while it was in flight.
	Lost uint32
	// IsECE is is_ece: this ACK carried ECE (the receiver echoed CE).
	IsECE bool
	// IsAckingTLPRetransSeq is is_acking_tlp_retrans_seq: this ACK covers
	// the sequence a TLP retransmitted.
	IsAckingTLPRetransSeq bool
}

// LostPacket is what the skb_marked_lost hook reads of an skb the sender
// just marked lost (its tcp_skb_cb tx fields). The sender adds its segments
// to State.Lost before calling the hook.
type LostPacket struct {
	PCount       uint32 // tcp_skb_pcount: segments in the skb
	TxInFlight   uint32 // tx.in_flight: in flight just after it was sent, counting the whole skb
	TxLost       uint32 // tx.lost: State.Lost when it was sent
	TxAppLimited bool   // tx.is_app_limited
}

// Algorithm is the required part of tcp_congestion_ops.
type Algorithm interface {
	// Name is the algorithm's name as scenarios select it.
	Name() string
	// SSThresh returns the slow-start threshold after a loss (ssthresh hook).
	// It must not change State; the sender stores the result.
	SSThresh(st *State) uint32
	// CongAvoid grows the window on an ACK that acked this many packets
	// (cong_avoid hook). Not called when the algorithm is a CongController.
	CongAvoid(st *State, acked uint32)
	// UndoCwnd returns the window to restore after a spurious reduction
	// (undo_cwnd hook).
	UndoCwnd(st *State) uint32
}

// Initer is the init hook: called once when the flow attaches the algorithm,
// and where the algorithm defines its signals.
type Initer interface{ Init(st *State) }

// Releaser is the release hook, called when the flow ends.
type Releaser interface{ Release(st *State) }

// StateSetter is the set_state hook, called before CA changes to newState.
type StateSetter interface {
	SetState(st *State, newState CAState)
}

// CwndEventer is the cwnd_event hook.
type CwndEventer interface{ CwndEvent(st *State, ev Event) }

// InAckEventer is the in_ack_event hook.
type InAckEventer interface {
	InAckEvent(st *State, flags AckFlags)
}

// PktsAckeder is the pkts_acked hook, called on every ACK that acks data.
type PktsAckeder interface{ PktsAcked(st *State, s AckSample) }

// CongController is the cong_control hook: an algorithm that implements it
// takes over window and pacing-rate control from cong_avoid and the sender's
// default pacing (as BBR does).
type CongController interface {
	CongControl(st *State, rs *RateSample)
}

// MinTSOSegser is the min_tso_segs hook.
type MinTSOSegser interface{ MinTSOSegs(st *State) uint32 }

// TSOSegser is the tso_segs hook (google/bbr v3 branch): how many segments
// of mss bytes the algorithm wants in one TSO/GSO burst, replacing the
// sender's tcp_tso_autosize.
type TSOSegser interface {
	TSOSegs(st *State, mss units.Bytes) uint32
}

// SndBufExpander is the sndbuf_expand hook: how many windows of cwnd
// segments tcp_sndbuf_expand provisions in the send buffer (2 without it).
type SndBufExpander interface{ SndBufExpand() uint32 }

// LossMarker is the skb_marked_lost hook (google/bbr v3 branch), called
// once for each skb the sender marks lost, a TSO chunk (or what a split
// left of it) as one.
type LossMarker interface {
	SkbMarkedLost(st *State, p LostPacket)
}

// ECNCodepoint is implemented by algorithms that want their data packets
// to carry a particular ECN codepoint once ECN is negotiated (the kernel's
// TCP_CONG_WANTS_ECT_1 flag): Prague returns packet.ECT1, the L4S
// identifier. A sender uses ECT(0) for an algorithm without it.
type ECNCodepoint interface{ ECNCodepoint() packet.ECN }

// Fallbacker is implemented by algorithms whose init may hand the flow to
// another algorithm, as the kernel's dctcp_init and prague_init switch
// icsk_ca_ops to a Reno table when ECN was not negotiated. The sender calls
// Fallback once, right after the init hook; a non-nil result replaces the
// algorithm: the sender resolves its hooks anew and does not call the
// replacement's init hook (the kernel does not either).
type Fallbacker interface{ Fallback() Algorithm }

// Seeder is implemented by algorithms that draw random numbers (the
// kernel's get_random_u32_below in BBR). The flow calls Seed once, before
// Init, with its own stream derived from the run seed and a stable name; an
// algorithm that is never seeded uses a fixed stream, so runs stay
// deterministic either way.
type Seeder interface{ Seed(r *rand.Rand) }

// Hooks is an Algorithm with its optional hooks resolved once, so the sender
// pays one nil check per call instead of a type assertion.
type Hooks struct {
	Algorithm
	Init        Initer
	Release     Releaser
	SetState    StateSetter
	CwndEvent   CwndEventer
	InAckEvent  InAckEventer
	PktsAcked   PktsAckeder
	CongControl CongController
	MinTSOSegs  MinTSOSegser
	TSOSegs     TSOSegser
	SndBuf      SndBufExpander
	MarkedLost  LossMarker
	Seed        Seeder
	ECN         ECNCodepoint
	Fallback    Fallbacker
}

// Resolve detects a's optional hooks.
func Resolve(a Algorithm) Hooks {
	h := Hooks{Algorithm: a}
	h.Init, _ = a.(Initer)
	h.Release, _ = a.(Releaser)
	h.SetState, _ = a.(StateSetter)
	h.CwndEvent, _ = a.(CwndEventer)
	h.InAckEvent, _ = a.(InAckEventer)
	h.PktsAcked, _ = a.(PktsAckeder)
	h.CongControl, _ = a.(CongController)
	h.MinTSOSegs, _ = a.(MinTSOSegser)
	h.TSOSegs, _ = a.(TSOSegser)
	h.SndBuf, _ = a.(SndBufExpander)
	h.MarkedLost, _ = a.(LossMarker)
	h.Seed, _ = a.(Seeder)
	h.ECN, _ = a.(ECNCodepoint)
	h.Fallback, _ = a.(Fallbacker)
	return h
}

// Factory makes a fresh instance of an algorithm for one flow.
type Factory func() Algorithm

var registry = map[string]Factory{}

// Register adds an algorithm under name. It panics on a duplicate name,
// since registration happens at package init.
func Register(name string, f Factory) {
	if _, dup := registry[name]; dup {
		panic("cc: duplicate algorithm " + name)
	}
	registry[name] = f
}

// New returns a fresh instance of the named algorithm.
func New(name string) (Algorithm, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("cc: unknown algorithm %q; known: %v", name, Names())
	}
	return f(), nil
}

// Names lists the registered algorithms in sorted order.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
