package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
)

// A flow's cc_params reach its CC: CUBIC without HyStart leaves slow start
// only at a loss, and with beta 512 that loss sets ssthresh to half the
// window it met (bictcp_recalc_ssthresh: cwnd·beta/1024), where the
// defaults leave slow start on HyStart's signal, ssthresh at the window
// then, before any loss. The flow's summary says which parameters it set.
func TestCCParamsReachTheCC(t *testing.T) {
	first := func(sets ...string) (cwnd, ssthresh uint32, ca uint8) {
		r := builtinRun(t, "p-rtr-p", append(sets, "runtime.duration=3s", `trace={"detail":"change"}`)...)
		r.RunToEnd()
		rows := r.Trace.FlowsT.Rows
		const infinite = 0x7fffffff // TCP_INFINITE_SSTHRESH
		for i := 1; i < len(rows); i++ {
			if rows[i-1].SSThreshPkts == infinite && rows[i].SSThreshPkts != infinite {
				return rows[i-1].CwndPkts, rows[i].SSThreshPkts, rows[i].CAState
			}
		}
		t.Fatalf("%v: ssthresh never set", sets)
		return
	}
	w, ss, ca := first("flows.f0.cc_params.hystart=false", "flows.f0.cc_params.beta=512")
	if ca != uint8(cc.CARecovery) || ss != w*512/1024 {
		t.Errorf("hystart off, beta 512: ssthresh %d in CA state %d after cwnd %d; want %d in recovery (%d)",
			ss, ca, w, w*512/1024, cc.CARecovery)
	}
	w, ss, ca = first()
	r := builtinRun(t, "p-rtr-p", "runtime.duration=100ms", "flows.f0.cc_params.hystart=false")
	r.RunToEnd()
	if got := r.Summary("h").Flows[0].CCParams; len(got) != 1 || got["hystart"] != 0 {
		t.Errorf("the flow's summary: cc_params %v, want hystart 0", got)
	}
	if ca != uint8(cc.CAOpen) || ss != w {
		t.Errorf("defaults: ssthresh %d in CA state %d after cwnd %d; want HyStart's %d, open (%d)", ss, ca, w, w, cc.CAOpen)
	}
}
