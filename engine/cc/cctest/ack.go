package cctest

import (
	"fmt"
	"slices"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
)

// ACK is what one incoming ACK tells the sender, in packets. The packets
// it marks lost come first in transmission order (the holes), then the ones
// it acks or SACKs.
type ACK struct {
	Lost  uint32 // oldest outstanding transmissions this ACK marks lost
	Acked uint32 // the next oldest, newly acked or SACKed
	CE    uint32 // of the acked packets, how many were CE-marked
	ECE   bool   // the ACK echoes congestion (ECN-Echo)
}

// Ack acks or SACKs the n oldest outstanding packets.
func (c *Conn) Ack(n uint32) { c.OnACK(ACK{Acked: n}) }

// Lose processes an ACK that marks the n oldest outstanding packets lost and
// SACKs the next one, as the first SACK above a hole does.
func (c *Conn) Lose(n uint32) { c.OnACK(ACK{Lost: n, Acked: 1}) }

// OnACK processes one ACK in tcp_ack's order (see the package comment).
func (c *Conn) OnACK(a ACK) {
	st := &c.St
	if n := a.Lost + a.Acked; int(n) > len(c.out) {
		panic(fmt.Sprintf("cctest: ACK of %d packets with %d outstanding", n, len(c.out)))
	}
	priorInFlight, priorUna := st.InFlightPkts, c.una
	lost := c.out[:a.Lost]
	acked := c.out[a.Lost : a.Lost+a.Acked]
	c.out = c.out[a.Lost+a.Acked:]

	// tcp_clean_rtx_queue: deliver, take the RTT of the newest packet
	// (none if it was a retransmission: Karn), then pkts_acked.
	var newest *packet
	for i := range acked {
		p := &acked[i]
		c.done[p.seq-c.una] = true
		if p.retrans {
			c.retransOut--
		}
		st.InFlightPkts--
		c.rate.Delivered++
		newest = p
	}
	c.rate.DeliveredCE += a.CE
	st.Delivered, st.DeliveredCE = c.rate.Delivered, c.rate.DeliveredCE
	for len(c.done) > 0 && c.done[0] {
		c.done = c.done[1:]
		c.una++
	}
	rtt := sim.Duration(-1)
	if newest != nil && !newest.retrans {
		rtt = st.Now.Sub(newest.sent)
		c.updateRTT(rtt)
	}
	c.refresh()
	st.LastAckSeq = st.SndUna
	if c.Hooks.PktsAcked != nil && a.Acked > 0 {
		// in_flight: delivered since the newest acked packet left (its
		// tx snapshot is tcp_rate_skb_delivered's prior_delivered).
		var priorDelivered uint32
		if newest != nil {
			priorDelivered = newest.tx.Delivered
		}
		c.Hooks.PktsAcked.PktsAcked(st, cc.AckSample{PktsAcked: a.Acked, RTT: rtt,
			InFlightBytes: uint32(st.MSS) * (c.rate.Delivered - priorDelivered)})
	}

	c.inAckEvent(a, c.una > priorUna)
	c.fastRetransAlert(lost, a.ECE)
	rs := c.rateSample(acked, a, priorInFlight, rtt)
	c.congControl(a, &rs, c.una > priorUna)
}

// inAckEvent follows tcp_in_ack_event, which mainline calls after the
// delivered counters are updated. An in-order ACK that advances snd_una
// takes the fast path (a window update); anything else, including every
// ECE, the slow path.
func (c *Conn) inAckEvent(a ACK, unaAdvanced bool) {
	if c.Hooks.InAckEvent == nil {
		return
	}
	var flags cc.AckFlags
	if unaAdvanced && a.Lost == 0 && !a.ECE {
		flags = cc.AckWindowUpd
	} else {
		flags = cc.AckSlowPath
		if a.ECE {
			flags |= cc.AckECE
		}
	}
	c.Hooks.InAckEvent.InAckEvent(&c.St, flags)
}

// fastRetransAlert follows tcp_fastretrans_alert's steps D (leave a state
// once high_seq is acked) and E (mark losses, enter Recovery or CWR).
func (c *Conn) fastRetransAlert(lost []packet, ece bool) {
	st := &c.St
	if ece {
		c.priorSSThresh = 0 // step A: no undo of an ECN reduction
	}
	if st.CA != cc.CAOpen && c.una >= c.highSeq {
		switch st.CA {
		case cc.CACWR:
			if c.una != c.highSeq {
				c.endCwndReduction()
				c.setState(cc.CAOpen)
			}
		case cc.CARecovery:
			// tcp_try_undo_recovery (no undo) opens, then
			// tcp_end_cwnd_reduction sets cwnd = ssthresh.
			c.setState(cc.CAOpen)
			c.endCwndReduction()
		case cc.CALoss:
			c.setState(cc.CAOpen) // tcp_process_loss: recovered
		}
	}
	for _, p := range lost {
		c.rtx = append(c.rtx, p.seq)
		if p.retrans {
			c.retransOut--
		}
		st.InFlightPkts--
		st.Lost++
	}
	switch {
	case st.CA == cc.CARecovery || st.CA == cc.CALoss:
	case len(lost) > 0:
		c.enterRecovery(ece)
	case ece:
		c.enterCWR()
	}
}

// enterRecovery follows tcp_enter_recovery.
func (c *Conn) enterRecovery(ece bool) {
	c.priorSSThresh = 0
	c.undoMarker = true // tcp_init_undo
	if !c.inCwndReduction() {
		if !ece {
			c.priorSSThresh = cc.CurrentSSThresh(&c.St)
		}
		c.initCwndReduction()
	}
	c.setState(cc.CARecovery)
}

