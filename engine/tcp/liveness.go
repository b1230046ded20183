package tcp

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// LivenessViolation, when set, is called whenever a sender ends an event
// in a state that can never make progress: a flow with data in flight, or
// data to send, or more data to come, and no timer that will wake it (the
// event queue would run dry while the application still has data). It is
// a test hook: releases leave it nil, and a nil hook costs one predictable
// branch per sender event. Set it before any run starts (TestMain), never
// while runs are in progress.
var LivenessViolation func(flow int32, now sim.Time, what string)

// checkLiveness tests the liveness invariant at the end of a sender event.
func (d *DataSender) checkLiveness() {
	if what := d.livenessFault(); what != "" {
		LivenessViolation(d.cfg.Flow, d.st.Now, what)
	}
}

// livenessFault describes how the sender's state breaks the invariant, or
// returns "" when it holds:
//   - before the connection starts the application timer is armed;
//   - during the handshake the SYN timer is armed;
//   - once established, until a sized flow is fully acknowledged: data in
//     flight has a write timer (RTO, loss probe or reordering timer); data
//     written but unsent has the write timer (persist) or the pacing timer;
//     an application with data to write (greedy, or on) has some queued,
//     and one that writes later (rate, off) has its timer; a proxy's
//     relay-fed leg may wait for its relay.
func (d *DataSender) livenessFault() string {
	switch d.state {
	case sndClosed:
		if !d.appTimer.Armed() {
			return "not started and no start timer"
		}
		return ""
	case sndSynSent:
		if !d.xmitTimer.t.Armed() {
			return "SYN sent and no SYN timer"
		}
		return ""
	case sndFailed:
		return ""
	}
	if d.endSeq > 0 && d.sndUna >= d.endSeq {
		return ""
	}
	armed := d.xmitTimer.t.Armed()
	if armed != (d.pending != timeNone) {
		return fmt.Sprintf("write timer armed=%v but pending=%d", armed, d.pending)
	}
	state := func() string {
		return fmt.Sprintf("ca=%d cwnd=%d snd_una=%d snd_nxt=%d write_seq=%d snd_wnd=%d packets_out=%d in_flight=%d",
			d.st.CA, d.st.CwndPkts, d.sndUna, d.sndNxt, d.writeSeq, d.sndWnd, d.sb.packetsOut(), d.sb.inFlight())
	}
	switch {
	case d.sb.packetsOut() > 0:
		if !armed {
			return "data in flight and no write timer: " + state()
		}
	case d.writeSeq > d.sndNxt:
		if !armed && !d.paceTimer.Armed() {
			return "unsent data, nothing in flight and no write or pacing timer: " + state()
		}
	case d.cfg.Relay != nil:
		// A proxy's relay-fed leg waits for the other leg's data, whose
		// own sender keeps the invariant; Feed sends as soon as it comes.
	case d.cfg.App.Kind == config.Greedy || d.cfg.App.Kind == config.OnOff && d.appOn:
		// An application with data to write always has some queued.
		return "the application has data but none is queued, nothing in flight: " + state()
	default:
		if !d.appTimer.Armed() {
			return "more data to come and no application timer: " + state()
		}
	}
	return ""
}
