package pump

import "slices"

// maxHoles bounds the gaps a pump's sink remembers. A packet arriving
// behind more than this many newer gaps is taken for a copy.
const maxHoles = 1024

// arrived records which of a pump's packets have come, so that a copy a
// link sent (a duplicate) is delivered once. Packets are known by their
// sequence (byte offset): top is the sequence just past the highest packet
// that came, and holes the ranges below it that have not, oldest first. A
// packet in order costs a comparison; one past a gap (a loss, or one held
// back) opens a hole, which a late packet then fills; anything else below
// top is a copy. Sequence spaces of packets never overlap, so a packet is
// its sequence. A pump keeps it only once a link may copy packets
// (Config.Copies): the first packets after that open one hole below them,
// which packets in flight then fill.
type arrived struct {
	top     uint64
	holes   []hole
	pktSize uint64
}

// hole is a range [from, to) of sequences not yet come.
type hole struct{ from, to uint64 }

// first marks the packet at sequence seq come and reports whether it is
// its first arrival.
func (a *arrived) first(seq uint64) bool {
	switch {
	case seq == a.top:
		a.top += a.pktSize
		return true
	case seq > a.top:
		if len(a.holes) == maxHoles {
			a.holes = slices.Delete(a.holes, 0, 1)
		}
		a.holes = append(a.holes, hole{a.top, seq})
		a.top = seq + a.pktSize
		return true
	}
	for k := len(a.holes) - 1; k >= 0; k-- { // late packets are mostly recent
		h := &a.holes[k]
		if seq < h.from || seq >= h.to {
			continue
		}
		end := seq + a.pktSize
		switch {
		case seq == h.from && end >= h.to:
			a.holes = slices.Delete(a.holes, k, k+1)
		case seq == h.from:
			h.from = end
		case end >= h.to:
			h.to = seq
		default: // from the middle: two holes
			rest := hole{end, h.to}
			h.to = seq
			a.holes = slices.Insert(a.holes, k+1, rest)
			if len(a.holes) > maxHoles {
				a.holes = slices.Delete(a.holes, 0, 1)
			}
		}
		return true
	}
	return false
}
