package cc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// newCDG returns a CDG connection in congestion avoidance at cwnd w
// (ssthresh = w), its backoff draws from a PCG seeded with seed.
func newCDG(t *testing.T, w uint32, seed uint64) *cctest.Conn {
	t.Helper()
	return newCDGWith(t, nil, w, seed)
}

// newCDGWith is newCDG with module parameters set.
func newCDGWith(t *testing.T, set map[string]int64, w uint32, seed uint64) *cctest.Conn {
	t.Helper()
	c := newWith(t, "cdg", set, seed, cctest.Options{InitCwnd: w})
	c.St.SSThreshPkts = w
	return c
}

// cdgBackoffs runs rounds of c, the RTT *rtt moving by step after each,
// and counts the delay backoffs (entries into CWR).
func cdgBackoffs(c *cctest.Conn, rtt *sim.Duration, rounds int, step sim.Duration) int {
	n := 0
	for range rounds {
		prior := c.St.CA
		c.Round(*rtt)
		if prior != cc.CACWR && c.St.CA == cc.CACWR {
			n++
		}
		*rtt += step
	}
	return n
}

// cdgBackoffThenFlat drives c through two rounds at base, rounds 20 ms
// longer until a delay backoff, the CWR it enters, and flat rounds at
// base: the RTT falls back, the window's gradients sum to zero and no
// second backoff follows. It returns the window the backoff reduced.
func cdgBackoffThenFlat(t *testing.T, c *cctest.Conn, base sim.Duration, flat int) uint32 {
	t.Helper()
	c.Round(base)
	c.Round(base)
	for i := 0; c.St.CA != cc.CACWR; i++ {
		if i == 20 {
			t.Fatal("no backoff in 20 rounds after a 20 ms rise of the RTT")
		}
		c.Round(base + 20*sim.Millisecond)
	}
	w := c.St.PriorCwndPkts
	for c.St.CA == cc.CACWR {
		c.Round(base)
	}
	for range flat {
		c.Round(base)
	}
	return w
}

// TestCDGBackoffProbability checks the delay backoff against Hayes &
// Armitage (2011, eq. 4): a flow whose smoothed RTT gradient is ḡ backs
// off with probability 1 − e^(−ḡ/G). The kernel keeps the gradient summed
// over its 8-round window, not averaged, and scales it by backoff_factor
// = 1000/(G·window) = 42 (G ≈ 2.98 ms), so P = 1 − exp(−sum·42·10⁻⁶) with
// the sum in µs. Rounds of RTT r, r, r + δ: the third round's first ACK
// takes the gradients 0 and δ, two of the window's eight, extrapolated to
// a sum of δ·8/2. Over 4,000 flows the share that entered CWR there must
// be within 4 standard errors of the model; each backoff must set ssthresh
// to ⌊cwnd·724/1024⌋ (backoff_beta, √½).
func TestCDGBackoffProbability(t *testing.T) {
	const n = 4000
	r := 40 * sim.Millisecond
	for _, deltaUs := range []int{500, 2000, 8000} {
		t.Run(fmt.Sprintf("δ=%dus", deltaUs), func(t *testing.T) {
			delta := sim.Duration(deltaUs) * sim.Microsecond
			sum := float64(deltaUs) * 8 / 2
			want := 1 - math.Exp(-sum*42e-6)
			backoffs := 0
			for i := range n {
				c := newCDG(t, 100, uint64(i))
				c.Round(r)
				c.Round(r)
				c.Round(r + delta)
				if c.St.CA == cc.CACWR {
					backoffs++
					if c.St.SSThreshPkts != c.St.PriorCwndPkts*724/1024 {
						t.Fatalf("flow %d: ssthresh after a backoff = %d, want ⌊%d·724/1024⌋ = %d",
							i, c.St.SSThreshPkts, c.St.PriorCwndPkts, c.St.PriorCwndPkts*724/1024)
					}
				}
			}
			got := float64(backoffs) / n
			se := math.Sqrt(want * (1 - want) / n)
			t.Logf("gradient sum %.0f µs: %d of %d backed off (%.4f), model %.4f ± %.4f", sum, backoffs, n, got, want, 4*se)
			if math.Abs(got-want) > 4*se {
				t.Errorf("backoff share = %.4f, want 1 − exp(−%.0f·42e-6) = %.4f ± %.4f", got, sum, want, 4*se)
			}
		})
	}
}

