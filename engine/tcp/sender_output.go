package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// push is tcp_push_pending_frames: send what the windows allow.
func (d *DataSender) push() {
	if d.state != sndEstablished {
		return
	}
	d.writeThenSend(false, false)
}

// writeThenSend lets the application write, then sends what waits
// (__tcp_push_pending_frames). When sent, the queue was just pushed at this
// instant (dataSndCheck, whose idle report comes in idle): only new writes
// need sending.
func (d *DataSender) writeThenSend(sent, idle bool) {
	if d.callWriter() && d.sndBuf > 0 {
		if d.writeCall(sent, idle) {
			d.checkProbeTimer()
		}
		return
	}
	before := d.writeSeq
	filled := d.fillWrite()
	if !sent || d.writeSeq != before {
		idle = d.writeXmit(0)
	}
	if filled {
		idle = d.topUp(idle)
	}
	// An on/off application writes on while the sender takes what it
	// wrote, and sleeps once what waits unsent fills its skbs past the
	// low-water mark (fillWrite); held by the send buffer or the flow's
	// end, it stays awake with less. Asleep, it wakes as soon as a send
	// leaves less than half the mark unsent: tcp_event_new_data_sent's
	// tcp_check_space calls sk_stream_write_space after each skb, so the
	// send that crosses the mark wakes it, not the next one (bpftrace on
	// tcp:tcp_sendmsg_locked: a paced BBR flow's writer refilled every
	// 16.2 ms, the 40 segments from 65,160 to 7,240 bytes unsent at its
	// pacing rate; a chunk later, the simulator's refilled every 16.8 ms).
	for d.cfg.App.Kind == config.OnOff && d.appOn {
		before, asleep := d.writeSeq, d.appAsleep
		d.fillWrite()
		if d.writeSeq == before {
			if !asleep {
				d.appAsleep = d.writeSeq-d.sndNxt >= onOffLowat
			}
			break
		}
		idle = d.writeXmit(0)
	}
	if idle {
		d.checkProbeTimer()
	}
}

// callOf is the greedy writer's call (from 0) that writes sequence seq:
// calls of the application's write size (1 MiB by default, as the
// emulator's writer) from sequence 1, each from its callStart. Calls
// shorter than a segment can start where the next does, their bytes
// rounded away; callOf is then the last of them, the one that writes.
func (d *DataSender) callOf(seq uint64) uint64 {
	k := (seq - 1) / uint64(d.cfg.App.WriteSize())
	for d.callStart(k+1) <= seq { // a start rounded down to a segment
		k++
	}
	return k
}

// callStart is where the greedy writer's call k begins, rounded down to a
// whole segment, as fillWrite writes.
func (d *DataSender) callStart(k uint64) uint64 {
	return 1 + k*uint64(d.cfg.App.WriteSize())/d.mss*d.mss
}

// callWriter reports whether the flow's data comes from a greedy
// application's calls of its write size; a proxy's relay writes what it
// reads, each write a call of its own (Feed checks as it begins).
func (d *DataSender) callWriter() bool { return d.cfg.App.Kind == config.Greedy && d.cfg.Relay == nil }

