package link

import (
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// arriveReordered delivers every reordered packet due at now, merging the
// ring and the heap in (arrival, push order).
func (d *Dir) arriveReordered(now sim.Time) {
	for {
		e, ok := d.nextReordered()
		if !ok {
			return
		}
		if e.arrive > now {
			d.rtimer.Arm(e.arrive)
			return
		}
		if d.rring.n > 0 && d.rring.front() == e {
			d.rring.pop()
		} else {
			d.heap.pop()
		}
		d.Stats.Delivered++
		d.to.Receive(e.id)
	}
}

// nextReordered is the earliest of the ring's head and the heap's top.
func (d *Dir) nextReordered() (heapEntry, bool) {
	switch {
	case d.rring.n == 0 && len(d.heap.a) == 0:
		return heapEntry{}, false
	case d.rring.n == 0:
		return d.heap.a[0], true
	case len(d.heap.a) == 0:
		return d.rring.front(), true
	}
	if r := d.rring.front(); r.before(&d.heap.a[0]) {
		return r, true
	}
	return d.heap.a[0], true
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

func (r *entryRing) front() heapEntry { return r.a[r.head] }

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
	n uint64
}

type heapEntry struct {
	arrive sim.Time
	seq    uint64
	id     packet.ID
}

func (e *heapEntry) before(f *heapEntry) bool {
	return e.arrive < f.arrive || e.arrive == f.arrive && e.seq < f.seq
}

func (h *arrivalHeap) push(x inflight) {
	h.n++
	h.pushEntry(heapEntry{x.arrive, h.n, x.id})
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
