package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
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