// writeCall follows a greedy writer with a bounded send buffer through
// tcp_sendmsg_locked, an skb at a time, as far as it writes now, then
// sends what waits. A write tops up the tail skb to the size goal when it
// has room, unchecked; it takes a new skb only while sk_wmem_queued is under
// the buffer (new_segment), and otherwise sleeps. Each skb it fills goes
// out as it fills: all the queue may send once the writer has written half
// the largest window since its last push mark (forced_push), else one TSO
// chunk of it when it is the send head (tcp_push_one), which splits it, and
// the rest, the tail, is topped up again. So the first call of a flow with
// 10 segments of cwnd writes 32 segments into its 46,080-byte buffer, one
// with 1 writes 45 (bpftrace on tcp:tcp_probe, write_seq and
// sk_wmem_queued: 51,328 and 67,656 bytes, 6 and 3 skbs), where writing the
// skbs before sending any wrote 44 in both. The loop was topUp's before,
// run once the writer had filled its buffer: a writer held by its buffer
// keeps its sender going past it (a 1 MB tcp_wmem on 100 Mbps over 80 ms:
// the kernel kept up to 1,348 segments unacknowledged, 1.95 MB; a 128 KB
// one over 40 ms sent 183–190 segments per wake-up, half the 550,144-byte
// window). At the end of each call of the writer's size, tcp_push marks the
// push and sends, and the next call checks for an app-limited gap
// (endCall): a flow held by its send buffer, whose writer wakes with a short
// tail of its call left, sends that tail at once and starts the next call
// with nothing unsent and cwnd open, app-limited, as the kernel's flow is
// then (TestSndBufRefillCrossingCallEndsAppLimited). It returns writeXmit's
// idle report.
func (d *DataSender) writeCall(sent, idle bool) bool {
	b := d.sndBuf
	if d.appAsleep {
		if q := d.sndQueued(d.writeSeq); q >= b || 2*(b-q) < q {
			if !sent {
				idle = d.writeXmit(0)
			}
			return idle
		}
		d.appAsleep = false
	}
	if d.writeSeq == 1 {
		d.rateCheckAppLimited() // the first call's check
	}
	goal := d.xmitSizeGoal()
	callEnd := d.callStart(d.callOf(d.writeSeq) + 1)
	wrote, held, blocked := false, false, false
	for {
		var end uint64
		if tail := d.wq.tailLen(d.sndNxt, d.writeSeq); d.writeSeq > d.sndNxt && tail < goal || held {
			end = d.writeSeq + goal - tail // the tail skb has room
		} else if q := d.sndQueued(d.writeSeq); q >= b {
			d.appAsleep = true // sk_stream_wait_memory
			break
		} else if blocked {
			// Nothing leaves at this instant (cwnd, the receive window or
			// pacing): the skbs the buffer still takes, at once.
			end = d.sndBufEnd(b)
		} else {
			end = d.writeSeq + goal // a new skb
		}
		held = false
		end = min(end, d.streamEnd(), callEnd)
		if end != d.endSeq {
			end = 1 + (end-1)/d.mss*d.mss
		}
		if end <= d.writeSeq {
			break
		}
		d.wq.lay(d.sndNxt, d.writeSeq, end, goal, d.writeSeq == d.callStart(d.callOf(d.writeSeq)))
		d.writeSeq, wrote = end, true
		if end == callEnd {
			if end == d.endSeq { // the flow's last call: no next one
				d.markPush()
				return d.writeXmit(0)
			}
			idle, held = d.endCall(end)
			held = held && d.writeSeq == d.sndNxt // a remnant held: the next call tops it up
			callEnd = d.callStart(d.callOf(end) + 1)
			continue
		}
		if d.wq.tailLen(d.sndNxt, d.writeSeq) < goal {
			break // the stream's end: the skb is not full
		}
		nxt := d.sndNxt
		if d.writeSeq > d.pushedSeq+d.maxWnd/2 {
			d.markPush()
			idle = d.writeXmit(0)
		} else if d.wq.n() == 1 { // the tail is the send head: tcp_push_one
			idle = d.writeXmit(1)
		} else {
			continue
		}
		blocked = d.sndNxt == nxt
	}
	if wrote {
		d.markPush() // tcp_push as the writer waits for memory
	}
	if wrote || !sent {
		idle = d.writeXmit(0)
	}
	return idle
}

// topUp follows tcp_sendmsg_locked's loop for a relay's writer (a proxy's
// second leg, whose writes are its reads) that has just filled its send
// buffer, as writeCall does for an application's: while the tail skb is the
// send head, each write tops it up to the size goal unchecked and
// tcp_push_one sends a TSO chunk off it, until cwnd, the receive window or
// pacing stops it, or the writer has written half the largest window since
// its last push mark (forced_push): __tcp_push_pending_frames then sends
// what it may of the whole queue, and the writer sleeps. It returns
// writeXmit's idle report.
func (d *DataSender) topUp(idle bool) bool {
	goal := d.xmitSizeGoal()
	for d.wq.n() <= 1 && d.writeSeq-d.sndNxt < goal {
		end := min(d.sndNxt+goal, d.streamEnd())
		if end != d.endSeq {
			// Whole segments but for the flow's last, as fillWrite writes:
			// the scoreboard numbers segments by MSS from sequence 1. A
			// relay's stream ends wherever its other leg's data did.
			end = 1 + (end-1)/d.mss*d.mss
		}
		if end <= d.writeSeq {
			break
		}
		d.wq.lay(d.sndNxt, d.writeSeq, end, goal, false)
		d.writeSeq = end
		if d.writeSeq > d.pushedSeq+d.maxWnd/2 {
			d.markPush()
			idle = d.writeXmit(0)
			break
		}
		nxt := d.sndNxt
		idle = d.writeXmit(1)
		if d.sndNxt == nxt {
			break
		}
	}
	d.markPush() // tcp_push as the writer waits for memory
	return idle
}

