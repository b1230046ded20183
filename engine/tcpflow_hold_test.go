package engine

import (
	"fmt"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// A cwnd action taken before the flow's handshake completes is held and
// becomes the connection's initial window, as the initcwnd route option
// (or TCP_BPF_IW) would: the connection coming up does not reset it to
// IW10. The run then equals one whose scenario sets init_cwnd to it; a
// pacing_rate action already survived.
func TestCwndActionBeforeHandshakeIsHeld(t *testing.T) {
	const long = "runtime.duration=2s"
	for _, tc := range []struct {
		name string
		at   sim.Time // the action's time; p-rtr-p's SYN-ACK arrives at 40.009 ms
		cwnd uint32
	}{
		{"before the start", 0, 5},
		{"during the handshake", sim.Time(40 * sim.Millisecond), 5},
		{"larger than IW10", sim.Time(20 * sim.Millisecond), 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := builtinRun(t, "p-rtr-p", long)
			r.RunUntil(tc.at)
			cwnd := tc.cwnd
			if err := r.Act(Action{Flow: "f0", CwndPkts: &cwnd}); err != nil {
				t.Fatalf("Act(cwnd %d) at %v: %v", cwnd, tc.at, err)
			}
			f := r.Flows[0].(*tcpFlow)
			if got := f.snd.Cwnd(); got != cwnd {
				t.Errorf("cwnd just after the action = %d, want %d", got, cwnd)
			}
			// Up at 40.009 ms; the first ACKs of data come an RTT later.
			r.RunUntil(sim.Time(41050 * sim.Microsecond))
			if got := f.snd.Cwnd(); got != cwnd {
				t.Errorf("cwnd once the connection is up = %d, want the %d the action set", got, cwnd)
			}
			if got := f.snd.Stats.SegsSent; got != uint64(cwnd) {
				t.Errorf("initial flight = %d segments, want %d", got, cwnd)
			}
			r.RunToEnd()
			ref := builtinRun(t, "p-rtr-p", long, "flows.f0.tcp.init_cwnd="+itoa(cwnd))
			ref.RunToEnd()
			if got, want := DigestString(r.Sim.Digest()), DigestString(ref.Sim.Digest()); got != want {
				t.Errorf("digest = %s, want %s (the run with init_cwnd %d)", got, want, cwnd)
			}
		})
	}
}

// After the handshake a cwnd action sets snd_cwnd at once, and is not held
// for anything later.
func TestCwndActionAfterHandshakeIsImmediate(t *testing.T) {
	r := builtinRun(t, "p-rtr-p", "runtime.duration=2s")
	r.RunUntil(sim.Time(41 * sim.Millisecond))
	cwnd := uint32(3)
	if err := r.Act(Action{Flow: "f0", CwndPkts: &cwnd}); err != nil {
		t.Fatalf("Act: %v", err)
	}
	f := r.Flows[0].(*tcpFlow)
	if got, sent := f.snd.Cwnd(), f.snd.Stats.SegsSent; got != 3 || sent != 10 {
		t.Errorf("cwnd, segments sent after an action once up = %d, %d; want 3 and IW10's 10", got, sent)
	}
}

func itoa(n uint32) string { return fmt.Sprint(n) }
