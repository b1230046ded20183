package server

import (
	"fmt"
	"testing"
	"time"
)

// awaitBoth reads until the responses to ids a and b have both arrived,
// in either order, keeping pushes; it gives up after 20 s.
func (c *client) awaitBoth(a, b uint64) (ra, rb map[string]any) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ra == nil || rb == nil {
		if time.Now().After(deadline) {
			c.t.Fatalf("no responses to both %d and %d within 20 s; got %v and %v", a, b, ra, rb)
		}
		m := c.next()
		if _, ok := m["stream"]; ok {
			c.pushes = append(c.pushes, m)
			continue
		}
		switch got, _ := m["id"].(int64); uint64(got) {
		case a:
			ra = m
		case b:
			rb = m
		default:
			c.t.Fatalf("response for id %v while waiting for %d and %d: %v", m["id"], a, b, m)
		}
	}
	return ra, rb
}

// awaitProgress reads until a progress push of request id.
func (c *client) awaitProgress(id uint64) {
	c.t.Helper()
	for {
		m := c.next()
		if m["stream"] == "progress" && uint64(asInt(m["request"])) == id {
			return
		}
		if _, ok := m["stream"]; !ok {
			c.t.Fatalf("response %v while waiting for progress of request %d", m, id)
		}
	}
}

// A cancel stops a long run at once: the run answers with where it stopped
// and cancelled, a run queued behind it advances nothing, and the session
// then serves requests as usual — and stands exactly where a session
// stepped by time to the same clock does, now and after stepping on.
func TestCancelRun(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{ProgressEvery: 10 * time.Millisecond})
	c := dial(t, url)
	c.wait = 10 * time.Second // a run not cancelled would take hours
	long := "runtime.duration=86400s"
	sid := c.open("p-rtr-p", long)
	run := c.send("run", map[string]any{"session": sid})
	queued := c.send("run", map[string]any{"session": sid})
	c.awaitProgress(run)
	cancel := c.send("cancel", map[string]any{"session": sid})
	rc, rr := c.awaitBoth(cancel, run)
	if rc["ok"] != true {
		t.Fatalf("cancel failed: %v", rc["error"])
	}
	res, _ := rr["result"].(map[string]any)
	if rr["ok"] != true || res["cancelled"] != true || res["done"] != false || asInt(res["sim_time_ps"]) <= 0 {
		t.Fatalf("cancelled run's response = %v, want ok, cancelled, not done, past 0", rr)
	}
	rq := c.await(queued)
	qres, _ := rq["result"].(map[string]any)
	if rq["ok"] != true || qres["cancelled"] != true || asInt(qres["events"]) != asInt(res["events"]) {
		t.Errorf("queued run's response = %v, want cancelled at %d events", rq, asInt(res["events"]))
	}
	at := asInt(res["sim_time_ps"])

	// The session is usable, and equals one stepped to the same clock.
	ref := c.open("p-rtr-p", long)
	c.call("step", map[string]any{"session": ref, "time": fmt.Sprintf("%dps", at)})
	for _, step := range []string{"", "1s"} {
		if step != "" {
			for _, s := range []string{sid, ref} {
				if r := c.call("step", map[string]any{"session": s, "time": step}); r["cancelled"] != nil {
					t.Errorf("step after the cancel = %v, want not cancelled", r)
				}
			}
		}
		got, want := c.call("summary", map[string]any{"session": sid}), c.call("summary", map[string]any{"session": ref})
		for _, k := range []string{"sim_time_ps", "events", "digest"} {
			if got[k] != want[k] {
				t.Errorf("after a cancel at %d ps and a step of %q: summary %s = %v, want %v (a session stepped to the same clock)",
					at, step, k, got[k], want[k])
			}
		}
	}
	c.call("close", map[string]any{"session": sid})
}

