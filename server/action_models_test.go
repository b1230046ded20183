package server

import (
	"strings"
	"testing"
)

// Actions reach the path models: a loss model, a jitter model, a capacity
// process, an outage and a duplicate fraction, each logged in canonical form, and a checkpoint
// with them replays to the same digest.
func TestActPathModelsReplay(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "2s"})
	for _, a := range []map[string]any{
		{"link": "bottleneck", "dir": "ab", "loss": map[string]any{"kind": "gilbert_elliott", "p_gb": 0.001, "p_bg": 0.3}},
		{"link": "bottleneck", "dir": "ab", "jitter": map[string]any{"kind": "gaussian", "sigma": "1ms", "order": "reorder"}},
		{"link": "bottleneck", "dir": "ab", "outage": "200ms"},
		{"link": "bottleneck", "dir": "ab", "duplicate": 0.05},
		{"link": "bottleneck", "dir": "ab", "capacity": map[string]any{
			"states":      []any{map[string]any{"rate": "80Mbps", "dwell": "1s"}, map[string]any{"rate": "40Mbps", "dwell": "500ms"}},
			"transitions": []any{[]any{0, 1}, []any{1, 0}}}},
	} {
		c.call("act", map[string]any{"session": id, "action": a})
		c.call("step", map[string]any{"session": id, "time": "1s"})
	}
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	acts := cp["actions"].([]any)
	loss := acts[0].(map[string]any)["action"].(map[string]any)["loss"].(map[string]any)
	if loss["kind"] != "gilbert_elliott" || loss["loss_bad"] != int8(1) && loss["loss_bad"] != 1.0 {
		t.Errorf("logged loss = %v, want the canonical gilbert_elliott object with loss_bad 1", loss)
	}
	if o := acts[2].(map[string]any)["action"].(map[string]any)["outage"]; o != "200ms" {
		t.Errorf("logged outage = %v, want 200ms", o)
	}
	if d := acts[3].(map[string]any)["action"].(map[string]any)["duplicate"]; d != 0.05 {
		t.Errorf("logged duplicate = %v, want 0.05", d)
	}
	r := c.call("restore", map[string]any{"checkpoint": cp})
	a := c.call("run", map[string]any{"session": id})
	b := c.call("run", map[string]any{"session": r["session"]})
	if a["digest"] != b["digest"] {
		t.Errorf("original ends with %v, restored with %v", a["digest"], b["digest"])
	}
	plain, _ := engineDigest(t, cp["config"].(string))
	if a["digest"] == plain {
		t.Errorf("the model actions left the digest unchanged (%v)", plain)
	}
}

// A bad model or value in an action is refused with the field's path and
// reason.
func TestActPathModelErrors(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	for _, tc := range []struct {
		action map[string]any
		field  string
		reason string
	}{
		{map[string]any{"link": "bottleneck", "dir": "ab", "jitter": map[string]any{"kind": "wobbly"}}, "action.jitter.kind", `unknown value "wobbly"`},
		{map[string]any{"link": "bottleneck", "dir": "ab", "loss": map[string]any{"kind": "periodic"}}, "action.loss.every", "missing"},
		{map[string]any{"link": "bottleneck", "dir": "ab", "outage": "0ms"}, "action.outage", "must be positive"},
		{map[string]any{"link": "bottleneck", "dir": "ab", "duplicate": 1.5}, "action.duplicate", "[0, 1]"},
		{map[string]any{"link": "bottleneck", "rate": "10Mbps"}, "action.dir", `missing; a link action names its direction, "ab" or "ba"`},
		{map[string]any{"link": "bottleneck", "dir": "ab", "capacity": map[string]any{"states": []any{}}}, "action.capacity.states", "at least one state"},
		// Refused by the engine rather than the parser: a FIFO limit below
		// one 1,500 B packet of the flow crossing it.
		{map[string]any{"link": "bottleneck", "dir": "ab", "queue_limit": "1000B"}, "action.queue_limit", "less than one 1500 B packet of flow f0"},
		{map[string]any{"link": "bottleneck", "dir": "ab", "queue_limit": "lots"}, "action.queue_limit", `packets as "100p", or "unlimited"`},
	} {
		e := c.fail("act", map[string]any{"session": id, "action": tc.action})
		if e["path"] != tc.field || !strings.Contains(e["message"].(string), tc.reason) {
			t.Errorf("act(%v) error = %v, want path %s with %q", tc.action, e, tc.field, tc.reason)
		}
	}
}

// A checkpoint of a trace-driven scenario carries the trace inside its
// canonical config, so it restores without the file and replays exactly.
func TestTraceScenarioCheckpointReplays(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open("cellular", "runtime.duration=3s")
	c.call("step", map[string]any{"session": id, "time": "1s"})
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	if cfg := cp["config"].(string); !strings.Contains(cfg, `"traces":{"`) || strings.Contains(cfg, `"file":`) {
		t.Errorf("checkpoint config does not embed the trace by hash (or still names the file)")
	}
	runsLikeRestored(t, c, id, cp)
}

// runsLikeRestored runs session id and a session restored from cp to the
// end and checks they end with the same digest.
func runsLikeRestored(t *testing.T, c *client, id string, cp map[string]any) {
	t.Helper()
	r := c.call("restore", map[string]any{"checkpoint": cp})
	a := c.call("run", map[string]any{"session": id})
	b := c.call("run", map[string]any{"session": r["session"]})
	if a["digest"] != b["digest"] {
		t.Errorf("original ends with %v, restored with %v", a["digest"], b["digest"])
	}
}

// A pacing_rate of 0 clears an earlier override, handing pacing back to the
// CC and the sender (proto/README.md, act); the checkpoint that logs both
// actions replays to the same digest.
func TestActPacingRateZeroClears(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open("bufferbloat", "runtime.duration=4s")
	for _, rate := range []any{"5Mbps", 0, "0bps"} {
		c.call("step", map[string]any{"session": id, "time": "1s"})
		c.call("act", map[string]any{"session": id, "action": map[string]any{"flow": "f0", "pacing_rate": rate}})
	}
	runsLikeRestored(t, c, id, c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any))
	e := c.fail("act", map[string]any{"session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": 0}})
	if e["path"] != "action.rate" || !strings.Contains(e["message"].(string), "must be positive") {
		t.Errorf("act(rate 0) error = %v, want path action.rate with \"must be positive\"", e)
	}
}

// A FIFO's limit lifted mid-run ("unlimited") is logged as such, and a
// session restored from a checkpoint after it replays it: both end alike,
// and not as the run without it.
func TestUnlimitedQueueLimitReplays(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "1s"})
	c.call("act", map[string]any{"session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "queue_limit": "unlimited"}})
	c.call("step", map[string]any{"session": id, "time": "2s"})
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	acts := cp["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["action"].(map[string]any)["queue_limit"] != "unlimited" {
		t.Fatalf("checkpoint's log = %v, want the one queue_limit \"unlimited\"", acts)
	}
	r := c.call("restore", map[string]any{"checkpoint": cp})
	a := c.call("run", map[string]any{"session": id})
	b := c.call("run", map[string]any{"session": r["session"]})
	if a["digest"] != b["digest"] {
		t.Errorf("the restored session ends with digest %v, the original with %v", b["digest"], a["digest"])
	}
	if plain, _ := engineDigest(t, cp["config"].(string)); a["digest"] == plain {
		t.Errorf("lifting the limit left the digest unchanged (%v)", plain)
	}
}
