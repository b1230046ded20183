package cc

import "github.com/ccscope/ccscope/engine/sim"

// RateTx is tcp_rate.c's per-skb snapshot, TCP_SKB_CB(skb)->tx (6.x, with
// the google/bbr v3 branch's in_flight and lost): the connection's delivery
// state when the segment was sent, from which its (s)ack builds a rate
// sample.
type RateTx struct {
	FirstTx     sim.Time // tx.first_tx_mstamp (a µs stamp, usFloor)
	DeliveredAt sim.Time // tx.delivered_mstamp (a µs stamp)
	Delivered   uint32   // tx.delivered
	DeliveredCE uint32   // tx.delivered_ce
	Valid       bool     // delivered_mstamp != 0 in the kernel
	AppLimited  bool     // tx.is_app_limited
	InFlight    uint32   // tx.in_flight (BBRv3): in flight just after it was sent, itself included
	Lost        uint32   // tx.lost (BBRv3): tp->lost when it was sent
}

// RateSkb is what tcp_rate_skb_delivered reads of the skb besides its
// snapshot.
type RateSkb struct {
	Sent    sim.Time // skb->skb_mstamp_ns: the latest (re)transmission
	EndSeq  uint64   // TCP_SKB_CB(skb)->end_seq
	Retrans bool     // TCPCB_RETRANS: the latest transmission was a retransmission
	Sacked  bool     // TCPCB_SACKED_ACKED: this is a SACK, not a cumulative ACK
}

// RateState is the connection-level delivery-rate state of tcp_rate.c
// (net/ipv4/tcp_rate.c, 6.x): struct tcp_sock's delivered, delivered_ce,
// delivered_mstamp, first_tx_mstamp, app_limited and rate_* fields. The
// product's sender and the CC test harnesses sample rates through it.
type RateState struct {
	Delivered      uint32   // tp->delivered
	DeliveredCE    uint32   // tp->delivered_ce
	DeliveredAt    sim.Time // tp->delivered_mstamp (a µs stamp, usFloor)
	FirstTx        sim.Time // tp->first_tx_mstamp (a µs stamp)
	AppLimited     uint32   // tp->app_limited: delivered mark of the bubble's end, 0 if none
	RateDelivered  uint32   // tp->rate_delivered
	RateInterval   sim.Duration
	RateAppLimited bool
	priorLost      uint32 // rs->prior_lost (BBRv3): tx.lost of the sample's segment
}

// SkbSent follows tcp_rate_skb_sent: snapshot the delivery state into the
// segment sent at `sent` so its (s)ack can produce a rate sample.
// packetsOut is the count before this transmission; inFlight (in flight just
// after it, itself included) and lost are the google/bbr v3 branch's
// tx.in_flight and tx.lost.
func (r *RateState) SkbSent(tx *RateTx, sent sim.Time, packetsOut, inFlight, lost uint32) {
	if packetsOut == 0 {
		// Nothing in flight: the sampling interval starts now.
		r.FirstTx = usFloor(sent)
		r.DeliveredAt = r.FirstTx
	}
	// Field by field: a composite literal of more than four fields is
	// built on the stack and copied in 16-byte loads, which stall on
	// store forwarding.
	tx.FirstTx = r.FirstTx
	tx.DeliveredAt = r.DeliveredAt
	tx.Delivered = r.Delivered
	tx.DeliveredCE = r.DeliveredCE
	tx.Valid = true
	tx.AppLimited = r.AppLimited != 0
	tx.InFlight = inFlight
	tx.Lost = lost
}

// SkbDelivered follows tcp_rate_skb_delivered: the most recently sent of the
// segments an ACK (s)acks supplies the sample's prior state. It sets
// *hasPrior when it does (the kernel tests prior_mstamp != 0; time 0 is a
// valid instant here).
func (r *RateState) SkbDelivered(tx *RateTx, skb RateSkb, rs *RateSample, hasPrior *bool) {
	if !tx.Valid {
		return
	}
	sent := usFloor(skb.Sent) // tcp_skb_timestamp_us
	if rs.PriorDelivered == 0 || SentAfter(sent, r.FirstTx, skb.EndSeq, rs.LastEndSeq) {
		rs.PriorDelivered = tx.Delivered
		rs.PriorDeliveredCE = tx.DeliveredCE
		rs.PriorTime = tx.DeliveredAt
		*hasPrior = true
		rs.IsAppLimited = tx.AppLimited
		rs.IsRetrans = skb.Retrans
		rs.LastEndSeq = skb.EndSeq
		rs.TxInFlight = tx.InFlight
		r.priorLost = tx.Lost
		rs.Interval = stampDelta(sent, tx.FirstTx) // the send phase of this window
		r.FirstTx = sent
	}
	// A sacked segment must not supply a second sample when it is
	// cumulatively acked later.
	if skb.Sacked {
		tx.Valid = false
	}
}

