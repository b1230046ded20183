package tcp

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/google/go-cmp/cmp"
)

// TestAutotuning drives a window-limited sender with a 10 ms RTT (the
// SYN-ACK RTT, and every segment echoes a timestamp of ours 10 ms old):
// each round it sends floor(window/1448) segments 1 us apart, the window
// being the one of the last ACK. Hand derivation for Linux 6.18 (MSS 1448,
// RcvBufInit 128 KiB; scaling_ratio 128/256 until the first data segment,
// then len/truesize = 1448·256/2304 = 160):
//
//	SYN-ACK: 65536 − 65536 mod 1448 = 65160 (ratio ½).
//	establish: clamp = 65536 − 1448 = 64088 (tcp_init_buffer_space), and
//	  rcv_ssthresh = min(65160, 64088) = 64088; rcvq_space = 10·1448 = 14480.
//	round 0 (20 ms): 45 segments. The first sets the ratio to 160, and
//	  tcp_set_window_clamp lifts the clamp to 131072·160/256 = 81920 and
//	  rcv_ssthresh to min(rcv_wnd, clamp) = 65160. tcp_grow_window adds 2896
//	  per segment up to tcp_space = (131072 − 2304)·160/256 = 80480 (the
//	  segment being processed, one frame of truesize 2304, is still unread):
//	  window 80480.
//	round 1 (30 ms): 55 segments. The first has no room to grow; its read is
//	  one RTT after establishment: copied = 46·1448 = 66608 > 14480, so
//	  tcp_rcvbuf_grow: rcvwin = 2·66608 = 133216,
//	  grow = 133216·(66608 − 14480)/14480 = 479577,
//	  rcvwin += 2·grow → 1092370, rcvbuf = rcvwin·256/160 = 1747792,
//	  capped by tcp_rmem[2]; clamp = rcvbuf·160/256. The other 54 segments
//	  each grow rcv_ssthresh by 2·1448: 80480 + 54·2896 = 236864.
//	round 2 (40 ms): 163 segments; DRS sees 55·1448 = 79640 > 66608, but
//	  2·79640 grown by 2·(79640 − 66608)/66608 asks for less than the
//	  buffer has; rcv_ssthresh grows by 163·2896 to 708912, unless capped by
//	  tcp_space = (rcvbuf − 2304)·160/256: with 1 MiB that is 653920.
//	round 3 (1 MiB): it stays at that cap.
//
// Each window is advertised rounded up to the scale unit
// (__tcp_select_window's ALIGN): with tcp_rmem[2] = 6 MiB the shift is
// ilog2(6291456) − 15 = 7, so 80480, 236864 and 708912 go out as 80512,
// 236928 and 708992 (the kernel's pcap shows 80512); with 1 MiB it is 7
// too, from net.core.rmem_max (4 MiB since Linux 6.18), so 653920 goes out
// as 653952.
func TestAutotuning(t *testing.T) {
	cases := []struct {
		name       string
		max        units.Bytes
		wantWnd    []uint32
		wantRcvBuf units.Bytes
	}{
		{"1MiB", units.MiB, []uint32{80512, 236928, 653952, 653952}, units.MiB},
		{"6MiB", 6 * units.MiB, []uint32{80512, 236928, 708992}, 1747792},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.RcvBufMax = c.max
			h := newHarness(t, o, EchoClassic)
			h.at(10 * ms)
			h.syn(0, packet.NotECT)
			seq := uint64(1)
			wnd := uint64(65160) // from the SYN-ACK
			var got []uint32
			for r := range len(c.wantWnd) {
				start := 20*ms + sim.Duration(r)*10*ms
				for i := range wnd / 1448 {
					h.at(start + sim.Duration(i)*us)
					h.segTS(seq, 1448, packet.NotECT, 0, tsNow(h.s.Now())-10)
					seq += 1448
				}
				last := h.out.acks[len(h.out.acks)-1]
				got = append(got, last.Wnd)
				wnd = uint64(last.Wnd)
			}
			if d := cmp.Diff(c.wantWnd, got); d != "" {
				t.Errorf("window at the end of each round (-want +got):\n%s", d)
			}
			if h.r.RcvBuf() != c.wantRcvBuf {
				t.Errorf("RcvBuf = %d, want %d", h.r.RcvBuf(), c.wantRcvBuf)
			}
		})
	}
}

