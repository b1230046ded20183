package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A steps request gives each session exactly what a step request with the
// same arguments gives it: the same result and observation, the same action
// log, and at the end of the run the same digest.
func TestStepsMatchesSingleSteps(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	const n = 3
	var batch, single [n]string
	for i := range n {
		batch[i] = c.open("p-rtr-p", "runtime.duration=2s", "runtime.seed="+string(rune('1'+i)))
		single[i] = c.open("p-rtr-p", "runtime.duration=2s", "runtime.seed="+string(rune('1'+i)))
	}
	entry := func(sess string, k, i int) map[string]any {
		m := map[string]any{"session": sess, "time": "20ms", "observe": "f0"}
		if k%3 != 2 { // some steps carry no action
			m["action"] = map[string]any{"flow": "f0", "cwnd": 20 + 40*i + k}
		}
		return m
	}
	for k := range 40 {
		list := make([]any, n)
		for i := range n {
			list[i] = entry(batch[i], k, i)
		}
		res := c.call("steps", map[string]any{"steps": list})
		got, ok := res["results"].([]any)
		if !ok || len(got) != n {
			t.Fatalf("steps result = %v, want %d results", res, n)
		}
		for i := range n {
			want := c.call("step", entry(single[i], k, i))
			r, _ := got[i].(map[string]any)
			if r["ok"] != true {
				t.Fatalf("step %d of session %d failed: %v", k, i, r["error"])
			}
			if diff := cmp.Diff(want, r["result"]); diff != "" {
				t.Fatalf("step %d, session %d: steps entry differs from step (-step +steps):\n%s", k, i, diff)
			}
		}
	}
	for i := range n {
		a := c.call("checkpoint", map[string]any{"session": batch[i]})["checkpoint"].(map[string]any)
		b := c.call("checkpoint", map[string]any{"session": single[i]})["checkpoint"].(map[string]any)
		if diff := cmp.Diff(b["actions"], a["actions"]); diff != "" {
			t.Errorf("session %d: action logs differ (-step +steps):\n%s", i, diff)
		}
		ra := c.call("run", map[string]any{"session": batch[i]})
		rb := c.call("run", map[string]any{"session": single[i]})
		if ra["digest"] != rb["digest"] {
			t.Errorf("session %d: digest after steps %v, after step %v", i, ra["digest"], rb["digest"])
		}
	}
}

