package cc_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// newWith builds name with module parameters set on the cctest harness,
// its random draws (if any) from a PCG seeded with seed.
func newWith(t *testing.T, name string, set map[string]int64, seed uint64, o cctest.Options) *cctest.Conn {
	t.Helper()
	a, err := cc.NewWith(name, set)
	if err != nil {
		t.Fatalf("cc.NewWith(%s, %v): %v", name, set, err)
	}
	if s, ok := a.(cc.Seeder); ok {
		s.Seed(rand.New(rand.NewPCG(seed, 7)))
	}
	return cctest.New(a, o)
}

// TestHTCPParams: use_rtt_scaling 0 leaves α unscaled, so a 200 ms flow
// grows as TestHTCPAlphaVsTime's 100 ms one (α 22/RTT at Δ = 3 s where the
// scaled one has 44); use_bandwidth_switch 0 skips the throughput test
// (htcp_beta_update), so β adapts from the second congestion event on,
// where with the switch on it stays 0.5 through the third
// (TestHTCPBeta): minRTT 40 ms, maxRTT 60 ms give β = ⌊40·128/60⌋ = 85.
func TestHTCPParams(t *testing.T) {
	rtt := 200 * sim.Millisecond
	c := newWith(t, "htcp", map[string]int64{"use_rtt_scaling": 0}, 1, cctest.Options{})
	t0 := htcpFirstEpoch(t, c, rtt)
	for c.St.Now < t0.Add(3*sim.Second) {
		c.Round(rtt)
	}
	if got := signal(t, c, "alpha"); got != 22 {
		t.Errorf("use_rtt_scaling 0, 200 ms: alpha at Δ = 3 s = %v, want the unscaled 22", got)
	}

	for _, tc := range []struct {
		sw   int64
		want float64
	}{{0, 85.0 / 128}, {1, 0.5}} {
		c := newWith(t, "htcp", map[string]int64{"use_bandwidth_switch": tc.sw}, 1, cctest.Options{})
		events, prior, beta := 0, cc.CAOpen, -1.0
		cctest.Run(c, cctest.Path{RTT: 40 * sim.Millisecond, BDPPkts: 100, BufferPkts: 50}, 20*sim.Second, func(c *cctest.Conn) {
			if c.St.CA == cc.CARecovery && prior != cc.CARecovery {
				if events++; events == 2 {
					beta = signal(t, c, "beta") // set by the event's ssthresh hook
				}
			}
			prior = c.St.CA
		})
		if beta != tc.want {
			t.Errorf("use_bandwidth_switch %d: beta at the second congestion event = %v, want %v", tc.sw, beta, tc.want)
		}
	}
}

// TestIllinoisParams: win_thresh 0 lets the delay-based α and β work at
// any window, so a loss at cwnd 10 with no queue keeps 10 − ⌊10·8/64⌋ = 9
// (β_min = 1/8) where the default keeps Reno's 5.
func TestIllinoisParams(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]int64
		want uint32
	}{{nil, 5}, {map[string]int64{"win_thresh": 0}, 9}} {
		c := newWith(t, "illinois", tc.set, 1, cctest.Options{})
		c.St.SSThreshPkts = 10
		for range 5 {
			c.Round(40 * sim.Millisecond)
		}
		for c.St.CwndPkts > 10 { // back to 10 packets without a loss: the hook reads cwnd
			c.St.CwndPkts--
		}
		c.Lose(1)
		if c.St.SSThreshPkts != tc.want {
			t.Errorf("%v: ssthresh after a loss at cwnd 10 = %d, want %d", tc.set, c.St.SSThreshPkts, tc.want)
		}
	}
}

