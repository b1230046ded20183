package tcp

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// A fixed-rate application is the bottleneck of a fast path: the receiver
// gets the application's rate, and the sender marks its rate samples
// app-limited (tcp_rate_check_app_limited) since it never has a full
// segment waiting while cwnd is open.
func TestRateAppIsAppLimited(t *testing.T) {
	const appRate = 10 * units.Mbps
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: shLinuxOpts(),
		app: config.AppPattern{Kind: config.AppRate, Rate: appRate}}
	c := h.build(t)
	c.runUntil(sim.Time(sim.Second))
	before := c.rcv.BytesDelivered()
	c.runUntil(sim.Time(6 * sim.Second))
	got := float64(c.rcv.BytesDelivered()-before) * 8 / 5
	if got < 0.98*float64(appRate) || got > 1.02*float64(appRate) {
		t.Errorf("delivered %.4g bps over 5 s, want the app rate %v ± 2%%", got, appRate)
	}
	if !c.snd.rate.RateAppLimited {
		t.Errorf("last rate sample not app-limited, want app-limited")
	}
}

// compareOpts are a scenario flow's options as `ccscope compare` ran the
// simulator beside the kernel (HZ 250), with tcp_wmem[2] at sndbuf.
func compareOpts(sndbuf units.Bytes) config.TCPOptions {
	o := config.DefaultTCPOptions()
	o.HZ = 250
	o.SndBuf = sndbuf
	return o
}

// The send buffer bounds what a writer may queue only when it needs a new
// skb: tcp_sendmsg_locked tops up the tail skb unchecked, and while that
// skb is the send head tcp_push_one sends a TSO chunk off it after each
// top-up (topUp). A greedy writer that fills its buffer while cwnd has room
// so keeps the sender going past the buffer, until cwnd or the receive
// window stops it with the tail left full; then it sleeps until
// sk_stream_write_space wakes it, once the room is at least half what is
// queued (two thirds of the buffer). The kernel beside the simulator
// (`compare p-rtr-p`, Reno, tcp_wmem[2] 128 KB, 100 Mbps over 40 ms, HZ
// 250, 6 s, every run recorded): 40.6–42.2 Mbps, where 2/3 ·
// sndbuf/RTT, what a writer stopped at its buffer makes, is 17.1. The test
// runs that path and holds the simulator to the kernel's range ± 2 %.
func TestSndBufTopUp(t *testing.T) {
	opts := compareOpts(128 * units.KB)
	c := prtrp{cc: "reno", rate: 100 * units.Mbps, opts: opts}.build(t)
	d := c.snd
	b := uint64(opts.SndBuf)
	const end = sim.Time(6 * sim.Second)
	var maxOut uint64
	for c.s.StepUntil(1, end) > 0 {
		maxOut = max(maxOut, d.sndNxt-d.sndUna)
		// Past the buffer, only the send head's skb waits unsent: at most
		// a size goal, sk_gso_max_size (65,215 bytes) in whole segments.
		if d.writeSeq-d.sndUna > b && d.writeSeq-d.sndNxt > 45*1448 {
			t.Fatalf("at %v: %d bytes queued of a %d-byte buffer, %d unsent: more than the send head's skb (45 segments)",
				c.s.Now(), d.writeSeq-d.sndUna, b, d.writeSeq-d.sndNxt)
		}
	}
	c.runUntil(end)
	if maxOut <= b {
		t.Errorf("at most %d bytes in flight: never past the %d-byte buffer", maxOut, b)
	}
	if got := c.goodput(); got < 0.98*40.6e6 || got > 1.02*42.2e6 {
		t.Errorf("goodput %.2f Mbps over 6 s, want the kernel's 40.6–42.2 ± 2 %%", got/1e6)
	}
}

// The send buffer grows with cwnd as the kernel's does (tcp_sndbuf_expand):
// tcp_wmem[1] at first, then two windows of max(10, cwnd) segments (three
// for BBR) at per_mss bytes each, the worst case of an skb per segment: the
// MSS with its timestamp option, MAX_TCP_HEADER and skb_shared_info rounded
// up to a power of two, and the sk_buff, 2,304 bytes at MSS 1448. It grows
// only while the writer is blocked on it and cwnd is not all in flight
// (tcp_new_space), never shrinks, and stops at tcp_wmem[2]: every value it
// takes is that product at the cwnd of the ACK that expands it, capped.
func TestSndBufExpands(t *testing.T) {
	for _, c := range []struct {
		cc     string
		mss    units.Bytes
		factor uint64 // sndbuf_expand: 2, or bbr_sndbuf_expand's 3
		perMSS uint64
	}{
		{"reno", 1448, 2, 2304},
		{"cubic", 1448, 2, 2304},
		{"bbr", 1448, 3, 2304},
		{"reno", 8948, 2, 16640}, // 8,960 + 256 + 320 → 16,384, + 256
	} {
		t.Run(fmt.Sprintf("%s/%d", c.cc, c.mss), func(t *testing.T) {
			opts := shLinuxOpts()
			opts.MSS = c.mss
			opts.SndBuf = 1 * units.MB
			h := shHarness{cc: c.cc, rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: opts}
			conn := h.build(t)
			d := conn.snd
			for d.state != sndEstablished {
				if conn.s.Step(1) == 0 {
					t.Fatal("no handshake")
				}
			}
			if want := c.factor * 10 * c.perMSS; d.sndBuf != want {
				t.Fatalf("sk_sndbuf %d after the handshake, want %d · 10 · %d = %d", d.sndBuf, c.factor, c.perMSS, want)
			}
			last, grew := d.sndBuf, 0
			for conn.s.Now() < sim.Time(2*sim.Second) && conn.s.Step(1) > 0 {
				if d.sndBuf == last {
					continue
				}
				grew++
				cwnd := uint64(d.st.CwndPkts)
				if want := min(c.factor*max(10, cwnd)*c.perMSS, uint64(opts.SndBuf)); d.sndBuf < last || d.sndBuf != want {
					t.Fatalf("at %v, cwnd %d: sk_sndbuf %d after %d, want min(%d · %d · %d, tcp_wmem[2]) = %d",
						conn.s.Now(), cwnd, d.sndBuf, last, c.factor, max(10, cwnd), c.perMSS, want)
				}
				last = d.sndBuf
			}
			if last != uint64(opts.SndBuf) || grew < 2 {
				t.Errorf("sk_sndbuf %d after 2 s of a greedy writer and %d expansions, want tcp_wmem[2] = %d", last, grew, opts.SndBuf)
			}
		})
	}
}

