package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A receiving application that stops reading closes the window; the
// sender probes it (tcp_probe_timer) and resumes the moment the window
// update arrives, with a real receiver answering the probes.
//
// Hand computation, with the RTO r fixed while nothing is acked (no RTT
// samples), one-way delay 20 ms and a 52-byte probe and ACK serialised in
// 4.16 µs at 100 Mbps each way:
//   - the first probe is due max(r, TCP_RTO_MIN) after the last ACK, the
//     one that left nothing in flight (tcp_check_probe_timer);
//   - the receiver answers probe k at once (tcp_send_dupack, window 0),
//     and that ACK re-arms the timer with the backoff the probe raised to
//     k (tcp_ack_probe): probe k+1 is due r·2^k after the ACK's arrival,
//     2·(20 ms + 4.16 µs) after probe k;
//   - each probe leaves when the timer wheel fires the timer due then
//     (wheelAt);
//   - the application reads again at 3 s: the read more than doubles the
//     window, so tcp_cleanup_rbuf sends a window update at once, and the
//     sender sends new data the instant it arrives, 3 s + 20 ms + 4.16 µs;
//   - if that window update is lost, the next probe, already due at
//     probe 3 + RTT + 8r, draws an ACK with the open window, and data
//     flows when it arrives, one RTT after that probe.
func TestZeroWindowProbeWithStalledReader(t *testing.T) {
	t.Run("update arrives", func(t *testing.T) { testStalledReader(t, false) })
	t.Run("update lost", func(t *testing.T) { testStalledReader(t, true) })
}

// stalledReader is an unpaced Reno transfer of 2 MB over 100 Mbps and 20
// ms each way to a receiver with a 64 KiB buffer whose application has
// stopped reading.
func stalledReader(t *testing.T) (shHarness, *shConn) {
	t.Helper()
	opts := shLinuxOpts()
	opts.Pacing = config.PacingOff
	opts.RcvBufInit, opts.RcvBufMax = 64*units.KiB, 64*units.KiB
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 2 * units.MB, opts: opts}
	c := h.build(t)
	c.rcv.readStopped = true
	return h, c
}

func testStalledReader(t *testing.T, loseUpdate bool) {
	h, c := stalledReader(t)
	const resume = sim.Time(3 * sim.Second)
	if loseUpdate {
		c.rev.drop = func(p *packet.Packet, now sim.Time) bool { return now == resume }
	}
	c.runUntil(resume)
	rto := max(c.snd.rto, rtoMin)
	c.rcv.readStopped = false
	c.rcv.appRead()
	c.runUntil(sim.Time(20 * sim.Second))

	var probes []sim.Time
	var lastData sim.Time
	for _, x := range c.fwd.log {
		// A probe is a bare ACK below snd_una; the handshake's ACK is at 1.
		if x.len == 0 && x.flags&packet.SYN == 0 && x.seq != 1 && (x.at < resume || loseUpdate && len(probes) < 4) {
			probes = append(probes, x.at)
		}
		if x.len > 0 && x.at < resume {
			lastData = x.at
		}
	}
	if len(probes) < 3 || loseUpdate && len(probes) != 4 {
		t.Fatalf("%d probes (%v), want 3 before the reader resumed, and a 4th if its update is lost", len(probes), probes)
	}
	if lastData > probes[0] {
		t.Fatalf("data sent at %v after the first probe at %v", lastData, probes[0])
	}
	var lastAck sim.Time
	for _, x := range c.rev.log {
		if x.arr <= probes[0] {
			lastAck = max(lastAck, x.arr)
		}
	}
	if want := wheelAt(1000, lastAck, rto); probes[0] != want {
		t.Errorf("first probe at %v, want the timer armed at the last ACK %v for RTO %v: %v", probes[0], lastAck, rto, want)
	}
	ackTx := units.TxTime(HeaderBytes, h.rate)
	for k := 1; k < len(probes); k++ {
		ack := probes[k-1].Add(2 * (h.owd + ackTx))
		if want := wheelAt(1000, ack, rto<<k); probes[k] != want {
			t.Errorf("probe %d at %v, want %v (armed at the answer to probe %d, %v, for %v·2^%d)", k+1, probes[k], want, k, ack, rto, k)
		}
	}
	update := resume.Add(h.owd + ackTx)
	if loseUpdate {
		update = probes[3].Add(2 * (h.owd + ackTx))
	}
	var firstAfter sim.Time
	for _, x := range c.fwd.log {
		if x.len > 0 && x.at >= resume {
			firstAfter = x.at
			break
		}
	}
	if firstAfter != update {
		t.Errorf("first data after the read at %v, want the window update's arrival %v", firstAfter, update)
	}
	if got := c.rcv.BytesDelivered(); got != h.size {
		t.Errorf("delivered %d bytes, want %d", got, h.size)
	}
	if c.snd.Stats.WindowProbes != uint64(len(probes)) {
		t.Errorf("WindowProbes = %d, want %d", c.snd.Stats.WindowProbes, len(probes))
	}
	t.Logf("RTO %v, probes at %v, data again at %v", rto, probes, firstAfter)
}

