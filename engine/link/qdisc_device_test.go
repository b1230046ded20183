package link

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// What the kernel's device layer does around a qdisc (net/core/dev.c,
// net/sched/sch_generic.c), on a 12 Mbps direction where a 1,500-byte
// packet takes 1 ms.

func deviceLink(q func(env qdisc.Env) qdisc.Qdisc) (*sim.Sim, *packet.Pool, *Dir, *sink) {
	return qdiscLink("r", 12*units.Mbps, q)
}

func sendFlow(pool *packet.Pool, d *Dir, flow int32, ecn packet.ECN) {
	id := pool.Alloc()
	p := pool.Get(id)
	p.Flow, p.Src, p.Dst, p.Size, p.ECN = flow, flow, 100, 1500, ecn
	d.Send(id)
}

// twoBusyPeriods sends the device tests' traffic: flow 1 four packets at
// once, and after an idle second flow 3 two, then flows 1 and 2 one each.
func twoBusyPeriods(s *sim.Sim, pool *packet.Pool, d *Dir) {
	for range 4 {
		sendFlow(pool, d, 1, packet.NotECT)
	}
	s.RunUntil(sim.Time(sim.Second))
	for _, f := range []int32{3, 3, 1, 2} {
		sendFlow(pool, d, f, packet.NotECT)
	}
	s.Run()
}

// fq_codel is bypassed when empty (TCQ_F_CAN_BYPASS): a packet finding it
// empty goes to the device, or waits in its requeue slot while the device
// is busy, and no flow is listed for it. And when it drains, the empty
// dequeue that follows at once unlinks every flow, so the next busy period
// starts with all flows new. Flow 1 sends 4 packets at once: 1 passes, 2
// is requeued, 3 and 4 are its flow's; flow 1 ends the period on old_flows
// with its deficit spent. After an idle second, flow 3 passes and is
// requeued, then flow 1 and flow 2 send a packet each: both are new flows,
// flow 1's first (had flow 1 stayed listed, flow 2 would go first).
func TestFQCoDelBypassAndDrain(t *testing.T) {
	s, pool, d, k := deviceLink(func(env qdisc.Env) qdisc.Qdisc {
		return qdisc.NewFQCoDel(env, qdisc.FQCoDelParams{HashSeed: 1})
	})
	twoBusyPeriods(s, pool, d)
	if want := []int32{1, 1, 1, 1, 3, 3, 1, 2}; !slices.Equal(k.flow, want) {
		t.Errorf("flows in delivery order %v, want %v", k.flow, want)
	}
	q := d.q.(*qdisc.FQCoDel)
	if q.NewFlowCount != 3 {
		t.Errorf("new_flow_count %d, want 3 (flow 1 twice, flow 2; the bypassed packets list none)", q.NewFlowCount)
	}
}

// DualPI2's empty dequeue resets the C-queue protection credit to its
// initial value, L-queue first (dequeue_packet's
// dualpi2_reset_c_protection). One busy period serves 9 L packets while a
// C packet waits, leaving the credit positive (C's turn); after an idle
// stretch a C and an L packet arrive together behind a packet on the wire:
// the L packet goes first.
func TestDualPI2CreditResetWhenDrained(t *testing.T) {
	s, pool, d, k := deviceLink(func(env qdisc.Env) qdisc.Qdisc {
		return qdisc.NewDualPI2(env, rand.New(rand.NewPCG(1, 2)), qdisc.DualPI2Params{})
	})
	sendFlow(pool, d, 9, packet.NotECT) // on the wire until 1 ms
	s.RunUntil(sim.Time(100 * sim.Microsecond))
	sendFlow(pool, d, 1, packet.NotECT)
	for range 9 {
		sendFlow(pool, d, 2, packet.ECT1)
	}
	s.RunUntil(sim.Time(20 * sim.Millisecond)) // drained at 11 ms
	sendFlow(pool, d, 9, packet.NotECT)
	s.RunUntil(sim.Time(20*sim.Millisecond + 100*sim.Microsecond))
	sendFlow(pool, d, 1, packet.NotECT)
	sendFlow(pool, d, 2, packet.ECT1)
	s.Run()
	if last := k.flow[len(k.flow)-2:]; last[0] != 2 {
		t.Errorf("after the drain %v went in that order, want the L packet (flow 2) first", last)
	}
}