// Measured on Linux 6.18 (bpftrace on tcp:tcp_probe, sk_sndbuf and
// sk_wmem_queued at every ACK), Reno with a 128,000-byte tcp_wmem[2] on
// p-rtr-p (100 Mbps over 40 ms, unpaced): sk_sndbuf 46,080 at the first
// ACK (2 · 10 · 2,304) and 101,376 from cwnd 22 (2 · 22 · 2,304), both
// expanded at an ACK that found the writer blocked and nothing left
// unsent; then the 128,000 cap at the ACK that took cwnd from 32 to 34,
// which came with 49,232 bytes unsent (tcp_probe reads the state an ACK
// finds; with a 4 MiB tcp_wmem the buffer grew at the same ACK, and the
// next found 43,440). That one is tcp_event_new_data_sent's
// tcp_check_space: the ACK's push sent two chunks, and the first left cwnd
// room behind it (checkSpace). Until 2026-12-06 the simulator grew the
// buffer only after the whole push, as tcp_data_snd_check does, and
// reached the cap at cwnd 50; the difference was put down to the host send
// path. The test holds the three expansions and that every expansion
// comes while the writer is blocked.
func TestSndBufExpandsAsKernel(t *testing.T) {
	c := prtrp{cc: "reno", rate: 100 * units.Mbps, opts: compareOpts(128000)}.build(t)
	d := c.snd
	c.establish(t)
	if d.sndBuf != 46080 {
		t.Errorf("sk_sndbuf %d after the handshake, want the kernel's 46,080", d.sndBuf)
	}
	var at22 bool
	var unsentBefore, unsent uint64
	last := d.sndBuf
	for d.st.SSThreshPkts > d.st.CwndPkts && d.sndBuf < 128000 && c.s.Now() < sim.Time(sim.Second) {
		asleep := d.appAsleep
		unsentBefore = d.writeSeq - d.sndNxt
		if c.s.Step(1) == 0 {
			break
		}
		if cwnd := d.st.CwndPkts; cwnd >= 22 && !at22 {
			at22 = true
			if d.sndBuf != 101376 {
				t.Errorf("at %v, cwnd %d: sk_sndbuf %d, want the kernel's 101,376 from cwnd 22", c.s.Now(), cwnd, d.sndBuf)
			}
		}
		if d.sndBuf != last && !asleep {
			t.Errorf("at %v: sk_sndbuf %d → %d with the writer awake; want it only for a blocked writer", c.s.Now(), last, d.sndBuf)
		}
		last = d.sndBuf
	}
	unsent = d.writeSeq - d.sndNxt
	if !at22 || d.sndBuf != 128000 || d.st.CwndPkts != 34 || unsentBefore != 49232 || unsent != 43440 {
		t.Errorf("slow start passed cwnd 22: %v; sk_sndbuf %d at cwnd %d, at an ACK that came with %d bytes unsent and left %d; want the cap, 128,000, at cwnd 34, 49,232 and 43,440, as on the kernel",
			at22, d.sndBuf, d.st.CwndPkts, unsentBefore, unsent)
	}
}

