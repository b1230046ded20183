package server

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Requests sent back to back without waiting — steps the reader may run
// itself, and acts, checkpoints and summaries it hands to the session —
// are served in their order: the same responses, action log and digest
// as the same requests each awaited before the next is sent.
func TestPipelinedRequestsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	piped := c.open("p-rtr-p", "runtime.duration=2s")
	awaited := c.open("p-rtr-p", "runtime.duration=2s")
	type req struct {
		op   string
		args map[string]any
	}
	var script []req
	for k := range 60 {
		step := map[string]any{"time": "5ms", "observe": "f0"}
		switch k % 6 {
		case 1:
			step["action"] = map[string]any{"flow": "f0", "cwnd": 10 + k}
		case 3:
			script = append(script, req{"act", map[string]any{"action": map[string]any{"flow": "f0", "cwnd": 5 + k}}})
		case 4:
			script = append(script, req{"summary", map[string]any{}})
		case 5:
			step = map[string]any{"time": "2ms"} // shorter than the last: may run inline too
		}
		script = append(script, req{"step", step})
	}
	with := func(sess string, m map[string]any) map[string]any {
		out := map[string]any{"session": sess}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	var want []map[string]any
	for _, r := range script {
		want = append(want, c.await(c.send(r.op, with(awaited, r.args))))
	}
	// In windows of 24, within the session's queue of 32.
	var got []map[string]any
	for lo := 0; lo < len(script); lo += 24 {
		var ids []uint64
		for _, r := range script[lo:min(lo+24, len(script))] {
			ids = append(ids, c.send(r.op, with(piped, r.args)))
		}
		for _, id := range ids {
			got = append(got, c.await(id))
		}
	}
	for i, got := range got {
		delete(got, "id")
		delete(want[i], "id")
		if res, ok := got["result"].(map[string]any); ok && script[i].op == "summary" {
			delete(res, "wall_s") // wall time differs
			delete(want[i]["result"].(map[string]any), "wall_s")
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Fatalf("request %d (%s): pipelined response differs (-awaited +pipelined):\n%s", i, script[i].op, diff)
		}
	}
	a := c.call("run", map[string]any{"session": piped})
	b := c.call("run", map[string]any{"session": awaited})
	if a["digest"] != b["digest"] {
		t.Errorf("digest pipelined %v, awaited %v", a["digest"], b["digest"])
	}
}

// A session stepped only by steps the reader runs itself is in use, not
// idle: the idle timeout does not close it.
func TestInlineStepsKeepASessionAlive(t *testing.T) {
	t.Parallel()
	// Steps come every idle/10, for twice the idle timeout, which is long
	// enough that a loaded machine's scheduling stalls do not reach it (at
	// 150 ms, and then at 500 ms under the race detector, a make test
	// running Go and Python side by side once did).
	const idle = 2 * time.Second
	_, url := newTestServer(t, Options{IdleTimeout: idle, ConnIdleTimeout: time.Minute})
	c := dial(t, url)
	id := c.open("p-rtr-p", "runtime.duration=3600s")
	for end := time.Now().Add(2 * idle); time.Now().Before(end); {
		c.call("step", map[string]any{"session": id, "time": "1ms"})
		time.Sleep(idle / 10)
	}
	c.call("summary", map[string]any{"session": id})
	time.Sleep(3 * idle)
	if e := c.fail("summary", map[string]any{"session": id}); e["code"] != string(CodeNotFound) {
		t.Errorf("summary of a session left idle: %v, want not_found", e)
	}
}

// A scenario value that JSON cannot say as sent is refused with its path,
// not rewritten: encoding/json would write a bin as base64 text and a str
// that is not UTF-8 with U+FFFD (found by reading what the inline config
// and set map pass through json.Marshal), and has no NaN or infinity.
func TestOpenRefusesValuesJSONCannotSay(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	inline := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{"runtime": map[string]any{"duration": "1s"},
			"nodes": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}},
			"links": []any{map[string]any{"id": "l", "a": "a", "b": "b", "rate": "10Mbps", "delay": "5ms"}},
			"flows": []any{map[string]any{"id": "f0", "src": "a", "dst": "b", "cc": "reno"}}}
		edit(m)
		return map[string]any{"config": m}
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		path string
		why  string // what the message must say
	}{
		{"bin in an inline config", inline(func(m map[string]any) { m["description"] = []byte("hello") }), "config.description", "is a msgpack bin; a scenario holds no binary values"},
		{"bin deep in an inline config", inline(func(m map[string]any) { m["nodes"].([]any)[1].(map[string]any)["id"] = []byte("b") }), "config.nodes[1].id", "is a msgpack bin; a scenario holds no binary values"},
		{"NaN in an inline config", inline(func(m map[string]any) { m["links"].([]any)[0].(map[string]any)["rate"] = math.NaN() }), "config.links[0].rate", "NaN is not a number JSON can hold"},
		{"a str that is not UTF-8 in an inline config", inline(func(m map[string]any) { m["name"] = "a\xffb" }), "config.name", "is not UTF-8 text"},
		{"a key that is not UTF-8 in an inline config", inline(func(m map[string]any) { m["runtime"].(map[string]any)["\xff"] = 1 }), "config.runtime", `has a key that is not UTF-8 text, "\xff"`},
		{"a str that is not UTF-8 in a set map", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"name": "a\xffb"}}, `set["name"]`, "is not UTF-8 text"},
		{"bin in a set map", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"flows.f0.cc": []byte("bbr")}}, `set["flows.f0.cc"]`, "is a msgpack bin; a scenario holds no binary values"},
		{"infinity in a set map", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"runtime.seed": math.Inf(1)}}, `set["runtime.seed"]`, "+Inf is not a number JSON can hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			e := c.fail("open", tc.args)
			if m, _ := e["message"].(string); e["code"] != string(CodeBadArgs) || e["path"] != tc.path || !strings.Contains(m, tc.why) {
				t.Errorf("open error = %v, want %s at %s saying %q", e, CodeBadArgs, tc.path, tc.why)
			}
		})
	}
	// A set list's "path=value" strings are the config package's to read.
	e := c.fail("open", map[string]any{"scenario": "p-rtr-p", "set": []any{"name=a\xffb"}})
	if e["code"] != string(CodeInvalidConfig) || e["path"] != "set.name" {
		t.Errorf("open error = %v, want %s at set.name", e, CodeInvalidConfig)
	}
}

// An error that quotes what a client sent is UTF-8 text however the client
// spelt it: bytes that are not UTF-8 come back as \xNN, so a client that
// decodes a msgpack str strictly (Python's msgpack) can read the error.
func TestErrorsQuoteBytesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	for _, tc := range []struct {
		name, op string
		args     map[string]any
		path     string
	}{
		{"an argument", "stats", map[string]any{"b\xffogus": 1}, `b\xffogus`},
		{"a set list's path", "open", map[string]any{"scenario": "p-rtr-p", "set": []any{"na\xffme=1"}}, `set.na\xffme`},
		{"a set map's key", "open", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"na\xffme": 1}}, `set.na\xffme`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			e := c.fail(tc.op, tc.args)
			if e["path"] != tc.path {
				t.Errorf("%s error path = %q, want %q", tc.op, e["path"], tc.path)
			}
			for _, k := range []string{"message", "path"} {
				if s, _ := e[k].(string); !utf8.ValidString(s) {
					t.Errorf("%s error %s = %q, not UTF-8", tc.op, k, s)
				}
			}
		})
	}
}