// TestCDGParams: backoff_beta 512 backs off to half (⌊w·512/1024⌋);
// use_ineff 0 lifts the limit of five backoffs while the delay keeps
// rising (TestCDGIneffectualBackoff); use_shadow 0 gives a loss after a
// backoff Reno's half of cwnd, not of the shadow (TestCDGShadowWindow).
func TestCDGParams(t *testing.T) {
	c := newCDGWith(t, map[string]int64{"backoff_beta": 512}, 100, 3)
	for rtt := 40 * sim.Millisecond; c.St.CA != cc.CACWR; rtt += 20 * sim.Millisecond {
		if rtt > 2*sim.Second {
			t.Fatal("backoff_beta 512: no backoff while the RTT rose to 2 s")
		}
		c.Round(rtt)
	}
	if c.St.SSThreshPkts != c.St.PriorCwndPkts/2 {
		t.Errorf("backoff_beta 512: ssthresh %d after a backoff from %d, want half", c.St.SSThreshPkts, c.St.PriorCwndPkts)
	}
	c = newCDGWith(t, map[string]int64{"use_ineff": 0}, 100, 3)
	rtt := 40 * sim.Millisecond
	if got := cdgBackoffs(c, &rtt, 40, 20*sim.Millisecond); got <= 5 {
		t.Errorf("use_ineff 0: %d backoffs over 40 rounds of a rising RTT, want more than use_ineff's default 5", got)
	}

	c = newCDGWith(t, map[string]int64{"use_shadow": 0}, 200, 5)
	cdgBackoffThenFlat(t, c, 40*sim.Millisecond, 10)
	c.Lose(1)
	if want := c.St.PriorCwndPkts / 2; c.St.SSThreshPkts != want {
		t.Errorf("use_shadow 0: ssthresh after a loss = %d, want Reno's cwnd/2 = %d", c.St.SSThreshPkts, want)
	}
}

// TestCDGTolerance: with use_tolerance a loss while the delay's minimum
// and maximum both rise (the queue not full: CDG_NONFULL) is taken as
// not congestion, and tcp_cdg_ssthresh keeps cwnd. backoff_factor 0 makes
// nexp_u32(0) = U32_MAX, so no delay backoff comes first.
func TestCDGTolerance(t *testing.T) {
	for _, tol := range []int64{0, 1} {
		c := newCDGWith(t, map[string]int64{"use_tolerance": tol, "backoff_factor": 0}, 100, 1)
		for i, rtt := 0, 40*sim.Millisecond; i < 4; i, rtt = i+1, rtt+5*sim.Millisecond {
			c.Round(rtt)
		}
		if c.St.CA != cc.CAOpen {
			t.Fatalf("use_tolerance %d: CA state %v before the loss, want open (no backoff)", tol, c.St.CA)
		}
		c.Lose(1)
		want := c.St.PriorCwndPkts / 2
		if tol == 1 {
			want = c.St.PriorCwndPkts
		}
		if c.St.SSThreshPkts != want {
			t.Errorf("use_tolerance %d: ssthresh after a loss at cwnd %d = %d, want %d", tol, c.St.PriorCwndPkts, c.St.SSThreshPkts, want)
		}
	}
}

// TestNVParams: nv_pad sets the queue NV keeps, [nv_pad − nv_pad_buffer,
// nv_pad] packets (TestNVQueueTarget's equilibrium, before min_rtt holds
// its own queue): 20 packets with nv_pad 20, on a 20 ms path of BDP 50.
func TestNVParams(t *testing.T) {
	c := newWith(t, "nv", map[string]int64{"nv_pad": 20}, 1, cctest.Options{})
	path := cctest.Path{RTT: 20 * sim.Millisecond, BDPPkts: 50, BufferPkts: 1000}
	lo, hi := ^uint32(0), uint32(0)
	cctest.Run(c, path, 3500*sim.Millisecond, func(c *cctest.Conn) {
		if c.St.Now >= sim.Time(2*sim.Second) {
			q := c.St.InFlightPkts - min(c.St.InFlightPkts, 50)
			lo, hi = min(lo, q), max(hi, q)
		}
	})
	if lo < 18 || hi > 20 {
		t.Errorf("nv_pad 20: queue %d..%d packets from 2 s, want within [18, 20]", lo, hi)
	}
}
