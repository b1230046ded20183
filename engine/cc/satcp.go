// SaTCP (Cao et al., "SaTCP: Link-Layer Informed TCP Adaptation for Highly
// Dynamic LEO Satellite Networks", INFOCOM 2023): CUBIC told of predicted
// handovers by the link layer, so a disruption it was warned of does not cut
// the window. The rules come from the authors' code:
//
//   - handover_status. LeoEM's kernel CUBIC (XuyangCaoUCSD/LeoEM,
//     emulation_stage/satcp/tcp_cubic.c) reads a flag that a user-space relay
//     raises when a handover is predicted; the OMNeT++/INET port the LEO
//     paper's authors used (Avian688/satcp, SatcpFlavour.cc) keeps it up for
//     SATCP_DURATION = 2.3 s after the most recent announcement, each new
//     announcement restarting that timer (as the relay's report_relay.c
//     does). Here the announcement is EventHandover (see engine/changes.go).
//   - Faster recovery. bictcp_update: a new epoch that starts below W_max
//     while the flag is up uses K − 8K/9 instead of K, so the cubic climbs
//     back to W_max in a ninth of the time.
//   - No reset on timeout. bictcp_state: an RTO while the flag is up keeps
//     CUBIC's state (W_max, epoch, delay_min) instead of bictcp_reset.
//   - cwnd kept on timeout. The OMNeT++ port's processRexmitTimer leaves
//     cwnd and ssthresh as they were on an RTO inside the window; here the
//     set_state(TCP_CA_Loss) hook restores cwnd to its pre-loss value after
//     tcp_enter_loss cut it to inflight + 1.
//   - No multiplicative decrease. The paper describes SaTCP as freezing cwnd
//     through an announced disruption; neither public implementation routes
//     fast-recovery losses through the flag, so the simulator has to choose:
//     ssthresh returns the current cwnd inside the window (W_max and the
//     epoch untouched), and PRR then holds cwnd where it was.
//
// What the simulator assumes: the link layer's prediction is a scheduled
// change of the path with an "announce" lead (changes[i].announce); every
// flow whose route crosses that link receives EventHandover `lead` before
// the change. Announce with a lead below 2.3 s, or the window closes before
// the disruption arrives (as it would in LeoEM).
package cc

import "github.com/ccscope/ccscope/engine/sim"

// SaTCPDuration is SATCP_DURATION: how long a handover announcement keeps
// SaTCP's handover_status up.
const SaTCPDuration = 2300 * sim.Millisecond

func init() { Register("satcp", func() Algorithm { return newSaTCP() }) }

// saTCP is CUBIC with LeoEM's handover_status.
type saTCP struct {
	*Cubic
	handoverEnd sim.Time // handover_status is up while Now < handoverEnd
	announced   bool     // an announcement has arrived (handoverEnd is valid)
	frozenCwnd  uint32   // cwnd when a loss inside the window was seen
	freezes     uint32   // losses inside a window that left cwnd alone

	sig struct{ handover, frozenCwnd, freezes SignalID }
}

func newSaTCP() *saTCP { return &saTCP{Cubic: newCubic(DefaultCubicParams())} }

// Name returns "satcp".
func (s *saTCP) Name() string { return "satcp" }

// inHandover is handover_status at st.Now.
func (s *saTCP) inHandover(st *State) bool { return s.announced && st.Now < s.handoverEnd }

// Init follows cubictcp_init and defines SaTCP's own signals.
func (s *saTCP) Init(st *State) {
	s.Cubic.Init(st)
	sg := st.Signals
	s.sig.handover = sg.Define("handover", "bool", "handover_status: an announced disruption is under way (2.3 s from the latest announcement)")
	s.sig.frozenCwnd = sg.Define("frozen_cwnd", "pkts", "cwnd kept through the last loss inside a handover window")
	s.sig.freezes = sg.Define("freezes", "count", "losses inside a handover window that did not reduce cwnd")
	s.publish(st)
}

// CwndEvent takes handover announcements; other events go to CUBIC.
func (s *saTCP) CwndEvent(st *State, ev Event) {
	if ev != EventHandover {
		s.Cubic.CwndEvent(st, ev)
		s.publish(st)
		return
	}
	if !s.inHandover(st) {
		s.frozenCwnd = 0 // a new window; a refresh keeps the episode's cwnd
	}
	s.announced = true
	s.handoverEnd = st.Now + sim.Time(SaTCPDuration)
	s.publish(st)
}

// CongAvoid is cubictcp_cong_avoid with bictcp_update's shrunken K while
// the flag is up.
func (s *saTCP) CongAvoid(st *State, acked uint32) {
	s.Cubic.shrinkK = s.inHandover(st)
	s.Cubic.CongAvoid(st, acked)
	s.Cubic.shrinkK = false
	s.publish(st)
}

// SSThresh keeps the window inside an announced disruption; outside it is
// cubictcp_recalc_ssthresh.
func (s *saTCP) SSThresh(st *State) uint32 {
	if !s.inHandover(st) {
		return s.Cubic.SSThresh(st)
	}
	s.frozenCwnd = st.CwndPkts
	s.freezes++
	s.publish(st)
	return max(st.CwndPkts, 2)
}

// SetState follows LeoEM's bictcp_state: an RTO inside the window keeps
// CUBIC's state, and (as the OMNeT++ port does) cwnd.
func (s *saTCP) SetState(st *State, newState CAState) {
	if newState != CALoss || !s.inHandover(st) {
		s.Cubic.SetState(st, newState)
		s.publish(st)
		return
	}
	if s.frozenCwnd > 0 {
		st.CwndPkts = max(st.CwndPkts, min(s.frozenCwnd, st.CwndClampPkts))
	}
	s.publish(st)
}

func (s *saTCP) publish(st *State) {
	sg := st.Signals
	sg.Set(s.sig.handover, boolSignal(s.inHandover(st)))
	sg.Set(s.sig.frozenCwnd, float64(s.frozenCwnd))
	sg.Set(s.sig.freezes, float64(s.freezes))
}