// A malformed steps request fails whole, with the path of the entry and
// field at fault, and no session steps.
func TestStepsRefusesBadRequestsWhole(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{MaxSessionsPerConn: 4})
	c := dial(t, url)
	s1 := c.open("p-rtr-p", "runtime.duration=1s")
	s2 := c.open("p-rtr-p", "runtime.duration=1s")
	ok := func(s string) map[string]any { return map[string]any{"session": s, "time": "1ms"} }
	five := []any{ok(s1), ok(s2), ok(s1), ok(s2), ok(s1)}
	for _, tc := range []struct {
		name string
		args map[string]any
		code Code
		path string
		why  string // what the message must say
	}{
		{"no steps", map[string]any{}, CodeBadArgs, "steps", "missing argument steps"},
		{"steps not a list", map[string]any{"steps": "s1"}, CodeBadArgs, "steps", "steps is a string, want a list of maps"},
		{"empty", map[string]any{"steps": []any{}}, CodeBadArgs, "steps", "steps must list at least one step"},
		{"over the sessions bound", map[string]any{"steps": five}, CodeBadArgs, "steps", "steps has 5 entries; a connection has at most 4 sessions"},
		{"entry not a map", map[string]any{"steps": []any{ok(s1), "s2"}}, CodeBadArgs, "steps[1]", "steps[1] is a string, want a map"},
		{"no session", map[string]any{"steps": []any{ok(s1), map[string]any{"time": "1ms"}}}, CodeBadArgs, "steps[1].session", "missing argument steps[1].session"},
		{"session not a string", map[string]any{"steps": []any{map[string]any{"session": 1, "time": "1ms"}}}, CodeBadArgs, "steps[0].session", "steps[0].session is an integer, want a string"},
		{"unknown session", map[string]any{"steps": []any{ok(s1), ok("s99")}}, CodeNotFound, "steps[1].session", `no session "s99" on this connection`},
		{"session twice", map[string]any{"steps": []any{ok(s1), ok(s2), ok(s1)}}, CodeBadArgs, "steps[2].session", `"s1" is stepped by steps[0] too`},
		{"bad time", map[string]any{"steps": []any{ok(s1), map[string]any{"session": s2, "time": "soon"}}}, CodeBadArgs, "steps[1].time", `"soon" has unknown unit "soon"`},
		{"time and events", map[string]any{"steps": []any{map[string]any{"session": s1, "time": "1ms", "events": 3}}}, CodeBadArgs, "steps[0].time", "give exactly one of time (a duration) and events (a count)"},
		{"zero events", map[string]any{"steps": []any{map[string]any{"session": s1, "events": 0}}}, CodeBadArgs, "steps[0].events", "events must be positive"},
		{"unknown key", map[string]any{"steps": []any{ok(s1), map[string]any{"session": s2, "time": "1ms", "tme": "1ms"}}}, CodeBadArgs, "steps[1].tme", "unknown argument steps[1].tme"},
		{"bad action", map[string]any{"steps": []any{ok(s1), map[string]any{"session": s2, "time": "1ms",
			"action": map[string]any{"flow": "f0", "cwnd": "many"}}}}, CodeBadArgs, "steps[1].action.cwnd", "steps[1].action.cwnd is a string, want a non-negative integer"},
		{"action without target", map[string]any{"steps": []any{map[string]any{"session": s1, "time": "1ms",
			"action": map[string]any{"cwnd": 10}}}}, CodeBadArgs, "steps[0].action.link", "steps[0].action.link (with steps[0].action.dir) or steps[0].action.flow is required"},
		{"bad obs_format", map[string]any{"steps": []any{map[string]any{"session": s1, "time": "1ms", "observe": "f0", "obs_format": "csv"}}}, CodeBadArgs, "steps[0].obs_format", `steps[0].obs_format is "csv", want "array" or "int64le"`},
		{"observe not a string", map[string]any{"steps": []any{map[string]any{"session": s1, "time": "1ms", "observe": 3}}}, CodeBadArgs, "steps[0].observe", "steps[0].observe is an integer, want a string"},
		{"unknown top-level key", map[string]any{"steps": []any{ok(s1)}, "session": s1}, CodeBadArgs, "session", "unknown argument session for steps (known: steps)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.fail("steps", tc.args)
			if m, _ := e["message"].(string); e["code"] != string(tc.code) || e["path"] != tc.path || !strings.Contains(m, tc.why) {
				t.Errorf("steps %v: error %v, want %s at %s saying %q", tc.args, e, tc.code, tc.path, tc.why)
			}
		})
	}
	for _, s := range []string{s1, s2} {
		if ev := c.call("summary", map[string]any{"session": s})["events"]; asInt(ev) != 0 {
			t.Errorf("session %s dispatched %v events after refused batches, want 0", s, ev)
		}
	}
}

// What only a session can check fails its entry alone; the others run.
func TestStepsEntryErrorsAreTheirOwn(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	s1 := c.open("p-rtr-p", "runtime.duration=1s")
	s2 := c.open("p-rtr-p", "runtime.duration=1s")
	res := c.call("steps", map[string]any{"steps": []any{
		map[string]any{"session": s1, "time": "5ms", "observe": "f0"},
		map[string]any{"session": s2, "time": "5ms", "observe": "f9"},
		map[string]any{"session": c.open("p-rtr-p", "runtime.duration=1s"), "time": "5ms",
			"action": map[string]any{"link": "nowhere", "dir": "ab", "rate": "1Mbps"}},
	}})
	got := res["results"].([]any)
	r0, r1, r2 := got[0].(map[string]any), got[1].(map[string]any), got[2].(map[string]any)
	if r0["ok"] != true || asInt(r0["result"].(map[string]any)["sim_time_ps"]) != 5e9 {
		t.Errorf("entry 0 = %v, want ok at 5 ms", r0)
	}
	for i, tc := range []struct {
		r    map[string]any
		code Code
		path string
	}{{r1, CodeBadArgs, "steps[1].observe"}, {r2, CodeNotFound, "steps[2].action.link"}} {
		e, _ := tc.r["error"].(map[string]any)
		if tc.r["ok"] != false || e["code"] != string(tc.code) || e["path"] != tc.path {
			t.Errorf("entry %d = %v, want %s at %s", i+1, tc.r, tc.code, tc.path)
		}
	}
	if ev := c.call("summary", map[string]any{"session": s2})["events"]; asInt(ev) != 0 {
		t.Errorf("session with the failed entry dispatched %v events, want 0", ev)
	}
}
