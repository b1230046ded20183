package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// leoDriver feeds hand-built rate samples to one algorithm: each ACK
// delivers 10 packets over 10 ms (a delivery rate of 10·2^24/10000 = 16777
// in the kernel's pkts/us << 24) with the given RTT and inflight.
type leoDriver struct {
	st State
	cc CongController
}

func (d *leoDriver) ack(t *testing.T, atMs int64, rtt sim.Duration, inflight uint32, roundStart bool) {
	t.Helper()
	d.st.Now = sim.Time(atMs) * sim.Time(sim.Millisecond)
	prior := d.st.Delivered - 5 // inside the current round
	if roundStart {
		prior = d.st.Delivered + 1_000_000 // at or past next_rtt_delivered
	}
	d.st.Delivered += 10
	d.st.DeliveredTime = d.st.Now
	d.st.InFlightPkts = inflight
	d.cc.CongControl(&d.st, &RateSample{
		PriorDelivered: prior, Delivered: 10, Interval: 10 * sim.Millisecond, RTT: rtt,
		AckedSacked: 10, PriorInFlightPkts: inflight,
	})
}

// cruisingLeoCC returns LeoCC in PROBE_BW ("dynamic cruise") on a 40 ms
// path: min_rtt 40 ms measured at 5 s, the bw filter at bw (pkts/us << 24),
// the smoothed RTT at rttHatUs, cwnd 60 (below the 2·BDP target, so each
// 10-packet ACK grows it by 10).
func cruisingLeoCC(bw, rttHatUs uint32) (*leoCC, *leoDriver) {
	l := newLeoCC()
	d := &leoDriver{cc: l}
	d.st = State{CwndPkts: 60, CwndClampPkts: ^uint32(0), MSS: 1448, Delivered: 100000}
	d.st.Signals = NewSignals(nil, &d.st.Now)
	d.st.Now = sim.Time(5 * sim.Second)
	l.Init(&d.st)
	l.mode, l.fullBWReached, l.cycleIdx = bbrProbeBW, true, 2
	l.minRTTUs, l.minRTTStamp = 40000, 5000
	l.bw.Reset(0, bw)
	l.rttHatPost = rttHatUs
	l.nextRTTDelivered = d.st.Delivered + 1_000_000 // no round ends unless an ACK says so
	l.updateGains()
	return l, d
}

// The reassignment LeoCC's module expects 12 s into each 15 s period: its
// trigger opens 100 ms before (11.9 s), a cruising flow enters PROBE_RTT at
// once, and 200 ms plus a round after inflight fell to half a BDP the model
// is refreshed: min_rtt becomes the RTT of the path after the reassignment
// (80 ms here, though the 20 s min filter still holds 40 ms), the bw
// filter restarts from reconfiguration_max_bw (0: the RTT did not fall),
// and the flow re-enters STARTUP. Every number below is hand-computed from
// leocc.c's arithmetic.
func TestLeoCCRefreshesModelAtReassignment(t *testing.T) {
	// The filter holds the samples' own rate, 16777 (≈ 11.6 Mbit/s of
	// 1448-byte packets).
	l, d := cruisingLeoCC(16777, 40000)

	// cwnd = min(60 + 10, target ≥ BDP·2 = (16777·40000·512/256 + 2^24 − 1)/2^24 = 80) = 70.
	d.ack(t, 11_899, 40*sim.Millisecond, 100, false)
	if l.reconfTrigger || l.mode != bbrProbeBW {
		t.Fatalf("at 11.899 s: trigger %v mode %d, want no trigger yet (window opens at 11.9 s), mode %d", l.reconfTrigger, l.mode, bbrProbeBW)
	}

	d.ack(t, 11_900, 40*sim.Millisecond, 100, false)
	// probe_rtt cwnd = max(4, (16777·40000·128/256 + 2^24 − 1) / 2^24)
	// = 352317215 / 16777216 = 20 (integer division).
	if !l.reconfTrigger || l.mode != bbrProbeRTT || d.st.CwndPkts != 20 {
		t.Fatalf("at 11.9 s: trigger %v mode %d cwnd %d, want trigger, PROBE_RTT (%d), cwnd 20", l.reconfTrigger, l.mode, d.st.CwndPkts, bbrProbeRTT)
	}
	if l.priorCwnd != 70 {
		t.Errorf("prior_cwnd = %d, want the 70 saved on entry", l.priorCwnd)
	}

	d.ack(t, 11_950, 40*sim.Millisecond, 20, false) // inflight at the target: 200 ms timer
	if l.probeRTTDoneStamp != 12_150 {
		t.Fatalf("probe_rtt_done_stamp = %d, want 11950 + 200 = 12150 jiffies", l.probeRTTDoneStamp)
	}

	d.ack(t, 12_100, 80*sim.Millisecond, 20, true) // a round ends, the timer has not
	if l.mode != bbrProbeRTT || l.minRTTUs != 40000 {
		t.Fatalf("at 12.1 s: mode %d min_rtt %d, want still PROBE_RTT with 40000", l.mode, l.minRTTUs)
	}

	d.ack(t, 12_151, 80*sim.Millisecond, 20, false)
	if l.minRTTUs != 80000 {
		t.Errorf("min_rtt after the refresh = %d us, want the new path's 80000 (a min filter would keep 40000)", l.minRTTUs)
	}
	if l.mode != bbrStartup || l.fullBWReached {
		t.Errorf("after the refresh: mode %d full_bw_reached %v, want STARTUP (0) probing afresh", l.mode, l.fullBWReached)
	}
	if got := l.bw.Get(); got != 0 {
		t.Errorf("bw filter after the refresh = %d, want reconfiguration_max_bw 0 (the RTT rose)", got)
	}
	if d.st.CwndPkts != 70 {
		t.Errorf("cwnd after PROBE_RTT = %d, want prior_cwnd 70 restored", d.st.CwndPkts)
	}
	if l.reconfigs != 1 || !l.reconfTrigger {
		t.Errorf("refreshes %d trigger %v, want 1 and the trigger held until STARTUP ends", l.reconfigs, l.reconfTrigger)
	}
}

