//go:build linux

package emulate

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/sim"
)

// hostProbeEnv makes the test binary run as a host probe instead of the
// tests (TestMain).
const hostProbeEnv = "CCSCOPE_TEST_HOST_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(hostProbeEnv) != "" {
		os.Exit(hostProbe())
	}
	os.Exit(m.Run())
}

// hostProbe wakes a thread set up as the relay's (locked, SCHED_FIFO
// priority 10, 1 ns timer slack, raw epoll sleeps) every millisecond until
// its standard input closes, then prints the latest of its wakeups, in
// nanoseconds. It runs in its own process so that nothing of the tested
// process's Go runtime (a wait for a P, a stop of the world) reaches it:
// what it measures is the machine's own stalls.
func hostProbe() int {
	var stop atomic.Bool
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	runtime.LockOSThread() // never unlocked: the thread keeps its real-time class
	setRealtimePrio(10)
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var evs [1]syscall.EpollEvent
	var worst time.Duration
	for !stop.Load() {
		due := time.Now().Add(time.Millisecond)
		if err := epollWait(ep, evs[:], sim.Millisecond); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		worst = max(worst, time.Since(due))
	}
	fmt.Println(worst.Nanoseconds())
	return 0
}

// hostStall runs run while a host probe (hostProbe) watches, and returns
// the probe's latest wakeup: how long this machine stalled a real-time
// thread meanwhile, whatever our code did.
func hostStall(t *testing.T, run func()) sim.Duration {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), hostProbeEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run()
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("host probe: %v: %s", err, out.String())
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	if err != nil {
		t.Fatalf("host probe printed %q", out.String())
	}
	return sim.Duration(ns * 1000)
}