// A woken writer's top-up ends at its first forced push (tcp_sendmsg_locked's
// forced_push: half the largest window the receiver offered written since
// the push mark that tcp_push set as the writer went to sleep, or at its
// call's end), where __tcp_push_pending_frames empties the write queue and
// the next write waits for memory. forced_push is checked once an skb is
// full, so a wake-up writes at most half the window and the skb that
// crossed it (a size goal, at most 45 segments). Measured on Linux 6.18
// (bpftrace on tcp:tcp_probe, write_seq and snd_wnd), Reno with a 128 KB
// tcp_wmem on p-rtr-p (100 Mbps over 40 ms, unpaced), in slow start:
// wake-ups of 183–190 segments with a 550,144-byte window (half of it is
// 190.0 segments) and cwnd at 379–395, of 419 with a 1.2 MB window (half:
// 414) and cwnd at 588, and one that stopped at exactly a call's end (1 MiB
// of writes) with cwnd at 570. The simulator's receiver has offered a
// larger window by then (571,392 and 1,283,072 bytes, 4 and 7 % more: its
// flow runs a little ahead, see TestSndBufExpandsAsKernel), so the test
// holds its wake-ups at those cwnds (± 5 %) to the kernel's share of half
// the window (183/190.0 to 190/190.0, 419/414) ± 5 %.
func TestSndBufForcedPush(t *testing.T) {
	c := prtrp{cc: "reno", rate: 100 * units.Mbps, opts: compareOpts(128 * units.KB)}.build(t)
	d := c.snd
	kernel := []struct {
		cwndLo, cwndHi   uint64
		shareLo, shareHi float64 // segments written over half the window's
		callEnd          bool
		found            bool
	}{
		{379, 395, 183 / 190.0, 190 / 190.0, false, false},
		{588, 588, 419 / 414.0, 419 / 414.0, false, false},
		{570, 570, 0, 0, true, false},
	}
	c.establish(t)
	for d.st.SSThreshPkts > d.st.CwndPkts && c.s.Now() < sim.Time(sim.Second) { // slow start
		before, asleep := d.writeSeq, d.appAsleep
		if c.s.Step(1) == 0 {
			break
		}
		if d.writeSeq == before || !asleep {
			continue
		}
		// A call's end marks the push too (tcp_push), so the count starts
		// again at a call begun within the wake-up.
		from := max(before, d.callStart(d.callOf(d.writeSeq)))
		if lim := d.maxWnd/2 + 45*1448; d.writeSeq-from > lim {
			t.Errorf("at %v: %d bytes written since a push mark, more than half the %d-byte window and a 45-segment skb", c.s.Now(), d.writeSeq-from, d.maxWnd)
		}
		segs, cwnd := (d.writeSeq-before)/1448, uint64(d.st.CwndPkts)
		callEnd := d.callStart(d.callOf(d.writeSeq)) == d.writeSeq
		for i := range kernel {
			k := &kernel[i]
			if k.callEnd != callEnd || 20*cwnd < 19*k.cwndLo || 20*cwnd > 21*k.cwndHi {
				continue
			}
			k.found = true
			half := float64(d.maxWnd) / 2 / 1448 // segments
			if share := float64(segs) / half; !callEnd && (share < 0.95*k.shareLo || share > 1.05*k.shareHi) {
				t.Errorf("at %v, cwnd %d: woke and wrote %d segments, %.3f of half the %d-byte window; want the kernel's %.3f–%.3f (cwnd %d–%d) ± 5 %%",
					c.s.Now(), cwnd, segs, share, d.maxWnd, k.shareLo, k.shareHi, k.cwndLo, k.cwndHi)
			}
		}
	}
	for _, k := range kernel {
		if !k.found {
			t.Errorf("no wake-up in slow start at cwnd %d–%d ± 5 %% (ending a call: %v), as the kernel's", k.cwndLo, k.cwndHi, k.callEnd)
		}
	}
}

// A greedy writer held back by its send buffer, not by cwnd, is marked
// app-limited once per write call: tcp_sendmsg_locked checks
// (tcp_rate_check_app_limited) before it queues anything, and a call that
// sleeps in sk_stream_wait_memory goes on without a check. The writer's
// calls are 1 MiB and the 128 KB buffer holds the flow (unpaced Reno), so
// each call ends in a refill whose tail goes out at once: the next call
// starts with nothing unsent and cwnd open. The kernel (emulate p-rtr-p,
// Reno, 100 Mbps, 40 ms, 128 KB; tp->app_limited read with bpftrace at
// every ACK) marked its flow every 190 ms, 32 times in the 6 s traced:
// once per MiB written. The test runs that path and wants, once slow
// start's recoveries are over (from 2 s to 6 s), a mark per call (± 1),
// 190 ms ± 2 % apart. The simulator marked it only at its first write
// before 2026-12-04.
func TestSndBufCallEndsAppLimited(t *testing.T) {
	c := prtrp{cc: "reno", rate: 100 * units.Mbps, opts: compareOpts(128 * units.KB)}.build(t)
	c.runUntil(sim.Time(2 * sim.Second))
	written := c.snd.writeSeq
	marks, was := 0, c.snd.rate.AppLimited
	var last sim.Time
	for c.s.StepUntil(1, sim.Time(6*sim.Second)) > 0 {
		if is := c.snd.rate.AppLimited; is != was && is != 0 {
			marks++
			if gap := c.s.Now().Sub(last); last != 0 && (gap < 186200*sim.Microsecond || gap > 193800*sim.Microsecond) {
				t.Errorf("app-limited marks at %v and %v, %v apart; want the kernel's 190 ms ± 2 %%", last, c.s.Now(), gap)
			}
			last = c.s.Now()
		}
		was = c.snd.rate.AppLimited
	}
	calls := int(c.snd.callOf(c.snd.writeSeq) - c.snd.callOf(written))
	t.Logf("%d app-limited marks over %d write calls", marks, calls)
	if calls < 10 || marks < calls-1 || marks > calls+1 {
		t.Errorf("app-limited marks %d over %d write calls from 2 s to 6 s; want one per call, as the kernel's", marks, calls)
	}
	if c.snd.sb.inFlight() >= c.snd.st.CwndPkts {
		t.Errorf("in flight %d ≥ cwnd %d: the flow is cwnd-limited, not buffer-limited", c.snd.sb.inFlight(), c.snd.st.CwndPkts)
	}
}