// When the RTT falls by more than delta_thresh (45 ms) below the smoothed
// RTT during PROBE_RTT, the path got shorter and the bw filter restarts
// from the latest delivery rate (16777) instead of 0.
func TestLeoCCRestartsFromLatestRateWhenRTTFalls(t *testing.T) {
	l, d := cruisingLeoCC(16777, 120000)
	d.ack(t, 11_900, 120*sim.Millisecond, 100, false)
	d.ack(t, 11_950, 120*sim.Millisecond, 20, false)
	// The Kalman RTT is still ≈120 ms > 40 ms + 45 ms: reconfiguration_max_bw
	// takes latest_bw, the 10-packets-per-10-ms rate of the previous ACK.
	d.ack(t, 12_100, 40*sim.Millisecond, 20, true)
	if l.reconfMaxBW != 16777 {
		t.Fatalf("reconfiguration_max_bw = %d, want latest_bw 10·2^24/10000 = 16777", l.reconfMaxBW)
	}
	d.ack(t, 12_151, 40*sim.Millisecond, 20, false)
	if got := l.bw.Get(); got != 16777 || l.minRTTUs != 40000 || l.mode != bbrStartup {
		t.Errorf("after the refresh: bw %d min_rtt %d mode %d, want 16777, 40000, STARTUP", got, l.minRTTUs, l.mode)
	}
}

// BBRv1 under the same samples knows no schedule: at 11.9 s its 10 s
// min_rtt filter (stamped at 5 s) has not expired, so it stays in PROBE_BW
// and keeps min_rtt 40 ms after the path's RTT doubled.
func TestBBRv1IgnoresReassignment(t *testing.T) {
	b := newBBR1()
	d := &leoDriver{cc: b}
	d.st = State{CwndPkts: 100, CwndClampPkts: ^uint32(0), MSS: 1448, Delivered: 100000}
	d.st.Signals = NewSignals(nil, &d.st.Now)
	d.st.Now = sim.Time(5 * sim.Second)
	b.Init(&d.st)
	b.mode, b.fullBWReached, b.cycleIdx = bbrProbeBW, true, 2
	b.minRTTUs, b.minRTTStamp = 40000, 5000
	b.bw.Reset(0, 16777)
	b.nextRTTDelivered = d.st.Delivered + 1_000_000
	for _, ms := range []int64{11_900, 11_950, 12_100, 12_151} {
		d.ack(t, ms, 80*sim.Millisecond, 100, false)
	}
	if b.mode != bbrProbeBW || b.minRTTUs != 40000 {
		t.Errorf("bbr at 12.151 s: mode %d min_rtt %d, want PROBE_BW and 40000", b.mode, b.minRTTUs)
	}
}

// The trigger window is [offset − 100 ms, offset] of every 15 s period,
// counted from simulated time 0.
func TestLeoCCTriggerWindow(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want bool
	}{{11_899, false}, {11_900, true}, {12_000, true}, {12_001, false}, {26_950, true}, {41_899, false}, {42_000, true}} {
		if got := reconfigDue(sim.Time(tc.ms) * sim.Time(sim.Millisecond)); got != tc.want {
			t.Errorf("reconfigDue(%d ms) = %v, want %v", tc.ms, got, tc.want)
		}
	}
}