// fq_pie has no bypass, but its dequeue finding it empty unlinks every flow
// as fq_codel's does (fq_pie_qdisc_dequeue has no early return: a flow with
// credit and no packet comes off the list, via old_flows). So a packet that
// finds the link idle is enqueued, its flow listed new, dequeued, and the
// empty dequeue that follows at once unlinks the flow again. Flow 1 sends 4
// packets at once: its flow is new for the first, unlinked, new again for
// the other three, and unlinked when they are gone. After an idle second
// flow 3 sends 2 packets (new for each, as flow 1's first two), then flows
// 1 and 2 one each: new_flows is 3, 1, 2, so flow 3's second packet goes
// first, then 1, then 2; 6 new flows. Had the lists not been emptied, flow
// 1 would have stayed on old_flows with its deficit spent and gone last
// (3, 2, 3, 1), and only 3 flows would have counted as new.
func TestFQPIEDrainUnlinksFlows(t *testing.T) {
	s, pool, d, k := deviceLink(func(env qdisc.Env) qdisc.Qdisc {
		return qdisc.NewFQPIE(env, rand.New(rand.NewPCG(1, 2)), qdisc.FQPIEParams{HashSeed: 1})
	})
	q := d.q.(*qdisc.FQPIE)
	seen := map[int]bool{}
	for _, f := range []int32{1, 2, 3} {
		seen[q.Bucket(&packet.Packet{Flow: f, Src: f, Dst: 100})] = true
	}
	if len(seen) != 3 {
		t.Fatal("flows 1-3 share a bucket with this seed")
	}
	twoBusyPeriods(s, pool, d)
	if want := []int32{1, 1, 1, 1, 3, 3, 1, 2}; !slices.Equal(k.flow, want) {
		t.Errorf("flows in delivery order %v, want %v", k.flow, want)
	}
	if q.Stats.NewFlowCount != 6 {
		t.Errorf("new_flow_count %d, want 6 (flows 1 and 3 twice each, flows 1 and 2)", q.Stats.NewFlowCount)
	}
}

// codel is bypassed when empty too (codel_init sets TCQ_F_CAN_BYPASS), so on
// a link where a packet takes longer than the target the first packet
// behind a busy device never shows CoDel its sojourn. At 1 Mbps (12 ms a
// packet) 20 packets arrive at once: 1 passes, 2 is requeued, 3-20 queue.
// 2 leaves at 12 ms from the requeue slot; CoDel first sees 3, at 24 ms,
// 24 ms old with more than an MTU behind it: first_above_time = 124 ms. The
// first dequeue after that, 12 at 132 ms, drops it (the control law's next
// drop, 100 ms on, comes after the last packet). Had 2 gone through CoDel,
// its 12 ms at 12 ms would have started the clock 12 ms sooner and 11
// would have been dropped.
func TestCoDelBypassHidesTheFirstSojourn(t *testing.T) {
	s, pool, d, k := qdiscLink("r", units.Mbps, func(env qdisc.Env) qdisc.Qdisc {
		return qdisc.NewCoDel(env, qdisc.CoDelParams{Target: 5 * sim.Millisecond, Interval: 100 * sim.Millisecond, MTU: 1500})
	})
	for f := int32(1); f <= 20; f++ {
		sendFlow(pool, d, f, packet.NotECT)
	}
	s.Run()
	var want []int32
	for f := int32(1); f <= 20; f++ {
		if f != 12 {
			want = append(want, f)
		}
	}
	if !slices.Equal(k.flow, want) {
		t.Errorf("delivered %v, want all but 12", k.flow)
	}
}
