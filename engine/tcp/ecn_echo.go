package tcp

import "github.com/ccscope/ccscope/engine/packet"

// AccECN initial counter values (RFC 9768 §3.2.1; the kernel's
// TCP_ACCECN_CEP_INIT_OFFSET and TCP_ACCECN_E1B_INIT_OFFSET): r.cep starts
// at 5 so that a zero ACE field stands out, the ECT byte counters at 1.
const (
	accecnCepInit = 5
	accecnE1bInit = 1
	accecnByteMax = 1<<24 - 1 // the AccECN option carries 24-bit counters
)

// ecnEcho is the receiver's ECN feedback state (the receiving half of
// tp->ecn_flags, DCTCP's ce_state and the AccECN r.* counters).
type ecnEcho struct {
	mode      EchoMode // as configured; classic when AccECN was not negotiated
	ok        bool     // TCP_ECN_OK: negotiated on the handshake
	demandCWR bool     // TCP_ECN_DEMAND_CWR: set ECE on outgoing ACKs
	seen      bool     // TCP_ECN_SEEN: an ECT or CE packet has arrived

	// DCTCP (tcp_dctcp.h).
	ceState     bool
	priorRcvNxt uint64

	// AccECN (RFC 9768).
	cep     uint32     // r.cep: CE-marked packets, from 5
	e1b     uint32     // r.e1b: ECT(1) payload bytes, from 1
	ceb     uint32     // r.ceb: CE payload bytes
	prevECN packet.ECN // the IP-ECN field last seen (tp->prev_ecnfield), from the SYN's
}

// negotiate follows tcp_ecn_create_request (RFC 3168 §6.1.1: a SYN with
// ECE and CWR asks for ECN) and RFC 9768 §3.1.1 (AE, CWR and ECE ask for
// AccECN; a server without AccECN falls back to classic ECN).
func (e *ecnEcho) negotiate(syn packet.Flags, synECN packet.ECN, enabled bool, rcvNxt uint64) {
	const classic = packet.ECE | packet.CWR
	e.ok = enabled && syn&classic == classic
	if e.mode == EchoAccECN && (!e.ok || syn&packet.AE == 0) {
		e.mode = EchoClassic
	}
	e.demandCWR, e.seen, e.ceState = false, false, false
	e.priorRcvNxt = rcvNxt
	e.cep, e.e1b, e.ceb = accecnCepInit, accecnE1bInit, 0
	e.prevECN = synECN
}

// accecn reports whether AccECN feedback is in use.
func (e *ecnEcho) accecn() bool { return e.ok && e.mode == EchoAccECN }

// synAckFlags are the ECN flags of the SYN-ACK: ECE for classic ECN
// (tcp_ecn_make_synack), or for AccECN the IP-ECN codepoint the SYN
// arrived with, encoded in (AE, CWR, ECE) as RFC 9768 Table 2 gives:
// Not-ECT 010, ECT(1) 011, ECT(0) 100, CE 110.
func (e *ecnEcho) synAckFlags(synECN packet.ECN) packet.Flags {
	switch {
	case !e.ok:
		return 0
	case !e.accecn():
		return packet.ECE
	}
	switch synECN {
	case packet.ECT1:
		return packet.CWR | packet.ECE
	case packet.ECT0:
		return packet.AE
	case packet.CE:
		return packet.AE | packet.CWR
	}
	return packet.CWR
}

// acceptCWR follows tcp_ecn_accept_cwr: a CWR from the sender (classic
// ECN only) ends the ECE echo, and a data segment carrying it is ACKed at
// once because the sender's window may be tiny.
func (e *ecnEcho) acceptCWR(sg *segment, a *ackState) {
	if !e.ok || e.accecn() || sg.flags&packet.CWR == 0 {
		return
	}
	e.demandCWR = false
	if sg.end != sg.seq {
		a.pending |= ackNow
	}
}

// checkCE follows tcp_ecn_check_ce / __tcp_ecn_check_ce for a data
// segment. Classic ECN latches ECE from the first CE and enters quick-ACK
// mode then; DCTCP (its CA_EVENT_ECN_IS_CE / NO_CE handler) mirrors the CE
// state, which also keeps it out of the quick-ACK branch; AccECN counts in
// countAccECN instead. A Not-ECT segment after ECT ones is probably a
// retransmission: quick-ACK it.
func (e *ecnEcho) checkCE(sg *segment, r *Receiver) {
	if !e.ok {
		return
	}
	switch sg.ecn {
	case packet.NotECT:
		if e.seen {
			r.ack.enterQuickack(2, uint32(r.win.rcvWnd))
		}
	case packet.CE:
		r.stats.CEPackets += uint64(sg.segs)
		if e.mode == EchoDCTCP {
			e.dctcpUpdate(true, r)
		}
		if !e.demandCWR && !e.accecn() {
			// Better not delay ACKs: the sender can have a tiny cwnd.
			r.ack.enterQuickack(2, uint32(r.win.rcvWnd))
			e.demandCWR = true
		}
		e.seen = true
	default:
		if e.mode == EchoDCTCP {
			e.dctcpUpdate(false, r)
		}
		e.seen = true
	}
}

// dctcpUpdate follows dctcp_ece_ack_update: when the CE state flips, an
// ACK still delayed is sent first, for the data before this segment
// (prior_rcv_nxt) and with the old ECE, so that every byte's ECE is exact;
// then an immediate ACK reports the new state.
func (e *ecnEcho) dctcpUpdate(ce bool, r *Receiver) {
	if e.ceState != ce {
		if r.ack.pending&ackTimer != 0 {
			e.demandCWR = e.ceState
			r.sendAck(e.priorRcvNxt)
		}
		r.ack.pending |= ackNow
	}
	e.priorRcvNxt = r.rcvNxt
	e.ceState = ce
	e.demandCWR = ce
}

// countAccECN updates the RFC 9768 §3.2.1 counters for every arriving
// packet and asks for an ACK at once on every change of the IP-ECN field,
// CE to ECT(1) as well as ECT(1) to CE: the change-triggered ACKs of
// §3.2.2.5.1 as Linux 6.18's tcp_ecn_received_counters sends them (its
// other trigger, 6 CE marks pending, is checked on ACKs a pure receiver
// does not process).
func (e *ecnEcho) countAccECN(sg *segment, a *ackState) {
	if !e.accecn() {
		return
	}
	l := uint32(sg.end - sg.seq)
	switch sg.ecn {
	case packet.CE:
		e.cep += sg.segs
		e.ceb += l
	case packet.ECT1:
		e.e1b += l
	}
	if sg.ecn != e.prevECN {
		a.pending |= ackNow
	}
	e.prevECN = sg.ecn
}

// writeAck sets an ACK's ECN feedback: ECE while demanded (tcp_ecn_send),
// or the AccECN ACE field (the low 3 bits of r.cep in AE, CWR, ECE) and
// the counters the AccECN option carries.
func (e *ecnEcho) writeAck(p *packet.Packet) {
	switch {
	case !e.ok:
	case e.accecn():
		ace := e.cep & 7
		if ace&1 != 0 {
			p.Flags |= packet.ECE
		}
		if ace&2 != 0 {
			p.Flags |= packet.CWR
		}
		if ace&4 != 0 {
			p.Flags |= packet.AE
		}
		p.AccECN = [3]uint32{e.cep, e.e1b & accecnByteMax, e.ceb & accecnByteMax}
	case e.demandCWR:
		p.Flags |= packet.ECE
	}
}
