package tcp

import "github.com/ccscope/ccscope/engine/packet"

// segment is what TCP sees of an arriving skb: one packet, or a GRO
// aggregate of several back-to-back packets.
type segment struct {
	seq, end     uint64
	flags        packet.Flags
	tsVal, tsEcr uint32
	ecn          packet.ECN
	segs         uint32 // gso_segs: packets in this skb
	segLen       uint32 // gso_size, or the length of a lone packet
}

// describe sets sg to describe a lone packet. It writes field by field:
// a composite literal of more than four fields is built on the stack and
// copied in 16-byte loads, which stall on store forwarding.
func (sg *segment) describe(p *packet.Packet) {
	sg.seq, sg.end, sg.flags = p.Seq, p.Seq+uint64(p.Len), p.Flags
	sg.tsVal, sg.tsEcr, sg.ecn = p.TSVal, p.TSEcr, p.ECN
	sg.segs, sg.segLen = 1, p.Len
}

// pawsWindow is TCP_PAWS_WINDOW: how many timestamp ticks a segment's
// TSval may lag ts_recent and still pass PAWS.
const pawsWindow = 1

// rcvSegment processes one segment in ESTABLISHED state. The segment and
// the functions below take it by pointer (the struct is 40 bytes) and
// never change it. It follows
// tcp_rcv_established's slow path (the fast path does the same for the
// receiver's purposes): tcp_ack's receiver-side effects (ts_recent,
// tcp_ecn_accept_cwr), tcp_rcv_rtt_measure_ts, tcp_data_queue and
// tcp_ack_snd_check; then the application reads (tcp_recvmsg →
// tcp_rcv_space_adjust, tcp_cleanup_rbuf). sg is one packet or a GRO
// aggregate.
func (r *Receiver) rcvSegment(sg *segment) {
	now := r.s.Now()
	// PAWS (RFC 7323, tcp_validate_incoming's first check): data whose
	// timestamp is more than TCP_PAWS_WINDOW (one tick) older than
	// ts_recent is a stale duplicate, as when an original overtaken by its
	// retransmission arrives after it: dropped and answered with a dupack
	// (not rate-limited for data). A pure ACK is a disordered ACK, let
	// through (tcp_disordered_ack_check).
	if sg.seq != sg.end && r.tsRecent != 0 && int32(r.tsRecent-sg.tsVal) > pawsWindow {
		r.stats.PAWSDrops++
		r.sendDupack(sg)
		return
	}
	edge := r.rcvNxt + r.receiveWindow()
	if sg.end < r.rcvWup || sg.seq > edge || sg.end > edge && r.rcvNxt != r.copiedSeq {
		// tcp_sequence: entirely left of the advertised window (an old
		// duplicate: quick-ACK mode and a D-SACK), beyond its right
		// edge, or across it while data waits unread (6.18 accepts a
		// segment past the edge only into an empty receive queue) →
		// tcp_send_dupack. This is tcp_validate_incoming, before
		// tcp_data_queue clears the D-SACK state: a D-SACK still waiting
		// in a compressed ACK leaves with this one. A zero-length segment
		// (a window probe, a stray ACK) is answered at most once per
		// 500 ms (tcp_oow_rate_limited); data always is.
		if sg.seq != sg.end || !oowRateLimited(r.ack.hz, now, &r.estOOW) {
			r.sendDupack(sg)
		}
		return
	}
	// Only a segment that passed validation counts in AccECN's counters
	// (step5's tcp_ecn_received_counters_payload).
	r.ecn.countAccECN(sg, &r.ack)
	// tcp_replace_ts_recent (RFC 7323 §4.3): only a segment covering the
	// last ACKed point updates the echoed timestamp, and never backwards.
	if sg.seq <= r.rcvWup && int32(sg.tsVal-r.tsRecent) >= 0 {
		r.tsRecent = sg.tsVal
	}
	r.ecn.acceptCWR(sg, &r.ack)
	r.win.rcvRttMeasureTS(sg.tsEcr, r.ack.hz.ms(now), r.rcvNxt != r.copiedSeq, sg.end-sg.seq >= uint64(r.ack.rcvMss))
	r.dataQueue(sg)
	if r.ack.pending&ackSched != 0 {
		r.ackSndCheck()
	}
	r.appRead()
}

