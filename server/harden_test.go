package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Regression tests for issue 15: single valid-looking requests that cost
// the server seconds of CPU or gigabytes of memory. Each runs over a real
// websocket, must be answered within answerWithin (the client's read
// deadline), and bounds the growth of the process's peak RSS, read from
// /proc. They do not call t.Parallel: Go runs them one at a time before
// the parallel tests, so the RSS they see is their own.

// answerWithin is how long a refused request may take to be answered:
// 5 s, or 30 s under the race detector, which slows the server 5 to 20
// times.
var answerWithin = func() time.Duration {
	if raceEnabled {
		return 30 * time.Second
	}
	return 5 * time.Second
}()

// procKB reads a "Field:   N kB" line of /proc/self/status.
func procKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("reading /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/self/status %s: %v", field, err)
			}
			return n << 10
		}
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
}

// peakRSSGrowth runs f and returns how far the process's peak RSS rose
// above its RSS before f. Writing 5 to /proc/self/clear_refs resets the
// peak (VmHWM) to the current RSS (Linux 4.0+, proc(5)).
func peakRSSGrowth(t *testing.T, f func()) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	base := procKB(t, "VmRSS")
	f()
	return procKB(t, "VmHWM") - base
}

// checkRSS fails t if growth exceeds limit (scaled for the race detector).
func checkRSS(t *testing.T, what string, growth, limit int64) {
	t.Helper()
	if raceEnabled {
		limit *= 4
	}
	t.Logf("%s: peak RSS grew %d MiB (limit %d MiB)", what, growth>>20, limit>>20)
	if growth > limit {
		t.Errorf("%s: peak RSS grew %d MiB, want at most %d MiB", what, growth>>20, limit>>20)
	}
}

// awaitWithin is await with each frame due within d.
func (c *client) awaitWithin(id uint64, d time.Duration) map[string]any {
	c.t.Helper()
	defer func(w time.Duration) { c.wait = w }(c.wait)
	c.wait = d
	return c.await(id)
}

// refused sends frame and returns the error of its response, which must
// come within answerWithin.
func (c *client) refused(id uint64, frame []byte) map[string]any {
	c.t.Helper()
	c.raw(frame)
	r := c.awaitWithin(id, answerWithin)
	if r["ok"] != false {
		c.t.Fatalf("request %d succeeded, want an error", id)
	}
	return r["error"].(map[string]any)
}

// inlineScenario is a star of n endpoints around one router with one link
// each, and flows CUBIC flows between the first two.
func inlineScenario(nodes, flows int, duration string) map[string]any {
	ns := []any{map[string]any{"id": "r", "kind": "router"}}
	var ls, fs []any
	for i := range nodes {
		h := fmt.Sprintf("h%d", i)
		ns = append(ns, map[string]any{"id": h, "kind": "endpoint"})
		ls = append(ls, map[string]any{"id": "l" + h, "a": h, "b": "r", "rate": "1Gbps", "delay": "1ms"})
	}
	for i := range flows {
		fs = append(fs, map[string]any{"id": fmt.Sprintf("f%d", i), "src": "h0", "dst": "h1", "cc": "cubic"})
	}
	return map[string]any{"name": "star", "runtime": map[string]any{"seed": 1, "duration": duration},
		"nodes": ns, "links": ls, "flows": fs}
}

