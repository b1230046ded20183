package trace

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/google/go-cmp/cmp"
)

// TestSamplerHoldsSkippedRows works a sampled trace of interval 10 by hand:
// a row the interval skips is written at the entity's next sample time,
// by the first row of any flow recorded at or after it, by the queue's own
// next row, or at the run's end; a signal back at the value the table
// shows holds nothing; Force writes within the interval.
func TestSamplerHoldsSkippedRows(t *testing.T) {
	r := NewRecorder(config.TraceSampled, 10, nil)
	var a, b, f DeliverySampler
	var q QueueSampler
	var s SignalSampler
	r.RecordDelivery(&a, 0, 0, 100) // written; a's next sample at 10
	r.RecordDelivery(&f, 0, 3, 1)
	r.RecordQueue(&q, &QueueRow{T: 0, BacklogPkts: 1})
	r.RecordSignal(&s, 0, 2, 0, 1)
	f.Force()
	r.RecordDelivery(&f, 2, 3, 2)                       // written within the interval
	r.RecordDelivery(&a, 3, 0, 200)                     // held
	r.RecordSignal(&s, 3, 2, 0, 2)                      // held
	r.RecordQueue(&q, &QueueRow{T: 4, BacklogPkts: 0})  // held until the queue's next row
	r.RecordDelivery(&a, 5, 0, 300)                     // held in a's 200's place
	r.RecordSignal(&s, 5, 2, 0, 1)                      // back at what the table shows: nothing held
	r.RecordDelivery(&b, 12, 1, 50)                     // writes a's 300 at 10 first
	r.RecordDelivery(&a, 14, 0, 400)                    // held: a's next sample at 20
	r.RecordSignal(&s, 15, 2, 0, 3)                     // s's next sample was at 10: written
	r.RecordQueue(&q, &QueueRow{T: 35, BacklogPkts: 2}) // q's 0 at 10 first, and a's 400 at 20
	r.RecordDelivery(&b, 36, 1, 60)
	r.RecordDelivery(&b, 40, 1, 70) // held
	r.ReleaseHeld(42)               // b's 70 at 42, the end

	type row struct{ T, Flow, V int64 }
	var got []row
	for i := range r.Delivery.Len() {
		got = append(got, row{r.Delivery.T[i], int64(r.Delivery.Flow[i]), r.Delivery.BytesDelivered[i]})
	}
	want := []row{{0, 0, 100}, {0, 3, 1}, {2, 3, 2}, {10, 0, 300}, {12, 1, 50}, {20, 0, 400}, {36, 1, 60}, {42, 1, 70}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delivery rows (-want +got):\n%s", d)
	}
	got = nil
	for i := range r.Queue.Len() {
		got = append(got, row{r.Queue.T[i], 0, r.Queue.BacklogPkts[i]})
	}
	if d := cmp.Diff([]row{{0, 0, 1}, {10, 0, 0}, {35, 0, 2}}, got); d != "" {
		t.Errorf("queue rows (-want +got):\n%s", d)
	}
	got = nil
	for i := range r.SignalT.Len() {
		got = append(got, row{r.SignalT.T[i], int64(r.SignalT.Flow[i]), int64(r.SignalT.Value[i])})
	}
	if d := cmp.Diff([]row{{0, 2, 1}, {15, 2, 3}}, got); d != "" {
		t.Errorf("signal rows (-want +got):\n%s", d)
	}
}
