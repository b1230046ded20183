package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// The scenario the wire tests drive: any built-in whose flows run works; the
// tests only compare a session against a straight engine run of the same
// config, never against pinned numbers.
const (
	testScenario = "pump"
	testDuration = "runtime.duration=20s"
)

// engineDigest runs canonical config straight to the end with the engine
// alone: the reference for every stepped, restored or replayed session.
func engineDigest(t *testing.T, canonical string, actions ...func(r *engine.Run)) (string, uint64) {
	t.Helper()
	scn, err := config.Parse([]byte(canonical))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := engine.New(scn, nil)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	for _, a := range actions {
		a(r)
	}
	r.RunToEnd()
	return engine.DigestString(r.Sim.Digest()), r.Sim.Events()
}

func TestHelloAndScenarios(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	h := c.call("hello", map[string]any{"version": "1.4", "client": "test"})
	if h["version"] != ProtocolVersion || h["engine_version"] != engine.Version {
		t.Errorf("hello = %v, want version %s engine %s", h, ProtocolVersion, engine.Version)
	}
	var names []string
	for _, s := range c.call("scenarios", nil)["scenarios"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	var want []string
	for _, b := range config.Builtins() {
		want = append(want, b.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
	// Every CC the server lists opens as a flow's cc, and one it does not
	// list is refused, naming the field.
	ccs := c.call("scenarios", nil)["ccs"].([]any)
	if len(ccs) < 20 || !slices.Contains(ccs, any("cubic")) || slices.Contains(ccs, any("pump")) {
		t.Errorf("ccs = %v, want the registry's CCs, cubic among them, no flow kinds", ccs)
	}
	for _, name := range ccs {
		id := c.open("p-rtr-p", "flows.f0.cc="+name.(string), "runtime.duration=10ms")
		c.call("close", map[string]any{"session": id})
	}
	if e := c.fail("open", map[string]any{"scenario": "p-rtr-p", "set": []any{"flows.f0.cc=nosuch"}}); e["code"] != string(CodeInvalidConfig) {
		t.Errorf("open with cc nosuch: %v, want invalid_config", e)
	}
	st := c.call("stats", nil)
	if asInt(st["connections"]) != 1 || asInt(st["sessions"]) != 0 {
		t.Errorf("stats = %v, want 1 connection, 0 sessions", st)
	}
}

// open notes an override that replaces an object and drops some of its
// fields, in either form of set; one that sets a field inside has no notes.
func TestOpenNotesDroppedFields(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	want := []any{`set flows.f0.tcp replaces the whole object and drops its "gro_interval"; to change one field, set flows.f0.tcp.FIELD alone`}
	for _, set := range []any{
		map[string]any{"flows.f0.tcp": map[string]any{"hz": 250}, "runtime.duration": "1s"},
		[]any{`flows.f0.tcp={"hz":250}`, "runtime.duration=1s"},
	} {
		res := c.call("open", map[string]any{"scenario": "wifi", "set": set})
		if diff := cmp.Diff(want, res["notes"]); diff != "" {
			t.Errorf("open wifi with %v: notes (-want +got):\n%s", set, diff)
		}
	}
	res := c.call("open", map[string]any{"scenario": "wifi", "set": map[string]any{"flows.f0.tcp.hz": 250}})
	if n, ok := res["notes"]; ok {
		t.Errorf("open wifi setting flows.f0.tcp.hz: notes %v, want none", n)
	}
}

// open's seed wins over a set of runtime.seed, alone or in its object, in
// either form of set, and says so, as --seed does on the command line.
func TestOpenSeedOverridesSet(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	for _, tc := range []struct {
		set  any
		note string
	}{
		{map[string]any{"runtime.seed": 3, "runtime.duration": "1s"}, "seed 7 overrides set runtime.seed=3"},
		{[]any{"runtime.seed=3", "runtime.duration=1s"}, "seed 7 overrides set runtime.seed=3"},
		{[]any{`runtime={"seed":3,"duration":"1s"}`}, `seed 7 overrides set runtime={"seed":3,"duration":"1s"}`},
	} {
		res := c.call("open", map[string]any{"scenario": "p-rtr-p", "seed": 7, "set": tc.set})
		if asInt(res["seed"]) != 7 {
			t.Errorf("open seed 7 with set %v: seed %v, want 7", tc.set, res["seed"])
		}
		if diff := cmp.Diff([]any{tc.note}, res["notes"]); diff != "" {
			t.Errorf("open seed 7 with set %v: notes (-want +got):\n%s", tc.set, diff)
		}
	}
	res := c.call("open", map[string]any{"scenario": "p-rtr-p", "seed": 7, "set": map[string]any{"runtime.duration": "1s"}})
	if n, ok := res["notes"]; ok || asInt(res["seed"]) != 7 {
		t.Errorf("open seed 7 setting runtime.duration: seed %v, notes %v; want 7 and none", res["seed"], n)
	}
}

// open reads the trace and CDF files a scenario names from the files sent
// with it (the server reads none of its own disk), as strings or bytes,
// embeds them in the canonical config, and notes a file sent but not named.
func TestOpenWithFiles(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	res := c.call("open", map[string]any{"scenario": "cellular",
		"set": map[string]any{"links.bottleneck.ab.trace.file": "my.trace", "runtime.duration": "1s"},
		"files": map[string]any{"my.trace": "1\n1\n3\n", "unused.txt": []byte("0 0\n10 1\n"),
			// What the scenario named before the override: a client sends it too.
			"traces/cellular.trace": "1\n"}})
	canon := res["config"].(string)
	if !strings.Contains(canon, `"1\n1\n3\n"`) {
		t.Errorf("canonical config does not embed the trace sent: %s", canon)
	}
	want := []any{`files["unused.txt"] was sent, but the scenario names no such file; it was not read`}
	if diff := cmp.Diff(want, res["notes"]); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	many := map[string]any{"my.trace": "1\n"}
	for i := range 12 {
		many[fmt.Sprintf("x%02d", i)] = ""
	}
	res = c.call("open", map[string]any{"scenario": "cellular", "set": []any{"links.bottleneck.ab.trace.file=my.trace"}, "files": many})
	want = []any{`files "x00", "x01", "x02", "x03", "x04", "x05", "x06", "x07", "x08", "x09", and 2 more were sent, but the scenario names no such files; they were not read`}
	if diff := cmp.Diff(want, res["notes"]); diff != "" {
		t.Errorf("notes on 12 files not named (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		files           any
		code, path, why string
	}{
		{map[string]any{"my.trace": 3}, "bad_args", `files["my.trace"]`, "is an integer, want the file's content as a string or bytes"},
		{[]any{"my.trace"}, "bad_args", "files", "want a map {name: content}"},
		{map[string]any{"other.trace": "1\n"}, "invalid_config", "links[bottleneck].ab.trace.file", "no file of that name was sent with the scenario"},
		{map[string]any{"my.trace": "1\n0\n"}, "invalid_config", "links[bottleneck].ab.trace.file", "timestamps must not decrease"},
	} {
		e := c.fail("open", map[string]any{"scenario": "cellular", "set": []any{"links.bottleneck.ab.trace.file=my.trace"}, "files": tc.files})
		if e["code"] != tc.code || e["path"] != tc.path || !strings.Contains(e["message"].(string), tc.why) {
			t.Errorf("open with files %v: error %v, want %s at %s: %s", tc.files, e, tc.code, tc.path, tc.why)
		}
	}
}

func TestHelloOtherMajorIsRefused(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	e := c.fail("hello", map[string]any{"version": "2.0"})
	if e["code"] != string(CodeVersion) {
		t.Errorf("hello 2.0: code = %v, want version", e["code"])
	}
	if _, _, err := c.ws.ReadMessage(); err == nil {
		t.Errorf("connection still open after a refused hello")
	}
}

// A version that is no version at all is a bad argument, not another
// major: the connection stays open for a hello that gets it right.
func TestHelloMalformedVersionIsBadArgs(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	for _, v := range []string{"banana", "1.x", "", "-1.0"} {
		e := c.fail("hello", map[string]any{"version": v})
		if e["code"] != string(CodeBadArgs) || e["path"] != "version" {
			t.Errorf("hello %q: %v, want bad_args at version", v, e)
		}
	}
	if h := c.call("hello", map[string]any{"version": "1.0"}); h["version"] != ProtocolVersion {
		t.Errorf("hello 1.0 after the bad ones: %v", h)
	}
}

// Stepping by 10 ms 2,000 times over the wire ends where one straight engine
// run to 20 s does.
func TestStepsOverWireMatchStraightRun(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	res := c.call("open", map[string]any{"scenario": testScenario, "set": map[string]any{"runtime.duration": "20s"}})
	id := res["session"].(string)
	wantDigest, wantEvents := engineDigest(t, res["config"].(string))
	var last map[string]any
	for i := range 2000 {
		last = c.call("step", map[string]any{"session": id, "time": "10ms"})
		if got, want := asInt(last["sim_time_ps"]), int64(i+1)*int64(10*sim.Millisecond); got != want {
			t.Fatalf("step %d: sim_time_ps = %d, want %d", i, got, want)
		}
	}
	if last["done"] != true {
		t.Errorf("after 20 s of steps done = %v, want true", last["done"])
	}
	sum := c.call("summary", map[string]any{"session": id})
	if sum["digest"] != wantDigest || uint64(asInt(sum["events"])) != wantEvents {
		t.Errorf("stepped digest %v events %v, want %s %d (straight run)", sum["digest"], sum["events"], wantDigest, wantEvents)
	}
}

// A checkpoint at 7 s restores to the same state: running the restored
// session to the end gives the straight run's digest.
func TestCheckpointRestoreRunToEnd(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "7s"})
	c.call("step", map[string]any{"session": id, "events": 5}) // end at a non-drained instant too
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	want := c.call("run", map[string]any{"session": id})
	r := c.call("restore", map[string]any{"checkpoint": cp})
	if r["digest"] != cp["digest"] {
		t.Errorf("restored digest %v, want the checkpoint's %v", r["digest"], cp["digest"])
	}
	got := c.call("run", map[string]any{"session": r["session"]})
	if got["digest"] != want["digest"] || asInt(got["events"]) != asInt(want["events"]) {
		t.Errorf("restored run ends with %v/%v, original with %v/%v", got["digest"], got["events"], want["digest"], want["events"])
	}
	straight, _ := engineDigest(t, r["config"].(string))
	if got["digest"] != straight {
		t.Errorf("restored run digest %v, straight engine run %s", got["digest"], straight)
	}
}

// An action is replayed at the event where it was applied: the restored
// session's log shows the same position, and running both to the end gives
// equal digests that differ from a run without the action.
func TestCheckpointAfterActReplaysActionAtSameEvent(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "3s"})
	c.call("step", map[string]any{"session": id, "events": 17})
	act := c.call("act", map[string]any{"session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": "50Mbps"}})
	c.call("step", map[string]any{"session": id, "time": "1s"})
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	logged := cp["actions"].([]any)[0].(map[string]any)
	if diff := cmp.Diff(act["at"], logged["at"]); diff != "" {
		t.Errorf("logged position differs from act's (-act +log):\n%s", diff)
	}
	if got := logged["action"].(map[string]any)["rate"]; got != "50Mbps" {
		t.Errorf("logged rate = %v, want 50Mbps", got)
	}
	r := c.call("restore", map[string]any{"checkpoint": cp})
	rcp := c.call("checkpoint", map[string]any{"session": r["session"]})["checkpoint"].(map[string]any)
	if diff := cmp.Diff(cp, rcp); diff != "" {
		t.Errorf("restored checkpoint differs (-orig +restored):\n%s", diff)
	}
	a := c.call("run", map[string]any{"session": id})
	b := c.call("run", map[string]any{"session": r["session"]})
	if a["digest"] != b["digest"] {
		t.Errorf("original ends with %v, restored with %v", a["digest"], b["digest"])
	}
	plain, _ := engineDigest(t, cp["config"].(string))
	if a["digest"] == plain {
		t.Errorf("halving the bottleneck left the digest unchanged (%v)", plain)
	}
}

