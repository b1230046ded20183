package engine

import "testing"

// A sampled trace takes each CC signal at most once per interval on its
// own clock, so signals that change at one ACK are all kept: BBR's
// STARTUP ends with full_bw_cnt reaching 3 and mode leaving 0 at the same
// ACK (bbr_check_full_bw_reached, bbr_check_drain), and both show.
func TestSampledTraceKeepsEverySignal(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "flows.f0.cc=bbr", "runtime.duration=2s",
		`trace={"detail": "sampled", "interval": "10ms"}`)
	r.RunToEnd()
	sig := &r.Trace.SignalT
	seen := map[string]map[float64]bool{"mode": {}, "full_bw_cnt": {}}
	for i := range sig.Len() {
		if m, ok := seen[r.Trace.Signals[sig.Signal[i]]]; ok {
			m[sig.Value[i]] = true
		}
	}
	if !seen["full_bw_cnt"][3] || !seen["mode"][1] && !seen["mode"][2] {
		t.Errorf("sampled signals: full_bw_cnt values %v, mode values %v; want 3 and a mode past STARTUP",
			seen["full_bw_cnt"], seen["mode"])
	}
}
