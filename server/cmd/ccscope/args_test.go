package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ccscope runs `ccscope args...` in a child process and returns its exit
// code, standard output and standard error.
func ccscope(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ccscope %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// A flag's value is its flag's, not the positional argument, wherever the
// flag stands; a bool flag takes no value; after "--" all is positional.
func TestSplitArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("duration", "", "")
	fs.Int("jobs", 0, "")
	var sets setFlags
	fs.Var(&sets, "set", "")
	fs.Bool("json", false, "")
	for _, tc := range []struct {
		name       string
		args       []string
		pos, flags []string
	}{
		{"value before", []string{"--duration", "1s", "pump"}, []string{"pump"}, []string{"--duration", "1s"}},
		{"value after", []string{"pump", "-duration", "1s"}, []string{"pump"}, []string{"-duration", "1s"}},
		{"Var flag", []string{"--set", "flows.f0.cc=bbr", "p-rtr-p"}, []string{"p-rtr-p"}, []string{"--set", "flows.f0.cc=bbr"}},
		{"negative value", []string{"--jobs", "-3", "pump"}, []string{"pump"}, []string{"--jobs", "-3"}},
		{"inline value", []string{"--duration=1s", "pump"}, []string{"pump"}, []string{"--duration=1s"}},
		{"bool", []string{"--json", "pump", "extra"}, []string{"pump", "extra"}, []string{"--json"}},
		{"unknown flag", []string{"--nope", "pump"}, []string{"pump"}, []string{"--nope"}},
		{"terminator", []string{"--json", "--", "-odd", "--jobs"}, []string{"-odd", "--jobs"}, []string{"--json"}},
		{"value missing", []string{"pump", "--duration"}, []string{"pump"}, []string{"--duration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pos, flags := splitArgs(fs, tc.args)
			if !slices.Equal(pos, tc.pos) || !slices.Equal(flags, tc.flags) {
				t.Errorf("splitArgs(%q) = %q, %q; want %q, %q", tc.args, pos, flags, tc.pos, tc.flags)
			}
		})
	}
}

// Every command that takes a positional argument finds it after a flag
// with a value, and refuses one too many by name.
func TestCommandArguments(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.parquet")
	if code, _, stderr := ccscope(t, "run", "--duration", "100ms", "--set", "flows.f0.cc=bbr", "--trace", trace, "p-rtr-p"); code != 0 {
		t.Fatalf("run with its flags first: exit %d, %s", code, stderr)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"report", "-o", filepath.Join(t.TempDir(), "r.html"), trace}, 0, "report of"},
		{[]string{"sweep", "--duration", "100ms", "-o", filepath.Join(t.TempDir(), "s.parquet"), "--progress", "none", "pump"}, 0, "1 runs"},
		{[]string{"run", "pump", "extra"}, 2, `ccscope: run: unexpected argument "extra"`},
		{[]string{"run", "--json", "pump", "false"}, 2, `ccscope: run: unexpected argument "false"`},
		{[]string{"run", "--duration", "1s"}, 2, "ccscope: run: missing SCENARIO"},
		{[]string{"emulate", "pump", "extra"}, 2, `ccscope: emulate: unexpected argument "extra"`},
		{[]string{"sweep", "pump", "extra"}, 2, `ccscope: sweep: unexpected argument "extra"`},
		{[]string{"report", trace, "extra"}, 2, `ccscope: report: unexpected argument "extra"`},
		{[]string{"calibrate", "c.csv", "extra"}, 2, `ccscope: calibrate: unexpected argument "extra"`},
		{[]string{"scenarios", "extra"}, 2, `ccscope: scenarios: unexpected argument "extra"`},
		{[]string{"scenarios", "--show", "pump", "extra"}, 2, `ccscope: scenarios: unexpected argument "extra"`},
		{[]string{"version", "extra"}, 2, `ccscope: version: unexpected argument "extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := ccscope(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("ccscope %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.stderr)
			}
		})
	}
}
