package tcp

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// icsk_ack.pending bits (include/net/inet_connection_sock.h).
const (
	ackSched   uint8 = 1 << iota // ICSK_ACK_SCHED: an ACK is owed
	ackTimer                     // ICSK_ACK_TIMER: the delayed-ACK timer runs
	ackPushed                    // ICSK_ACK_PUSHED
	ackPushed2                   // ICSK_ACK_PUSHED2
	ackNow                       // ICSK_ACK_NOW: send an ACK immediately
)

// ackState is the delayed-ACK engine (struct inet_connection_sock's
// icsk_ack, plus the RTT state the receiver keeps in tcp_sock). Times are
// in jiffies, as the kernel keeps them.
type ackState struct {
	pending     uint8
	quick       uint32 // quick-ACKs left
	ato         int64  // delayed-ACK timeout, jiffies; 0 until the first data (set with setATO)
	lrcvtime    int64  // jiffies of the last data arrival
	timeout     int64  // jiffies when the delayed-ACK timer fires
	rcvMss      uint32 // icsk_ack.rcv_mss: our guess of the peer's MSS
	lastSegSize uint32
	rto         int64  // icsk_rto, jiffies
	srttUs      uint32 // srtt_us (<<3), from the SYN-ACK RTT
	hz          hzClock

	// SACK compression (tp->compressed_ack and friends).
	compressedAck       uint32
	compressedAckRcvNxt uint64
	dupAckCounter       uint32
}

func (a *ackState) init(hz hzClock) { a.hz, a.rto = hz, hz.timeoutInit() }

// atoBits is ATO_BITS: icsk_ack.ato is an 8-bit field (since 6.7), so what
// is stored is the value's low 8 bits. A doubled or RTO-capped ato of 256
// jiffies or more (an RTO from an RTT over about 56 ms at HZ 1000, 340 ms
// at HZ 250) wraps: 300 is kept as 44, and 256 as 0, which the next data
// segment takes for the first (quick-ACK mode, ato TCP_ATO_MIN).
const atoBits = 8

// setATO stores v in icsk_ack.ato.
func (a *ackState) setATO(v int64) { a.ato = v & (1<<atoBits - 1) }

// rttSample follows tcp_rtt_estimator's first sample and tcp_set_rto:
// srtt = m (srtt_us at least 1, so a 0 µs sample leaves srtt_us >> 3 at
// 0), rttvar = max(2m, TCP_RTO_MIN), rto = srtt + rttvar. A pure receiver
// gets exactly one sample, from the SYN-ACK.
func (a *ackState) rttSample(mUs int64) {
	a.srttUs = max(uint32(mUs<<3), 1)
	rttvar := max(mUs<<1, rtoMinUs) // tcp_rto_min_us
	rtoUs := mUs + rttvar
	a.rto = min(a.hz.usecs(rtoUs), a.hz.rtoMax())
}

// initRcvMss follows tcp_initialize_rcv_mss: underestimate the peer's MSS
// until tcp_measure_rcv_mss sees full-sized segments.
func (a *ackState) initRcvMss(advmss uint32, rcvWnd uint32) {
	hint := min(advmss, rcvWnd/2, tcpMssDefault)
	a.rcvMss = max(hint, tcpMinMss)
}

// measureRcvMss follows tcp_measure_rcv_mss: learn the sender's segment
// size, and mark small or PSH segments "pushed" so that reading them
// empties the queue with an immediate ACK. A full-sized skb that changes
// rcv_mss also sets the window's scaling_ratio (6.6+).
func (a *ackState) measureRcvMss(sg *segment, w *window) {
	advmss := w.advmss
	lss := a.lastSegSize
	a.lastSegSize = 0
	l := sg.segLen
	if l >= a.rcvMss {
		if l != a.rcvMss {
			w.measureScalingRatio(sg.end-sg.seq, uint64(sg.segs))
		}
		a.rcvMss = min(l, advmss)
		if sg.flags&packet.PSH != 0 {
			a.pending |= ackPushed
		}
		return
	}
	// Compare the segment with its header (SACK blocks vary; timestamps
	// do not) against the minimum sizes of full segments.
	hl := l + tcpHeaderLen
	const remnant = packet.FIN | packet.URG | packet.SYN | packet.PSH
	if hl >= tcpMssDefault+20 || (hl >= tcpMinMss+20 && sg.flags&remnant == 0) {
		l = hl - tcpHeaderLen
		a.lastSegSize = l
		if l == lss {
			a.rcvMss = l
			return
		}
	}
	if a.pending&ackPushed != 0 {
		a.pending |= ackPushed2
	}
	a.pending |= ackPushed
}