// wheelAt is when a timer_list armed at armed for when (whole ticks)
// fires at hz, by the table of kernel/time/timer.c: it is due at the tick
// it was armed in plus when, and fires at the first boundary after that of
// its level's buckets, 1 tick wide for delays under 63 ticks, 8 under 504,
// 64 under 4032 and 512 under 32256.
func wheelAt(hz int, armed sim.Time, when sim.Duration) sim.Time {
	tick := tickNsec(hz)
	gran := sim.Time(tick)
	for _, limit := range []sim.Duration{63, 504, 4032} {
		if when >= limit*tick {
			gran *= 8
		}
	}
	due := armed - armed%sim.Time(tick) + sim.Time(when)
	return (due/gran + 1) * gran
}

// tickNsec is the kernel's TICK_NSEC, (NSEC_PER_SEC + HZ/2)/HZ: 3,333,333
// ns at HZ 300.
func tickNsec(hz int) sim.Duration {
	return sim.Duration((1_000_000_000+hz/2)/hz) * sim.Nanosecond
}

// An on/off application writes only what the windows let the sender send
// now; with the receive window closed it still leaves one segment queued,
// as a blocking write would, so the persist timer runs. When the reader
// resumes and its window update is lost, the probes find the open window
// and the whole transfer completes; before, the application wrote nothing
// into a closed window, no probe ran, and the flow stopped for good.
func TestZeroWindowOnOffApplication(t *testing.T) {
	opts := shLinuxOpts()
	opts.Pacing = config.PacingOff
	opts.RcvBufInit, opts.RcvBufMax = 64*units.KiB, 64*units.KiB
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 2 * units.MB, opts: opts,
		app: config.AppPattern{Kind: config.OnOff, On: 10 * sim.Second, Off: sim.Millisecond}}
	c := h.build(t)
	c.rcv.readStopped = true
	const resume = sim.Time(3 * sim.Second)
	c.rev.drop = func(p *packet.Packet, now sim.Time) bool { return now == resume }
	c.runUntil(resume)
	c.rcv.readStopped = false
	c.rcv.appRead()
	c.runUntil(sim.Time(20 * sim.Second))
	if got := c.rcv.BytesDelivered(); got != h.size {
		t.Errorf("delivered %d bytes, want %d", got, h.size)
	}
	if c.snd.Stats.WindowProbes == 0 {
		t.Errorf("no window probe sent")
	}
}

// A window that reopens on data held behind it for more than an RTO, with
// nothing in flight, restarts the congestion window as a write after that
// long would (tcp_ack_update_window calls tcp_slow_start_after_idle_check
// when the window changes and the write queue is not empty): halved per
// RTO of idleness down to the initial window, ssthresh kept at least ¾ of
// the old cwnd (tcp_cwnd_restart). Zero-window probes carry no data, so
// they do not count as sending (tcp_event_data_sent). Here the reader
// stops for about 3 s, more than ten RTOs.
func TestWindowReopenAfterIdleRestartsCwnd(t *testing.T) {
	h, c := stalledReader(t)
	const resume = sim.Time(3 * sim.Second)
	c.runUntil(resume)
	before, ssBefore := c.snd.st.CwndPkts, c.snd.st.SSThreshPkts
	if before <= 10 || c.snd.sb.packetsOut() != 0 {
		t.Fatalf("cwnd %d with %d packets out before the read: want a window above the initial 10, nothing in flight", before, c.snd.sb.packetsOut())
	}
	c.rcv.readStopped = false
	c.rcv.appRead()
	// The window update arrives one way later; stop before the data it
	// releases is acknowledged.
	c.runUntil(resume.Add(h.owd + sim.Millisecond))
	if got := c.snd.st.CwndPkts; got != 10 {
		t.Errorf("cwnd after the window reopened = %d, want the initial window 10 (it was %d)", got, before)
	}
	if want := max(ssBefore, before*3/4); c.snd.st.SSThreshPkts != want {
		t.Errorf("ssthresh = %d, want max(%d, ¾·%d) = %d", c.snd.st.SSThreshPkts, ssBefore, before, want)
	}
}

// tcp_ack_probe clears the probes' backoff and the persist timer only when
// the window takes the send head's skb whole; a window that opens on part
// of a 10-segment skb restarts the persist timer with the backoff kept
// (tcp_data_snd_check then sends what fits, and its RTO takes over).
func TestAckProbeWantsTheWholeHeadSkb(t *testing.T) {
	d, _ := wiredSender(config.DefaultTCPOptions())
	first := d.sndNxt
	d.endSeq = first + 10*d.mss // the flow's last bytes, queued as one skb
	d.writeSeq = d.endSeq
	d.wq = unmarkedQueue(d.endSeq)
	d.backoff = 3
	d.resetXmitTimer(timeProbe0, d.probe0When(rtoMax), rtoMax)
	d.sndWnd = 5 * d.mss
	d.ackProbe()
	want := d.rtt.hz.jiffies(d.st.Now) + int64(8*sim.Second/d.rtt.hz.jiffy()) // the initial RTO of 1 s, backed off thrice
	if d.backoff != 3 || d.pending != timeProbe0 || d.xmitTimer.expires != want {
		t.Errorf("half the skb open: backoff %d, timer %v at tick %d; want 3 and the persist timer at %d",
			d.backoff, pendingNames[d.pending], d.xmitTimer.expires, want)
	}
	d.sndWnd = 10 * d.mss
	d.ackProbe()
	if d.backoff != 0 || d.pending != timeNone {
		t.Errorf("the skb open: backoff %d, timer %v; want 0 and none", d.backoff, pendingNames[d.pending])
	}
}
