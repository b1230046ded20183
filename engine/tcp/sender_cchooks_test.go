package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// hookConn is a harness connection whose receiver may refuse ECN, so the
// handshake does not negotiate it (RFC 3168 §6.1.1: a SYN-ACK without ECE).
func hookConn(t *testing.T, ccName string, echo EchoMode, peerECN bool) *shConn {
	t.Helper()
	s := sim.New()
	pool := &packet.Pool{}
	alg, err := cc.New(ccName)
	if err != nil {
		t.Fatalf("cc.New(%q): %v", ccName, err)
	}
	opts := shLinuxOpts()
	opts.ECN = true
	ropts := opts
	ropts.ECN = peerECN
	c := &shConn{s: s, pool: pool}
	c.fwd = newShPipe(s, pool, 100*units.Mbps, 10*sim.Millisecond)
	c.rev = newShPipe(s, pool, 100*units.Mbps, 10*sim.Millisecond)
	rec := trace.NewRecorder(0, 0, nil)
	rec.Flows = []string{"f0"}
	c.snd = NewSender(s, pool, c.fwd, rec, SenderConfig{Flow: 0, Node: 0, Peer: 1, Opts: opts, CC: alg,
		ECN: true, Echo: echo, Size: 200 * units.KB})
	c.rcv = NewReceiver(s, pool, c.rev, rec, ReceiverConfig{Flow: 0, Node: 1, Peer: 0, Opts: ropts, Echo: echo})
	c.fwd.to = c.rcv
	c.rev.to = c.snd
	return c
}

// DCTCP and Prague need ECN: when the handshake does not negotiate it,
// dctcp_init and prague_init hand the socket to their Reno tables
// (icsk_ca_ops = &dctcp_reno / &prague_reno), which the sender sees as
// cc.Fallbacker returning Reno right after init. With ECN negotiated they
// stay themselves.
func TestSenderTakesCCFallback(t *testing.T) {
	for _, tc := range []struct {
		cc      string
		echo    EchoMode
		peerECN bool
		want    string
	}{
		{"dctcp", EchoDCTCP, false, "reno"},
		{"prague", EchoAccECN, false, "reno"},
		{"dctcp", EchoDCTCP, true, "dctcp"},
		{"prague", EchoAccECN, true, "prague"},
		{"cubic", EchoClassic, false, "cubic"},
	} {
		t.Run(tc.cc+map[bool]string{true: "/ecn", false: "/no-ecn"}[tc.peerECN], func(t *testing.T) {
			c := hookConn(t, tc.cc, tc.echo, tc.peerECN)
			c.runUntil(sim.Time(2 * sim.Second))
			if got := c.snd.CC().Name(); got != tc.want {
				t.Errorf("CC after the handshake = %s, want %s", got, tc.want)
			}
			if c.rcv.BytesDelivered() != 200*units.KB {
				t.Errorf("delivered = %d, want %d", c.rcv.BytesDelivered(), 200*units.KB)
			}
		})
	}
}

// Data packets carry ECT(1) for a CC that asks for it (Prague's
// TCP_CONG_WANTS_ECT_1, cc.ECNCodepoint), ECT(0) for any other once ECN is
// negotiated (INET_ECN_xmit), and Not-ECT when it is not.
func TestSenderECNCodepoint(t *testing.T) {
	for _, tc := range []struct {
		cc      string
		echo    EchoMode
		peerECN bool
		want    packet.ECN
	}{
		{"prague", EchoAccECN, true, packet.ECT1},
		{"dctcp", EchoDCTCP, true, packet.ECT0},
		{"reno", EchoClassic, true, packet.ECT0},
		{"prague", EchoAccECN, false, packet.NotECT},
	} {
		t.Run(tc.cc+map[bool]string{true: "/ecn", false: "/no-ecn"}[tc.peerECN], func(t *testing.T) {
			c := hookConn(t, tc.cc, tc.echo, tc.peerECN)
			seen := map[packet.ECN]int{}
			c.fwd.drop = func(p *packet.Packet, _ sim.Time) bool {
				if p.Len > 0 {
					seen[p.ECN]++
				}
				return false
			}
			c.runUntil(sim.Time(2 * sim.Second))
			if len(seen) != 1 || seen[tc.want] == 0 {
				t.Errorf("data packet codepoints = %v, want all %v", seen, tc.want)
			}
		})
	}
}

// ackSpy is Reno with a pkts_acked hook that records its samples.
type ackSpy struct {
	cc.Algorithm
	samples []cc.AckSample
}

func (a *ackSpy) PktsAcked(_ *cc.State, s cc.AckSample) { a.samples = append(a.samples, s) }

