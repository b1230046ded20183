package cc

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// TestCDGNexp checks nexp_u32's table arithmetic against exp(−x): within
// 0.05 % of U32_MAX·e^(−ux/10⁶) plus 10⁻⁶ of U32_MAX (a backoff
// probability off by at most that), and 0 from ux = 2^24 on.
func TestCDGNexp(t *testing.T) {
	for _, ux := range []uint32{0, 1, 255, 256, 1000, 33_333, 100_000, 500_000, 1_000_000, 3_000_000, 10_000_000, 1<<24 - 1} {
		got := float64(nexpU32(ux))
		want := math.Exp(-float64(ux)/1e6) * math.MaxUint32
		if math.Abs(got-want) > 5e-4*want+1e-6*math.MaxUint32 {
			t.Errorf("nexp_u32(%d) = %.0f, want U32_MAX·e^−%g = %.0f (±0.05 %%)", ux, got, float64(ux)/1e6, want)
		}
	}
	if got := nexpU32(1 << 24); got != 0 {
		t.Errorf("nexp_u32(2^24) = %d, want 0 (the kernel's cut-off)", got)
	}
}

// TestCDGHystartExitDropsTheAllowance: once HyStart's delay test sets
// ssthresh to cwnd, tcp_is_cwnd_limited (asked again by tcp_cdg_cong_avoid
// and tcp_reno_cong_avoid) no longer grants slow start's allowance, so a
// flow whose last window was not full neither grows nor lets its shadow
// window pass cwnd: from cwnd 10, snd_cwnd_cnt 9 and a shadow of 50, the
// kernel leaves cwnd 10, cnt 9 and takes the shadow to 10 (traced from
// tcp_cdg.c and include/net/tcp.h). Before the fix the port grew cwnd to
// 11 and the shadow to 51.
func TestCDGHystartExitDropsTheAllowance(t *testing.T) {
	var now sim.Time
	st := &State{CwndPkts: 10, CwndClampPkts: ^uint32(0), SSThreshPkts: InfiniteSSThresh, Signals: NewSignals(nil, &now)}
	c := &CDG{p: DefaultCDGParams()}
	c.Init(st)
	c.delayMin, c.sampleCnt = 1000, 8
	c.rtt = cdgMinMax{2000, 2000} // above max(delay_min·9/8, 125) µs: the delay test fires
	c.shadowWnd, c.rttSeq = 50, 1<<40
	st.CwndCnt, st.IsCwndLimited, st.CwndLimited = 9, false, true // slow start's allowance alone
	c.CongAvoid(st, 1)
	if st.SSThreshPkts != 10 || st.CwndPkts != 10 || st.CwndCnt != 9 || c.shadowWnd != 10 {
		t.Errorf("ssthresh %d, cwnd %d, cnt %d, shadow %d; want 10, 10, 9, 10", st.SSThreshPkts, st.CwndPkts, st.CwndCnt, c.shadowWnd)
	}
}

// TestDivRoundClosestS32 is DIV_ROUND_CLOSEST (include/linux/math.h) on
// s32 by 64: halves round away from zero, division truncates.
func TestDivRoundClosestS32(t *testing.T) {
	for _, c := range [][2]int32{{0, 0}, {31, 0}, {32, 1}, {95, 1}, {96, 2}, {-31, 0}, {-32, -1}, {-96, -2}} {
		if got := divRoundClosestS32(c[0], 64); got != c[1] {
			t.Errorf("DIV_ROUND_CLOSEST(%d, 64) = %d, want %d", c[0], got, c[1])
		}
	}
}
