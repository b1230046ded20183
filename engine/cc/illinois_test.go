package cc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// newIllinois returns an Illinois connection in congestion avoidance at
// cwnd packets.
func newIllinois(t *testing.T, cwnd uint32) *cctest.Conn {
	t.Helper()
	a, err := cc.New("illinois")
	if err != nil {
		t.Fatalf("cc.New(illinois): %v", err)
	}
	c := cctest.New(a, cctest.Options{})
	c.St.CwndPkts, c.St.SSThreshPkts = cwnd, cwnd
	return c
}

// illinoisRounds runs one round per RTT in rttsMs, every packet of a
// round measuring that RTT.
func illinoisRounds(c *cctest.Conn, rttsMs ...int) {
	for _, ms := range rttsMs {
		c.Round(sim.Duration(ms) * sim.Millisecond)
	}
}

// illinoisPaperAlpha is α(da) of Liu, Başar & Srikant (2008):
// α_max up to d1, then k1/(k2 + da) with α(d1) = α_max and α(dm) = α_min.
func illinoisPaperAlpha(da, dm float64) float64 {
	const amin, amax = 0.3, 10.0
	d1 := dm / 100
	if da <= d1 {
		return amax
	}
	k1 := (dm - d1) * amin * amax / (amax - amin)
	k2 := (dm-d1)*amin/(amax-amin) - d1
	return k1 / (k2 + da)
}

// illinoisPaperBeta is β(da) of the paper: 1/8 up to d2 = dm/10,
// 1/2 from d3 = 8dm/10, linear between.
func illinoisPaperBeta(da, dm float64) float64 {
	const bmin, bmax = 0.125, 0.5
	d2, d3 := dm/10, 8*dm/10
	switch {
	case da <= d2:
		return bmin
	case da >= d3:
		return bmax
	}
	return bmin + (bmax-bmin)*(da-d2)/(d3-d2)
}

// TestIllinoisAlphaBeta checks α and β as the paper's functions of the
// average queueing delay da against the largest dm, and ssthresh =
// cwnd − β·cwnd after a loss. The rounds measure a base RTT of 100 ms,
// then 200 ms once (dm = 100 ms), then 100 ms + da twice: the second
// round's once-per-RTT update averages samples that are all 100 ms + da.
// tcp_illinois.c's fixed point, by hand, dm = 100000 µs, d1 = 1000,
// d2 = 10000, d3 = 80000; α = (dm'·1280)/(dm' + da'·1242/38) in 1/128
// with dm' = dm − d1, da' = da − d1; β = (8·d3 − 32·d2 + 24·da)/(d3 − d2)
// in 1/64:
//
//	da = 5 ms:   α = 126720000/(99000 + 4000·1242/38 = 229736) = 551 (paper 4.34·128 = 555); β = 8 (da ≤ d2)
//	da = 10 ms:  α = 126720000/(99000 + 294157) = 322 (paper 325);   β = 8
//	da = 20 ms:  α = 126720000/(99000 + 621000) = 176 (paper 177.6); β = 800000/70000 = 11 (paper 11.43)
//	da = 45 ms:  α = 126720000/(99000 + 1438105) = 82 (paper 83.3);  β = 1400000/70000 = 20 (paper 20)
//	da = 80 ms:  α = 126720000/(99000 + 2582052) = 47 (paper 47.8);  β = 32 (da ≥ d3)
//	da = 100 ms: α = 126720000/(99000 + 3235736) = 38 = α_min (paper 38.4); β = 32
//
// (the kernel's α_min is 38/128 = 0.297, hence values 1–2 % under the
// paper's). A loss then sets ssthresh = cwnd − ⌊cwnd·β/64⌋, the paper's
// W − βW within one packet.
func TestIllinoisAlphaBeta(t *testing.T) {
	for _, tc := range []struct {
		daMs  int
		alpha uint32 // 1/128
		beta  uint32 // 1/64
	}{{5, 551, 8}, {10, 322, 8}, {20, 176, 11}, {45, 82, 20}, {80, 47, 32}, {100, 38, 32}} {
		t.Run(fmt.Sprintf("da=%dms", tc.daMs), func(t *testing.T) {
			c := newIllinois(t, 30)
			illinoisRounds(c, 100, 200, 100+tc.daMs, 100+tc.daMs)
			gotA := uint32(signal(t, c, "alpha") * 128)
			gotB := uint32(signal(t, c, "beta") * 64)
			da, dm := float64(tc.daMs)*1000, 100000.0
			pa, pb := illinoisPaperAlpha(da, dm), illinoisPaperBeta(da, dm)
			t.Logf("da %v us, dm %v us: alpha %d/128 (paper %.4g), beta %d/64 (paper %.4g)", signal(t, c, "avg_delay"), signal(t, c, "max_delay"), gotA, pa*128, gotB, pb*64)
			if got := signal(t, c, "avg_delay"); got != da {
				t.Fatalf("avg_delay = %v us, want %v", got, da)
			}
			if gotA != tc.alpha {
				t.Errorf("alpha = %d/128, want %d/128", gotA, tc.alpha)
			}
			if gotB != tc.beta {
				t.Errorf("beta = %d/64, want %d/64", gotB, tc.beta)
			}
			// The hand values are the paper's, within its α_min's
			// rounding and the floors.
			if math.Abs(float64(tc.alpha)-pa*128) > 0.02*pa*128+1 {
				t.Errorf("hand alpha %d/128 is not the paper's %.4g/128 ± 2 %%", tc.alpha, pa*128)
			}
			if math.Abs(float64(tc.beta)-pb*64) >= 1 {
				t.Errorf("hand beta %d/64 is not the paper's %.4g/64 within 1", tc.beta, pb*64)
			}

			c.Advance(sim.Duration(100+tc.daMs) * sim.Millisecond)
			w := c.St.CwndPkts
			c.Lose(1)
			want := w - w*tc.beta/64
			if got := c.St.SSThreshPkts; got != want || math.Abs(float64(got)-(1-pb)*float64(w)) > 1 {
				t.Errorf("ssthresh after a loss at cwnd %d = %d, want cwnd − ⌊cwnd·%d/64⌋ = %d, the paper's (1 − β)·cwnd = %.1f within 1", w, got, tc.beta, want, (1-pb)*float64(w))
			}
		})
	}
}

