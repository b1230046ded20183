package engine

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/pump"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rcvpath"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// tcpFlow is a TCP flow: a sender at its source node and a receiver at its
// destination.
type tcpFlow struct {
	cfg  *config.Flow // the scenario's: a flow keeps no copy
	idx  int32
	run  *Run
	snd  *tcp.DataSender
	rcv  *tcp.Receiver
	done sim.Time // when the receiver had all of a sized flow; 0 if not

	milestones pump.Milestones
	delivered  units.Bytes
	delivSmp   trace.DeliverySampler

	// The receive-path models (nil when not configured) and their counts;
	// rcvModels are the first models of the data and the ACK path, whose
	// held packets a release frees (rcvpath.Discard).
	ackHold   *rcvpath.AckHold
	rcvPath   *rcvpath.Stats
	rcvModels []rcvpath.Sink

	// A group's flow is built at its start and released when done
	// (groupflows.go): owned are the sim registrations of its ends.
	owned sim.Owned

	// A leg of a flow split by a proxy (proxy.go): leg 0 ends in the
	// proxy's held receiver, leg 1 starts at its relay-fed sender.
	relay *proxyRelay
	leg   int
}

// echoMode is how the receiver of flow f feeds back CE marks: DCTCP's
// per-packet echo, AccECN for Prague, else RFC 3168.
//
// BBRv3 (and bbrb, which is its code) on an ecn_low route echoes as DCTCP
// does. In the google/bbr v3 branch the receiving socket's bbr_cwnd_event
// handles CA_EVENT_ECN_IS_CE / CA_EVENT_ECN_NO_CE with tcp_dctcp.h's
// dctcp_ece_ack_update when bbr_can_use_ecn (TCP_ECN_OK and TCP_ECN_LOW)
// and bbr_precise_ece_ack hold; tcp_bbr_cong_ops sets
// TCP_CONG_WANTS_CE_EVENTS so that __tcp_ecn_check_ce (tcp_input.c)
// raises those events without TCP_CONG_NEEDS_ECN ("net-tcp: add new ca
// opts flag TCP_CONG_WANTS_CE_EVENTS"). The route feature's commit ("tcp:
// introduce per-route feature RTAX_FEATURE_ECN_LOW") defines it as CE marks
// at a low threshold plus ACKs whose ECE echoes the CE status of all the
// data they newly acknowledge. The same branch sets TCP_ECN_ECT_PERMANENT
// in bbr_init when bbr_can_use_ecn, keeping retransmissions ECT, which the
// sender does for any echo mode but classic.
func echoMode(f config.Flow) tcp.EchoMode {
	switch f.CC {
	case "dctcp":
		return tcp.EchoDCTCP
	case "prague":
		return tcp.EchoAccECN
	case "bbr3", "bbrb":
		if f.TCP.ECN && f.TCP.ECNLow {
			return tcp.EchoDCTCP
		}
	}
	return tcp.EchoClassic
}

// ReceiverRunsCC reports whether flow f's simulated receiver echoes CE as
// its CC's receiving end does (DCTCP's per-packet echo, Prague's AccECN),
// not as RFC 3168's: a kernel run then needs the CC at the listener too,
// as hosts running DCTCP or Prague set it at both ends.
func ReceiverRunsCC(f config.Flow) bool { return echoMode(f) != tcp.EchoClassic }

// needsECN reports whether the CC requires ECN whatever the options say
// (TCP_CONG_NEEDS_ECN in the kernel).
func needsECN(ccName string) bool { return ccName == "dctcp" || ccName == "prague" }

// newTCPFlow builds flow f's two ends and attaches them to their nodes; a
// group's flow only checks its CC, and is built when it starts.
func (r *Run) newTCPFlow(idx int32, f *config.Flow) (*tcpFlow, error) {
	t := &tcpFlow{cfg: f, idx: idx, run: r}
	if lazy(f) {
		if _, err := cc.NewWith(f.CC, f.CCParams); err != nil {
			return nil, err
		}
		return t, nil
	}
	return t, t.build()
}

