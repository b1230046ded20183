package emulate

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// threePaths is three disjoint 20 Mbps paths of 40 ms base RTT with 1-BDP
// FIFOs: a BBR flow between two CUBIC flows, so the tracer's program reads
// struct bbr after struct bictcp and struct bictcp after struct bbr.
const threePaths = `{
  "name": "emu-cc-state",
  "runtime": {"seed": 1, "duration": "3s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"},
            {"id": "h3", "kind": "endpoint"}, {"id": "h4", "kind": "endpoint"},
            {"id": "h5", "kind": "endpoint"}, {"id": "h6", "kind": "endpoint"}],
  "links": [
    {"id": "a", "a": "h1", "b": "h2", "rate": "20Mbps", "delay": "20ms", "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"}}},
    {"id": "b", "a": "h3", "b": "h4", "rate": "20Mbps", "delay": "20ms", "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"}}},
    {"id": "c", "a": "h5", "b": "h6", "rate": "20Mbps", "delay": "20ms", "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"}}}
  ],
  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic", "tcp": {"hz": 250}},
            {"id": "f1", "src": "h3", "dst": "h4", "cc": "bbr", "tcp": {"hz": 250}},
            {"id": "f2", "src": "h5", "dst": "h6", "cc": "cubic", "tcp": {"hz": 250}}]
}`

// requireBpftrace installs bpftrace where apt can (root), and skips, loudly,
// where the kernel cannot run it: no BTF.
func requireBpftrace(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("CC-STATE TEST NOT RUN: the kernel has no BTF (/sys/kernel/btf/vmlinux): %v", err)
	}
	if _, err := exec.LookPath("bpftrace"); err == nil {
		return
	}
	install := func() error {
		// Other packages' tests may hold dpkg's lock installing theirs.
		cmd := exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", "bpftrace")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.Run()
	}
	if install() != nil {
		exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=300", "update").Run()
		if err := install(); err != nil {
			t.Fatalf("bpftrace is missing and apt-get install bpftrace failed: %v", err)
		}
	}
}

