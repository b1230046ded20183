package topo

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
)

// Node is an endpoint or a router. It forwards packets not addressed to it
// along its next-hop table and hands the others to the flow end it hosts.
// Every step is a slice index: nothing a packet does here grows with the
// number of nodes, links or flows.
type Node struct {
	Name  string
	Index int32
	Kind  config.NodeKind

	pool  *packet.Pool
	only  *link.Dir   // a node with one link sends everything on it
	next  []*link.Dir // else: next hop by destination node index
	multi *multipath  // a router spreading over equal-cost next hops (router.go)
	sw    *learning   // a switch's learned ports (switch.go)
	ends  *flowEnds   // the network's flow ends, by flow index
	net   *Network
}

// Receive takes a packet arriving from a link.
func (n *Node) Receive(id packet.ID) {
	if n.net.flood != nil && !n.acceptFlooded(id) {
		n.pool.Free(id) // a switch's flooded copy of a frame for another node
		return
	}
	p := n.pool.Get(id)
	if p.Dst == n.Index {
		if r := n.ends.at(p.Flow, n.Index); r != nil {
			r.Receive(id)
			return
		}
		panic(fmt.Sprintf("topo: packet for flow %d at node %s, which hosts no end of it", p.Flow, n.Name))
	}
	if n.Kind == config.Endpoint {
		// A host does not forward: this is a switch's flooded copy of a
		// frame for another host, which its interface ignores.
		n.pool.Free(id)
		return
	}
	// Forwarding clears the sender's departure time (skb->tstamp: ip_forward,
	// br_forward_finish), so an fq past the first hop does not hold or
	// re-sort packets by it. (Tested first: an unpaced packet's line stays
	// clean.)
	if p.TxTime != 0 {
		p.TxTime = 0
	}
	n.Send(id)
}

// Send forwards a packet towards its destination (a switch floods it or
// sends it out of the port it learned).
func (n *Node) Send(id packet.ID) {
	if n.sw != nil {
		n.switchReceive(id, -1)
		return
	}
	if n.multi != nil {
		if d := n.multi.pick(n.pool.Get(id)); d != nil {
			d.Send(id)
			return
		}
	}
	n.hop(n.pool.Get(id).Dst).Send(id)
}

// hop is the direction towards node dst; nil if there is no route.
func (n *Node) hop(dst int32) *link.Dir {
	if n.only != nil {
		if dst == n.Index {
			return nil
		}
		return n.only
	}
	if int(dst) < len(n.next) {
		return n.next[dst]
	}
	return nil
}

// Attach makes r receive the packets of flow addressed to this node.
func (n *Node) Attach(flow int32, r link.Receiver) { n.ends.attach(flow, n.Index, r) }

// flowEnds holds the receiving end of each flow at each of its two nodes,
// indexed by flow: one table for the network, so a node's memory does not
// grow with the flows that do not touch it.
type flowEnds []flowEnd

type flowEnd struct {
	node [2]int32
	recv [2]link.Receiver
}

func (e *flowEnds) attach(flow, node int32, r link.Receiver) {
	for int(flow) >= len(*e) {
		*e = append(*e, flowEnd{node: [2]int32{-1, -1}})
	}
	fe := &(*e)[flow]
	for k := range fe.node {
		if fe.node[k] == node || fe.node[k] < 0 {
			fe.node[k], fe.recv[k] = node, r
			return
		}
	}
	panic(fmt.Sprintf("topo: flow %d attached at a third node %d", flow, node))
}

func (e *flowEnds) at(flow, node int32) link.Receiver {
	if int(flow) >= len(*e) {
		return nil
	}
	fe := &(*e)[flow]
	switch node {
	case fe.node[0]:
		return fe.recv[0]
	case fe.node[1]:
		return fe.recv[1]
	}
	return nil
}
