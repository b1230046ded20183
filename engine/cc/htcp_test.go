package cc_test

import (
	"fmt"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// newHTCP returns an H-TCP connection at HZ = 1000.
func newHTCP(t *testing.T) *cctest.Conn {
	t.Helper()
	a, err := cc.New("htcp")
	if err != nil {
		t.Fatalf("cc.New(htcp): %v", err)
	}
	return cctest.New(a, cctest.Options{})
}

// htcpFirstEpoch slow-starts c over a path of constant RTT rtt to at
// least 40 packets, loses one packet, and runs rounds until the recovery
// ends. It returns when it ended: Δ counts from then. The loss is the
// first congestion event, so β is 0.5 (htcp_beta_update sets modeswitch
// there, and adapts β only at later events).
func htcpFirstEpoch(t *testing.T, c *cctest.Conn, rtt sim.Duration) sim.Time {
	t.Helper()
	for c.St.CwndPkts < 40 {
		c.Round(rtt)
	}
	c.Advance(rtt)
	w := c.St.InFlightPkts
	c.Lose(1)
	for range w - 2 {
		c.Ack(1)
		c.Fill()
	}
	if c.St.CA != cc.CARecovery {
		t.Fatalf("CA state after a loss = %v, want recovery", c.St.CA)
	}
	for range 3 {
		c.Round(rtt)
		if c.St.CA == cc.CAOpen {
			return c.St.Now
		}
	}
	t.Fatalf("recovery did not end")
	return 0
}

// htcpAlpha is the paper's α(Δ) = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² for
// Δ > Δ_L = 1 s, 1 below (Leith & Shorten 2004), Δ in seconds.
func htcpAlpha(delta float64) float64 {
	if delta <= 1 {
		return 1
	}
	d := delta - 1
	return 1 + 10*d + (d/2)*(d/2)
}

// TestHTCPAlphaVsTime checks α against the time Δ since the end of the
// last congestion event. tcp_htcp.c's htcp_alpha_update computes the
// paper's α(Δ) in whole packets,
//
//	factor = 1 + (10·diff + (diff/2)²/HZ)/HZ,  diff = Δ − 1 s in jiffies,
//
// (the paper's value truncated: at even diff the two floors lose nothing
// else), then scales it by minRTT/100 ms through scale = 8·HZ/(10·minRTT)
// clamped to [4, 80]: factor = 8·factor/scale, at least 1; then
// α = 2·factor·(128 − β) in 1/128. After the first loss β = 64 (0.5), so
// 2(1 − β) = 1 and α is factor packets per RTT. By hand, HZ = 1000:
//
//	100 ms (scale 8, ×1):  Δ ≤ 1 s: 1;  1.5 s: 1 + ⌊(5000 + 62)/1000⌋ = 6;
//	                       2 s: 1 + ⌊(10000 + 250)/1000⌋ = 11;
//	                       3 s: 1 + ⌊(20000 + 1000)/1000⌋ = 22;
//	                       5 s: 1 + ⌊(40000 + 4000)/1000⌋ = 45 (paper 45).
//	200 ms (scale 4, ×2):  Δ ≤ 1 s: 2;  1.4 s: 2·(1 + ⌊(4000 + 40)/1000⌋) = 10;
//	                       2 s: 22;  3 s: 44;  5 s: 90.
//	50 ms (scale 16, ×½):  Δ ≤ 1 s: ⌊8/16⌋ = 0 → 1;  1.5 s: ⌊48/16⌋ = 3;
//	                       2 s: ⌊88/16⌋ = 5;  3 s: 11;  5 s: ⌊360/16⌋ = 22.
//
// α is read at each Δ after a round whose ACKs (all at Δ) raised the
// window, so it was computed at Δ. Also checked, on the window itself:
//   - the first Δ_L = 1 s is Reno's one packet per RTT (the kernel's
//     increment every cwnd + 1 ACKs): 10 packets at 100 ms and at 200 ms
//     (α = 2 per RTT: RTT scaling keeps growth per second the same), 20
//     at 50 ms, where α cannot scale below 1; asserted ± 1;
//   - after 5 s the window has grown by the paper's ∫α(Δ)/RTT dΔ (per
//     second 10·α(Δ) scaled, at least 1/RTT: 903 packets at 100 and
//     200 ms, 913 at 50 ms), less what the kernel's per-ACK stepping
//     loses: it uses the α of the RTT before and spends one ACK per
//     increment. Measured −14 %, −26 % and −10 %; asserted within −30 %
//     and +5 % (Reno would add 50).
func TestHTCPAlphaVsTime(t *testing.T) {
	type point struct {
		deltaMs int
		alpha   uint32 // 1/128
	}
	for _, tc := range []struct {
		rttMs    int
		points   []point
		firstSec uint32 // packets the first second adds
	}{
		{100, []point{{500, 128}, {1000, 128}, {1500, 6 * 128}, {2000, 11 * 128}, {3000, 22 * 128}, {5000, 45 * 128}}, 10},
		{200, []point{{600, 256}, {1000, 256}, {1400, 10 * 128}, {2000, 22 * 128}, {3000, 44 * 128}, {5000, 90 * 128}}, 10},
		{50, []point{{500, 128}, {1000, 128}, {1500, 3 * 128}, {2000, 5 * 128}, {3000, 11 * 128}, {5000, 22 * 128}}, 20},
	} {
		t.Run(fmt.Sprintf("%dms", tc.rttMs), func(t *testing.T) {
			rtt := sim.Duration(tc.rttMs) * sim.Millisecond
			c := newHTCP(t)
			t0 := htcpFirstEpoch(t, c, rtt)
			if got := signal(t, c, "beta"); got != 0.5 {
				t.Fatalf("beta after the first loss = %v, want 0.5", got)
			}
			w0 := c.St.CwndPkts
			var w1s uint32
			for _, p := range tc.points {
				var before uint32
				for c.St.Now < t0.Add(sim.Duration(p.deltaMs)*sim.Millisecond) {
					before = c.St.CwndPkts
					c.Round(rtt)
				}
				if p.deltaMs == 1000 {
					w1s = c.St.CwndPkts
				}
				got := uint32(signal(t, c, "alpha") * 128)
				t.Logf("Δ %d ms: cwnd %d (+%d in the last RTT), alpha %d/128, paper α(Δ)·RTT/100 ms = %.2f", p.deltaMs, c.St.CwndPkts, c.St.CwndPkts-before, got, htcpAlpha(float64(p.deltaMs)/1000)*float64(tc.rttMs)/100)
				if got != p.alpha {
					t.Errorf("alpha at Δ = %d ms = %d/128, want %d/128", p.deltaMs, got, p.alpha)
				}
			}
			if got := w1s - w0; got < tc.firstSec-1 || got > tc.firstSec+1 {
				t.Errorf("growth over the first second = %d packets, want Reno's %d ± 1", got, tc.firstSec)
			}
			// The paper's growth over 5 s, per second 10·α(Δ) (the RTT
			// scaling), at least one packet per RTT.
			var want float64
			const step = 0.001
			for d := step / 2; d < 5; d += step {
				want += step * max(10*htcpAlpha(d), 1000/float64(tc.rttMs))
			}
			got := float64(c.St.CwndPkts - w0)
			t.Logf("growth over 5 s: %v packets, paper %.0f (%+.1f%%)", got, want, 100*(got/want-1))
			if got < 0.7*want || got > 1.05*want {
				t.Errorf("growth over 5 s = %v packets, want the paper's ∫α(Δ)/RTT dΔ = %.0f −30 %%/+5 %%", got, want)
			}
		})
	}
}

// TestHTCPBeta checks the adaptive backoff β = RTTmin/RTTmax clamped to
// [0.5, 0.8] (Leith & Shorten 2004) and ssthresh = β·cwnd on one
// bottleneck of 100 packets per 40 ms behind drop-tail buffers of
// different sizes. A packet accepted behind Q − 1 others waits
// (Q − 1)·0.4 ms, so RTTmin = 40 ms and RTTmax = 40 + 0.4(Q − 1) ms,
// which usecs_to_jiffies rounds up to whole ms; in 1/128 (the kernel's
// (minRTT << 7)/maxRTT):
//
//	Q = 50:  max 59.6 → 60 ms:  5120/60 = 85 (0.664);
//	Q = 150: max 99.6 → 100 ms: 5120/100 = 51, clamped to 64 (0.5);
//	Q = 12:  max 44.4 → 45 ms:  5120/45 = 113, clamped to 102 (0.8).
//
// The link stays busy, so the achieved throughput is the same at every
// loss and the bandwidth switch keeps β adaptive once it has started, but
// htcp_beta_update backs off by 0.5 at the first three losses here: the
// first comes in slow start before any throughput sample (maxB = old_maxB
// = 0 pass the switch's test, and the still-unset modeswitch gets set);
// the second compares the first sample with 0 (the switch fires and
// clears modeswitch); the third finds the throughput unchanged and sets
// modeswitch again. From the fourth on β = RTTmin/RTTmax. At every loss,
// ssthresh = ⌊cwnd·β/128⌋. At Q = 50 that is the paper's point: the
// backoff drains the queue and no more, ssthresh = cwnd·RTTmin/RTTmax =
// the BDP of 100 packets (± 3, the rounding of RTTmax and of cwnd at the
// loss).
func TestHTCPBeta(t *testing.T) {
	for _, tc := range []struct {
		bufferPkts  uint32
		beta        uint32 // 1/128, from the third loss on
		drainsToBDP bool
	}{{50, 85, true}, {150, 64, false}, {12, 102, false}} {
		t.Run(fmt.Sprintf("buffer=%d", tc.bufferPkts), func(t *testing.T) {
			c := newHTCP(t)
			type loss struct{ cwnd, ssthresh, beta uint32 }
			var losses []loss
			prev := c.St.CA
			res := cctest.Run(c, cctest.Path{RTT: 40 * sim.Millisecond, BDPPkts: 100, BufferPkts: tc.bufferPkts}, 20*sim.Second, func(c *cctest.Conn) {
				if prev != cc.CARecovery && c.St.CA == cc.CARecovery {
					losses = append(losses, loss{c.St.PriorCwndPkts, c.St.SSThreshPkts, uint32(signal(t, c, "beta") * 128)})
				}
				prev = c.St.CA
			})
			t.Logf("losses (cwnd, ssthresh, beta/128): %v; %d timeouts", losses, res.Timeouts)
			if len(losses) < 5 {
				t.Fatalf("%d loss events in 20 s, want at least 5", len(losses))
			}
			for i, l := range losses {
				want := tc.beta
				if i < 3 {
					want = 64
				}
				if l.beta != want {
					t.Errorf("loss %d: beta = %d/128, want %d/128", i+1, l.beta, want)
				}
				if ss := max(l.cwnd*want>>7, 2); l.ssthresh != ss {
					t.Errorf("loss %d: ssthresh = %d at cwnd %d, want ⌊cwnd·%d/128⌋ = %d", i+1, l.ssthresh, l.cwnd, want, ss)
				}
				if tc.drainsToBDP && i >= 3 && (l.ssthresh < 97 || l.ssthresh > 103) {
					t.Errorf("loss %d: ssthresh = %d, want cwnd·RTTmin/RTTmax = BDP 100 ± 3", i+1, l.ssthresh)
				}
			}
		})
	}
}

// TestHTCPUndo checks htcp_cwnd_undo: a reduction found spurious restores
// the window (tcp_reno_undo_cwnd: the cwnd before it) and the time of the
// last congestion event, so α keeps growing with Δ measured from the
// event before. Without the undo the recovery ends a congestion event, Δ
// restarts and α falls back to 1. The spurious loss comes at Δ = 3.1 s
// (100 ms RTT, β = 0.5): a round later, at 3.2 s, α = 1 + ⌊(22000 +
// 1210)/1000⌋ = 24 (paper 24.21) after the undo; at 0.1 s after the
// recovery, 1, without it.
func TestHTCPUndo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		undo     bool
		alpha    float64 // a round after
		congTime float64 // ms
	}{{"undone", true, 24, 3200}, {"real", false, 1, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			rtt := 100 * sim.Millisecond
			c := newHTCP(t)
			t0 := htcpFirstEpoch(t, c, rtt)
			for c.St.Now < t0.Add(3*sim.Second) {
				c.Round(rtt)
			}
			c.Advance(rtt)
			w := c.St.CwndPkts
			n := c.St.InFlightPkts
			c.Lose(1)
			for range n / 2 {
				c.Ack(1)
				c.Fill()
			}
			if c.St.CwndPkts >= w {
				t.Fatalf("cwnd in recovery = %d, want below %d", c.St.CwndPkts, w)
			}
			if tc.undo {
				c.Undo()
				if c.St.CwndPkts != w {
					t.Errorf("cwnd after undo = %d, want the %d before the loss", c.St.CwndPkts, w)
				}
			}
			for c.St.CA != cc.CAOpen {
				c.Round(rtt)
			}
			c.Round(rtt)
			if got := signal(t, c, "alpha"); got != tc.alpha {
				t.Errorf("alpha a round later = %v, want %v", got, tc.alpha)
			}
			if got := signal(t, c, "cong_time"); got != tc.congTime {
				t.Errorf("cong_time a round later = %v ms, want %v", got, tc.congTime)
			}
		})
	}
}
