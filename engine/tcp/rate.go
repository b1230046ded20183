package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
)

// rateState is the connection-level delivery-rate state of tcp_rate.c.
type rateState struct {
	delivered      uint32   // tp->delivered
	deliveredCE    uint32   // tp->delivered_ce
	deliveredAt    sim.Time // tp->delivered_mstamp
	firstTx        sim.Time // tp->first_tx_mstamp
	appLimited     uint32   // tp->app_limited: delivered mark of the bubble's end, 0 if none
	rateDelivered  uint32   // tp->rate_delivered
	rateInterval   sim.Duration
	rateAppLimited bool
	priorLost      uint32 // rs->prior_lost (BBRv3): tx.lost of the sample's segment
}

// skbSent follows tcp_rate_skb_sent: snapshot the delivery state into the
// segment so its (s)ack can produce a rate sample. packetsOut is the count
// before this transmission; inFlight (in flight just after it, itself
// included) and lost are the google/bbr v3 branch's tx.in_flight and
// tx.lost.
func (r *rateState) skbSent(s *txSeg, packetsOut, inFlight, lost uint32) {
	if packetsOut == 0 {
		// Nothing in flight: the sampling interval starts now.
		r.firstTx = s.sent
		r.deliveredAt = s.sent
	}
	s.firstTx = r.firstTx
	s.delivAt = r.deliveredAt
	s.delivered = r.delivered
	s.deliveredCE = r.deliveredCE
	s.appLimited = r.appLimited != 0
	s.rateValid = true
	s.txInFlight = inFlight
	s.txLost = lost
}

// skbDelivered follows tcp_rate_skb_delivered: the most recently sent of the
// segments an ACK (s)acks supplies the sample's prior state.
func (r *rateState) skbDelivered(s *txSeg, rs *cc.RateSample, hasPrior *bool) {
	if !s.rateValid {
		return
	}
	if rs.PriorDelivered == 0 || sentAfter(s.sent, r.firstTx, s.end, rs.LastEndSeq) {
		rs.PriorDelivered = s.delivered
		rs.PriorDeliveredCE = s.deliveredCE
		rs.PriorTime = s.delivAt
		*hasPrior = true
		rs.IsAppLimited = s.appLimited
		rs.IsRetrans = s.flags&flagRetrans != 0
		rs.LastEndSeq = s.end
		rs.TxInFlight = s.txInFlight
		r.priorLost = s.txLost
		rs.Interval = s.sent.Sub(s.firstTx) // the send phase of this window
		r.firstTx = s.sent
	}
	// A sacked segment must not supply a second sample when it is
	// cumulatively acked later.
	if s.flags&flagSacked != 0 {
		s.rateValid = false
	}
}

// gen follows tcp_rate_gen: finish the sample of one ACK that newly
// delivered `delivered` packets and marked `lost` lost. hasPrior tells
// whether some (s)acked segment supplied prior state (the kernel tests
// prior_mstamp != 0; time 0 is a valid instant here).
func (r *rateState) gen(now sim.Time, delivered, lost, totalLost uint32, hasPrior bool, minRTTUs int64, rs *cc.RateSample) {
	if r.appLimited != 0 && int32(r.delivered-r.appLimited) > 0 {
		r.appLimited = 0 // the app-limited bubble has been acked
	}
	if delivered != 0 {
		r.deliveredAt = now
	}
	rs.AckedSacked = delivered
	rs.Losses = lost
	if !hasPrior {
		rs.Delivered, rs.Interval = -1, -1
		return
	}
	rs.Delivered = int32(r.delivered - rs.PriorDelivered)
	rs.DeliveredCE = int32(r.deliveredCE - rs.PriorDeliveredCE)
	rs.Lost = totalLost - r.priorLost // BBRv3: lost while the sample's segment was out
	// Sending and acking are separate pipeline phases of a window; ACK
	// compression can make the ACK phase shorter, so take the longer.
	snd := rs.Interval
	ack := now.Sub(rs.PriorTime)
	rs.Interval = max(snd, ack)
	rs.SendInterval = snd
	rs.RecvInterval = ack
	if toUs(rs.Interval) < minRTTUs {
		// An interval below min_rtt is from a spurious retransmission or
		// ACK compression; it would overestimate the rate.
		rs.Interval = -1
		return
	}
	// Record the last non-app-limited or the highest app-limited bw.
	if !rs.IsAppLimited || int64(rs.Delivered)*toUs(r.rateInterval) >= int64(r.rateDelivered)*toUs(rs.Interval) {
		r.rateDelivered = uint32(rs.Delivered)
		r.rateInterval = rs.Interval
		r.rateAppLimited = rs.IsAppLimited
	}
}

// sentAfter is tcp_skb_sent_after: t1 later than t2, or the same time and
// a higher end sequence.
func sentAfter(t1, t2 sim.Time, seq1, seq2 uint64) bool {
	return t1 > t2 || t1 == t2 && seq1 > seq2
}
