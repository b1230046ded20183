package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Lost SYNs are retransmitted after TCP_TIMEOUT_INIT (1 s), without
// backoff for the first tcp_syn_linear_timeouts (4) timeouts and doubling
// after (tcp_retransmit_timer in SYN-SENT, Linux 6.7+: tp->total_rto >
// sysctl_tcp_syn_linear_timeouts), on the kernel's timer wheel
// (kernel/time/timer.c): a delay of 504 to 4031 ticks lands on level 2,
// whose buckets are 64 ticks wide, and a timer fires at the first bucket
// boundary after its expiry. The SYN leaves at tick 0; the first
// retransmission is due at 1000 and leaves at 1024 (16·64); the next four
// are due 1000 ticks after the one before and leave at 2048, 3072, 4096
// and 5120; the fifth timeout doubles the RTO, so the sixth is due at
// 5120 + 2000 = 7120 and leaves at 7168 (112·64). A 6.18 kernel behind
// `emulate` sent them 1.008, 2.032 and 3.056 s after the SYN (HZ 250:
// 32 ms buckets). With more than one retransmission the first window is 1
// segment (RFC 6298 §5.7, tcp_init_transfer).
func TestSYNRetransmissionBackoff(t *testing.T) {
	ms := sim.Millisecond
	for _, tc := range []struct {
		lost int
		want []sim.Duration
		iw   uint32
	}{
		{0, []sim.Duration{0}, 10},
		{1, []sim.Duration{0, 1024 * ms}, 10},
		{3, []sim.Duration{0, 1024 * ms, 2048 * ms, 3072 * ms}, 1},
		{6, []sim.Duration{0, 1024 * ms, 2048 * ms, 3072 * ms, 4096 * ms, 5120 * ms, 7168 * ms}, 1},
	} {
		t.Run("", func(t *testing.T) {
			h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: 1448, opts: shLinuxOpts()}
			c := h.build(t)
			dropped := 0
			c.fwd.drop = func(p *packet.Packet, now sim.Time) bool {
				if p.Flags&packet.SYN != 0 && dropped < tc.lost {
					dropped++
					return true
				}
				return false
			}
			var iw uint32
			for c.s.Now() < sim.Time(20*sim.Second) && c.s.Step(1) > 0 {
				if iw == 0 && c.snd.state == sndEstablished {
					iw = c.snd.st.CwndPkts
				}
			}
			var syns []sim.Duration
			for _, x := range c.fwd.log {
				if x.flags&packet.SYN != 0 {
					syns = append(syns, sim.Duration(x.at))
				}
			}
			if len(syns) != len(tc.want) {
				t.Fatalf("SYNs at %v, want at %v", syns, tc.want)
			}
			for i := range syns {
				if syns[i] != tc.want[i] {
					t.Errorf("SYN %d at %v, want %v", i, syns[i], tc.want[i])
				}
			}
			if iw != tc.iw {
				t.Errorf("initial cwnd = %d, want %d", iw, tc.iw)
			}
		})
	}
}

