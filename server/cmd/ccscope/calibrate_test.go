package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
)

// A capture whose flow never filled the buffer (a simulated CUBIC flow held
// by the window of a 6 MiB receive buffer on 200 Mbps, 122 ms, a 2-BDP
// FIFO, captured at the sender's access link: its path is known)
// calibrates to a replay that drops nothing either. Sized at the queue the flow built (990 KB of the
// 6.1 MB buffer), the replay retransmitted 886 segments and lost 27 % of
// the goodput.
func TestCalibrateACaptureThatNeverFilledTheBuffer(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "s.pcap")
	if code, _, stderr := ccscope(t, "run", "p-rtr-p", "--duration", "10s", "--set", "links.bottleneck.rate=200Mbps",
		"--set", "links.bottleneck.delay=60ms", "--set", "links.bottleneck.ab.qdisc.limit=2BDP",
		"--set", "flows.f0.tcp.rcvbuf_max=6MiB", "--pcap", pcap+":access:both"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := ccscope(t, "calibrate", pcap, "--json")
	if code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, stderr)
	}
	var rep struct {
		Path struct {
			NotReached bool  `json:"buffer_not_reached"`
			RwndMax    int64 `json:"rwnd_max_bytes"`
		} `json:"path"`
		Sim, Live, Residual struct {
			Goodput     *float64 `json:"goodput_mbps"`
			Retransmits *float64 `json:"retransmits"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if !rep.Path.NotReached || rep.Path.RwndMax == 0 {
		t.Fatalf("path %+v: want the buffer not reached and the receiver's window known", rep.Path)
	}
	if *rep.Live.Retransmits != 0 || *rep.Sim.Retransmits != 0 {
		t.Errorf("retransmissions: capture %v, replay %v; want none in either", *rep.Live.Retransmits, *rep.Sim.Retransmits)
	}
	if r := *rep.Residual.Goodput; math.Abs(r) > 0.05 {
		t.Errorf("goodput residual %.1f %% (replay %.1f, capture %.1f Mbps), want within 5 %%", 100*r, *rep.Sim.Goodput, *rep.Live.Goodput)
	}
}
