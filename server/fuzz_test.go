package server

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// seedVectors adds every request vector to f's corpus.
func seedVectors(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(vectorDir, "*.msgpack"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// newerConfig is an inline scenario with the newer features: a learning
// switch, spray and ECMP routing over two paths, a split-TCP proxy, loss,
// jitter, outage and capacity models, a receive hold and ACK grants, a
// ping, a pump, a flow group and a scheduled change.
const newerConfig = `{"runtime":{"duration":"1s"},"nodes":[{"id":"h1","kind":"endpoint"},{"id":"sw","kind":"switch"},{"id":"ra","kind":"router","routing":"spray"},{"id":"m1","kind":"router"},{"id":"m2","kind":"router"},{"id":"rb","kind":"router","routing":"ecmp"},{"id":"px","kind":"proxy"},{"id":"h2","kind":"endpoint"}],"links":[{"id":"a","a":"h1","b":"sw","rate":"100Mbps","delay":"1ms"},{"id":"b","a":"sw","b":"ra","rate":"100Mbps","delay":"1ms"},{"id":"bottleneck","a":"ra","b":"m1","rate":"10Mbps","delay":"5ms","ab":{"loss":{"kind":"bernoulli","p":0.01},"jitter":{"kind":"gaussian","sigma":"1ms","order":"reorder"},"outages":{"start":"100ms","every":"300ms","duration":"20ms"}}},{"id":"c2","a":"ra","b":"m2","rate":"10Mbps","delay":"6ms","ab":{"capacity":{"states":[{"rate":"10Mbps","dwell":"50ms"},{"rate":"2Mbps","dwell":"20ms"}],"transitions":[[0,1],[1,0]]}}},{"id":"d1","a":"m1","b":"rb","rate":"100Mbps","delay":"1ms"},{"id":"d2","a":"m2","b":"rb","rate":"100Mbps","delay":"1ms"},{"id":"e","a":"rb","b":"px","rate":"100Mbps","delay":"1ms"},{"id":"f","a":"px","b":"h2","rate":"20Mbps","delay":"10ms"}],"flows":[{"id":"f0","src":"h1","dst":"h2","cc":"bbr","rcv_hold":"1ms","ack_grant":{"profile":"lte"}},{"id":"pg","src":"h1","dst":"h2","cc":"ping","interval":"20ms"},{"id":"pu","src":"h1","dst":"h2","cc":"pump","rate":"1Mbps"},{"group":"g","count":3,"src":["h1"],"dst":"h2","cc":"cubic","start":{"kind":"poisson","rate":"50/s"},"size":{"kind":"lognormal","median":"20KB","sigma":1}}],"changes":[{"at":"200ms","link":"bottleneck","dir":"ab","rate":"5Mbps","outage":"10ms"}]}`

// seedNewer adds requests that reach the newer features: inline and
// built-in opens of them, and actions and steps on the open session.
func seedNewer(f *testing.F) {
	var cfg map[string]any
	if err := json.Unmarshal([]byte(newerConfig), &cfg); err != nil {
		f.Fatal(err)
	}
	for _, v := range []map[string]any{
		{"id": 1, "op": "open", "config": cfg, "seed": 2},
		{"id": 2, "op": "open", "scenario": "p-we-p", "set": []any{"runtime.duration=1s", "flows.f0.cc=bbr"}},
		{"id": 3, "op": "open", "scenario": "dumbbell-n", "set": map[string]any{"flows.bulk.count": 4, "runtime.duration": "500ms"}},
		{"id": 4, "op": "open", "scenario": "rrul", "set": []any{`links.bottleneck.ab.outages={"start":"10ms","every":"100ms","duration":"20ms"}`}},
		{"id": 5, "op": "act", "session": "s1", "action": map[string]any{"link": "bottleneck", "dir": "ab", "outage": "50ms", "delay": "30ms"}},
		{"id": 6, "op": "step", "session": "s1", "time": "300ms", "observe": "f0"},
		{"id": 7, "op": "steps", "steps": []any{map[string]any{"session": "s1", "events": 1000, "action": map[string]any{"flow": "f0", "cwnd": 3}}}},
		// Bytes that are not UTF-8 in an argument name and a set key: the
		// error quoting them was once not UTF-8 either.
		{"id": 8, "op": "stats", "b\xffogus": 1},
		{"id": 9, "op": "open", "scenario": "p-rtr-p", "set": map[string]any{"na\xffme": 1, "description": "\xfe"}},
		{"id": 10, "op": "report", "session": "s1", "buckets": 200},
		{"id": 11, "op": "report", "session": "s1"},
	} {
		b, err := canonicalMsgpack(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// The decoder never panics, and what it accepts survives a canonical
// re-encode and decode unchanged.
func FuzzDecodeRequest(f *testing.F) {
	seedVectors(f)
	seedNewer(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		v, err := decodeValue(frame)
		// The first pass's skipper accepts the frames the decoder does,
		// and ends where the value does. It does not look for repeated map
		// keys: every value a request keeps is decoded, which does.
		end, serr := skipValue(frame, 0, 0)
		skipped := serr == nil && end == len(frame)
		if err == nil && !skipped || err != nil && skipped && !strings.Contains(err.Error(), "repeated") {
			t.Fatalf("decodeValue: %v; skipValue: end %d of %d, %v", err, end, len(frame), serr)
		}
		if err != nil {
			return
		}
		// No frame costs more per byte than decodeBound reserves.
		d := newDecoder(frame, math.MaxInt64)
		if _, err := d.value(0, false); err != nil || d.cost > maxCostPerByte*int64(len(frame)) {
			t.Fatalf("a %d-byte frame costs %d (%v), over %d a byte", len(frame), d.cost, err, maxCostPerByte)
		}
		b, err2 := canonicalMsgpack(v)
		if err2 != nil {
			t.Fatalf("re-encoding a decoded value: %v", err2)
		}
		w, err := decodeValue(b)
		if err != nil {
			t.Fatalf("decoding the re-encoded value: %v", err)
		}
		if !sameValue(v, w) {
			t.Fatalf("round trip changed %#v to %#v", v, w)
		}
		DecodeRequest(frame)
	})
}

// notUTF8 finds a string or map key in v that is not UTF-8.
func notUTF8(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, !utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if s, ok := notUTF8(e); ok {
				return s, true
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return k, true
			}
			if s, ok := notUTF8(e); ok {
				return s, true
			}
		}
	}
	return "", false
}

// sameValue is deep equality that counts NaN equal to NaN.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			if !sameValue(e, y[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// Any frame gets an answer and leaves the server serving: the frame goes to
// a live server whose connection holds an open session, then a stats
// request must succeed. Every str the server sends is UTF-8.
func FuzzServeFrame(f *testing.F) {
	seedVectors(f)
	seedNewer(f)
	_, url := newTestServer(f, Options{MaxEvents: 50_000, MaxMessageBytes: 1 << 16, MaxSessionsPerConn: 4})
	var c *client
	connect := func(t *testing.T) {
		ws, _, err := websocket.DefaultDialer.Dial(url+"?token="+testToken, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		c = &client{t: t, ws: ws}
		c.open(testScenario)
	}
	// answered sends frame and reads until its response; a close with
	// code 4000 (a refused hello) is an answer too, after which the client
	// reconnects.
	answered := func(t *testing.T, frame []byte) {
		if err := c.ws.WriteMessage(websocket.BinaryMessage, frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		// A server that never answers fails the input, which the fuzzer
		// then keeps, rather than hanging the worker until -fuzztime ends.
		c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, b, err := c.ws.ReadMessage()
			if websocket.IsCloseError(err, closeVersion) {
				c.ws.Close()
				connect(t)
				return
			}
			if err != nil {
				t.Fatalf("no answer to % x: %v", frame[:min(len(frame), 64)], err)
			}
			v, err := decodeValue(b)
			if err != nil {
				t.Fatalf("server sent undecodable frame: %v", err)
			}
			if s, ok := notUTF8(v); ok {
				t.Fatalf("server sent a str that is not UTF-8, %q, which a strict client cannot decode", s)
			}
			if _, ok := v.(map[string]any)["ok"]; ok {
				return
			}
		}
	}
	stats, _ := canonicalMsgpack(map[string]any{"id": 1 << 40, "op": "stats"})
	f.Fuzz(func(t *testing.T, frame []byte) {
		if c == nil {
			connect(t)
		}
		c.t = t
		answered(t, frame)
		// Still serving (a second answer after a refused hello is the
		// close, read by the next answered).
		answered(t, stats)
		if asInt(c.call("stats", nil)["connection_sessions"]) >= 3 {
			c.ws.Close()
			connect(t)
		}
	})
}