// endCall is the end of the greedy writer's call at end (writeSeq): its
// tcp_push marks the push (tcp_mark_push) and sends what it may of the
// queue, and the next call begins with its check for an app-limited gap.
// It returns writeXmit's idle report and whether the next call tops up the
// tail skb (something left unsent, or the remnant held) rather than
// needing a new one.
func (d *DataSender) endCall(end uint64) (idle, goOn bool) {
	d.markPush()
	idle = d.writeXmit(0)
	goOn = d.writeSeq != d.sndNxt || d.pushRemnant(end)
	d.rateCheckAppLimited()
	return idle, goOn
}

// markPush is tcp_mark_push on the tail skb.
func (d *DataSender) markPush() {
	d.pushedSeq = d.writeSeq
	d.wq.markTail()
}

// pushRemnant is tcp_push at the end of a call whose whole segments have
// all been sent, for what is left: a call whose size is not a multiple of
// the MSS ends in a sub-MSS remnant, which the Nagle test
// (tcp_nagle_check, Minshall's variant) holds while an earlier sub-MSS
// segment is unacknowledged, and sends otherwise (tcp_minshall_update:
// smlSeq). It reports whether the remnant was held: it is then the tail
// skb, the send head with room, so the next call tops it up without the
// memory check (topUp goes on); sent, the next call needs a new skb and
// waits for memory. The simulator's application writes whole segments, so
// a remnant's bytes go out with the next segment, and smlSeq marks where
// the kernel's small one would end. bpftrace on tcp:tcp_sendmsg_locked,
// Reno with 128 KiB calls into a 128 KB buffer on 100 Mbps over 40 ms:
// calls began with 56 or 752 bytes held in the tail skb, cwnd open, and
// the writer wrote on to cwnd, 4 times its buffer; with calls of 90 MSS
// (130,320 bytes) it slept at each call's end, and the flow made 23.2 Mbps
// against 40.
func (d *DataSender) pushRemnant(end uint64) bool {
	if d.callOf(end)*uint64(d.cfg.App.WriteSize())%d.mss == 0 { // the call ending at end: k·W bytes from sequence 1
		return false
	}
	if d.sndNxt > d.sndUna && d.smlSeq > d.sndUna {
		return true
	}
	d.smlSeq = end
	return false
}

// paceKick is the pacing timer (tcp_pace_kick → tcp_tsq_write): repair
// losses first, then send new data. tcp_tsq_write calls tcp_write_xmit
// whether or not anything waits unsent, so with nothing to send a flow
// whose retransmissions filled cwnd is still noted cwnd-limited
// (tcp_cwnd_validate), where the other pushes skip the call.
func (d *DataSender) paceKick() {
	if d.state != sndEstablished {
		return
	}
	if d.sb.lostOut > d.sb.retransOut && d.st.CwndPkts > d.sb.inFlight() {
		d.xmitRetransmitQueue()
	}
	written, nothingUnsent := d.writeSeq, d.writeSeq <= d.sndNxt
	d.push()
	if nothingUnsent && d.writeSeq == written && d.sb.inFlight() >= d.st.CwndPkts {
		d.cwndValidate(true)
	}
}

// cwndTest follows tcp_cwnd_test: the segments cwnd allows now, at most half
// the window so that at least two TSO chunks are in flight.
func (d *DataSender) cwndTest() uint32 {
	inFlight, cwnd := d.sb.inFlight(), d.st.CwndPkts
	if inFlight >= cwnd {
		return 0
	}
	return min(max(cwnd>>1, 1), cwnd-inFlight)
}

