// Package rcvpath models a flow's receive path beyond the TCP receiver: how
// data segments reach the receiving stack and how its ACKs leave it, as the
// WarpSIM paper's section 5.4 fits them from live ACK streams:
//
//   - Hold: every data segment reaches the stack a fixed interval late
//     (interrupt coalescing on a wired client).
//   - AckHold: once the flow's arrival rate saturates the path, each pure
//     ACK is held for a delay drawn from measured quantiles, and held ACKs
//     leave in order, so long holds reach the sender as clumps.
//   - Grant: a handset or satellite terminal sends only at the uplink
//     scheduler's grants; each releases up to a number of ACKs, some are
//     lost, the CPE may filter redundant ACKs, grants fall on slot times.
//
// Each model is a small type between the network node and the TCP endpoint
// with its own named random stream; none reads TCP state beyond a packet's
// header fields. A model that holds packets keeps them in a FIFO and keeps
// one timer for its head, so it adds no event queue entries per packet.
package rcvpath

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Sink takes a packet on its way: the node's Send for ACKs, the flow's
// receiver for data.
type Sink interface{ Send(id packet.ID) }

// Quantiles is a distribution given by its quantiles at evenly spaced
// probabilities 0, 1/(n-1), …, 1; a draw interpolates linearly between
// neighbours (the inverse of a piecewise-linear CDF).
type Quantiles []sim.Duration

// Draw returns the value at probability u in [0, 1).
func (q Quantiles) Draw(u float64) sim.Duration {
	pos := u * float64(len(q)-1)
	i := int(pos)
	if i >= len(q)-1 {
		return q[len(q)-1]
	}
	frac := pos - float64(i)
	// One product, converted at once: nothing here can fuse into an FMA.
	return q[i] + sim.Duration(float64(q[i+1]-q[i])*frac)
}

// held is a packet waiting in a model, with the time it leaves.
type held struct {
	id packet.ID
	at sim.Time
}

// fifo is a growable ring of held packets.
type fifo struct {
	buf        []held
	head, size int
}

func (f *fifo) len() int { return f.size }

func (f *fifo) push(h held) {
	if f.size == len(f.buf) {
		grown := make([]held, max(16, 2*len(f.buf)))
		for i := range f.size {
			grown[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = grown, 0
	}
	f.buf[(f.head+f.size)%len(f.buf)] = h
	f.size++
}

func (f *fifo) front() held { return f.buf[f.head] }

func (f *fifo) pop() held {
	h := f.buf[f.head]
	f.head = (f.head + 1) % len(f.buf)
	f.size--
	return h
}

// isPureAck reports whether p carries no payload and no SYN or FIN: the
// ACKs that the hold and the grant's filter act on.
func isPureAck(p *packet.Packet) bool {
	return p.Len == 0 && p.Flags&(packet.SYN|packet.FIN) == 0
}

// Stats count what the receive-path models did to a flow's packets.
type Stats struct {
	AcksHeld     uint64 `json:"acks_held" msgpack:"acks_held"`         // pure ACKs delayed by AckHold
	AcksFiltered uint64 `json:"acks_filtered" msgpack:"acks_filtered"` // ACKs the grant's CPE filter dropped as redundant
	AcksLost     uint64 `json:"acks_lost" msgpack:"acks_lost"`         // ACKs lost on the grant's uplink
	Grants       uint64 `json:"grants" msgpack:"grants"`               // grants that released at least one ACK
}

// Discard hands every packet waiting in s, and in the models behind it on
// the way to their sink, to free, and empties them: a flow released when
// done (a group's) stops its models' timers, so what they hold would
// otherwise never leave nor be freed. s may be any Sink; the walk stops at
// the first that is not one of this package's models.
func Discard(s Sink, free func(packet.ID)) {
	for {
		switch m := s.(type) {
		case *Hold:
			m.q.drain(free)
			s = m.to
		case *AckHold:
			m.q.drain(free)
			s = m.to
		case *Grant:
			for _, w := range m.q {
				free(w.id)
			}
			m.q = m.q[:0]
			s = m.to
		default:
			return
		}
	}
}

// drain hands every entry's packet to free, oldest first, and empties f.
func (f *fifo) drain(free func(packet.ID)) {
	for f.size > 0 {
		free(f.pop().id)
	}
}