// tcp_clean_rtx_queue calls pkts_acked on every ACK that reaches it, SACK-only
// ones included: after a mid-window loss the ACKs that only SACK carry
// pkts_acked = 0 and the RTT of the newest SACKed segment (rs->rtt_us, from
// sack->last_sackt), which CUBIC's delay_min and HyStart read. On this
// 2·20 ms path at 100 Mbps that RTT is 40.12 ms plus queueing.
func TestPktsAckedOnSACKOnlyACKs(t *testing.T) {
	reno, _ := cc.New("reno")
	spy := &ackSpy{Algorithm: reno}
	h := shHarness{alg: spy, rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 2 * units.MB, opts: shLinuxOpts()}
	c := h.build(t)
	c.fwd.drop = dropOnce(seqOfSeg(100))
	c.runUntil(sim.Time(3 * sim.Second))

	var sackOnly int
	for _, x := range spy.samples {
		if x.PktsAcked != 0 {
			continue
		}
		sackOnly++
		if x.RTT < 40*sim.Millisecond || x.RTT > 60*sim.Millisecond {
			t.Errorf("SACK-only pkts_acked RTT = %v, want in [40ms, 60ms]", x.RTT)
		}
	}
	// Every segment sent after the lost one until its repair is SACKed
	// alone: at least the three dupACKs that start recovery.
	if sackOnly < 3 {
		t.Errorf("pkts_acked calls with pkts_acked = 0: %d, want ≥ 3 (one per SACK-only ACK)", sackOnly)
	}
	if c.rcv.BytesDelivered() != 2*units.MB {
		t.Errorf("delivered = %d, want %d", c.rcv.BytesDelivered(), 2*units.MB)
	}
}

// eventSpy is Reno with a cwnd_event hook that records the events and the
// CA state each found.
type eventSpy struct {
	cc.Algorithm
	events []cc.Event
	at     []sim.Time
}

func (a *eventSpy) CwndEvent(st *cc.State, ev cc.Event) {
	a.events = append(a.events, ev)
	a.at = append(a.at, st.Now)
}

// runOnOffTail runs a 100 Mbps, 2·10 ms path with an application on for
// 200 ms and off for 300 ms, dropping the first transmission of segment
// drop (0: none); it returns the sender, the spy and the send log.
func runOnOffTail(t *testing.T, drop uint64) (*DataSender, *eventSpy, []shSent) {
	t.Helper()
	reno, _ := cc.New("reno")
	spy := &eventSpy{Algorithm: reno}
	opts := shLinuxOpts()
	opts.RcvBufMax = 256 * units.KiB // about the 250 KB BDP: no standing queue
	h := shHarness{alg: spy, rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, opts: opts,
		app: appOnOff(200*sim.Millisecond, 300*sim.Millisecond)}
	c := h.build(t)
	if drop != 0 {
		c.fwd.drop = dropOnce(drop)
	}
	c.runUntil(sim.Time(800 * sim.Millisecond))
	return c.snd, spy, c.fwd.log
}

// A loss probe that repairs a real loss raises CA_EVENT_TLP_RECOVERY (the
// google/bbr v3 branch's tcp_process_tlp_ack) once, on the first ACK beyond
// the probe's tlp_high_seq, just before the CWR reduction. The flow's last
// segment before an off period is lost; the probe (PTO ≈ 2·srtt + 2 ms
// into the silence) retransmits it, its ACK only reaches tlp_high_seq, and
// the next on period's first new data is acked beyond it.
func TestTLPRecoveryEvent(t *testing.T) {
	_, _, log := runOnOffTail(t, 0)
	var last uint64
	for _, x := range log {
		if x.len > 0 && x.at < sim.Time(500*sim.Millisecond) {
			last = max(last, x.seq)
		}
	}
	d, spy, _ := runOnOffTail(t, last)
	var tlpEvents []sim.Time
	for i, ev := range spy.events {
		if ev == cc.EventTLPRecovery {
			tlpEvents = append(tlpEvents, spy.at[i])
		}
	}
	if d.Stats.TLPs != 1 || d.Stats.Retransmits != 1 {
		t.Fatalf("TLPs, retransmits = %d, %d; want 1, 1 (the probe repairs the tail)", d.Stats.TLPs, d.Stats.Retransmits)
	}
	if len(tlpEvents) != 1 {
		t.Fatalf("CA_EVENT_TLP_RECOVERY raised %d times, want once", len(tlpEvents))
	}
	// The connection is up at 20 ms: on until 220 ms, off until 520 ms;
	// the next on period's first data is acked an RTT (~20 ms) later.
	if tlpEvents[0] < sim.Time(540*sim.Millisecond) || tlpEvents[0] > sim.Time(560*sim.Millisecond) {
		t.Errorf("CA_EVENT_TLP_RECOVERY at %v, want on the first ACK of the next on period (540–560 ms)", tlpEvents[0])
	}
}

// tp->delivered counts the SYN: the SYN-ACK's tcp_ack acks it
// (tcp_clean_rtx_queue's tcp_count_delivered), so a connection's
// tcpi_delivered is 1 before any data and n + 1 once n segments are
// acked, as ss -ti shows on Linux; the CC reads the same count.
func TestDeliveredCountsSYN(t *testing.T) {
	for _, sack := range []bool{true, false} {
		opts := shLinuxOpts()
		opts.SACK = sack
		c := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, opts: opts, size: 10 * 1448}.build(t)
		c.runUntil(sim.Time(21 * sim.Millisecond)) // the SYN-ACK is in, no data acked
		d := c.snd
		d.fillState()
		if d.rate.Delivered != 1 || d.st.Delivered != 1 {
			t.Errorf("sack %v: delivered %d (the CC's %d) after the handshake, want 1", sack, d.rate.Delivered, d.st.Delivered)
		}
		c.runUntil(sim.Time(200 * sim.Millisecond))
		if d.sndUna != 1+10*1448 || d.rate.Delivered != 11 {
			t.Errorf("sack %v: snd_una %d, delivered %d; want all 10 segments acked and 11 delivered", sack, d.sndUna, d.rate.Delivered)
		}
	}
}
