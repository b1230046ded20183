package topo

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/rng"
)

// multipath is a router's choice among equal-cost next hops.
type multipath struct {
	mode config.Routing
	sets [][]*link.Dir // equal-cost next hops by destination; nil: one
	key  uint64        // ECMP hash key, from the stream "node/<id>/ecmp"
	rng  *rand.Rand    // spray: the stream "node/<id>/spray"
}

// setMultipath makes router n spread traffic over sets by mode.
func (n *Node) setMultipath(mode config.Routing, sets [][]*link.Dir, seed uint64) {
	m := &multipath{mode: mode, sets: sets}
	switch mode {
	case config.RouteECMP:
		m.key = rng.Stream(seed, "node/"+n.Name+"/ecmp").Uint64()
	case config.RouteSpray:
		m.rng = rng.Stream(seed, "node/"+n.Name+"/spray")
	}
	n.multi = m
}

// pick returns the next hop of packet p among its destination's
// equal-cost next hops, or nil if there is only one. ECMP hashes the
// flow's 5-tuple — here the source and destination nodes and the flow,
// which stands for the protocol and ports — with the router's key, so a
// flow keeps one path (and its ACKs, whose tuple is reversed, one path
// back); spray draws a port per packet, as packet-spraying fabrics do,
// which reorders packets when the paths' queues differ.
func (m *multipath) pick(p *packet.Packet) *link.Dir {
	set := m.sets[p.Dst]
	if set == nil {
		return nil
	}
	if m.mode == config.RouteSpray {
		return set[m.rng.IntN(len(set))]
	}
	h := mix64(m.key ^ uint64(uint32(p.Src)) ^ uint64(uint32(p.Dst))<<32)
	h = mix64(h ^ uint64(uint32(p.Flow)))
	return set[h%uint64(len(set))]
}

// mix64 is splitmix64's finaliser: every input bit affects every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
