package main

import (
	"strings"
	"testing"
)

// A limit flag that is zero or negative is refused, naming the flag,
// rather than silently replaced by its default; --max-decoded-bytes 0 is
// its documented default (4 × --max-message-bytes).
func TestServeRefusesNonPositiveLimits(t *testing.T) {
	for _, args := range [][]string{
		{"--max-sessions", "-1"}, {"--max-sessions", "0"},
		{"--max-sessions-per-conn", "0"},
		{"--max-events", "0"},
		{"--max-message-bytes", "0"}, {"--max-message-bytes", "-5"},
		{"--idle-timeout", "-5s"}, {"--idle-timeout", "0s"},
		{"--max-nodes", "0"}, {"--max-links", "-2"}, {"--max-flows", "0"}, {"--max-changes", "-1"},
		{"--max-session-bytes", "0"},
		{"--max-builds", "0"},
		{"--max-replay-time", "-30s"},
		{"--max-decoded-bytes", "-1"},
	} {
		var stdout, stderr strings.Builder
		all := append([]string{"--addr", "127.0.0.1:0"}, args...)
		stop := make(chan struct{})
		close(stop) // a server that starts stops at once
		if code := serve(all, &stdout, &stderr, stop); code != 2 {
			t.Errorf("serve(%v) = %d, want 2", args, code)
		}
		want := args[0] + " " + args[1] + ": want a positive number"
		if strings.HasSuffix(args[1], "s") {
			want = args[0] + " " + args[1] + ": want a positive duration"
		}
		if args[0] == "--max-decoded-bytes" {
			want += ", or 0 for the default"
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("serve(%v) said %q, want a message saying %q", args, stderr.String(), want)
		}
		if stdout.Len() != 0 {
			t.Errorf("serve(%v) printed %q on stdout, want nothing", args, stdout.String())
		}
	}
}

// --max-decoded-bytes 0 is accepted: it means 4 × --max-message-bytes.
func TestServeMaxDecodedZeroIsDefault(t *testing.T) {
	_, stop := startServe(t, "--addr", "127.0.0.1:0", "--max-decoded-bytes", "0")
	if code := stop(); code != 0 {
		t.Errorf("serve --max-decoded-bytes 0 exited %d, want 0", code)
	}
}