// build creates the flow's two ends and attaches them to their nodes.
func (t *tcpFlow) build() error {
	r, f, idx := t.run, t.cfg, t.idx
	alg, err := cc.NewWith(f.CC, f.CCParams)
	if err != nil {
		return err
	}
	if lazy(f) {
		r.Sim.Own(&t.owned)
	}
	src, dst := r.Net.Node(f.Src), r.Net.Node(f.Dst)
	ecn := f.TCP.ECN || needsECN(f.CC)
	echo := echoMode(*f)
	opts := f.TCP
	opts.ECN = ecn
	t.snd = tcp.NewSender(r.Sim, r.Pool, src, r.Trace, tcp.SenderConfig{
		Flow: idx, Node: src.Index, Peer: dst.Index, Opts: opts, CC: alg,
		RNG: rng.Stream(r.Scenario.Runtime.Seed, "flow/"+f.ID+"/cc"),
		ECN: ecn, Echo: echo, Start: sim.Time(f.Start), Size: f.Size, App: f.App,
		HostFQ:       r.egressFQ(src.Index, dst.Index),
		Relay:        t.relayFeed(),
		Recycler:     r.recycler(f),
		PeerTSOffset: peerTSOffset(r.Scenario.Runtime.Seed, f.ID, opts),
		Clock:        r.clock,
	})
	t.rcv = tcp.NewReceiver(r.Sim, r.Pool, t.ackPath(src.Index, dst), r.Trace, tcp.ReceiverConfig{
		Flow: idx, Node: dst.Index, Peer: src.Index, Opts: opts, Echo: echo,
		Clock: r.clock, DataReady: t.relayReady(),
	})
	in := t.dataPath()
	r.Sim.Own(nil)
	switch {
	case lazy(f):
		src.Attach(idx, senderEnd{t})
	case t.relay != nil && t.leg == 1:
		src.Attach(idx, relaySender{t})
	default:
		src.Attach(idx, t.snd)
	}
	if t.relay != nil && t.leg == 0 {
		dst.Attach(idx, t.rcv)
	} else {
		dst.Attach(idx, in)
	}
	return nil
}

// ackPath builds the grant and the ACK hold of the flow's receive path
// (config.RcvPath), from the node up, and returns what the receiver sends
// through: dst itself when neither is configured. A flow without
// receive-path models builds nothing and registers nothing with the
// simulation, so other runs are unchanged.
func (t *tcpFlow) ackPath(src int32, dst *topo.Node) tcp.Sender {
	r := t.run
	if !t.cfg.Rcv.On() {
		return dst
	}
	t.rcvPath = &rcvpath.Stats{}
	var bottleneck units.BitRate
	if t.cfg.Rcv.AckHold != nil {
		bottleneck = r.Net.Bottleneck(src, dst.Index)
	}
	out, hold := AckPath(r.Sim, r.Pool, r.Scenario.Runtime.Seed, t.cfg, bottleneck, t.rcvPath, dst)
	t.ackHold = hold
	t.rcvModels = append(t.rcvModels, out)
	return out
}

// AckPath builds flow f's ACK-side receive-path models (config.RcvPath) in
// front of out: the grant, then the ACK hold before it, each registered
// with s and drawing from its own stream of seed ("flow/<id>/ack_grant",
// "flow/<id>/ack_hold"). It returns what the receiver sends through (out
// itself when neither is configured) and the ACK hold (nil if none), which
// must hear of the flow's data arriving at the receiver (NoteArrival).
// bottleneck is the path's rate, of which the hold's saturation is a
// fraction (read only with an ACK hold). The emulator builds the same
// models around a kernel's receiver (server/emulate).
func AckPath(s *sim.Sim, pool *packet.Pool, seed uint64, f *config.Flow, bottleneck units.BitRate,
	stats *rcvpath.Stats, out rcvpath.Sink) (rcvpath.Sink, *rcvpath.AckHold) {
	rp, id := f.Rcv, f.ID
	if g := rp.Grant; g != nil {
		out = rcvpath.NewGrant(s, pool, "flow "+id+" ack_grant", rcvpath.GrantConfig{
			Gap: g.Gap, PerGrant: int(g.PerGrant), Loss: g.Loss, Filter: g.Filter, Slot: g.Slot,
			RNG: rng.Stream(seed, "flow/"+id+"/ack_grant"), Stats: stats,
		}, out)
	}
	var hold *rcvpath.AckHold
	if h := rp.AckHold; h != nil {
		hold = rcvpath.NewAckHold(s, pool, "flow "+id+" ack_hold", rcvpath.AckHoldConfig{
			Quantiles: h.Quantiles, Window: h.Window,
			Threshold: units.BitRate(float64(bottleneck) * h.Saturation),
			RNG:       rng.Stream(seed, "flow/"+id+"/ack_hold"), Stats: stats,
		}, out)
		out = hold
	}
	return out, hold
}

