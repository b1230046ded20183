package cc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

func newDCTCPConn(t *testing.T, p cc.DCTCPParams) (*cctest.Conn, *cc.DCTCP) {
	t.Helper()
	d, err := cc.NewDCTCP(p)
	if err != nil {
		t.Fatalf("NewDCTCP(%+v): %v", p, err)
	}
	return cctest.New(d, cctest.Options{ECNOk: true}), d
}

// TestDCTCPKernelConstants checks the registered defaults against
// tcp_dctcp.c: DCTCP_MAX_ALPHA 1024, dctcp_shift_g 4 and alpha starting at
// dctcp_alpha_on_init = DCTCP_MAX_ALPHA, i.e. 1.0.
func TestDCTCPKernelConstants(t *testing.T) {
	if cc.DCTCPMaxAlpha != 1024 || cc.DCTCPShiftG != 4 {
		t.Errorf("DCTCP_MAX_ALPHA, dctcp_shift_g = %d, %d, want 1024, 4", cc.DCTCPMaxAlpha, cc.DCTCPShiftG)
	}
	a, err := cc.New("dctcp")
	if err != nil {
		t.Fatalf("cc.New(dctcp): %v", err)
	}
	c := cctest.New(a, cctest.Options{ECNOk: true})
	if got := a.(*cc.DCTCP).Alpha(); got != 1024 {
		t.Errorf("alpha after init = %d, want 1024", got)
	}
	if got := signal(t, c, "alpha"); got != 1 {
		t.Errorf("alpha signal after init = %v, want 1", got)
	}
	if _, err := cc.NewDCTCP(cc.DCTCPParams{ShiftG: 11}); err == nil {
		t.Errorf("NewDCTCP(shift_g 11) = nil error, want out of range")
	}
}

// TestDCTCPAlphaConvergence checks alpha against the EWMA of the DCTCP
// paper (Alizadeh et al. 2010, §3.1), α ← (1 − g)·α + g·F with g = 1/16,
// under a constant marking fraction F = 1/n: every n-th packet is CE-marked.
//
// The window is held at W = 201 (ssthresh and the clamp at W) and the ACKs
// count CE without ECE, so no reduction disturbs the windows: the
// estimator alone is under test. Observation windows then hold W − 1 = 200
// packets (the window closes on an ACK before the sender refills), a
// multiple of every n here, so each window's fraction is exactly F. The
// first window, closed by the first ACK, holds packet 0 alone, unmarked:
// F₁ = 0. From α₀ = 1 the analytic α_k = F + (α₁ − F)·(15/16)^(k−1).
//
// Tolerance: the kernel keeps α in 1/1024 and floors both α>>4 and
// (ce << 6)/delivered, each step off by less than 1/1024 either way, and the
// error contracts by 15/16 per step, so |α_k − α_k(analytic)| < 16/1024 =
// 1/64 for all k. Convergence: (1 − F)·(15/16)^k < 1/64 needs k > 63 for F
// = 0.1, so after 120 windows α is within 1/64 of F.
func TestDCTCPAlphaConvergence(t *testing.T) {
	const w = 201
	for _, n := range []uint32{2, 4, 10, 20, 50} {
		t.Run(fmt.Sprintf("F=1/%d", n), func(t *testing.T) {
			f := 1 / float64(n)
			c, d := newDCTCPConn(t, cc.DefaultDCTCPParams())
			c.St.CwndPkts, c.St.SSThreshPkts, c.St.CwndClampPkts = w, w, w
			c.Fill()
			want := 1.0
			windows := 0
			lastNext := signal(t, c, "next_seq")
			var seq uint32
			for windows < 120 {
				seq++
				var ce uint32
				if seq%n == 0 {
					ce = 1
				}
				c.OnACK(cctest.ACK{Acked: 1, CE: ce})
				c.Fill()
				if next := signal(t, c, "next_seq"); next != lastNext {
					lastNext = next
					fk := f
					if windows == 0 {
						fk = 0
					}
					want = want - want/16 + fk/16
					windows++
					got := float64(d.Alpha()) / cc.DCTCPMaxAlpha
					if math.Abs(got-want) >= 1.0/64 {
						t.Fatalf("alpha after window %d = %.4f, want %.4f ± 1/64", windows, got, want)
					}
				}
			}
			got := float64(d.Alpha()) / cc.DCTCPMaxAlpha
			if math.Abs(got-f) >= 1.0/64 {
				t.Errorf("alpha after %d windows = %.4f, want F = %.4f ± 1/64", windows, got, f)
			}
			if cf := signal(t, c, "ce_fraction"); cf != f {
				t.Errorf("ce_fraction of the last window = %v, want %v", cf, f)
			}
			t.Logf("F = %.4f: alpha = %.4f (%d/1024) after %d windows", f, got, d.Alpha(), windows)
		})
	}
}

// ssthreshLog records every call of DCTCP's ssthresh hook.
type ssthreshLog struct {
	*cc.DCTCP
	calls []reduction
}

// reduction is one ssthresh call: the state it saw and what it returned.
type reduction struct {
	cwnd, alpha, ssthresh uint32
	una, nxt              uint64
}

