package main

import (
	"bufio"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
)

// urlLine is the line a client parses (proto/README.md, "Connecting").
var urlLine = regexp.MustCompile(`^ccscope serving at (ws://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32}|[^&\s]+))$`)

// startServe runs serve with args and returns the printed URL and a stop
// function that waits for the exit status.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	rc := make(chan int, 1)
	go func() { rc <- serve(args, pw, io.Discard, stop); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	m := urlLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
	if m == nil {
		t.Fatalf("serve printed %q, want %q", line, urlLine)
	}
	if m[2] == "0" {
		t.Errorf("printed port 0, want the real port")
	}
	return m[1], func() int {
		close(stop)
		select {
		case c := <-rc:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("serve did not stop")
			return -1
		}
	}
}

func TestServeEphemeralPortAndToken(t *testing.T) {
	u, stop := startServe(t, "--addr", "127.0.0.1:0", "--log-format", "json")
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("Dial(%s): %v", u, err)
	}
	b, _ := msgpack.Marshal(map[string]any{"id": 1, "op": "hello", "version": "1.0"})
	if err := ws.WriteMessage(websocket.BinaryMessage, b); err != nil {
		t.Fatal(err)
	}
	_, resp, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(resp, &m); err != nil || m["ok"] != true {
		t.Errorf("hello response %v (%v), want ok", m, err)
	}
	parsed, _ := url.Parse(u)
	parsed.RawQuery = ""
	if _, _, err := websocket.DefaultDialer.Dial(parsed.String(), nil); err == nil {
		t.Errorf("Dial without token succeeded")
	}
	if code := stop(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	// Shutdown closed the connection with 1001.
	if _, _, err := ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("after shutdown read = %v, want close 1001", err)
	}
}

func TestServeGivenToken(t *testing.T) {
	u, stop := startServe(t, "--addr", "127.0.0.1:0", "--token", "s3cret")
	if !strings.HasSuffix(u, "?token=s3cret") {
		t.Errorf("URL %s, want token s3cret", u)
	}
	stop()
}

func TestServeRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no token off loopback", []string{"--addr", "0.0.0.0:0", "--insecure-no-token"}},
		{"token and no token", []string{"--addr", "127.0.0.1:0", "--token", "x", "--insecure-no-token"}},
		{"bad log format", []string{"--log-format", "xml"}},
		{"bad addr", []string{"--addr", "nonsense"}},
		{"stray argument", []string{"extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if code := serve(tc.args, &out, io.Discard, nil); code != 2 {
				t.Errorf("serve(%v) = %d, want 2", tc.args, code)
			}
			if out.Len() != 0 {
				t.Errorf("serve(%v) printed %q on stdout, want nothing", tc.args, out.String())
			}
		})
	}
}

func TestServeLoopbackWithoutToken(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	rc := make(chan int, 1)
	go func() {
		rc <- serve([]string{"--addr", "127.0.0.1:0", "--insecure-no-token"}, pw, io.Discard, stop)
		pw.Close()
	}()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	u := strings.TrimPrefix(strings.TrimSpace(line), "ccscope serving at ")
	if strings.Contains(u, "token") {
		t.Errorf("URL %q has a token, want none", u)
	}
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("Dial without token: %v", err)
	}
	ws.Close()
	close(stop)
	<-rc
}

// With --unix the server listens on a Unix-domain socket, owner-only, and
// prints its ws+unix URL; a websocket client dialling the socket gets the
// same protocol, token included; the socket is gone after shutdown.
func TestServeUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccscope.sock")
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	rc := make(chan int, 1)
	go func() {
		rc <- serve([]string{"--unix", path, "--log-format", "json"}, pw, io.Discard, stop)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`^ccscope serving at ws\+unix://(/\S+)\?token=([0-9a-f]{32})\n$`).FindStringSubmatch(line)
	if m == nil || m[1] != path {
		t.Fatalf("serve printed %q, want ws+unix://%s?token=...", line, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stat %s = %v, %v; want a socket with mode 0600", path, fi, err)
	}
	d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return net.Dial("unix", path) }}
	if _, _, err := d.Dial("ws://localhost/", nil); err == nil {
		t.Errorf("Dial without token succeeded")
	}
	ws, _, err := d.Dial("ws://localhost/?token="+m[2], nil)
	if err != nil {
		t.Fatalf("Dial over the socket: %v", err)
	}
	b, _ := msgpack.Marshal(map[string]any{"id": 1, "op": "hello", "version": "1.0"})
	if err := ws.WriteMessage(websocket.BinaryMessage, b); err != nil {
		t.Fatal(err)
	}
	_, resp, err := ws.ReadMessage()
	var r map[string]any
	if err != nil || msgpack.Unmarshal(resp, &r) != nil || r["ok"] != true {
		t.Errorf("hello over the socket = %v (%v), want ok", r, err)
	}
	close(stop)
	select {
	case code := <-rc:
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket after shutdown: %v, want it removed", err)
	}
}
