package tcp

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// ACK flags of tcp_input.c.
const (
	flagData            = 0x01
	flagWinUpdate       = 0x02
	flagDataAcked       = 0x04
	flagRetransAcked    = 0x08
	flagSynAcked        = 0x10
	flagDataSacked      = 0x20
	flagECE             = 0x40
	flagLostRetrans     = 0x80
	flagSlowPath        = 0x100
	flagOrigSackAcked   = 0x200
	flagSndUnaAdvanced  = 0x400
	flagDSackingAck     = 0x800
	flagSetXmitTimer    = 0x1000
	flagAckMaybeDelayed = 0x10000
	flagDSackTLP        = 0x20000

	flagAcked           = flagDataAcked | flagSynAcked
	flagNotDup          = flagData | flagWinUpdate | flagAcked
	flagCAAlert         = flagDataSacked | flagECE | flagDSackingAck
	flagForwardProgress = flagAcked | flagDataSacked
)

// What to (re)transmit after an ACK (REXMIT_*).
const (
	rexmitNone = iota
	rexmitLost
	rexmitNew
)

// sackTagState is struct tcp_sacktag_state.
type sackTagState struct {
	firstSackt, lastSackt sim.Time
	sackedAny             bool
	reord                 uint64
	flag                  int
	sackDelivered         uint32
	rate                  cc.RateSample
	hasPrior              bool
}

// ack is the sender's part of tcp_rcv_established: tcp_ack, then, for
// any ACK tcp_ack did not discard, tcp_data_snd_check — send what the
// windows now allow, or arm the persist timer. The ACK that reopens a
// closed receive window usually acks nothing new; without this step the
// window it carries would never be used.
func (d *DataSender) ack(p *packet.Packet) {
	if d.tcpAck(p) {
		d.dataSndCheck()
	}
	d.checkDone()
}