// tsoSegs follows tcp_tso_segs and tcp_tso_autosize (5.18+): about 1 ms of
// data at the pacing rate (rate >> sk_pacing_shift), plus sk_gso_max_size
// halved per 2^tcp_tso_rtt_log us of min_rtt, capped at sk_gso_max_size
// (cc.SKGSOMaxSize), at least min_tso_segs.
func (d *DataSender) tsoSegs() uint32 {
	if !d.cfg.Opts.TSO {
		return 1
	}
	if d.hooks.TSOSegs != nil { // the google/bbr v3 branch's tso_segs hook
		d.fillState()
		return min(d.hooks.TSOSegs.TSOSegs(&d.st, units.Bytes(d.mss)), d.st.GSOMaxSegs)
	}
	minSegs := uint32(minTSOSegs)
	if d.hooks.MinTSOSegs != nil {
		minSegs = d.hooks.MinTSOSegs.MinTSOSegs(&d.st)
	}
	bytes := uint64(cc.SKGSOMaxSize)
	if r := d.pacingRate(); r > 0 {
		bytes = uint64(r/8) >> pacingShift
	}
	if sh := d.rtt.minRTTUs() >> tsoRTTLog; sh < 32 {
		bytes += cc.SKGSOMaxSize >> sh
	}
	bytes = min(bytes, cc.SKGSOMaxSize)
	segs := max(uint32(bytes/d.mss), minSegs)
	return min(segs, d.st.GSOMaxSegs)
}

// pacingCheck follows tcp_pacing_check: with internal pacing, nothing may
// leave before tcp_wstamp_ns; the pacing timer wakes the sender then.
func (d *DataSender) pacingCheck() bool {
	if !d.paced || d.wstamp <= d.st.Now {
		return false
	}
	if !d.paceTimer.Armed() {
		d.paceTimer.Arm(d.wstamp)
	}
	return true
}

// pacingDelay is tcp_pacing_delay: how far the next departure lies ahead,
// as tcp_wstamp_ns − tcp_clock_cache, two whole-nanosecond stamps, so that
// the ticks armXmitTimer truncates it to are the kernel's.
func (d *DataSender) pacingDelay() sim.Duration {
	ns := sim.Time(sim.Nanosecond)
	if delay := d.wstamp/ns - d.st.Now/ns; d.paced && delay > 0 {
		return sim.Duration(delay) * sim.Nanosecond
	}
	return 0
}

// writeXmit follows tcp_write_xmit. pushOne is 0 (send all allowed), or 2
// (a loss probe: one segment even if cwnd is full). It reports whether the
// sender has data it cannot send with nothing in flight. With nothing
// unsent it does nothing, not even tcp_cwnd_validate: the kernel's pushes
// (tcp_push_pending_frames, tcp_push, tcp_push_one) call tcp_write_xmit
// only when there is a send head.
func (d *DataSender) writeXmit(pushOne int) bool {
	if d.writeSeq <= d.sndNxt {
		return false
	}
	var sent uint32
	cwndLimited := false
	maxSegs := d.tsoSegs()
	for d.writeSeq > d.sndNxt {
		if d.pacingCheck() {
			break
		}
		quota := d.cwndTest()
		if quota == 0 {
			if pushOne != 2 {
				break
			}
			quota = 1
		}
		quota = min(quota, maxSegs)
		// tcp_grow_skb: the send head takes from the skb after it what it
		// lacks of quota segments, and keeps it if the loop stops below.
		d.wq.grow(d.sndNxt + uint64(quota)*d.mss)
		// tcp_snd_wnd_test: the first segment must fit the receive window.
		segEnd := min(d.sndNxt+d.mss, d.writeSeq)
		if segEnd > d.sndUna+d.sndWnd {
			break
		}
		if pushOne == 0 && d.cfg.Opts.TSO {
			if wait, cwndBound := d.tsoShouldDefer(maxSegs); wait {
				cwndLimited = cwndLimited || cwndBound
				break
			}
		}
		n := d.sendChunk(quota)
		sent += n
		if pushOne != 0 {
			break
		}
	}
	cwndLimited = cwndLimited || d.sb.inFlight() >= d.st.CwndPkts
	if sent > 0 || cwndLimited {
		d.cwndValidate(cwndLimited)
	}
	if sent > 0 {
		if d.inCwndReduction() {
			d.prr.Sent(sent)
		}
		if pushOne != 2 {
			d.scheduleLossProbe(false)
		}
		return false
	}
	return d.sb.packetsOut() == 0 && d.writeSeq > d.sndNxt
}

