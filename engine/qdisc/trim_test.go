package qdisc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
)

// A lower limit sheds at once what the queue holds beyond it, as the
// kernel's change functions do: sch_codel from the head, sch_fq_codel and
// sch_fq by dequeuing (so the head-most of a flow), sch_dualpi2 from the
// C-queue's head first, then the L-queue's.
func TestLowerLimitTrims(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func(Env) Qdisc
		ecn  []packet.ECN // per packet enqueued
		want []int        // indexes of the packets dropped, in order
	}{
		{"codel", func(e Env) Qdisc { return NewCoDel(e, CoDelParams{}) }, slices.Repeat([]packet.ECN{packet.NotECT}, 6), []int{0, 1}},
		{"fq_codel", func(e Env) Qdisc { return NewFQCoDel(e, FQCoDelParams{HashSeed: 1}) }, slices.Repeat([]packet.ECN{packet.NotECT}, 6), []int{0, 1}},
		{"fq", func(e Env) Qdisc { return NewFQ(e, FQParams{}) }, slices.Repeat([]packet.ECN{packet.NotECT}, 6), []int{0, 1}},
		{"dualpi2", func(e Env) Qdisc { return NewDualPI2(e, rand.New(rand.NewPCG(1, 2)), DualPI2Params{}) },
			[]packet.ECN{packet.ECT1, packet.NotECT, packet.ECT1, packet.NotECT, packet.ECT1, packet.ECT1}, []int{1, 3}},
		{"dualpi2, C empty first", func(e Env) Qdisc { return NewDualPI2(e, rand.New(rand.NewPCG(1, 2)), DualPI2Params{}) },
			[]packet.ECN{packet.NotECT, packet.ECT1, packet.ECT1, packet.ECT1, packet.ECT1, packet.ECT1}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &testEnv{}
			q := tc.mk(e.env())
			var ids []packet.ID
			for _, ecn := range tc.ecn {
				id := e.pkt(0, ecn)
				ids = append(ids, id)
				q.Enqueue(id, 0)
			}
			if err := q.(Limiter).SetLimit(0, 4); err != nil {
				t.Fatal(err)
			}
			q.(Trimmer).Trim(0)
			var got []int
			for _, d := range e.drops {
				got = append(got, slices.Index(ids, d))
			}
			if _, n := q.Backlog(); n != 4 || !slices.Equal(got, tc.want) {
				t.Errorf("after the limit fell to 4: %d queued, dropped %v; want 4, %v", n, got, tc.want)
			}
		})
	}
}
