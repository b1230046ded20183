package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"
)

var update = flag.Bool("update", false, "rewrite proto/vectors from a live session")

const vectorDir = "../proto/vectors"

// canonicalMsgpack encodes v as proto/README.md's "Vectors" section says:
// map keys sorted, smallest integer encodings, floats as float64.
func canonicalMsgpack(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toVectorJSON rewrites a decoded value with the JSON conventions for bin
// and integral floats.
func toVectorJSON(v any) any {
	switch x := v.(type) {
	case []byte:
		return map[string]any{"$bin": base64.StdEncoding.EncodeToString(x)}
	case float64:
		if x == math.Trunc(x) {
			return map[string]any{"$float": x}
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toVectorJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = toVectorJSON(e)
		}
		return l
	}
	return v
}

// fromVectorJSON reads a vector's JSON into the values decodeValue yields.
func fromVectorJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fromJSONValue(v)
}

func fromJSONValue(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			return x.Float64()
		}
		return x.Int64()
	case map[string]any:
		if b, ok := x["$bin"].(string); ok && len(x) == 1 {
			return base64.StdEncoding.DecodeString(b)
		}
		if f, ok := x["$float"].(json.Number); ok && len(x) == 1 {
			return f.Float64()
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			var err error
			if m[k], err = fromJSONValue(e); err != nil {
				return nil, err
			}
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			var err error
			if l[i], err = fromJSONValue(e); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	return v, nil
}

