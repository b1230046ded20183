package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// TestVenoAckOfNoneOutsideSlowStart: tcp_veno_cong_avoid skips the
// increase only when slow start took every packet acked (goto done);
// outside slow start an ACK that acks none still runs tcp_cong_avoid_ai,
// which acts on a full snd_cwnd_cnt: cwnd 10 with cnt 12 becomes 11 with
// cnt 0 (traced from tcp_veno.c and tcp_cong.c).
func TestVenoAckOfNoneOutsideSlowStart(t *testing.T) {
	var now sim.Time
	st := &State{CwndPkts: 10, CwndClampPkts: ^uint32(0), SSThreshPkts: 10, CwndLimited: true, Signals: NewSignals(nil, &now)}
	v := &Veno{}
	v.Init(st)
	v.cntRTT, v.baseRTT, v.minRTT = 3, 40_001, 40_001 // no backlog: the non-congestive state
	st.CwndCnt = 12
	v.CongAvoid(st, 0)
	if st.CwndPkts != 11 || st.CwndCnt != 0 {
		t.Errorf("cwnd %d, cnt %d; want 11, 0", st.CwndPkts, st.CwndCnt)
	}
}
