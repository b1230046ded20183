package topo

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
)

// A switch forwards frames at layer 2: it learns from each frame's source
// the port that node is reached through, forwards a frame for a learned
// destination out of that port alone, and floods one for an unknown
// destination out of every other port. Each port's egress is its link
// direction, with that direction's qdisc and buffer limit.
//
// Nodes here have no MAC addresses, so a flooded copy carries its layer-2
// destination — the node the switch's route table names as the next hop
// towards the packet's destination — and every other node that is not a
// switch discards it, as an interface discards frames for another MAC.
// Switches do not run a spanning tree: Build rejects a loop of switches.

// learning is a switch's forwarding state.
type learning struct {
	ports   []*link.Dir // egress by port
	learned []int32     // port+1 by node index; 0: not learned
	nw      *Network

	Flooded   uint64 // frames flooded (each counted once)
	Forwarded uint64 // frames sent out of a learned port
}

// switchPort is what a link direction into a switch delivers to.
type switchPort struct {
	n    *Node
	port int32
}

func (sp switchPort) Receive(id packet.ID) { sp.n.switchReceive(id, sp.port) }

// SwitchStats reports a switch's flooded and forwarded frames.
func (n *Node) SwitchStats() (flooded, forwarded uint64) {
	if n.sw == nil {
		return 0, 0
	}
	return n.sw.Flooded, n.sw.Forwarded
}

// switchReceive learns the frame's source port and forwards or floods it.
func (n *Node) switchReceive(id packet.ID, in int32) {
	sw := n.sw
	p := n.pool.Get(id)
	sw.learned[p.Src] = in + 1
	if out := sw.learned[p.Dst] - 1; out >= 0 {
		if out == in {
			sw.nw.unmark(id)
			n.pool.Free(id) // filtered: the destination is back where it came from
			return
		}
		sw.Forwarded++
		sw.ports[out].Send(id)
		return
	}
	sw.Flooded++
	l2 := sw.nw.marked(id)
	if l2 < 0 {
		d := n.hop(p.Dst)
		if d == nil {
			n.pool.Free(id)
			return
		}
		l2 = sw.nw.far[d]
	}
	last := int32(-1)
	for k := range sw.ports {
		if int32(k) == in {
			continue
		}
		if last >= 0 {
			c := n.pool.Clone(id)
			sw.nw.mark(c, l2)
			sw.ports[last].Send(c)
		}
		last = int32(k)
	}
	if last < 0 {
		sw.nw.unmark(id)
		n.pool.Free(id)
		return
	}
	sw.nw.mark(id, l2)
	sw.ports[last].Send(id)
}

// floodMark is the layer-2 destination of a flooded copy, with the
// packet's identity: a copy dropped on the way leaves its mark behind, and
// the identity tells that mark from the packet that next takes its ID.
type floodMark struct {
	l2     int32 // 1 + node index; 0: none
	flow   int32
	seq    uint64
	ack    uint64
	sentAt int64
}

func markOf(p *packet.Packet, l2 int32) floodMark {
	return floodMark{l2: l2 + 1, flow: p.Flow, seq: p.Seq, ack: p.Ack, sentAt: int64(p.SentAt)}
}

// mark records that packet id is a flooded copy for node l2.
func (nw *Network) mark(id packet.ID, l2 int32) {
	for int(id) >= len(nw.flood) {
		nw.flood = append(nw.flood, floodMark{})
	}
	nw.flood[id] = markOf(nw.pool.Get(id), l2)
}

// marked returns the layer-2 destination of a flooded copy, or -1.
func (nw *Network) marked(id packet.ID) int32 {
	if int(id) < len(nw.flood) && nw.flood[id].l2 != 0 {
		m := nw.flood[id]
		if m == markOf(nw.pool.Get(id), m.l2-1) {
			return m.l2 - 1
		}
		nw.flood[id] = floodMark{} // stale: left by a dropped copy
	}
	return -1
}

func (nw *Network) unmark(id packet.ID) {
	if int(id) < len(nw.flood) {
		nw.flood[id] = floodMark{}
	}
}

// acceptFlooded reports whether node n takes packet id: anything not
// flooded, or a flooded copy meant for it (whose mark it clears).
func (n *Node) acceptFlooded(id packet.ID) bool {
	nw := n.net
	l2 := nw.marked(id)
	if l2 < 0 {
		return true
	}
	nw.flood[id] = floodMark{}
	return l2 == n.Index
}

// buildSwitches gives each switch its ports and checks that no loop of
// switch-to-switch links exists (flooding round one would never end).
func (nw *Network) buildSwitches(scn *config.Scenario) error {
	parent := make([]int32, len(nw.Nodes))
	for i := range parent {
		parent[i] = int32(i)
	}
	root := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for li, l := range scn.Links {
		a, b := nw.byID[l.A], nw.byID[l.B]
		for k, end := range [2]int32{a, b} {
			n := nw.Nodes[end]
			if n.Kind != config.Switch {
				continue
			}
			if n.sw == nil {
				n.sw = &learning{learned: make([]int32, len(nw.Nodes)), nw: nw}
			}
			port := int32(len(n.sw.ports))
			out, in := nw.Dirs[2*li+k], nw.Dirs[2*li+1-k] // k = 0: a is the switch, ab leaves it
			n.sw.ports = append(n.sw.ports, out)
			in.Connect(switchPort{n, port})
		}
		if nw.Nodes[a].Kind == config.Switch && nw.Nodes[b].Kind == config.Switch {
			ra, rb := root(a), root(b)
			if ra == rb {
				return fmt.Errorf("topo: links[%s]: closes a loop of switches; switches run no spanning tree", l.ID)
			}
			parent[ra] = rb
		}
	}
	return nil
}
