package main

import (
	"bytes"
	"errors"
	"flag"
	"math"
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
// with a value, and refuses one too many by name, and a flag given empty.
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
		{[]string{"scenarios", "--cc-params", "cubic"}, 0, ""},
		{[]string{"scenarios", "--cc-params", "cubbic"}, 2, `ccscope: scenarios: --cc-params: cc: unknown algorithm "cubbic"`},
		{[]string{"scenarios", "--ccs", "--cc-params", "cubic"}, 2, "ccscope: scenarios: give one of --show, --ccs and --cc-params"},
		{[]string{"version", "extra"}, 2, `ccscope: version: unexpected argument "extra"`},
		// An empty value, as an unset $OUT gives, is not taken for no flag.
		{[]string{"run", "pump", "--trace", ""}, 2, "ccscope: run: --trace is empty; give FILE, or leave the flag out"},
		{[]string{"run", "pump", "--report="}, 2, "ccscope: run: --report is empty; give FILE.html, or leave the flag out"},
		{[]string{"run", "pump", "--pcap", ""}, 2, "ccscope: run: --pcap is empty; give FILE[:link[:dir]], or leave the flag out"},
		{[]string{"sweep", "pump", "-o", ""}, 2, "ccscope: sweep: -o is empty; give FILE, or leave the flag out"},
		{[]string{"report", trace, "-o", ""}, 2, "ccscope: report: -o is empty; give FILE.html, or leave the flag out"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := ccscope(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("ccscope %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.stderr)
			}
		})
	}
}

// --seed is decimal whatever its leading zeros: 007 is 7 and 010 is 10
// (flag.Uint64 read 010 as 8, and JSON refused 007).
func TestSeedFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"7", 7, false}, {"007", 7, false}, {"010", 10, false}, {"0", 0, false},
		{"18446744073709551615", math.MaxUint64, false},
		{"18446744073709551616", 0, true}, {"0x10", 0, true}, {"-1", 0, true}, {"1e3", 0, true}, {"", 0, true},
	} {
		var s seedFlag
		err := s.Set(tc.in)
		if (err != nil) != tc.err || s.seed != tc.want {
			t.Errorf("seedFlag.Set(%q) = %d, %v; want %d (error %v)", tc.in, s.seed, err, tc.want, tc.err)
		}
	}
	if code, stdout, stderr := ccscope(t, "run", "pump", "--duration", "10ms", "--seed", "007"); code != 0 || !strings.Contains(stdout, "seed 7 ") {
		t.Errorf("run --seed 007: exit %d, %s%s; want seed 7", code, stdout, stderr)
	}
	code, zeros, _ := runLeoPath(t, "--duration", "60s", "--seed", "010")
	_, ten, _ := runLeoPath(t, "--duration", "60s", "--seed", "10")
	if _, eight, _ := runLeoPath(t, "--duration", "60s", "--seed", "8"); code != 0 || !bytes.Equal(zeros, ten) || bytes.Equal(zeros, eight) {
		t.Errorf("leo-path --seed 010: exit %d, or a path other than --seed 10's", code)
	}
}

// A flag out of its range, or with nothing to act on, is refused by name
// before anything runs.
func TestFlagsRefusedBeforeAnyRun(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.parquet")
	if code, _, stderr := ccscope(t, "run", "pump", "--duration", "10ms", "--trace", trace); code != 0 {
		t.Fatalf("run --trace: exit %d, %s", code, stderr)
	}
	catalog := filepath.Join(dir, "c.parquet")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "pump", "--jobs", "-3"}, "--jobs -3: want 1 or more"},
		{[]string{"sweep", "pump", "--duration", "10"}, `--duration: "10" has no unit; expected e.g. "40ms"`},
		{[]string{"sweep", "pump", "--metric", "nope"}, `--metric "nope": not a numeric catalog column`},
		{[]string{"sweep", "pump", "--metric", "nope", "--report-dir", dir}, `--metric "nope": not a numeric catalog column`},
		{[]string{"sweep", "pump", "--metric", "rtt_p50_ps"}, "--metric: needs --report-dir DIR"},
		{[]string{"sweep", "pump", "--run-reports"}, "--run-reports: needs --report-dir DIR"},
		{[]string{"report", trace, "--buckets", "0"}, "--buckets 0: want 1 to 100000"},
		{[]string{"report", trace, "--buckets", "100001"}, "--buckets 100001: want 1 to 100000"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := ccscope(t, append(tc.args, "-o", catalog)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("ccscope %s: exit %d, stderr %q; want a failure saying %q", strings.Join(tc.args, " "), code, stderr, tc.want)
			}
			if _, err := os.Stat(catalog); err == nil {
				t.Errorf("ccscope %s wrote %s", strings.Join(tc.args, " "), catalog)
			}
		})
	}
}

// --duration needs a unit: "10" typed at a prompt means seconds to its
// writer, and as runtime.duration it would run 10 ps.
func TestDurationFlagNeedsAUnit(t *testing.T) {
	for _, cmd := range []string{"run", "emulate", "compare"} {
		for v, want := range map[string]string{"10": `--duration: "10" has no unit; expected e.g. "40ms"`,
			"10 parsecs": `--duration: "10 parsecs" has unknown unit "parsecs"`} {
			code, stdout, stderr := ccscope(t, cmd, "pump", "--duration", v)
			if code == 0 || !strings.Contains(stderr, want) || stdout != "" {
				t.Errorf("ccscope %s pump --duration %q: exit %d, stderr %q; want a failure saying %q", cmd, v, code, stderr, want)
			}
		}
	}
}