// tcpAck follows tcp_ack: process one ACK. It reports whether the ACK was
// accepted (an old ACK is, one for data never sent is not).
func (d *DataSender) tcpAck(p *packet.Packet) bool {
	priorSndUna := d.sndUna
	ackSeq := p.Ack
	flag := 0
	numDupack := 0
	priorPackets := d.sb.packetsOut()
	delivered := d.rate.Delivered
	lost := d.lost
	rexmit := rexmitNone
	// The per-ACK state lives in the sender so that handing its rate
	// sample to the CC does not allocate.
	ss := &d.ackState
	*ss = sackTagState{}
	ss.rate.RTT = -1

	// The receiver stamps ms since the start, one below the sender's clock
	// (tsNow); both ends of a Linux host read one clock, and the peer adds
	// its offset.
	d.st.RcvTSVal, d.st.RcvTSEcr, d.st.TSNow = p.TSVal+1+d.cfg.PeerTSOffset, p.TSEcr, d.tsNow()

	if ackSeq < priorSndUna {
		// An old ACK: use its SACK information only (the kernel's old_ack
		// path does not count sack_delivered).
		if p.NSack > 0 && d.isSACK() {
			flag |= d.sacktag(p, priorSndUna, ss)
			d.fastretransAlert(priorSndUna, numDupack, &flag, &rexmit)
			d.xmitRecovery(rexmit)
		}
		return true
	}
	if ackSeq > d.sndNxt {
		return false // acks data never sent (RFC 793 3.9)
	}
	// ts_recent moves once the ACK is known to be in window, neither old
	// nor for unsent data, and never back (tcp_replace_ts_recent's PAWS
	// test): an ACK overtaken on the way keeps the newer one. A newer one
	// is FLAG_TS_PROGRESS, which AccECN counts as progress.
	tsProgress := false
	if p.TSVal != 0 && int32(p.TSVal-d.tsRecent) >= 0 {
		tsProgress = p.TSVal != d.tsRecent
		d.tsRecent = p.TSVal
	}
	d.probesOut = 0 // the peer is alive
	d.rcvTstamp = d.rtt.hz.jiffies(d.st.Now)
	if ackSeq > priorSndUna {
		flag |= flagSndUnaAdvanced
		d.retransmits = 0
	}
	priorFack := d.sndUna
	if d.isSACK() {
		priorFack = d.highestSackSeq()
	}
	ss.rate.PriorInFlightPkts = d.sb.inFlight()
	if d.hooks.MarkedLost != nil {
		d.rateCheckAppLimited() // the v3 kernel's check on every ACK
	}

	nwin := uint64(p.Wnd)
	if p.NSack > 0 || p.Flags&packet.ECE != 0 || d.accECN || nwin != d.sndWnd {
		flag |= flagSlowPath // header prediction fails
	}
	if flag&(flagSlowPath|flagSndUnaAdvanced) == flagSndUnaAdvanced {
		// The fast path: a pure forward advance, window unchanged.
		d.sndUna = ackSeq
		flag |= flagWinUpdate
	} else {
		// tcp_ack_update_window.
		if d.mayUpdateWindow(ackSeq, nwin) {
			flag |= flagWinUpdate
			if nwin != d.sndWnd && d.writeSeq > d.sndNxt {
				d.slowStartAfterIdleCheck() // data waited behind the old window
			}
			d.sndWnd = nwin
			d.maxWnd = max(d.maxWnd, nwin)
		}
		d.sndUna = ackSeq
		if p.NSack > 0 && d.isSACK() {
			flag |= d.sacktag(p, priorSndUna, ss)
		}
		if d.ecnEcho(p) {
			flag |= flagECE
		}
		d.countSackDelivered(ss, flag)
	}
	if d.rec.On() {
		d.event(trace.EvAck, ackSeq, 0)
		if p.NSack > 0 {
			d.event(trace.EvSack, p.Sack[0].Start, uint32(p.Sack[0].End-p.Sack[0].Start))
		}
	}

	if priorPackets == 0 {
		if d.accECN && d.accecnProcess(p, flag, tsProgress, d.rate.Delivered-delivered) > 0 {
			flag |= flagECE
		}
		d.inAckEvent(flag)
		if flag&flagDSackingAck != 0 {
			d.fastretransAlert(priorSndUna, numDupack, &flag, &rexmit)
		}
		d.ackProbe()
		if d.tlp.highSeq != 0 {
			d.processTLPAck(ackSeq, flag)
		}
		return true
	}

	flag |= d.cleanRtxQueue(priorFack, priorSndUna, ss, flag&flagECE != 0)
	d.rackUpdateReoWnd(&ss.rate)
	if d.accECN && d.accecnProcess(p, flag, tsProgress, d.rate.Delivered-delivered) > 0 {
		flag |= flagECE
	}
	d.inAckEvent(flag)
	if d.tlp.highSeq != 0 {
		ss.rate.IsAckingTLPRetransSeq = d.processTLPAck(ackSeq, flag)
	}
	// tcp_ack_is_dubious
	if flag&flagNotDup == 0 || flag&flagCAAlert != 0 || d.st.CA != cc.CAOpen {
		if flag&(flagSndUnaAdvanced|flagNotDup|flagDSackingAck) == 0 {
			numDupack = 1
		}
		d.fastretransAlert(priorSndUna, numDupack, &flag, &rexmit)
	}
	if flag&flagSetXmitTimer != 0 {
		d.setXmitTimer()
	}
	newly := d.rate.Delivered - delivered
	newlyLost := d.lost - lost
	ss.rate.IsAckDelayed = flag&flagAckMaybeDelayed != 0
	ss.rate.IsECE = flag&flagECE != 0
	d.rate.Gen(d.st.Now, cc.RateAck{
		Delivered: newly, Lost: newlyLost, TotalLost: d.lost,
		HasPrior: ss.hasPrior, MinRTTUs: d.rtt.minRTTUs(),
	}, &ss.rate)
	if ss.rate.Interval > 0 && ss.rate.Delivered > 0 && !ss.rate.IsAppLimited {
		d.Stats.DeliveryRate = units.RateOf(units.Bytes(uint64(ss.rate.Delivered)*d.mss), ss.rate.Interval)
	}
	d.congControl(ackSeq, newly, flag, &ss.rate)
	d.xmitRecovery(rexmit)
	return true
}

// inAckEvent follows tcp_in_ack_event, which mainline calls after
// tcp_clean_rtx_queue so the CC sees this ACK's delivered and delivered_ce.
func (d *DataSender) inAckEvent(flag int) {
	if d.hooks.InAckEvent == nil {
		return
	}
	var ev cc.AckFlags
	if flag&flagWinUpdate != 0 {
		ev |= cc.AckWindowUpd
	}
	if flag&flagSlowPath != 0 {
		ev |= cc.AckSlowPath
		if flag&flagECE != 0 {
			ev |= cc.AckECE
		}
	}
	d.fillState()
	d.st.LastAckSeq = d.sndUna
	d.hooks.InAckEvent.InAckEvent(&d.st, ev)
}