// The same with the default buffer on a path whose window is larger
// (Reno, 100 Mbps, 300 ms): the writer wakes with a third of the buffer
// free, 1.3 MB, so a refill crosses the end of one 1 MiB call or two. The
// part up to each goes out at once (unpaced, cwnd open), so each call
// begun inside a refill starts with nothing unsent (newCalls). The kernel
// (emulate p-rtr-p, 12 s, bpftrace as above, with that day's defaults:
// tcp_wmem[2] 4 MB, 4,000,000 bytes, and tcp_rmem[2] 6 MiB) set
// tp->app_limited to 62 distinct values over the 64 calls its writer
// began from 4 to 12 s, with goodput 57.89 Mbps. The test runs that path
// and wants as large a share of calls begun app-limited, and the goodput
// ± 2 %. Calls begun within one event share its last mark, so marks are
// counted by the calls whose event set one.
func TestSndBufRefillCrossingCallEndsAppLimited(t *testing.T) {
	opts := compareOpts(4 * units.MB)
	opts.RcvBufMax = 6 * units.MiB
	c := prtrp{cc: "reno", rate: 100 * units.Mbps, rtt: 300 * sim.Millisecond, opts: opts}.build(t)
	c.runUntil(sim.Time(4 * sim.Second))
	first := c.snd.callOf(c.snd.writeSeq)
	marked := 0
	const end = sim.Time(12 * sim.Second)
	for {
		call, al := c.snd.callOf(c.snd.writeSeq), c.snd.rate.AppLimited
		if c.s.StepUntil(1, end) == 0 {
			break
		}
		if c.snd.rate.AppLimited != al && c.snd.rate.AppLimited != 0 {
			marked += int(c.snd.callOf(c.snd.writeSeq) - call)
		}
	}
	c.runUntil(end)
	calls := int(c.snd.callOf(c.snd.writeSeq) - first)
	t.Logf("%d of %d write calls begun app-limited", marked, calls)
	if calls < 40 || 64*marked < 62*calls {
		t.Errorf("%d of %d write calls from 4 s to 12 s began app-limited; want at least the kernel's share, 62 of 64", marked, calls)
	}
	if got := c.goodput(); got < 0.98*57.89e6 || got > 1.02*57.89e6 {
		t.Errorf("goodput %.2f Mbps over 12 s, want the kernel's 57.89 ± 2 %%", got/1e6)
	}
}

// An application that goes quiet for longer than the RTO restarts from a
// smaller window (tcp_slow_start_after_idle_check → tcp_cwnd_restart,
// RFC 2861 §3): with C the window before the pause, Δ the time since the
// last send and R the RTO, the kernel halves C once for every further R in
// Δ (while ((Δ -= R) > 0 && cwnd > restart) cwnd >>= 1), never below
// min(IW, C), and sets ssthresh = max(ssthresh, 3C/4).
func TestSlowStartAfterIdle(t *testing.T) {
	opts := shLinuxOpts()
	opts.RcvBufMax = 512 * units.KiB // keep cwnd modest and the path queue-free
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: opts,
		app: appOnOff(2*sim.Second, 600*sim.Millisecond)}
	c := h.build(t)
	d := c.snd
	// Run to just before the first off period ends (the connection is up
	// at ~40 ms; off starts at ~2.04 s and ends at ~2.64 s).
	var before, ssBefore uint32
	var lastSend sim.Time
	var rto sim.Duration
	for c.s.Now() < sim.Time(5*sim.Second) {
		wasOn := d.appOn
		if !wasOn {
			before, ssBefore, lastSend, rto = d.st.CwndPkts, d.st.SSThreshPkts, d.lsndTime, d.rto
		}
		if c.s.Step(1) == 0 {
			break
		}
		if !wasOn && d.appOn {
			break // the on period just started: the restart has happened
		}
	}
	if !d.appOn || before == 0 {
		t.Fatalf("no off → on transition observed")
	}
	idle := c.s.Now().Sub(lastSend)
	want := before
	restart := min(uint32(10), before)
	for delta := idle - rto; delta > 0 && want > restart; delta -= rto {
		want >>= 1
	}
	want = max(want, restart)
	wantSS := max(ssBefore, before>>1+before>>2)
	t.Logf("cwnd %d before %v idle (rto %v): restarted at %d", before, idle, rto, d.st.CwndPkts)
	if idle <= rto {
		t.Fatalf("idle %v not longer than the RTO %v", idle, rto)
	}
	if d.st.CwndPkts != want || d.st.SSThreshPkts != wantSS {
		t.Errorf("after the restart cwnd, ssthresh = %d, %d; want %d, %d", d.st.CwndPkts, d.st.SSThreshPkts, want, wantSS)
	}
}

// A pacing-rate action paces even a flow the kernel would not pace
// (CUBIC, no fq): setsockopt(SO_MAX_PACING_RATE), as a BPF program or tool
// sets it, moves sk_pacing_status to SK_PACING_NEEDED. At 10 Mbps on a
// 100 Mbps path the receiver then gets 10 Mbps (±3%).
func TestPacingRateActionPacesUnpacedFlow(t *testing.T) {
	opts := shLinuxOpts()
	opts.Pacing = config.PacingAuto
	h := shHarness{cc: "cubic", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: opts}
	c := h.build(t)
	c.runUntil(sim.Time(500 * sim.Millisecond))
	if c.snd.paced {
		t.Fatalf("cubic without fq is paced before the action, want SK_PACING_NONE")
	}
	c.snd.SetPacingRate(10 * units.Mbps)
	c.runUntil(sim.Time(sim.Second))
	before := c.rcv.BytesDelivered()
	c.runUntil(sim.Time(3 * sim.Second))
	got := float64(c.rcv.BytesDelivered()-before) * 8 / 2
	if got < 0.97*10e6 || got > 1.03*10e6 {
		t.Errorf("delivered %.4g bps after a 10 Mbps pacing action, want 10 Mbps ± 3%%", got)
	}
}