// SYNs held rather than lost (a queueing outage of 3.5 s on the forward
// path, as a LEO handover's) are retransmitted at 1, 2 and 3 s, and all
// arrive together; the receiver answers the first, and its later SYN-ACKs
// echo that SYN's timestamp too (tcp_check_req answers a pure retransmitted
// SYN from the request sock, whose ts_recent is the first SYN's). The
// SYN-ACK's echo then equals tp->retrans_stamp, so tcp_try_undo_spurious_syn
// clears undo_marker and tcp_init_transfer keeps the initial window of 10
// despite three retransmissions. A 6.18 kernel behind `emulate` (p-rtr-p
// with that outage on the bottleneck) did the same: SYN-ACKs echoing the
// first SYN, snd_cwnd 10, srtt from the first SYN's timestamp (3.539 s).
func TestSpuriousSYNTimeoutKeepsInitialWindow(t *testing.T) {
	hold := sim.Time(3500 * sim.Millisecond)
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: 1448, opts: shLinuxOpts()}
	c := h.build(t)
	c.fwd.extra = func(p *packet.Packet) sim.Duration {
		if now := c.s.Now(); p.Flags&packet.SYN != 0 && now < hold {
			return hold.Sub(now)
		}
		return 0
	}
	var iw uint32
	var srtt sim.Duration
	for c.s.Now() < sim.Time(5*sim.Second) && c.s.Step(1) > 0 {
		if iw == 0 && c.snd.state == sndEstablished {
			iw, srtt = c.snd.st.CwndPkts, c.snd.rtt.srtt()
		}
	}
	var syns int
	for _, x := range c.fwd.log {
		if x.flags&packet.SYN != 0 {
			syns++
		}
	}
	if syns != 4 {
		t.Errorf("SYNs sent = %d, want 4 (at 0, 1, 2 and 3 s)", syns)
	}
	// The four arrive together: the first and the first retransmitted one
	// are answered, the other two within tcp_invalid_ratelimit (500 ms) of
	// that answer are not (tcp_check_req, tcp_oow_rate_limited).
	var synAcks int
	for _, x := range c.rev.log {
		if x.flags&(packet.SYN|packet.ACK) == packet.SYN|packet.ACK {
			synAcks++
		}
	}
	if synAcks != 2 {
		t.Errorf("SYN-ACKs sent = %d, want 2", synAcks)
	}
	// The sender, established by the first, answers the second with a
	// challenge ACK (tcp_validate_incoming): two bare ACKs in all.
	var bare int
	for _, x := range c.fwd.log {
		if x.flags == packet.ACK && x.len == 0 {
			bare++
		}
	}
	if bare != 2 {
		t.Errorf("bare ACKs from the sender = %d, want 2 (the handshake's and a challenge ACK)", bare)
	}
	if iw != 10 {
		t.Errorf("initial cwnd = %d, want 10 (the SYN timeouts were spurious)", iw)
	}
	// The RTT is taken from the echo of the first SYN's timestamp: 3.5 s
	// held plus the path, in whole milliseconds.
	if lo, hi := sim.Duration(hold)+20*sim.Millisecond, sim.Duration(hold)+22*sim.Millisecond; srtt < lo || srtt > hi {
		t.Errorf("srtt after the handshake = %v, want %v to %v (from the first SYN)", srtt, lo, hi)
	}
}

// In a blackout (both directions) the RTO fires and backs off exponentially
// (tcp_retransmit_timer: icsk_rto <<= 1). The RTO is srtt + rttvar with
// rttvar floored at TCP_RTO_MIN (tcp_rtt_estimator): on a 2 ms path,
// rto = srtt + 200 ms rounded up to jiffies. The head segment is
// retransmitted when the timer fires, and the timer is re-armed there for
// rto·2^k (inet_csk_reset_xmit_timer, no pacing allowance). The timer wheel
// (kernel/time/timer.c) puts a delay of 63 to 503 ticks on level 1 (buckets
// of 8 ticks), 504 to 4031 on level 2 (64), 4032 to 32255 on level 3
// (512): each retransmission leaves on its level's bucket boundary, after
// the delay has passed and at most one bucket later.
func TestRTOMinimumAndBackoff(t *testing.T) {
	c, blackout := blackedOut(t, "reno")
	c.runUntil(blackout - 1)
	rto := c.snd.rto
	srtt := c.snd.rtt.srtt()
	if want := c.snd.rtt.hz.usToJiffies(toUs(srtt) + rtoMinUs); rto != want {
		t.Errorf("RTO before the blackout = %v, want srtt + 200 ms rounded up = %v (srtt %v)", rto, want, srtt)
	}
	c.runUntil(sim.Time(20 * sim.Second))
	// The head at the first RTO is the segment sent most often (a loss
	// probe may have resent the last segment once).
	counts := map[uint64]int{}
	var head uint64
	for _, x := range c.fwd.log {
		if x.len > 0 {
			counts[x.seq]++
			if counts[x.seq] > counts[head] {
				head = x.seq
			}
		}
	}
	tx := c.fwd.transmissions(head)
	if len(tx) < 5 {
		t.Fatalf("head retransmitted %d times, want ≥ 4", len(tx)-1)
	}
	for i := 1; i+1 < len(tx) && i < 6; i++ {
		when := rto << i
		gran := sim.Duration(0)
		switch ticks := when / sim.Millisecond; {
		case ticks < 504:
			gran = 8 * sim.Millisecond
		case ticks < 4032:
			gran = 64 * sim.Millisecond
		default:
			gran = 512 * sim.Millisecond
		}
		g := tx[i+1].Sub(tx[i])
		if g <= when || g > when+gran || sim.Duration(tx[i+1])%gran != 0 {
			t.Errorf("retransmission %d at %v, %v after the one before: want on a %v boundary within (%v, %v]",
				i+1, tx[i+1], g, gran, when, when+gran)
		}
	}
	if c.snd.Stats.RTOs < 4 {
		t.Errorf("RTOs = %d, want ≥ 4", c.snd.Stats.RTOs)
	}
}

