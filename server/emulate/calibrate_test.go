//go:build linux

package emulate

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/server/calibrate"
)

// calibPath is the recovery test's path, deliberately not the clean path's
// figures: 30 Mbps, 30 ms base RTT, a 120 KB FIFO; CUBIC paced, as on the
// clean path.
const calibPath = `{
  "name": "emu-calib",
  "runtime": {"seed": 1, "duration": "5s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "bottleneck", "a": "h1", "b": "h2", "rate": "30Mbps", "delay": "15ms",
     "ab": {"qdisc": {"kind": "fifo", "limit": "120KB"}}}
  ],
  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic", "tcp": {"pacing": true}}]
}`

// TestCalibrateRecovers captures a CUBIC flow on a path whose truth is
// known, in all three forms calibrate reads — the TCP_INFO CSV and pcap
// the emulation writes, and `ss -tin` logged in the sender's namespace
// while it runs — and checks that calibrate recovers the rate within
// 5%, the propagation floor within 1 ms and the buffer within 20%. The
// full calibration is then held to the agreement WarpSIM reports for an
// admitted trial (../shared/reference/warpsim-paper.txt, §8.2 "Verify":
// the stock CCs in the simulator "reach 10 MB and 100 MB within 6% of
// live, and their goodput lands within 10%"), tighter than §8.1's Compare
// step asks ("ideally within 10-20%"). This 5 s flow at 30 Mbps carries
// about 18 MB, so the 10 MB milestone is held to 6% and the 100 MB one,
// never reached, not at all.
func TestCalibrateRecovers(t *testing.T) {
	requireEmulation(t)
	prep, err := engine.Prepare([]byte(calibPath), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A capture taken while the relay runs late is not quite the path's:
	// in one CI run on a busy host (the other emulation tests' relays late
	// in every try), the pcap held 2,110 RTT samples rather than the
	// 3,060 of a quiet host and put the buffer at 95 KB rather than 117 KB.
	// So the capture is taken again when the relay ran late, as runOnTime
	// does, and the least late of three is judged.
	logs := map[*Result]ssCapture{}
	res, _, err := leastLate(func() (*Result, error) {
		res, c, err := captureCalib(prep)
		logs[res] = c
		return res, err
	}, 2, lateAgain(t, prep.Scenario.Name))
	if err != nil {
		t.Fatal(err)
	}
	ssRun := logs[res]
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "tcpinfo.csv")
	var buf bytes.Buffer
	if err := calibrate.WriteCSV(&buf, res.Capture); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{csvPath: buf.Bytes(), filepath.Join(dir, "sender.pcap"): res.Pcap,
		filepath.Join(dir, "ss.log"): ssRun.log}
	const rate, floorUs, buffer = 30e6, 30000, 120000
	for path, content := range files {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		ss, format, err := calibrate.ReadCapture(path, "")
		if err != nil {
			t.Errorf("%s: %v (ss stderr: %q)", filepath.Base(path), err, ssRun.stderr)
			continue
		}
		p, err := calibrate.Deduce(ss)
		if err != nil {
			t.Errorf("%s: %v", format, err)
			continue
		}
		t.Logf("%s (%d samples): rate %.3f Mbps, floor %.3f ms, buffer %d B, initial window %d",
			format, len(ss), float64(p.RateBps)/1e6, float64(p.FloorUs)/1e3, p.BufferBytes, p.InitCwnd)
		if d := float64(p.RateBps)/rate - 1; d < -0.05 || d > 0.05 {
			t.Errorf("%s: rate %d bps, want 30 Mbps ± 5%%", format, p.RateBps)
		}
		if d := p.FloorUs - floorUs; d < -1000 || d > 1000 {
			t.Errorf("%s: floor %d µs, want 30 ms ± 1 ms", format, p.FloorUs)
		}
		if d := float64(p.BufferBytes)/buffer - 1; d < -0.2 || d > 0.2 {
			t.Errorf("%s: buffer %d B, want 120 KB ± 20%%", format, p.BufferBytes)
		}
	}
	if t.Failed() {
		os.WriteFile("/tmp/emu-calib-failed.csv", buf.Bytes(), 0o644)
	}
	// The full calibration runs the deduced scenario and lines it up.
	ss, format, err := calibrate.ReadCapture(csvPath, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := calibrate.Calibrate(ss, format, "cubic")
	if err != nil {
		t.Fatal(err)
	}
	// WarpSIM §8.2's admission bar: milestones within 6% of live, goodput
	// within 10%.
	for _, c := range []struct {
		name string
		got  *float64
		band float64
	}{
		{"time to 10 MB", rep.Residual.T10MBMs, 0.06},
		{"goodput", rep.Residual.GoodputMbps, 0.10},
	} {
		if c.got == nil {
			t.Errorf("sim vs live %s residual: none (a side without it), want within %.0f%% (WarpSIM §8.2's admission bar)", c.name, 100*c.band)
			continue
		}
		if math.Abs(*c.got) > c.band {
			t.Errorf("sim vs live %s residual = %+.3f, want within ±%.2f (WarpSIM §8.2's admission bar)", c.name, *c.got, c.band)
		}
	}
}

// captureCalib runs calibPath with the TCP_INFO capture and the pcap on,
// and logs `ss -tin` in the sender's namespace (node 0) while it runs, the
// way a user logs a live host: one shell in the namespace running date and
// ss every 10 ms.
func captureCalib(prep *engine.Prepared) (*Result, ssCapture, error) {
	ns := NamespacePrefix + strconv.Itoa(os.Getpid()) + "-0"
	var ssLog, ssErr bytes.Buffer
	polled := make(chan *exec.Cmd, 1)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat("/var/run/netns/" + ns); err == nil {
				break
			}
		}
		// `ip netns add` creates the file before it mounts the namespace
		// on it; give the setup a moment.
		time.Sleep(100 * time.Millisecond)
		cmd := exec.Command("ip", "netns", "exec", ns, "sh", "-c",
			"while :; do date +%s.%N; ss -tin dst 10.201.0.2; sleep 0.01; done")
		cmd.Stdout = &ssLog
		cmd.Stderr = &ssErr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			polled <- nil
			return
		}
		polled <- cmd
	}()
	res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{Capture: true, Pcap: true})
	if cmd := <-polled; cmd != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the shell and its ss, by their group
		cmd.Wait()
	}
	return res, ssCapture{ssLog.Bytes(), ssErr.String()}, err
}

// ssCapture is what `ss -tin` wrote while a run went on.
type ssCapture struct {
	log    []byte
	stderr string
}
