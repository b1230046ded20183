package cc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// yeahBase is the unloaded RTT of the YeAH hand traces: Vegas's samples
// are 100001 µs (+1 µs, never zero).
const yeahBase = 100 * sim.Millisecond

// yeahRounds starts a YeAH flow in congestion avoidance at w0 and runs one
// Round per RTT given. A Round acks the whole flight at one instant, so
// every sample of a round is its RTT, and the once-per-RTT update, which
// runs on a round's first ACK, sees the smallest RTT of the previous
// round's other ACKs and that first ACK: min(rtt[k−1], rtt[k]). Below a
// window of 100 Scalable's and Reno's steps are the same, one packet per
// cwnd ACKs, so each Round adds exactly one packet and leaves
// snd_cwnd_cnt at 0; the update on a round's first ACK sees the window of
// the round before.
func yeahRounds(t *testing.T, w0 uint32, rtts ...sim.Duration) *cctest.Conn {
	t.Helper()
	c := newVenoYeAHConn(t, "yeah")
	c.St.CwndPkts, c.St.SSThreshPkts = w0, w0
	for _, r := range rtts {
		c.Round(r)
	}
	return c
}

// repeatRTT returns n copies of d.
func repeatRTT(d sim.Duration, n int) []sim.Duration {
	ds := make([]sim.Duration, n)
	for i := range ds {
		ds[i] = d
	}
	return ds
}

// TestYeAHScalableGrowth checks YeAH's fast mode against Scalable TCP
// (Kelly 2003; YeAH-TCP §3): with no queue it adds a = 0.01 packets per
// packet acked, in the kernel one packet per TCP_SCALABLE_AI_CNT = 100
// acked (tcp_cong_avoid_ai with w = min(cwnd, 100)), so the window grows
// 1 % per RTT, and below 100 packets one packet per RTT. By hand, one
// round of a window W ≥ 100 with snd_cwnd_cnt = 0 acks W packets and adds
// ⌊W/100⌋: 100 → 101, 1000 → 1010, 3000 → 3030; below 100, 50 → 51.
// Ten rounds from 1000 must be within one packet of 1000·1.01¹⁰ = 1104.6
// (by hand with the counter's carries: 1010, 1020, 1030, 1040, 1051, 1061,
// 1072, 1082, 1093, 1104). Reno would add 1 per round: 1001 and 1010.
//
// In slow mode (queueing delay above baseRTT/8 but the queue at most 80)
// the same flow grows as Reno, one packet per round: from 500 with RTT
// 115 ms against 100 ms, Q = ⌊cwnd·15000/115001⌋ ≈ 65 ≤ 80 and 15000 µs >
// 100001/8 µs; over 10 rounds after the switch the window must gain
// 10 ± 1 packets, not Scalable's ~50.
func TestYeAHScalableGrowth(t *testing.T) {
	for _, tc := range []struct {
		w0, want uint32
	}{{50, 51}, {99, 100}, {100, 101}, {1000, 1010}, {3000, 3030}} {
		t.Run(fmt.Sprint(tc.w0), func(t *testing.T) {
			c := yeahRounds(t, tc.w0, yeahBase)
			if got := c.St.CwndPkts; got != tc.want {
				t.Errorf("cwnd after one fast-mode round from %d = %d, want %d", tc.w0, got, tc.want)
			}
		})
	}
	t.Run("ten rounds", func(t *testing.T) {
		c := yeahRounds(t, 1000, repeatRTT(yeahBase, 10)...)
		want := 1000 * math.Pow(1.01, 10)
		got := c.St.CwndPkts
		t.Logf("cwnd after 10 fast rounds from 1000: %d (1000·1.01¹⁰ = %.1f), fast_mode %v", got, want, signal(t, c, "fast_mode"))
		if math.Abs(float64(got)-want) > 1 {
			t.Errorf("cwnd after 10 fast-mode rounds from 1000 = %d, want 1000·1.01¹⁰ = %.1f ± 1", got, want)
		}
		if m := signal(t, c, "fast_mode"); m != 1 {
			t.Errorf("fast_mode = %v, want 1 with no queue", m)
		}
	})
	t.Run("slow mode is Reno", func(t *testing.T) {
		// Rounds 1–2 at the base RTT, then 115 ms: the update on round 4's
		// first ACK is the first to see it and switches to slow mode.
		c := yeahRounds(t, 500, append(repeatRTT(yeahBase, 2), repeatRTT(115*sim.Millisecond, 4)...)...)
		before := c.St.CwndPkts
		for range 10 {
			c.Round(115 * sim.Millisecond)
		}
		got := c.St.CwndPkts - before
		t.Logf("cwnd %d → %d over 10 slow rounds; last_q %v, doing_reno_now %v", before, c.St.CwndPkts, signal(t, c, "last_q"), signal(t, c, "doing_reno_now"))
		if got < 9 || got > 11 {
			t.Errorf("slow-mode growth over 10 rounds from %d = %d packets, want Reno's 10 ± 1", before, got)
		}
		if q := signal(t, c, "last_q"); q > 80 || q < 60 {
			t.Errorf("last_q = %v, want ⌊cwnd·15000/115001⌋ ≈ 65 (≤ 80: no decongestion)", q)
		}
		if m := signal(t, c, "fast_mode"); m != 0 {
			t.Errorf("fast_mode = %v, want 0 with the queueing delay above baseRTT/8", m)
		}
	})
}