// enterCWR follows tcp_enter_cwr.
func (c *Conn) enterCWR() {
	c.priorSSThresh = 0
	if c.St.CA < cc.CACWR {
		c.undoMarker = false
		c.initCwndReduction()
		c.setState(cc.CACWR)
	}
}

// initCwndReduction follows tcp_init_cwnd_reduction: remember the window,
// reset PRR and ask the algorithm for ssthresh.
func (c *Conn) initCwndReduction() {
	st := &c.St
	c.highSeq = c.next
	st.CwndCnt = 0
	st.PriorCwndPkts = st.CwndPkts
	c.prr.Start()
	c.refresh()
	st.SSThreshPkts = c.Hooks.SSThresh(st)
}

// endCwndReduction runs tcp_end_cwnd_reduction (cc.EndCwndReduction).
func (c *Conn) endCwndReduction() {
	cc.EndCwndReduction(&c.St, &c.Hooks, cc.UndoMarked(c.undoMarker), c.event)
}

// congControl follows tcp_cong_control.
func (c *Conn) congControl(a ACK, rs *cc.RateSample, unaAdvanced bool) {
	st := &c.St
	c.refresh()
	switch {
	case c.Hooks.CongControl != nil:
		c.Hooks.CongControl.CongControl(st, rs)
		return
	case c.inCwndReduction():
		c.prr.CwndReduction(st, st.InFlightPkts, cc.PRRAck{
			NewlyAckedSacked: int32(a.Acked),
			NewlyLost:        int32(a.Lost),
			UnaAdvanced:      unaAdvanced,
		})
	case a.Acked > 0:
		c.Hooks.CongAvoid(st, a.Acked)
		if st.EnterCWR { // the CC called tcp_enter_cwr (CDG's backoff)
			st.EnterCWR = false
			c.enterCWR()
		}
	}
	c.updatePacingRate()
}

// Timeout fires the retransmission timer: tcp_enter_loss after
// tcp_timeout_mark_lost marked everything outstanding lost.
func (c *Conn) Timeout() {
	st := &c.St
	for _, p := range c.out {
		c.rtx = append(c.rtx, p.seq)
		st.Lost++
	}
	slices.Sort(c.rtx)
	c.out = c.out[:0]
	st.InFlightPkts, c.retransOut = 0, 0
	if st.CA <= cc.CADisorder || c.highSeq <= c.una {
		c.priorSSThresh = cc.CurrentSSThresh(&c.St)
		st.PriorCwndPkts = st.CwndPkts
		c.refresh()
		st.SSThreshPkts = c.Hooks.SSThresh(st)
		c.event(cc.EventLoss)
		c.undoMarker = true
	}
	st.CwndPkts = st.InFlightPkts + 1
	st.CwndCnt = 0
	c.setState(cc.CALoss)
	c.highSeq = c.next
}

// Undo reverts the current reduction as spurious (a DSACK or timestamps
// proved the loss was not one): tcp_undo_cwnd_reduction, then Open.
func (c *Conn) Undo() {
	st := &c.St
	if c.priorSSThresh != 0 {
		c.refresh()
		st.CwndPkts = c.Hooks.UndoCwnd(st)
		st.SSThreshPkts = max(st.SSThreshPkts, c.priorSSThresh)
	}
	c.undoMarker = false
	c.setState(cc.CAOpen)
}

// updateRTT is tcp_rtt_estimator's srtt (gain 1/8) plus a plain minimum.
func (c *Conn) updateRTT(rtt sim.Duration) {
	m := max(uint64(rtt/sim.Microsecond), 1)
	if c.srttUS == 0 {
		c.srttUS = m
	} else {
		c.srttUS = uint64(int64(c.srttUS) + (int64(m)-int64(c.srttUS))/8)
	}
	c.St.SRTT = sim.Duration(c.srttUS) * sim.Microsecond
	if c.St.MinRTT == 0 || rtt < c.St.MinRTT {
		c.St.MinRTT = rtt
	}
}

// rateSample runs tcp_rate.c (cc.RateState): tcp_rate_skb_delivered on each
// packet the ACK delivered, then, after the loss marking as in tcp_ack,
// tcp_rate_gen.
func (c *Conn) rateSample(acked []packet, a ACK, priorInFlight uint32, rtt sim.Duration) cc.RateSample {
	st := &c.St
	rs := cc.RateSample{RTT: rtt, PriorInFlightPkts: priorInFlight}
	hasPrior := false
	for i := range acked {
		p := &acked[i]
		skb := cc.RateSkb{Sent: p.sent, EndSeq: (p.seq + 1) * uint64(st.MSS), Retrans: p.retrans}
		c.rate.SkbDelivered(&p.tx, skb, &rs, &hasPrior)
	}
	c.rate.Gen(st.Now, cc.RateAck{
		Delivered: a.Acked, Lost: a.Lost, TotalLost: st.Lost,
		HasPrior: hasPrior, MinRTTUs: int64(st.MinRTT / sim.Microsecond),
	}, &rs)
	return rs
}

// updatePacingRate runs tcp_update_pacing_rate (cc.PacingRate). The
// harness keeps srtt unscaled, so srtt<<3 loses nothing; unlike the kernel
// it leaves the rate alone before the first RTT sample.
func (c *Conn) updatePacingRate() {
	if c.srttUS == 0 {
		return
	}
	c.St.PacingRate = cc.PacingRate(&c.St, uint32(c.next-c.una), int64(c.srttUS<<3))
}