// dataPath returns what the destination node delivers the flow's packets
// to: the receiver, behind the receive hold if one is configured.
func (t *tcpFlow) dataPath() link.Receiver {
	if h := RcvHold(t.run.Sim, t.cfg, tcpDelivery{t}); h != nil {
		t.rcvModels = append(t.rcvModels, h)
		return h
	}
	return tcpDelivery{t}
}

// RcvHold returns flow f's receive hold (config.RcvPath.Hold) in front of
// to, registered with s; nil when the flow has none.
func RcvHold(s *sim.Sim, f *config.Flow, to rcvpath.Sink) *rcvpath.Hold {
	if d := f.Rcv.Hold; d > 0 {
		return rcvpath.NewHold(s, "flow "+f.ID+" rcv_hold", d, to)
	}
	return nil
}

// egressFQ reports whether packets from node src to dst leave src through
// an fq qdisc: the host paces its TCP flows by EDT as Linux with fq does.
func (r *Run) egressFQ(src, dst int32) bool {
	path := r.Net.Path(src, dst)
	if len(path) == 0 {
		return false
	}
	_, ok := path[0].Qdisc().(*qdisc.FQ)
	return ok
}

// tcpDelivery is the receiving node's hook for a TCP flow: it hands packets
// to the receiver and notes what reached the application.
type tcpDelivery struct{ t *tcpFlow }

// Receive passes id to the receiver and records delivery progress.
func (h tcpDelivery) Receive(id packet.ID) {
	t := h.t
	if t.ackHold != nil {
		t.ackHold.NoteArrival(t.run.Pool.Get(id).Size)
	}
	t.rcv.Receive(id)
	t.noteDelivered()
}

// noteDelivered records what the receiving application has read.
func (t *tcpFlow) noteDelivered() {
	got := t.rcv.BytesDelivered()
	if got == t.delivered {
		return
	}
	now := t.run.Sim.Now()
	t.milestones.Note(t.delivered, got, now, t.snd.Stats.FirstSend)
	t.delivered = got
	if t.cfg.Size > 0 && got >= t.cfg.Size && t.done == 0 {
		t.done = now
		t.delivSmp.Force() // a sampled trace keeps the row of the last byte
	}
	if t.run.Trace.On() {
		t.run.Trace.RecordDelivery(&t.delivSmp, now, t.idx, int64(got))
	}
}

// Send is Receive, for the receive hold that stands in front of it.
func (h tcpDelivery) Send(id packet.ID) { h.Receive(id) }

// Summary reports the flow. bytes_sent counts payload bytes handed to the
// network, retransmissions included; bytes_delivered is in-order payload
// the receiving application got; goodput is delivered bytes over the time
// from the first data segment sent to completion (or now).
func (t *tcpFlow) Summary(now sim.Time) FlowSummary {
	if t.snd == nil { // a group's flow that has not started
		return FlowSummary{ID: t.cfg.ID, Kind: "tcp", CC: t.cfg.CC, CCParams: t.cfg.CCParams}
	}
	s := t.liveSummary(now)
	s.CCFinal = t.snd.CCFinal()
	return s
}