// TestYeAHDecongestionStep traces precautionary decongestion by hand
// (YeAH-TCP §3: when Q > Q_max = 80 the window gives back the queue,
// "precautionary decongestion"; the kernel takes at most cwnd/2,
// TCP_YEAH_EPSILON = 1, and stops at reno_count, the Reno-emulation
// window). Each case runs rounds (yeahRounds), then the first ACK of one
// more round, whose update sees the last RTT for the whole round before.
//
//   - "queue": from 300, rounds at 100, 100, 200 ms. Scalable adds ⌊(cnt +
//     W)/100⌋ per round: 300 → 303 → 306 (cnt 3) → 309 (cnt 9). The first
//     ACK after 200 ms adds to cnt only and the update runs with rtt =
//     200001 µs, baseRTT = 100001 µs: Q = ⌊309·100000/200001⌋ = 154 > 80
//     and cwnd 309 > reno_count 2, so reduction = min(154/1, 309>>1 = 154)
//     = 154, cwnd = ssthresh = 155; then reno_count = max(155>>1, 2) = 77
//     (it was 2) and doing_reno_now = 1.
//   - "reno_count floor": from 200, rounds at 100, 100 ms (202, 204 cnt 2),
//     130 ms (206, cnt 6), nine more at 130 ms, then one at 400 ms. From the
//     fourth round's update on, Q = ⌊cwnd·30000/130001⌋ = 47 ≤ 80 but the
//     delay 30000 µs > 100001/8: slow mode, Reno's one packet per round
//     (cnt stays 6), reno_count = ⌊206/2⌋ = 103 and +1 per update. The
//     update that sees 400 ms finds cwnd 216, reno_count 112 and Q =
//     ⌊216·300000/400001⌋ = 161 > 80: reduction = min(161, 108) = 108, but
//     216 − 108 = 108 < reno_count, so cwnd = ssthresh = 112; reno_count
//     113, doing_reno_now 11.
//
// Reno, Scalable, or a port without the cap or the floor would not land
// on these windows.
func TestYeAHDecongestionStep(t *testing.T) {
	ms := sim.Millisecond
	for _, tc := range []struct {
		name                      string
		w0                        uint32
		rtts                      []sim.Duration
		last                      sim.Duration
		before                    uint32 // cwnd before the last round's first ACK
		cwnd                      uint32 // = ssthresh after it
		lastQ, renoCount, renoNow float64
	}{
		{"queue", 300, []sim.Duration{yeahBase, yeahBase, 200 * ms}, 200 * ms, 309, 155, 154, 77, 1},
		{"reno_count floor", 200, append(append(repeatRTT(yeahBase, 2), repeatRTT(130*ms, 10)...), 400*ms), 400 * ms, 216, 112, 161, 113, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := yeahRounds(t, tc.w0, tc.rtts...)
			if got := c.St.CwndPkts; got != tc.before {
				t.Fatalf("cwnd after the rounds = %d, want %d", got, tc.before)
			}
			c.Advance(tc.last)
			c.Ack(1)
			for _, w := range []struct {
				name      string
				got, want float64
			}{
				{"cwnd", float64(c.St.CwndPkts), float64(tc.cwnd)},
				{"ssthresh", float64(c.St.SSThreshPkts), float64(tc.cwnd)},
				{"last_q", signal(t, c, "last_q"), tc.lastQ},
				{"reno_count", signal(t, c, "reno_count"), tc.renoCount},
				{"doing_reno_now", signal(t, c, "doing_reno_now"), tc.renoNow},
				{"rtt_min_round", signal(t, c, "rtt_min_round"), float64(tc.last/sim.Microsecond) + 1},
				{"base_rtt", signal(t, c, "base_rtt"), 100001},
			} {
				if w.got != w.want {
					t.Errorf("%s after the update = %v, want %v", w.name, w.got, w.want)
				}
			}
		})
	}
}