// checkDone notes when a sized flow's last byte is acknowledged.
func (d *DataSender) checkDone() {
	d.Stats.BytesAcked = units.Bytes(d.sndUna - 1)
	if d.endSeq > 0 && d.sndUna >= d.endSeq && d.Stats.Done == 0 {
		d.Stats.Done = d.st.Now
		d.clearXmitTimer()
		d.flowSmp.Force() // a sampled trace keeps the state the flow ends in
	}
}

// countSackDelivered is the tcp_count_delivered call for newly sacked data.
func (d *DataSender) countSackDelivered(ss *sackTagState, flag int) {
	if ss.sackDelivered > 0 {
		d.countDelivered(ss.sackDelivered, flag&flagECE != 0)
	}
}

// countDelivered is tcp_count_delivered. With AccECN the CE count comes
// from the ACE counter instead (ecnEcho).
func (d *DataSender) countDelivered(n uint32, eceAck bool) {
	d.rate.Delivered += n
	if eceAck && !d.accECN {
		d.rate.DeliveredCE += n
	}
}

// ecnEcho follows tcp_ecn_rcv_ecn_echo: with RFC 3168 ECN, whether the ACK
// carries ECE. AccECN is counted later in the ACK (accecnProcess).
func (d *DataSender) ecnEcho(p *packet.Packet) bool {
	return d.ecnOK && !d.accECN && p.Flags&packet.ECE != 0
}

// AccECN's counter constants (include/net/tcp_ecn.h).
const (
	accecnCEPInitOffset = 5 // TCP_ACCECN_CEP_INIT_OFFSET: r.cep starts at 5
	accecnACEMask       = 7 // TCP_ACCECN_CEP_ACE_MASK: ACE is r.cep mod 8
	accecnSafetyShift   = 1 // TCP_ACCECN_SAFETY_SHIFT
)

// accecnProcess follows __tcp_accecn_process (Linux 6.18, RFC 9768): the CE
// packets this ACK reports, added to delivered_ce. Only an ACK that makes
// progress (new data acked or SACKed, or a newer timestamp) counts: an ACK
// overtaken by a newer one says nothing new. The ACE field gives the count
// mod 8 against delivered_ce; when more than 7 packets were delivered, the
// CE byte counter of the option (24 bits, its delta sign-extended) decides
// how many wraps of 8 to add, at most the safe delta the packets allow.
// deliveredPkts is what the ACK delivered; its bytes are taken as that many
// segments of mss (the kernel sums the skbs' lengths).
func (d *DataSender) accecnProcess(p *packet.Packet, flag int, tsProgress bool, deliveredPkts uint32) uint32 {
	if flag&flagForwardProgress == 0 && !tsProgress {
		return 0
	}
	dceb := int32((p.AccECN[2]-d.lastCEByte)&(1<<24-1)<<8) >> 8 // sign_extend32(delta, 23)
	d.lastCEByte += uint32(dceb)
	optValid := dceb >= 0

	delta := (p.AccECN[0]&accecnACEMask - accecnCEPInitOffset - d.rate.DeliveredCE) & accecnACEMask
	n := delta
	if deliveredPkts > accecnACEMask {
		n = d.accecnSafeDelta(deliveredPkts, delta, uint32(dceb), optValid)
	}
	if n > 0 {
		d.rate.DeliveredCE += n
	}
	return n
}

// accecnSafeDelta is __tcp_accecn_process's choice for an ACK that
// delivered more than 7 packets, where ACE may have wrapped.
func (d *DataSender) accecnSafeDelta(pkts, delta, dceb uint32, optValid bool) uint32 {
	safe := pkts - (pkts-delta)&accecnACEMask
	if !optValid {
		return safe
	}
	if dceb == 0 {
		return delta
	}
	mss := uint32(d.mss)
	if pkts >= (accecnACEMask+1)*2 && (d.isSACK() || d.st.CA == cc.CAOpen || d.st.CA == cc.CACWR) {
		bytes := uint64(pkts) * uint64(mss)
		if bytes <= uint64(dceb) {
			return safe
		}
		est := uint32((uint64(dceb)*uint64(pkts) + bytes - 1) / bytes)
		return min(safe, delta+est&^accecnACEMask)
	}
	if dceb > delta*mss {
		return safe
	}
	if dceb < safe*mss>>accecnSafetyShift {
		return delta
	}
	return safe
}

