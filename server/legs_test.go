package server

import (
	"testing"
)

// A session on a split flow names its legs as the traces do: open lists
// f0.0 and f0.1 with each leg's own path (the lossy 50 Mbps bottleneck to
// the proxy, 2 × (1 + 40) ms; the proxy's 1 Gbps last link, 2 × 1 ms), a
// leg is observed and acted on by its name (a cwnd of 5 on leg 1 reads
// back as 5 at once), and a trace filter by the scenario's id f0 selects
// both legs' rows, by a leg's name that leg's alone.
func TestSessionAddressesProxyLegs(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	res := c.call("open", map[string]any{"scenario": "p-we-p", "set": []any{"runtime.duration=2s", "trace.detail=change"}})
	id := res["session"].(string)
	flows, _ := res["flows"].([]any)
	if len(flows) != 2 || flows[0] != "f0.0" || flows[1] != "f0.1" {
		t.Fatalf("open's flows = %v, want [f0.0 f0.1]", res["flows"])
	}
	paths := res["paths"].([]any)
	for i, want := range []struct {
		bottleneck string
		rttMs      int64
	}{{"bottleneck/ab", 82}, {"last/ab", 2}} {
		p := paths[i].(map[string]any)
		if p["flow"] != flows[i] || p["bottleneck"] != want.bottleneck || asInt(p["base_rtt_ps"]) != want.rttMs*1e9 {
			t.Errorf("paths[%d] = %v, want flow %v, bottleneck %s, base RTT %d ms", i, p, flows[i], want.bottleneck, want.rttMs)
		}
	}
	c.call("subscribe", map[string]any{"session": id, "tables": []any{"flows"}, "flows": []any{"f0.1"}, "every_ms": 0})
	c.call("step", map[string]any{"session": id, "time": "1s"})
	step := c.call("step", map[string]any{"session": id, "time": "1ms", "action": map[string]any{"flow": "f0.1", "cwnd": 5}, "observe": "f0.1"})
	obs := step["obs"].([]any)
	if asInt(obs[1]) < 5 || asInt(obs[12]) <= 0 {
		t.Errorf("leg 1 after cwnd 5: obs %v, want cwnd 5 or grown from it and bytes delivered", obs)
	}
	if e := c.fail("step", map[string]any{"session": id, "time": "1ms", "observe": "f0.2"}); e["path"] != "observe" {
		t.Errorf("observe f0.2: error %v, want bad_args at observe", e)
	}
	rows := func(flows ...any) int64 {
		return asInt(c.call("signals", map[string]any{"session": id, "table": "flows", "flows": flows})["rows"])
	}
	leg0, leg1, both := rows("f0.0"), rows("f0.1"), rows("f0")
	if leg0 == 0 || leg1 == 0 || both != leg0+leg1 {
		t.Errorf("flows rows: f0.0 %d, f0.1 %d, f0 %d; want both legs' and f0 their sum", leg0, leg1, both)
	}
	var pushed int64
	for _, p := range c.pushes {
		pushed += arrowRows(t, p["arrow"].([]byte))
	}
	if pushed != leg1 {
		t.Errorf("subscribed to f0.1: %d rows pushed, want leg 1's %d", pushed, leg1)
	}
}
