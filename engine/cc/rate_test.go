package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// us is t microseconds and frac picoseconds.
func us(t, frac int64) sim.Time {
	return sim.Time(t*int64(sim.Microsecond) + frac)
}

// TestRateSampleMicrosecondStamps traces tcp_rate.c by hand on stamps that
// fall inside microseconds. The kernel keeps first_tx_mstamp,
// delivered_mstamp and the skb's send time (tcp_skb_timestamp_us) in whole
// µs and takes both phases with tcp_stamp_us_delta, so a phase of 71.4 µs
// measures 71 or 72 µs by where its ends fall.
//
// Segment A leaves at 0.6 µs with nothing in flight, so first_tx_mstamp =
// delivered_mstamp = 0 µs; B leaves at 71.9 µs. A's ACK at 100.7 µs: send
// phase 0 − 0 = 0, ACK phase 100 − 0 = 100 µs, delivered 1 (a sample of
// 1 packet per 100 µs; min_rtt 100 lets it through), and delivered_mstamp
// becomes 100 µs. B's ACK at 172.3 µs: B's snapshot holds first_tx 0 and
// delivered_mstamp 0 (taken when B left, before A's ACK), so send phase
// 71 − 0 = 71 µs (71.3 µs in picoseconds), ACK phase 172 − 0 = 172 µs, the
// interval 172 µs (171.7 in picoseconds, which rounded down gave 171).
func TestRateSampleMicrosecondStamps(t *testing.T) {
	var r RateState
	var a, b RateTx
	r.SkbSent(&a, us(0, 600_000), 0, 1, 0)
	r.SkbSent(&b, us(71, 900_000), 1, 2, 0)
	if a.FirstTx != 0 || a.DeliveredAt != 0 || b.FirstTx != 0 || b.DeliveredAt != 0 {
		t.Fatalf("snapshots: A first_tx %v delivered_mstamp %v, B %v %v; want all 0 (0.6 µs stamped as 0 µs)",
			a.FirstTx, a.DeliveredAt, b.FirstTx, b.DeliveredAt)
	}

	ack := func(tx *RateTx, sent, now sim.Time, endSeq uint64) RateSample {
		var rs RateSample
		var hasPrior bool
		r.SkbDelivered(tx, RateSkb{Sent: sent, EndSeq: endSeq}, &rs, &hasPrior)
		r.Delivered++
		r.Gen(now, RateAck{Delivered: 1, HasPrior: hasPrior, MinRTTUs: 100}, &rs)
		return rs
	}
	rs := ack(&a, us(0, 600_000), us(100, 700_000), 1)
	if rs.SendInterval != 0 || rs.RecvInterval != 100*sim.Microsecond || rs.Interval != 100*sim.Microsecond || rs.Delivered != 1 {
		t.Errorf("A's sample: send %v, ack %v, interval %v, delivered %d; want 0, 100µs, 100µs, 1",
			rs.SendInterval, rs.RecvInterval, rs.Interval, rs.Delivered)
	}
	if r.DeliveredAt != us(100, 0) {
		t.Errorf("delivered_mstamp = %v, want the ACK's µs stamp 100µs", r.DeliveredAt)
	}
	rs = ack(&b, us(71, 900_000), us(172, 300_000), 2)
	if rs.SendInterval != 71*sim.Microsecond || rs.RecvInterval != 172*sim.Microsecond || rs.Interval != 172*sim.Microsecond || rs.Delivered != 2 {
		t.Errorf("B's sample: send %v, ack %v, interval %v, delivered %d; want 71µs, 172µs, 172µs, 2",
			rs.SendInterval, rs.RecvInterval, rs.Interval, rs.Delivered)
	}

	// An interval of 99.6 µs whose ends straddle 100 µs stamps measures
	// 100 and passes min_rtt = 100; one of 99.6 µs inside them measures 99
	// and is refused (interval −1).
	for _, c := range []struct {
		sent, now sim.Time
		want      sim.Duration
	}{
		{us(1000, 900_000), us(1100, 500_000), 100 * sim.Microsecond},
		{us(2000, 100_000), us(2099, 700_000), -1},
	} {
		var r2 RateState
		var tx RateTx
		r2.SkbSent(&tx, c.sent, 0, 1, 0)
		var s RateSample
		var hasPrior bool
		r2.SkbDelivered(&tx, RateSkb{Sent: c.sent, EndSeq: 1}, &s, &hasPrior)
		r2.Delivered++
		r2.Gen(c.now, RateAck{Delivered: 1, HasPrior: hasPrior, MinRTTUs: 100}, &s)
		if s.Interval != c.want {
			t.Errorf("sent %v, acked %v: interval %v, want %v", c.sent, c.now, s.Interval, c.want)
		}
	}
}

// tcp_skb_sent_after compares tcp_skb_timestamp_us stamps: a segment sent
// 400 ns after another, within the same microsecond, is later only if its
// end sequence is (after()), so a retransmission of a low segment right
// behind a new high one counts as sent before it, as on Linux; a whole
// microsecond later it is later whatever its sequence.
func TestSentAfterComparesMicroseconds(t *testing.T) {
	t0 := sim.Time(7*sim.Second + 3*sim.Microsecond + 100*sim.Nanosecond)
	for _, tc := range []struct {
		t1, t2     sim.Time
		seq1, seq2 uint64
		want       bool
	}{
		{t0 + sim.Time(400*sim.Nanosecond), t0, 1449, 4345, false},
		{t0, t0 + sim.Time(400*sim.Nanosecond), 4345, 1449, true},
		{t0 + sim.Time(900*sim.Nanosecond), t0, 1449, 4345, true}, // the next microsecond
		{t0, t0, 1449, 1449, false},
		{t0, t0, 1<<32 + 10, 1<<32 - 10, true}, // after() across the u32 wrap
	} {
		if got := SentAfter(tc.t1, tc.t2, tc.seq1, tc.seq2); got != tc.want {
			t.Errorf("SentAfter(%v, %v, %d, %d) = %v, want %v", tc.t1, tc.t2, tc.seq1, tc.seq2, got, tc.want)
		}
	}
}