// TestIllinoisRenoBelowWinThresh checks that below win_thresh = 15
// packets Illinois is Reno whatever the delay says: with no queueing at
// all (which above it means α = 10, β = 1/8) α = 1 and β = 1/2, so each
// round of cwnd ACKs adds exactly one packet (Reno's congestion
// avoidance: α·cnt ≥ cwnd after cwnd ACKs), and a loss halves the window
// (cwnd − ⌊cwnd/2⌋: ⌈cwnd/2⌉, where Reno's tcp_reno_ssthresh takes
// ⌊cwnd/2⌋). Once the window reaches 15, the next round's update sets
// α = 10 and β = 1/8.
func TestIllinoisRenoBelowWinThresh(t *testing.T) {
	for _, tc := range []struct {
		lossAt   uint32 // cwnd at the loss
		ssthresh uint32
	}{{10, 5}, {13, 7}, {14, 7}} {
		t.Run(fmt.Sprintf("loss at %d", tc.lossAt), func(t *testing.T) {
			c := newIllinois(t, 5)
			for c.St.CwndPkts < tc.lossAt {
				w := c.St.CwndPkts
				illinoisRounds(c, 100)
				if got := c.St.CwndPkts; got != w+1 {
					t.Fatalf("cwnd after a round from %d = %d, want Reno's %d", w, got, w+1)
				}
				if a, b := signal(t, c, "alpha"), signal(t, c, "beta"); a != 1 || b != 0.5 {
					t.Fatalf("at cwnd %d: alpha %v, beta %v; want Reno's 1 and 0.5", w, a, b)
				}
			}
			c.Advance(100 * sim.Millisecond)
			c.Lose(1)
			if got := c.St.SSThreshPkts; got != tc.ssthresh {
				t.Errorf("ssthresh after a loss at cwnd %d = %d, want %d", tc.lossAt, got, tc.ssthresh)
			}
		})
	}
	t.Run("crossing", func(t *testing.T) {
		c := newIllinois(t, 14)
		illinoisRounds(c, 100) // 14 → 15
		illinoisRounds(c, 100) // the update at its first ACK sees 15
		if a, b := signal(t, c, "alpha"), signal(t, c, "beta"); a != 10 || b != 0.125 {
			t.Errorf("at cwnd ≥ 15 with no queueing: alpha %v, beta %v; want 10 and 1/8", a, b)
		}
	})
}