func frameOf(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// An inline scenario of 100,000 flows (a ~3 MB frame) was accepted after
// 8.6 s and took the server from 65 MB to 1.9 GB. It is refused on its
// flow count, before anything is built.
func TestHugeScenarioRefused(t *testing.T) {
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	limits := c.call("hello", map[string]any{"version": "1.0"})["limits"].(map[string]any)
	for _, k := range []string{"max_nodes", "max_links", "max_flows", "max_changes", "max_session_bytes", "max_decoded_bytes", "max_replay_ms", "max_builds"} {
		if asInt(limits[k]) <= 0 {
			t.Errorf("hello limits[%s] = %v, want a positive integer", k, limits[k])
		}
	}
	frame := frameOf(t, map[string]any{"id": 7, "op": "open", "config": inlineScenario(2, 100_000, "5s")})
	t.Logf("frame of %d bytes", len(frame))
	var e map[string]any
	growth := peakRSSGrowth(t, func() { e = c.refused(7, frame) })
	if e["code"] != string(CodeLimit) || e["path"] != "config.flows" ||
		e["message"] != "the scenario has 100000 flows, over the server's limit of 10000" {
		t.Errorf("open of 100,000 flows: %v, want limit at config.flows naming the count and the limit", e)
	}
	checkRSS(t, "100,000-flow scenario", growth, 192<<20)
}

// The size limits hold after parsing too (a scenario given by name, or one
// whose format expands entries), and the memory estimate refuses a session
// before it is built.
func TestScenarioSizeAndMemoryLimits(t *testing.T) {
	_, url := newTestServer(t, Options{MaxFlows: 1, MaxSessionBytes: 16 << 20})
	c := dial(t, url)
	if e := c.fail("open", map[string]any{"scenario": "bufferbloat"}); e["code"] != string(CodeLimit) || e["path"] != "flows" ||
		e["message"] != "the scenario has 2 flows, over the server's limit of 1" {
		t.Errorf("open of a 2-flow built-in with max_flows 1: %v, want limit at flows naming the count and the limit", e)
	}
	// 2,000 nodes, each with its link: about 2,000 × 8 KiB + 2,000² × 8 B
	// of estimate, over 16 MiB.
	frame := frameOf(t, map[string]any{"id": 8, "op": "open", "config": inlineScenario(2000, 1, "5s")})
	var e map[string]any
	growth := peakRSSGrowth(t, func() { e = c.refused(8, frame) })
	if e["code"] != string(CodeLimit) || !strings.Contains(e["message"].(string), "MiB") {
		t.Errorf("open over the memory estimate: %v, want limit naming MiB", e)
	}
	checkRSS(t, "over-estimate scenario", growth, 64<<20)
}

// The estimate is an upper bound on the heap a built session takes, and
// not a wild one: within 4× of it, for shapes dominated by flows, by links
// and by nodes. The reference is the Go runtime's own heap accounting.
func TestSessionBytesBoundsHeap(t *testing.T) {
	for _, tc := range []struct{ nodes, flows int }{{2, 400}, {400, 1}, {100, 100}, {4000, 1}} {
		raw, e := inlineConfig(inlineScenario(tc.nodes, tc.flows, "1s"))
		if e != nil {
			t.Fatal(e)
		}
		canon, _, e := buildScenario(raw, nil, nil, nil)
		if e != nil {
			t.Fatal(e)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, e := newState(canon, Limits{})
		if e != nil {
			t.Fatal(e)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		est := SessionBytes(st.run.Scenario)
		t.Logf("%d nodes, %d flows: heap %d KiB, estimate %d KiB", tc.nodes, tc.flows, heap>>10, est>>10)
		if heap > est || est > 4*heap {
			t.Errorf("%d nodes, %d flows: estimate %d KiB for a heap of %d KiB, want heap ≤ estimate ≤ 4× heap",
				tc.nodes, tc.flows, est>>10, heap>>10)
		}
		runtime.KeepAlive(st)
	}
}

// forgedCheckpoint is a checkpoint of canonical config (as open returned
// it) at position at, with a digest that cannot match.
func forgedCheckpoint(open map[string]any, at map[string]any) map[string]any {
	return map[string]any{"format": CheckpointFormat, "engine_version": open["engine_version"], "config": open["config"],
		"config_hash": open["config_hash"], "seed": open["seed"], "at": at, "digest": "0000000000000000", "actions": []any{}}
}

// openLong opens a p-rtr-p session of the given duration and returns open's
// result, with the engine version a checkpoint needs.
func openLong(c *client, duration string) map[string]any {
	c.t.Helper()
	r := c.call("open", map[string]any{"scenario": "p-rtr-p", "set": []any{"runtime.duration=" + duration}})
	r["engine_version"] = c.call("hello", map[string]any{"version": "1.0"})["engine_version"]
	return r
}

var hex16 = regexp.MustCompile(`[0-9a-f]{16}`)

// A checkpoint at event 10^9 of a 5 s run made the replay step ~150 s past
// the horizon, and its errors disclosed the clock and digest reached.
// Positions past the horizon are refused at once; a replay never passes
// its position's time; its errors name no digest, clock or event count.
func TestRestoreBeyondHorizon(t *testing.T) {
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	o := openLong(c, "5s")
	horizon := asInt(o["horizon_ps"])
	tests := []struct {
		name string
		at   map[string]any
		code Code
		path string
	}{
		{"10^9 events within the horizon", map[string]any{"events": uint64(1e9), "sim_time_ps": horizon / 2, "drained": true},
			CodeReplayMismatch, "checkpoint.at"},
		{"10^9 events at the horizon", map[string]any{"events": uint64(1e9), "sim_time_ps": horizon, "drained": false},
			CodeReplayMismatch, "checkpoint.at"},
		{"past the horizon", map[string]any{"events": 10, "sim_time_ps": horizon + 1, "drained": true},
			CodeBadArgs, "checkpoint.at.sim_time_ps"},
		{"sim_time_ps 2^63", map[string]any{"events": 10, "sim_time_ps": uint64(1) << 63, "drained": true},
			CodeBadArgs, "checkpoint.at.sim_time_ps"},
		{"sim_time_ps 2^64-1", map[string]any{"events": 10, "sim_time_ps": uint64(math.MaxUint64), "drained": true},
			CodeBadArgs, "checkpoint.at.sim_time_ps"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			id := uint64(1000 + i)
			frame := frameOf(t, map[string]any{"id": id, "op": "restore", "checkpoint": forgedCheckpoint(o, tc.at)})
			var e map[string]any
			growth := peakRSSGrowth(t, func() { e = c.refused(id, frame) })
			if e["code"] != string(tc.code) || e["path"] != tc.path {
				t.Errorf("restore: %v, want %s at %s", e, tc.code, tc.path)
			}
			if msg := e["message"].(string); tc.code == CodeReplayMismatch && (hex16.MatchString(msg) || strings.ContainsAny(msg, "0123456789")) {
				t.Errorf("replay error %q reveals a digest, clock or count", msg)
			}
			checkRSS(t, tc.name, growth, 64<<20)
		})
	}
}

// A replay stops at its wall-time budget, and when its connection closes;
// while it runs, the connection's other requests are answered.
func TestReplayBudgetCancelAndResponsiveness(t *testing.T) {
	t.Run("budget", func(t *testing.T) {
		_, url := newTestServer(t, Options{MaxReplayTime: 50 * time.Millisecond})
		c := dial(t, url)
		o := openLong(c, "600s")
		frame := frameOf(t, map[string]any{"id": 50, "op": "restore", "checkpoint": forgedCheckpoint(o,
			map[string]any{"events": uint64(1e9), "sim_time_ps": asInt(o["horizon_ps"]), "drained": true})})
		if e := c.refused(50, frame); e["code"] != string(CodeLimit) {
			t.Errorf("replay over budget: %v, want limit", e)
		}
	})
	t.Run("responsive and cancelled", func(t *testing.T) {
		srv, url := newTestServer(t, Options{})
		c := dial(t, url)
		o := openLong(c, "600s")
		// A replay of 600 s of p-rtr-p takes tens of seconds.
		c.raw(frameOf(t, map[string]any{"id": 60, "op": "restore", "checkpoint": forgedCheckpoint(o,
			map[string]any{"events": uint64(1e9), "sim_time_ps": asInt(o["horizon_ps"]), "drained": true})}))
		c.id = 100
		st := c.awaitWithin(c.send("stats", nil), answerWithin)
		if st["ok"] != true {
			t.Errorf("stats during a replay: %v", st)
		}
		step := c.awaitWithin(c.send("step", map[string]any{"session": o["session"], "time": "10ms"}), answerWithin)
		if step["ok"] != true {
			t.Errorf("step of another session during a replay: %v", step)
		}
		c.ws.Close()
		deadline := time.Now().Add(answerWithin)
		for {
			srv.mu.Lock()
			n := len(srv.conns)
			srv.mu.Unlock()
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("connection still served %v after the client closed during a replay", answerWithin)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// emptyMapsFrame is a request frame of about size bytes whose key holds an
// array of empty maps (one byte each), nested under path.
func emptyMapsFrame(id uint64, op string, path []string, size int) []byte {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	_ = enc.EncodeMapLen(3)
	_ = enc.EncodeString("id")
	_ = enc.EncodeUint(id)
	_ = enc.EncodeString("op")
	_ = enc.EncodeString(op)
	for i, k := range path {
		if i > 0 {
			_ = enc.EncodeMapLen(1)
		}
		_ = enc.EncodeString(k)
	}
	n := size - b.Len() - 5
	b.WriteByte(msgpcode.Array32)
	_ = binary.Write(&b, binary.BigEndian, uint32(n))
	b.Write(bytes.Repeat([]byte{msgpcode.FixedMapLow}, n))
	return b.Bytes()
}

// A 16 MiB frame of empty msgpack maps cost ~1.1 GB of RSS, built before
// any argument was checked. Under an unknown argument it is refused without
// building anything; under a known one, at the decode budget; from several
// connections at once, within the server-wide pool.
//
// Under the race detector the frames are 2 MiB, still far over the decode
// budget: 16 MiB frames decoded by six connections at once took 23 s
// there, most of the race pass, for the same code paths.
func TestDecoderAmplificationBounded(t *testing.T) {
	size := 16<<20 - 64
	if raceEnabled {
		size = 2<<20 - 64
	}
	srv, url := newTestServer(t, Options{})
	c := dial(t, url)
	unknown := emptyMapsFrame(1, "stats", []string{"junk"}, size)
	known := emptyMapsFrame(2, "open", []string{"config", "flows"}, size)
	var e map[string]any
	growth := peakRSSGrowth(t, func() { e = c.refused(1, unknown) })
	if e["code"] != string(CodeBadArgs) || e["path"] != "junk" {
		t.Errorf("16 MiB under an unknown argument: %v, want bad_args at junk", e)
	}
	checkRSS(t, "unknown argument", growth, 96<<20)
	growth = peakRSSGrowth(t, func() { e = c.refused(2, known) })
	if e["code"] != string(CodeTooLarge) || e["path"] != "config" {
		t.Errorf("16 MiB of empty maps in config: %v, want too_large at config", e)
	}
	checkRSS(t, "known argument", growth, 192<<20)

	const conns = 6
	clients := make([]*client, conns)
	for i := range clients {
		clients[i] = dial(t, url)
	}
	growth = peakRSSGrowth(t, func() {
		var wg sync.WaitGroup
		for _, cl := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl.raw(known)
				_ = cl.ws.SetReadDeadline(time.Now().Add(3 * answerWithin))
				if _, _, err := cl.ws.ReadMessage(); err != nil {
					t.Errorf("no answer: %v", err)
				}
			}()
		}
		wg.Wait()
	})
	checkRSS(t, fmt.Sprintf("%d connections at once", conns), growth, 448<<20)
	if n := srv.decoded.inUse(); n != 0 {
		t.Errorf("decode pool holds %d bytes after every request was answered, want 0", n)
	}
}

// With --insecure-no-token the Host must name the loopback interface: a
// page whose DNS name was rebound to 127.0.0.1 sends its own name, and
// its Origin matches that name, so the Origin check alone lets it in.
func TestNoTokenChecksHost(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{InsecureNoToken: true})
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"127.0.0.1:" + port, 0}, {"localhost:" + port, 0}, {"LocalHost", 0}, {"app.localhost:" + port, 0},
		{"[::1]:" + port, 0}, {"evil.example:" + port, http.StatusForbidden}, {"127.0.0.1.evil.example", http.StatusForbidden},
	} {
		h := http.Header{"Host": {tc.host}, "Origin": {"http://" + tc.host}}
		ws, resp, err := websocket.DefaultDialer.Dial(url, h)
		if tc.status == 0 {
			if err != nil {
				t.Errorf("Host %s: %v, want success", tc.host, err)
			} else {
				ws.Close()
			}
			continue
		}
		if err == nil {
			ws.Close()
			t.Errorf("Host %s: connected, want HTTP %d", tc.host, tc.status)
		} else if resp == nil || resp.StatusCode != tc.status {
			t.Errorf("Host %s: %v, want HTTP %d", tc.host, resp, tc.status)
		}
	}
}

// loopbackHost against the names RFC 6761 section 6.3 reserves and the
// addresses net.IP.IsLoopback knows.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "localhost.": true, "a.localhost:80": true,
		"127.0.0.1": true, "127.1.2.3:9": true, "[::1]:8765": true, "::1": true, "10.0.0.1": false,
		"localhost.example": false, "": false, "evil.example:8765": false} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// The decoder's cost estimate bounds the heap its values take, measured by
