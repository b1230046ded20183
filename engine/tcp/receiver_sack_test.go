package tcp

import (
	"math/rand/v2"
	"testing"
)

// TestOfoQueueAgainstByteSet inserts random segments into the out-of-order
// queue, and now and then takes its first run off as rcv_nxt reaches it,
// and checks it against the set of bytes held: its intervals are that
// set's maximal runs, in order; bytes is the set's size; and a segment
// that repeats bytes already held sets the D-SACK block to start at the
// first of them and to hold only repeated bytes, as tcp_data_queue_ofo
// reports them. Segments land anywhere, mostly at the tail, or mostly at
// the head (retransmissions filling holes), so the buffer's window moves
// both ways and is re-centred and grown.
func TestOfoQueueAgainstByteSet(t *testing.T) {
	const space = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var q ofoQueue
		var held [space]bool
		for range 300 {
			if len(q.iv) > 0 && rng.IntN(10) == 0 {
				first := q.iv[0]
				q.popFront()
				for b := first.Start; b < first.End; b++ {
					held[b] = false
				}
			}
			seq := uint64(rng.IntN(space - 1))
			end := seq + 1 + uint64(rng.IntN(min(40, space-int(seq))))
			switch round % 3 {
			case 0:
				// Mostly at or near the tail, as segments beyond a hole come.
				seq = uint64(min(space-41, int(q.lastEnd())+rng.IntN(6)))
				end = seq + 1 + uint64(rng.IntN(40))
			case 1:
				// Mostly at or near the head, as retransmissions come.
				if len(q.iv) > 0 && q.iv[0].Start > 40 {
					seq = q.iv[0].Start - uint64(1+rng.IntN(40))
					end = seq + 1 + uint64(rng.IntN(40))
				}
			}
			var sk sackState
			q.insert(seq, end, &sk)
			first, dup := -1, false
			for b := seq; b < end; b++ {
				if held[b] {
					if first < 0 {
						first = int(b)
					}
					dup = true
				}
			}
			if sk.dsack != dup {
				t.Fatalf("insert [%d,%d): dsack %v, repeated bytes %v", seq, end, sk.dsack, dup)
			}
			if dup {
				if sk.dup.Start != uint64(first) {
					t.Fatalf("insert [%d,%d): D-SACK starts at %d, first repeated byte %d", seq, end, sk.dup.Start, first)
				}
				for b := sk.dup.Start; b < sk.dup.End; b++ {
					if !held[b] {
						t.Fatalf("insert [%d,%d): D-SACK [%d,%d) holds byte %d, new", seq, end, sk.dup.Start, sk.dup.End, b)
					}
				}
			}
			for b := seq; b < end; b++ {
				held[b] = true
			}
			var runs [][2]uint64
			n := uint64(0)
			for b := 0; b < space; b++ {
				if !held[b] {
					continue
				}
				n++
				if k := len(runs); k > 0 && runs[k-1][1] == uint64(b) {
					runs[k-1][1]++
				} else {
					runs = append(runs, [2]uint64{uint64(b), uint64(b) + 1})
				}
			}
			if q.bytes != n || len(q.iv) != len(runs) {
				t.Fatalf("after [%d,%d): %d bytes in %d intervals, want %d in %d", seq, end, q.bytes, len(q.iv), n, len(runs))
			}
			for i, r := range runs {
				if q.iv[i].Start != r[0] || q.iv[i].End != r[1] {
					t.Fatalf("after [%d,%d): interval %d is [%d,%d), want [%d,%d)", seq, end, i, q.iv[i].Start, q.iv[i].End, r[0], r[1])
				}
			}
		}
	}
}

// lastEnd is where the queue's last interval ends, 0 if it is empty.
func (q *ofoQueue) lastEnd() uint64 {
	if len(q.iv) == 0 {
		return 0
	}
	return q.iv[len(q.iv)-1].End
}