func (l *ssthreshLog) SSThresh(st *cc.State) uint32 {
	r := reduction{cwnd: st.CwndPkts, alpha: l.Alpha(), una: st.SndUna, nxt: st.SndNxt}
	r.ssthresh = l.DCTCP.SSThresh(st)
	l.calls = append(l.calls, r)
	return r.ssthresh
}

// TestDCTCPReductionOncePerWindow checks the DCTCP paper's (§3.1) cwnd ←
// cwnd·(1 − α/2), applied once per window of data however many of its
// packets are marked (the sender's CWR state lasts until the window sent
// before the reduction is acked), with every packet marked for several
// windows, from several initial alphas. The kernel's integer form, cwnd −
// (cwnd·α >> 11), floors the part taken away, so it lies within one packet
// above the real product. After each CWR episode cwnd is the ssthresh it
// set (tcp_end_cwnd_reduction).
func TestDCTCPReductionOncePerWindow(t *testing.T) {
	for _, a0 := range []uint32{1024, 512, 128, 16, 0} {
		t.Run(fmt.Sprint(a0), func(t *testing.T) {
			d, err := cc.NewDCTCP(cc.DCTCPParams{ShiftG: 4, AlphaOnInit: a0})
			if err != nil {
				t.Fatalf("NewDCTCP: %v", err)
			}
			l := &ssthreshLog{DCTCP: d}
			c := cctest.New(l, cctest.Options{ECNOk: true})
			c.St.CwndPkts, c.St.SSThreshPkts = 100, 100
			c.Fill()
			for len(l.calls) < 6 {
				c.OnACK(cctest.ACK{Acked: 1, CE: 1, ECE: true})
				c.Fill()
			}
			for i, r := range l.calls {
				alpha := float64(r.alpha) / cc.DCTCPMaxAlpha
				want := max(float64(r.cwnd)*(1-alpha/2), 2)
				if got := float64(r.ssthresh); got < want || got >= want+1 {
					t.Errorf("reduction %d: ssthresh(cwnd %d, alpha %.4f) = %v, want %.2f (+ < 1)", i, r.cwnd, alpha, got, want)
				}
				if i == 0 {
					continue
				}
				prev := l.calls[i-1]
				if r.una <= prev.nxt {
					t.Errorf("reduction %d at snd_una %d, before the window of reduction %d (to %d) was acked", i, r.una, i-1, prev.nxt)
				}
				// The window CWR ended with is the ssthresh set before.
				if r.cwnd != prev.ssthresh {
					t.Errorf("reduction %d from cwnd %d, want the previous ssthresh %d", i, r.cwnd, prev.ssthresh)
				}
			}
		})
	}
}

// TestDCTCPLoss checks the loss response against RFC 8257 §3.5 ("A DCTCP
// sender MUST react to loss episodes in the same way as conventional
// TCP"): ssthresh = max(cwnd/2, 2) whatever alpha, on fast retransmit and
// on RTO (dctcp_react_to_loss), and undo restores the window before the
// reduction. Odd windows tell the two apart: with alpha = 1 DCTCP's own
// rule would give cwnd − ⌊cwnd/2⌋, one more than Reno's ⌊cwnd/2⌋.
func TestDCTCPLoss(t *testing.T) {
	for _, cwnd := range []uint32{2, 3, 101, 1001} {
		t.Run(fmt.Sprintf("recovery/%d", cwnd), func(t *testing.T) {
			c, _ := newDCTCPConn(t, cc.DefaultDCTCPParams())
			c.St.CwndPkts, c.St.SSThreshPkts = cwnd, cwnd
			c.Fill()
			c.Lose(1)
			if got, want := c.St.SSThreshPkts, max(cwnd/2, 2); got != want {
				t.Errorf("ssthresh after loss at cwnd %d = %d, want %d", cwnd, got, want)
			}
			if got := signal(t, c, "loss_cwnd"); got != float64(cwnd) {
				t.Errorf("loss_cwnd = %v, want %d", got, cwnd)
			}
			c.Undo()
			if got := c.St.CwndPkts; got != cwnd {
				t.Errorf("cwnd after undo = %d, want %d", got, cwnd)
			}
		})
		t.Run(fmt.Sprintf("rto/%d", cwnd), func(t *testing.T) {
			c, _ := newDCTCPConn(t, cc.DefaultDCTCPParams())
			c.St.CwndPkts, c.St.SSThreshPkts = cwnd, cwnd
			c.Fill()
			c.Timeout()
			if got, want := c.St.SSThreshPkts, max(cwnd/2, 2); got != want {
				t.Errorf("ssthresh after RTO at cwnd %d = %d, want %d", cwnd, got, want)
			}
		})
	}
}

// TestDCTCPNoECNFallsBackToReno checks dctcp_init's fallback: without ECN
// the flow runs dctcp_reno, whose ssthresh is tcp_reno_ssthresh.
func TestDCTCPNoECNFallsBackToReno(t *testing.T) {
	a, err := cc.New("dctcp")
	if err != nil {
		t.Fatalf("cc.New(dctcp): %v", err)
	}
	c := cctest.New(a, cctest.Options{})
	if got := c.Hooks.Name(); got != "reno" {
		t.Errorf("algorithm without ECN = %q, want reno", got)
	}
	c.St.CwndPkts, c.St.SSThreshPkts = 101, 101
	if got := c.Hooks.SSThresh(&c.St); got != 50 {
		t.Errorf("ssthresh without ECN at cwnd 101 = %d, want Reno's 50", got)
	}
}

