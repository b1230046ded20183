package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// mainArgsEnv makes the test binary run as the ccscope command with the
// arguments it holds (separated by \x1f), so tests can exec the real CLI.
const mainArgsEnv = "CCSCOPE_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"ccscope"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cli runs `ccscope args...` in a child process and returns its stdout.
func cli(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\x1f"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccscope %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// wsClient is the smallest protocol client: call waits for its response,
// dropping pushes.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
	id uint64
}

func (c *wsClient) call(op string, args map[string]any) map[string]any {
	c.t.Helper()
	c.id++
	req := map[string]any{"id": c.id, "op": op}
	for k, v := range args {
		req[k] = v
	}
	b, err := msgpack.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.ws.WriteMessage(websocket.BinaryMessage, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
	for {
		_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Minute))
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.t.Fatalf("%s: read: %v", op, err)
		}
		var m map[string]any
		if err := msgpack.Unmarshal(data, &m); err != nil {
			c.t.Fatalf("%s: undecodable frame: %v", op, err)
		}
		if _, push := m["stream"]; push {
			continue
		}
		if m["ok"] != true {
			c.t.Fatalf("%s(%v): %v", op, args, m["error"])
		}
		res, _ := m["result"].(map[string]any)
		return res
	}
}

// The README promises the same run from the CLI and from the server, and a
// restored checkpoint that continues exactly as the straight run: for every
// built-in scenario (500 ms of it, or all of it when it schedules changes
// later), the digest of `ccscope run --json`, of a server session run to
// the end, and of a session restored from a checkpoint taken at 2/5 of the
// way and run to the end are equal.
func TestDigestsCLIServerRestoreAgree(t *testing.T) {
	u, stop := startServe(t, "--addr", "127.0.0.1:0", "--log-format", "json")
	defer stop()
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer ws.Close()
	ws.SetReadLimit(1 << 30)
	c := &wsClient{t: t, ws: ws}
	c.call("hello", map[string]any{"version": "1.0"})
	for _, b := range config.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			c.t = t
			// 500 ms of the run, or all of it when changes are scheduled
			// later (cut short, the scenario would be invalid).
			raw, err := config.Builtin(b.Name)
			if err != nil {
				t.Fatal(err)
			}
			scn, err := config.Parse(raw, config.WithCCs(cc.Names()))
			if err != nil {
				t.Fatal(err)
			}
			dur := min(scn.Runtime.Duration, 500*sim.Millisecond)
			if len(scn.Changes) > 0 {
				dur = scn.Runtime.Duration
			}
			var sum struct{ Digest string }
			if err := json.Unmarshal(cli(t, "run", b.Name, "--duration", dur.String(), "--json"), &sum); err != nil || sum.Digest == "" {
				t.Fatalf("ccscope run --json: digest %q, %v", sum.Digest, err)
			}
			set := []any{"runtime.duration=" + dur.String()}
			straight := c.call("open", map[string]any{"scenario": b.Name, "set": set})["session"]
			got := c.call("run", map[string]any{"session": straight})["digest"]
			stepped := c.call("open", map[string]any{"scenario": b.Name, "set": set})["session"]
			c.call("step", map[string]any{"session": stepped, "time": (dur * 2 / 5).String()})
			cp := c.call("checkpoint", map[string]any{"session": stepped})["checkpoint"]
			restored := c.call("restore", map[string]any{"checkpoint": cp})["session"]
			again := c.call("run", map[string]any{"session": restored})["digest"]
			if got != sum.Digest || again != sum.Digest {
				t.Errorf("digests: CLI %s, server %v, restored at %v %v; want all equal", sum.Digest, got, dur*2/5, again)
			}
			for _, s := range []any{straight, stepped, restored} {
				c.call("close", map[string]any{"session": s})
			}
		})
	}
}
