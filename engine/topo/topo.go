// Package topo builds a scenario's graph: nodes, link directions with their
// qdiscs and impairments, and shortest-path routes.
package topo

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/units"
)

// Network is the built graph.
type Network struct {
	Nodes []*Node
	Dirs  []*link.Dir // in scenario order: link 0 ab, link 0 ba, link 1 ab, ...
	byID  map[string]int32
	links map[string][2]*link.Dir
	ends  flowEnds
	far   map[*link.Dir]int32 // the node a direction delivers to
	flood []floodMark         // by packet ID: a switch's flooded copies (switch.go)
	pool  *packet.Pool
	// rtt is the base RTT of the first flow (in scenario order) whose path
	// crosses a direction, for BDP queue limits.
	rtt map[*link.Dir]sim.Duration
	// full is, per direction, the largest full-size data packet of the
	// flows whose path crosses it, checked against byte limits.
	full map[*link.Dir]fullPacket
}

// fullPacket is a flow's full-size data packet: its wire bytes and the flow.
type fullPacket struct {
	size units.Bytes
	flow string
}

// Node returns the node named id.
func (nw *Network) Node(id string) *Node { return nw.Nodes[nw.byID[id]] }

// Dir returns the direction of link id ("ab" or "ba").
func (nw *Network) Dir(linkID, dir string) (*link.Dir, bool) {
	l, ok := nw.links[linkID]
	if !ok {
		return nil, false
	}
	switch dir {
	case "ab":
		return l[0], true
	case "ba":
		return l[1], true
	}
	return nil, false
}

// Path is the sequence of directions a packet from node src to node dst
// takes, hop by hop through the next-hop tables; nil if there is no route.
func (nw *Network) Path(src, dst int32) []*link.Dir {
	var path []*link.Dir
	for at := src; at != dst; {
		d := nw.Nodes[at].hop(dst)
		if d == nil || len(path) > len(nw.Dirs) {
			return nil
		}
		path = append(path, d)
		at = nw.far[d]
	}
	return path
}

// BaseRTT is the round-trip propagation delay between two nodes.
func (nw *Network) BaseRTT(src, dst int32) sim.Duration {
	var d sim.Duration
	for _, x := range nw.Path(src, dst) {
		d += x.Delay()
	}
	for _, x := range nw.Path(dst, src) {
		d += x.Delay()
	}
	return d
}

// Bottleneck is the lowest rate on the path from src to dst.
func (nw *Network) Bottleneck(src, dst int32) units.BitRate {
	var r units.BitRate
	for _, x := range nw.Path(src, dst) {
		if r == 0 || x.Rate() < r {
			r = x.Rate()
		}
	}
	return r
}

