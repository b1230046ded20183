package link

import (
	"unsafe"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
)

// propagate puts a packet on the wire as it finishes serialisation at
// departure (now is its departure time here). Its arrival is now + delay +
// jitter. In fifo order it is never before the packet ahead of it: a link
// keeps order, so a delayed packet holds back the ones behind it. In
// reorder order each packet keeps its own arrival, and only departure +
// delay is kept in order, so a change of delay alone never reorders.
func (d *Dir) propagate(id packet.ID, now sim.Time) {
	if d.jit != nil && d.jit.reorders() {
		base := max(now.Add(d.delay), d.lastBase)
		d.lastBase = base
		at := base.Add(d.jitter(base))
		d.lastArr = max(d.lastArr, at)
		d.rseq++
		e := heapEntry{arrive: at, tag: d.rseq << 2, id: id}
		if r := &d.rring; r.n > 0 && r.n < len(r.a) && at >= r.a[(r.head+r.n-1)&(len(r.a)-1)].arrive {
			r.a[(r.head+r.n)&(len(r.a)-1)] = e // in order, with room: hold's common case, inlined
			r.n++
		} else {
			d.hold(e)
		}
		if at < d.rdue {
			d.scheduleReordered(at, id)
		}
		return
	}
	base := now.Add(d.delay)
	at := base
	if d.jit != nil {
		at = at.Add(d.jitter(base))
	}
	if at < d.lastArr {
		at = d.lastArr
	}
	d.lastArr, d.lastBase = at, max(d.lastBase, base)
	if d.n == len(d.wire) {
		nw := make([]inflight, max(16, 2*len(d.wire)))
		for i := 0; i < d.n; i++ {
			nw[i] = d.wire[(d.head+i)&(len(d.wire)-1)]
		}
		d.wire, d.head = nw, 0
	}
	d.wire[(d.head+d.n)&(len(d.wire)-1)] = inflight{id, at}
	d.n++
	if d.n == 1 {
		d.s.Schedule(at, d.self, kindArrive, uint64(id))
	}
}

// jitter is the jitter model's extra delay for a packet whose nominal
// arrival is base. A redrawn Gaussian, the common model, is drawn here,
// inline, rather than through extra and rng.Normal.Draw (two calls, and
// the caller's registers saved around each); a draw that would put the
// arrival before the departure is drawn again by extra, as its loop does.
func (d *Dir) jitter(base sim.Time) sim.Duration {
	j := d.jit
	if j.redrawn {
		u := j.src.Uint64() // j.norm.Draw(), in its inlinable parts
		v, ok := rng.Boxed(u)
		if !ok {
			v = j.norm.Rest(u)
		}
		if x := roundPs(float64(v * j.sigma)); d.delay+x >= 0 {
			return x
		}
	}
	return j.extra(base, d.delay)
}

// wireAhead is how many slots ahead of the head arrive prefetches the wire
// ring: one cache line of slots (a ring of 16 or more slots, a power of two,
// is line-aligned), fetched as the head enters the line before. A long
// wire's slots were written a propagation delay ago and have left the
// caches; read one at a time, a line every few arrivals, the stride is too
// slow for the hardware prefetcher.
const wireAhead = 64 / int(unsafe.Sizeof(inflight{}))

// arrive delivers the packet at the head of the wire and queues the next
// one's arrival. When that is now too (a clump) and the simulation lets it
// claim the event (sim.Claim), it reports the next packet instead, whose
// event the caller dispatches once this delivery is done.
func (d *Dir) arrive(now sim.Time) (next packet.ID, claimed bool) {
	in := d.wire[d.head]
	d.head = (d.head + 1) & (len(d.wire) - 1)
	d.n--
	if d.n > 0 {
		nx := d.wire[d.head]
		if nx.arrive == now && d.s.Claim() {
			next, claimed = nx.id, true
		} else {
			d.s.Schedule(nx.arrive, d.self, kindArrive, uint64(nx.id))
		}
		d.pool.Prefetch(nx.id)
		if d.head&(wireAhead-1) == 0 { // the head entered a line: fetch the next one
			packet.PrefetchAddr(unsafe.Pointer(&d.wire[(d.head+wireAhead)&(len(d.wire)-1)]))
		}
	}
	d.Stats.Delivered++
	d.to.Receive(in.id)
	return next, claimed
}