// TestScalingRatio checks tcp_measure_rcv_mss's scaling_ratio = (len << 8) /
// truesize against hand arithmetic: with the 1500-byte-MTU truesize model
// (256 + 2048 per frame), and with a 9000-byte jumbo frame, which
// tun_get_user puts in a 4 KiB kmalloc'd head (64 B of headroom and 3,712
// of packet, with 320 of skb_shared_info) and an 8 KiB page for the other
// 5,288 bytes (alloc_skb_with_frags: order 1 is the smallest that holds
// them): 256 + 4096 + 8192 = 12,544. It checks tcp_win_from_space /
// tcp_space_from_win too.
func TestScalingRatio(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mss         units.Bytes
		len, frames uint64
		want        uint32
	}{
		{"lone 1448-byte segment: 370688/2304", 1448, 1448, 1, 160},
		{"GRO aggregate of 44: 16310272/90368", 1448, 44 * 1448, 44, 180},
		{"lone 1000-byte segment: 256000/2304", 1448, 1000, 1, 111},
		{"1-byte segment: 256/2304 = 0, floored at 1", 1448, 1, 1, 1},
		{"MSS 536 in a 1 KiB head: 137216/1280", 536, 536, 1, 107},
		{"jumbo 8948-byte segment: 2290688/12544", 8948, 8948, 1, 182},
		{"GRO aggregate of 7 jumbo frames: 16034816/86272", 8948, 7 * 8948, 7, 185},
	} {
		var w window
		o := defaultOpts()
		o.MSS = tc.mss
		w.init(o)
		w.measureScalingRatio(tc.len, tc.frames)
		if w.scalingRatio != tc.want {
			t.Errorf("%s: scaling_ratio = %d, want %d", tc.name, w.scalingRatio, tc.want)
		}
	}
	w := window{scalingRatio: 160}
	if got := w.winFromSpace(131072); got != 81920 {
		t.Errorf("tcp_win_from_space(131072) at 160/256 = %d, want 81920", got)
	}
	if got := w.spaceFromWin(81920); got != 131072 {
		t.Errorf("tcp_space_from_win(81920) at 160/256 = %d, want 131072", got)
	}
	var d window
	d.init(defaultOpts())
	if d.scalingRatio != 128 {
		t.Errorf("initial scaling_ratio = %d, want TCP_DEFAULT_SCALING_RATIO = 128", d.scalingRatio)
	}
}

// TestRxFrameTruesize checks a frame's truesize against tun_get_user's
// allocation worked by hand (x86-64: NET_SKB_PAD 64, skb_shared_info 320,
// the small-head cache 640, 4 KiB pages): a head of SKB_DATA_ALIGN(64 +
// packet) + 320 bytes takes the small-head cache up to 640 (packets up to
// 256 bytes), then a kmalloc of the next power of two: 1 KiB up to 640
// bytes, 2 KiB up to 1,664; 4,031 is the largest packet linear in one head
// (64 + 4,031 < 4,096, its head 4,096 + 320 rounded up to 8 KiB); from
// 4,032 the head holds 3,712 bytes and the rest goes to pages of the
// smallest order that holds it, at most 3 (32 KiB). And over every MSS
// from TCP_MIN_MSS to the largest window, a lone full segment measures a
// scaling_ratio under 256, as the kernel's u8 holds it.
func TestRxFrameTruesize(t *testing.T) {
	for _, tc := range []struct{ ipLen, want uint64 }{
		{140, 640}, {256, 640}, {257, 1024}, {588, 1024}, {640, 1024}, {641, 2048},
		{1500, 2048}, {1664, 2048}, {1665, 4096}, {4031, 8192},
		{4032, 4096 + 4096}, {9000, 4096 + 8192}, {32819, 4096 + 32768},
	} {
		if got := rxFrameTruesize(tc.ipLen); got != tc.want {
			t.Errorf("rxFrameTruesize(%d) = %d, want %d", tc.ipLen, got, tc.want)
		}
	}
	for mss := uint64(tcpMinMss); mss <= 32767; mss++ {
		if r := mss << rmemToWinScale / (skbStructSize + rxFrameTruesize(mss+HeaderBytes)); r > 255 {
			t.Fatalf("MSS %d: scaling_ratio %d does not fit the kernel's u8", mss, r)
		}
	}
}

