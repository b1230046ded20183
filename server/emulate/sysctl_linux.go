//go:build linux

package emulate

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/tcp"
)

// nsSysctl is one sysctl a namespace gets, the flows' tcp options that set
// it ("" for the ones every namespace gets alike), and at which of a flow's
// ends it matters.
type nsSysctl struct {
	key, value, field string
	at                end
}

// end is where a sysctl matters: at a flow's sender, its receiver, or both
// (what the handshake negotiates).
type end uint8

const (
	atBoth end = iota
	atSender
	atReceiver
)

// nsSysctls are the sysctls a namespace gets for a flow with TCP options o
// (nodeSysctls merges them over the flows with an end there).
func nsSysctls(o config.TCPOptions) []nsSysctl {
	b := func(on bool, yes, no string) string {
		if on {
			return yes
		}
		return no
	}
	wmax := int64(tcp.SndBufMax(o)) // "unlimited": as far as tcp_wmem goes in practice
	// tcp_ecn 2 accepts ECN from a peer that asks; 1 also asks, which
	// only a sender does.
	return []nsSysctl{
		{"net.ipv6.conf.all.disable_ipv6", "1", "", atBoth},
		{"net.ipv6.conf.default.disable_ipv6", "1", "", atBoth},
		{"net.ipv4.tcp_window_scaling", "1", "", atBoth},
		// The receiver's offset is the one its peer's CC can read (rcv_tsval).
		{"net.ipv4.tcp_timestamps", strconv.Itoa(o.Timestamps), "timestamps", atReceiver},
		{"net.ipv4.tcp_no_metrics_save", "1", "", atBoth},
		{"net.ipv4.tcp_moderate_rcvbuf", "1", "", atBoth},
		{"net.ipv4.tcp_sack", b(o.SACK, "1", "0"), "sack", atBoth},
		{"net.ipv4.tcp_dsack", b(o.SACK, "1", "0"), "sack", atBoth},
		{"net.ipv4.tcp_recovery", b(o.RACK, "1", "0"), "rack", atSender},
		{"net.ipv4.tcp_early_retrans", b(o.TLP, "3", "0"), "tlp", atSender},
		{"net.ipv4.tcp_frto", b(o.FRTO, "2", "0"), "frto", atSender},
		{"net.ipv4.tcp_ecn", b(o.ECN, "1", "2"), "ecn", atSender},
		{"net.ipv4.tcp_wmem", fmt.Sprintf("4096 16384 %d", wmax), "sndbuf", atSender},
		{"net.ipv4.tcp_rmem", fmt.Sprintf("4096 %d %d", o.RcvBufInit, o.RcvBufMax), "rcvbuf_init/rcvbuf_max", atReceiver},
	}
}

// nodeSysctls resolves each endpoint's sysctls (by node id) from the
// flows with an end there. A sysctl takes the value of the flows it
// matters to at that end (a sender's RACK, TLP, F-RTO, ECN and send
// buffer, a receiver's receive buffer, both's SACK), the default where
// none has an end there it matters to. It names, by option, each flow that
// differs from the first one at a node where both set a sysctl.
func nodeSysctls(flows []config.Flow) (map[string][]nsSysctl, []string) {
	def := nsSysctls(config.DefaultTCPOptions())
	vals := map[string][]nsSysctl{}
	from := map[string][]*config.Flow{} // by node: the flow that set each sysctl
	sends := map[*config.Flow]string{}  // the flow's sending node
	var errs []string
	said := map[string]bool{}
	for i := range flows {
		f := &flows[i]
		if f.CC == config.Ping {
			continue // no socket: the relay runs it
		}
		sends[f] = f.Src
		mine := nsSysctls(f.TCP)
		for _, e := range []struct {
			node string
			at   end
		}{{f.Src, atSender}, {f.Dst, atReceiver}} {
			if vals[e.node] == nil {
				vals[e.node], from[e.node] = slices.Clone(def), make([]*config.Flow, len(def))
			}
			for k, m := range mine {
				if m.at != atBoth && m.at != e.at {
					continue
				}
				prev := from[e.node][k]
				if prev == nil {
					vals[e.node][k], from[e.node][k] = m, f
					continue
				}
				key := f.ID + "\x00" + m.field + "\x00" + e.node
				if have := vals[e.node][k].value; have != m.value && !said[key] {
					said[key] = true
					roles := map[bool]string{true: "sends", false: "receives"}
					errs = append(errs, fmt.Sprintf("flows[%s].tcp.%s: differs from flows[%s]'s at node %s, where %s %s and %s %s (%s %q against %q); a namespace has one set of sysctls: give such flows hosts of their own",
						f.ID, m.field, prev.ID, e.node, f.ID, roles[e.at == atSender], prev.ID, roles[sends[prev] == e.node], m.key, m.value, have))
				}
			}
		}
	}
	return vals, errs
}