// highestSackSeq is tcp_highest_sack_seq: the end of the highest SACKed
// segment, even once snd_una has passed it (an ACK that covers every SACKed
// segment, before tcp_clean_rtx_queue takes them off).
func (d *DataSender) highestSackSeq() uint64 {
	if d.sb.sackedOut == 0 || !d.isSACK() {
		// Without SACK tp->highest_sack is the head skb (set as the first
		// skb is sent, moved on by tcp_clean_rtx_queue's
		// tcp_highest_sack_replace): its seq is snd_una.
		return d.sndUna
	}
	return d.highestSackEnd
}

// cleanRtxQueue follows tcp_clean_rtx_queue: free cumulatively acked
// segments, take RTT and rate samples, and call pkts_acked.
func (d *DataSender) cleanRtxQueue(priorFack, priorSndUna uint64, ss *sackTagState, eceAck bool) int {
	flag := 0
	priorSacked := d.sb.sackedOut
	reord := d.sndNxt
	var firstAckt, lastAckt sim.Time
	haveAckt := false
	var pktsAcked uint32
	ackSeg := d.sb.una
	for ackSeg < d.sb.nxt && d.sb.seg(ackSeg).end <= d.sndUna {
		ackSeg++
	}
	for n := d.sb.una; n < ackSeg; n++ {
		s := d.sb.seg(n)
		start := d.sb.start(n)
		if s.flags&flagRetrans != 0 {
			flag |= flagRetransAcked
		} else if s.flags&flagSacked == 0 {
			lastAckt = s.sent
			if !haveAckt {
				firstAckt, haveAckt = s.sent, true
			}
			reord = min(reord, start)
			if s.end <= d.highSeq {
				flag |= flagOrigSackAcked
			}
		}
		if s.flags&flagSacked == 0 && d.isSACK() {
			d.countDelivered(1, eceAck)
			if !d.spuriousRetrans(s) {
				d.rackAdvance(s.flags, s.end, s.sent)
			}
		}
		pktsAcked++
		d.rate.SkbDelivered(&s.tx, s.rateSkb(), &ss.rate, &ss.hasPrior)
		flag |= flagDataAcked
	}
	d.sb.ackTo(ackSeg)
	if d.rtxHint < ackSeg {
		d.rtxHint = ackSeg
	}

	seqRTT, caRTT, sackRTT := int64(-1), int64(-1), int64(-1)
	if haveAckt && flag&flagRetransAcked == 0 {
		seqRTT = stampUsDelta(d.st.Now, firstAckt)
		caRTT = stampUsDelta(d.st.Now, lastAckt)
		// A lone runt, likely a delayed ACK. As in the kernel, flag is
		// this function's own (it starts at 0), so of FLAG_CA_ALERT and
		// FLAG_SYN_ACKED only the latter could be set here, and the
		// handshake's SYN never sits in this queue.
		if pktsAcked == 1 && priorSacked == 0 && d.sndUna-priorSndUna < d.mss &&
			ss.rate.PriorDelivered+1 == d.rate.Delivered &&
			flag&(flagCAAlert|flagSynAcked) == 0 {
			flag |= flagAckMaybeDelayed
		}
	}
	if ss.sackedAny {
		sackRTT = stampUsDelta(d.st.Now, ss.firstSackt)
		caRTT = stampUsDelta(d.st.Now, ss.lastSackt)
	}
	rttUpdate := d.ackUpdateRTT(flag, seqRTT, sackRTT, caRTT, &ss.rate)

	if flag&flagAcked != 0 {
		flag |= flagSetXmitTimer
		if !d.isSACK() {
			d.removeRenoSacks(pktsAcked, eceAck)
			if flag&flagRetransAcked != 0 {
				flag &^= flagOrigSackAcked
			}
		} else {
			if reord < priorFack {
				d.checkSackReordering(reord) // a never-retransmitted hole was filled
			}
			delta := priorSacked - d.sb.sackedOut
			d.lostCntHint -= min(d.lostCntHint, delta)
		}
	} else if d.sb.packetsOut() > 0 && rttUpdate && sackRTT >= 0 &&
		sackRTT > stampUsDelta(d.st.Now, d.sb.seg(d.sb.una).sent) {
		flag |= flagSetXmitTimer
	}

	// Every ACK that reaches here calls pkts_acked, SACK-only ones too
	// (pkts_acked 0, the SACK's RTT), as tcp_clean_rtx_queue does.
	if d.hooks.PktsAcked != nil {
		d.fillState()
		d.hooks.PktsAcked.PktsAcked(&d.st, cc.AckSample{PktsAcked: pktsAcked,
			RTT:           ss.rate.RTT,
			InFlightBytes: uint32(d.st.MSS) * (d.rate.Delivered - ss.rate.PriorDelivered)})
	}
	return flag
}

