package server

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
)

const testToken = "test-token"

// newTestServer starts a server on 127.0.0.1 behind httptest and returns its
// ws URL (without the token).
func newTestServer(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	if opts.Token == "" && !opts.InsecureNoToken {
		opts.Token = testToken
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/"
}

// client is a minimal protocol client: call sends a request and reads until
// its response, keeping the pushes that arrive before it.
type client struct {
	t      testing.TB
	ws     *websocket.Conn
	id     uint64
	pushes []map[string]any
	buf    bytes.Buffer  // the frame being read, reused
	wait   time.Duration // read deadline per frame; default 30 s
}

func dial(t testing.TB, url string) *client {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(url+"?token="+testToken, nil)
	if err != nil {
		t.Fatalf("Dial: %v (response %v)", err, resp)
	}
	ws.SetReadLimit(1 << 30)
	t.Cleanup(func() { ws.Close() })
	return &client{t: t, ws: ws}
}

// raw sends a frame as is.
func (c *client) raw(frame []byte) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, frame); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one frame.
func (c *client) next() map[string]any {
	c.t.Helper()
	wait := 30 * time.Second
	if c.wait > 0 {
		wait = c.wait
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	_, rd, err := c.ws.NextReader()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(rd); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	v, err := decodeValue(c.buf.Bytes())
	if err != nil {
		c.t.Fatalf("server sent undecodable frame: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.t.Fatalf("server sent %s, want a map", typeName(v))
	}
	return m
}

// send sends a request and returns its id.
func (c *client) send(op string, args map[string]any) uint64 {
	c.t.Helper()
	c.id++
	m := map[string]any{"id": c.id, "op": op}
	for k, v := range args {
		m[k] = v
	}
	b, err := msgpack.Marshal(m)
	if err != nil {
		c.t.Fatalf("marshal: %v", err)
	}
	c.raw(b)
	return c.id
}

// await reads until the response to id, keeping pushes.
func (c *client) await(id uint64) map[string]any {
	c.t.Helper()
	for {
		m := c.next()
		if _, ok := m["stream"]; ok {
			c.pushes = append(c.pushes, m)
			continue
		}
		if got, _ := m["id"].(int64); uint64(got) == id {
			return m
		}
		c.t.Fatalf("response for id %v while waiting for %d: %v", m["id"], id, m)
	}
}

// call makes a request that must succeed and returns its result.
func (c *client) call(op string, args map[string]any) map[string]any {
	c.t.Helper()
	r := c.await(c.send(op, args))
	if r["ok"] != true {
		c.t.Fatalf("%s(%v) failed: %v", op, args, r["error"])
	}
	res, _ := r["result"].(map[string]any)
	return res
}

// fail makes a request that must fail and returns its error map.
func (c *client) fail(op string, args map[string]any) map[string]any {
	c.t.Helper()
	r := c.await(c.send(op, args))
	if r["ok"] != false {
		c.t.Fatalf("%s(%v) succeeded, want an error: %v", op, args, r["result"])
	}
	e, _ := r["error"].(map[string]any)
	return e
}

// open opens a built-in scenario with overrides and returns the session id.
func (c *client) open(scenario string, set ...string) string {
	c.t.Helper()
	l := make([]any, len(set))
	for i, s := range set {
		l[i] = s
	}
	return c.call("open", map[string]any{"scenario": scenario, "set": l})["session"].(string)
}

func asInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	}
	return -1
}
