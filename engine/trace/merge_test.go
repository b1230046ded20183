package trace

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
)

// Rows recorded apart from the run's clock join the signals table in time
// order, after the rows already there at equal times; a summary-only
// trace keeps none.
func TestMergeSignals(t *testing.T) {
	r := NewRecorder(config.TraceChange, 0, nil)
	for _, at := range []int64{10, 20, 30} {
		r.SignalT.T = append(r.SignalT.T, at)
		r.SignalT.Flow = append(r.SignalT.Flow, 0)
		r.SignalT.Signal = append(r.SignalT.Signal, 0)
		r.SignalT.Value = append(r.SignalT.Value, float64(at))
	}
	add := &SignalTable{T: []int64{5, 20, 25, 40}, Flow: []int32{1, 1, 1, 1}, Signal: []int32{1, 1, 1, 1},
		Value: []float64{-5, -20, -25, -40}}
	r.MergeSignals(add)
	if want := []int64{5, 10, 20, 20, 25, 30, 40}; !slices.Equal(r.SignalT.T, want) {
		t.Fatalf("times %v, want %v", r.SignalT.T, want)
	}
	if want := []float64{-5, 10, 20, -20, -25, 30, -40}; !slices.Equal(r.SignalT.Value, want) {
		t.Errorf("values %v, want %v (the run's own row first at 20)", r.SignalT.Value, want)
	}
	s := NewRecorder(config.TraceSummary, 0, nil)
	s.MergeSignals(add)
	if s.SignalT.Len() != 0 {
		t.Errorf("a summary-only trace took %d rows", s.SignalT.Len())
	}
}
