package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// appEvent is the application timer: the connection start, then writes of
// a rate-limited application or the on/off switch.
func (d *DataSender) appEvent() {
	switch d.state {
	case sndClosed:
		d.connect()
		return
	case sndEstablished:
	default:
		return
	}
	app := d.cfg.App
	d.slowStartAfterIdleCheck()
	switch app.Kind {
	case config.AppRate:
		// tcp_sendmsg checks for an app-limited gap before it queues the
		// new data.
		d.checkAppLimited()
		d.appOwed += d.mss
		d.appTimer.Arm(d.st.Now.Add(units.TxTime(units.Bytes(d.mss), app.Rate)))
	case config.OnOff:
		if !d.appOn {
			d.checkAppLimited() // before the first write of the on period
			d.appOn = true
			d.appTimer.Arm(d.st.Now.Add(app.On))
		} else {
			d.appOn = false
			d.appTimer.Arm(d.st.Now.Add(app.Off))
		}
	}
	d.push()
}

// onOffLowat is the TCP_NOTSENT_LOWAT of an on/off application, in bytes:
// the emulator's writer sets it on the kernel's socket (emulate.onOffUnsent).
const onOffLowat = 16 << 10

// fillWrite advances write_seq as far as the application and the send
// buffer allow (the send buffer counts payload bytes, unacked plus unsent).
// A greedy application fills the buffer; a rate application writes a
// segment per segment-time at its rate. Writes are whole segments (as if
// the application wrote in MSS multiples), so a sub-MSS segment is only
// ever the flow's last. It reports whether a greedy application found
// its buffer full in this write (push then lets it top up the send head).
func (d *DataSender) fillWrite() (filled bool) {
	from, greedy, calls := d.writeSeq, false, false
	limit := d.streamEnd()
	if b := uint64(d.cfg.Opts.SndBuf); b > 0 && d.cfg.App.Kind != config.Greedy {
		limit = min(limit, d.sndUna+b)
	}
	switch d.cfg.App.Kind {
	case config.AppRate:
		calls = true
		w := min(d.writeSeq+d.appOwed, limit)
		if w > d.writeSeq {
			d.appOwed -= w - d.writeSeq
			d.writeSeq = w
		}
	case config.OnOff:
		// While on, the application keeps up with the socket, as one does
		// that sets TCP_NOTSENT_LOWAT (onOffLowat, the emulator's writer):
		// it writes a segment at a time, and tcp_sendmsg checks the
		// low-water mark only when a write needs a new skb, so it writes
		// whole skbs (xmitSizeGoal) until at least the mark's bytes wait
		// unsent once the sender has taken what it can (push), then
		// sleeps until fewer than half the mark's bytes wait
		// (tcp_stream_memory_free: notsent << wake < lowat). So what it
		// wrote when an off period starts drains within about a round
		// trip, and a closed receive window still leaves data in the
		// socket for the persist timer to probe with.
		if !d.appOn {
			break
		}
		calls = true
		if d.appAsleep {
			if 2*(d.writeSeq-d.sndNxt) >= onOffLowat {
				break
			}
			d.appAsleep = false
		}
		goal := d.xmitSizeGoal()
		d.writeSeq = max(d.writeSeq, min(limit, d.sndNxt+(onOffLowat+goal-1)/goal*goal))
	default:
		// A greedy application fills the send buffer (or writes the
		// flow's last bytes). With the buffer full it sleeps in
		// sk_stream_wait_memory until sk_stream_write_space wakes it,
		// once the room is at least half what is queued
		// (sk_stream_min_wspace): at most two thirds of the buffer
		// queued. So it refills a third of the buffer at a time, and a
		// flow held by its send buffer sends in bursts.
		//
		// It writes in large blocking calls, one after another (the
		// emulator's writer 1 MiB, iperf3 128 KB), and tcp_sendmsg_locked
		// checks for an app-limited gap once per call, before it queues
		// anything; a call that sleeps in sk_stream_wait_memory goes on
		// without checking. The first call's check is here; each later
		// one's comes as the call before returns (writeCall), with
		// whatever that call's tail left unsent. So a refill that wakes
		// the writer mid-call marks nothing, and a flow held by its send
		// buffer is marked at most once per call.
		b := d.sndBuf
		if d.appAsleep {
			// A writer that topped up its send head (push) may hold
			// more than b.
			if q := d.sndQueued(d.writeSeq); q >= b || 2*(b-q) < q {
				break
			}
			d.appAsleep = false
		}
		w := limit
		if b > 0 && limit > d.writeSeq {
			w = min(limit, d.sndBufEnd(b))
		}
		if w != d.endSeq {
			w = 1 + (w-1)/d.mss*d.mss
		}
		if w > d.writeSeq {
			if d.writeSeq == 1 {
				d.rateCheckAppLimited()
			}
			d.writeSeq = w
		}
		greedy = true
	}
	// The application writes whole segments except the flow's last: the
	// scoreboard numbers segments by MSS from sequence 1.
	if d.writeSeq != d.endSeq {
		d.writeSeq = 1 + (d.writeSeq-1)/d.mss*d.mss
	}
	// A rate or on/off application writes a segment per call, and each
	// call's tcp_push marks its tail (tcp_mark_push), so every skb it
	// fills is marked; a relay's write is one call, which marks its tail
	// as it ends or waits for memory.
	d.wq.lay(d.sndNxt, from, d.writeSeq, d.xmitSizeGoal(), from == d.feedSeq)
	switch {
	case d.writeSeq == from:
	case calls:
		d.pushedSeq = d.writeSeq
		d.wq.markAfter(from)
	default:
		d.markPush()
	}
	if greedy {
		b := d.sndBuf
		d.appAsleep = b > 0 && d.writeSeq != d.endSeq && d.sndQueued(d.writeSeq) >= b
		filled = d.appAsleep
	}
	return filled
}