// tsoShouldDefer follows tcp_tso_should_defer as of Linux 6.18 (with "tcp:
// fix tcp_tso_should_defer() vs large RTT"): an skb of more than one segment
// that the windows let out only in part waits for the next ACK, so that
// it leaves as a larger TSO chunk, unless the sender is in recovery, has
// sent nothing for 1 ms, may send max_segs or a third of its window, or
// expects no ACK within min(srtt/2, 1 ms). It reports whether to wait, and
// whether cwnd is what holds the skb back (is_cwnd_limited).
func (d *DataSender) tsoShouldDefer(maxSegs uint32) (wait, cwndBound bool) {
	// Every test that sends now commutes with the others: the cheap ones
	// come first.
	if d.st.CA >= cc.CARecovery || d.st.Now.Sub(d.wstamp) > sim.Millisecond || d.sb.packetsOut() == 0 {
		return false, false
	}
	sendWin := d.sndUna + d.sndWnd - d.sndNxt
	congWin := uint64(d.st.CwndPkts-d.sb.inFlight()) * d.mss
	limit := min(sendWin, congWin)
	if limit >= uint64(maxSegs)*d.mss || limit >= min(d.sndWnd, uint64(d.st.CwndPkts)*d.mss)/tsoWinDiv {
		return false, false
	}
	end := d.wq.headEnd()
	skbLen := end - d.sndNxt
	tail := end == d.writeSeq
	// One segment takes Nagle's test instead; a skb before the tail that
	// fits gets no more data by waiting.
	if skbLen <= d.mss || !tail && limit >= skbLen {
		return false, false
	}
	// When is the ACK of the oldest segment in flight expected?
	srtt := sim.Duration(d.rtt.srttUs8*125) * sim.Nanosecond
	howFar := d.sb.seg(d.sb.una).sent.Add(srtt).Sub(d.st.Now)
	if howFar > min(srtt/2, sim.Millisecond) {
		return false, false
	}
	if congWin < sendWin {
		if congWin <= skbLen {
			return true, true
		}
	} else if sendWin <= skbLen {
		return true, false
	}
	// Only the tail gets here (any other skb would fit the limit): it
	// waits for more data, unless it is the flow's last and carries the
	// FIN.
	return end != d.endSeq, false
}

// sendChunk sends up to quota new segments as one TSO chunk: the send head
// skb as tcp_grow_skb grew it (writeQueue.grow), cut where tcp_mss_split_point
// cuts it. They leave together and advance the pacing clock by their total
// length; the skbs after the head wait for the next round of
// tcp_write_xmit's loop, with its pacing, cwnd and deferral tests.
//
// A chunk of two segments or more carries PSH on its last segment:
// __tcp_transmit_skb sets it on the clone of every skb of more than one
// segment ("to expedite GRO flush"), and GSO keeps it on the last. In
// sender-side captures of bulk CUBIC flows (the emulator's TUN devices)
// the last segment of every multi-segment burst had PSH (5,564 of 5,564
// three-segment chunks in one 6 s capture) and no other segment did. It is
// not kept in the skb, so a later retransmission carries it only as the
// end of a multi-segment run again, or where tcp_mark_push marked the skb.
// It matters at the receiver: tcp_measure_rcv_mss marks a full-sized PSH
// segment ICSK_ACK_PUSHED, so the read that empties the queue ACKs it at
// once, and a chunk of three is answered by two ACKs (two segments, then
// one).
func (d *DataSender) sendChunk(quota uint32) uint32 {
	rearm := d.newDataRearms()
	priorWstamp := d.wstamp
	d.wstamp = max(d.wstamp, d.st.Now)
	var n uint32
	var bytes units.Bytes
	wndEnd := d.sndUna + d.sndWnd
	first := d.sb.nxt
	inFlight := d.sb.inFlight()
	skbEnd := d.wq.headEnd()
	for n < quota && skbEnd > d.sndNxt {
		end := min(d.sndNxt+d.mss, skbEnd)
		if end > wndEnd {
			break
		}
		// The chunk's last segment: quota reached, the skb's end, or
		// the next would pass the receive window.
		last := n+1 == quota || end == skbEnd || min(end+d.mss, skbEnd) > wndEnd
		bytes += d.sendNewSeg(end, last && n > 0, end == skbEnd && d.wq.headMarked())
		n++
	}
	if n > 0 {
		d.sb.skbHead(first) // a chunk is an skb of its own (tso_fragment)
		d.checkSpace()
	}
	// tcp_rate_skb_sent snapshots the skb once: every segment of the chunk
	// has the google/bbr v3 branch's tx.in_flight of the whole skb.
	if n > 1 {
		for i := first; i < first+uint64(n); i++ {
			d.sb.seg(i).tx.InFlight = inFlight + n
		}
	}
	d.afterSend(bytes, priorWstamp)
	if rearm && n > 0 {
		d.rearmRTO()
	}
	return n
}

