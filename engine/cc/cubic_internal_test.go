package cc

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// TestCubicRootVsCbrt compares the kernel's table-plus-Newton cube root with
// math.Cbrt over the arguments bictcp_update gives it: cube_factor·(W_max −
// cwnd) for W_max − cwnd from 1 to 10^6 packets (the kernel's stated design
// range), i.e. a from about 2^31 to 2^51. The kernel's comment claims an
// average error of about 0.195%; here the average must not exceed that and
// no single root may be off by more than 0.2%. Measured: mean 0.029%,
// max 0.15%.
func TestCubicRootVsCbrt(t *testing.T) {
	c := newCubic(DefaultCubicParams())
	var sum, worst float64
	var worstDelta uint64
	n := 0
	for delta := uint64(1); delta <= 1_000_000; delta += 1 + delta/2000 {
		a := c.cubeFactor * delta
		got := float64(cubicRoot(a))
		want := math.Cbrt(float64(a))
		e := math.Abs(got/want - 1)
		sum += e
		n++
		if e > worst {
			worst, worstDelta = e, delta
		}
	}
	mean := sum / float64(n)
	t.Logf("%d roots: mean error %.4f%%, max %.4f%% at W_max−cwnd = %d", n, 100*mean, 100*worst, worstDelta)
	if mean > 0.00195 {
		t.Errorf("mean |cubicRoot(a)/cbrt(a) − 1| = %.4f%%, want ≤ 0.195%%", 100*mean)
	}
	if worst > 0.002 {
		a := c.cubeFactor * worstDelta
		t.Errorf("cubicRoot(%d) = %d, want %.1f within 0.2%%", a, cubicRoot(a), math.Cbrt(float64(a)))
	}
}

// TestCubicScaleFactors checks cubictcp_register's precomputation against
// hand arithmetic with the default β = 717 and bic_scale = 41:
// beta_scale = 8·(1024+717)/3/(1024−717) = 13928/3/307 = 4642/307 = 15;
// cube_rtt_scale = 410; cube_factor = 2^40/410 = 2681735677.
func TestCubicScaleFactors(t *testing.T) {
	c := newCubic(DefaultCubicParams())
	if c.betaScale != 15 {
		t.Errorf("beta_scale = %d, want 15", c.betaScale)
	}
	if c.cubeRTTScale != 410 {
		t.Errorf("cube_rtt_scale = %d, want 410", c.cubeRTTScale)
	}
	if c.cubeFactor != 2681735677 {
		t.Errorf("cube_factor = %d, want 2681735677", c.cubeFactor)
	}
}

// TestHystartAckDelay checks hystart_ack_delay against hand arithmetic with
// sk_gso_max_size = 65536 − (MAX_TCP_HEADER 192 + 1) = 65343 bytes:
// min(1000, 65343·4·10^6 / rate) µs for a pacing rate in bytes/s.
func TestHystartAckDelay(t *testing.T) {
	for _, tc := range []struct {
		rate units.BitRate
		want uint32
	}{
		{0, 0},                        // no pacing rate yet
		{units.Gbps, 1000},            // 2090.98 µs, capped at 1 ms
		{2500 * units.Mbps, 836},      // 261372·10^6 / 312.5·10^6 = 836.39
		{10 * units.Gbps, 209},        // / 1.25·10^9 = 209.10
		{100 * units.Gbps, 20},        // / 12.5·10^9 = 20.91
		{8 * 65343 * units.Bps, 1000}, // one GSO packet per second
	} {
		st := State{PacingRate: tc.rate, MSS: 1448, GSOMaxSegs: 65535}
		if got := hystartAckDelay(&st); got != tc.want {
			t.Errorf("hystart_ack_delay at %v = %d µs, want %d", tc.rate, got, tc.want)
		}
	}
}

// TestHystartAckTrainThreshold: the ACK-train detector ends slow start once
// a round's ACKs (each within hystart_ack_delta_us = 2 ms of the last) span
// more than delay_min + hystart_ack_delay, halved when sk_pacing_status is
// SK_PACING_NONE (tcp_cubic.c hystart_update). With delay_min = 40 ms and
// a 100 Mbps pacing rate (ack delay capped at 1 ms) the threshold is
// 41000 µs paced and 20500 µs unpaced; ACKs every 1 ms after the round
// starts find it at the first ACK past it: 21 ms and 42 ms.
func TestHystartAckTrainThreshold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paced bool
		want  sim.Duration
	}{
		{"SK_PACING_NONE", false, 21 * sim.Millisecond},
		{"paced", true, 42 * sim.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultCubicParams()
			p.HyStartDetect = HyStartAckTrain
			c := newCubic(p)
			st := State{CwndPkts: 100, SSThreshPkts: 1 << 30, MSS: 1448, PacingRate: 100 * units.Mbps,
				Paced: tc.paced, SndUna: 1, SndNxt: 1 + 100*1448}
			st.Signals = NewSignals(nil, &st.Now)
			st.Now = sim.Time(sim.Second)
			c.Init(&st)
			c.delayMin = 40000
			start := st.Now
			var found sim.Duration
			for i := 1; i <= 60 && found == 0; i++ {
				st.Now = start.Add(sim.Duration(i) * sim.Millisecond)
				st.SndUna = 1 + uint64(i)*1448 // inside the round (end_seq = snd_nxt at its start)
				c.PktsAcked(&st, AckSample{PktsAcked: 1, RTT: 40 * sim.Millisecond})
				if c.found {
					found = st.Now.Sub(start)
				}
			}
			if found != tc.want {
				t.Errorf("ACK train detected %v after the round start, want %v", found, tc.want)
			}
			if found != 0 && st.SSThreshPkts != st.CwndPkts {
				t.Errorf("ssthresh = %d after detection, want cwnd %d", st.SSThreshPkts, st.CwndPkts)
			}
		})
	}
}