// TestIllinoisTheta checks the rtt_above/rtt_low guard: once the delay
// has been high, α holds its value through theta − 1 = 4 low-delay rounds
// and returns to α_max = 10 at the fifth, so one good RTT does not cause a
// sudden window increase; β follows the delay at once (1/8 at da = 0).
// Rounds: base 100 ms, max 200 ms, two at 145 ms (da = 45 ms: α 82/128),
// then 100 ms. The first 100 ms round's update still averages the 145 ms
// samples; the next four are low (rtt_low 1..4, α held), the fifth sets
// α = 10.
func TestIllinoisTheta(t *testing.T) {
	c := newIllinois(t, 30)
	illinoisRounds(c, 100, 200, 145, 145, 100)
	held := signal(t, c, "alpha")
	if held >= 1 {
		t.Fatalf("alpha after high delay = %v, want below 1", held)
	}
	for i := 1; i <= 5; i++ {
		illinoisRounds(c, 100)
		a, b, low := signal(t, c, "alpha"), signal(t, c, "beta"), signal(t, c, "rtt_low")
		t.Logf("low round %d: alpha %v, beta %v, rtt_low %v", i, a, b, low)
		want := held
		if i == 5 {
			want = 10
		}
		if a != want {
			t.Errorf("alpha after low-delay round %d = %v, want %v", i, a, want)
		}
		if b != 0.125 {
			t.Errorf("beta after low-delay round %d = %v, want 1/8", i, b)
		}
	}
}

// TestIllinoisTimeout checks tcp_illinois_state: an RTO (CA state Loss)
// puts α and β back to Reno's 1 and 1/2 and forgets the high delay.
func TestIllinoisTimeout(t *testing.T) {
	c := newIllinois(t, 30)
	illinoisRounds(c, 100, 100, 100)
	if a, b := signal(t, c, "alpha"), signal(t, c, "beta"); a != 10 || b != 0.125 {
		t.Fatalf("before the RTO: alpha %v, beta %v; want 10 and 1/8", a, b)
	}
	c.Advance(300 * sim.Millisecond)
	c.Timeout()
	if a, b := signal(t, c, "alpha"), signal(t, c, "beta"); a != 1 || b != 0.5 {
		t.Errorf("after the RTO: alpha %v, beta %v; want 1 and 0.5", a, b)
	}
}

// TestIllinoisGrowth runs Illinois on a path with no loss and no queue
// (the bottleneck serves 2^30 packets per RTT, so a window's burst queues
// for nanoseconds, under the 1 µs the RTT samples resolve): da = dm = 0,
// so α = α_max = 10 and congestion avoidance grows the window by about 10
// packets per RTT (the paper's α_max; Reno would add 1). The kernel adds
// ⌊10·cnt/cwnd⌋ packets once 10·cnt ≥ cwnd, one per ⌈cwnd/10⌉ ACKs, which
// is 10 per RTT less the rounding up: asserted 9–10.5 per RTT between 1 s
// and 3 s.
func TestIllinoisGrowth(t *testing.T) {
	a, err := cc.New("illinois")
	if err != nil {
		t.Fatalf("cc.New(illinois): %v", err)
	}
	c := cctest.New(a, cctest.Options{})
	c.St.SSThreshPkts = 15
	rtt := 100 * sim.Millisecond
	var w1 uint32
	res := cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: 1 << 30}, 3*sim.Second, func(c *cctest.Conn) {
		if w1 == 0 && c.St.Now >= sim.Time(sim.Second) {
			w1 = c.St.CwndPkts
		}
	})
	perRTT := float64(c.St.CwndPkts-w1) / 20
	t.Logf("cwnd %d at 1 s, %d at 3 s: %.2f packets per RTT; alpha %v, base_rtt %v us, max_rtt %v us; %d drops",
		w1, c.St.CwndPkts, perRTT, signal(t, c, "alpha"), signal(t, c, "base_rtt"), signal(t, c, "max_rtt"), res.Drops)
	if perRTT < 9 || perRTT > 10.5 {
		t.Errorf("growth = %.2f packets per RTT, want α_max = 10 (9–10.5)", perRTT)
	}
}
