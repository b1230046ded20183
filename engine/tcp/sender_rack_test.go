package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// One segment lost mid-window is repaired by RACK, not by the RTO, on the
// ACK that brings sacked_out to tcp_reordering (3). Mainline
// tcp_rack_reo_wnd (Linux 6.x) is 0 when no reordering has been seen and
// sacked_out >= reordering; RACK.rtt is the RTT of the most recently sent
// (s)acked segment, which left after the lost one, so the lost segment's
// remaining time rack.rtt - (now - sent) is negative on that ACK. The
// receiver's SACK compression holds out-of-order ACKs at most
// sysctl_tcp_comp_sack_delay_ns + slack = 1.1 ms, so that ACK arrives
// within 1.1 ms of the first SACK, and the retransmission leaves as that
// ACK arrives (no reordering timer), or, the sender being paced, when the
// pacing of the burst before it lets it (tcp_wstamp_ns).
func TestRACKRepairsMidWindowLossAtDupthresh(t *testing.T) {
	const lostSeg = 200
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 3 * units.MB, opts: shLinuxOpts()}
	drop := func(c *shConn) { c.fwd.drop = dropOnce(seqOfSeg(lostSeg)) }
	c := h.build(t)
	drop(c)
	c.runUntil(sim.Time(5 * sim.Second))

	tx := c.fwd.transmissions(seqOfSeg(lostSeg))
	if len(tx) != 2 {
		t.Fatalf("segment %d sent %d times, want 2", lostSeg, len(tx))
	}
	next := c.fwd.transmissions(seqOfSeg(lostSeg + 1))[0]
	tS, ok := c.firstSackAfter(tx[0])
	if !ok {
		t.Fatalf("no SACK after the loss")
	}
	onAck := false
	for _, x := range c.rev.log {
		if !x.dropped && x.arr >= tS && x.arr <= tS.Add(1100*sim.Microsecond) {
			onAck = onAck || h.pacedRelease(t, drop, x.arr) == tx[1]
		}
	}
	t.Logf("lost segment sent %v, next %v, retransmitted %v (first SACK %v)", tx[0], next, tx[1], tS)
	if !onAck {
		t.Errorf("retransmission at %v, want as an ACK in [%v, %v + 1.1 ms] arrives, or at the pacing release it waits for", tx[1], tS, tS)
	}
	st := c.snd.Stats
	if st.RTOs != 0 || st.Retransmits != 1 || st.Recoveries != 1 {
		t.Errorf("RTOs, retransmits, recoveries = %d, %d, %d; want 0, 1, 1", st.RTOs, st.Retransmits, st.Recoveries)
	}
	if got := c.rcv.BytesDelivered(); got != h.size {
		t.Errorf("delivered %d bytes, want %d", got, h.size)
	}
}

