package qdisc

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// FIFO is a tail-drop queue bounded in bytes or packets (bfifo / pfifo),
// optionally with a step ECN marker.
type FIFO struct {
	env        Env
	q          ring
	limitBytes units.Bytes // 0: no byte limit
	limitPkts  int         // 0: no packet limit
	markBytes  units.Bytes // step-marking threshold K in bytes; 0: none
	markPkts   int         // step-marking threshold K in packets; 0: none

	Marks uint64 // packets CE-marked by the step marker
}

// NewFIFO returns a tail-drop FIFO. A zero limit is no limit of that kind.
func NewFIFO(env Env, limitBytes units.Bytes, limitPkts int) *FIFO {
	return &FIFO{env: env, limitBytes: limitBytes, limitPkts: limitPkts}
}

// SetECNThreshold turns on step marking at K = bytes or pkts (one of them
// non-zero; both zero turns it off). It is the marking DCTCP deployments
// configure as sch_red with min = max = K and probability 1 (RFC 8257
// §3.1: "mark ... if the queue occupancy is greater than K upon arrival"),
// except that a packet that is not ECN-capable is never dropped for it:
// like fq_codel's ce_threshold, the marker only marks, and the tail limit
// alone drops.
func (f *FIFO) SetECNThreshold(bytes units.Bytes, pkts int) {
	f.markBytes, f.markPkts = bytes, pkts
}

// Enqueue follows bfifo_enqueue / pfifo_enqueue in sch_fifo.c: the packet is
// accepted only if the queue stays within its limit with it. With a step
// threshold it then marks as red_enqueue does for a queue at or above
// max_th (RED_HARD_MARK): on the backlog found on arrival, before the packet
// joins it (red_calc_qavg with W = 1 is the instantaneous backlog).
func (f *FIFO) Enqueue(id packet.ID, now sim.Time) bool {
	size, ok := f.admit(id, now)
	if ok {
		f.q.pushSize(id, size)
	}
	return ok
}

// Pass is Enqueue and Dequeue at once, for a packet that finds the queue
// empty and the link idle: the same admission and marking, and the queue
// is left as it was.
func (f *FIFO) Pass(id packet.ID, now sim.Time) bool {
	_, ok := f.admit(id, now)
	return ok
}

// admit applies the limits and the step marker to a packet arriving at the
// current backlog and stamps its enqueue time; it returns the packet's size.
func (f *FIFO) admit(id packet.ID, now sim.Time) (units.Bytes, bool) {
	p := f.env.Pool.Get(id)
	if f.limitBytes > 0 && f.q.bytes+p.Size > f.limitBytes || f.limitPkts > 0 && f.q.n >= f.limitPkts {
		return 0, false
	}
	if f.markBytes > 0 && f.q.bytes >= f.markBytes || f.markPkts > 0 && f.q.n >= f.markPkts {
		if setCE(f.env, id, now) {
			f.Marks++
		}
	}
	p.EnqAt = now
	return p.Size, true
}

// Dequeue returns the head packet.
func (f *FIFO) Dequeue(now sim.Time) (packet.ID, bool) { return f.q.pop(f.env.Pool) }

// Backlog is the queued bytes and packets.
func (f *FIFO) Backlog() (units.Bytes, int) { return f.q.bytes, f.q.n }

// SetLimit changes the limits (0 is none of that kind, both 0 none at
// all); packets already queued stay.
func (f *FIFO) SetLimit(bytes units.Bytes, pkts int) error {
	if bytes < 0 || pkts < 0 {
		return errLimit
	}
	f.limitBytes, f.limitPkts = bytes, pkts
	return nil
}

// Limit is the byte and packet limits; 0 is none.
func (f *FIFO) Limit() (units.Bytes, int) { return f.limitBytes, f.limitPkts }