// tcp_sendmsg ends every write with tcp_push, which marks the write's last
// segment PSH (tcp_mark_push), and a receiver that reads a pushed segment
// and so empties its queue ACKs at once (tcp_cleanup_rbuf) rather than
// after the delayed-ACK timer. A rate application writes a segment at a
// time: every segment carries PSH, and after the 16 quick ACKs each is
// still ACKed on arrival, so srtt stays at the path's RTT (the real kernel
// with this application on a 40 ms path: srtt 40.66 ms). Without PSH each
// ACK waited 40 ms more (srtt 84 ms there). A sized flow is one write:
// only its last segment carries PSH.
func TestPushMarksWriteEnds(t *testing.T) {
	const owd = 20 * sim.Millisecond
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: owd, opts: shLinuxOpts(),
		app: config.AppPattern{Kind: config.AppRate, Rate: 115840}} // a segment every 100 ms
	c := h.build(t)
	c.runUntil(sim.Time(5 * sim.Second))
	segs := 0
	for _, x := range c.fwd.log {
		if x.len > 0 {
			segs++
			if x.flags&packet.PSH == 0 {
				t.Fatalf("rate application: segment at seq %d sent at %v without PSH", x.seq, x.at)
			}
		}
	}
	if segs < 45 {
		t.Fatalf("rate application sent %d segments in 5 s, want about 50", segs)
	}
	if srtt := c.snd.rtt.srtt(); srtt > 2*owd+sim.Millisecond {
		t.Errorf("rate application: srtt %v after %d segments, want the RTT %v (ACKs at once, not delayed)", srtt, segs, 2*owd)
	}

	const n = 21
	h = shHarness{cc: "reno", rate: 100 * units.Mbps, owd: owd, opts: shLinuxOpts(), size: n * 1448}
	c = h.build(t)
	c.runUntil(sim.Time(sim.Second))
	var lastSeg shSent
	for _, x := range c.fwd.log {
		if x.len > 0 {
			lastSeg = x
		}
	}
	if lastSeg.seq != seqOfSeg(n-1) || lastSeg.flags&packet.PSH == 0 {
		t.Errorf("sized flow of %d segments: its last segment (seq %d) leaves without PSH", n, seqOfSeg(n-1))
	}
	// The other PSH marks end multi-segment TSO chunks (TestChunkEndsCarryPSH).
	checkChunkPushes(t, c.fwd.log, int64(seqOfSeg(n-1))+1448)
}

// While on, an on/off application keeps up with its socket as one with
// TCP_NOTSENT_LOWAT = 16 KB does: tcp_sendmsg checks the mark only when a
// write needs a new skb, so the application writes whole skbs while the
// sender takes them, until at least 16 KB wait unsent, and
// tcp_stream_memory_free wakes it only once fewer than 8 KB wait. By
// hand: with the peer's window over 130 KB, tcp_xmit_size_goal is
// sk_gso_max_size, 65215 bytes, 45 segments (65,160 bytes), at least
// 16 KB: no more than 45 segments ever wait unsent, the application never
// writes while it sleeps with 8 KB or more unsent (it wakes at the send
// that leaves less), and it falls asleep only with 16 KB or more unsent.
func TestOnOffWriterKeepsUpWithItsSocket(t *testing.T) {
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, opts: shLinuxOpts(),
		app: appOnOff(3*sim.Second, sim.Second)}
	c := h.build(t)
	c.runUntil(sim.Time(sim.Second))
	d := c.snd
	if d.maxWnd < 2*65215 || d.xmitSizeGoal() != 45*1448 {
		t.Fatalf("peer's largest window %d B, size goal %d B; want over 130 KB and 45 segments", d.maxWnd, d.xmitSizeGoal())
	}
	writes, sleeps := 0, 0
	for c.s.Now() < sim.Time(2*sim.Second) {
		before, nxt, unsent, asleep := d.writeSeq, d.sndNxt, d.writeSeq-d.sndNxt, d.appAsleep
		if c.s.Step(1) == 0 {
			t.Fatal("the run stopped")
		}
		if n := d.writeSeq - d.sndNxt; n > 45*1448 {
			t.Fatalf("at %v %d B wait unsent, want at most 45 segments", c.s.Now(), n)
		}
		if d.writeSeq == before {
			continue
		}
		writes++
		// A send within the step may have woken it (tcp_event_new_data_sent's
		// tcp_check_space, writeThenSend): what waited unsent when it wrote
		// is at most what waited before less what the step sent.
		if sent := d.sndNxt - nxt; asleep && 2*(unsent-min(unsent, sent)) >= onOffLowat {
			t.Fatalf("at %v the application wrote while asleep with %d B unsent and %d B sent since, want fewer than 8 KB left", c.s.Now(), unsent, sent)
		}
		if d.appAsleep {
			sleeps++
			if n := d.writeSeq - d.sndNxt; n < onOffLowat {
				t.Fatalf("at %v the application went back to sleep with %d B unsent, want at least 16 KB", c.s.Now(), n)
			}
		}
	}
	if writes < 10 || sleeps < 10 {
		t.Errorf("%d writes, %d of them ending asleep, in a second of the on period; want many", writes, sleeps)
	}
}