// TestDCTCPStepMarkingSawtooth checks the closed loop against the steady
// state analysis of the DCTCP paper (Alizadeh et al., SIGCOMM 2010, §3.3)
// for one flow behind a step-marking queue (CE when a packet finds more
// than K packets queued). The window at which the queue reaches K is W* =
// C·RTT + K (packets); the window rises one packet per RTT to W* + 1, and
// the flow cuts by α/2, where α, the fraction of packets marked, solves
// α²·(1 − α/4) = (2W* + 1)/(W* + 1)² (≈ 2/W*, so α ≈ sqrt(2/W*)). The
// sawtooth's amplitude is D = (W* + 1)·α/2.
//
// The analysis assumes the queue exceeds K for exactly one RTT and α is
// constant. Here (as in the kernel) alpha dips between marking episodes, and
// the queue stays above K while PRR drains the first reduction, so a
// sawtooth often ends with a second, smaller reduction in the next window.
// A sawtooth is therefore measured from its peak (the window at the first
// reduction after growth) to its trough (the lowest ssthresh before growth
// resumes). The peak is W* + 1 exactly. Both effects lengthen the
// sawtooth, so against the fluid model the amplitude comes out 16–23% larger
// and the marked fraction 20–22% smaller (W* = 50, 120, 265); the test
// allows 30%.
func TestDCTCPStepMarkingSawtooth(t *testing.T) {
	for _, tc := range []struct{ bdp, k uint32 }{{40, 10}, {100, 20}, {200, 65}} {
		t.Run(fmt.Sprintf("bdp=%d,K=%d", tc.bdp, tc.k), func(t *testing.T) {
			c, _ := newDCTCPConn(t, cc.DefaultDCTCPParams())
			path := cctest.Path{
				RTT: 10 * sim.Millisecond, BDPPkts: tc.bdp,
				MarkCE: func(backlog uint32) bool { return backlog > tc.k },
			}
			// Sawtooths count after 10 s, past slow start and alpha's
			// transient.
			warm := sim.Time(0).Add(10 * sim.Second)
			var (
				peaks, amps  []float64
				peak, trough uint32
				grew         bool
				lastCwnd     uint32
				deliv0, ce0  uint32
				prev         = c.St.CA
			)
			cctest.Run(c, path, 40*sim.Second, func(c *cctest.Conn) {
				st := &c.St
				if st.Now < warm {
					deliv0, ce0 = st.Delivered, st.DeliveredCE
					prev, lastCwnd = st.CA, st.CwndPkts
					return
				}
				if st.CA == cc.CAOpen && st.CwndPkts > lastCwnd {
					grew = true
				}
				if prev != cc.CACWR && st.CA == cc.CACWR || prev == cc.CACWR && st.SSThreshPkts < trough {
					if grew { // a new sawtooth starts
						if peak > 0 {
							peaks = append(peaks, float64(peak))
							amps = append(amps, float64(peak-trough))
						}
						peak, grew = st.PriorCwndPkts, false
					}
					trough = st.SSThreshPkts
				}
				prev, lastCwnd = st.CA, st.CwndPkts
			})
			if len(amps) < 10 {
				t.Fatalf("%d sawtooths in 30 s, want at least 10", len(amps))
			}
			wStar := float64(tc.bdp + tc.k)
			// Solve α²(1 − α/4) = (2W*+1)/(W*+1)² by bisection.
			rhs := (2*wStar + 1) / ((wStar + 1) * (wStar + 1))
			lo, hi := 0.0, 1.0
			for range 60 {
				mid := (lo + hi) / 2
				if mid*mid*(1-mid/4) < rhs {
					lo = mid
				} else {
					hi = mid
				}
			}
			alphaTh := lo
			dTh := (wStar + 1) * alphaTh / 2
			wMax, d := mean(peaks), mean(amps)
			frac := float64(c.St.DeliveredCE-ce0) / float64(c.St.Delivered-deliv0)
			t.Logf("W* = %.0f: peak %.2f (theory %.0f), amplitude %.2f (theory %.2f), marked fraction %.4f (theory %.4f), %d sawtooths",
				wStar, wMax, wStar+1, d, dTh, frac, alphaTh, len(amps))
			if wMax != wStar+1 {
				t.Errorf("mean peak window = %.2f, want W* + 1 = %.0f", wMax, wStar+1)
			}
			if math.Abs(d/dTh-1) > 0.30 {
				t.Errorf("amplitude = %.2f, want (W*+1)·α/2 = %.2f ± 30%%", d, dTh)
			}
			if math.Abs(frac/alphaTh-1) > 0.30 {
				t.Errorf("marked fraction = %.4f, want α = %.4f ± 30%%", frac, alphaTh)
			}
		})
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