// streamEnd is how far the flow's data reaches: its size, or what a relay
// has written to it.
func (d *DataSender) streamEnd() uint64 {
	end := uint64(1<<63 - 1)
	if d.endSeq > 0 {
		end = d.endSeq
	}
	if d.cfg.Relay != nil {
		end = min(end, 1+d.cfg.Relay.Written)
	}
	return end
}

// sndBufEnd is how far a greedy writer's calls reach in a send buffer of b
// bytes (tcp_sendmsg_locked): the unsent tail skb fills to the size goal
// unchecked, and a new skb, filled to the goal in turn, is taken only while
// sk_wmem_queued is under b.
func (d *DataSender) sndBufEnd(b uint64) uint64 {
	goal := d.xmitSizeGoal()
	w := d.writeSeq
	if l := d.wq.tailLen(d.sndNxt, w); w > d.sndNxt && l < goal {
		w += goal - l // the tail skb, topped up
	}
	if q := d.sndQueued(w); q < b {
		w += (b - q + goal + skbOverhead - 1) / (goal + skbOverhead) * goal
	}
	return w
}

// xmitSizeGoal follows tcp_xmit_size_goal: the payload tcp_sendmsg puts
// in an skb, whole segments up to sk_gso_max_size (cc.SKGSOMaxSize), at
// most half the largest window the peer advertised (tcp_bound_to_half_wnd),
// at least one segment.
func (d *DataSender) xmitSizeGoal() uint64 {
	cutoff := d.maxWnd
	if cutoff > tcpMssDefault {
		cutoff >>= 1
	}
	goal := uint64(cc.SKGSOMaxSize)
	if cutoff > 0 && goal > cutoff {
		goal = cutoff
	}
	return max(goal/d.mss*d.mss, d.mss)
}

// checkAppLimited is a rate or on/off application's write: what it wrote
// before goes into the send buffer, then tcp_sendmsg checks for an
// app-limited gap before it queues the new data.
func (d *DataSender) checkAppLimited() {
	d.fillWrite()
	d.rateCheckAppLimited()
}

// rateCheckAppLimited follows tcp_rate_check_app_limited (tcp_rate.c, 4.9+),
// which tcp_sendmsg_locked calls once per write call: mark the flow
// app-limited if it has less than a segment unsent, is not cwnd-limited and
// has no lost data unrepaired. (The kernel's fourth test, no skb left in the
// qdisc or NIC, is taken as true.)
//
// The google/bbr v3 branch's kernel also calls it from tcp_ack (once
// rs.prior_in_flight is set) and from tcp_write_timer_handler before the
// reordering, loss-probe, RTO and zero-window-probe handlers, so the
// retransmissions of a flow with nothing new to send are marked
// app-limited. A CC with the v3 branch's hooks (skb_marked_lost: bbr3,
// bbrb) runs on that kernel; the others on mainline's, which checks on
// writes only.
func (d *DataSender) rateCheckAppLimited() {
	if d.writeSeq-d.sndNxt < d.mss && d.sb.inFlight() < d.st.CwndPkts && d.sb.lostOut <= d.sb.retransOut {
		d.rate.AppLimited = max(d.rate.Delivered+d.sb.inFlight(), 1)
	}
}

