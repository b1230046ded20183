package pump

// arrived records which of a pump's packets have come, so that a copy a
// link sent (a duplicate) is delivered once. Packets are numbered by their
// sequence (byte offset) over the packet size. Every packet before next has
// come, and bit i−64·base of bits says whether packet i ≥ next has. In
// order, next moves on and bits stays empty (no division on that path); a
// loss or reordering leaves next behind and costs a bit per packet above
// it until the hole closes.
type arrived struct {
	next    uint64 // sequence of the first packet not yet come
	base    uint64 // the packet number of bit 0 of bits[0], over 64
	bits    []uint64
	pktSize uint64
}

// first marks the packet at sequence seq come and reports whether it is
// its first arrival.
func (a *arrived) first(seq uint64) bool {
	if seq < a.next {
		return false
	}
	if seq == a.next && len(a.bits) == 0 {
		a.next += a.pktSize
		return true
	}
	i := seq / a.pktSize
	w := i/64 - a.base
	for uint64(len(a.bits)) <= w {
		a.bits = append(a.bits, 0)
	}
	bit := uint64(1) << (i % 64)
	if a.bits[w]&bit != 0 {
		return false
	}
	a.bits[w] |= bit
	for a.has(a.next / a.pktSize) {
		a.next += a.pktSize
	}
	for len(a.bits) > 0 && a.base < a.next/a.pktSize/64 { // words wholly before next
		a.bits, a.base = a.bits[1:], a.base+1
	}
	return true
}

func (a *arrived) has(i uint64) bool {
	w := i/64 - a.base
	return w < uint64(len(a.bits)) && a.bits[w]&(1<<(i%64)) != 0
}