// sendNewSeg transmits the new segment [snd_nxt, end) (tcp_transmit_skb
// with tcp_event_data_sent, then tcp_event_new_data_sent but for its timer:
// newDataRearms) and returns its payload length. chunkEnd marks it the last
// of a multi-segment TSO chunk, which carries PSH (see sendChunk); psh, the
// end of an skb that carries a PSH mark (tcp_mark_push), which the segment
// keeps for its retransmissions: the part of an skb that tso_fragment cuts
// off to send leaves the mark with the rest.
func (d *DataSender) sendNewSeg(end uint64, chunkEnd, psh bool) units.Bytes {
	if d.sb.inFlight() == 0 {
		d.caEvent(cc.EventTxStart) // tcp_event_data_sent
	}
	packetsOut := d.sb.packetsOut()
	seg := d.sb.push(end, d.st.Now)
	s := d.sb.seg(seg)
	s.push = psh
	d.rate.SkbSent(&s.tx, s.sent, packetsOut, d.sb.inFlight(), d.lost)
	bytes := units.Bytes(end - d.sndNxt)
	d.emit(d.sndNxt, end, false, s.push || chunkEnd)
	if d.rec.On() {
		d.event(trace.EvSend, d.sndNxt, uint32(bytes))
	}
	d.sndNxt = end
	d.wq.sent(end)
	return bytes
}

// newDataRearms is tcp_event_new_data_sent's test: the skb that puts data in
// flight, or one sent while a loss probe is pending, re-arms the RTO. The
// caller re-arms once the skb has left (tcp_transmit_skb), so that the
// pacing delay tcp_reset_xmit_timer adds counts the skb's own pacing
// (tcp_update_skb_after_send advanced tcp_wstamp_ns).
func (d *DataSender) newDataRearms() bool {
	return d.sb.packetsOut() == 0 || d.pending == timeLossProbe
}

// afterSend follows tcp_update_skb_after_send: advance tcp_wstamp_ns by the
// chunk's length at the pacing rate, less up to half of it as credit for
// time the sender sat idle. The first 10 segments go unpaced. The length is
// payload only: __tcp_transmit_skb pushes the TCP header onto the clone it
// transmits and passes the header-less original skb (oskb) here, so a
// pacing rate of bw·mss bytes/s sends bw packets per second.
func (d *DataSender) afterSend(bytes units.Bytes, priorWstamp sim.Time) {
	d.lsndTime = d.st.Now
	rate := d.pacingRate()
	if !d.paced || rate <= 0 || d.Stats.SegsSent < unpacedSegs || bytes == 0 {
		return
	}
	length := units.TxTime(bytes, rate)
	credit := d.wstamp.Sub(priorWstamp)
	length -= min(length/2, credit)
	d.wstamp = d.wstamp.Add(length)
}

