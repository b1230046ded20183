package engine

import (
	"fmt"
	"slices"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/topo"
)

// A TCP flow whose route crosses a proxy node is split there into two
// flows, each with its own endpoints, CC and RTT: leg 0 "<id>.0" from the
// source to the proxy, leg 1 "<id>.1" from the proxy to the destination.
// Leg 0 keeps the flow's index; leg 1 takes one after all the scenario's
// flows. The proxy's application moves bytes from leg 0's receiver to leg
// 1's sender through a relay buffer of the node's buffer size: it reads
// from leg 0 only while the bytes it has read and leg 1 has not yet had
// acknowledged fit the buffer, so a slow leg 1 fills leg 0's receive queue
// and closes its window (tcp/relay.go). Both legs start when the flow does
// (the proxy opens leg 1 on the client's SYN). A split flow is built at the
// start of the run even in a group.

// proxyRelay joins the two legs of a split flow.
type proxyRelay struct {
	legs [2]*tcpFlow
	feed tcp.Relay
	buf  uint64 // relay buffer, bytes
	read uint64 // bytes read from leg 0
	// group: the split flow is a group's, so each leg reports its FCT
	// (leg 1's, whose receiver is the destination, is the flow's).
	group bool
}

// relayFeed is the relay a leg-1 sender writes from (nil otherwise).
func (t *tcpFlow) relayFeed() *tcp.Relay {
	if t.relay == nil || t.leg != 1 {
		return nil
	}
	return &t.relay.feed
}

// pump reads from leg 0 what the relay buffer has room for and writes it
// to leg 1.
func (x *proxyRelay) pump() {
	l0, l1 := x.legs[0], x.legs[1]
	if l0.rcv == nil || l1.snd == nil {
		return
	}
	held := x.read - uint64(l1.snd.Stats.BytesAcked)
	if held >= x.buf {
		return
	}
	n := l0.rcv.Read(x.buf - held)
	if n == 0 {
		return
	}
	x.read += n
	l0.noteDelivered()
	l1.snd.Feed(n)
}

// relayReady is what a leg-0 receiver calls when it holds data to read:
// the relay pumps (nil for other receivers, which read at once).
func (t *tcpFlow) relayReady() func() {
	if t.relay == nil || t.leg != 0 {
		return nil
	}
	return t.relay.pump
}

// relaySender is the proxy's hook for leg 1's ACKs: acknowledged bytes
// leave the relay buffer, so it may read more.
type relaySender struct{ t *tcpFlow }

func (h relaySender) Receive(id packet.ID) {
	h.t.snd.Receive(id)
	h.t.relay.pump()
}

// splitFlow builds the two legs of TCP flow f, which crosses proxy px.
// Leg 0 takes index idx; leg 1 takes next, the caller's next free index.
func (r *Run) splitFlow(idx, next int32, f config.Flow, px *topo.Node) (leg0, leg1 *tcpFlow, err error) {
	x := &proxyRelay{buf: uint64(r.Scenario.Nodes[px.Index].Buffer), group: f.Group != ""}
	legs := LegFlows(f, px)
	for i := range legs {
		k := idx
		if i == 1 {
			k = next
		}
		x.legs[i] = &tcpFlow{cfg: &legs[i], idx: k, run: r, relay: x, leg: i}
	}
	for _, t := range x.legs {
		if err := t.build(); err != nil {
			return nil, nil, err
		}
	}
	return x.legs[0], x.legs[1], nil
}

// LegFlows are the two flows proxy px splits TCP flow f into: leg 0
// "<id>.0" from f's source to the proxy, with f's application, and leg 1
// "<id>.1" from the proxy to f's destination, written by the proxy's relay,
// each with its leg's CC and TCP options (f.Legs) or f's own. The kernel
// emulator builds the same legs.
func LegFlows(f config.Flow, px *topo.Node) [2]config.Flow {
	var legs [2]config.Flow
	for i := range legs {
		c := f
		c.ID = f.ID + [2]string{".0", ".1"}[i]
		p := *f.Params // the leg's own settings: f's may be its group's
		c.Params = &p
		if f.Legs != nil {
			c.CC, c.CCParams, c.TCP = f.Legs[i].CC, f.Legs[i].CCParams, f.Legs[i].TCP
		}
		if i == 0 {
			// The receive path's models are the destination's (its NIC,
			// its uplink's grants): leg 1's, not the proxy's.
			c.Dst, p.Rcv = px.Name, config.RcvPath{}
		} else {
			c.Src, c.App = px.Name, config.AppPattern{Kind: config.Greedy}
		}
		c.Group = "" // built now, kept to the end
		legs[i] = c
	}
	return legs
}

// SplitAt is the proxy that splits flow f in network nw, if its route
// crosses one and it is a TCP flow. A flow is split at one proxy at most: a
// route that crosses two is an error.
func SplitAt(nw *topo.Network, f config.Flow) (*topo.Node, error) {
	if f.CC == config.Pump || f.CC == config.Ping {
		return nil, nil
	}
	dst := nw.Node(f.Dst).Index
	px := nw.ProxyOn(nw.Node(f.Src).Index, dst)
	if px == nil {
		return nil, nil
	}
	if px2 := nw.ProxyOn(px.Index, dst); px2 != nil {
		return nil, fmt.Errorf("engine: flows[%s]: its path crosses two split-TCP proxies, %s and %s; a flow is split at one proxy at most (make one of them a router)",
			f.ID, px.Name, px2.Name)
	}
	return px, nil
}

// unsplitLegs refuses legs given to a flow, or to every flow of a group,
// that no proxy splits; split holds the settings of the flows split.
func unsplitLegs(flows []config.Flow, split map[*config.Params]bool) error {
	for _, f := range flows {
		if f.Legs != nil && !split[f.Params] {
			id := f.ID
			if f.Group != "" {
				id = f.Group
			}
			return fmt.Errorf("engine: flows[%s].legs: no split-TCP proxy is on the path from %s to %s, so the flow has no legs", id, f.Src, f.Dst)
		}
	}
	return nil
}

// endToEnd is flows, a run's summaries by flow index, as its scenario's
// flows see them end to end (EndToEnd).
func (r *Run) endToEnd(flows []FlowSummary) []FlowSummary {
	leg1 := map[int]int{}
	for i := range r.Scenario.Flows {
		if t, ok := r.Flows[i].(*tcpFlow); ok && t.relay != nil {
			leg1[i] = int(t.relay.legs[1].idx)
		}
	}
	return EndToEnd(flows, leg1)
}

// EndToEnd is flows, summaries by flow index, as the scenario's flows see
// them end to end: the row of split flow i (its leg 0, which ends at the
// proxy) becomes that of its leg 1, leg1[i], which ends at the flow's
// destination and holds its FCT and goodput. Whether the flow started, and
// what it sent, are leg 0's to say.
func EndToEnd(flows []FlowSummary, leg1 map[int]int) []FlowSummary {
	if len(leg1) == 0 {
		return flows
	}
	out := slices.Clone(flows)
	for i, j := range leg1 {
		out[i] = flows[j]
		out[i].BytesSent = flows[i].BytesSent
	}
	return out
}
