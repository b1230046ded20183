package qdisc

import (
	"math/bits"

	"github.com/ccscope/ccscope/engine/packet"
)

// jhashInitval is JHASH_INITVAL in include/linux/jhash.h.
const jhashInitval = 0xdeadbeef

// jhash3Words follows jhash_3words (__jhash_nwords then __jhash_final).
func jhash3Words(a, b, c, initval uint32) uint32 {
	initval += jhashInitval + 3<<2
	a += initval
	b += initval
	c += initval
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}

// flowHash is skb_get_hash: a packet's own hash if something set one, else
// a hash of the flow's identity (source, destination, flow index) keyed by
// seed, as the flow dissector hashes a forwarded packet's 5-tuple. The
// kernel's dissector keys siphash with a boot-time secret; jhash keyed by a
// per-qdisc seed drawn from the run's random streams spreads flows as
// evenly and keeps runs reproducible. No sender sets a hash: a Linux host's
// own packets carry the socket's random sk_txhash, drawn again at each RTO
// (sk_rethink_txhash), so on a host's fq_codel a flow that times out moves
// to another bucket, which here it does not (README, Link and queue models).
func flowHash(p *packet.Packet, seed uint32) uint32 {
	if p.Hash != 0 {
		return p.Hash
	}
	return jhash3Words(uint32(p.Src), uint32(p.Dst), uint32(p.Flow), seed)
}

// reciprocalScale follows reciprocal_scale: val scaled into [0, n).
func reciprocalScale(val, n uint32) uint32 { return uint32(uint64(val) * uint64(n) >> 32) }
