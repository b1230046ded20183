package server

import (
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// An optional argument sent as nil is an argument not given, wherever it
// stands (a request, an action, a steps entry): a Python client's None.
func TestNilOptionalArgumentIsNotGiven(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	sid := c.call("open", map[string]any{"scenario": "p-rtr-p", "seed": nil, "set": []any{"runtime.duration=2s"},
		"files": nil, "config": nil})["session"].(string)
	for _, tc := range []struct {
		op   string
		args map[string]any
	}{
		{"hello", map[string]any{"version": "1.0", "client": nil}},
		{"step", map[string]any{"session": sid, "time": "10ms", "events": nil, "action": nil, "observe": nil, "obs_format": nil}},
		{"step", map[string]any{"session": sid, "time": nil, "events": 10}},
		{"step", map[string]any{"session": sid, "time": "1ms", "action": map[string]any{"flow": "f0", "cwnd": 20, "rate": nil, "dir": nil, "link": nil}}},
		{"steps", map[string]any{"steps": []any{map[string]any{"session": sid, "time": "1ms", "events": nil, "observe": nil}}}},
		{"act", map[string]any{"session": sid, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": "50Mbps", "loss": nil, "cwnd": nil}}},
		{"run", map[string]any{"session": sid, "until": nil}},
		{"subscribe", map[string]any{"session": sid, "tables": []any{"flows"}, "flows": nil, "signals": nil, "every_ms": nil}},
		{"unsubscribe", map[string]any{"session": sid, "tables": nil}},
		{"signals", map[string]any{"session": sid, "table": "flows", "flows": nil, "signals": nil}},
	} {
		if r := c.await(c.send(tc.op, tc.args)); r["ok"] != true {
			t.Errorf("%s(%v) = %v, want ok (nil is not given)", tc.op, tc.args, r["error"])
		}
	}
	// A required argument sent as nil is missing.
	e := c.fail("act", map[string]any{"session": sid, "action": nil})
	if e["code"] != string(CodeBadArgs) || e["path"] != "action" || !strings.Contains(e["message"].(string), "missing argument action") {
		t.Errorf("act with action nil: error %v, want bad_args: missing argument action", e)
	}
}

// An unknown key names every key the map takes, not those read so far.
func TestUnknownArgumentListsEveryKnownKey(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	sid := c.open("p-rtr-p", "runtime.duration=2s")
	cp := c.call("checkpoint", map[string]any{"session": sid})["checkpoint"].(map[string]any)
	cp["extra"] = 1
	for _, tc := range []struct {
		op   string
		args map[string]any
		path string
		keys string
	}{
		{"act", map[string]any{"session": sid, "action": map[string]any{"flow": "f0", "cwnd": 5, "bogus": 1}}, "action.bogus",
			"link, dir, flow, rate, delay, loss, duplicate, jitter, capacity, outage, queue_limit, cwnd, pacing_rate"},
		{"steps", map[string]any{"steps": []any{map[string]any{"session": sid, "time": "1ms", "bogus": 1}}}, "steps[0].bogus",
			"session, time, events, action, observe, obs_format"},
		{"restore", map[string]any{"checkpoint": cp}, "checkpoint.extra",
			"format, engine_version, config, config_hash, seed, digest, at, actions"},
		{"open", map[string]any{"scenario": "p-rtr-p", "sead": 1}, "sead", "scenario, config, seed, set, files"},
	} {
		e := c.fail(tc.op, tc.args)
		want := "(known: " + tc.keys + ")"
		if e["code"] != string(CodeBadArgs) || e["path"] != tc.path || !strings.HasSuffix(e["message"].(string), want) {
			t.Errorf("%s with an unknown key: error %v, want bad_args at %s ending %q", tc.op, e, tc.path, want)
		}
	}
}

// A checkpoint whose digest is not one, or whose config is not JSON, is
// refused at that field, and an open beyond the server's simulated-time
// limit at runtime.duration.
func TestErrorsNameTheFieldOfConfigAndLimit(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{MaxSimTime: 10 * sim.Second})
	c := dial(t, url)
	sid := c.open("p-rtr-p", "runtime.duration=2s")
	cp := c.call("checkpoint", map[string]any{"session": sid})["checkpoint"].(map[string]any)
	digest := cp["digest"]
	cp["digest"] = "not a digest"
	if e := c.fail("restore", map[string]any{"checkpoint": cp}); e["code"] != string(CodeBadArgs) || e["path"] != "checkpoint.digest" ||
		e["message"] != `checkpoint.digest is "not a digest", want 16 hex digits` {
		t.Errorf("restore of a digest that is not 16 hex digits: %v, want bad_args at checkpoint.digest (not a replay mismatch)", e)
	}
	cp["digest"] = digest
	cp["config"] = "{"
	if e := c.fail("restore", map[string]any{"checkpoint": cp}); e["code"] != string(CodeInvalidConfig) || e["path"] != "checkpoint.config" ||
		!strings.Contains(e["message"].(string), "invalid JSON") {
		t.Errorf("restore of a config that is not JSON: %v, want invalid_config at checkpoint.config saying it is not JSON", e)
	}
	e := c.fail("open", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"runtime.duration": "100s"}})
	if e["code"] != string(CodeLimit) || e["path"] != "runtime.duration" ||
		e["message"] != "runtime.duration 100s exceeds the server's limit of 10s per session" {
		t.Errorf("open of 100 s beyond a 10 s limit: %v, want limit at runtime.duration naming both", e)
	}
}

// A flows or signals filter for tables none of which has that column is
// refused, naming the tables it filters; with one that has it, it stands.
func TestFilterWithoutItsColumnRefused(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	sid := c.open("p-rtr-p", "runtime.duration=1s")
	for _, tc := range []struct {
		op   string
		args map[string]any
		path string
	}{
		{"signals", map[string]any{"session": sid, "table": "queue", "flows": []any{"f0"}}, "flows"},
		{"signals", map[string]any{"session": sid, "table": "flows", "signals": []any{"cwnd"}}, "signals"},
		{"subscribe", map[string]any{"session": sid, "tables": []any{"queue", "link"}, "flows": []any{"f0"}}, "flows"},
	} {
		e := c.fail(tc.op, tc.args)
		if e["code"] != string(CodeBadArgs) || e["path"] != tc.path || !strings.Contains(e["message"].(string), "filters the tables") {
			t.Errorf("%s %v: %v, want bad_args at %s naming the tables it filters", tc.op, tc.args, e, tc.path)
		}
	}
	c.call("subscribe", map[string]any{"session": sid, "tables": []any{"flows", "queue"}, "flows": []any{"f0"}})
	c.call("signals", map[string]any{"session": sid, "table": "delivery", "flows": []any{"f0"}})
}