// TestYeAHQueueBound drives YeAH over one bottleneck whose 2000-packet
// buffer could hold a standing queue 25 times Q_max = 80 (YeAH-TCP §3:
// fast mode until the queue exceeds Q_max, then decongestion gives it
// back). With a 1000-packet BDP the delay threshold, BaseRTT/8 (TCP_YEAH_PHY),
// is a queue of 125 packets, so the queue test Q > 80 fires first and
// the flow cycles: Scalable growth (~11 packets per RTT) until the update
// sees Q > 80, then cwnd −= Q. The update reads the smallest RTT of the
// round before, which reflects the window two rounds back, so the queue
// can pass 80 by up to three rounds of growth, 3·cwnd/100 ≈ 33 packets;
// and the cut removes a queue measured earlier, so it never takes the
// window below the BDP. Asserted after the slow-start overshoot (from 5 s
// on): no loss, BDP ≤ cwnd ≤ BDP + 80 + 3·cwnd/100, and the mean queue
// (mean cwnd − BDP) in (0, 80]. Reno fills the buffer (cwnd up to
// BDP + 2000) and loses every cycle.
//
// Not asserted: with a BDP below 8·80 = 640 packets the delay threshold
// fires first (Q > BDP/8) and the flow enters slow mode with Q ≤ 80;
// reno_count, set to cwnd/2 there and raised by one every slow RTT as a
// Reno flow's window would be, then keeps pace with the window (which also
// grows by one per RTT) and, once above it, floors the decongestion: a
// single flow at BDP 200 grows as Reno into a 1000-packet buffer
// (measured: cwnd 200 → 1058 in 57 s with no loss). That is the kernel's
// Reno emulation, not a port error.
func TestYeAHQueueBound(t *testing.T) {
	const bdp, alpha = 1000, 80
	c := newVenoYeAHConn(t, "yeah")
	rtt := 20 * sim.Millisecond
	settle := sim.Time(5 * sim.Second)
	var lo, hi uint32 = ^uint32(0), 0
	var n int
	var sum float64
	losses := 0
	prev := c.St.CA
	res := cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp, BufferPkts: 2000}, 25*sim.Second, func(c *cctest.Conn) {
		if c.St.Now >= settle {
			w := c.St.CwndPkts
			lo, hi = min(lo, w), max(hi, w)
			sum += float64(w)
			n++
			if prev == cc.CAOpen && c.St.CA != cc.CAOpen {
				losses++
			}
		}
		prev = c.St.CA
	})
	mean := sum / float64(n)
	bound := float64(bdp+alpha) + 3*float64(hi)/100
	t.Logf("from 5 s: cwnd %d..%d (BDP %d, bound %.0f), mean per ACK %.1f, %d loss events; whole run: %d drops, mean cwnd %.1f",
		lo, hi, bdp, bound, mean, losses, res.Drops, res.MeanCwndPkts)
	if losses != 0 {
		t.Errorf("loss events after 5 s = %d, want 0: decongestion keeps the queue far below the buffer", losses)
	}
	if lo < bdp {
		t.Errorf("smallest cwnd after 5 s = %d, want ≥ BDP %d: decongestion removes only the queue", lo, bdp)
	}
	if float64(hi) > bound {
		t.Errorf("largest cwnd after 5 s = %d, want ≤ BDP + 80 + 3·cwnd/100 = %.0f", hi, bound)
	}
	if q := mean - bdp; q <= 0 || q > alpha {
		t.Errorf("mean queue after 5 s = %.1f packets, want in (0, 80]", q)
	}
}