// A call that ends in a sub-MSS remnant leaves it in the tail skb while
// the Nagle test holds it, and the next call tops that skb up without
// checking the send buffer: Reno's writer with 128 KiB calls into a 128 KB
// buffer (p-rtr-p, 100 Mbps over 40 ms, HZ 250) writes on past the buffer
// to cwnd, as the kernel's did (bpftrace: 293 segments in flight and
// sk_wmem_queued 513,944 bytes, four buffers). With calls of exactly
// 90 MSS nothing is left over, each call's end needs a new skb, and the
// writer sleeps on its full buffer: it writes a call only while
// sk_wmem_queued is under the buffer, so in flight stays within the buffer
// and a call, (128,000 + 130,320) / 1448 = 178 segments, and the kernel's
// flow made 23.23 Mbps over 6 s with no loss (`compare`).
func TestSndBufCallRemnantTopsUp(t *testing.T) {
	run := func(write units.Bytes) *prtrpConn {
		return prtrp{cc: "reno", rate: 100 * units.Mbps, opts: compareOpts(128 * units.KB),
			app: config.AppPattern{Kind: config.Greedy, Write: write}}.build(t)
	}

	// 128 KiB calls: once slow start's recoveries are over (2 s), in flight
	// reaches cwnd in every half second, and with the kernel's 293 in
	// flight sk_wmem_queued reaches its 513,944 bytes ± 5 %.
	c := run(128 * units.KiB)
	d := c.snd
	c.runUntil(sim.Time(2 * sim.Second))
	var peak, peakCwnd uint32
	var queued293 uint64
	for half := sim.Time(2500 * sim.Millisecond); c.s.StepUntil(1, sim.Time(10*sim.Second)) > 0; {
		if in := d.sb.inFlight(); in > peak {
			peak, peakCwnd = in, d.st.CwndPkts
		}
		if d.sb.inFlight() == 293 {
			queued293 = max(queued293, d.sndQueued(d.writeSeq))
		}
		if c.s.Now() >= half {
			if peak < peakCwnd {
				t.Errorf("128 KiB calls: at most %d segments in flight in the half second to %v, cwnd %d; want the writer on to cwnd", peak, half, peakCwnd)
			}
			peak, half = 0, half+sim.Time(500*sim.Millisecond)
		}
	}
	if 20*queued293 < 19*513944 || 20*queued293 > 21*513944 {
		t.Errorf("128 KiB calls: sk_wmem_queued at most %d bytes with 293 segments in flight, want the kernel's 513,944 ± 5 %%", queued293)
	}

	// 90-MSS calls.
	c = run(90 * 1448)
	var most uint32
	for c.s.StepUntil(1, sim.Time(6*sim.Second)) > 0 {
		most = max(most, c.snd.sb.inFlight())
	}
	c.runUntil(sim.Time(6 * sim.Second))
	if most > 178 {
		t.Errorf("90-MSS calls: %d segments in flight; want at most the buffer and a call, 178", most)
	}
	if got, re := c.goodput(), c.snd.Stats.Retransmits; got < 0.98*23.23e6 || got > 1.02*23.23e6 || re != 0 {
		t.Errorf("90-MSS calls: %.2f Mbps, %d retransmissions over 6 s; want the kernel's 23.23 ± 2 %% and none", got/1e6, re)
	}
}

// A greedy writer's calls, as the byte stream counts them: call k writes
// bytes k·W to (k+1)·W − 1 from sequence 1, its start rounded down to a
// whole segment as the application writes whole segments. callOf is the
// call a sequence lies in, the inverse of callStart whatever W: 128 KiB
// (90 MSS and 752 bytes at MSS 1448), exactly 90 MSS, the default 1 MiB,
// one MSS and a prime.
func TestCallArithmetic(t *testing.T) {
	for _, w := range []units.Bytes{128 * units.KiB, 90 * 1448, units.MiB, 1448, 100003} {
		d := &DataSender{cfg: SenderConfig{App: config.AppPattern{Kind: config.Greedy, Write: w}}, mss: 1448}
		for k := uint64(1); k < 2000; k++ {
			start := d.callStart(k)
			if want := 1 + k*uint64(w)/1448*1448; start != want {
				t.Fatalf("W %v: callStart(%d) = %d, want %d", w, k, start, want)
			}
			if got := d.callOf(start); got != k {
				t.Fatalf("W %v: callOf(callStart(%d) = %d) = %d", w, k, start, got)
			}
			if got := d.callOf(start - 1); got != k-1 {
				t.Fatalf("W %v: callOf(%d), the byte before call %d, = %d", w, start-1, k, got)
			}
		}
	}
}

// A writer whose calls are shorter than a segment (8 KiB calls at an MSS
// of 8,948) writes on: its calls, rounded down to whole segments, can
// start where the next starts, and callOf takes the last of them, so each
// call the writer makes ends past where it starts. The config refuses such
// calls (app.write below the MSS), but the transmit-loop harness, which
// builds its senders directly, drew them (2026-12-07): a call that ended
// where it began stopped the writer for good, the flow stalled at 10
// segments with nothing in flight, and the liveness check said so.
func TestWritesShorterThanASegment(t *testing.T) {
	const write = 8 * units.KiB
	opts := shLinuxOpts()
	opts.MSS = 8948
	d := &DataSender{cfg: SenderConfig{App: config.AppPattern{Kind: config.Greedy, Write: write}}, mss: 8948}
	for seq := uint64(1); seq < 2_000_000; seq += 8948 {
		if k := d.callOf(seq); d.callStart(k+1) <= seq || d.callStart(k) > seq {
			t.Fatalf("callOf(%d) = %d, whose calls span [%d, %d)", seq, k, d.callStart(k), d.callStart(k+1))
		}
	}
	size := 200 * 8948 * units.Bytes(1)
	c := shHarness{cc: "reno", rate: 20 * units.Mbps, owd: 10 * sim.Millisecond, size: size, opts: opts,
		app: config.AppPattern{Kind: config.Greedy, Write: write}}.build(t)
	c.runUntil(sim.Time(5 * sim.Second))
	if got := c.rcv.BytesDelivered(); got != size {
		t.Errorf("delivered %d of %d bytes: the writer stopped at write_seq %d", got, size, c.snd.writeSeq)
	}
}

// The remnant pushRemnant weighs is the one of the call that ends where it
// is asked: call k ends k·W bytes into the stream. With 128 KiB calls,
// 181 of them are 23,724,032 bytes, exactly 16,384 segments of 1448: the
// call ending at callStart(181) leaves nothing to hold, and the one ending
// at callStart(180) leaves 696 bytes, held while a small segment is out.
func TestPushRemnantOfTheEndingCall(t *testing.T) {
	d := &DataSender{cfg: SenderConfig{App: config.AppPattern{Kind: config.Greedy, Write: 128 * units.KiB}}, mss: 1448}
	d.sndUna, d.sndNxt, d.smlSeq = 1, 1<<40, 1<<40 // a small segment unacked
	if d.pushRemnant(d.callStart(181)) {
		t.Error("call 181's end held a remnant; 181 calls of 128 KiB are whole segments")
	}
	if !d.pushRemnant(d.callStart(180)) {
		t.Error("call 180's end sent its 696-byte remnant while a small segment was unacked")
	}
}