// dataQueue follows tcp_data_queue.
func (r *Receiver) dataQueue(sg *segment) {
	if sg.seq == sg.end {
		return
	}
	r.sack.dsackReset()
	switch {
	case sg.seq == r.rcvNxt:
		if r.receiveWindow() == 0 {
			r.outOfWindow()
			return
		}
		r.queueAndOut(sg)
	case sg.end <= r.rcvNxt:
		// A retransmit, 2nd most common case: force an immediate ACK.
		r.sack.dsackSet(sg.seq, sg.end)
		r.outOfWindow()
	case sg.seq >= r.rcvNxt+r.receiveWindow():
		// Out of window, e.g. a zero-window probe.
		r.outOfWindow()
	case sg.seq < r.rcvNxt:
		// Partial packet, seq < rcv_nxt < end_seq.
		r.sack.dsackSet(sg.seq, r.rcvNxt)
		if r.receiveWindow() == 0 {
			r.outOfWindow()
			return
		}
		r.queueAndOut(sg)
	default:
		r.dataQueueOfo(sg)
	}
}

// outOfWindow is tcp_data_queue's out_of_window label: quick-ACK mode and
// an ACK for a segment that was dropped.
func (r *Receiver) outOfWindow() {
	r.ack.enterQuickack(tcpMaxQuickacks, uint32(r.win.rcvWnd))
	r.ack.pending |= ackSched
}

// queueAndOut is tcp_data_queue's in-sequence branch: tcp_queue_rcv,
// tcp_event_data_recv, tcp_ofo_queue and tcp_sack_remove.
func (r *Receiver) queueAndOut(sg *segment) {
	if r.copiedSeq == r.rcvNxt {
		r.headEnd = sg.end // tcp_queue_rcv on an empty receive queue
	}
	r.rcvNxt = sg.end
	r.eventDataRecv(sg)
	if len(r.ofo.iv) > 0 {
		r.ofoQueue()
		// RFC 5681 §4.2: SHOULD send an immediate ACK when a gap is filled.
		if len(r.ofo.iv) == 0 {
			r.ack.pending |= ackNow
		}
	}
	if r.sack.num > 0 {
		r.sack.remove(r.rcvNxt, len(r.ofo.iv) == 0)
	}
}

// ofoQueue follows tcp_ofo_queue: data at the head of the out-of-order
// queue that rcv_nxt now reaches moves in order; what the new segment
// duplicated, from the queued data's start to the lesser of its end and
// the rcv_nxt the segment brought (dsack_high), is reported as D-SACK.
func (r *Receiver) ofoQueue() {
	dsackHigh := r.rcvNxt
	for len(r.ofo.iv) > 0 {
		head := r.ofo.iv[0]
		if head.Start > r.rcvNxt {
			return
		}
		if head.Start < dsackHigh {
			r.sack.dsackExtend(head.Start, min(dsackHigh, head.End))
			dsackHigh = min(dsackHigh, head.End)
		}
		r.ofo.popFront()
		r.rcvNxt = max(r.rcvNxt, head.End)
	}
}

// dataQueueOfo follows tcp_data_queue_ofo: the segment joins the sorted
// interval set, duplicate bytes become D-SACK, and the SACK blocks are
// updated with the most recent first.
func (r *Receiver) dataQueueOfo(sg *segment) {
	r.ecn.checkCE(sg, r)
	r.ack.measureRcvMss(sg, &r.win) // 6.17+: out-of-order data counts too
	r.ack.pending |= ackSched
	r.stats.OfoSegments += uint64(sg.segs)
	added := r.ofo.insert(sg.seq, sg.end, &r.sack)
	if r.cfg.Opts.SACK {
		r.sackNewOfoSkb(sg.seq, sg.end)
		// For SACK flows only, grow the window on out-of-order data, but
		// not for a segment whose bytes were all present (the kernel
		// drops that skb before tcp_grow_window).
		if added > 0 {
			r.growWindow(sg)
		}
	}
	// The buffer grows to hold what waits beyond rcv_nxt (6.16+).
	r.win.rcvbufGrow(r.win.rcvqSpace, r.oooSpan())
}