// TestYeAHSSThresh checks tcp_yeah_ssthresh by hand on states built by
// rounds of chosen RTTs (yeahRounds), from 80 packets so every round adds
// exactly one. YeAH-TCP §3: a loss while in fast mode, or in slow mode for
// fewer than RHO = 16 RTTs, removes the queue it last measured, Q (lastQ),
// at least cwnd/8 (TCP_YEAH_DELTA = 3) and at most cwnd/2; after 16 slow
// RTTs it assumes Reno competitors and halves. Every loss halves
// reno_count (at least 2) and zeroes fast_count. Q = ⌊cwnd·(rtt −
// base)/rtt⌋ with the samples' +1 µs, from the window of the round before
// the loss (one less than at the loss), base 100001 µs. Rounds: two at
// 100 ms, then m at rtt; the first update to see rtt runs on the second of
// those, so m − 1 updates are slow when rtt − base > base/8.
//
//   - fast: m = 1 at 100 ms; cwnd 83, Q = 0: 83 − max(0, 83>>3 = 10) = 73.
//   - slow 2 RTTs: rtt 140 ms, m = 3; cwnd 85, Q = ⌊84·40000/140001⌋ = 23:
//     85 − 23 = 62; reno_count = ⌊83/2⌋ + 1 = 42 → 21.
//   - queue above cwnd/2: rtt 400 ms, m = 3; Q = ⌊84·300000/400001⌋ = 62
//     (≤ 80: no decongestion) is capped at 85>>1 = 42: 85 − 42 = 43.
//   - slow 15 RTTs: rtt 140 ms, m = 16; cwnd 98, Q = ⌊97·40000/140001⌋ = 27:
//     98 − 27 = 71; reno_count = 41 + 14 = 55 → 27.
//   - slow 16 RTTs: m = 17; cwnd 99, doing_reno_now = 16: 99 − 49 = 50.
//
// Reno's ssthresh would be 41, 42, 42, 49, 49.
func TestYeAHSSThresh(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rtt       sim.Duration
		m         int
		cwnd      uint32 // at the loss
		lastQ     float64
		renoNow   float64 // doing_reno_now at the loss
		want      uint32
		renoCount float64 // after the loss
	}{
		{"fast", yeahBase, 1, 83, 0, 0, 73, 2},
		{"slow 2 RTTs", 140 * sim.Millisecond, 3, 85, 23, 2, 62, 21},
		{"queue above cwnd/2", 400 * sim.Millisecond, 3, 85, 62, 2, 43, 21},
		{"slow 15 RTTs", 140 * sim.Millisecond, 16, 98, 27, 15, 71, 27},
		{"slow 16 RTTs", 140 * sim.Millisecond, 17, 99, 27, 16, 50, 28},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := yeahRounds(t, 80, append(repeatRTT(yeahBase, 2), repeatRTT(tc.rtt, tc.m)...)...)
			if got := c.St.CwndPkts; got != tc.cwnd {
				t.Fatalf("cwnd before the loss = %d, want %d", got, tc.cwnd)
			}
			if got := signal(t, c, "last_q"); got != tc.lastQ {
				t.Errorf("last_q before the loss = %v, want %v", got, tc.lastQ)
			}
			if got := signal(t, c, "doing_reno_now"); got != tc.renoNow {
				t.Errorf("doing_reno_now before the loss = %v, want %v", got, tc.renoNow)
			}
			c.Advance(tc.rtt)
			c.Lose(1)
			if got := c.St.SSThreshPkts; got != tc.want {
				t.Errorf("ssthresh after a loss at cwnd %d = %d, want %d", tc.cwnd, got, tc.want)
			}
			if got := signal(t, c, "reno_count"); got != tc.renoCount {
				t.Errorf("reno_count after the loss = %v, want %v", got, tc.renoCount)
			}
			if got := signal(t, c, "fast_count"); got != 0 {
				t.Errorf("fast_count after the loss = %v, want 0", got)
			}
		})
	}
}