// spuriousRetrans is tcp_skb_spurious_retrans: the timestamp echo predates
// the segment's retransmission.
func (d *DataSender) spuriousRetrans(s *txSeg) bool {
	return s.flags&flagRetrans != 0 && d.tsecrBefore(uint32(s.sent/sim.Time(sim.Millisecond))+1)
}

// tsecrBefore is tcp_tsopt_ecr_before.
func (d *DataSender) tsecrBefore(when uint32) bool {
	return d.st.RcvTSEcr != 0 && int32(d.st.RcvTSEcr-when) < 0
}

// ackUpdateRTT follows tcp_ack_update_rtt: prefer the ACK's timing, fall
// back to the timestamp echo (RFC 7323 RTTM) when Karn forbids it.
func (d *DataSender) ackUpdateRTT(flag int, seqRTT, sackRTT, caRTT int64, rs *cc.RateSample) bool {
	if seqRTT < 0 {
		seqRTT = sackRTT
	}
	if seqRTT < 0 && d.st.RcvTSEcr != 0 && flag&flagAcked != 0 {
		seqRTT = rttTsoptUs(d.st.TSNow, d.st.RcvTSEcr, 1)
		caRTT = seqRTT
	}
	if caRTT >= 0 {
		rs.RTT = sim.Duration(caRTT) * sim.Microsecond
	} else {
		rs.RTT = -1
	}
	if seqRTT < 0 {
		return false
	}
	d.updateRTTMin(caRTT, flag)
	d.rtt.sample(seqRTT, d.sndUna, d.sndNxt)
	d.rtt.setRTO()
	d.rto = d.rtt.rto // RFC 6298: a valid sample resets the backoff
	d.backoff = 0
	d.Stats.RTT.Add(seqRTT * int64(sim.Microsecond))
	return true
}

// updateRTTMin follows tcp_update_rtt_min (tcp_input.c, 4.10+): skip
// suspected delayed ACKs above the minimum, and feed the windowed filter
// `rtt_us ? : jiffies_to_usecs(1)` at tcp_jiffies32: only a zero sample
// becomes a tick.
func (d *DataSender) updateRTTMin(rttUs int64, flag int) {
	if flag&flagAckMaybeDelayed != 0 && rttUs > d.rtt.minRTTUs() {
		return
	}
	if rttUs == 0 {
		rttUs = d.rtt.hz.jiffyUs()
	}
	hz := d.rtt.hz
	d.rtt.minRTT.runningMin(hz.minRTTWlen(), hz.jiffies(d.st.Now), rttUs)
}

// congControl follows tcp_cong_control: the CC's cong_control if it has
// one; else PRR during a reduction or cong_avoid when cwnd may grow; then
// the pacing rate.
func (d *DataSender) congControl(ackSeq uint64, ackedSacked uint32, flag int, rs *cc.RateSample) {
	d.st.LastAckSeq = ackSeq
	if d.hooks.CongControl != nil {
		d.fillState()
		d.hooks.CongControl.CongControl(&d.st, rs)
		// BBR marks PROBE_RTT app-limited by writing app_limited.
		d.rate.AppLimited = d.st.AppLimited
		return
	}
	if d.inCwndReduction() {
		d.cwndReduction(int32(ackedSacked), int32(rs.Losses), flag)
	} else if d.mayRaiseCwnd(flag) {
		d.fillState()
		d.hooks.CongAvoid(&d.st, ackedSacked)
		if d.st.EnterCWR { // the CC called tcp_enter_cwr (CDG's backoff)
			d.st.EnterCWR = false
			d.enterCWR()
		}
		d.cwndStamp = d.st.Now
	}
	d.updatePacingRate()
}

// mayRaiseCwnd is tcp_may_raise_cwnd.
func (d *DataSender) mayRaiseCwnd(flag int) bool {
	if d.reordering > reorderingInit {
		return flag&flagForwardProgress != 0
	}
	return flag&flagDataAcked != 0
}

// mayUpdateWindow is tcp_may_update_window for an ACK from the receiver,
// which carries no data (its sequence stays snd_wl1): the window is taken
// when the ACK advances, or the window grows or closes.
func (d *DataSender) mayUpdateWindow(ack, nwin uint64) bool {
	return ack > d.sndUna || nwin > d.sndWnd || nwin == 0
}
