package server

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
)

// 50 sessions on 10 connections step in parallel; each ends with the digest
// of its own straight engine run, so no session disturbed another.
func TestParallelSessions(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	const conns, perConn = 10, 5
	var wg sync.WaitGroup
	errs := make(chan error, conns*perConn)
	for ci := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, url)
			ids := make([]string, perConn)
			cfgs := make([]string, perConn)
			for i := range ids {
				r := c.call("open", map[string]any{"scenario": testScenario, "seed": ci*perConn + i,
					"set": []any{"runtime.duration=300ms", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.01}`}})
				ids[i], cfgs[i] = r["session"].(string), r["config"].(string)
			}
			// Interleave requests to all of the connection's sessions.
			pending := map[uint64]int{}
			for range 30 {
				for i, id := range ids {
					pending[c.send("step", map[string]any{"session": id, "time": "10ms"})] = i
				}
			}
			for len(pending) > 0 {
				m := c.next()
				id := uint64(asInt(m["id"]))
				if m["ok"] != true {
					errs <- fmt.Errorf("step failed: %v", m["error"])
					return
				}
				delete(pending, id)
			}
			for i, id := range ids {
				sum := c.call("summary", map[string]any{"session": id})
				want, _ := engineDigest(t, cfgs[i])
				if sum["digest"] != want {
					errs <- fmt.Errorf("session %s digest %v, want %s", id, sum["digest"], want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Limits are enforced with limit errors that say which limit.
func TestLimits(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{MaxSessions: 3, MaxSessionsPerConn: 2, MaxEvents: 1000})
	a, b := dial(t, url), dial(t, url)
	limited := func(what string, e map[string]any, why string) {
		t.Helper()
		if m, _ := e["message"].(string); e["code"] != string(CodeLimit) || !strings.Contains(m, why) {
			t.Errorf("%s: %v, want a limit error saying %q", what, e, why)
		}
	}
	s1 := a.open(testScenario)
	a.open(testScenario)
	limited("third session on a connection", a.fail("open", map[string]any{"scenario": testScenario}),
		"this connection has its maximum of 2 sessions")
	b.open(testScenario)
	limited("fourth session on the server", b.fail("open", map[string]any{"scenario": testScenario}),
		"the server has its maximum of 3 sessions")
	limited("stepping past max events", a.fail("step", map[string]any{"session": s1, "events": 5000}),
		"the server's limit of 1000 events")
	if got := asInt(a.call("summary", map[string]any{"session": s1})["events"]); got != 1000 {
		t.Errorf("events after hitting the limit = %d, want 1000", got)
	}
	a.call("close", map[string]any{"session": s1})
	a.open(testScenario) // the closed session's slot is free again
}

// A dropped connection closes its sessions.
func TestDroppedConnectionClosesSessions(t *testing.T) {
	t.Parallel()
	srv, url := newTestServer(t, Options{})
	c := dial(t, url)
	c.open(testScenario)
	c.open(testScenario)
	c.ws.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		srv.mu.Lock()
		n := len(srv.sessions)
		srv.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left 5 s after the connection dropped", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Idle sessions are closed; so is a connection left with no session and
// no request, with close code 4001.
func TestIdleSessionClosed(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{IdleTimeout: 100 * time.Millisecond, ConnIdleTimeout: 3 * time.Second})
	c := dial(t, url)
	id := c.open(testScenario)
	time.Sleep(300 * time.Millisecond)
	// Closed by now, or soon: a loaded machine can delay the reaper past
	// the sleep, so the test asks again, each time after three idle
	// timeouts (a request is a use of the session), for up to 10 s.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		r := c.await(c.send("summary", map[string]any{"session": id}))
		if r["ok"] == false || time.Now().After(deadline) {
			if e, _ := r["error"].(map[string]any); e["code"] != string(CodeNotFound) {
				t.Errorf("summary of an idle-closed session: %v, want not_found", r)
			}
			break
		}
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := c.ws.ReadMessage()
	if !websocket.IsCloseError(err, closeIdle) {
		t.Errorf("idle connection: read error %v, want close %d", err, closeIdle)
	}
}

func TestAuthAndOrigin(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	host := url[len("ws://") : len(url)-1]
	tests := []struct {
		name   string
		query  string
		header http.Header
		status int // 0: upgrade succeeds
	}{
		{"no token", "", nil, http.StatusUnauthorized},
		{"wrong token", "?token=nope", nil, http.StatusUnauthorized},
		{"query token", "?token=" + testToken, nil, 0},
		{"bearer", "", http.Header{"Authorization": {"Bearer " + testToken}}, 0},
		{"wrong bearer", "", http.Header{"Authorization": {"Bearer x"}}, http.StatusUnauthorized},
		// RFC 7235 section 2.1: the auth-scheme is case-insensitive.
		{"bearer in lower case", "", http.Header{"Authorization": {"bearer " + testToken}}, 0},
		{"bearer in upper case", "", http.Header{"Authorization": {"BEARER " + testToken}}, 0},
		{"other scheme", "", http.Header{"Authorization": {"Basic " + testToken}}, http.StatusUnauthorized},
		{"same origin", "?token=" + testToken, http.Header{"Origin": {"http://" + host}}, 0},
		{"foreign origin", "?token=" + testToken, http.Header{"Origin": {"http://evil.example"}}, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, resp, err := websocket.DefaultDialer.Dial(url+tc.query, tc.header)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("Dial: %v, want success", err)
				}
				ws.Close()
				return
			}
			if err == nil {
				ws.Close()
				t.Fatalf("Dial succeeded, want HTTP %d", tc.status)
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Errorf("Dial: %v, want HTTP %d", resp, tc.status)
			}
		})
	}
}

// A client that subscribes, starts a run and never reads: the session waits
// on the connection's write budget, so the server's heap stays bounded
// instead of growing with the run.
func TestSlowReaderBoundedMemory(t *testing.T) {
	_, url := newTestServer(t, Options{WriteBudget: 1 << 20, WriteTimeout: 20 * time.Second})
	c := dial(t, url)
	id := c.open(testScenario, "runtime.duration=600s", "trace.detail=change")
	c.call("subscribe", map[string]any{"session": id, "tables": []any{"queue", "delivery"}, "every_ms": 0})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	b, _ := msgpack.Marshal(map[string]any{"id": 99, "op": "run", "session": id})
	c.raw(b)
	// A 600 s run records ~15 M rows (~0.5 GB); without backpressure the
	// heap would grow by that. With it, the session stalls once the socket
	// buffers and the 1 MiB budget are full.
	var peak uint64
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	const bound = 64 << 20
	if grow := int64(peak) - int64(base); grow > bound {
		t.Errorf("heap grew by %d MiB while the client did not read, want < %d MiB", grow>>20, bound>>20)
	}
	t.Logf("heap base %d MiB, peak %d MiB", base>>20, peak>>20)
}

// A client that reads nothing for many ping intervals (it answers pings
// only when it reads: a notebook computing between requests) keeps its
// connection and its sessions.
func TestSilentClientKeepsItsConnection(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{PingInterval: 20 * time.Millisecond})
	c := dial(t, url)
	id := c.open(testScenario)
	time.Sleep(500 * time.Millisecond) // 25 pings unanswered
	if r := c.call("step", map[string]any{"session": id, "time": "10ms"}); asInt(r["sim_time_ps"]) != 10_000_000_000 {
		t.Errorf("step after a silence: %v", r)
	}
}