// incrQuickack follows tcp_incr_quickack: enough quick ACKs to open the
// sender's window, quickacks = rcv_wnd / (2 rcv_mss), at most max.
func (a *ackState) incrQuickack(maxQuick uint32, rcvWnd uint32) {
	q := rcvWnd / (2 * a.rcvMss)
	if q == 0 {
		q = 2
	}
	q = min(q, maxQuick)
	if q > a.quick {
		a.quick = q
	}
}

// enterQuickack follows tcp_enter_quickack_mode (the receiver never
// enters ping-pong mode: it sends no data).
func (a *ackState) enterQuickack(maxQuick uint32, rcvWnd uint32) {
	a.incrQuickack(maxQuick, rcvWnd)
	a.setATO(a.hz.atoMin())
}

// inQuickack is tcp_in_quickack_mode.
func (a *ackState) inQuickack() bool { return a.quick != 0 }

// ackSndCheck follows __tcp_ack_snd_check: ACK now if more than one
// full-sized segment is unacknowledged and the window would not shrink, in
// quick-ACK mode, or when ICSK_ACK_NOW asks; otherwise delay the ACK, or,
// with out-of-order data, send the first three duplicate ACKs for a given
// rcv_nxt and then compress SACKs. A delayed every-second-segment ACK still leaves at once when the
// application reads (cleanupRbuf). The SO_RCVLOWAT clause (rcv_nxt −
// copied_seq < 1) is left out: new in-order data is unread here (the
// application runs after this softirq work), and out-of-order data that
// finds everything read and more than a segment unacknowledged is the
// first at its rcv_nxt (an ACK sent there would have brought rcv_wup up
// to it), whose duplicate ACK leaves at once anyway.
func (r *Receiver) ackSndCheck() {
	a := &r.ack
	if !r.cfg.Opts.DelayedAck ||
		(r.rcvNxt-r.rcvWup > uint64(a.rcvMss) && r.selectWindowRaw() >= r.win.rcvWnd) ||
		a.inQuickack() || a.pending&ackNow != 0 {
		r.sendAck(r.rcvNxt)
		return
	}
	if len(r.ofo.iv) == 0 {
		r.sendDelayedAck()
		return
	}
	if !r.cfg.Opts.SACK || a.compressedAck >= compSackNr {
		r.sendAck(r.rcvNxt)
		return
	}
	if a.compressedAckRcvNxt != r.rcvNxt {
		a.compressedAckRcvNxt = r.rcvNxt
		a.dupAckCounter = 0
	}
	if a.dupAckCounter < tcpFastRetransThresh {
		a.dupAckCounter++
		r.sendAck(r.rcvNxt)
		return
	}
	a.compressedAck++
	if r.compress.Armed() {
		return
	}
	// Compress-ACK timer: 5 % of the RTT, at most comp_sack_delay_ns.
	// rtt is <<3-scaled microseconds, so rtt * (1000 >> 3) / 20 is 5 % in ns.
	rtt := uint64(r.win.rcvRttUs)
	if a.srttUs != 0 && uint64(a.srttUs) < rtt {
		rtt = uint64(a.srttUs)
	}
	delay := min(compSackDelay, sim.Duration(rtt*(1000>>3)/20)*sim.Nanosecond)
	// hrtimer_start_range_ns programs the hardware for the end of the slack
	// range; on an otherwise idle CPU the timer fires there.
	r.compress.Arm(r.s.Now().Add(delay + compSackSlack))
}

// sendDelayedAck follows tcp_send_delayed_ack: arm the delayed-ACK timer
// ato from now, bounded by the RTT when the gap between segments is large.
func (r *Receiver) sendDelayedAck() {
	a := &r.ack
	ato := a.ato
	if ato > a.hz.delackMin() {
		maxAto := a.hz.maxAto()
		if a.pending&ackPushed != 0 {
			maxAto = a.hz.delackMax()
		}
		// Bound by the RTT measured (not by the RTO).
		if a.srttUs != 0 {
			rtt := max(a.hz.usecs(int64(a.srttUs>>3)), a.hz.delackMin())
			maxAto = min(maxAto, rtt)
		}
		ato = min(ato, maxAto)
	}
	ato = min(ato, a.hz.delackCap())
	now := a.hz.jiffies(r.s.Now())
	timeout := now + ato
	if a.pending&ackTimer != 0 {
		// The timer is about to expire: send the ACK now.
		if a.timeout <= now+ato>>2 {
			r.sendAck(r.rcvNxt)
			return
		}
		timeout = min(timeout, a.timeout)
	}
	a.pending |= ackSched | ackTimer
	a.timeout = timeout
	r.delack.set(a.hz, r.s.Now(), timeout)
}

