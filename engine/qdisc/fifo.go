package qdisc

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// FIFO is a tail-drop queue bounded in bytes or packets (bfifo / pfifo).
type FIFO struct {
	env        Env
	q          ring
	limitBytes units.Bytes // 0: no byte limit
	limitPkts  int         // 0: no packet limit
}

// NewFIFO returns a tail-drop FIFO. A zero limit is no limit of that kind.
func NewFIFO(env Env, limitBytes units.Bytes, limitPkts int) *FIFO {
	return &FIFO{env: env, limitBytes: limitBytes, limitPkts: limitPkts}
}

// Enqueue follows bfifo_enqueue / pfifo_enqueue in sch_fifo.c: the packet is
// accepted only if the queue stays within its limit with it.
func (f *FIFO) Enqueue(id packet.ID, now sim.Time) bool {
	p := f.env.Pool.Get(id)
	if f.limitBytes > 0 && f.q.bytes+p.Size > f.limitBytes || f.limitPkts > 0 && f.q.n >= f.limitPkts {
		return false
	}
	p.EnqAt = now
	f.q.push(f.env.Pool, id)
	return true
}

// Dequeue returns the head packet.
func (f *FIFO) Dequeue(now sim.Time) (packet.ID, bool) { return f.q.pop(f.env.Pool) }

// Backlog is the queued bytes and packets.
func (f *FIFO) Backlog() (units.Bytes, int) { return f.q.bytes, f.q.n }

// SetLimit changes the limits; packets already queued stay.
func (f *FIFO) SetLimit(bytes units.Bytes, pkts int) error {
	if bytes < 0 || pkts < 0 || bytes == 0 && pkts == 0 {
		return errLimit
	}
	f.limitBytes, f.limitPkts = bytes, pkts
	return nil
}