// blackedOut is a bulk connection of cc on a 2 ms path whose both
// directions lose everything from the time it returns (1 s).
func blackedOut(t *testing.T, cc string) (*shConn, sim.Time) {
	t.Helper()
	opts := shLinuxOpts()
	opts.RcvBufMax = 64 * units.KiB // no standing queue: srtt stays near 2 ms
	h := shHarness{cc: cc, rate: 100 * units.Mbps, owd: sim.Millisecond, opts: opts}
	c := h.build(t)
	blackout := sim.Time(sim.Second)
	c.fwd.drop = func(p *packet.Packet, now sim.Time) bool { return now >= blackout }
	c.rev.drop = c.fwd.drop
	return c, blackout
}

// On a clean bottleneck the delivery-rate samples (tcp_rate_gen) measure
// the bottleneck's payload rate: 100 Mbps · 1448/1500 = 96.53 Mbps.
func TestDeliveryRateEqualsBottleneck(t *testing.T) {
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: shLinuxOpts()}
	c := h.build(t)
	c.runUntil(sim.Time(5 * sim.Second))
	want := 100e6 * 1448.0 / 1500
	got := float64(c.snd.Stats.DeliveryRate)
	t.Logf("delivery rate %.5g bps", got)
	if got < want*0.98 || got > want*1.02 {
		t.Errorf("delivery rate = %.0f bps, want %.0f ± 2%%", got, want)
	}
}

// A delay spike longer than the RTO makes the timeout spurious: the ACKs of
// the original transmissions then echo timestamps older than the
// retransmission (tcp_packet_delayed), so tcp_process_loss undoes the
// reduction (tcp_try_undo_loss; F-RTO, RFC 5682, would detect it from
// never-retransmitted data as well) and the sender returns to Open with its
// window restored instead of retransmitting the whole window.
func TestSpuriousRTOUndone(t *testing.T) {
	opts := shLinuxOpts()
	opts.RcvBufMax = 256 * units.KiB
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: opts}
	c := h.build(t)
	spikeFrom, spikeTo := sim.Time(2*sim.Second), sim.Time(2600*sim.Millisecond)
	// Everything sent during the spike arrives at its end, in order.
	c.fwd.extra = func(p *packet.Packet) sim.Duration {
		if now := c.s.Now(); now >= spikeFrom && now < spikeTo {
			return spikeTo.Sub(now)
		}
		return 0
	}
	c.runUntil(spikeFrom)
	cwnd, ss := c.snd.st.CwndPkts, c.snd.st.SSThreshPkts
	for c.s.Now() < sim.Time(4*sim.Second) && c.snd.Stats.Undos == 0 {
		if c.s.Step(1) == 0 {
			break
		}
	}
	st := c.snd.Stats
	if st.RTOs == 0 || st.Undos == 0 {
		t.Fatalf("RTOs, undos = %d, %d; want ≥ 1, ≥ 1", st.RTOs, st.Undos)
	}
	if st.Retransmits > 2 {
		t.Errorf("retransmits = %d, want ≤ 2 (the RTO's and a loss probe)", st.Retransmits)
	}
	// tcp_undo_cwnd_reduction: cwnd = undo_cwnd (Reno: max(cwnd,
	// prior_cwnd)), ssthresh back to prior_ssthresh.
	d := c.snd
	if d.st.CA != cc.CAOpen || d.st.CwndPkts < cwnd || d.st.SSThreshPkts != ss {
		t.Errorf("at the undo: state %v, cwnd %d, ssthresh %d; want open, ≥ %d, %d", d.st.CA, d.st.CwndPkts, d.st.SSThreshPkts, cwnd, ss)
	}
}