// A greedy writer's first call into the 46,080-byte buffer of a new
// connection sends each skb as it fills it (writeCall), as
// tcp_sendmsg_locked does: the skb of 22 segments (half the 65,160-byte
// window) goes out in part at once (tcp_push_one splits it), the rest is
// topped up, and forced_push or the buffer ends the call. The kernel's
// write_seq and sk_wmem_queued at the first ACK (bpftrace on tcp:tcp_probe,
// Linux 6.18, the emulator's hosts, 2026-12-06): Reno with IW 10 over 46.2
// ms wrote 32 segments (10 of them sent, in chunks of 2); CUBIC with IW 1
// over 73.7 ms wrote 45 and held 67,656 bytes, 3 skbs. Writing whole skbs
// before sending any wrote 44 in both.
func TestFirstWriteAsKernel(t *testing.T) {
	for _, tc := range []struct {
		cc       string
		iw       uint32
		rate     units.BitRate
		rtt      sim.Duration
		segs     uint64
		wmemWant uint64 // 0: not measured at the write's end
	}{
		{"reno", 10, 23 * units.Mbps, 46200 * sim.Microsecond, 32, 0},
		{"cubic", 1, 19700 * units.Kbps, 73700 * sim.Microsecond, 45, 67656},
	} {
		opts := config.DefaultTCPOptions()
		opts.Pacing = config.PacingAuto // unpaced, as the kernel's flows
		opts.InitCwnd = tc.iw
		h := shHarness{cc: tc.cc, rate: tc.rate, owd: tc.rtt / 2, opts: opts}
		c := h.build(t)
		c.runUntil(sim.Time(tc.rtt + sim.Millisecond)) // the handshake, not yet an ACK of data
		d := c.snd
		if got := (d.writeSeq - 1) / d.mss; got != tc.segs {
			t.Errorf("%s, IW %d: the first call wrote %d segments, want the kernel's %d", tc.cc, tc.iw, got, tc.segs)
		}
		if q := d.sndQueued(d.writeSeq); tc.wmemWant != 0 && q != tc.wmemWant {
			t.Errorf("%s, IW %d: sk_wmem_queued %d, want the kernel's %d", tc.cc, tc.iw, q, tc.wmemWant)
		}
		if !d.appAsleep {
			t.Errorf("%s, IW %d: the writer is awake after its first call, want asleep on its full buffer", tc.cc, tc.iw)
		}
	}
}

// A greedy writer's wake-ups lay their data into the write queue's skbs
// as tcp_sendmsg_locked does (writeQueue): the tail is topped up to the
// size goal of the moment, which grows with the peer's window, and the
// skbs before it keep the size they were written to. bpftrace on
// tcp:tcp_sendmsg_locked (Linux 6.18, the emulator's hosts, 2026-12-06),
// BBR on 20 Mbps over 600 ms with IW 10: the first call wrote 54 segments
// into skbs of 22 (the goal at a 65,160-byte window), the first wake-up at
// the seventh ACK topped the 22-segment tail up to the new goal of 27 and
// took one new skb, 32 segments (46,336 bytes), and the next, at the round
// trip's first ACK, two new skbs of 27 (78,192 bytes). Laying skbs of the
// current goal from snd_nxt, the first wake-up wrote 38 segments.
func TestWakeUpsAsKernel(t *testing.T) {
	h := shHarness{cc: "bbr", rate: 20 * units.Mbps, owd: 300 * sim.Millisecond, opts: config.DefaultTCPOptions()}
	c := h.build(t)
	d := c.snd
	var writes []uint64 // bytes per instant the writer wrote at
	var at sim.Time
	last := uint64(1) // sequence 1, the first byte after the SYN
	for len(writes) < 4 && c.s.Now() < sim.Time(3*sim.Second) && c.s.Step(1) > 0 {
		if d.writeSeq <= last {
			continue
		}
		if n := len(writes); n > 0 && c.s.Now() == at {
			writes[n-1] += d.writeSeq - last
		} else {
			writes, at = append(writes, d.writeSeq-last), c.s.Now()
		}
		last = d.writeSeq
	}
	want := []uint64{54 * 1448, 32 * 1448, 54 * 1448}
	if len(writes) < len(want) || !slices.Equal(writes[:len(want)], want) {
		t.Errorf("bytes per write instant %v, want the kernel's %v to begin with", writes, want)
	}
}