// A fork with a new action diverges from its parent, and its log holds the
// parent's action and its own.
func TestForkAppliesNewAction(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "2s"})
	c.call("act", map[string]any{"session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "delay": "30ms"}})
	c.call("step", map[string]any{"session": id, "time": "5s"})
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	f := c.call("fork", map[string]any{"checkpoint": cp, "actions": []any{
		map[string]any{"link": "bottleneck", "dir": "ab", "queue_limit": "100p"}}})
	fcp := c.call("checkpoint", map[string]any{"session": f["session"]})["checkpoint"].(map[string]any)
	acts := fcp["actions"].([]any)
	if len(acts) != 2 {
		t.Fatalf("fork's log has %d actions, want 2", len(acts))
	}
	first, second := acts[0].(map[string]any)["action"].(map[string]any), acts[1].(map[string]any)["action"].(map[string]any)
	if first["delay"] != "30ms" || second["queue_limit"] != "100p" {
		t.Errorf("fork's log = %v, want the parent's delay action then queue_limit 100p", acts)
	}
	if diff := cmp.Diff(cp["at"], acts[1].(map[string]any)["at"]); diff != "" {
		t.Errorf("fork action not at the checkpoint's position (-cp +action):\n%s", diff)
	}
	a := c.call("run", map[string]any{"session": id})
	b := c.call("run", map[string]any{"session": f["session"]})
	if a["digest"] == b["digest"] {
		t.Errorf("fork with a 100-packet queue ends with the parent's digest %v", a["digest"])
	}
	// The fork's own checkpoint replays too.
	r := c.call("restore", map[string]any{"checkpoint": fcp})
	if r["digest"] != fcp["digest"] {
		t.Errorf("fork checkpoint restores to %v, want %v", r["digest"], fcp["digest"])
	}
	// Fork a live session by id.
	g := c.call("fork", map[string]any{"session": id, "actions": []any{map[string]any{"link": "access", "dir": "ab", "loss": 0.01}}})
	if asInt(g["actions"]) != 2 {
		t.Errorf("live fork has %v actions, want 2", g["actions"])
	}
}

// A checkpoint whose digest was tampered with is refused loudly.
func TestRestoreMismatchIsLoud(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	c.call("step", map[string]any{"session": id, "time": "1s"})
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	tests := []struct {
		name string
		edit func(m map[string]any)
		code Code
		path string
		why  string // what the message must say
	}{
		{"digest", func(m map[string]any) { m["digest"] = "0000000000000000" }, CodeReplayMismatch,
			"checkpoint.digest", "the replay does not reproduce the checkpoint's digest"},
		{"events", func(m map[string]any) {
			m["at"].(map[string]any)["events"] = asInt(m["at"].(map[string]any)["events"]) + 1
		}, CodeReplayMismatch, "checkpoint.at", "does not reach the position's event count"},
		{"engine", func(m map[string]any) { m["engine_version"] = "0.0.0" }, CodeReplayMismatch,
			"checkpoint.engine_version", "made by engine 0.0.0"},
		{"hash", func(m map[string]any) { m["config_hash"] = "ab" }, CodeReplayMismatch,
			"checkpoint.config_hash", "the checkpoint says ab"},
		{"format", func(m map[string]any) { m["format"] = "x" }, CodeBadArgs,
			"checkpoint.format", `checkpoint.format is "x", want "ccscope-checkpoint/1"`},
		{"drained type", func(m map[string]any) { m["at"].(map[string]any)["drained"] = 1 }, CodeBadArgs,
			"checkpoint.at.drained", "is an integer, want a bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := deepCopy(cp).(map[string]any)
			tc.edit(m)
			e := c.fail("restore", map[string]any{"checkpoint": m})
			if e["code"] != string(tc.code) {
				t.Errorf("restore with bad %s: code = %v (%v), want %s", tc.name, e["code"], e["message"], tc.code)
			}
			if p, _ := e["path"].(string); p != tc.path {
				t.Errorf("restore with bad %s: path = %q, want %q", tc.name, p, tc.path)
			}
			if m, _ := e["message"].(string); !strings.Contains(m, tc.why) {
				t.Errorf("restore with bad %s: message %q, want it to say %q", tc.name, m, tc.why)
			}
		})
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// Subscribed rows arrive before the step's response, as Arrow IPC streams
// that hold exactly the rows the signals op reports recorded, those that
// open recorded too (the link table's rates and delays at time 0) when
// the subscription comes before the first event; one made later has only
// what is recorded after it.
func TestSubscribeStreamsArrow(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration, "trace.detail=change")
	c.call("subscribe", map[string]any{"session": id, "tables": []any{"queue", "delivery", "link"}, "every_ms": 0})
	c.call("step", map[string]any{"session": id, "time": "500ms"})
	rows := map[string]int64{}
	var seq int64
	for _, p := range c.pushes {
		if asInt(p["seq"]) != seq {
			t.Errorf("push seq = %v, want %d", p["seq"], seq)
		}
		seq++
		rows[p["stream"].(string)] += arrowRows(t, p["arrow"].([]byte))
	}
	for _, table := range []string{"queue", "delivery", "link"} {
		s := c.call("signals", map[string]any{"session": id, "table": table})
		if n := arrowRows(t, s["arrow"].([]byte)); n != asInt(s["rows"]) || n == 0 {
			t.Errorf("signals %s: stream has %d rows, result says %v; want equal and > 0", table, n, s["rows"])
		}
		if rows[table] != asInt(s["rows"]) {
			t.Errorf("pushed %d %s rows, recorded %v", rows[table], table, s["rows"])
		}
	}
	f := c.call("signals", map[string]any{"session": id, "table": "delivery", "flows": []any{"f0"}})
	if asInt(f["rows"]) != rows["delivery"] {
		t.Errorf("delivery rows for f0 = %v, want all %d (one flow)", f["rows"], rows["delivery"])
	}
	c.call("unsubscribe", map[string]any{"session": id})
	c.pushes = nil
	c.call("step", map[string]any{"session": id, "time": "100ms"})
	if len(c.pushes) != 0 {
		t.Errorf("%d pushes after unsubscribe, want 0", len(c.pushes))
	}
	c.call("subscribe", map[string]any{"session": id, "tables": []any{"link"}, "every_ms": 0})
	c.call("step", map[string]any{"session": id, "time": "100ms"})
	if len(c.pushes) != 0 {
		t.Errorf("%d pushes of the link table subscribed mid-run, where nothing changed; want 0", len(c.pushes))
	}
}

// arrowRows reads a complete IPC stream and counts its rows.
func arrowRows(t testing.TB, b []byte) int64 {
	t.Helper()
	rd, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ipc.NewReader: %v", err)
	}
	defer rd.Release()
	var n int64
	for rd.Next() {
		n += rd.Record().NumRows()
	}
	if err := rd.Err(); err != nil {
		t.Fatalf("ipc stream: %v", err)
	}
	return n
}