// A SYN on an established connection gets a challenge ACK, at most one per
// half second (tcp_send_challenge_ack's per-socket __tcp_oow_rate_limited).
func TestChallengeACKRateLimit(t *testing.T) {
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: 1448, opts: shLinuxOpts()}
	c := h.build(t)
	c.runUntil(sim.Time(100 * sim.Millisecond))
	syn := func() int {
		before := len(c.rev.log)
		id := c.pool.Alloc()
		p := c.pool.Get(id)
		*p = packet.Packet{Flow: c.rcv.cfg.Flow, Src: c.rcv.cfg.Peer, Dst: c.rcv.cfg.Node, Size: HeaderBytes, Flags: packet.SYN}
		c.rcv.Receive(id)
		return len(c.rev.log) - before
	}
	first, second := syn(), syn()
	c.runUntil(sim.Time(700 * sim.Millisecond))
	third := syn()
	if first != 1 || second != 0 || third != 1 {
		t.Errorf("ACKs answering SYNs at 100, 100 and 700 ms: %d, %d, %d; want 1, 0, 1", first, second, third)
	}
}

// A sender whose retransmissions go unanswered gives up as Linux's
// tcp_write_timeout does (tcp_retransmit_timer, before it retransmits):
// once tcp_retries2's modelled time, (2<<9 − 1)·200 ms + (15 − 9)·120 s =
// 924.6 s, has passed since the first retransmission (retrans_stamp), it
// times the connection out (tcp_write_err) instead. On a 2 ms path the RTO
// is about 203 ms: the retransmissions 2 to 10 follow it at 2r, 4r, …,
// 512r (1022r ≈ 207.5 s in all), then 120 s apart (TCP_RTO_MAX), so the
// 15th leaves about 807.5 s after the first, and the timeout after it,
// about 927.5 s after the first, aborts: 15 retransmissions, as the
// sysctl's name says.
func TestRetries2GivesUp(t *testing.T) {
	c, blackout := blackedOut(t, "cubic")
	c.runUntil(sim.Time(1200 * sim.Second))

	st := &c.snd.Stats
	if st.Aborted != AbortRetries2 || c.snd.state != sndFailed {
		t.Fatalf("Aborted = %q, state %d; want %q and the connection failed", st.Aborted, c.snd.state, AbortRetries2)
	}
	if c.snd.pending != timeNone || c.snd.xmitTimer.t.Armed() {
		t.Errorf("a write timer is still armed after the abort (pending %d)", c.snd.pending)
	}
	var head uint64 = 1 << 63
	var last sim.Time
	for _, x := range c.fwd.log {
		last = x.at
		if x.len > 0 && x.at >= blackout {
			head = min(head, x.seq)
		}
	}
	if last > st.AbortedAt {
		t.Errorf("a packet left at %v, after the abort at %v", last, st.AbortedAt)
	}
	tx := c.fwd.transmissions(head)
	if len(tx) != 16 {
		t.Fatalf("the head segment left %d times (%v), want once and 15 retransmissions", len(tx), tx)
	}
	limit := 924600 * sim.Millisecond
	if got := tx[15].Sub(tx[1]); got >= limit {
		t.Errorf("the 15th retransmission left %v after the first: the limit %v had passed", got, limit)
	}
	if got := st.AbortedAt.Sub(tx[1]); got < limit-sim.Millisecond {
		t.Errorf("aborted %v after the first retransmission, before the limit %v", got, limit)
	}
	// The last timeout is TCP_RTO_MAX, on the timer wheel's level 4
	// (buckets of 4,096 ticks at HZ 1000).
	if got := st.AbortedAt.Sub(tx[15]); got < rtoMax || got > rtoMax+4096*sim.Millisecond {
		t.Errorf("aborted %v after the last retransmission, want TCP_RTO_MAX (%v) rounded up to the wheel", got, rtoMax)
	}
	t.Logf("first retransmission at %v, the 15th at %v, aborted at %v", tx[1], tx[15], st.AbortedAt)
}

