package tcp

import (
	"github.com/ccscope/ccscope/engine/packet"
)

// groMaxBytes is GRO_LEGACY_MAX_SIZE: an aggregate's length, IP and TCP
// headers included, stays below it (skb_gro_receive), so 45 segments of
// 1,448 bytes merge (65,212 B) and 46 do not; there is no count limit.
const groMaxBytes = 65536

// groState is the one GRO aggregate held for this flow.
type groState struct {
	active bool
	sg     segment
	ack    uint64
}

// groReceive models GRO (tcp_gro_receive) with a coalescing interval:
// in-order packets arriving within Opts.GROInterval of the aggregate's
// first packet merge into one skb, which TCP then sees as a single
// segment, so one ACK decision covers them all (more than one MSS is
// unacknowledged, so the aggregate is ACKed at once, by
// __tcp_ack_snd_check or by the read that follows). A packet that may
// not merge — not contiguous, a different ECN codepoint or timestamp
// option or flags (CWR on either: a CWR segment reaches TCP alone), larger
// than the first, or past the size limit — flushes the aggregate; a
// packet shorter than the first, or with PSH, is merged and then flushes
// it. With GROInterval 0 nothing is ever held: in a simulation no two
// packets arrive at the same picosecond, so GRO has no effect.
func (r *Receiver) groReceive(p *packet.Packet) {
	g := &r.gro
	if g.active {
		if r.groCanMerge(p) {
			g.sg.end += uint64(p.Len)
			g.sg.segs++
			g.sg.flags |= p.Flags & packet.PSH
			if p.Len < g.sg.segLen || p.Flags&packet.PSH != 0 {
				r.flushGRO()
			}
			return
		}
		r.flushGRO()
	}
	if p.Len == 0 || p.Flags&(packet.SYN|packet.FIN|packet.RST|packet.URG|packet.PSH) != 0 {
		var sg segment
		sg.describe(p)
		r.rcvSegment(&sg)
		return
	}
	g.active = true
	g.sg.describe(p)
	g.ack = p.Ack
	r.groTimer.Arm(r.s.Now().Add(r.cfg.Opts.GROInterval))
}

// groCanMerge is tcp_gro_receive's flush test for p against the held skb.
func (r *Receiver) groCanMerge(p *packet.Packet) bool {
	sg := &r.gro.sg
	return p.Seq == sg.end && p.Len > 0 && p.Len <= sg.segLen &&
		HeaderBytes+sg.end-sg.seq+uint64(p.Len) < groMaxBytes &&
		p.ECN == sg.ecn && p.TSVal == sg.tsVal && p.TSEcr == sg.tsEcr &&
		p.Ack == r.gro.ack &&
		(p.Flags^sg.flags)&^(packet.PSH|packet.FIN) == 0 &&
		p.Flags&packet.CWR == 0
}

// flushGRO hands the held aggregate to TCP (napi_gro_flush).
func (r *Receiver) flushGRO() {
	if !r.gro.active {
		return
	}
	r.gro.active = false
	r.groTimer.Stop()
	r.stats.GROFlushes++
	sg := r.gro.sg // a copy: the aggregate may be reused while it is processed
	r.rcvSegment(&sg)
}
