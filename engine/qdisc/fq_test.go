package qdisc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// fq_fastpath_check refuses the fast path, with packets queued, while a
// throttled flow is already due (time_next_delayed_flow <= now): it keeps
// its turn. Flow A's packet waits for its departure time, 10 µs; flow B's
// 12 packets, due at once, are served and B goes inactive. At 20 µs, with
// A due but not yet dequeued, B's next packet arrives: A's goes first.
func TestFQFastpathYieldsToDueFlow(t *testing.T) {
	e := &testEnv{}
	q := NewFQ(e.env(), FQParams{})
	us := sim.Time(sim.Microsecond)
	pkt := func(flow int32, tx sim.Time) packet.ID {
		id := e.pkt(flow, packet.NotECT)
		e.pool.Get(id).TxTime = tx
		return id
	}
	a := pkt(0, 10*us)
	q.Enqueue(a, 0)
	for range 12 {
		q.Enqueue(pkt(1, 0), 0)
	}
	for i := range 12 {
		if _, ok := q.Dequeue(0); !ok {
			t.Fatalf("dequeue %d found nothing", i)
		}
	}
	fast := q.Stats.Fastpath
	b := pkt(1, 0)
	q.Enqueue(b, 20*us)
	if first, _ := q.Dequeue(20 * us); first != a || q.Stats.Fastpath != fast {
		t.Errorf("first out at 20 µs: A %v (fast path taken %v); want A, not B through the fast path", first == a, q.Stats.Fastpath != fast)
	}
}