// Bad input gets an error response with the right code and path, a message
// that gives the reason, and the connection and other sessions keep working.
func TestErrorsKeepServing(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{MaxMessageBytes: 4096})
	c := dial(t, url)
	other := dial(t, url)
	oid := other.open(testScenario, testDuration)
	id := c.open(testScenario, testDuration)
	enc := func(m map[string]any) []byte {
		b, err := msgpack.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name  string
		frame []byte
		code  Code
		path  string
		why   string // what the message must say
	}{
		{"malformed", []byte{0xc1, 0x00}, CodeBadRequest, "", "a value of msgpack code 0xc1, want a map"},
		{"truncated map", []byte{0x83, 0xa2, 'i', 'd'}, CodeBadRequest, "", "map of 3 entries in 3 bytes"},
		{"huge claimed map", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, CodeBadRequest, "", "map of 4294967295 entries in 0 bytes"},
		{"huge claimed bin", []byte{0x81, 0xa1, 'x', 0xc6, 0xc6, 0xc6, 0xc6, 0xc6}, CodeBadRequest, "", "3334915782-byte value in 0 bytes"},
		{"huge claimed str", []byte{0x81, 0xa1, 'x', 0xdb, 0xc6, 0xc6, 0xc6, 0xc6}, CodeBadRequest, "", "3334915782-byte value in 0 bytes"},
		{"not a map", enc(map[string]any{"x": 1})[1:], CodeBadRequest, "", "a value of msgpack code 0xa1, want a map"},
		{"no id", enc(map[string]any{"op": "hello"}), CodeBadRequest, "id", "request has no id"},
		{"unknown op", enc(map[string]any{"id": 1, "op": "teleport"}), CodeUnknownOp, "op", "unknown op \"teleport\""},
		{"step time type", enc(map[string]any{"id": 2, "op": "step", "session": id, "time": 100}), CodeBadArgs, "time", "time is an integer, want a string"},
		{"step bad unit", enc(map[string]any{"id": 3, "op": "step", "session": id, "time": "100 parsecs"}), CodeBadArgs, "time", "has unknown unit \"parsecs\""},
		{"step both", enc(map[string]any{"id": 4, "op": "step", "session": id, "time": "1ms", "events": 3}), CodeBadArgs, "time", "give exactly one of time (a duration) and events (a count)"},
		{"unknown arg", enc(map[string]any{"id": 5, "op": "summary", "session": id, "verbose": true}), CodeBadArgs, "verbose", "unknown argument verbose for summary"},
		{"no session", enc(map[string]any{"id": 6, "op": "summary", "session": "s999"}), CodeNotFound, "session", "no session \"s999\""},
		{"act rate", enc(map[string]any{"id": 7, "op": "act", "session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": "fast"}}), CodeBadArgs, "action.rate", "\"fast\" is not a rate"},
		{"act link", enc(map[string]any{"id": 8, "op": "act", "session": id, "action": map[string]any{"link": "nope", "dir": "ab", "rate": "1Mbps"}}), CodeNotFound, "action.link", "no link \"nope\""},
		{"act loss", enc(map[string]any{"id": 9, "op": "act", "session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "loss": 1.5}}), CodeBadArgs, "action.loss", "want a probability in [0, 1]"},
		{"act cwnd on link", enc(map[string]any{"id": 10, "op": "act", "session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "cwnd": 10}}), CodeBadArgs, "action.cwnd", "action.cwnd does not apply to a link"},
		{"invalid config", enc(map[string]any{"id": 11, "op": "open", "scenario": testScenario, "set": map[string]any{"links.bottleneck.rate": "-5Mbps"}}), CodeInvalidConfig, "links[bottleneck]", "\"-5Mbps\" is negative"},
		{"bad set path", enc(map[string]any{"id": 15, "op": "open", "scenario": testScenario, "set": []any{"links.nope.rate=1Mbps"}}), CodeInvalidConfig, "set.links.nope", "no element with id \"nope\" in \"links\""},
		{"unknown scenario", enc(map[string]any{"id": 12, "op": "open", "scenario": "atlantis"}), CodeNotFound, "scenario", "no built-in scenario \"atlantis\""},
		{"oversized", enc(map[string]any{"id": 13, "op": "hello", "version": string(make([]byte, 8000))}), CodeTooLarge, "", "message of 8025 bytes exceeds the limit of 4096"},
		{"text seed type", enc(map[string]any{"id": 14, "op": "open", "scenario": testScenario, "seed": "one"}), CodeBadArgs, "seed", "seed is a string, want a non-negative integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.raw(tc.frame)
			r := c.next()
			e, _ := r["error"].(map[string]any)
			if r["ok"] != false || e["code"] != string(tc.code) {
				t.Fatalf("%s: response %v, want error %s", tc.name, r, tc.code)
			}
			if p, _ := e["path"].(string); tc.path != "" && !hasPrefix(p, tc.path) {
				t.Errorf("%s: path = %q, want %q", tc.name, p, tc.path)
			}
			if m, _ := e["message"].(string); !strings.Contains(m, tc.why) {
				t.Errorf("%s: message %q, want it to say %q", tc.name, m, tc.why)
			}
		})
	}
	// Both connections still serve.
	c.call("step", map[string]any{"session": id, "time": "10ms"})
	other.call("step", map[string]any{"session": oid, "time": "10ms"})
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// A number that cannot be a rate is refused for its value, not its type.
func TestActRateMessages(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open(testScenario, testDuration)
	for rate, want := range map[any]string{
		-5:     `action.rate is -5, want a rate: "50Mbps" or a non-negative integer of bits per second`,
		2.5:    `action.rate is 2.5, want a rate: "50Mbps" or a non-negative integer of bits per second`,
		true:   `action.rate is a bool, want a rate ("50Mbps") or an integer in bits per second`,
		"fast": `action.rate: "fast" is not a rate`,
	} {
		b, err := msgpack.Marshal(map[string]any{"id": 1, "op": "act", "session": id, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": rate}})
		if err != nil {
			t.Fatal(err)
		}
		c.raw(b)
		e, _ := c.next()["error"].(map[string]any)
		if m, _ := e["message"].(string); !strings.HasPrefix(m, want) {
			t.Errorf("rate %v: message %q, want %q…", rate, m, want)
		}
	}
}

// A run pushes progress, tagged with the run's request id, with fractions
// rising to at most 1, before its response.
func TestRunProgress(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{ProgressEvery: time.Millisecond})
	c := dial(t, url)
	id := c.open(testScenario, "runtime.duration=30s")
	start := time.Now()
	rid := c.send("run", map[string]any{"session": id, "until": "20s"})
	r := c.await(rid)
	took := time.Since(start)
	if r["ok"] != true || asInt(r["result"].(map[string]any)["sim_time_ps"]) != int64(20*sim.Second) {
		t.Fatalf("run until 20s = %v, want sim_time_ps %d", r, int64(20*sim.Second))
	}
	// A push is due every millisecond, and the run looks at the clock
	// between chunks it sizes to take 2 to 8 ms of wall time (chunkWallLo,
	// chunkWallHi; a chunk the machine stalls takes longer, and the next is
	// halved): at least one push per 4 × (1 + 8) ms of the run, however
	// long it took on this machine.
	if want := int(took / (4 * (time.Millisecond + chunkWallHi))); len(c.pushes) < want {
		t.Fatalf("%d progress pushes in a run of %v, want at least %d", len(c.pushes), took, want)
	}
	prev := -1.0
	for _, p := range c.pushes {
		f, _ := p["fraction"].(float64)
		if p["stream"] != "progress" || asInt(p["request"]) != int64(rid) || f < prev || f > 1 {
			t.Errorf("push %v: want progress for request %d with fraction rising in [0, 1]", p, rid)
		}
		prev = f
	}
}
