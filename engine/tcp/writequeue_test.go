package tcp

import (
	"fmt"
	"testing"
)

// The write queue lays a write as tcp_sendmsg_locked does: the tail up to
// the goal, then new skbs of it; sending drops what is sent, and a split
// head keeps its end. A sender that never drains its queue holds room for
// its unsent skbs only.
func TestWriteQueueLays(t *testing.T) {
	var q writeQueue
	q.lay(1, 1, 101, 40, false) // skbs [1,41) [41,81) [81,101)
	if q.n() != 3 || q.tailLen(1, 101) != 20 {
		t.Fatalf("after 100 bytes at goal 40: %d skbs, tail %d; want 3 and 20", q.n(), q.tailLen(1, 101))
	}
	q.lay(1, 101, 161, 50, false) // the tail of 20 topped up to the new goal of 50, then a new skb of 30
	if want := []uint64{41, 81, 131, 161}; q.n() != 4 || q.ends[q.head+2] != want[2] || q.ends[q.head+3] != want[3] {
		t.Fatalf("ends %v, want %v", q.ends[q.head:], want)
	}
	q.sent(61) // the head is split at 61: its remainder ends at 81
	if head := q.headEnd(); q.n() != 3 || head != 81 || q.ends[q.head+1] != 131 {
		t.Fatalf("after sending to 61: %d skbs, head ends %d, next %d; want 3, 81, 131", q.n(), head, q.ends[q.head+1])
	}
	if got := q.newSkbs(61, 161, 300, 50); got != 3 { // the 30-byte tail takes 20, then 119 bytes in 3 skbs
		t.Fatalf("newSkbs = %d, want 3", got)
	}
	nxt, w := uint64(61), uint64(161)
	for range 100000 {
		q.lay(nxt, w, w+50, 50, false)
		w += 50
		nxt += 50
		q.sent(nxt)
	}
	if q.n() != 3 || cap(q.ends) > 64 {
		t.Errorf("after 100,000 skbs written and as many sent: %d unsent, room for %d; want 3 and little room", q.n(), cap(q.ends))
	}
}

// tcp_grow_skb moves bytes from the skb after the send head into it, up to
// what the head lacks, and frees that skb when it takes all of it; the skb
// after that is left alone, and the growth stays in the queue.
func TestWriteQueueGrowsTheHead(t *testing.T) {
	q := unmarkedQueue(11, 21, 51) // skbs [1,11) [11,21) [21,51), snd_nxt 1
	q.grow(8)                      // the head already holds it
	q.grow(16)                     // five bytes of the next
	if q.headEnd() != 16 || q.n() != 3 || q.ends[q.head+1] != 21 {
		t.Fatalf("grown to 16: ends %v, want [16 21 51]", q.ends[q.head:])
	}
	q.grow(40) // the next's last five: it is eaten, and [21,51) is not touched
	if q.headEnd() != 21 || q.n() != 2 || q.ends[q.head+1] != 51 {
		t.Fatalf("grown to 40: ends %v, want [21 51]", q.ends[q.head:])
	}
	q.sent(21)
	q.grow(100) // the last skb has nothing after it
	if q.headEnd() != 51 || q.n() != 1 {
		t.Errorf("the tail grown: ends %v, want [51]", q.ends[q.head:])
	}
}

// PSH marks follow tcp_mark_push (net/ipv4/tcp.c): the tail skb is marked
// at each push, a call's first copy clears the mark of the tail it tops
// up, a full marked skb keeps its mark behind newer data, tso_fragment
// leaves the mark with the part not sent (tcp_output.c: "PSH and FIN should
// only be set in the second packet"), and tcp_eat_one_skb ORs the eaten
// skb's flags into the head.
func TestWriteQueueKeepsPushMarks(t *testing.T) {
	var q writeQueue
	marks := func() []bool { return q.psh[q.head:] }
	q.lay(1, 1, 71, 40, true) // a call's skbs [1,41) [41,71)
	q.markTail()              // its end: tcp_push
	if got := marks(); got[0] || !got[1] {
		t.Fatalf("after a call's push: marks %v, want [false true]", got)
	}
	q.lay(1, 71, 121, 40, true) // the next call tops the tail up (clearing it), then [81,121)
	if got := marks(); got[1] || got[2] {
		t.Fatalf("after the next call's copies: marks %v, want none", got)
	}
	q.markTail()
	q.lay(1, 121, 201, 40, true) // a call that needs new skbs: [121,161) [161,201)
	q.markTail()
	if got := marks(); fmt.Sprint(got) != "[false false true false true]" {
		t.Fatalf("marks %v, want [false false true false true]: the full skb [81,121) keeps its mark", got)
	}
	q.sent(41)
	q.sent(61) // tso_fragment sends [41,61): [61,81) stays, unmarked as [41,81) was
	q.sent(101)
	if q.headEnd() != 121 || !q.headMarked() {
		t.Fatalf("after sending to 101: head ends %d, marked %v; want 121, marked", q.headEnd(), q.headMarked())
	}
	q.sent(121)
	q.grow(201) // the head [121,161) eats [161,201), marked
	if q.headEnd() != 201 || !q.headMarked() || q.n() != 1 {
		t.Errorf("after the head ate the tail: ends %v marks %v, want [201] [true]", q.ends[q.head:], marks())
	}
}

// unmarkedQueue is a write queue of skbs ending at ends, none PSH-marked.
func unmarkedQueue(ends ...uint64) writeQueue {
	return writeQueue{ends: ends, psh: make([]bool, len(ends))}
}
