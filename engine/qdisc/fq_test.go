package qdisc

import (
	"slices"
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

// A flow fresh from the slab has band 0 when fq_enqueue adds it to a new
// list (f->band is set to priority 0's band, 1, after fq_flow_add_tail), so
// its first packet waits in band 0 until the band round gets there: after
// band 1 has spent its 3 × 64 KiB of credit or run out of flows. Flow 0's
// 300 packets, due at once, are dequeued one at a time: the first 8 take the
// fast path (q->internal), the next 10 flow 0's initial 10 MTU of credit in
// band 0 (where it first attached), then flow 0 moves to band 1's old list
// and band 1 serves it until its 196,608 bytes of credit are spent, 132
// packets (131 leave 108 bytes). Flow 1's first packet, arriving after the
// 41st dequeue, goes out at the 151st, as Linux 6.18's sch_fq.c compiled
// unmodified sends it on this trace (README.md, the qdisc table's fq row).
// Until 2026-12-07 it went out next, at the 42nd.
func TestFQNewFlowWaitsInBandZero(t *testing.T) {
	e := &testEnv{}
	q := NewFQ(e.env(), FQParams{FlowLimit: 1000})
	ms := sim.Time(sim.Millisecond)
	for range 300 {
		if !q.Enqueue(e.pkt(0, packet.NotECT), ms) {
			t.Fatal("flow 0's packet refused")
		}
	}
	syn := e.pkt(1, packet.NotECT)
	for i := 1; i <= 301; i++ {
		if i == 42 {
			q.Enqueue(syn, 50*ms)
		}
		id, ok := q.Dequeue(ms + sim.Time(i-1)*1200*sim.Time(sim.Microsecond))
		if !ok {
			t.Fatalf("dequeue %d found nothing", i)
		}
		if id == syn {
			if i != 151 {
				t.Errorf("flow 1's first packet left at dequeue %d, want 151", i)
			}
			return
		}
	}
	t.Fatal("flow 1's packet never left")
}

// The same on a handful of packets, with the band round spelled out. Flow
// 0 (initial credit 1 byte) queues 3 packets due at 5 µs; at 6 µs the round
// finds bands 1 and 2 empty and serves flow 0 in band 0 (credit −1,499); at
// 7 µs flow 0 takes a quantum and moves to band 1's old list, which serves
// it. Flow 1's packet, at 8 µs, joins band 0's new list; at 9 µs band 1
// still has credit and flow 0's third packet goes first, then flow 1's.
func TestFQBandRoundOrder(t *testing.T) {
	e := &testEnv{}
	q := NewFQ(e.env(), FQParams{InitialQuantum: 1})
	us := sim.Time(sim.Microsecond)
	var a [3]packet.ID
	for i := range a {
		a[i] = e.pkt(0, packet.NotECT)
		e.pool.Get(a[i]).TxTime = 5 * us
		q.Enqueue(a[i], us)
	}
	b := e.pkt(1, packet.NotECT)
	var got []packet.ID
	for _, at := range []sim.Time{6 * us, 7 * us, 9 * us, 10 * us} {
		if at == 9*us {
			q.Enqueue(b, 8*us)
		}
		id, ok := q.Dequeue(at)
		if !ok {
			t.Fatalf("dequeue at %v found nothing", at)
		}
		got = append(got, id)
	}
	if want := []packet.ID{a[0], a[1], a[2], b}; !slices.Equal(got, want) {
		t.Errorf("dequeued %v, want %v (flow 0's three, then flow 1's)", got, want)
	}
}

// The fast-path queue is a flow of its own (q->internal), kept in
// time_to_send order by flow_queue_add: a packet with a departure time in
// the past, taking the fast path behind one without, leaves first, as on
// Linux. (A TCP sender stamps max(wstamp, now) as it hands the packet over,
// so its fast-path packets come in time order anyway.)
func TestFQFastPathInDepartureOrder(t *testing.T) {
	e := &testEnv{}
	q := NewFQ(e.env(), FQParams{})
	us := sim.Time(sim.Microsecond)
	a := e.pkt(0, packet.NotECT)
	q.Enqueue(a, us)
	b := e.pkt(1, packet.NotECT)
	e.pool.Get(b).TxTime = us / 2
	q.Enqueue(b, 2*us)
	if q.Stats.Fastpath != 2 {
		t.Fatalf("%d packets took the fast path, want 2", q.Stats.Fastpath)
	}
	if first, _ := q.Dequeue(3 * us); first != b {
		t.Errorf("first out: %v, want the packet due at 0.5 µs (%v), not the one due at 1 µs (%v)", first, b, a)
	}
}
