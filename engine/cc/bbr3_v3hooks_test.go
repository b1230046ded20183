package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// newInitedBBR3 is a BBRv3 instance after bbr_init on a flow with a 10
// packet window.
func newInitedBBR3() (*bbr3, *State) {
	b := newBBR3()
	st := &State{CwndPkts: 10, MSS: 1448, Now: sim.Time(sim.Second)}
	st.Signals = NewSignals(nil, &st.Now)
	b.Init(st)
	return b, st
}

// TestBBR3LossProbeRecovery checks bbr_run_loss_probe_recovery (google/bbr
// v3 branch, on CA_EVENT_TLP_RECOVERY with bbr_loss_probe_recovery = true)
// by hand: while probing (bw_probe_samples), one repaired segment counts as
// rs.lost = 1 out of tx_in_flight = inflight_latest + 1, and the flight is
// too high when 1 > tx_in_flight·bbr_loss_thresh >> 8 = ⌊tx_in_flight·5/256⌋,
// i.e. for tx_in_flight ≤ 51. inflight_hi is then cut to
// max(tx_in_flight, target_inflight·(1 − β)) = max(tx, ⌊10·180/256⌋ = 7)
// unless the probed segment was sent app-limited. Any such event notes a
// loss round.
func TestBBR3LossProbeRecovery(t *testing.T) {
	for _, tc := range []struct {
		name          string
		probing       bool
		latest        uint32
		appLimited    bool
		wantHi        uint32
		wantTooHigh   bool
		wantProbeDone bool
	}{
		{"1 of 51 is too high", true, 50, false, 51, true, true},
		{"1 of 52 is within 2%", true, 51, false, unset32, false, false},
		{"app-limited probe keeps inflight_hi", true, 10, true, unset32, true, true},
		{"not probing: only a loss round", false, 10, false, unset32, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, st := newInitedBBR3()
			b.bwProbeSamples = tc.probing
			b.inflightLatest = tc.latest
			st.TLPOrigDataAppLimited = tc.appLimited
			b.CwndEvent(st, EventTLPRecovery)
			if b.inflightHi != tc.wantHi {
				t.Errorf("inflight_hi = %d, want %d", b.inflightHi, tc.wantHi)
			}
			if b.prevProbeTooHigh != tc.wantTooHigh {
				t.Errorf("prev_probe_too_high = %v, want %v", b.prevProbeTooHigh, tc.wantTooHigh)
			}
			if b.bwProbeSamples != (tc.probing && !tc.wantProbeDone) {
				t.Errorf("bw_probe_samples = %v, want %v", b.bwProbeSamples, tc.probing && !tc.wantProbeDone)
			}
			if !b.lossInRound || !b.lossInCycle {
				t.Errorf("loss_in_round, loss_in_cycle = %v, %v; want both set (bbr_note_loss)", b.lossInRound, b.lossInCycle)
			}
		})
	}
}

// TestBBR3ReadsRawIsCwndLimited: bbr_probe_inflight_hi_upward grows
// inflight_hi only if tp->is_cwnd_limited — the flag tcp_cwnd_validate
// keeps — not tcp_is_cwnd_limited(), which also holds in slow start while
// cwnd < 2·max_packets_out. With inflight_hi = cwnd = 20,
// bw_probe_up_cnt = 5 and 10 packets acked, the kernel adds 10/5 = 2.
func TestBBR3ReadsRawIsCwndLimited(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		isCwndLimited, cwndLimit bool
		wantHi                   uint32
	}{
		{"is_cwnd_limited", true, true, 22},
		{"slow-start allowance only", false, true, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, st := newInitedBBR3()
			st.CwndPkts = 20
			b.inflightHi = 20
			b.bwProbeUpCnt = 5
			st.IsCwndLimited, st.CwndLimited = tc.isCwndLimited, tc.cwndLimit
			b.probeInflightHiUpward(st, &rateSample{ackedSacked: 10})
			if b.inflightHi != tc.wantHi {
				t.Errorf("inflight_hi = %d, want %d", b.inflightHi, tc.wantHi)
			}
		})
	}
}

// TestBBR3IntegerWidths traces two v3 functions by hand where their integer
// widths decide, as a differential run against the v3 branch's tcp_bbr.c
// found them (neither reachable by a real flow):
//
//   - bbr_update_ecn_alpha keeps ce_ratio and alpha as u64s: with 2^20 CE
//     marks over 1 delivery, ce_ratio = 2^28 and alpha = 240 + 16·2^28 >> 8
//     = 240 + 2^24, which min_t(u32, alpha, BBR_UNIT) takes to 256 (a u32
//     product would wrap to 0 and leave 240).
//   - bbr_tso_segs_generic cuts its byte budget to u32 in min_t(u32, bytes,
//     gso_max_size − 1 − MAX_TCP_HEADER): a pacing rate of 2^42 B/s gives
//     2^42 >> 10 = 2^32 bytes, 0 as a u32, so the goal is the sysctl's
//     floor of 2 segments (min_rtt 20 ms adds no allowance: 20000 >> 9 =
//     39 ≥ 32).
func TestBBR3IntegerWidths(t *testing.T) {
	b := newBBR3()
	b.ecnEligible, b.ecnAlpha = true, bbrUnit
	st := &State{Delivered: 1, DeliveredCE: 1 << 20}
	b.updateECNAlpha(st)
	if b.ecnAlpha != bbrUnit {
		t.Errorf("ecn_alpha = %d, want %d (BBR_UNIT)", b.ecnAlpha, bbrUnit)
	}

	b = newBBR3()
	b.minRTTUs = 20_000
	st = &State{PacingRate: units.BitRate(1<<42) * 8}
	if got := b.tsoSegsGeneric(st, 1448, SKGSOMaxSize); got != sysctlTCPMinTSOSegs {
		t.Errorf("tso segs goal = %d, want %d (the byte budget cut to 0 as a u32)", got, sysctlTCPMinTSOSegs)
	}
}