// connect sends the SYN (tcp_connect); its timer starts at TCP_TIMEOUT_INIT.
func (d *DataSender) connect() {
	d.state = sndSynSent
	d.synSentAt = d.st.Now
	d.synStamp = d.tsNow()
	d.sendSYN()
	d.rto = timeoutInit
	d.armXmitTimer(timeRetrans, d.rto, rtoMax)
}

func (d *DataSender) sendSYN() {
	id := d.pool.Alloc()
	p := d.pool.Get(id)
	p.Flow, p.Src, p.Dst = d.cfg.Flow, d.cfg.Node, d.cfg.Peer
	p.Size = HeaderBytes
	p.Flags = packet.SYN
	if d.cfg.ECN {
		p.Flags |= packet.ECE | packet.CWR
		if d.cfg.Echo == EchoAccECN {
			p.Flags |= packet.AE
		}
	}
	p.TSVal = d.tsNow()
	p.SentAt = d.st.Now
	d.out.Send(id)
}

// sendBareAck sends a zero-length ACK at seq: the handshake's last ACK
// (tcp_send_ack, seq snd_nxt) or a window probe (tcp_xmit_probe_skb,
// seq snd_una − 1).
func (d *DataSender) sendBareAck(seq uint64) {
	id := d.pool.Alloc()
	p := d.pool.Get(id)
	p.Flow, p.Src, p.Dst = d.cfg.Flow, d.cfg.Node, d.cfg.Peer
	p.Seq = seq
	p.Size = HeaderBytes
	p.Flags = packet.ACK
	p.TSVal, p.TSEcr = d.tsNow(), d.tsRecent
	p.SentAt = d.st.Now
	d.out.Send(id)
}

// synTimer follows tcp_retransmit_timer in SYN-SENT (Linux 6.7+): resend
// the SYN, keeping TCP_TIMEOUT_INIT for the first tcp_syn_linear_timeouts
// timeouts (tp->total_rto, counted before the check, up to 4) and doubling
// it after, so SYNs leave at 0, 1, 2, 3, 4, 5, 7, 11 s. tcp_write_timeout
// gives up once tcp_syn_retries + tcp_syn_linear_timeouts have been sent
// (its time bound, 127 s from the first SYN, comes later with these
// defaults).
func (d *DataSender) synTimer() {
	if d.retransmits >= synRetriesMax+synLinearRTOs {
		d.abort(AbortSYNRetries)
		return
	}
	d.retransmits++
	d.Stats.SYNRetrans++
	d.totalRetrans++
	d.sendSYN()
	if d.retransmits > synLinearRTOs {
		d.rto = min(d.rto<<1, rtoMax)
	}
	d.armXmitTimer(timeRetrans, d.rto, rtoMax)
}

