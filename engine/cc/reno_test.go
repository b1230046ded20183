package cc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

func newReno(t *testing.T) *cctest.Conn {
	t.Helper()
	a, err := cc.New("reno")
	if err != nil {
		t.Fatalf("cc.New(reno): %v", err)
	}
	return cctest.New(a, cctest.Options{})
}

// TestRenoSlowStartThenAI checks RFC 5681 §3.1 on a delayed-ACK-free
// sender: from IW10 the window doubles every RTT (one packet per ACK) until
// it reaches ssthresh = 100, then grows by one packet per RTT. Hand trace:
// 10 → 20 → 40 → 80; the fourth round's 80 ACKs take it to 100 after 20
// and leave 60 ACKs of credit in snd_cwnd_cnt, so the next rounds end at
// 101, 102, …. The product's sender, with delayed ACKs and a real loss,
// is held to the same rules in TestRenoSlowStartThenAIRealSender.
func TestRenoSlowStartThenAI(t *testing.T) {
	c := newReno(t)
	c.St.SSThreshPkts = 100
	want := []uint32{20, 40, 80, 100, 101, 102, 103, 104, 105}
	for round, w := range want {
		c.Round(100 * sim.Millisecond)
		if got := c.St.CwndPkts; got != w {
			t.Errorf("cwnd after round %d = %d, want %d", round+1, got, w)
		}
	}
}

// TestRenoSSThreshOnLoss checks RFC 5681 eq. (4), ssthresh = max(FlightSize/2,
// 2·SMSS), with a full window in flight, and that the window after fast
// recovery is ssthresh (the kernel's tcp_end_cwnd_reduction).
func TestRenoSSThreshOnLoss(t *testing.T) {
	for _, cwnd := range []uint32{2, 3, 4, 11, 100, 1001} {
		t.Run(fmt.Sprint(cwnd), func(t *testing.T) {
			c := newReno(t)
			c.St.CwndPkts, c.St.SSThreshPkts = cwnd, cwnd
			c.Fill()
			c.Advance(10 * sim.Millisecond)
			c.Lose(1)
			want := max(cwnd/2, 2)
			if got := c.St.SSThreshPkts; got != want {
				t.Errorf("ssthresh(cwnd %d) = %d, want %d", cwnd, got, want)
			}
			if c.St.CA != cc.CARecovery {
				t.Errorf("CA after loss = %v, want recovery", c.St.CA)
			}
			c.Fill() // the retransmission and PRR's share of new data
			c.Advance(10 * sim.Millisecond)
			for c.St.CA == cc.CARecovery {
				c.Ack(1)
			}
			if got := c.St.CwndPkts; got != want {
				t.Errorf("cwnd after recovery = %d, want ssthresh %d", got, want)
			}
		})
	}
}

// TestRenoUndo checks that undoing a spurious reduction restores the window
// the reduction started from (tcp_reno_undo_cwnd: max(cwnd, prior_cwnd)).
func TestRenoUndo(t *testing.T) {
	c := newReno(t)
	c.St.CwndPkts, c.St.SSThreshPkts = 40, 40
	c.Fill()
	c.Lose(1)
	c.Undo()
	if got := c.St.CwndPkts; got != 40 {
		t.Errorf("cwnd after undo = %d, want 40", got)
	}
	if got := c.St.SSThreshPkts; got != 40 {
		t.Errorf("ssthresh after undo = %d, want 40 (prior ssthresh)", got)
	}
}

// TestRenoMathis compares Reno's mean window under Bernoulli loss with the
// Mathis, Semke, Mahdavi & Ott (1997) model: a delayed-ACK-free Reno whose
// window halves once per loss event and grows by one packet per RTT has the
// sawtooth W/2 … W with W = sqrt(8/(3p)), so its mean window is
// 3W/4 = sqrt(3/(2p)) packets (their eq. 3, C = sqrt(3/2)). The path is
// far wider than the window, so the RTT is constant. The same assertion
// runs on the product's sender in TestRenoMathisRealSender.
func TestRenoMathis(t *testing.T) {
	for _, p := range []float64{0.001, 0.005, 0.01, 0.02} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			c := newReno(t)
			rtt := 10 * sim.Millisecond
			path := cctest.Path{RTT: rtt, BDPPkts: 10000, LossProb: p, Seed: 1}
			res := cctest.Run(c, path, 20000*rtt, nil)
			want := math.Sqrt(3 / (2 * p))
			got := res.MeanCwndPkts
			t.Logf("p=%v: mean cwnd %.2f pkts, delivered/RTT %.2f, Mathis %.2f (%.1f%%), %d loss events, %d timeouts",
				p, got, float64(res.DeliveredPkts)/20000, want, 100*(got/want-1), res.Recoveries, res.Timeouts)
			if math.Abs(got/want-1) > 0.20 {
				t.Errorf("mean cwnd(p=%v) = %.2f, want %.2f ± 20%%", p, got, want)
			}
		})
	}
}
