package tcp

// Recovery without SACK: NewReno's dupack accounting (tcp_add_reno_sack,
// tcp_limit_reno_sacked, tcp_remove_reno_sacks) and tcp_newreno_mark_lost
// (RFC 6582).

import "github.com/ccscope/ccscope/engine/cc"

// newrenoMarkLost follows tcp_newreno_mark_lost: without SACK, the head is
// lost after `reordering` dupacks, and again on each partial ACK.
func (d *DataSender) newrenoMarkLost(sndUnaAdvanced bool) {
	if d.st.CA < cc.CARecovery && d.sb.sackedOut >= d.reordering ||
		d.st.CA == cc.CARecovery && sndUnaAdvanced {
		if d.sb.seg(d.sb.una).flags&flagLost != 0 {
			return
		}
		if d.sb.una+1 < d.sb.nxt {
			d.sb.split(d.sb.una + 1) // tcp_fragment: the head's first MSS alone
		}
		d.markLost(d.sb.una)
	}
}

// addRenoSack follows tcp_add_reno_sack: without SACK each dupack counts as
// one segment that left the network.
func (d *DataSender) addRenoSack(numDupack int, eceAck bool) {
	if numDupack == 0 {
		return
	}
	prior := d.sb.sackedOut
	d.sb.sackedOut += uint32(numDupack)
	d.checkRenoReordering(0)
	if delivered := int32(d.sb.sackedOut - prior); delivered > 0 {
		d.countDelivered(uint32(delivered), eceAck)
	}
}

// limitRenoSacked is tcp_limit_reno_sacked: dupacks cannot exceed what is
// out minus the holes. It reports whether they did, which means reordering.
func (d *DataSender) limitRenoSacked() bool {
	out := d.sb.packetsOut()
	holes := min(max(d.sb.lostOut, 1), out)
	if d.sb.sackedOut+holes > out {
		d.sb.sackedOut = out - holes
		return true
	}
	return false
}

// checkRenoReordering is tcp_check_reno_reordering: more dupacks than
// could be explained by the holes were reordering, which raises the
// dupack threshold to what is out (plus addend, the segments an ACK just
// acked), at most tcp_max_reordering.
func (d *DataSender) checkRenoReordering(addend uint32) {
	if !d.limitRenoSacked() {
		return
	}
	d.reordering = min(d.sb.packetsOut()+addend, reorderingMax)
	d.reordSeen++
}

// removeRenoSacks follows tcp_remove_reno_sacks: a cumulative ACK consumes
// the dupacks it accounts for.
func (d *DataSender) removeRenoSacks(acked uint32, eceAck bool) {
	if acked > 0 {
		d.countDelivered(max(acked-min(acked, d.sb.sackedOut), 1), eceAck)
		if acked-1 >= d.sb.sackedOut {
			d.sb.sackedOut = 0
		} else {
			d.sb.sackedOut -= acked - 1
		}
	}
	d.checkRenoReordering(acked)
}