// Each vector's msgpack decodes to its JSON twin, and the JSON twin encodes
// canonically to the msgpack byte for byte.
func TestVectors(t *testing.T) {
	if *update {
		writeVectorFiles(t, recordVectors(t))
	}
	names, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(names) < 20 {
		t.Fatalf("found %d vectors (%v), want at least 20", len(names), err)
	}
	for _, jpath := range names {
		name := strings.TrimSuffix(filepath.Base(jpath), ".json")
		t.Run(name, func(t *testing.T) {
			jb, err := os.ReadFile(jpath)
			if err != nil {
				t.Fatal(err)
			}
			mb, err := os.ReadFile(strings.TrimSuffix(jpath, ".json") + ".msgpack")
			if err != nil {
				t.Fatal(err)
			}
			want, err := fromVectorJSON(jb)
			if err != nil {
				t.Fatalf("%s.json: %v", name, err)
			}
			got, err := decodeValue(mb)
			if err != nil {
				t.Fatalf("decodeValue(%s.msgpack): %v", name, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decode(%s.msgpack) differs from %s.json (-json +msgpack):\n%s", name, name, diff)
			}
			enc, err := canonicalMsgpack(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, mb) {
				t.Errorf("encode(%s.json) = % x..., want % x...", name, enc[:min(len(enc), 32)], mb[:min(len(mb), 32)])
			}
			if strings.HasPrefix(name, "request_") {
				_, e := DecodeRequest(mb)
				switch {
				case name == "request_unknown_op" && (e == nil || e.Code != CodeUnknownOp):
					t.Errorf("DecodeRequest(%s) = %v, want unknown_op", name, e)
				case name != "request_unknown_op" && e != nil:
					t.Errorf("DecodeRequest(%s) = %v", name, e)
				}
			}
		})
	}
}

// The hello request's bytes, derived by hand from the msgpack spec: a
// 3-entry fixmap (0x83); "id" fixstr (0xa2 'i' 'd') and positive fixint 1;
// "op" (0xa2 'o' 'p') and fixstr "hello" (0xa5 ...); "version" (0xa7 ...)
// and "1.0" (0xa3 '1' '.' '0'). Keys in bytewise order: id, op, version.
func TestHelloVectorBytes(t *testing.T) {
	want := []byte{0x83, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa5, 'h', 'e', 'l', 'l', 'o',
		0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0xa3, '1', '.', '0'}
	got, err := os.ReadFile(filepath.Join(vectorDir, "request_hello.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request_hello.msgpack = % x, want % x", got, want)
	}
}

// recordVectors plays the vectors' session against a live server and
// returns every frame it names, as decoded values.
func recordVectors(t *testing.T) map[string]any {
	// MaxBuilds defaults to the CPU count; fix it so hello's vector does
	// not depend on the machine that wrote it.
	_, url := newTestServer(t, Options{MaxBuilds: 2})
	c := dial(t, url)
	vec := map[string]any{}
	req := func(name, op string, args map[string]any) map[string]any {
		m := map[string]any{"id": int64(len(vec) + 1), "op": op}
		for k, v := range args {
			m[k] = v
		}
		b, err := canonicalMsgpack(m)
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeValue(b)
		if err != nil {
			t.Fatal(err)
		}
		vec["request_"+name] = v
		c.raw(b)
		return c.await(uint64(m["id"].(int64)))
	}
	vec["request_hello"] = map[string]any{"id": int64(1), "op": "hello", "version": "1.0"}
	c.raw(mustCanonical(t, vec["request_hello"]))
	vec["response_hello"] = c.await(1)
	req("scenarios", "scenarios", nil)
	open := req("open_builtin", "open", map[string]any{"scenario": "pump", "seed": 7,
		"set": map[string]any{"runtime.duration": "2s", "trace.detail": "change"}})
	vec["response_open"] = open
	sid := open["result"].(map[string]any)["session"].(string)
	vec["response_open_inline"] = req("open_inline", "open", map[string]any{"seed": 3, "set": []any{"flows.f0.rate=80Mbps"},
		"config": map[string]any{"name": "tiny", "runtime": map[string]any{"duration": "1s"},
			"nodes": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}},
			"links": []any{map[string]any{"id": "l", "a": "a", "b": "b", "rate": "100Mbps", "delay": "5ms"}},
			"flows": []any{map[string]any{"id": "f0", "src": "a", "dst": "b", "cc": "pump", "rate": "50Mbps", "packet_size": "1500B"}}}})
	vec["response_subscribe"] = req("subscribe", "subscribe", map[string]any{"session": sid, "tables": []any{"delivery"}, "flows": []any{"f0"}, "every_ms": 0})
	c.pushes = nil
	vec["response_step"] = req("step_time", "step", map[string]any{"session": sid, "time": "22ms"})
	if len(c.pushes) != 1 {
		t.Fatalf("%d pushes from a 22 ms step, want 1", len(c.pushes))
	}
	vec["push_arrow_delivery"] = c.pushes[0]
	req("step_events", "step", map[string]any{"session": sid, "events": 1000})
	vec["response_act"] = req("act_link", "act", map[string]any{"session": sid, "action": map[string]any{"link": "bottleneck", "dir": "ab", "rate": "50Mbps", "queue_limit": "100KB"}})
	vec["response_error_act_flow"] = req("act_flow", "act", map[string]any{"session": sid, "action": map[string]any{"flow": "f0", "cwnd": 20, "pacing_rate": "10Mbps"}})
	req("act_loss", "act", map[string]any{"session": sid, "action": map[string]any{"link": "access", "dir": "ba", "loss": 0.01, "delay": "2ms"}})
	vec["response_checkpoint"] = req("checkpoint", "checkpoint", map[string]any{"session": sid})
	cp := vec["response_checkpoint"].(map[string]any)["result"].(map[string]any)["checkpoint"]
	vec["checkpoint"] = cp
	req("signals", "signals", map[string]any{"session": sid, "table": "queue"})
	req("summary", "summary", map[string]any{"session": sid})
	req("unsubscribe", "unsubscribe", map[string]any{"session": sid, "tables": []any{"delivery"}})
	req("restore", "restore", map[string]any{"checkpoint": cp})
	req("fork", "fork", map[string]any{"checkpoint": cp, "actions": []any{map[string]any{"link": "bottleneck", "dir": "ab", "queue_limit": 50}}})
	vec["response_run"] = req("run", "run", map[string]any{"session": sid, "until": "1500ms"})
	req("stats", "stats", nil)
	req("close", "close", map[string]any{"session": sid})
	vec["response_error_bad_args"] = req("step_bad", "step", map[string]any{"session": "s1", "time": 100})
	vec["response_error_unknown_op"] = req("unknown_op", "teleport", nil)
	vec["response_error_invalid_config"] = req("open_invalid", "open", map[string]any{"scenario": "pump", "set": map[string]any{"links.bottleneck.rate": "fast", "flows.f0.packet_size": 0}})
	vec["response_error_not_found"] = req("summary_closed", "summary", map[string]any{"session": sid})
	vec["push_progress"] = map[string]any{"stream": "progress", "session": "s1", "seq": int64(4), "request": int64(9),
		"sim_time_ps": int64(5_000_000_000_000), "events": int64(123456), "fraction": 0.25}
	// Added last so that the ids of the vectors above stay as they were.
	tcp := req("open_tcp", "open", map[string]any{"scenario": "p-rtr-p", "set": map[string]any{"runtime.duration": "1s"}})
	tsid := tcp["result"].(map[string]any)["session"].(string)
	delete(vec, "request_open_tcp")
	vec["response_step_observe"] = req("step_observe", "step", map[string]any{"session": tsid, "time": "300ms",
		"action": map[string]any{"flow": "f0", "cwnd": 40}, "observe": "f0"})
	// A steps batch: the first session's step carries an action and an
	// observation, the second only observes.
	other := req("open_tcp2", "open", map[string]any{"scenario": "p-rtr-p", "seed": 2, "set": map[string]any{"runtime.duration": "1s"}})
	osid := other["result"].(map[string]any)["session"].(string)
	delete(vec, "request_open_tcp2")
	vec["response_steps"] = req("steps", "steps", map[string]any{"steps": []any{
		map[string]any{"session": tsid, "time": "100ms", "action": map[string]any{"flow": "f0", "cwnd": 20}, "observe": "f0"},
		map[string]any{"session": osid, "time": "100ms", "observe": "f0"}}})
	delete(vec, "request_step_bad")
	return vec
}

// writeVectorFiles writes each frame as its JSON and msgpack twins.
func writeVectorFiles(t *testing.T, vec map[string]any) {
	if err := os.MkdirAll(vectorDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(vectorDir, "*"))
	for _, f := range old {
		os.Remove(f)
	}
	keys := make([]string, 0, len(vec))
	for k := range vec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := vec[k]
		j, err := json.MarshalIndent(toVectorJSON(v), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vectorDir, k+".json"), append(j, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vectorDir, k+".msgpack"), mustCanonical(t, v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %d vectors\n", len(keys))
}

func mustCanonical(t *testing.T, v any) []byte {
	t.Helper()
	b, err := canonicalMsgpack(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The vectors are what the server sends today: the session they were
// recorded from, played again, gives every frame as stored.
func TestVectorsMatchTheServer(t *testing.T) {
	live := recordVectors(t)
	for name, got := range live {
		jb, err := os.ReadFile(filepath.Join(vectorDir, name+".json"))
		if err != nil {
			t.Errorf("%s: the session sends a frame with no vector: %v", name, err)
			continue
		}
		want, err := fromVectorJSON(jb)
		if err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the server now sends (-vector +live):\n%s", name, diff)
		}
	}
}
