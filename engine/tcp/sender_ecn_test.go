package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// markSegs marks the first transmission of the given data segments CE.
func markSegs(segs ...uint64) func(p *packet.Packet) bool {
	return func(p *packet.Packet) bool {
		for _, n := range segs {
			if p.Seq == seqOfSeg(n) {
				return true
			}
		}
		return false
	}
}

// Classic ECN (RFC 3168, tcp_enter_cwr): one CE mark makes the receiver echo
// ECE until it sees CWR; the sender reduces once — ssthresh = cwnd/2 for
// Reno, reached through PRR in the CWR state — sets CWR on its next new
// segment, and retransmits nothing. Marks within the same window cause no
// second reduction.
func TestClassicECNReducesOncePerWindow(t *testing.T) {
	opts := shLinuxOpts()
	opts.ECN = true
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 2 * units.MB, opts: opts, echo: EchoClassic}
	c := h.build(t)
	c.fwd.ce = markSegs(300, 305)
	var prior, ss uint32
	sawCWR := false
	for c.s.Now() < sim.Time(5*sim.Second) && c.s.Step(1) > 0 {
		if c.snd.st.CA == cc.CACWR && !sawCWR {
			sawCWR = true
			prior, ss = c.snd.st.PriorCwndPkts, c.snd.st.SSThreshPkts
		}
	}
	if !c.snd.ecnOK || c.snd.accECN {
		t.Fatalf("ecn_ok, accecn = %v, %v; want true, false", c.snd.ecnOK, c.snd.accECN)
	}
	if !sawCWR {
		t.Fatalf("never entered CWR")
	}
	if ss != max(prior/2, 2) {
		t.Errorf("ssthresh = %d, want prior cwnd %d / 2", ss, prior)
	}
	cwrs := 0
	for _, x := range c.fwd.log {
		if x.flags&packet.CWR != 0 && x.flags&packet.SYN == 0 {
			cwrs++
		}
	}
	if cwrs != 1 {
		t.Errorf("segments with CWR = %d, want 1", cwrs)
	}
	if st := c.snd.Stats; st.Retransmits != 0 || st.Recoveries != 0 {
		t.Errorf("retransmits, recoveries = %d, %d; want 0, 0", st.Retransmits, st.Recoveries)
	}
}

// With AccECN (RFC 9768) the ACE counter tells the sender how many packets
// were CE-marked, so delivered_ce counts exactly the marks; DCTCP's
// per-packet ECE echo gives the same count through the ACKs' ECE flags.
func TestECNDeliveredCECounts(t *testing.T) {
	marks := []uint64{100, 101, 102, 200, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359}
	for _, tc := range []struct {
		name string
		echo EchoMode
	}{
		{"accecn", EchoAccECN},
		{"dctcp", EchoDCTCP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := shLinuxOpts()
			opts.ECN = true
			h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 2 * units.MB, opts: opts, echo: tc.echo}
			c := h.build(t)
			c.fwd.ce = markSegs(marks...)
			c.runUntil(sim.Time(5 * sim.Second))
			if got := c.snd.rate.DeliveredCE; got != uint32(len(marks)) {
				t.Errorf("delivered_ce = %d, want %d", got, len(marks))
			}
			if c.snd.accECN != (tc.echo == EchoAccECN) {
				t.Errorf("accecn negotiated = %v, want %v", c.snd.accECN, tc.echo == EchoAccECN)
			}
		})
	}
}
