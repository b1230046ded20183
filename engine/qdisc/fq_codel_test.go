package qdisc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// testEnv is an Env over a fresh pool that records drops and marks.
type testEnv struct {
	pool         packet.Pool
	drops, marks []packet.ID
}

func (e *testEnv) env() Env {
	return Env{Pool: &e.pool,
		Drop: func(id packet.ID, _ sim.Time) { e.drops = append(e.drops, id); e.pool.Free(id) },
		Mark: func(id packet.ID, _ sim.Time) { e.marks = append(e.marks, id) }}
}

// pkt allocates a 1500-byte packet of flow f.
func (e *testEnv) pkt(f int32, ecn packet.ECN) packet.ID {
	id := e.pool.Alloc()
	p := e.pool.Get(id)
	p.Flow, p.Src, p.Dst, p.Size, p.ECN = f, 0, 1, 1500, ecn
	return id
}

// fq_codel_drop on overflow drops from the head of the fattest flow until
// half its backlog is gone, at most drop_batch_size packets. With a limit
// of 100 and flow A holding 70 packets, flow B 30, the 101st packet (to B)
// makes A (105000 B) the fattest: threshold 52500 B, reached after 35
// packets of 1500 B (34 leave 51000 B < 52500). With drop_batch_size 16 the
// batch stops at 16 instead.
func TestFQCoDelDropFattest(t *testing.T) {
	cases := []struct {
		name           string
		batch, wantDrp int
	}{
		{"half the backlog", 64, 35},
		{"batch limit", 16, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &testEnv{}
			q := NewFQCoDel(e.env(), FQCoDelParams{CoDel: CoDelParams{LimitPkts: 100}, DropBatch: c.batch, HashSeed: 1})
			a, b := e.pkt(0, packet.NotECT), e.pkt(1, packet.NotECT)
			if q.Bucket(e.pool.Get(a)) == q.Bucket(e.pool.Get(b)) {
				t.Fatalf("flows 0 and 1 share a bucket under seed 1")
			}
			var first []packet.ID
			for i := 0; i < 70; i++ {
				id := a
				if i > 0 {
					id = e.pkt(0, packet.NotECT)
				}
				first = append(first, id)
				q.Enqueue(id, 0)
			}
			for i := 0; i < 31; i++ {
				id := b
				if i > 0 {
					id = e.pkt(1, packet.NotECT)
				}
				q.Enqueue(id, 0)
			}
			if len(e.drops) != c.wantDrp {
				t.Fatalf("drops = %d, want %d", len(e.drops), c.wantDrp)
			}
			for i, id := range e.drops {
				if id != first[i] {
					t.Errorf("drop %d = packet %d, want flow A's head-most %d", i, id, first[i])
				}
			}
			if _, n := q.Backlog(); n != 101-c.wantDrp {
				t.Errorf("backlog = %d packets, want %d", n, 101-c.wantDrp)
			}
		})
	}
}

// A flow that turns up while another is backlogged is new and goes first
// (fq_codel's sparse-flow priority): after the old flow's first packet, the
// new flow's packet is the next served.
func TestFQCoDelNewFlowFirst(t *testing.T) {
	e := &testEnv{}
	q := NewFQCoDel(e.env(), FQCoDelParams{HashSeed: 1})
	for i := 0; i < 10; i++ {
		q.Enqueue(e.pkt(0, packet.NotECT), 0)
	}
	if id, _ := q.Dequeue(0); e.pool.Get(id).Flow != 0 {
		t.Fatalf("first dequeue from flow %d, want 0", e.pool.Get(id).Flow)
	}
	// Flow 0 has spent its quantum (1500 B) and moves to old_flows on the
	// next dequeue; flow 1 arrives as a new flow.
	q.Enqueue(e.pkt(1, packet.NotECT), 0)
	if id, _ := q.Dequeue(0); e.pool.Get(id).Flow != 1 {
		t.Errorf("second dequeue from flow %d, want the new flow 1", e.pool.Get(id).Flow)
	}
}

// ce_threshold (codel_dequeue's end) CE-marks an ECT packet whose sojourn
// is after the threshold, whatever the control law says and even with ecn
// off; a Not-ECT packet is left alone. Sojourns here stay below the 5 ms
// target, so the control law itself never acts.
func TestFQCoDelCEThreshold(t *testing.T) {
	cases := []struct {
		name     string
		ecn      packet.ECN
		sojourn  sim.Duration
		wantMark bool
	}{
		{"ect0 above", packet.ECT0, 2 * sim.Millisecond, true},
		{"ect1 above", packet.ECT1, 2 * sim.Millisecond, true},
		{"ect0 below", packet.ECT0, 500 * sim.Microsecond, false},
		{"not-ect above", packet.NotECT, 2 * sim.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &testEnv{}
			q := NewFQCoDel(e.env(), FQCoDelParams{CoDel: CoDelParams{CEThreshold: sim.Millisecond}, HashSeed: 1})
			id := e.pkt(0, c.ecn)
			q.Enqueue(id, 0)
			got, _ := q.Dequeue(sim.Time(c.sojourn))
			marked := e.pool.Get(got).ECN == packet.CE
			if marked != c.wantMark || (len(e.marks) == 1) != c.wantMark {
				t.Errorf("after %v of sojourn: CE = %v (%d marks reported), want %v", c.sojourn, marked, len(e.marks), c.wantMark)
			}
			if _, _, ce := q.Stats(); (ce == 1) != c.wantMark {
				t.Errorf("ce_mark = %d, want marked %v", ce, c.wantMark)
			}
		})
	}
}

// fq_codel_drop counts its overflow drops as CoDel drops of the flow it
// sheds (flow->cvars.count += i, "increase its signal strength"), so that
// flow's next dropping state starts from the raised count. 70 packets of
// flow 0 and 31 of flow 1 overflow a 100-packet limit by one: flow 0, the
// fattest, sheds half its backlog (35 packets, under the batch of 64).
func TestFQCoDelOverflowRaisesCount(t *testing.T) {
	e := &testEnv{}
	q := NewFQCoDel(e.env(), FQCoDelParams{CoDel: CoDelParams{LimitPkts: 100}, HashSeed: 1})
	for range 70 {
		q.Enqueue(e.pkt(0, packet.NotECT), 0)
	}
	for range 31 {
		q.Enqueue(e.pkt(1, packet.NotECT), 0)
	}
	f := &q.flows[q.Bucket(e.pool.Get(e.pkt(0, packet.NotECT)))]
	if len(e.drops) != 35 || f.vars.count != 35 {
		t.Errorf("%d overflow drops, flow 0's CoDel count %d; want 35 and 35", len(e.drops), f.vars.count)
	}
}