// RateAck is what tcp_rate_gen learns of one ACK besides the sample.
type RateAck struct {
	Delivered uint32 // packets this ACK newly delivered
	Lost      uint32 // packets this ACK newly marked lost
	TotalLost uint32 // tp->lost after this ACK
	HasPrior  bool   // SkbDelivered found a segment to sample
	MinRTTUs  int64  // tcp_min_rtt(tp)
}

// Gen follows tcp_rate_gen: finish the sample rs of one ACK at now.
func (r *RateState) Gen(now sim.Time, a RateAck, rs *RateSample) {
	if r.AppLimited != 0 && int32(r.Delivered-r.AppLimited) > 0 {
		r.AppLimited = 0 // the app-limited bubble has been acked
	}
	if a.Delivered != 0 {
		r.DeliveredAt = usFloor(now)
	}
	rs.AckedSacked = a.Delivered
	rs.Losses = a.Lost
	if !a.HasPrior {
		rs.Delivered, rs.Interval = -1, -1
		return
	}
	rs.Delivered = int32(r.Delivered - rs.PriorDelivered)
	rs.DeliveredCE = int32(r.DeliveredCE - rs.PriorDeliveredCE)
	rs.Lost = a.TotalLost - r.priorLost // BBRv3: lost while the sample's segment was out
	// Sending and acking are separate pipeline phases of a window; ACK
	// compression can make the ACK phase shorter, so take the longer.
	snd := rs.Interval
	ack := stampDelta(now, rs.PriorTime)
	rs.Interval = max(snd, ack)
	rs.SendInterval = snd
	rs.RecvInterval = ack
	if int64(rs.Interval/sim.Microsecond) < a.MinRTTUs {
		// An interval below min_rtt is from a spurious retransmission or
		// ACK compression; it would overestimate the rate.
		rs.Interval = -1
		return
	}
	// Record the last non-app-limited or the highest app-limited bw.
	if !rs.IsAppLimited || int64(rs.Delivered)*int64(r.RateInterval/sim.Microsecond) >= int64(r.RateDelivered)*int64(rs.Interval/sim.Microsecond) {
		r.RateDelivered = uint32(rs.Delivered)
		r.RateInterval = rs.Interval
		r.RateAppLimited = rs.IsAppLimited
	}
}

// usFloor is t as the kernel's µs stamps keep it (tp->tcp_mstamp,
// tcp_skb_timestamp_us): whole microseconds, rounded down. The rate
// sampler stores its stamps so and takes its intervals between them.
func usFloor(t sim.Time) sim.Time { return t - t%sim.Time(sim.Microsecond) }

// stampDelta is tcp_stamp_us_delta (stampUsDelta) between the µs stamps of
// t1 and t0, as a duration.
func stampDelta(t1, t0 sim.Time) sim.Duration {
	us := sim.Time(sim.Microsecond)
	return sim.Duration(stampUsDelta(uint64(t1/us), uint64(t0/us))) * sim.Microsecond
}

// SentAfter is tcp_skb_sent_after on the µs stamps its callers pass
// (tcp_skb_timestamp_us, first_tx_mstamp, rack.mstamp): t1 later than t2,
// or the same microsecond and a later end sequence (after()), so two skbs
// sent within a microsecond are ordered by sequence, as on Linux.
func SentAfter(t1, t2 sim.Time, seq1, seq2 uint64) bool {
	us := sim.Time(sim.Microsecond)
	t1, t2 = t1/us, t2/us
	return t1 > t2 || t1 == t2 && seqAfter(seq1, seq2)
}