// Build creates the network of scn in s. Randomness for a direction's models
// comes from streams named "link/<id>/<dir>/loss|jitter|capacity" and
// "link/<id>/<dir>/capacity/dips".
func Build(s *sim.Sim, pool *packet.Pool, scn *config.Scenario) (*Network, error) {
	nw := &Network{byID: map[string]int32{}, links: map[string][2]*link.Dir{}, far: map[*link.Dir]int32{}, pool: pool}
	for i, n := range scn.Nodes {
		nw.byID[n.ID] = int32(i)
		nw.Nodes = append(nw.Nodes, &Node{Name: n.ID, Index: int32(i), Kind: n.Kind, pool: pool, ends: &nw.ends, net: nw})
	}
	seed := scn.Runtime.Seed
	for _, l := range scn.Links {
		var pair [2]*link.Dir
		for k, dc := range []config.Direction{l.AB, l.BA} {
			dir := [2]string{"ab", "ba"}[k]
			name := l.ID + "/" + dir
			d := link.New(s, pool, link.Config{
				Name: name, Link: l.ID, AB: k == 0, Rate: dc.Rate, Delay: dc.Delay, Overhead: dc.Overhead,
				Loss: dc.Loss, Duplicate: dc.Duplicate, Jitter: dc.Jitter, Capacity: dc.Capacity, Trace: dc.Trace, Outages: dc.Outages,
				Streams: link.Streams{
					Loss:      rng.Stream(seed, "link/"+name+"/loss"),
					Duplicate: rng.Stream(seed, "link/"+name+"/duplicate"),
					Jitter:    rng.PCG(seed, "link/"+name+"/jitter"),
					Capacity:  rng.PCG(seed, "link/"+name+"/capacity"),
					Dips:      rng.PCG(seed, "link/"+name+"/capacity/dips"),
				},
			})
			pair[k] = d
			nw.Dirs = append(nw.Dirs, d)
		}
		a, b := nw.byID[l.A], nw.byID[l.B]
		pair[0].Connect(nw.Nodes[b])
		pair[1].Connect(nw.Nodes[a])
		nw.far[pair[0]], nw.far[pair[1]] = b, a
		nw.links[l.ID] = pair
	}
	nw.route(scn)
	if err := nw.buildSwitches(scn); err != nil {
		return nil, err
	}
	for _, n := range nw.Nodes {
		if n.sw != nil && nw.flood == nil {
			nw.flood = make([]floodMark, 0, 1024)
		}
	}
	nw.rtt = map[*link.Dir]sim.Duration{}
	nw.full = map[*link.Dir]fullPacket{}
	for _, f := range scn.Flows {
		src, dst := nw.byID[f.Src], nw.byID[f.Dst]
		var rtt sim.Duration = -1
		full := fullSize(f)
		for _, x := range nw.Path(src, dst) {
			if _, ok := nw.rtt[x]; !ok {
				if rtt < 0 {
					rtt = nw.BaseRTT(src, dst)
				}
				nw.rtt[x] = rtt
			}
			if full > nw.full[x].size {
				nw.full[x] = fullPacket{full, f.ID}
			}
		}
	}
	// Queues are built once routes are known, since a BDP limit needs the
	// base RTT of the path through the direction.
	for li, l := range scn.Links {
		for k, dc := range []config.Direction{l.AB, l.BA} {
			d := nw.Dirs[2*li+k]
			q, err := nw.newQdisc(d, dc.Qdisc, scn)
			if err != nil {
				return nil, fmt.Errorf("topo: links[%s].%s.qdisc: %w", l.ID, [2]string{"ab", "ba"}[k], err)
			}
			d.SetQdisc(q)
		}
	}
	return nw, nil
}

// CheckByteLimit refuses a FIFO byte limit on d below the largest full-size
// data packet of the flows whose path crosses it: a FIFO drops a packet
// larger than its limit even when empty, as bfifo does, so that flow could
// never deliver.
func (nw *Network) CheckByteLimit(d *link.Dir, limit units.Bytes) error {
	if f := nw.full[d]; limit > 0 && limit < f.size {
		return fmt.Errorf("less than one %d B packet of flow %s: a FIFO drops every packet larger than its limit, so that flow could never deliver", f.size, f.flow)
	}
	return nil
}

// fullSize is the wire size of f's full-size data packets: a pump's or a
// ping's packet_size, a TCP flow's MSS plus headers (the smaller leg's when
// a proxy splits it, as each leg crosses only part of the path).
func fullSize(f config.Flow) units.Bytes {
	switch {
	case f.Params == nil:
		return 0
	case f.CC == config.Pump || f.CC == config.Ping:
		return f.PacketSize
	case f.Legs != nil:
		return min(f.Legs[0].TCP.MSS, f.Legs[1].TCP.MSS) + tcp.HeaderBytes
	}
	return f.TCP.MSS + tcp.HeaderBytes
}

// bdp is the bandwidth-delay product of d: its rate times the base RTT of the
// first flow whose path crosses it, or of its own link's round trip if none.
func (nw *Network) bdp(d *link.Dir) units.Bytes {
	if rtt, ok := nw.rtt[d]; ok {
		return units.BytesIn(d.Rate(), rtt)
	}
	return units.BytesIn(d.Rate(), 2*d.Delay())
}

// codelParams are a CoDel or FQ-CoDel config's struct codel_params.
func codelParams(c config.Qdisc, limPkts int) qdisc.CoDelParams {
	return qdisc.CoDelParams{Target: c.Target, Interval: c.Interval, ECN: c.ECN, LimitPkts: limPkts, CEThreshold: c.CEThreshold}
}

