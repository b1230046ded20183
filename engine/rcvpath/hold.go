package rcvpath

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Hold delays every packet it is sent by a fixed interval, keeping order:
// the receive hold between a flow's destination node and its receiver.
type Hold struct {
	s     *sim.Sim
	to    Sink
	delay sim.Duration
	q     fifo
	timer *sim.Timer
}

// NewHold returns a hold of delay in front of to.
func NewHold(s *sim.Sim, name string, delay sim.Duration, to Sink) *Hold {
	h := &Hold{s: s, to: to, delay: delay}
	h.timer = s.NewTimer(s.Register(h, name), 0)
	return h
}

// Send queues id until now + delay.
func (h *Hold) Send(id packet.ID) {
	at := h.s.Now().Add(h.delay)
	h.q.push(held{id: id, at: at})
	if h.q.len() == 1 {
		h.timer.Arm(at)
	}
}

// Receive is Send, so that a Hold stands where a node delivers packets.
func (h *Hold) Receive(id packet.ID) { h.Send(id) }

// Handle releases every packet that is due, then re-arms for the next.
func (h *Hold) Handle(sim.Event) {
	release(h.s, &h.q, h.timer, h.to.Send)
}

// release passes on the packets of q that are due by now, in order, and
// arms timer for the next one.
func release(s *sim.Sim, q *fifo, timer *sim.Timer, send func(packet.ID)) {
	now := s.Now()
	for q.len() > 0 && q.front().at <= now {
		send(q.pop().id)
	}
	if q.len() > 0 {
		timer.Arm(q.front().at)
	}
}
