package trace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHistQuantiles checks Quantile against the exact order statistics of
// the values added: the rank it reports is ⌊q·(n−1)⌋+1, and each value
// lies in a bucket no wider than 1/64 of it. The values come in runs (a
// slow random walk, as a flow's RTT samples do), in jumps between
// magnitudes, and as zeros, so runs start and end in every way.
func TestHistQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		next func(prev int64) int64
	}{
		{"walk", func(prev int64) int64 { return max(1, prev+int64(r.IntN(2001))-1000) }},
		{"jumps", func(int64) int64 { return int64(r.ExpFloat64() * 1e9) }},
		{"runs and zeros", func(prev int64) int64 {
			switch r.IntN(10) {
			case 0:
				return 0
			case 1:
				return int64(r.IntN(1e12))
			}
			return prev
		}},
	} {
		var h Hist
		var vs []int64
		v := int64(40e9) // 40 ms in ps
		for range 200_000 {
			v = tc.next(v)
			h.Add(v)
			vs = append(vs, max(v, 0))
		}
		slices.Sort(vs)
		if h.Count() != uint64(len(vs)) {
			t.Fatalf("%s: Count %d, want %d", tc.name, h.Count(), len(vs))
		}
		for _, q := range []float64{0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1} {
			want := vs[uint64(q*float64(len(vs)-1))]
			got, ok := h.Quantile(q)
			if !ok || got < want-want/64 || got > want+want/64 {
				t.Errorf("%s: Quantile(%g) = %d, %v; the exact quantile is %d (±1/64)", tc.name, q, got, ok, want)
			}
		}
	}
}
