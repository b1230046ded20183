package tcp

import (
	"math/bits"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Receive-buffer defaults: tcp_rmem[1], tcp_rmem[2], net.core.rmem_max
// and the MSS of a 1500-byte MTU with timestamps.
const (
	defaultRcvBufInit = config.DefaultRcvBufInit
	defaultRcvBufMax  = config.DefaultRcvBufMax
	defaultRmemMax    = 4 << 20 // 4 MiB since Linux 6.18 (212992 before)
	defaultMSS        = 1448
)

// The buffer-to-window ratio (kernel 6.6+, include/net/tcp.h): sk_rcvbuf
// counts skb truesize, the window payload bytes, and tcp_win_from_space
// converts with the per-socket scaling_ratio in 1/256 units
// (TCP_RMEM_TO_WIN_SCALE). It starts at TCP_DEFAULT_SCALING_RATIO, one half
// (6.8+; 6.6 started at 1200/SKB_TRUESIZE(4096) ≈ ¼), and
// tcp_measure_rcv_mss sets it to len/truesize of the first full-sized skb.
const (
	rmemToWinScale      = 8                         // TCP_RMEM_TO_WIN_SCALE
	defaultScalingRatio = 1 << (rmemToWinScale - 1) // TCP_DEFAULT_SCALING_RATIO: 50%
)

// Receive-side skb truesize. A NIC driver on a 1500-byte MTU receives each
// frame into a 2 KiB half-page buffer and builds the skb around it
// (build_skb: SKB_TRUESIZE(2048 − shared info) = 2048 plus
// SKB_DATA_ALIGN(sizeof(struct sk_buff)) = 256 on x86-64, 2304 in all);
// GRO (skb_gro_receive) and the receive queue's coalescing
// (skb_try_coalesce) steal each further frame's head fragment and add its
// truesize less the freed sk_buff, 2048. One skb of n frames is therefore
// 256 + 2048·n, and a lone 1448-byte segment gives scaling_ratio
// 1448·256/2304 = 160 (62.5%). Frames much smaller or larger than 1500
// bytes take what rxFrameTruesize says.
const (
	skbStructSize     = 256                  // SKB_DATA_ALIGN(sizeof(struct sk_buff))
	tcpSkbMinTruesize = 2048 + skbStructSize // TCP_SKB_MIN_TRUESIZE
)

// The x86-64 constants of an skb's data buffer (6.18; skbSharedInfo is
// with the send buffer's). The small-head cache's size follows MAX_HEADER:
// 640 bytes with the 128 of this project's kernel, 704 where tunnels add 48.
const (
	pageSize      = 4096
	netSkbPad     = 64  // NET_SKB_PAD: headroom a driver reserves
	smpCacheBytes = 64  // SKB_DATA_ALIGN's unit
	pageCostly    = 3   // PAGE_ALLOC_COSTLY_ORDER
	smallHeadSize = 640 // SKB_SMALL_HEAD_CACHE_SIZE: SKB_HEAD_ALIGN(GRO_MAX_HEAD_PAD = 320)
)

// rxFrameTruesize is the truesize, less the sk_buff, that one received
// frame of an IP packet of ipLen bytes adds to an skb: what tun_get_user
// allocates for it (tun_alloc_skb → alloc_skb_with_frags), as the
// emulator's TUN devices and Mahimahi's deliver frames. The head holds the
// whole packet while headroom and packet stay under a page, else
// SKB_MAX_HEAD(NET_SKB_PAD) = 3,712 bytes of it, with its shared info in
// the small-head cache (up to 640 bytes) or a kmalloc of the next power of
// two; the rest goes to pages of the smallest order (at most
// PAGE_ALLOC_COSTLY_ORDER) that holds it. From 589 to 1,612 bytes of MSS
// that is 2 KiB, the NIC's half page above. Below, the head is smaller
// (1 KiB at MSS 536, where a NIC would still take 2 KiB); above, a
// 9,000-byte frame takes 4,096 + 8,192 bytes, 12,544 with the sk_buff, as
// on a NIC that receives it into three 3 KiB buffers of half an 8 KiB page
// each (ixgbe), and a lone 8,948-byte segment measures scaling_ratio 182.
func rxFrameTruesize(ipLen uint64) uint64 {
	lin := ipLen
	if netSkbPad+ipLen >= pageSize {
		lin = pageSize - skbSharedInfo - netSkbPad // SKB_MAX_HEAD(NET_SKB_PAD)
	}
	t := uint64(smallHeadSize)
	if head := (netSkbPad+lin+smpCacheBytes-1)&^(smpCacheBytes-1) + skbSharedInfo; head > smallHeadSize {
		t = uint64(1) << bits.Len64(head-1) // kmalloc_size_roundup
	}
	for rest := ipLen - lin; rest > 0; {
		order := pageCostly
		for order > 0 && (rest+pageSize-1)&^(pageSize-1) < pageSize<<order {
			order--
		}
		chunk := uint64(pageSize) << order
		t += chunk
		rest -= min(rest, chunk)
	}
	return t
}

// skbTruesize is the truesize of one skb holding frames received frames.
func (w *window) skbTruesize(frames uint64) uint64 {
	return skbStructSize + frames*w.frameTruesize
}

// window is the receive-window and autotuning state of tcp_sock. Windows
// are plain bytes; an advertised window is a multiple of the scale unit
// (1 << wscale), as the kernel rounds it.
type window struct {
	advmss        uint32
	frameTruesize uint64 // rxFrameTruesize of a full segment's frame
	wscale        uint8  // rx_opt.rcv_wscale, the shift this receiver announced
	scalingRatio  uint32 // tp->scaling_ratio, /256
	rcvBuf        uint64 // sk_rcvbuf
	maxBuf        uint64 // tcp_rmem[2]
	windowClamp   uint64
	rcvSsthresh   uint64
	rcvWnd        uint64

	// Receiver RTT estimate (tp->rcv_rtt_est), <<3-scaled microseconds.
	rcvRttUs        uint32
	rcvRttSeq       uint64
	rcvRttTime      int64
	rcvRttStarted   bool
	rcvRttLastTsecr uint32

	// DRS autotuning (tp->rcvq_space).
	rcvqSpace uint64
	rcvqSeq   uint64
	rcvqTime  int64
}

// winFromSpace is tcp_win_from_space: the payload a buffer of space bytes
// of truesize holds.
func (w *window) winFromSpace(space uint64) uint64 {
	return space * uint64(w.scalingRatio) >> rmemToWinScale
}

// spaceFromWin is tcp_space_from_win, its inverse, with the kernel's int
// argument and result: a window of 2^31 or more is negative there,
// sign-extended before the shift, and the quotient is cut to 32 bits.
func (w *window) spaceFromWin(win uint32) uint32 {
	return uint32(uint64(int64(int32(win))) << rmemToWinScale / uint64(w.scalingRatio))
}

// measureScalingRatio is tcp_measure_rcv_mss's scaling_ratio update (6.6+),
// made when a full-sized skb changes rcv_mss: len/truesize of that skb, of
// len bytes in frames frames. A new ratio re-derives the window clamp from
// the buffer (6.14+, tcp_set_window_clamp) and keeps DRS's last measure
// within it, so the first data segment lifts the clamp of the ratio ½
// assumed at the handshake (64088 with a 128 KiB buffer) to the one
// measured (81920 at 160/256).
func (w *window) measureScalingRatio(len, frames uint64) {
	old := w.scalingRatio
	w.scalingRatio = max(uint32(len<<rmemToWinScale/w.skbTruesize(frames)), 1)
	if w.scalingRatio == old {
		return
	}
	w.setWindowClamp(w.winFromSpace(w.rcvBuf))
	if w.windowClamp < w.rcvqSpace {
		w.rcvqSpace = w.windowClamp
	}
}

// sockMinRcvbuf is SOCK_MIN_RCVBUF: one skb of TCP_SKB_MIN_TRUESIZE
// (SOCK_MIN_SNDBUF is the one of two).
const sockMinRcvbuf = tcpSkbMinTruesize

// setWindowClamp follows tcp_set_window_clamp (6.15+) for a non-zero
// value: a lower clamp lowers rcv_ssthresh with it (no SO_RESERVE_MEM
// here), a higher one lets rcv_ssthresh reach the window already offered.
func (w *window) setWindowClamp(val uint64) {
	clamp := max(val, sockMinRcvbuf/2)
	if clamp == w.windowClamp {
		return
	}
	if clamp < w.windowClamp {
		w.rcvSsthresh = min(w.rcvSsthresh, clamp)
	} else {
		w.rcvSsthresh = max(min(w.rcvWnd, clamp), w.rcvSsthresh)
	}
	w.windowClamp = clamp
}

// init follows tcp_openreq_init_rwin → tcp_select_initial_window for a
// passive open: the initial window is the buffer's window part rounded
// down to whole segments, and at most 65535 as it travels unscaled on the
// SYN-ACK (128 KiB with MSS 1448 gives 65160; Linux with MSS 1460 gives
// the familiar 64240).
func (w *window) init(o config.TCPOptions) {
	w.advmss = uint32(o.MSS)
	if w.advmss == 0 {
		w.advmss = defaultMSS
	}
	w.frameTruesize = rxFrameTruesize(uint64(w.advmss) + HeaderBytes)
	w.scalingRatio = defaultScalingRatio // tcp_scaling_ratio_init
	w.rcvBuf = uint64(o.RcvBufInit)
	if w.rcvBuf == 0 {
		w.rcvBuf = uint64(defaultRcvBufInit)
	}
	w.maxBuf = max(uint64(o.RcvBufMax), w.rcvBuf)
	if o.RcvBufMax == 0 {
		w.maxBuf = max(uint64(defaultRcvBufMax), w.rcvBuf)
	}
	space := w.winFromSpace(w.rcvBuf)
	if space > uint64(w.advmss) {
		space -= space % uint64(w.advmss)
	}
	// Not capped at 65535 (tcp_workaround_signed_windows is 0): only the
	// SYN-ACK's unscaled field is (sendSynAck); the child socket takes
	// the whole window as rcv_wnd and rcv_ssthresh.
	w.rcvWnd = space
	w.rcvSsthresh = w.rcvWnd
	w.wscale = WScale(units.Bytes(w.maxBuf))
	// tcp_select_initial_window leaves the largest scaled window as the
	// clamp; tcp_init_buffer_space lowers it at establishment.
	w.windowClamp = 65535 << 14
}

// WScale is the window-scale shift a Linux host announces with tcp_rmem[2]
// = rcvBufMax (0: the default) and the default net.core.rmem_max, 4 MiB
// since 6.18 (tcp_select_initial_window): ilog2 of the larger, less 15, in
// [0, 14].
func WScale(rcvBufMax units.Bytes) uint8 {
	if rcvBufMax == 0 {
		rcvBufMax = defaultRcvBufMax
	}
	space := max(uint64(rcvBufMax), defaultRmemMax)
	return uint8(min(max(bits.Len64(space)-1-15, 0), 14))
}

// RcvBufForWindow is the tcp_rmem[2] whose window reaches win: the buffer
// tcp_win_from_space turns into win at the scaling ratio a lone full-sized
// segment of mss measures, or at ½ for an mss of TCP_MSS_DEFAULT or less,
// which never measures one (its first segment is as long as the rcv_mss
// it starts at). It is what a capture's largest advertised window says of
// its receiver's buffer ceiling.
func RcvBufForWindow(win, mss units.Bytes) units.Bytes {
	ratio := uint64(defaultScalingRatio)
	if mss > tcpMssDefault {
		ratio = max(uint64(mss)<<rmemToWinScale/(skbStructSize+rxFrameTruesize(uint64(mss)+HeaderBytes)), 1)
	}
	return units.Bytes((uint64(win)<<rmemToWinScale + ratio - 1) / ratio)
}

// alignUp is the kernel's ALIGN to the scale unit, 1 << wscale: x rounded
// up to a multiple of it.
func (w *window) alignUp(x uint64) uint64 {
	unit := uint64(1) << w.wscale
	return (x + unit - 1) &^ (unit - 1)
}

// initBufferSpace follows tcp_init_buffer_space at establishment: the
// clamp becomes the buffer's window part less one reserved segment
// (tcp_app_win = 31), and DRS starts measuring from ten segments.
func (w *window) initBufferSpace(now sim.Time, copiedSeq uint64) {
	maxwin := w.winFromSpace(w.rcvBuf)
	adv := uint64(w.advmss)
	if w.windowClamp >= maxwin {
		w.windowClamp = maxwin
		if maxwin > 4*adv {
			w.windowClamp = max(maxwin-(maxwin>>31), 4*adv)
		}
	}
	if w.windowClamp > 2*adv && w.windowClamp+adv > maxwin {
		w.windowClamp = max(2*adv, maxwin-adv)
	}
	w.rcvSsthresh = min(w.rcvSsthresh, w.windowClamp)
	w.rcvqTime = usNow(now)
	w.rcvqSeq = copiedSeq
	w.rcvqSpace = min(w.rcvSsthresh, w.rcvWnd, 10*adv)
}

// space is tcp_space: the window part of the buffer not yet used.
func (w *window) space(rmem uint64) uint64 {
	if rmem >= w.rcvBuf {
		return 0
	}
	return w.winFromSpace(w.rcvBuf - rmem)
}

// selectWindowRaw follows __tcp_select_window: the free window part of the
// buffer, capped by rcv_ssthresh and rounded up to the scale unit, so that
// scaling does not take it away; when the buffer is more than half full,
// quick-ACK mode ends, the free part is first rounded down (it must not
// grow by the rounding), and a window below one segment (or 1/16 of the
// buffer) is announced as zero.
func (r *Receiver) selectWindowRaw() uint64 {
	w := &r.win
	mss := uint64(r.ack.rcvMss)
	free := w.space(r.rmemAlloc())
	allowed := w.winFromSpace(w.rcvBuf)
	full := min(w.windowClamp, allowed)
	if mss > full {
		mss = full
		if mss == 0 {
			return 0
		}
	}
	if free < full>>1 {
		r.ack.quick = 0
		free &^= uint64(1)<<w.wscale - 1 // round_down
		if free < allowed>>4 || free < mss {
			return 0
		}
	}
	return w.alignUp(min(free, w.rcvSsthresh))
}

// selectWindow follows tcp_select_window: never shrink the window already
// offered (what is left of it, rounded up to the scale unit), remember what
// is advertised (rcv_wnd, rcv_wup), and cap what the scaled 16-bit field
// carries.
func (r *Receiver) selectWindow() uint64 {
	cur := r.receiveWindow()
	nw := r.selectWindowRaw()
	if nw < cur {
		nw = r.win.alignUp(cur)
	}
	r.win.rcvWnd = nw
	r.rcvWup = r.rcvNxt
	return min(nw, 65535<<r.win.wscale)
}

// rcvRttUpdate follows tcp_rcv_rtt_update (6.16+): a sample below the
// estimate is taken at once; a larger one is dropped when window-based,
// or when data waits unread (queued reflects rcv_nxt != copied_seq), and
// otherwise smoothed in with gain 1/8. The estimate is <<3-scaled.
func (w *window) rcvRttUpdate(sampleUs int64, winDep, queued bool) {
	sample := uint32(sampleUs) // the kernel's u32, shifted as one
	old := w.rcvRttUs
	if m := sample << 3; old == 0 || m < old {
		w.rcvRttUs = m
		return
	}
	if winDep || queued {
		return
	}
	w.rcvRttUs = old - old>>3 + sample
}

// rcvRttMeasure follows tcp_rcv_rtt_measure: the time to receive one
// window of data is an upper bound on the RTT.
func (w *window) rcvRttMeasure(rcvNxt uint64, now sim.Time) {
	us := usNow(now)
	if w.rcvRttStarted {
		if rcvNxt < w.rcvRttSeq {
			return
		}
		w.rcvRttUpdate(max(us-w.rcvRttTime, 1), true, false)
	}
	w.rcvRttStarted = true
	w.rcvRttSeq = rcvNxt + w.rcvWnd
	w.rcvRttTime = us
}

// rcvRttMeasureTS follows tcp_rcv_rtt_measure_ts (6.16+): a segment
// echoing a new timestamp of ours records it (rcv_rtt_last_tsecr), and if
// it is full-sized (full: at least rcv_mss) measures the RTT in timestamp
// ticks (milliseconds, tsNow being the receiver's clock); a zero delta is
// no sample (tcp_rtt_tsopt_us with min_delta 0), which leaves
// sub-millisecond paths to the window-based samples. queued is rcv_nxt !=
// copied_seq.
func (w *window) rcvRttMeasureTS(tsEcr, tsNow uint32, queued, full bool) {
	if tsEcr == w.rcvRttLastTsecr {
		return
	}
	w.rcvRttLastTsecr = tsEcr
	if !full {
		return // a short segment takes the echo but gives no sample
	}
	if m := rttTsoptUs(tsNow, tsEcr, 0); m > 0 {
		w.rcvRttUpdate(m, false, queued)
	}
}

// rcvSpaceAdjust follows tcp_rcv_space_adjust (DRS, 6.16+): once per
// receiver RTT, if the application read more than in the previous RTT
// (less what still waits unread, inq), rcvbufGrow sizes the buffer.
// oooSpan is what waits out of order beyond rcv_nxt (0 with the
// out-of-order queue empty): tcp_rcvbuf_grow adds it whichever of its two
// callers it serves, so a measure taken while a hole is still open sizes
// the buffer for the data beyond it as well.
func (w *window) rcvSpaceAdjust(copiedSeq, rcvNxt, oooSpan uint64, now sim.Time) {
	us := usNow(now)
	elapsed := us - w.rcvqTime
	if w.rcvRttUs == 0 || elapsed < int64(w.rcvRttUs>>3) {
		return
	}
	copied := int64(copiedSeq-w.rcvqSeq) - int64(rcvNxt-copiedSeq)
	if copied > int64(w.rcvqSpace) {
		w.rcvbufGrow(uint64(copied), oooSpan)
	}
	w.rcvqSeq = copiedSeq
	w.rcvqTime = us
}

// rcvbufGrow follows tcp_rcvbuf_grow (6.18: "DRS is always one RTT late",
// plus the slow-start term of "fix too slow tcp_rcvbuf_grow() action"):
// twice what was read in the last RTT, plus twice that scaled by its
// growth over the RTT before, plus the out-of-order span beyond rcv_nxt,
// up to tcp_rmem[2]; the clamp follows the buffer. rcvwin is the kernel's
// u32, wrapping as it does.
func (w *window) rcvbufGrow(newval, oooSpan uint64) {
	old := w.rcvqSpace
	w.rcvqSpace = newval
	if old == 0 {
		return // not established: the kernel's sk_socket guard
	}
	rcvwin := uint32(newval << 1)
	grow := uint64(rcvwin) * uint64(uint32(newval-old)) / uint64(uint32(old))
	rcvwin += uint32(grow << 1)
	rcvwin += uint32(oooSpan)
	rcvbuf := min(uint64(w.spaceFromWin(rcvwin)), w.maxBuf)
	if rcvbuf > w.rcvBuf {
		w.rcvBuf = rcvbuf
		w.windowClamp = w.winFromSpace(rcvbuf)
	}
}
