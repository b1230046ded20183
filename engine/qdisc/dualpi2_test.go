package qdisc

import (
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// dualpi2_scale_alpha_beta of the defaults, by hand:
// 41·(2^32−1) = 176093659095, >> 2 = 44023414773, / 10^9 = 44;
// 819·(2^32−1) = 3517578214605, >> 2 = 879394553651, / 10^9 = 879.
// So one update moves p' by 44/64 of MAX_PROB per ns of delay error:
// 0.16 Hz as in RFC 9332's α (0.16/s · 1 ns = 1.6·10^-10 ≈ 44/64/2^32).
func TestDualPI2ScaleAlphaBeta(t *testing.T) {
	for _, c := range []struct{ in, want uint32 }{{41, 44}, {819, 879}, {1, 1}} {
		if got := scaleAlphaBeta(c.in); got != c.want {
			t.Errorf("scaleAlphaBeta(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// One PI2 update by hand: a classic packet enqueued at 0 is still at the
// head at the first update, t = 16 ms, so qdelay = 16,000,000 ns against
// the 15,000,000 ns target and last_qdelay 0:
// delta = 1,000,000·44 + 16,000,000·879 = 14,108,000,000, / 64 =
// 220,437,500 = p' (0.0513). At 32 ms qdelay = 32,000,000:
// delta = 17,000,000·44 + 16,000,000·879 = 14,812,000,000, / 64 =
// 231,437,500, so p' = 451,875,000. The packet leaves at 40 ms; at 48 ms
// qdelay = 0: delta = −15,000,000·44 − 32,000,000·879 = −28,788,000,000,
// / 64 = −449,812,500, p' = 2,062,500; at 64 ms delta = −15,000,000·44,
// / 64 = −10,312,500, more than p', so p' floors at 0.
func TestDualPI2Update(t *testing.T) {
	e := &testEnv{}
	q := NewDualPI2(e.env(), rand.New(rand.NewPCG(1, 2)), DualPI2Params{})
	q.Enqueue(e.pkt(0, packet.NotECT), 0)
	steps := []struct {
		at   sim.Time
		want uint32
	}{
		{sim.Time(16*sim.Millisecond) - 1, 0},
		{sim.Time(16 * sim.Millisecond), 220437500},
		{sim.Time(32 * sim.Millisecond), 451875000},
	}
	for _, s := range steps {
		if got := q.Prob(s.at); got != s.want {
			t.Errorf("Prob(%v) = %d, want %d", s.at, got, s.want)
		}
	}
	if _, ok := q.Dequeue(sim.Time(40 * sim.Millisecond)); !ok {
		t.Fatalf("Dequeue found no packet")
	}
	for _, s := range []struct {
		at   sim.Time
		want uint32
	}{{sim.Time(48 * sim.Millisecond), 2062500}, {sim.Time(64 * sim.Millisecond), 0}} {
		if got := q.Prob(s.at); got != s.want {
			t.Errorf("Prob(%v) after the queue emptied = %d, want %d", s.at, got, s.want)
		}
	}
}

// The WRR credit with wc = 10 %: it starts at 1500·(10 − 90) = −120000,
// so the L-queue goes first; each L packet sent while the C-queue waits
// adds 10·1500 and each C packet subtracts 90·1500. From −120000 the
// L-queue sends 9 packets (credit −120000 + 9·15000 = 15000 > 0), then one
// C packet (15000 − 135000 = −120000), and so on: 9 L packets per C packet
// while both are backlogged, the 90/10 split of wl/wc.
func TestDualPI2CProtection(t *testing.T) {
	e := &testEnv{}
	q := NewDualPI2(e.env(), rand.New(rand.NewPCG(1, 2)), DualPI2Params{})
	for i := 0; i < 100; i++ {
		q.Enqueue(e.pkt(0, packet.ECT1), 0)
		q.Enqueue(e.pkt(1, packet.NotECT), 0)
	}
	var got []int32
	for i := 0; i < 20; i++ {
		id, _ := q.Dequeue(0) // at time 0 p' = 0 and no packet exceeds the step
		got = append(got, e.pool.Get(id).Flow)
	}
	want := []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("dequeue order by flow = %v, want %v", got, want)
		}
	}
}

// do_step_aqm marks an L4S packet whose sojourn is strictly above the step
// threshold (1 ms = 1,000,000 ns); a classic ECT(0) packet with the same
// sojourn goes to the C-queue, which has no step. p' is still 0 here (the
// first PI2 update is at 16 ms), so nothing else marks.
func TestDualPI2Step(t *testing.T) {
	cases := []struct {
		name     string
		ecn      packet.ECN
		sojourn  sim.Duration
		wantMark bool
	}{
		{"l4s at the threshold", packet.ECT1, sim.Millisecond, false},
		{"l4s 1 ns above", packet.ECT1, sim.Millisecond + sim.Nanosecond, true},
		{"classic above", packet.ECT0, 5 * sim.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &testEnv{}
			q := NewDualPI2(e.env(), rand.New(rand.NewPCG(1, 2)), DualPI2Params{})
			q.Enqueue(e.pkt(0, c.ecn), 0)
			id, _ := q.Dequeue(sim.Time(c.sojourn))
			if got := e.pool.Get(id).ECN == packet.CE; got != c.wantMark || (q.Stats.StepMarks == 1) != c.wantMark {
				t.Errorf("CE = %v with %d step marks, want marked %v", got, q.Stats.StepMarks, c.wantMark)
			}
		})
	}
}