// liveSummary is Summary of a flow whose ends exist, but its CC's values.
func (t *tcpFlow) liveSummary(now sim.Time) FlowSummary {
	st := &t.snd.Stats
	delivered := t.rcv.BytesDelivered()
	s := FlowSummary{ID: t.cfg.ID, Kind: "tcp", CC: t.cfg.CC, CCParams: t.cfg.CCParams, BytesSent: int64(st.BytesSent),
		BytesDelivered: int64(delivered), Retransmits: ptr(int64(st.Retransmits)),
		T10MBPs: milestone(t.milestones.T10MB), T100MBPs: milestone(t.milestones.T100MB),
		RTTP50Ps: quantile(&st.RTT, 0.5), RTTP99Ps: quantile(&st.RTT, 0.99), RcvPath: t.rcvPath}
	if st.Started {
		s.GoodputBps = Goodput(delivered, st.FirstSend, t.done, now)
	}
	if (t.cfg.Group != "" || t.relay != nil && t.relay.group) && t.done != 0 {
		s.FCTPs = ptr(int64(t.done.Sub(sim.Time(t.cfg.Start))))
	}
	if st.Aborted != tcp.NotAborted {
		s.AbortedPs, s.AbortReason = ptr(int64(st.AbortedAt)), st.Aborted.String()
	}
	return s
}

// Announce tells the flow's CC of a predicted path event (cc.EventHandover),
// if the flow is running: a group's flow that has not started has no CC yet.
func (t *tcpFlow) Announce(ev cc.Event) {
	if t.snd != nil {
		t.snd.CAEvent(ev)
	}
}

// Act applies a flow action: cwnd sets snd_cwnd at once (the CC may change
// it again on the next ACK), and before the connection is up it is held as
// its initial window (tcp.DataSender.SetCwnd), so that the handshake's end
// does not undo it; pacing_rate overrides the pacing rate until an action
// sets it to 0, which returns control to the CC and the sender.
func (t *tcpFlow) Act(a Action) error {
	if t.snd == nil {
		return notRunning(t.cfg)
	}
	if a.CwndPkts == nil && a.PacingRate == nil {
		return fmt.Errorf("engine: action on flow %q sets nothing (cwnd or pacing_rate)", t.cfg.ID)
	}
	if a.CwndPkts != nil && *a.CwndPkts == 0 {
		return fmt.Errorf("engine: action.cwnd: 0 packets; give at least 1")
	}
	if a.PacingRate != nil && *a.PacingRate < 0 {
		return fmt.Errorf("engine: action.pacing_rate: %d bps is negative", *a.PacingRate)
	}
	if a.CwndPkts != nil {
		t.snd.SetCwnd(*a.CwndPkts)
	}
	if a.PacingRate != nil {
		t.snd.SetPacingRate(*a.PacingRate)
	}
	return nil
}

// observe returns the sender's state and the receiver's in-order bytes.
func (t *tcpFlow) observe() (trace.FlowRow, units.Bytes) {
	return t.snd.Snapshot(), t.rcv.BytesDelivered()
}

// TCPEnds returns flow i's TCP sender and receiver, or ok false when flow i
// is not a TCP flow. Tests use them to read the sender's state as a run
// goes on (engine/cc/cctest's one-link driver, for one).
func (r *Run) TCPEnds(i int) (snd *tcp.DataSender, rcv *tcp.Receiver, ok bool) {
	t, ok := r.Flows[i].(*tcpFlow)
	if !ok {
		return nil, nil, false
	}
	return t.snd, t.rcv, true
}

// peerTSOffset is the offset the flow's receiver adds to its timestamps:
// with tcp_timestamps 1 a keyed hash of the addresses (secure_tcp_ts_off),
// a uniform u32 drawn here from the flow's own stream; with 2, none.
func peerTSOffset(seed uint64, id string, o config.TCPOptions) uint32 {
	if o.Timestamps != 1 {
		return 0
	}
	return uint32(rng.PCG(seed, "flow/"+id+"/ts_offset").Uint64() >> 32)
}

// kernelClock is where the kernel clock stands at time 0
// (config.KernelClock): a whole number of microseconds, so that the
// microsecond stamps (tcp_mstamp), which read the run's time, differ from
// that clock by whole microseconds; below 2^27 µs (134 s, many times the
// coarsest timer-wheel bucket a TCP timer meets, 4.096 s); drawn from the
// stream runtime/clock; zero when the run's clock is aligned.
func kernelClock(rt config.Runtime) sim.Duration {
	if rt.KernelClock == config.ClockAligned {
		return 0
	}
	return sim.Duration(rng.PCG(rt.Seed, "runtime/clock").Uint64()>>37) * sim.Microsecond
}