// TestRcvbufGrowsForOutOfOrder: since Linux 6.16 tcp_data_queue_ofo calls
// tcp_rcvbuf_grow with the current rcvq_space, so the buffer grows to hold
// twice the last RTT's reads plus the out-of-order span beyond rcv_nxt.
// After the handshake rcvq_space = 10·1448 = 14480; one in-order segment
// (rcv_nxt 1449) and one at 57921..59369 leave a span of 57920 bytes:
// rcvwin = 2·14480 + 57920 = 86880, rcvbuf = 86880·256/160 = 139008 (above
// the 131072 it started with), clamp 86880. The 6.8 rules left 131072.
func TestRcvbufGrowsForOutOfOrder(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	h.at(11 * ms)
	h.seg(1+40*1448, 1448, packet.NotECT, 0)
	if got := h.r.RcvBuf(); got != 139008 {
		t.Errorf("RcvBuf = %d, want 139008\n%s", got, h.log())
	}
	if got := h.r.win.windowClamp; got != 86880 {
		t.Errorf("window clamp = %d, want 86880", got)
	}
}

// TestRcvSpaceAdjustPerSkb: tcp_recvmsg_locked calls tcp_rcv_space_adjust
// after each skb it copies, so data that a filled hole releases counts as
// unread (inq) at the read's one measurement, not as read in the last RTT.
// By hand, receiver RTT 10 ms, rcvq_space 14480 from the handshake: one
// segment at 1 ms, 39 beyond a hole at 2 ms (the buffer grows for their
// span, 139008 as in TestRcvbufGrowsForOutOfOrder). The hole's segment at
// 20 ms releases rcv_nxt to 59369: measured after the first skb (copied_seq
// 2897), copied = 2896 − 56472 unread < 14480, so nothing grows and the
// measure restarts at 2897. Measured on the whole read, 59368 bytes would
// have grown the buffer to 1.37 MB. The next segment, 10 ms on, measures
// 57920 bytes read since: rcvwin = 2·57920 + 2·115840·(57920 − 14480)/14480
// = 810880, rcvbuf = 810880·256/160 = 1297408.
func TestRcvSpaceAdjustPerSkb(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(1 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	h.r.win.rcvRttUs = 8 * 10000
	h.at(2 * ms)
	for k := uint64(2); k <= 40; k++ {
		h.seg(1+k*1448, 1448, packet.NotECT, 0)
	}
	h.at(20 * ms)
	h.seg(1449, 1448, packet.NotECT, 0)
	if w := &h.r.win; w.rcvqSpace != 14480 || w.rcvqSeq != 2897 || h.r.RcvBuf() != 139008 {
		t.Errorf("after the hole: rcvq_space %d from seq %d, rcvbuf %d; want 14480 from 2897, 139008", w.rcvqSpace, w.rcvqSeq, h.r.RcvBuf())
	}
	h.at(30 * ms)
	h.seg(59369, 1448, packet.NotECT, 0)
	if w := &h.r.win; w.rcvqSpace != 57920 || h.r.RcvBuf() != 1297408 || w.windowClamp != 810880 {
		t.Errorf("an RTT later: rcvq_space %d, rcvbuf %d, clamp %d; want 57920, 1297408, 810880", w.rcvqSpace, h.r.RcvBuf(), w.windowClamp)
	}
}

// TestRcvSpaceAdjustWithHoleOpen: tcp_rcvbuf_grow adds the out-of-order
// span beyond rcv_nxt for both of its callers, so a DRS measure taken
// while a hole is still open sizes the buffer for the data beyond it too.
// The figures are a Linux 6.18 receiver's, from the tcp:tcp_rcvbuf_grow
// tracepoint (values before the update) during `emulate` of CUBIC from 0 s
// and BBR from 2 s on 50 Mbps, 40 ms, 1-BDP FIFO: BBR's receiver had
// rcvbuf 244316, clamp 152697 and rcvq_space 28960 when its first loss
// left a hole of two segments; the data beyond it had grown the buffer to
// 259481, clamp 162175 (2·28960 + a span of 104256 = 162176, ·256/160);
// the first retransmission filled one of the two segments, and the read
// measured copied 52128, inq 0, ooo_space 102808, after which the next
// event showed rcvbuf 598195: rcvwin = 2·52128 + 2·104256·(52128 −
// 28960)/28960 + 102808 = 104256 + 166808 + 102808 = 373872, rcvbuf =
// 373872·256/160 = 598195, clamp 373871. Without the span, 433702.
func TestRcvSpaceAdjustWithHoleOpen(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(1 * ms)
	for k := uint64(0); k < 35; k++ {
		h.seg(1+k*1448, 1448, packet.NotECT, 0)
	}
	// The kernel's state at the loss (tcp_rcvbuf_grow tracepoint) and the
	// window it had advertised.
	w := &h.r.win
	w.rcvRttUs = 8 * 10000
	w.rcvqSpace = 28960
	w.rcvBuf, w.windowClamp, w.rcvSsthresh = 244316, 152697, 151257
	w.rcvWnd, h.r.rcvWup = 151296, h.r.rcvNxt
	// A hole of two segments at 50681, then 70 segments beyond it.
	h.at(2 * ms)
	for k := uint64(0); k < 70; k++ {
		h.seg(53577+k*1448, 1448, packet.NotECT, 0)
	}
	if h.r.RcvBuf() != 259481 || w.windowClamp != 162175 || w.rcvqSpace != 28960 {
		t.Errorf("data beyond the hole: rcvbuf %d, clamp %d, rcvq_space %d; want 259481, 162175, 28960",
			h.r.RcvBuf(), w.windowClamp, w.rcvqSpace)
	}
	// An RTT after the last measure, the first of the two fills.
	h.at(20 * ms)
	h.seg(50681, 1448, packet.NotECT, 0)
	if h.r.rcvNxt != 52129 || h.r.oooSpan() != 102808 {
		t.Fatalf("after the fill: rcv_nxt %d, span %d; want 52129, 102808", h.r.rcvNxt, h.r.oooSpan())
	}
	if h.r.RcvBuf() != 598195 || w.windowClamp != 373871 || w.rcvqSpace != 52128 {
		t.Errorf("measured with the hole open: rcvbuf %d, clamp %d, rcvq_space %d; want 598195, 373871, 52128",
			h.r.RcvBuf(), w.windowClamp, w.rcvqSpace)
	}
}

// TestRcvSpaceAdjustAsKernelTracepoint replays DRS measures a Linux 6.18
// receiver made, from its tcp:tcp_rcvbuf_grow tracepoint (which prints
// the state before the update: copied, inq, rcvq_space, ooo_space,
// rcvbuf), and expects the buffer and clamp that the next event of the same
// socket showed before its own update (for join/slow-start, where data
// beyond a hole grew the buffer before the next event, the clamp that its
// rcv_ssthresh stopped at, 152697). Two `emulate` runs of 2026-12-05:
// BBR joining CUBIC on 50 Mbps, 40 ms, 1-BDP FIFO, and BBR alone on
// p-rtr-p at 50 Mbps with 5 % loss. A measure that asks for less than the
// buffer has leaves it.
func TestRcvSpaceAdjustAsKernelTracepoint(t *testing.T) {
	for _, c := range []struct {
		name                          string
		copied, inq, space, ooo       uint64
		rcvbuf, wantRcvbuf, wantClamp uint64
	}{
		{"join/slow-start", 28960, 0, 15928, 0, 131072, 244316, 152697},
		{"join/hole-half-filled", 52128, 0, 28960, 102808, 259481, 598195, 373871},
		{"loss/slow-start", 79640, 0, 15928, 0, 134374, 2293632, 1433520},
		{"loss/less-than-the-buffer", 167968, 34752, 79640, 46336, 2293632, 2293632, 1433520},
		{"loss/hole-open", 334488, 33304, 176656, 105704, 2293632, 2491699, 1557311},
		{"loss/hole-open-less", 415576, 39096, 301184, 133216, 2491699, 2491699, 1557311},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := window{scalingRatio: 160, maxBuf: 6 << 20, rcvRttUs: 8 * 40000}
			w.rcvBuf, w.windowClamp = c.rcvbuf, w.winFromSpace(c.rcvbuf)
			w.rcvqSpace, w.rcvqSeq, w.rcvqTime = c.space, 1, 0
			copiedSeq := 1 + c.copied
			w.rcvSpaceAdjust(copiedSeq, copiedSeq+c.inq, c.ooo, sim.Time(41*sim.Millisecond))
			if w.rcvBuf != c.wantRcvbuf || w.windowClamp != c.wantClamp || w.rcvqSpace != c.copied-c.inq {
				t.Errorf("rcvbuf %d, clamp %d, rcvq_space %d; want %d, %d, %d",
					w.rcvBuf, w.windowClamp, w.rcvqSpace, c.wantRcvbuf, c.wantClamp, c.copied-c.inq)
			}
		})
	}
}

