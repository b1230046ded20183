package topo

import "github.com/ccscope/ccscope/engine/config"

// A proxy node forwards like a router, and terminates the TCP flows routed
// through it: the engine (engine/proxy.go) splits each such flow into two
// legs, from the source to the proxy and from the proxy to the destination,
// joined by a bounded relay buffer.

// ProxyOn returns the first proxy on the path from node src to node dst,
// or nil if the path crosses none (proxy.go in package engine splits the
// flows that cross one).
func (nw *Network) ProxyOn(src, dst int32) *Node {
	for _, d := range nw.Path(src, dst) {
		if n := nw.Nodes[nw.far[d]]; n.Index != dst && n.Kind == config.Proxy {
			return n
		}
	}
	return nil
}