// emit puts one data segment [start, end) on the network, with PSH if psh.
func (d *DataSender) emit(start, end uint64, retrans, psh bool) {
	id := d.pool.Alloc()
	p := d.pool.Get(id)
	p.Flow, p.Src, p.Dst = d.cfg.Flow, d.cfg.Node, d.cfg.Peer
	p.Seq, p.Len = start, uint32(end-start)
	p.Size = units.Bytes(p.Len) + HeaderBytes
	p.Flags = packet.ACK
	if psh {
		p.Flags |= packet.PSH
	}
	p.TSVal, p.TSEcr = d.tsNow(), d.tsRecent
	p.SentAt = d.st.Now
	// __tcp_transmit_skb stamps skb->tstamp = tp->tcp_wstamp_ns (EDT): an
	// fq qdisc holds the packet until then. Unpaced flows leave it 0.
	if d.paced {
		p.TxTime = max(d.wstamp, d.st.Now)
	}
	p.Tx = int32(d.sb.segOf(start))
	if d.ecnOK {
		// tcp_ecn_send: classic ECN marks only new data ECT and sets CWR
		// on the first new segment after a reduction; ECN-needing CCs
		// (DCTCP, AccECN/Prague) keep retransmissions ECT too.
		if !retrans || d.cfg.Echo != EchoClassic {
			p.ECN = d.ectCodepoint()
		}
		if !retrans && d.queueCWR && !d.accECN {
			d.queueCWR = false
			p.Flags |= packet.CWR
		}
	}
	if !d.Stats.Started {
		d.Stats.Started = true
		d.Stats.FirstSend = d.st.Now
	}
	d.Stats.SegsSent++
	d.Stats.BytesSent += units.Bytes(p.Len)
	d.out.Send(id)
}

// cwndValidate follows tcp_cwnd_validate: remember whether this window was
// cwnd-limited (for tcp_is_cwnd_limited).
func (d *DataSender) cwndValidate(cwndLimited bool) {
	d.cwndUse.Validate(d.sndUna, d.sndNxt, d.sb.packetsOut(), cwndLimited)
	if d.cwndLimited() {
		// The network is fed fully.
		d.cwndUsed = 0
		d.cwndStamp = d.st.Now
		return
	}
	// The network starves: remember the window used, and shrink cwnd
	// once it has gone unused for an RTO.
	d.cwndUsed = max(d.cwndUsed, d.sb.packetsOut())
	if d.rtt.hz.since(d.st.Now, d.cwndStamp) >= d.rto && d.hooks.CongControl == nil {
		d.cwndApplicationLimited()
	}
}

// cwndApplicationLimited follows tcp_cwnd_application_limited (RFC 2861):
// a window the application or the receiver left unused for an RTO decays
// halfway towards what was used, unless the application is blocked on a
// full send buffer (SOCK_NOSPACE).
func (d *DataSender) cwndApplicationLimited() {
	if d.st.CA == cc.CAOpen && !d.sndBufFull() {
		winUsed := max(d.cwndUsed, d.initCwnd())
		if winUsed < d.st.CwndPkts {
			d.st.SSThreshPkts = d.currentSSThresh()
			d.st.CwndPkts = (d.st.CwndPkts + winUsed) >> 1
		}
		d.cwndUsed = 0
	}
	d.cwndStamp = d.st.Now
}

// initCwnd is tcp_init_cwnd: the configured initial window, 10 by default.
func (d *DataSender) initCwnd() uint32 {
	if d.cfg.Opts.InitCwnd == 0 {
		return cc.InitCwnd
	}
	return d.cfg.Opts.InitCwnd
}

// updatePacingRate follows tcp_update_pacing_rate: 200% of cwnd·mss/srtt in
// slow start (cwnd < ssthresh/2), 120% after.
func (d *DataSender) updatePacingRate() {
	d.st.PacingRate = cc.PacingRate(&d.st, d.sb.packetsOut(), d.rtt.srttUs8)
}

// ectCodepoint is the ECT codepoint of data packets once ECN is
// negotiated: ECT(1) for a CC with TCP_CONG_WANTS_ECT_1 (tcp_ecn_send's
// INET_ECN_xmit_ect_1_negotiated, via cc.ECNCodepoint), else ECT(0)
// (INET_ECN_xmit).
func (d *DataSender) ectCodepoint() packet.ECN {
	if d.hooks.ECN != nil {
		return d.hooks.ECN.ECNCodepoint()
	}
	return packet.ECT0
}
