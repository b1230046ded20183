package tcp

import (
	"github.com/ccscope/ccscope/engine/config"
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
// remaining time rack.rtt - (now - sent) is negative on that ACK. Before
// it, reo_wnd is min_rtt/4 (10 ms) and the lost segment waits. So the
// retransmission leaves as the first ACK whose SACK blocks cover three
// segments arrives (no reordering timer), or, the sender being paced, when
// the pacing of the burst before it lets it (tcp_wstamp_ns); the receiver's
// SACK compression makes that a later ACK than the first SACK.
func TestRACKRepairsMidWindowLossAtDupthresh(t *testing.T) {
	const lostSeg = 200
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 3 * units.MB, opts: shLinuxOpts()}
	drop := func(c *shConn) { c.fwd.drop = dropOnce(seqOfSeg(lostSeg)) }
	c := h.build(t)
	drop(c)
	// The first ACK reporting three SACKed segments, and the first SACK:
	// indices into c.rev.log.
	third, first := -1, -1
	c.rev.drop = func(p *packet.Packet, now sim.Time) bool {
		var sacked uint64
		for _, b := range p.Sack[:p.NSack] {
			if b.Start > seqOfSeg(lostSeg) {
				sacked += (b.End - b.Start) / 1448
			}
		}
		if sacked > 0 && first < 0 {
			first = len(c.rev.log)
		}
		if sacked >= 3 && third < 0 {
			third = len(c.rev.log)
		}
		return false
	}
	c.runUntil(sim.Time(5 * sim.Second))

	tx := c.fwd.transmissions(seqOfSeg(lostSeg))
	if len(tx) != 2 {
		t.Fatalf("segment %d sent %d times, want 2", lostSeg, len(tx))
	}
	if third < 0 || third == first {
		t.Fatalf("ACK %d reports the first SACKed segment, ACK %d the third; want two ACKs", first, third)
	}
	at := c.rev.log[third].arr
	t.Logf("lost segment sent %v, retransmitted %v; first SACK arrived %v, third SACKed segment %v", tx[0], tx[1], c.rev.log[first].arr, at)
	if want := h.pacedRelease(t, drop, at); tx[1] != want {
		t.Errorf("retransmission at %v, want at %v (the arrival of the ACK reporting the third SACKed segment, %v, or the pacing release)", tx[1], want, at)
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
// out), rounded up to jiffies, counted from the last ACK, which re-armed
// the timer (tcp_schedule_loss_probe). TCP_TIMEOUT_MIN_US is 2 ms at any
// HZ (include/net/tcp.h); HZ = 250's 4 ms ticks round the sum up further,
// and HZ = 300's ticks of 3,333,333 ns (TICK_NSEC) to a multiple of 10/3 ms.
// The timer wheel then fires the probe at the first boundary after it is
// due of its level's buckets (wheelAt): at HZ = 1000 the PTO, some 83
// ticks, lies on level 1 (8-tick buckets); at HZ = 250, some 21 ticks, on
// level 0. Without TLP the same loss waits for the RTO (≥ 200 ms + srtt),
// so the transfer ends later by about RTO − PTO.
func TestTLPRepairsTailLoss(t *testing.T) {
	const segs = 100
	size := units.Bytes(segs * 1448)
	for _, tc := range []struct {
		name       string
		tlp        bool
		hz         int
		rtos, tlps uint64
	}{
		{"tlp on", true, 1000, 0, 1},
		{"tlp on, HZ 250", true, 250, 0, 1},
		{"tlp on, HZ 300", true, 300, 0, 1},
		{"tlp off", false, 1000, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := shLinuxOpts()
			opts.TLP = tc.tlp
			opts.HZ = tc.hz
			h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: size, opts: opts}
			drop := func(c *shConn) { c.fwd.drop = dropOnce(seqOfSeg(segs-3), seqOfSeg(segs-2), seqOfSeg(segs-1)) }
			c := h.build(t)
			drop(c)
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
			if !tc.tlp {
				if d := repair.Sub(lastAck); d < 200*sim.Millisecond {
					t.Errorf("repair %v after the last ACK, want an RTO (≥ 200 ms)", d)
				}
				return
			}
			// srtt and packets out as the last ACK left them.
			again := h.build(t)
			drop(again)
			again.runUntil(lastAck)
			if out := again.snd.sb.packetsOut(); out != 3 {
				t.Fatalf("%d packets out after the last ACK, want the 3 lost", out)
			}
			us := again.snd.rtt.srttUs8>>2 + 2000
			ticks := (us*int64(tc.hz) + 999_999) / 1_000_000 // usecs_to_jiffies: ⌈us·HZ/10⁶⌉
			want := wheelAt(tc.hz, lastAck, sim.Duration(ticks)*tickNsec(tc.hz))
			if repair != want {
				t.Errorf("probe at %v, want %v: armed at the last ACK %v for 2·srtt + 2 ms = %d µs, %d ticks", repair, want, lastAck, us, ticks)
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

// A loss probe that retransmits the last segment of a multi-segment skb
// first splits that segment off into an skb of its own
// (tcp_send_loss_probe's tcp_fragment at (pcount − 1)·mss), so what stays
// of the skb and the probed segment are retransmitted later as two skbs,
// each with its own departure and rate snapshot. Unpaced, the transfer's
// last ACK releases its tail as one TSO chunk.
func TestLossProbeSplitsItsSkb(t *testing.T) {
	const segs = 100
	opts := shLinuxOpts()
	opts.Pacing = config.PacingOff
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: segs * 1448, opts: opts}
	c := h.build(t)
	c.fwd.drop = dropOnce(seqOfSeg(segs-3), seqOfSeg(segs-2), seqOfSeg(segs-1))
	last := uint64(segs - 1)
	var skbsBefore uint32
	for c.snd.Stats.TLPs == 0 && c.s.Step(1) > 0 {
		if c.snd.Stats.TLPs == 0 && c.snd.sb.nxt == segs && c.snd.sb.una <= last-1 {
			skbsBefore = c.snd.sb.skbs
			if c.snd.sb.seg(last).flags&flagSkbHead != 0 {
				t.Fatalf("segment %d went out as an skb of its own: the test needs a multi-segment tail", last)
			}
		}
	}
	if c.snd.Stats.TLPs != 1 || !c.snd.tlp.retrans {
		t.Fatalf("TLPs = %d (a retransmission: %v), want one retransmitting the last segment", c.snd.Stats.TLPs, c.snd.tlp.retrans)
	}
	if c.snd.sb.seg(last).flags&flagSkbHead == 0 || c.snd.sb.skbs != skbsBefore+1 {
		t.Errorf("after the probe: segment %d an skb head %v, skbs %d (before %d); want it split off, one skb more",
			last, c.snd.sb.seg(last).flags&flagSkbHead != 0, c.snd.sb.skbs, skbsBefore)
	}
}

// An ACK overtaken on the way back arrives old (below snd_una) with SACK
// blocks now all below snd_una. Overtaken by under 2 ms it passes PAWS
// (its TSval lags by a tick at most), and tcp_sacktag_write_queue, which
// starts each call with the lowest newly sacked sequence at snd_nxt, tags
// nothing, so tcp_check_sack_reordering returns at once: the reordering
// metric stays at sysctl_tcp_reordering (3) and no reordering is seen.
// (The old-ACK path once kept the metric's start at 0, and such an ACK
// raised reordering to snd_una in segments.) One segment is lost, and
// every SACK-carrying ACK is held 500 µs, so the ACK of the repair
// overtakes the last dupacks.
func TestOldSackAckLeavesReordering(t *testing.T) {
	const segs = 300
	h := shHarness{cc: "cubic", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: segs * 1448, opts: shLinuxOpts()}
	c := h.build(t)
	c.fwd.drop = dropOnce(seqOfSeg(100))
	c.rev.extra = func(p *packet.Packet) sim.Duration {
		if p.NSack > 0 {
			return 500 * sim.Microsecond
		}
		return 0
	}
	c.runUntil(sim.Time(3 * sim.Second))
	if got := c.rcv.BytesDelivered(); got != h.size {
		t.Fatalf("delivered %d of %d bytes", got, h.size)
	}
	// An old SACK: it arrives after an ACK that acked beyond it.
	old := 0
	var ackedTo uint64
	for _, x := range sortedByArrival(c.rev.log) {
		if x.ack < ackedTo && x.nsack > 0 {
			old++
		}
		ackedTo = max(ackedTo, x.ack)
	}
	if old == 0 {
		t.Fatalf("no SACK-carrying ACK arrived old")
	}
	if c.snd.reordering != reorderingInit || c.snd.reordSeen != 0 {
		t.Errorf("reordering %d, reordering seen %d times after %d old SACKs; want %d and none", c.snd.reordering, c.snd.reordSeen, old, reorderingInit)
	}
}

// An ACK overtaken by 2 ms or more fails PAWS (tcp_validate_incoming: its
// TSval lags ts_recent by more than TCP_PAWS_WINDOW), and being below
// snd_una it is no duplicate ACK that tcp_disordered_ack_check would
// excuse: it is discarded, SACK blocks and all, and answered with a
// dupack. One segment is lost; the 4th SACK-carrying dupack is held 100 ms.
func TestPAWSDiscardsOvertakenAck(t *testing.T) {
	const segs = 300
	h := shHarness{cc: "cubic", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: segs * 1448, opts: shLinuxOpts()}
	c := h.build(t)
	c.fwd.drop = dropOnce(seqOfSeg(100))
	sacks := 0
	var held sim.Time
	c.rev.extra = func(p *packet.Packet) sim.Duration {
		if p.NSack > 0 {
			if sacks++; sacks == 4 {
				held = c.s.Now()
				return 100 * sim.Millisecond
			}
		}
		return 0
	}
	c.runUntil(sim.Time(3 * sim.Second))
	if got := c.rcv.BytesDelivered(); got != h.size || held == 0 {
		t.Fatalf("delivered %d of %d bytes, a SACK held at %v", got, h.size, held)
	}
	var arrived sim.Time
	for _, x := range c.rev.log {
		if x.at == held && x.nsack > 0 {
			arrived = x.arr
		}
	}
	var dupacks []sim.Time
	for _, x := range c.fwd.log {
		if x.flags == packet.ACK && x.len == 0 && x.seq != 1 {
			dupacks = append(dupacks, x.at)
		}
	}
	if len(dupacks) != 1 || dupacks[0] != arrived {
		t.Errorf("the sender's bare ACKs at %v; want one, a dupack at the held SACK's arrival %v", dupacks, arrived)
	}
	if c.snd.reordering != reorderingInit || c.snd.reordSeen != 0 {
		t.Errorf("reordering %d, reordering seen %d times; want %d and none", c.snd.reordering, c.snd.reordSeen, reorderingInit)
	}
}

// ts_recent moves only with an ACK that tcp_ack keeps past its first two
// checks (tcp_replace_ts_recent comes after them): an old ACK (below
// snd_una) or one for data never sent leaves it, however new its TSval.
func TestTSRecentIgnoresOldAndInvalidAcks(t *testing.T) {
	sc := &senderScript{opts: shLinuxOpts(), cc: "reno"}
	if err := sc.start(); err != nil {
		t.Fatal(err)
	}
	sc.s.RunUntil(sim.Time(100 * sim.Millisecond))
	sc.deliver(func(p *packet.Packet) { p.Flags, p.Ack, p.Wnd, p.TSVal = packet.SYN|packet.ACK, 1, 65160, 50 })
	d := sc.d
	for _, a := range []struct {
		seg, tsVal, want uint32
	}{
		{4, 100, 100},  // in window: taken
		{2, 200, 100},  // old: left
		{99, 300, 100}, // beyond snd_nxt: left
		{5, 200, 200},  // in window again
	} {
		sc.deliver(func(p *packet.Packet) { p.Ack, p.Wnd, p.TSVal = seqOfSeg(uint64(a.seg)), 65160, a.tsVal })
		if d.tsRecent != a.want {
			t.Errorf("after an ACK of segment %d with TSval %d: ts_recent %d, want %d", a.seg, a.tsVal, d.tsRecent, a.want)
		}
	}
}