// A cancel stops a step by events between batches, where a step of the
// events it dispatched would have stopped; a step by time likewise.
func TestCancelStep(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	c.wait = 10 * time.Second
	long := "runtime.duration=86400s"
	for _, args := range []map[string]any{{"events": int64(1) << 40}, {"time": "86000s"}} {
		sid, ref := c.open("p-rtr-p", long), c.open("p-rtr-p", long)
		args["session"] = sid
		step := c.send("step", args)
		time.Sleep(200 * time.Millisecond)
		rc, rs := c.awaitBoth(c.send("cancel", map[string]any{"session": sid}), step)
		res, _ := rs["result"].(map[string]any)
		if rc["ok"] != true || rs["ok"] != true || res["cancelled"] != true {
			t.Fatalf("step %v, cancelled: responses %v and %v, want ok and cancelled", args, rc, rs)
		}
		if _, byEvents := args["events"]; byEvents {
			c.call("step", map[string]any{"session": ref, "events": res["events"]})
		} else {
			c.call("step", map[string]any{"session": ref, "time": fmt.Sprintf("%dps", asInt(res["sim_time_ps"]))})
		}
		for _, s := range []string{sid, ref} {
			c.call("step", map[string]any{"session": s, "time": "500ms"})
		}
		got, want := c.call("summary", map[string]any{"session": sid}), c.call("summary", map[string]any{"session": ref})
		if got["digest"] != want["digest"] || got["events"] != want["events"] {
			t.Errorf("step %v cancelled at %v events, then 500 ms: digest %v events %v, want %v %v", args, res["events"],
				got["digest"], got["events"], want["digest"], want["events"])
		}
	}
}

// A cancel with nothing running is answered and cancels nothing later; one
// naming no session is not_found.
func TestCancelIdle(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	sid := c.open(testScenario, testDuration)
	if r := c.call("cancel", map[string]any{"session": sid}); r["session"] != sid {
		t.Errorf("cancel = %v, want session %s", r, sid)
	}
	r := c.call("run", map[string]any{"session": sid, "until": "1s"})
	if r["cancelled"] != nil || asInt(r["sim_time_ps"]) != 1e12 {
		t.Errorf("run after an idle cancel = %v, want to 1 s, not cancelled", r)
	}
	if e := c.fail("cancel", map[string]any{"session": "s999"}); e["code"] != string(CodeNotFound) || e["path"] != "session" {
		t.Errorf("cancel of no session: error %v, want not_found at session", e)
	}
	if e := c.fail("cancel", map[string]any{}); e["code"] != string(CodeBadArgs) || e["path"] != "session" {
		t.Errorf("cancel without session: error %v, want bad_args at session", e)
	}
}

// A cancel reaches a session's entry of a steps request too: the entry
// answers cancelled, the other entries as usual.
func TestCancelStepsEntry(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	c.wait = 10 * time.Second
	long, short := c.open("p-rtr-p", "runtime.duration=86400s"), c.open(testScenario, testDuration)
	id := c.send("steps", map[string]any{"steps": []any{
		map[string]any{"session": long, "time": "86000s"}, map[string]any{"session": short, "time": "1s"}}})
	time.Sleep(200 * time.Millisecond)
	rc, rs := c.awaitBoth(c.send("cancel", map[string]any{"session": long}), id)
	res, _ := rs["result"].(map[string]any)
	entries, _ := res["results"].([]any)
	if rc["ok"] != true || len(entries) != 2 {
		t.Fatalf("steps, then cancel: responses %v and %v", rc, rs)
	}
	first, _ := entries[0].(map[string]any)["result"].(map[string]any)
	second, _ := entries[1].(map[string]any)["result"].(map[string]any)
	if first["cancelled"] != true || second["cancelled"] != nil || asInt(second["sim_time_ps"]) != 1e12 {
		t.Errorf("steps entries after a cancel of the first's session = %v, %v; want the first cancelled, the second at 1 s", first, second)
	}
}