// oooSpan is the out-of-order span tcp_rcvbuf_grow adds to the window it
// sizes the buffer for: from rcv_nxt to the end of the highest queued
// segment (ooo_last_skb), 0 with the out-of-order queue empty.
func (r *Receiver) oooSpan() uint64 {
	if len(r.ofo.iv) == 0 {
		return 0
	}
	return r.ofo.iv[len(r.ofo.iv)-1].End - r.rcvNxt
}

// eventDataRecv follows tcp_event_data_recv: schedule an ACK, measure the
// peer's MSS and the receiver RTT, adapt the delayed-ACK timeout ato to the
// inter-arrival time, check ECN and grow the window.
func (r *Receiver) eventDataRecv(sg *segment) {
	now := r.s.Now()
	a := &r.ack
	a.pending |= ackSched
	a.measureRcvMss(sg, &r.win)
	r.win.rcvRttMeasure(r.rcvNxt, now)
	j := a.hz.jiffies(now)
	if a.ato == 0 {
		// The first data packet received: initialise delayed ACK.
		a.incrQuickack(tcpMaxQuickacks, uint32(r.win.rcvWnd))
		a.setATO(a.hz.atoMin())
	} else {
		m := j - a.lrcvtime
		switch {
		case m <= a.hz.atoMin()/2:
			// The fastest case is the first.
			a.setATO(a.ato>>1 + a.hz.atoMin()/2)
		case m < a.ato:
			a.setATO(a.ato>>1 + m) // stored, then compared
			if a.ato > a.rto {
				a.setATO(a.rto)
			}
		case m > a.rto:
			// Too long gap: the sender failed to restart its window;
			// send ACKs quickly.
			a.incrQuickack(tcpMaxQuickacks, uint32(r.win.rcvWnd))
		}
	}
	a.lrcvtime = j
	r.ecn.checkCE(sg, r)
	if sg.end-sg.seq >= 128 {
		r.growWindow(sg)
	}
}

// receiveWindow is tcp_receive_window: what is left of the window last
// advertised.
func (r *Receiver) receiveWindow() uint64 {
	edge := r.rcvWup + r.win.rcvWnd
	if edge <= r.rcvNxt {
		return 0
	}
	return edge - r.rcvNxt
}

// growWindow follows tcp_grow_window: rcv_ssthresh, the cap on the
// advertised window, grows by two segments per arriving segment while the
// buffer has room and the segment's truesize fits the window it would buy
// ("check #2": tcp_win_from_space(truesize) <= len); a segment with more
// overhead grows it only while rcv_ssthresh is small (growWindowSlow).
// Growing asks for a quick ACK so the sender learns it.
func (r *Receiver) growWindow(sg *segment) {
	w := &r.win
	room := int64(min(w.windowClamp, w.space(r.rmemAlloc()))) - int64(w.rcvSsthresh)
	if room <= 0 {
		return
	}
	n := sg.end - sg.seq
	incr := 2 * uint64(w.advmss)
	if truesize := w.skbTruesize(uint64(sg.segs)); w.winFromSpace(truesize) > n {
		if incr = r.growWindowSlow(n, truesize); incr == 0 {
			return
		}
	}
	w.rcvSsthresh += min(uint64(room), max(incr, 2*n))
	r.ack.quick |= 1
}