// newQdisc builds a direction's queue. A discipline that draws random
// numbers (a hash perturbation, DualPI2's coin flips) gets the stream
// "link/<id>/<dir>/qdisc".
func (nw *Network) newQdisc(d *link.Dir, c config.Qdisc, scn *config.Scenario) (qdisc.Qdisc, error) {
	limBytes, limPkts := c.Limit.Bytes, int(c.Limit.Packets)
	if c.Limit.MilliBDPs > 0 {
		limBytes = nw.bdp(d) * units.Bytes(c.Limit.MilliBDPs) / 1000
		if limBytes == 0 {
			return nil, fmt.Errorf("limit: %s is 0 B here (the BDP is %d B), and a limit of 0 would mean none", c.Limit, nw.bdp(d))
		}
	}
	if err := nw.CheckByteLimit(d, limBytes); c.Kind == config.FIFO && err != nil {
		what := fmt.Sprintf("%d B", limBytes)
		if c.Limit.MilliBDPs > 0 {
			what = fmt.Sprintf("%s is %d B here (the BDP is %d B)", c.Limit, limBytes, nw.bdp(d))
		}
		return nil, fmt.Errorf("limit: %s, %w", what, err)
	}
	env := d.QdiscEnv()
	switch c.Kind {
	case config.FIFO:
		f := qdisc.NewFIFO(env, limBytes, limPkts)
		k := c.ECNThreshold
		if k.MilliBDPs > 0 {
			k.Bytes = nw.bdp(d) * units.Bytes(k.MilliBDPs) / 1000
			if k.Bytes == 0 {
				return nil, fmt.Errorf("ecn_threshold: %s is 0 B here (the BDP is %d B), and a threshold of 0 would mark nothing", k, nw.bdp(d))
			}
		}
		f.SetECNThreshold(k.Bytes, int(k.Packets))
		return f, nil
	case config.CoDel:
		if limBytes > 0 {
			return nil, fmt.Errorf("codel limits packets (sch->limit), not bytes")
		}
		return qdisc.NewCoDel(env, codelParams(c, limPkts)), nil
	case config.FQCoDel:
		if limBytes > 0 {
			return nil, fmt.Errorf("fq_codel limits packets (sch->limit), not bytes")
		}
		return qdisc.NewFQCoDel(env, qdisc.FQCoDelParams{
			CoDel: codelParams(c, limPkts), Flows: int(c.Flows), Quantum: c.Quantum,
			HashSeed: rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc").Uint32(),
		}), nil
	case config.DualPI2:
		if limBytes > 0 {
			return nil, fmt.Errorf("dualpi2 limits packets (sch->limit), not bytes")
		}
		return qdisc.NewDualPI2(env, rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc"), qdisc.DualPI2Params{
			LimitPkts: limPkts, Target: c.Target, TUpdate: c.TUpdate, StepThreshold: c.StepThreshold,
			Coupling: uint32(c.Coupling), CProtection: uint32(c.CProtection), CProtectionSet: true,
		}), nil
	case config.PIE:
		if limBytes > 0 {
			return nil, fmt.Errorf("pie limits packets (sch->limit), not bytes")
		}
		return qdisc.NewPIE(env, rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc"), qdisc.PIEParams{
			LimitPkts: limPkts, Target: c.Target, TUpdate: c.TUpdate,
			Alpha: uint32(c.Alpha), Beta: uint32(c.Beta), AlphaBetaSet: true,
			ECN: c.ECN, ByteMode: c.ByteMode, DQRate: c.DQRateEstimator,
		}), nil
	case config.FQPIE:
		if limBytes > 0 {
			return nil, fmt.Errorf("fq_pie limits packets (sch->limit), not bytes")
		}
		r := rng.Stream(scn.Runtime.Seed, "link/"+d.Name+"/qdisc")
		seed := r.Uint32() // the hash perturbation, then the drops' draws
		return qdisc.NewFQPIE(env, r, qdisc.FQPIEParams{
			PIE: qdisc.PIEParams{LimitPkts: limPkts, Target: c.Target, TUpdate: c.TUpdate,
				Alpha: uint32(c.Alpha), Beta: uint32(c.Beta), AlphaBetaSet: true,
				ECN: c.ECN, ByteMode: c.ByteMode, DQRate: c.DQRateEstimator},
			Flows: int(c.Flows), Quantum: c.Quantum, ECNProb: uint32(c.ECNProb), ECNProbSet: true, HashSeed: seed,
		}), nil
	case config.FQ:
		if limBytes > 0 {
			return nil, fmt.Errorf("fq limits packets (sch->limit), not bytes")
		}
		return qdisc.NewFQ(env, qdisc.FQParams{LimitPkts: limPkts, FlowLimit: int(c.FlowLimit),
			Quantum: c.Quantum, InitialQuantum: c.InitialQuantum, Horizon: c.Horizon}), nil
	}
	return nil, fmt.Errorf("unknown qdisc kind %d", c.Kind)
}
