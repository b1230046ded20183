package link

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// overtakeMax is how many packets at the tail of the ring a new packet may
// overtake by moving them back one slot each, and movedMax how many times
// a packet may be moved back so (heapEntry.tag's low bits count them).
const (
	overtakeMax = 8
	movedMax    = 3
)

// hold puts a packet in flight on a reordering direction. The ring holds a
// run of packets in (arrival, push order), the heap the rest. A packet that
// would arrive before the ring's tail overtakes it. When it overtakes a few
// packets, none yet moved back movedMax times, it is inserted before them
// and they move back one slot; otherwise the packets it overtakes move to
// the heap and it joins the ring at the tail. Small jitter, where a packet
// overtakes one or two others, then costs short shifts and leaves the heap
// empty (delivery then skips the merge); a packet held back long, which
// all that follow overtake, goes to the heap after a few shifts instead of
// being shifted by each; and a packet that overtakes many costs heap
// pushes rather than a long shift.
func (d *Dir) hold(e heapEntry) {
	r := &d.rring
	if r.n == 0 || e.arrive >= r.a[(r.head+r.n-1)&(len(r.a)-1)].arrive {
		r.push(e) // in order: the common case
		return
	}
	m := len(r.a) - 1
	k := 0
	for k < r.n {
		t := &r.a[(r.head+r.n-1-k)&m]
		if e.arrive >= t.arrive {
			break
		}
		if k == overtakeMax || t.tag&movedMax == movedMax {
			for r.n > 0 && e.arrive < r.back().arrive {
				d.heap.pushEntry(r.popBack())
			}
			r.push(e)
			return
		}
		k++
	}
	r.insert(e, k)
}

// scheduleReordered queues the event for the packet now earliest in flight,
// id arriving at at. The event queued before it, for a later time, is not
// taken out: it goes stale, and when it comes it is passed over as its time
// is not rdue (or, if the earliest is due at that very time, it delivers
// and the later one is passed over). So a packet costs one plain event, as
// on a fifo wire, rather than a sim.Timer's bookkeeping; the rare packet
// that overtakes the earliest in flight costs one event more.
func (d *Dir) scheduleReordered(at sim.Time, id packet.ID) {
	d.rdue = at
	d.s.Schedule(at, d.self, kindReorderArrive, uint64(id))
}

// arriveReordered delivers every reordered packet due at now, merging the
// ring and the heap in (arrival, push order). While the heap is empty, as
// it mostly is under small jitter, the ring's head is next and the merge is
// skipped.
func (d *Dir) arriveReordered(now sim.Time) {
	r, h := &d.rring, &d.heap
	for {
		var e heapEntry
		fromRing := false
		switch {
		case len(h.a) == 0:
			if r.n == 0 {
				d.rdue = sim.Never
				return
			}
			e, fromRing = r.a[r.head], true
		case r.n > 0 && r.a[r.head].before(&h.a[0]):
			e, fromRing = r.a[r.head], true
		default:
			e = h.a[0]
		}
		if e.arrive > now {
			d.scheduleReordered(e.arrive, e.id)
			d.pool.Prefetch(e.id) // as arrive does for the next on a fifo wire
			return
		}
		if fromRing {
			r.pop()
		} else {
			h.pop()
		}
		d.Stats.Delivered++
		d.to.Receive(e.id)
	}
}

// entryRing is a FIFO of heap entries. Its length is a power of two, so
// positions wrap with a mask rather than a division.
type entryRing struct {
	a       []heapEntry
	head, n int
}

func (r *entryRing) push(e heapEntry) {
	if r.n == len(r.a) {
		na := make([]heapEntry, max(16, 2*len(r.a)))
		for i := 0; i < r.n; i++ {
			na[i] = r.a[(r.head+i)&(len(r.a)-1)]
		}
		r.a, r.head = na, 0
	}
	r.a[(r.head+r.n)&(len(r.a)-1)] = e
	r.n++
}

// insert puts e before the last k entries, which move back by one and
// count it in their tag's low bits (hold never moves one at movedMax).
func (r *entryRing) insert(e heapEntry, k int) {
	r.push(e)
	m := len(r.a) - 1
	i := (r.head + r.n - 1) & m
	for ; k > 0; k-- {
		j := (i - 1) & m
		r.a[i] = r.a[j]
		r.a[i].tag++
		i = j
	}
	r.a[i] = e
}

func (r *entryRing) back() heapEntry { return r.a[(r.head+r.n-1)&(len(r.a)-1)] }

func (r *entryRing) pop() {
	r.head = (r.head + 1) & (len(r.a) - 1)
	r.n--
}

func (r *entryRing) popBack() heapEntry {
	r.n--
	return r.a[(r.head+r.n)&(len(r.a)-1)]
}

// arrivalHeap is a 4-ary min-heap of packets in flight on arrival time,
// ties in the order they were pushed. Entries are values in one slice, so
// it allocates only while it grows.
type arrivalHeap struct {
	a []heapEntry
	n uint32
}

// heapEntry is a packet in flight on a reordering direction, 16 bytes, so
// that the ring of a fast path with a long delay (some thousand packets)
// stays small. tag is the push order shifted left by two, its low bits
// counting how often the packet was moved back in the ring (hold). Push
// orders wrap at 2^30 and compare by their difference, which is exact
// while fewer than 2^29 packets are in flight.
type heapEntry struct {
	arrive sim.Time
	tag    uint32
	id     packet.ID
}

func (e *heapEntry) before(f *heapEntry) bool {
	return e.arrive < f.arrive || e.arrive == f.arrive && int32(e.tag-f.tag) < 0
}

func (h *arrivalHeap) push(x inflight) {
	h.n++
	h.pushEntry(heapEntry{arrive: x.arrive, tag: h.n << 2, id: x.id})
}

func (h *arrivalHeap) pushEntry(e heapEntry) {
	h.a = append(h.a, e)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h.a[p]) {
			break
		}
		h.a[i] = h.a[p]
		i = p
	}
	h.a[i] = e
}

func (h *arrivalHeap) pop() inflight {
	top := h.a[0]
	last := len(h.a) - 1
	e := h.a[last]
	h.a = h.a[:last]
	if last > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= last {
				break
			}
			m := c
			for k := c + 1; k < c+4 && k < last; k++ {
				if h.a[k].before(&h.a[m]) {
					m = k
				}
			}
			if !h.a[m].before(&e) {
				break
			}
			h.a[i] = h.a[m]
			i = m
		}
		h.a[i] = e
	}
	return inflight{top.id, top.arrive}
}
