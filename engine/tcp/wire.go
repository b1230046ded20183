// engine/tcp/wire.go
package tcp

import (
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Header sizes on the wire: 20 B IPv4 + 20 B TCP + 12 B timestamp option
// (kernel default), so a 1448-byte payload makes a 1500-byte packet.
const (
	HeaderBytes  = 52
	SackOptBytes = 8 // per SACK block, plus 2 for the option header (3 blocks fit beside timestamps)
)

// EchoMode is how the receiver feeds CE marks back.
type EchoMode uint8

const (
	EchoClassic EchoMode = iota // RFC 3168: ECE on every ACK from CE until a CWR arrives
	EchoDCTCP                   // per-packet echo: dctcp_ece_ack_update state machine
	EchoAccECN                  // RFC 9768 AccECN: ACE counter + byte counters (packet.AccECN)
)

// ReceiverConfig configures the receiving end of a flow.
type ReceiverConfig struct {
	Flow int32             // flow index (packet.Packet.Flow)
	Node int32             // this (receiving) node's index; ACKs go to Peer
	Peer int32             // the sender's node index
	Opts config.TCPOptions // SACK, DelayedAck, GRO, ECN, RcvBufInit, RcvBufMax, GROInterval, MSS
	Echo EchoMode
	// Clock is the host's kernel clock at time 0 (config.KernelClock).
	Clock sim.Duration
	// DataReady, if set, makes the application read only through Read,
	// as a relay does that reads no faster than it can pass bytes on
	// (relay.go), and is called, as sk_data_ready, once the receiver is
	// done with a packet or a timer that left unread in-order data: after
	// a GRO batch flushed by its timer too, so no data waits unseen.
	DataReady func()
}

// Sender is the node-side hook to put a packet on the network (topo.Node implements it).
type Sender interface{ Send(id packet.ID) }