// TestWScaleAsLinux: tcp_select_initial_window announces ilog2 of the
// largest of tcp_rmem[2] and net.core.rmem_max (4 MiB since Linux 6.18,
// as this host's /proc/sys/net/core/rmem_max reads; 212992 before), less
// 15, in [0, 14]: 6.16+'s default 32 MiB announces 10 (this host's
// tcp_rmem is "4096 131072 33554432"), the 6 MiB of earlier kernels 7, as
// captures of Linux hosts show; a 64 KiB tcp_rmem[2] announces 7 too, from
// rmem_max (2 before 6.18).
func TestWScaleAsLinux(t *testing.T) {
	for _, c := range []struct {
		max  units.Bytes
		want uint8
	}{{0, 10}, {64 * units.KiB, 7}, {6 * units.MiB, 7}, {4 * units.MiB, 7}, {16 * units.MiB, 9}, {32 * units.MiB, 10}, {1 << 40, 14}} {
		if got := WScale(c.max); got != c.want {
			t.Errorf("WScale(%d) = %d, want %d", c.max, got, c.want)
		}
	}
}

// TestRcvRttUpdate walks tcp_rcv_rtt_update as of 6.16 ("always seek for
// minimal rtt", "skip big rtt sample if receive queue is not empty") by
// hand, the estimate <<3-scaled: a first sample of 10 ms gives 80000; a
// lower one (9 ms) is taken at once, 72000; a higher timestamp sample
// (20 ms) is smoothed in, 72000 − 9000 + 20000 = 83000, unless data waits
// unread or it is window-based, when it is dropped.
func TestRcvRttUpdate(t *testing.T) {
	var w window
	steps := []struct {
		us             int64
		winDep, queued bool
		want           uint32
	}{
		{10000, false, false, 80000},
		{9000, true, false, 72000},
		{20000, false, false, 83000},
		{30000, false, true, 83000},
		{30000, true, false, 83000},
		{5000, false, true, 40000},
	}
	for i, s := range steps {
		w.rcvRttUpdate(s.us, s.winDep, s.queued)
		if w.rcvRttUs != s.want {
			t.Errorf("step %d (%d us, winDep %v, queued %v): estimate %d, want %d", i, s.us, s.winDep, s.queued, w.rcvRttUs, s.want)
		}
	}
	// tcp_rtt_tsopt_us(tp, 0): an echo from this very tick is no sample.
	now := sim.Time(50 * sim.Millisecond)
	w.rcvRttMeasureTS(tsNow(now), tsNow(now), false, true)
	if w.rcvRttUs != 40000 {
		t.Errorf("a zero timestamp delta changed the estimate to %d", w.rcvRttUs)
	}
}