// TestCDGNoBackoffOnFlatOrFallingDelay: a gradient that is not positive
// never backs off (Hayes & Armitage: only a growing queue does), however
// many rounds.
func TestCDGNoBackoffOnFlatOrFallingDelay(t *testing.T) {
	for _, step := range []sim.Duration{0, -100 * sim.Microsecond} {
		c := newCDG(t, 100, 1)
		rtt := 60 * sim.Millisecond
		for range 40 {
			c.Round(rtt)
			if c.St.CA != cc.CAOpen {
				t.Fatalf("step %v: CA state %v after a round, want open (no backoff)", step, c.St.CA)
			}
			rtt += step
		}
		// Reno's growth: +1 per round, 40 rounds.
		if c.St.CwndPkts < 139 || c.St.CwndPkts > 141 {
			t.Errorf("step %v: cwnd after 40 rounds = %d, want Reno's 100 + 40", step, c.St.CwndPkts)
		}
	}
}

// TestCDGIneffectualBackoff follows the paper's coexistence heuristic: a
// queue that keeps growing through backoffs is a loss-based flow's, so
// after use_ineff = 5 backoffs without the delay falling CDG stops backing
// off, until the gradient sum falls by 32 µs or more. The RTT rises 20 ms
// a round (P ≈ 1 − e^(−6.7) per round: every eligible round backs off).
func TestCDGIneffectualBackoff(t *testing.T) {
	c := newCDG(t, 100, 3)
	rtt := 40 * sim.Millisecond
	if got := cdgBackoffs(c, &rtt, 40, 20*sim.Millisecond); got != 5 {
		t.Errorf("backoffs over 40 rounds of a rising RTT = %d, want use_ineff = 5", got)
	}
	// The RTT falls: the sum drops, backoff_cnt resets, and once it rises
	// again backoffs resume.
	cdgBackoffs(c, &rtt, 10, -20*sim.Millisecond)
	if got := cdgBackoffs(c, &rtt, 20, 20*sim.Millisecond); got == 0 {
		t.Errorf("backoffs after the delay fell and rose again = 0, want some (backoff_cnt reset)")
	}
}

// TestCDGShadowWindow checks the shadow window (Hayes & Armitage §4.2): a
// loss after a delay backoff leaves half of the window Reno would have had
// without it, not half of CDG's. The RTT rises 20 ms in one round until a
// backoff takes cwnd w to ⌊w·724/1024⌋ and keeps the shadow at w; then it
// falls back, so the window's gradients sum to zero and no backoff
// follows, and ten rounds of Reno growth add as much to both. The loss
// then gives ssthresh max(shadow/2, cwnd/2): from w = 200, 105 where
// Reno's rule gives 75.
func TestCDGShadowWindow(t *testing.T) {
	c := newCDG(t, 200, 5)
	w := cdgBackoffThenFlat(t, c, 40*sim.Millisecond, 10)
	// Growth in congestion avoidance leaves ssthresh where the backoff set it.
	if c.St.SSThreshPkts != w*724/1024 {
		t.Fatalf("ssthresh after the backoff = %d, want ⌊%d·724/1024⌋", c.St.SSThreshPkts, w)
	}
	if c.St.CA != cc.CAOpen {
		t.Fatalf("CA state %v after flat rounds, want open (no second backoff)", c.St.CA)
	}
	shadow := w + (c.St.CwndPkts - w*724/1024)
	c.Lose(1)
	want := max(shadow/2, c.St.PriorCwndPkts/2)
	t.Logf("backoff at %d; cwnd %d at the loss, shadow %d: ssthresh %d (Reno's %d)", w, c.St.PriorCwndPkts, shadow, c.St.SSThreshPkts, c.St.PriorCwndPkts/2)
	if c.St.SSThreshPkts != want || want <= c.St.PriorCwndPkts/2 {
		t.Errorf("ssthresh after the loss = %d, want max(shadow/2, cwnd/2) = %d, above Reno's %d", c.St.SSThreshPkts, want, c.St.PriorCwndPkts/2)
	}
}
