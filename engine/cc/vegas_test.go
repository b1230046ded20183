package cc_test

import (
	"fmt"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// TestVegasQueue checks Vegas's equilibrium (Brakmo & Peterson 1995, §3.2)
// on one bottleneck with no loss: the window stops changing once
// alpha ≤ diff ≤ beta, diff = ⌊cwnd·(rtt − baseRTT)/baseRTT⌋. At full use
// the queue is Q = cwnd − BDP packets and rtt = baseRTT·(1 + Q/BDP), so
// diff = ⌊Q·cwnd/BDP⌋ and the queue settles where Q·(BDP + Q)/BDP lies in
// [alpha, beta + 1) = [2, 5): for a 100-packet BDP, Q in [1.96, 4.8), so
// 2, 3 or 4 packets, and the window in 102..104. Its own diff signal must
// read the same queue, and the window must hold still there. Measured:
// the window comes down from slow start's overshoot and stops at the
// band's top, Q = 4, for BDPs of 20, 100 and 300 packets.
func TestVegasQueue(t *testing.T) {
	for _, bdp := range []uint32{20, 100, 300} {
		t.Run(fmt.Sprint(bdp), func(t *testing.T) {
			a, _ := cc.New("vegas")
			c := cctest.New(a, cctest.Options{})
			rtt := 20 * sim.Millisecond
			path := cctest.Path{RTT: rtt, BDPPkts: bdp}
			// Converge first: slow start overshoots (its rounds' smallest
			// RTT is their first packet's, which finds no queue), then
			// Vegas takes one packet off per RTT.
			settled := sim.Time(0).Add(sim.Duration(8*bdp+100) * rtt)
			var lo, hi uint32 = ^uint32(0), 0
			cctest.Run(c, path, settled.Sub(0)+200*rtt, func(c *cctest.Conn) {
				if c.St.Now >= settled {
					lo, hi = min(lo, c.St.CwndPkts), max(hi, c.St.CwndPkts)
				}
			})
			qLo, qHi := lo-bdp, hi-bdp
			diff := signal(t, c, "diff")
			t.Logf("BDP %d: cwnd %d..%d, queue %d..%d packets, diff %v, ssthresh %d", bdp, lo, hi, qLo, qHi, diff, c.St.SSThreshPkts)
			for _, q := range []uint32{qLo, qHi} {
				if x := float64(q) * float64(bdp+q) / float64(bdp); x < 2 || x >= 5 {
					t.Errorf("queue = %d packets: Q·cwnd/BDP = %.2f, want in [alpha, beta+1) = [2, 5)", q, x)
				}
			}
			if hi-lo > 1 {
				t.Errorf("cwnd ranged %d..%d over 200 RTTs, want it held (at most one step)", lo, hi)
			}
			if diff < 2 || diff > 4 {
				t.Errorf("diff signal = %v, want alpha..beta = 2..4", diff)
			}
		})
	}
}