// A tail loss — the last three segments of a transfer — is repaired by a
// loss probe after PTO = 2·srtt + TCP_TIMEOUT_MIN_US (more than one packet
// out), rounded up to jiffies, counted from the last ACK that re-armed the
// timer (tcp_schedule_loss_probe). TCP_TIMEOUT_MIN_US is 2 ms at any HZ
// (include/net/tcp.h); HZ = 250's 4 ms ticks round the sum up further.
// The timer wheel then fires the probe at the first boundary after it is
// due of its level's buckets: at HZ = 1000 the PTO, some 83 ticks, lies on
// level 1 (63 to 503 ticks, 8-tick buckets); at HZ = 250, some 21 ticks,
// on level 0 (1-tick buckets). Without TLP the same loss
// waits for the RTO (≥ 200 ms + srtt), so the transfer ends later by about
// RTO − PTO.
func TestTLPRepairsTailLoss(t *testing.T) {
	const segs = 100
	size := units.Bytes(segs * 1448)
	for _, tc := range []struct {
		name       string
		tlp        bool
		hz         int
		bucket     int64 // ticks
		rtos, tlps uint64
	}{
		{"tlp on", true, 1000, 8, 0, 1},
		{"tlp on, HZ 250", true, 250, 1, 0, 1},
		{"tlp off", false, 1000, 8, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := shLinuxOpts()
			opts.TLP = tc.tlp
			opts.HZ = tc.hz
			h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: size, opts: opts}
			c := h.build(t)
			c.fwd.drop = dropOnce(seqOfSeg(segs-3), seqOfSeg(segs-2), seqOfSeg(segs-1))
			c.runUntil(sim.Time(5 * sim.Second))
			st := c.snd.Stats
			if st.RTOs != tc.rtos || st.TLPs != tc.tlps {
				t.Errorf("RTOs, TLPs = %d, %d; want %d, %d", st.RTOs, st.TLPs, tc.rtos, tc.tlps)
			}
			if got := c.rcv.BytesDelivered(); got != size {
				t.Fatalf("delivered %d, want %d", got, size)
			}
			// The first repair (the probe, or the RTO's retransmission of
			// the head) follows the last ACK, which acknowledged segs-4.
			repair := sim.Never
			for n := uint64(segs - 3); n < segs; n++ {
				if tx := c.fwd.transmissions(seqOfSeg(n)); len(tx) > 1 {
					repair = min(repair, tx[1])
				}
			}
			var lastAck sim.Time
			for _, x := range c.rev.log {
				if x.arr < repair {
					lastAck = max(lastAck, x.arr)
				}
			}
			tick := sim.Second / sim.Duration(tc.hz)
			srttLo := 2*sim.Duration(c.snd.rtt.minRTTUs())*sim.Microsecond + 2*sim.Millisecond
			t.Logf("repair %v after the last ACK (min_rtt %v)", repair.Sub(lastAck), sim.Duration(c.snd.rtt.minRTTUs())*sim.Microsecond)
			if tc.tlp {
				// 2·srtt is within 2 ms of 2·min_rtt on this clean path;
				// the sum rounds up by less than a tick, and the wheel
				// fires it within a bucket (at HZ = 250, 82–92 ms: 2 ticks
				// of TCP_TIMEOUT_MIN in place of the 2 ms would be 88–98).
				bucket := sim.Duration(tc.bucket) * tick
				if d := repair.Sub(lastAck); d < srttLo || d > srttLo+2*sim.Millisecond+tick+bucket {
					t.Errorf("probe %v after the last ACK, want 2·srtt + 2 ms ≈ %v (+ ≤ 2 ms + a %v tick + a %v bucket)", d, srttLo, tick, bucket)
				}
			} else if d := repair.Sub(lastAck); d < 200*sim.Millisecond {
				t.Errorf("repair %v after the last ACK, want an RTO (≥ 200 ms)", d)
			}
		})
	}
}

// Mainline RACK (Linux 6.x) is aggressive until it has seen reordering:
// with reord_seen == 0 its window is 0 once three segments are SACKed, so
// the first reordering of more than ~3 packet times (at 100 Mbps a packet
// is 0.12 ms) causes one spurious retransmission. Its original then fills
// the hole (tcp_check_sack_reordering: reord_seen > 0), the timestamps
// show the retransmission was spurious and the reduction is undone, and
// the D-SACK for the duplicate widens the window a step
// (tcp_rack_update_reo_wnd: 2 · min_rtt/4 = 20 ms here). A later
// reordering within that window — 5 ms or 15 ms — is tolerated.
func TestRACKReorderingWindow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		delays     map[uint64]sim.Duration // segment → extra delay
		retrans    uint64
		steps      uint32
		minUndos   uint64
		retransSeg []uint64
	}{
		// Segment 310 is mid-flight: more than three segments behind it
		// leave within 5 ms (only one follows segment 300 in its flight).
		{"first reordering 5ms, then 5ms", map[uint64]sim.Duration{310: 5 * sim.Millisecond, 1500: 5 * sim.Millisecond}, 1, 2, 1, []uint64{310}},
		{"first reordering 25ms, then 15ms", map[uint64]sim.Duration{300: 25 * sim.Millisecond, 1500: 15 * sim.Millisecond}, 1, 2, 1, []uint64{300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 4 * units.MB, opts: shLinuxOpts()}
			c := h.build(t)
			c.fwd.extra = func(p *packet.Packet) sim.Duration {
				if p.Len > 0 && (p.Seq-1)%1448 == 0 {
					return tc.delays[(p.Seq-1)/1448]
				}
				return 0
			}
			c.runUntil(sim.Time(5 * sim.Second))
			st := c.snd.Stats
			if st.Retransmits != tc.retrans {
				t.Errorf("retransmits = %d, want %d", st.Retransmits, tc.retrans)
			}
			for _, n := range tc.retransSeg {
				if got := len(c.fwd.transmissions(seqOfSeg(n))); got != 2 {
					t.Errorf("segment %d sent %d times, want 2", n, got)
				}
			}
			if c.snd.rack.reoWndSteps != tc.steps {
				t.Errorf("reo_wnd_steps = %d, want %d", c.snd.rack.reoWndSteps, tc.steps)
			}
			if st.Undos < tc.minUndos {
				t.Errorf("undos = %d, want ≥ %d", st.Undos, tc.minUndos)
			}
			if c.snd.st.CA != cc.CAOpen {
				t.Errorf("final CA state %v, want open", c.snd.st.CA)
			}
		})
	}
}