// growWindowSlow is __tcp_grow_window: a segment of n bytes whose truesize
// buys more window than it carries grows rcv_ssthresh by two of rcv_mss
// while rcv_ssthresh is at most half the window of tcp_rmem[2]; each
// halving of the window beyond that needs the segment to be twice as
// dense. A segment of 536 bytes in a 1,280-byte skb at the ratio ½ (an
// MSS of 536 never measures another) grows it to a quarter of tcp_rmem[2].
func (r *Receiver) growWindowSlow(n, truesize uint64) uint64 {
	w := &r.win
	t := w.winFromSpace(truesize) >> 1
	window := w.winFromSpace(w.maxBuf) >> 1
	for w.rcvSsthresh <= window {
		if t <= n {
			return 2 * uint64(r.ack.rcvMss)
		}
		t >>= 1
		window >>= 1
	}
	return 0
}

// rmemAlloc is sk_rmem_alloc: the truesize of unread and out-of-order
// data. Unread in-order data is one coalesced skb; each out-of-order
// interval is one skb, its frames counted from its bytes (the intervals'
// rounding is folded into one).
func (r *Receiver) rmemAlloc() uint64 {
	adv := uint64(r.win.advmss)
	var m uint64
	if unread := r.rcvNxt - r.copiedSeq; unread > 0 {
		m += r.win.skbTruesize((unread + adv - 1) / adv)
	}
	if n := uint64(len(r.ofo.iv)); n > 0 {
		m += n*skbStructSize + (r.ofo.bytes+adv-1)/adv*r.win.frameTruesize
	}
	return m
}

// appRead is the application's recvmsg: it copies all in-order data at
// once, then tcp_rcv_space_adjust autotunes the buffer and tcp_cleanup_rbuf
// may send an ACK.
func (r *Receiver) appRead() {
	if r.cfg.DataReady != nil {
		// An application that reads through Read: told once the packet or
		// timer at hand is done (Receive, Handle).
		r.ready = r.rcvNxt != r.copiedSeq
		return
	}
	if r.readStopped {
		return // a stalled reader (tests)
	}
	if r.rcvNxt == r.copiedSeq {
		return
	}
	r.consume(r.rcvNxt - r.copiedSeq)
	r.cleanupRbuf()
}

// consume is tcp_recvmsg_locked's copy of n bytes of in-order data, which
// calls tcp_rcv_space_adjust after each skb. Only the first call can
// measure: it restarts the measure at the read's instant, so the calls
// after it find no time elapsed. It measures at the end of the first skb,
// with the rest of the queue unread (inq). That skb is the segment that
// found the receive queue empty (headEnd), or, once a partial read has
// passed it, one packet: a TUN device's skbs are never coalesced. So the
// data a filled hole releases at once counts as unread, not as read in the
// last RTT, and does not inflate the buffer.
func (r *Receiver) consume(n uint64) {
	first := r.copiedSeq + uint64(r.ack.rcvMss)
	if r.headEnd > r.copiedSeq {
		first = r.headEnd
	}
	r.win.rcvSpaceAdjust(min(first, r.copiedSeq+n), r.rcvNxt, r.oooSpan(), r.s.Now())
	r.copiedSeq += n
}

// cleanupRbuf follows the ACK decision of tcp_cleanup_rbuf after a read:
// ACK if the every-second-segment ACK is still owed, if a pushed segment
// was drained, or if the read opened the window "significantly" (at least
// doubled it).
func (r *Receiver) cleanupRbuf() {
	a := &r.ack
	timeToAck := false
	if a.pending&ackSched != 0 {
		if r.rcvNxt-r.rcvWup > uint64(a.rcvMss) ||
			(a.pending&(ackPushed|ackPushed2) != 0 && r.rmemAlloc() == 0) {
			timeToAck = true
		}
	}
	if !timeToAck {
		now := r.receiveWindow()
		if 2*now <= r.win.windowClamp {
			nw := r.selectWindowRaw()
			if nw != 0 && nw >= 2*now {
				timeToAck = true
			}
		}
	}
	if timeToAck {
		r.sendAck(r.rcvNxt)
	}
}