// A writer held by its send buffer in slow start wakes at the kernel's
// cwnds, round after round. Measured on Linux 6.18 (bpftrace on
// tcp:tcp_probe and tcp:tcp_sendmsg_locked, 2026-12-06), Reno with the
// default 4 MiB tcp_wmem on p-rtr-p at 90.8 Mbps over 160 ms: the writer
// woke at cwnd 23, 34, 68, 138, 255, 351, 481, 661 and 901 before the
// first loss. Each wake-up comes where the buffer, grown by 2 · 2,304
// bytes at nearly every ACK, is again half as large as what it holds, so
// one that comes early (at 50 for 34, as before checkSpace) brings
// each later one a fifth of a round early, and with it the refill that
// overflowed the FIFO. The test holds each to the kernel's within 2 % and
// 2 packets: tcp_probe reads the cwnd an ACK finds, the test the cwnd it
// leaves, one or two segments more.
func TestSndBufWakeUpsAsKernel(t *testing.T) {
	c := prtrp{cc: "reno", rate: 90800 * units.Kbps, rtt: 160 * sim.Millisecond, opts: compareOpts(4 * units.MiB)}.build(t)
	d := c.snd
	c.establish(t)
	kernel := []uint32{23, 34, 68, 138, 255, 351, 481, 661, 901}
	var got []uint32
	for len(got) < len(kernel) && c.s.Now() < sim.Time(3*sim.Second) {
		asleep, before := d.appAsleep, d.writeSeq
		if c.s.Step(1) == 0 {
			break
		}
		if asleep && d.writeSeq > before { // woke and wrote (it may be asleep again)
			got = append(got, d.st.CwndPkts)
		}
	}
	if len(got) != len(kernel) {
		t.Fatalf("wake-ups at cwnd %v, want %d as the kernel's %v", got, len(kernel), kernel)
	}
	for i, k := range kernel {
		if g := float64(got[i]); math.Abs(g-float64(k)) > 0.02*float64(k)+2 {
			t.Errorf("wake-ups at cwnd %v, want the kernel's %v within 2 %% and 2 packets", got, kernel)
			break
		}
	}
}

// A sleeping on/off writer wakes at the send that leaves fewer than 8 KB
// unsent, not at the next one. Measured on Linux 6.18 (bpftrace on
// tcp:tcp_sendmsg_locked, 2026-12-06), BBR on p-rtr-p at 30 Mbps over 60
// ms, on 50 ms and off 200 ms: each on period's writer refilled its
// socket at 0, 16.6, 32.8 and 49.0 ms, every 16.2–16.6 ms, the time its
// pacing rate takes to send the 40 segments from 65,160 bytes unsent to
// 7,240; the fourth refill, inside the on period, sent 39 segments more
// per period than three (8.05–8.28 Mbps on the kernel). A chunk late, as
// the simulator was until then, the refills came every 16.8–17.0 ms and
// the fourth fell just after the on period ended (6.65 Mbps). The test
// holds the refills of each on period after 2.5 s, once the window allows
// the 45-segment size goal, to the kernel's: four, 16.2 ± 0.4 ms apart.
func TestOnOffWriterWakesAtTheSend(t *testing.T) {
	c := prtrp{cc: "bbr", rate: 30 * units.Mbps, rtt: 60 * sim.Millisecond, opts: compareOpts(4 * units.MiB),
		app: appOnOff(50*sim.Millisecond, 200*sim.Millisecond)}.build(t)
	d := c.snd
	c.establish(t)
	var periods [][]sim.Time
	last := sim.Time(0)
	for c.s.Now() < sim.Time(6*sim.Second) {
		before := d.writeSeq
		if c.s.Step(1) == 0 {
			break
		}
		if d.writeSeq == before || c.s.Now() < sim.Time(2500*sim.Millisecond) || c.s.Now() == last {
			continue
		}
		if n := len(periods); n == 0 || c.s.Now().Sub(last) > 100*sim.Millisecond {
			periods = append(periods, nil)
		}
		periods[len(periods)-1] = append(periods[len(periods)-1], c.s.Now())
		last = c.s.Now()
	}
	if len(periods) < 10 {
		t.Fatalf("%d on periods with writes in 3.5 s, want 14", len(periods))
	}
	for _, p := range periods[:len(periods)-1] {
		if len(p) != 4 {
			t.Fatalf("refills at %v in an on period, want the kernel's four", p)
		}
		for i := 1; i < len(p); i++ {
			if gap := p[i].Sub(p[i-1]); gap < 15800*sim.Microsecond || gap > 16600*sim.Microsecond {
				t.Fatalf("refills at %v, %v apart; want the kernel's 16.2 ± 0.4 ms", p, gap)
			}
		}
	}
}

// MAX_TCP_HEADER is 192 on the 6.18 kernel the simulator is compared with,
// measured there on loopback in a fresh namespace (BBR, whose
// sndbuf_expand asks for three windows): sk_sndbuf after connect() is
// 69,120 (3 · 10 · 2,304) up to TCP_MAXSEG 1536 (mss_clamp + 192 + 320
// fits 2,048) and 130,560 (3 · 10 · 4,352) at 1537; tcp_sendmsg's size
// goal (tcp:tcp_sendmsg_locked) at MSS 1360 is 65,280, 48 segments, so
// sk_gso_max_size is at least 65,280 (65536 − 193 = 65,343; MAX_TCP_HEADER
// 256 or 320 would leave 47).
func TestMaxTCPHeaderIsTheKernels(t *testing.T) {
	for _, c := range []struct {
		mss  units.Bytes
		want uint64
	}{{1448, 69120}, {1524, 69120}, {1525, 130560}} {
		o := config.DefaultTCPOptions()
		o.MSS = c.mss
		alg, err := cc.New("bbr")
		if err != nil {
			t.Fatal(err)
		}
		pool := &packet.Pool{}
		d := NewSender(sim.New(), pool, freeSender{pool}, trace.NewRecorder(config.TraceSummary, 0, nil),
			SenderConfig{Opts: o, CC: alg, App: config.AppPattern{Kind: config.Greedy}})
		d.initSndBuf() // as the handshake completes (tcp_init_buffer_space)
		if d.sndBuf != c.want {
			t.Errorf("MSS %v (TCP_MAXSEG %d): sk_sndbuf %d, want the kernel's %d", c.mss, uint64(c.mss)+tcpOptTimestamp, d.sndBuf, c.want)
		}
	}
	d := &DataSender{mss: 1360, maxWnd: 1 << 20}
	if got := d.xmitSizeGoal(); got != 65280 {
		t.Errorf("size goal at MSS 1360: %d, want the kernel's 65,280", got)
	}
}
