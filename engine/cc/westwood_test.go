package cc_test

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// TestWestwoodBandwidthEstimate checks Westwood+'s estimator on one
// bottleneck: the rate of acked bytes, averaged over windows of at least
// one RTT (and 50 ms) and filtered twice by 7/8, converges to the
// bottleneck rate, BDP·MSS/RTT = 100·1448·8/50 ms = 23.17 Mbps, once the
// window keeps the link busy; after each loss, ssthresh = BWE·RTTmin is
// then the BDP, not half the window (Mascolo et al., MobiCom 2001, §3).
// The buffer (100 packets) makes Reno-style growth end in drop-tail
// losses every so often. Asserted: bw_est within 5 % of the link rate,
// rtt_min the 50 ms base RTT, and ssthresh after every recovery within
// 5 % of the 100-packet BDP.
func TestWestwoodBandwidthEstimate(t *testing.T) {
	a, _ := cc.New("westwood")
	c := cctest.New(a, cctest.Options{})
	rtt := 50 * sim.Millisecond
	const bdp = 100
	var ss []uint32
	prev := c.St.CA
	res := cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp, BufferPkts: 100}, 60*sim.Second, func(c *cctest.Conn) {
		if prev == cc.CARecovery && c.St.CA == cc.CAOpen && c.St.Now > sim.Time(5*sim.Second) {
			ss = append(ss, c.St.SSThreshPkts)
		}
		prev = c.St.CA
	})
	link := float64(bdp*cctest.DefaultMSS*8) / rtt.Seconds()
	bw := signal(t, c, "bw_est")
	t.Logf("bw_est %.4g bps (link %.4g), rtt_min %v ms, ssthresh after recoveries %v, %d drops", bw, link, signal(t, c, "rtt_min"), ss, res.Drops)
	if math.Abs(bw/link-1) > 0.05 {
		t.Errorf("bw_est = %.4g bps, want the bottleneck rate %.4g ± 5%%", bw, link)
	}
	if got := signal(t, c, "rtt_min"); got != 50 {
		t.Errorf("rtt_min = %v jiffies, want 50 (ms)", got)
	}
	if len(ss) == 0 {
		t.Fatalf("no recovery after 5 s, want drop-tail losses")
	}
	for _, s := range ss {
		if math.Abs(float64(s)/bdp-1) > 0.05 {
			t.Errorf("ssthresh after recovery = %d, want BWE·RTTmin = BDP %d ± 5%%", s, bdp)
		}
	}
}
