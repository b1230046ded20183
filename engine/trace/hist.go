package trace

import (
	"math"
	"math/bits"
)

// Hist is a log-linear histogram of non-negative int64 values (picoseconds,
// bytes): 64 sub-buckets per power of two, so a quantile is within 1/64
// (1.6%) of the true value. The counts of each power of two are allocated
// the first time a value falls in it, so an idle histogram costs 520 bytes
// rather than 32 KB and a busy one only the magnitudes it saw (a run with
// thousands of flows and links keeps its working set in cache); Add
// allocates at most 64 times over a histogram's life. A copy shares its
// counts with the original: reset a histogram by assigning Hist{}.
//
// Consecutive values that fall in one bucket (a flow's RTT samples, a
// standing queue's sojourns) are counted in a run beside n, and reach
// counts when a value leaves the bucket: with thousands of flows a
// histogram's counts have left the caches between two of its values, and
// the run spares two cache lines (the bucket's pointer and its count).
type Hist struct {
	n     uint64
	zeros uint64 // values ≤ 0 (an empty queue's sojourn), kept beside n: one cache line
	last  int32  // the run's bucket
	run   uint32 // values in bucket last not yet in counts

	counts [64]*[1 << histSub]uint64 // values > 0, by power of two, then sub-bucket
}

const histSub = 6 // log2 of sub-buckets per power of two

func histBucket(v int64) int {
	if v < 1<<histSub {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - histSub - 1 // v >> e is in [64, 128)
	return (e+1)<<histSub | int(uint64(v)>>e)&(1<<histSub-1)
}

// bucketMid is the midpoint of bucket b's value range.
func bucketMid(b int) int64 {
	if b < 1<<histSub {
		return int64(b)
	}
	e := b>>histSub - 1
	lo := (int64(1)<<histSub | int64(b&(1<<histSub-1))) << e
	return lo + (int64(1)<<e)/2
}

// Add records v. A zero (the sojourn of a packet that found its queue
// empty) is counted inline.
func (h *Hist) Add(v int64) {
	h.n++
	if v <= 0 {
		h.zeros++
		return
	}
	h.add(v)
}

// add records v > 0. It stays out of line, which keeps Add within the
// inliner's budget.
//
//go:noinline
func (h *Hist) add(v int64) {
	b := histBucket(v)
	if b == int(h.last) && h.run != 0 && h.run != math.MaxUint32 {
		h.run++
		return
	}
	if h.run != 0 {
		c := h.counts[h.last>>histSub]
		if c == nil {
			c = new([1 << histSub]uint64)
			h.counts[h.last>>histSub] = c
		}
		c[h.last&(1<<histSub-1)] += uint64(h.run)
	}
	h.last, h.run = int32(b), 1
}

// Count is the number of values recorded.
func (h *Hist) Count() uint64 { return h.n }

// Quantile returns the q-quantile (0 ≤ q ≤ 1) and false when empty.
func (h *Hist) Quantile(q float64) (int64, bool) {
	if h.n == 0 {
		return 0, false
	}
	rank := uint64(q*float64(h.n-1)) + 1
	seen := h.zeros
	if seen >= rank {
		return bucketMid(0), true
	}
	for e, c := range h.counts {
		inRun := h.run != 0 && int(h.last)>>histSub == e
		if c == nil && !inRun {
			continue
		}
		for i := range 1 << histSub {
			b := e<<histSub | i
			if c != nil {
				seen += c[i]
			}
			if inRun && b == int(h.last) {
				seen += uint64(h.run)
			}
			if seen >= rank {
				return bucketMid(b), true
			}
		}
	}
	return bucketMid(len(h.counts)<<histSub - 1), true
}