// the runtime, and stays within 4× of it, for the shapes a hostile frame
// would use (many empty maps, empty arrays, short strings) and a real one
// (an inline scenario).
func TestDecodeCostBoundsHeap(t *testing.T) {
	many := func(elem []byte, n int) []byte {
		b := []byte{msgpcode.Array32, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(n))
		return append(b, bytes.Repeat(elem, n)...)
	}
	scn, err := msgpack.Marshal(inlineScenario(50, 200, "1s"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"empty maps", many([]byte{msgpcode.FixedMapLow}, 1<<18)},
		{"empty arrays", many([]byte{msgpcode.FixedArrayLow}, 1<<18)},
		{"4-byte strings", many([]byte{msgpcode.FixedStrLow | 4, 'a', 'b', 'c', 'd'}, 1<<18)},
		{"maps of one int", many([]byte{msgpcode.FixedMapLow | 1, msgpcode.FixedStrLow | 1, 'k', 7}, 1<<17)},
		{"scenario", scn},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := newDecoder(tc.frame, math.MaxInt64)
		v, err := d.value(0, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(v)
		heap := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%s: %d bytes, heap %d KiB, cost %d KiB", tc.name, len(tc.frame), heap>>10, d.cost>>10)
		// The race detector's instrumentation keeps some values off the
		// stack that would live there otherwise: allow it 25%.
		slack := d.cost
		if raceEnabled {
			slack += d.cost / 4
		}
		if heap > slack || d.cost > 4*heap {
			t.Errorf("%s: cost %d for a heap of %d, want heap ≤ cost ≤ 4× heap", tc.name, d.cost, heap)
		}
	}
}

// A frame broken after its id (an extension type, or a map key that is not
// a string, deep in an argument) is refused with the id echoed, so that a
// client with requests in flight can tell which failed; one broken before
// its id, or without one, still gets none.
func TestBrokenFrameEchoesItsID(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		id    any
	}{
		{"ext after the id", []byte{0x82, 0xa2, 'i', 'd', 0x03, 0xa3, 's', 'e', 't', 0xd5, 0x05, 'x', 'x'}, uint64(3)},
		{"bin key after the id", []byte{0x82, 0xa2, 'i', 'd', 0x07, 0xa3, 's', 'e', 't', 0x81, 0xc4, 0x01, 'k', 0x01}, uint64(7)},
		{"ext before the id", []byte{0x82, 0xa3, 's', 'e', 't', 0xd5, 0x05, 'x', 'x', 0xa2, 'i', 'd', 0x03}, nil},
		{"negative id", []byte{0x82, 0xa2, 'i', 'd', 0xff, 0xa3, 's', 'e', 't', 0xd5, 0x05, 'x', 'x'}, nil},
	} {
		req, e := DecodeRequest(tc.frame)
		if e == nil || e.Code != CodeBadRequest {
			t.Errorf("%s: error %v, want bad_request", tc.name, e)
		}
		if req.ID != tc.id {
			t.Errorf("%s: id %v (%T), want %v", tc.name, req.ID, req.ID, tc.id)
		}
	}
}