// A SYN never answered: after the 10th retransmission (tcp_syn_retries 6
// + tcp_syn_linear_timeouts 4, at 67 s by TestSYNRetransmissionBackoff's
// schedule) the next timeout, 64 s later, times the connection out
// (tcp_write_timeout in SYN-SENT counts the retransmissions).
func TestSYNRetriesGiveUp(t *testing.T) {
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 10 * sim.Millisecond, size: 1448, opts: shLinuxOpts()}
	c := h.build(t)
	c.fwd.drop = func(p *packet.Packet, now sim.Time) bool { return true }
	c.runUntil(sim.Time(300 * sim.Second))
	var syns []sim.Time
	for _, x := range c.fwd.log {
		if x.flags&packet.SYN != 0 {
			syns = append(syns, x.at)
		}
	}
	if len(syns) != 11 {
		t.Fatalf("%d SYNs (%v), want the first and 10 retransmissions", len(syns), syns)
	}
	st := &c.snd.Stats
	if st.Aborted != AbortSYNRetries || st.SYNRetrans != 10 {
		t.Fatalf("Aborted = %q after %d SYN retransmissions, want %q after 10", st.Aborted, st.SYNRetrans, AbortSYNRetries)
	}
	if got := st.AbortedAt.Sub(syns[10]); got < 64*sim.Second || got > 64*sim.Second+4096*sim.Millisecond {
		t.Errorf("aborted %v after the last SYN, want 64 s rounded up to the timer wheel", got)
	}
	t.Logf("SYNs at %v, aborted at %v", syns, st.AbortedAt)
}

// tcp_pacing_delay subtracts two whole-nanosecond stamps, tcp_wstamp_ns and
// tcp_clock_cache, and tcp_reset_xmit_timer adds nsecs_to_jiffies of that
// to the timer. A departure 3,999,999,999 ps ahead of a clock 160 ps past a
// nanosecond ends 159 ps past one: 4,000,000 ns apart as the kernel's
// stamps are, a whole tick at HZ 250, where the picoseconds make less than
// one.
func TestPacingDelayBetweenNanosecondStamps(t *testing.T) {
	d := &DataSender{paced: true}
	d.st.Now = sim.Time(1_860_242_516_420_160)
	d.wstamp = d.st.Now + 3_999_999_999
	if got := d.pacingDelay(); got != 4*sim.Millisecond {
		t.Errorf("pacing delay %v, want 4 ms: the nanosecond stamps' difference", got)
	}
	d.wstamp = d.st.Now + 500 // within the clock's nanosecond
	if got := d.pacingDelay(); got != 0 {
		t.Errorf("pacing delay %v within one nanosecond, want 0", got)
	}
}