// delackTimer follows tcp_delack_timer_handler: a pending compressed SACK
// goes first; otherwise the missed delayed ACK inflates ato (doubling, at
// most the RTO) and the ACK is sent.
func (r *Receiver) delackTimer() {
	a := &r.ack
	if a.compressedAck != 0 {
		r.sackCompressSendAck()
		return
	}
	if a.pending&ackTimer == 0 {
		return
	}
	a.pending &^= ackTimer
	if a.pending&ackSched != 0 {
		a.setATO(min(a.ato<<1, a.rto))
		r.stats.DelayedAcks++
		r.sendAck(r.rcvNxt)
	}
}

// compressedAckKick follows tcp_compressed_ack_kick: the compression timer
// sends the one ACK that stands for all suppressed ones.
func (r *Receiver) compressedAckKick() {
	if r.ack.compressedAck != 0 {
		r.stats.CompressedAcks += uint64(r.ack.compressedAck - 1)
		r.ack.compressedAck = 0
		r.sendAck(r.rcvNxt)
	}
}

// sackCompressSendAck follows tcp_sack_compress_send_ack: flush a pending
// compressed ACK before the SACK blocks change.
func (r *Receiver) sackCompressSendAck() {
	if r.ack.compressedAck == 0 {
		return
	}
	r.compress.Stop()
	r.stats.CompressedAcks += uint64(r.ack.compressedAck - 1)
	r.ack.compressedAck = 0
	r.sendAck(r.rcvNxt)
}

// sendDupack follows tcp_send_dupack for a segment left of the window: a
// duplicate of data already ACKed puts the receiver in quick-ACK mode and
// is reported as D-SACK.
func (r *Receiver) sendDupack(sg *segment) {
	if sg.end != sg.seq && sg.seq < r.rcvNxt {
		r.ack.enterQuickack(tcpMaxQuickacks, uint32(r.win.rcvWnd))
		if r.cfg.Opts.SACK {
			r.sack.dsackSet(sg.seq, min(sg.end, r.rcvNxt))
		}
	}
	r.sendAck(r.rcvNxt)
}

// sendAck builds and sends a pure ACK for ack (tcp_send_ack /
// __tcp_send_ack → tcp_transmit_skb): the window is selected
// (tcp_select_window), SACK blocks are written with the D-SACK block first
// (tcp_established_options), ECN feedback is set (tcp_ecn_send / AccECN
// ACE) and tcp_event_ack_sent clears the delayed-ACK state. ack differs
// from rcv_nxt only for DCTCP's ACK of the prior CE state.
func (r *Receiver) sendAck(ack uint64) {
	a := &r.ack
	now := r.s.Now()
	id := r.pool.Alloc()
	p := r.pool.Get(id)
	p.Flow, p.Src, p.Dst = r.cfg.Flow, r.cfg.Node, r.cfg.Peer
	p.Flags = packet.ACK
	p.Seq, p.Ack = 1, ack
	p.Wnd = uint32(r.selectWindow())
	p.TSVal, p.TSEcr = a.hz.ms(now), r.tsRecent
	p.SentAt = now
	if r.cfg.Opts.SACK {
		p.NSack = r.sack.write(&p.Sack)
		if r.sack.dsack {
			r.stats.DSacks++
			r.sack.dsack = false // sent once (tcp_options_write)
		}
	}
	p.Size = HeaderBytes
	if p.NSack > 0 {
		// TCPOLEN_SACK_BASE_ALIGNED: 2 NOPs + kind + length, then 8 B a block.
		p.Size += units.Bytes(4 + SackOptBytes*int(p.NSack))
	}
	r.ecn.writeAck(p)
	r.stats.Acks++

	// tcp_event_ack_sent.
	if a.compressedAck != 0 {
		r.stats.CompressedAcks += uint64(a.compressedAck)
		a.compressedAck = 0
		r.compress.Stop()
	}
	if ack == r.rcvNxt {
		if a.quick != 0 {
			pkts := uint32(0)
			if a.pending&ackSched != 0 {
				pkts = 1
			}
			if pkts >= a.quick {
				a.quick = 0
				// Leaving quick-ACK mode deflates ato.
				a.setATO(a.hz.atoMin())
			} else {
				a.quick -= pkts
			}
		}
		a.pending = 0 // inet_csk_clear_xmit_timer(sk, ICSK_TIME_DACK)
		r.delack.t.Stop()
	}
	r.out.Send(id)
}
