package tcp

import (
	"math/bits"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

// sndBufFull reports whether the application has more to write than the
// send buffer takes (it would be blocked: SOCK_NOSPACE).
func (d *DataSender) sndBufFull() bool {
	b := d.sndBuf
	return b > 0 && d.sndQueued(d.writeSeq) >= b && (d.endSeq == 0 || d.writeSeq < d.endSeq)
}

// The send buffer starts at tcp_wmem[1] and grows with cwnd up to
// tcp_wmem[2] (Opts.SndBuf), as the kernel's does unless the application
// sets SO_SNDBUF. A 128 KB tcp_wmem[2] on 100 Mbps over 40 ms (bpftrace on
// tcp:tcp_probe, Linux 6.18): sk_sndbuf 46,080 bytes at the first ACK, so
// the writer's first call queued 32 segments (the simulator's, counting
// whole skbs of the size goal, 44; with the whole 128 KB it took 88), and
// 128,000 from cwnd 34 on. Slow start's bursts follow from that first
// write: Reno's 6 s there retransmitted 454 segments with the whole
// buffer from the start, 149 now, the kernel 157–174.
const (
	sndBufInit = 16384 // tcp_wmem[1]
	// sndBufUnlimited is tcp_wmem[2] for an unlimited send buffer, here
	// and on the emulator's hosts (SndBufMax): the buffer still starts
	// small and grows with cwnd.
	sndBufUnlimited = 1 << 30
	// The worst case of an skb per segment (tcp_sndbuf_expand's per_mss):
	// the MSS with MAX_TCP_HEADER and skb_shared_info (320) rounded up to a
	// power of two, and the sk_buff (256): 2,304 bytes at MSS 1448.
	skbSharedInfo   = 320 // SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
	tcpOptTimestamp = 12  // mss_clamp is the MSS before the timestamp option
)

// initSndBuf follows tcp_init_sock and tcp_init_buffer_space: sk_sndbuf
// starts at tcp_wmem[1] and is expanded for the initial window at once.
// Only a greedy writer can fill it (a rate or on/off application keeps
// below tcp_wmem[2] alone).
func (d *DataSender) initSndBuf() {
	if d.cfg.App.Kind != config.Greedy {
		d.sndBuf = uint64(d.cfg.Opts.SndBuf)
		return
	}
	d.sndBuf = min(sndBufInit, SndBufMax(d.cfg.Opts))
	d.sndbufExpand()
}

// SndBufMax is tcp_wmem[2] for a flow's options, here and on the
// emulator's hosts.
func SndBufMax(o config.TCPOptions) uint64 {
	if o.SndBuf == 0 {
		return sndBufUnlimited
	}
	return uint64(o.SndBuf)
}

// sndbufExpand follows tcp_sndbuf_expand: room for two windows (the CC's
// sndbuf_expand: three for BBR) of max(TCP_INIT_CWND, cwnd, reordering+1)
// segments at per_mss each, never less than the buffer has, at most
// tcp_wmem[2].
func (d *DataSender) sndbufExpand() {
	limit := SndBufMax(d.cfg.Opts)
	if d.sndBuf >= limit {
		return
	}
	perMSS := uint64(1)<<bits.Len64(d.mss+tcpOptTimestamp+cc.MaxTCPHeader+skbSharedInfo-1) + skbStructSize
	segs := max(uint64(cc.InitCwnd), uint64(d.st.CwndPkts), uint64(d.reordering)+1)
	windows := uint64(2)
	if d.hooks.SndBuf != nil {
		windows = uint64(d.hooks.SndBuf.SndBufExpand())
	}
	if mem := windows * segs * perMSS; d.sndBuf < mem {
		d.sndBuf = min(mem, limit)
	}
}

// checkSpace is tcp_check_space's buffer growth: with the writer blocked
// on its full send buffer (SOCK_NOSPACE) and cwnd not all in flight
// (tcp_should_expand_sndbuf), tcp_new_space grows it. dataSndCheck runs it
// at the end of an ACK's push, and tcp_event_new_data_sent after each skb
// sent, so a push of several chunks grows the buffer though its last fills
// cwnd. Whether the writer wakes is decided once the ACK's processing is
// done (dataSndCheck), with the same buffer and sk_wmem_queued: sending
// frees nothing, and the writer runs only after the softirq. bpftrace on
// tcp:tcp_probe (Reno, 4 MiB and 128 KB tcp_wmem): the kernel's buffer grew
// at an ACK that took cwnd from 32 to 34, which came with 49,232 bytes
// unsent and left 43,440, its push's two chunks filling cwnd
// (TestSndBufExpandsAsKernel).
func (d *DataSender) checkSpace() {
	if d.appAsleep && d.cfg.App.Kind == config.Greedy && d.state == sndEstablished &&
		d.sb.inFlight() < d.st.CwndPkts {
		d.sndbufExpand()
		d.cwndStamp = d.st.Now
	}
}

// dataSndCheck follows tcp_data_snd_check after an ACK: send what waits
// (tcp_push_pending_frames, if a send head waits), then tcp_check_space,
// where a writer blocked on its full send buffer (SOCK_NOSPACE) has the
// buffer grown (tcp_new_space: unless cwnd is all in flight) before
// sk_stream_write_space decides whether to wake it (writeThenSend).
func (d *DataSender) dataSndCheck() {
	if !d.appAsleep || d.cfg.App.Kind != config.Greedy || d.state != sndEstablished {
		d.push()
		return
	}
	idle := false
	if d.writeSeq > d.sndNxt {
		idle = d.writeXmit(0)
	}
	d.checkSpace()
	d.writeThenSend(true, idle)
}

// skbOverhead is what an skb of the send queues adds to sk_wmem_queued
// beyond its payload: the truesize of tcp_stream_alloc_skb's head (one
// byte written into an skb of its own adds 833 bytes, `ss -m`, Linux 6.18).
const skbOverhead = 832

// sndQueued is sk_wmem_queued were the application's writes to reach
// writeSeq w: payload unacked and unsent, and each skb's overhead. The
// retransmission queue holds an skb per chunk sent (less those acked);
// unsent data lies in the write queue's skbs (writeQueue), and writes
// beyond writeSeq would top up its tail, then take skbs of the size goal.
func (d *DataSender) sndQueued(w uint64) uint64 {
	skbs := uint64(d.sb.skbs) + uint64(d.wq.n())
	if w > d.writeSeq {
		skbs += d.wq.newSkbs(d.sndNxt, d.writeSeq, w, d.xmitSizeGoal())
	}
	return w - d.sndUna + skbs*skbOverhead
}