// TestRcvBufForWindow: at the ratio a lone 1448-byte segment measures
// (1448·256/2304 = 160), a 6 MiB buffer offers 6291456·160/256 = 3932160
// bytes of window, and a 128 KiB one 81920 (the clamp a 6.18 receiver
// announces after its first segment): each window gives its buffer back.
// An 8948-byte segment measures 182 (2290688/12544): 3932160 bytes of
// window need 5530951 (rounded up). An mss of 536 measures none and stays
// at ½: twice the window.
func TestRcvBufForWindow(t *testing.T) {
	for _, c := range []struct{ win, mss, want units.Bytes }{
		{3932160, 1448, 6 * units.MiB}, {81920, 1448, 128 * units.KiB}, {81921, 1448, 128*units.KiB + 2},
		{3932160, 8948, 5530951}, {3932160, 536, 7864320},
	} {
		if got := RcvBufForWindow(c.win, c.mss); got != c.want {
			t.Errorf("RcvBufForWindow(%d, %d) = %d, want %d", c.win, c.mss, got, c.want)
		}
	}
}

// The initial window is tcp_rmem[1]'s whole window, not capped at 65535:
// tcp_select_initial_window caps rcv_wnd only with
// tcp_workaround_signed_windows (0 by default), and the child socket takes
// it as rcv_wnd and rcv_ssthresh; only the SYN-ACK's unscaled field is
// clamped. With a 16 MiB tcp_rmem[1] that is 16 MiB at the initial ratio
// of ½, rounded down to whole segments: 5793·1448 = 8388264 B, so the
// first ACK offers megabytes (before, 65535 plus its growth, under 70 KB).
func TestInitialWindowNotCappedAt64K(t *testing.T) {
	o := defaultOpts()
	o.RcvBufInit = 16 * units.MiB
	h := newHarness(t, o, EchoClassic)
	h.handshake(0, packet.NotECT)
	if syn := h.out.acks[0]; syn.Wnd != 65535 {
		t.Errorf("SYN-ACK window %d, want the field's 65535", syn.Wnd)
	}
	if h.r.win.rcvWnd != 8388264 || h.r.win.rcvSsthresh != 8388264 {
		t.Errorf("rcv_wnd %d, rcv_ssthresh %d; want 8388264", h.r.win.rcvWnd, h.r.win.rcvSsthresh)
	}
	h.at(10 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	h.seg(1+1448, 1448, packet.NotECT, 0)
	if got := h.out.acks[len(h.out.acks)-1].Wnd; got < 4_000_000 {
		t.Errorf("first data ACK offers %d B, want megabytes", got)
	}
}

// PAWS (RFC 7323, tcp_validate_incoming): an original segment overtaken by
// its data's retransmission, arriving with a timestamp more than a tick
// older than ts_recent, is dropped and answered with a dupack. Segment 2
// is lost at first: segment 3 arrives out of order, the retransmission of
// 2 (stamped 15) fills the hole and lifts ts_recent; the original of
// segment 4, stamped 12, comes late: it is dropped, rcv_nxt stays.
func TestPAWSDropsStaleOriginal(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	h.segStamped(1, 1448, packet.NotECT, 0, 10, 1)
	h.at(11 * ms)
	h.segStamped(1+2*1448, 1448, packet.NotECT, 0, 11, 1)
	h.at(15 * ms)
	h.segStamped(1+1448, 1448, packet.NotECT, 0, 15, 1)
	if h.r.rcvNxt != 1+3*1448 || h.r.tsRecent != 15 {
		t.Fatalf("after the retransmission: rcv_nxt %d, ts_recent %d; want %d, 15", h.r.rcvNxt, h.r.tsRecent, 1+3*1448)
	}
	acks := len(h.out.acks)
	h.at(16 * ms)
	h.segStamped(1+3*1448, 1448, packet.NotECT, 0, 12, 1)
	if h.r.rcvNxt != 1+3*1448 || h.r.stats.PAWSDrops != 1 {
		t.Errorf("a segment stamped 12 after ts_recent 15: rcv_nxt %d, PAWS drops %d; want it dropped (%d, 1)", h.r.rcvNxt, h.r.stats.PAWSDrops, 1+3*1448)
	}
	if len(h.out.acks) != acks+1 || h.out.acks[acks].Ack != 1+3*1448 {
		t.Errorf("want one dupack for %d", 1+3*1448)
	}
	h.segStamped(1+3*1448, 1448, packet.NotECT, 0, 14, 1) // within a tick of ts_recent: passes
	if h.r.rcvNxt != 1+4*1448 {
		t.Errorf("a segment stamped 14 after ts_recent 15 was not taken: rcv_nxt %d", h.r.rcvNxt)
	}
}

// tcp_data_queue_ofo drops an out-of-order segment whose bytes are all
// queued already ("All the bits are present") before tcp_grow_window: a
// new out-of-order segment grows rcv_ssthresh, its duplicate does not.
func TestDuplicateOutOfOrderKeepsWindow(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	h.seg(1+2*1448, 1448, packet.NotECT, 0) // out of order: a hole at 1449
	grown := h.r.win.rcvSsthresh
	h.seg(1+3*1448, 1448, packet.NotECT, 0)
	if h.r.win.rcvSsthresh <= grown {
		t.Fatalf("a new out-of-order segment left rcv_ssthresh at %d", h.r.win.rcvSsthresh)
	}
	before := h.r.win.rcvSsthresh
	h.seg(1+3*1448, 1448, packet.NotECT, 0) // all its bits are present
	if h.r.win.rcvSsthresh != before {
		t.Errorf("a duplicate out-of-order segment moved rcv_ssthresh %d → %d", before, h.r.win.rcvSsthresh)
	}
}

// A zero-length segment outside the window (a zero-window probe sends
// snd_una − 1) is answered with a dupack at most once per 500 ms
// (tcp_validate_incoming's tcp_oow_rate_limited, HZ/2); data is always
// answered. Probes at 1 s, 1.4 s and 1.6 s get two answers.
func TestOutOfWindowProbeAnswersRateLimited(t *testing.T) {
	h := newHarness(t, defaultOpts(), EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	var answers []int
	for _, at := range []sim.Duration{1000 * ms, 1400 * ms, 1600 * ms} {
		h.at(at)
		n := len(h.out.acks)
		h.seg(1448, 0, packet.NotECT, 0) // snd_una − 1, no data
		answers = append(answers, len(h.out.acks)-n)
	}
	if want := []int{1, 0, 1}; !slices.Equal(answers, want) {
		t.Errorf("answers to probes at 1, 1.4 and 1.6 s: %v, want %v", answers, want)
	}
	n := len(h.out.acks)
	h.seg(1, 1448, packet.NotECT, 0) // old data, at once: always answered
	if len(h.out.acks) != n+1 {
		t.Errorf("old data within 500 ms of an answer went unanswered")
	}
}

// TestGrowWindowCheck2 follows tcp_grow_window by hand. At the ratio a
// GRO aggregate measured, 170/256, a lone 1448-byte segment's 2,304 bytes
// of truesize buy tcp_win_from_space(2304) = 1,530 bytes of window, more
// than it carries, so check #2 fails and __tcp_grow_window decides: with
// tcp_rmem[2] 32 MiB its window is 33554432·170/256 / 2 = 11,141,120, and
// the truesize's half, 765, fits 1448 at once. So rcv_ssthresh grows by
// 2·rcv_mss up to that window and not beyond it: from 11,141,121 on, the
// next round (5,570,560, 382) lies below rcv_ssthresh too. At 160/256
// check #2 holds (1,440 ≤ 1448) and it grows by 2·advmss wherever it is.
// A 536-byte segment with MSS 536 (rcv_mss 536, the ratio never measured,
// so ½) in a 1,280-byte skb: 640 > 536; the first round's 320 fits, below
// its window of 8 MiB with a 32 MiB tcp_rmem[2]. With MSS 200 the skb is
// 896 bytes (the small-head cache) and the first round's 224 > 200 waits
// for the second, as with MSS 300 in 1,280 bytes (320 > 300), below 4 MiB.
func TestGrowWindowCheck2(t *testing.T) {
	for _, c := range []struct {
		name                 string
		mss, rcvMss, ratio   uint32
		len                  uint64
		ssthresh, wantGrowth uint64
	}{
		{"170: below the window", 1448, 1448, 170, 1448, 11_141_120, 2896},
		{"170: just above it", 1448, 1448, 170, 1448, 11_141_121, 0},
		{"160: check #2 holds", 1448, 1448, 160, 1448, 20_000_000, 2896},
		{"mss 536 at ½: below half the window", 536, 536, 128, 536, 8_388_608, 1072},
		{"mss 536 at ½: above it", 536, 536, 128, 536, 8_388_609, 0},
		{"mss 200 at ½: below a quarter", 200, 200, 128, 200, 4_194_304, 400},
		{"mss 200 at ½: above it", 200, 200, 128, 200, 4_194_305, 0},
		{"mss 300 at ½: below a quarter", 300, 300, 128, 300, 4_194_304, 600},
		{"mss 300 at ½: above it", 300, 300, 128, 300, 4_194_305, 0},
	} {
		o := defaultOpts()
		o.MSS = units.Bytes(c.mss)
		var r Receiver
		r.win.init(o)
		r.win.maxBuf, r.win.rcvBuf = 32<<20, 32<<20
		r.win.windowClamp = 1 << 30
		r.win.scalingRatio = c.ratio
		r.win.rcvSsthresh = c.ssthresh
		r.ack.rcvMss = c.rcvMss
		r.growWindow(&segment{seq: 1, end: 1 + c.len, segs: 1, segLen: uint32(c.len)})
		if got := r.win.rcvSsthresh - c.ssthresh; got != c.wantGrowth {
			t.Errorf("%s: rcv_ssthresh grew by %d, want %d", c.name, got, c.wantGrowth)
		}
	}
}

// The receive window's integer edges, by hand from Linux 6.18:
//   - tcp_set_window_clamp floors the clamp at SOCK_MIN_RCVBUF / 2, and
//     SOCK_MIN_RCVBUF is one TCP_SKB_MIN_TRUESIZE (2,304): 1,152.
//   - tcp_rcvbuf_grow hands its u32 rcvwin to tcp_space_from_win as an int.
//     From rcvq_space 14,480 a read of 3,121,244 bytes gives rcvwin =
//     6,242,488 + 2·(6,242,488·3,106,764 / 14,480 = 1,339,360,289) =
//     2,684,963,066, negative as an int: sign-extended, ·256 / 160 and cut
//     to 32 bits, 973,609 bytes, not the 32 MiB cap.
//   - tcp_rcv_rtt_update shifts its u32 sample in u32: a sample of
//     2^29 + 10,000 µs is 80,000 <<3-scaled, below an estimate of 50 ms.
func TestReceiveWindowIntegerEdges(t *testing.T) {
	w := window{windowClamp: 64088, rcvSsthresh: 64088, rcvWnd: 65160}
	w.setWindowClamp(448)
	if w.windowClamp != 1152 || w.rcvSsthresh != 1152 {
		t.Errorf("tcp_set_window_clamp(448): clamp %d, rcv_ssthresh %d, want 1152 and 1152", w.windowClamp, w.rcvSsthresh)
	}
	g := window{scalingRatio: 160, rcvqSpace: 14480, rcvBuf: 131072, maxBuf: 32 << 20}
	g.rcvbufGrow(3121244, 0)
	if g.rcvBuf != 973609 {
		t.Errorf("tcp_rcvbuf_grow(3121244) from 14480: sk_rcvbuf %d, want the kernel's 973609", g.rcvBuf)
	}
	r := window{rcvRttUs: 50000 << 3}
	r.rcvRttUpdate(1<<29+10000, false, false)
	if r.rcvRttUs != 80000 {
		t.Errorf("tcp_rcv_rtt_update(2^29 + 10000 µs): estimate %d, want the u32 shift's 80000", r.rcvRttUs)
	}
}