// synAck completes the handshake (tcp_rcv_synsent_state_process and
// tcp_init_transfer): negotiate ECN, take the SYN's RTT, set the initial
// window and start the CC.
func (d *DataSender) synAck(p *packet.Packet) {
	d.state = sndEstablished
	d.sndUna, d.sndNxt, d.writeSeq = 1, 1, 1
	d.rcvTstamp = d.rtt.hz.jiffies(d.st.Now) // the SYN-ACK's tcp_ack
	d.sndWnd = uint64(p.Wnd)
	d.maxWnd = d.sndWnd
	d.tsRecent = p.TSVal
	if d.cfg.ECN {
		switch {
		case d.cfg.Echo == EchoAccECN && p.Flags&(packet.AE|packet.CWR) != 0:
			d.ecnOK, d.accECN = true, true
		case p.Flags&packet.ECE != 0 && p.Flags&(packet.AE|packet.CWR) == 0:
			d.ecnOK = true // RFC 3168 ECN (also the AccECN fallback)
		}
	}
	// Karn: a retransmitted SYN gives no RTT sample from timing; fall back
	// to the timestamp echo as tcp_ack_update_rtt does.
	var rttUs int64 = -1
	if d.retransmits == 0 {
		rttUs = stampUsDelta(d.st.Now, d.synSentAt)
	} else if p.TSEcr != 0 {
		rttUs = max(int64(d.tsNow()-p.TSEcr), 1) * 1000
	}
	if rttUs >= 0 {
		d.updateRTTMin(rttUs, 0) // tcp_synack_rtt_meas: FLAG_SYN_ACKED
		d.rtt.sample(rttUs, d.sndUna, d.sndNxt)
		d.rtt.setRTO()
		d.rto = d.rtt.rto
		d.Stats.RTT.Add(rttUs * int64(sim.Microsecond))
	} else {
		d.rto = 3 * sim.Second // TCP_TIMEOUT_FALLBACK
	}
	d.retransmits = 0
	d.pending = timeNone
	d.xmitTimer.t.Stop()
	// The SYN-ACK's tcp_ack acked the SYN, which tcp_clean_rtx_queue
	// counts as delivered (tcp_count_delivered, or tcp_remove_reno_sacks
	// without SACK): tp->delivered is 1 from here, as tcpi_delivered shows,
	// and the app-limited bubble of the first write ends a packet sooner.
	d.countDelivered(1, false)

	iw := d.initCwnd()
	// RFC 6298 5.7 as tcp_init_transfer: a lost SYN handshake starts at 1
	// (total_retrans > 1 with undo_marker set, as any SYN timeout sets it),
	// unless tcp_try_undo_spurious_syn cleared undo_marker: the SYN-ACK
	// echoes the first SYN's timestamp (retrans_stamp), so that SYN was
	// delayed, not lost.
	spuriousSyn := p.TSEcr != 0 && p.TSEcr == d.synStamp
	if d.totalRetrans > 1 && !spuriousSyn {
		iw = 1
	}
	d.st.CwndPkts = iw
	d.st.SSThreshPkts = cc.InfiniteSSThresh
	d.st.CA = cc.CAOpen
	d.cwndStamp = d.st.Now
	if d.hooks.Seed != nil && d.cfg.RNG != nil {
		d.hooks.Seed.Seed(d.cfg.RNG)
	}
	if d.hooks.Init != nil {
		d.fillState()
		d.hooks.Init.Init(&d.st)
		// An algorithm that sets Paced asks for SK_PACING_NEEDED (BBR,
		// Prague): tcp_needs_internal_pacing then paces the flow whatever
		// the pacing switch says, which only chooses pacing for the rest.
		d.paced = d.paced || d.st.Paced
	}
	d.takeFallback()
	d.initSndBuf()
	// The SYN-ACK went through tcp_ack, whose tcp_cong_control set the
	// pacing rate from the SYN's RTT sample.
	if d.hooks.CongControl == nil {
		d.updatePacingRate()
	}
	// tcp_rcv_synsent_state_process ends with tcp_send_ack: an application
	// that connects and then writes has no write pending yet, so the
	// handshake's last ACK leaves alone, ahead of the first data (a
	// per-packet path model draws for it as for any packet).
	d.sendBareAck(d.sndNxt)
	switch d.cfg.App.Kind {
	case config.AppRate:
		d.appTimer.Arm(d.st.Now)
	case config.OnOff:
		d.appTimer.Arm(d.st.Now.Add(d.cfg.App.On))
	}
	d.push()
}

// slowStartAfterIdleCheck follows tcp_slow_start_after_idle_check: an
// application that writes after more than an RTO of silence, or a window
// that reopens on data held that long, restarts from a smaller window
// (tcp_cwnd_restart, RFC 2861): cwnd is halved per RTO idle, down to the
// initial window. The kernel checks when a write queues an skb
// (tcp_skb_entail) and when the peer's window changes with data waiting
// (tcp_ack_update_window).
func (d *DataSender) slowStartAfterIdleCheck() {
	if d.sb.packetsOut() > 0 || d.hooks.CongControl != nil || !d.Stats.Started {
		return
	}
	delta := d.rtt.hz.since(d.st.Now, d.lsndTime)
	if delta <= d.rto {
		return
	}
	d.caEvent(cc.EventCwndRestart)
	d.st.SSThreshPkts = d.currentSSThresh()
	restart := min(d.initCwnd(), d.st.CwndPkts)
	cwnd := d.st.CwndPkts
	for delta -= d.rto; delta > 0 && cwnd > restart; delta -= d.rto {
		cwnd >>= 1
	}
	d.st.CwndPkts = max(cwnd, restart)
	d.cwndStamp = d.st.Now
	d.cwndUsed = 0
}

// takeFallback follows dctcp_init and prague_init handing the socket to
// their Reno tables (inet_csk(sk)->icsk_ca_ops = &dctcp_reno) when ECN was
// not negotiated: a non-nil cc.Fallbacker result replaces the algorithm
// for the rest of the connection. The replacement's init hook is not
// called, as the kernel does not call dctcp_reno's (it has none).
func (d *DataSender) takeFallback() {
	if d.hooks.Fallback == nil {
		return
	}
	if alt := d.hooks.Fallback.Fallback(); alt != nil {
		d.hooks = cc.Resolve(alt)
		d.sb.restamp = d.hooks.MarkedLost != nil
	}
}