// The kernel's CC state, read by bpftrace, follows the kernel's own rules:
// BBR leaves STARTUP (bbr_check_full_bw_reached) only after three rounds
// without 25 % growth, paces STARTUP at bbr_high_gain (739/256), counts
// packet-timed rounds no shorter than the path's round trip from the first
// ACK of data on (two round trips into the run: the rows are on the run's
// clock), and sees a min_rtt of the path's 40 ms; CUBIC's delay_min is that
// round trip too.
func TestCCStateFromKernel(t *testing.T) {
	requireEmulation(t)
	requireBpftrace(t)
	prep, err := engine.Prepare([]byte(threePaths), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A BBR connection to port 5201 outside the run's namespaces, as
	// another emulation's or a notebook's beside the tests: its state must
	// not reach the run's rows.
	stop := foreignBBR(t, "127.0.0.1:5202") // f1's port
	defer stop()
	res, _, err := leastLate(func() (*Result, error) {
		return Run(context.Background(), prep.Scenario, prep.Hash, Options{CCState: true})
	}, 2, lateAgain(t, prep.Scenario.Name))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	sig := &res.Trace.SignalT
	for i := 1; i < sig.Len(); i++ {
		if sig.T[i] < sig.T[i-1] {
			t.Fatalf("signals out of time order at row %d: %d after %d", i, sig.T[i], sig.T[i-1])
		}
	}
	series := func(flow int32, name string) (ts []sim.Time, vs []float64) {
		id := res.Trace.SignalIndex(name)
		for i := range sig.Len() {
			if sig.Flow[i] == flow && sig.Signal[i] == id {
				ts, vs = append(ts, sim.Time(sig.T[i])), append(vs, sig.Value[i])
			}
		}
		return ts, vs
	}
	valueAt := func(ts []sim.Time, vs []float64, at sim.Time) float64 {
		v := -1.0
		for i, x := range ts {
			if x <= at {
				v = vs[i]
			}
		}
		return v
	}
	const rtt = 40 * sim.Millisecond

	modeT, modes := series(1, "mode")
	if len(modes) < 3 || modes[0] != 0 || modes[1] != 1 || modes[2] != 2 {
		t.Fatalf("BBR's modes %v, want STARTUP (0), DRAIN (1), PROBE_BW (2) in turn", modes)
	}
	cntT, cnts := series(1, "full_bw_cnt")
	if c := valueAt(cntT, cnts, modeT[1]); c != 3 {
		t.Errorf("BBR left STARTUP at %v with full_bw_cnt %v, want 3", modeT[1], c)
	}
	gainT, gains := series(1, "pacing_gain")
	if g := valueAt(gainT, gains, modeT[1]-1); g != 739.0/256 {
		t.Errorf("pacing_gain in STARTUP = %v, want bbr_high_gain 739/256", g)
	}
	roundT, rounds := series(1, "rtt_cnt")
	// The first row is the state before the first ACK of data (rtt_cnt 0).
	for len(rounds) > 0 && rounds[0] == 0 {
		roundT, rounds = roundT[1:], rounds[1:]
	}
	if len(rounds) < 20 {
		t.Fatalf("%d rounds in 3 s of a 40 ms path", len(rounds))
	}
	// The first row comes with the first ACK of data: the handshake's
	// round trip and the first segment's, on the run's clock.
	if at := sim.Duration(roundT[0]); at < 2*rtt-5*sim.Millisecond || at > 2*rtt+20*sim.Millisecond {
		t.Errorf("first round counted at %v, want about two round trips (80 ms) into the run", at)
	}
	// A round ends on an ACK the relay delivered, so one the relay held
	// late (its lateness, at most MaxPs; the runs' p99 is bounded by
	// leastLate) shortens the round after it by as much: on a machine
	// busy with other tests a round once came 34 ms after the one before.
	late := sim.Duration(res.Summary.Lateness.MaxPs)
	t.Logf("relay lateness max %v", late)
	for i := 1; i < len(rounds); i++ {
		if rounds[i] != rounds[i-1]+1 || roundT[i].Sub(roundT[i-1]) < rtt*9/10-late {
			t.Fatalf("round %v at %v after round %v at %v: want one more, a round trip (40 ms) or more later, less the relay's lateness (max %v)",
				rounds[i], roundT[i], rounds[i-1], roundT[i-1], late)
		}
	}
	for _, c := range []struct {
		flow int32
		name string
	}{{1, "min_rtt"}, {0, "delay_min"}, {2, "delay_min"}} {
		_, vs := series(c.flow, c.name)
		if len(vs) == 0 {
			t.Fatalf("flow %d: no %s", c.flow, c.name)
		}
		if us := vs[len(vs)-1]; us < 40000 || us > 42000 {
			t.Errorf("flow %d: %s = %v µs, want the path's 40 ms round trip (up to 2 ms of serialisation and stack)", c.flow, c.name, us)
		}
	}
	for _, flow := range []int32{0, 2} {
		if _, cnt := series(flow, "cnt"); len(cnt) == 0 {
			t.Errorf("flow %d: no CUBIC cnt rows", flow)
		}
	}
}

// Without bpftrace the run stops before it starts and says what is
// missing; flows whose CC keeps no state readable here need no tracer.
func TestCCStateNeedsBpftrace(t *testing.T) {
	bbr := &eflow{cfg: config.Flow{ID: "f0", Params: &config.Params{CC: "bbr"}}, port: basePort}
	reno := &eflow{cfg: config.Flow{ID: "f1", Params: &config.Params{CC: "reno"}}, port: basePort + 1, idx: 1}
	if tr, err := startCCTracer(context.Background(), []*eflow{reno}); tr != nil || err != nil {
		t.Errorf("Reno alone: tracer %v, error %v; want neither", tr, err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err := startCCTracer(context.Background(), []*eflow{bbr, reno})
	if err == nil || !strings.Contains(err.Error(), "cc_state: needs bpftrace") {
		t.Errorf("without bpftrace: %v, want an error naming it", err)
	}
}

// foreignBBR keeps a BBR connection to addr busy in this process's own
// namespace until stop is called.
func foreignBBR(t *testing.T, addr string) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatalf("a foreign listener on %s: %v", addr, err)
	}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptString(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CONGESTION, "bbr")
		})
		return errors.Join(err, serr)
	}}
	c, err := d.Dial("tcp4", addr)
	if err != nil {
		ln.Close()
		t.Fatalf("a foreign BBR connection to %s: %v", addr, err)
	}
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := c.Write(buf); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() { close(done); c.Close(); ln.Close() }
}
