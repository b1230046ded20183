package qdisc

import (
	"slices"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// FQ constants from sch_fq.c.
const (
	// fqFastpathMax is fq_fastpath_check's bound on the internal queue.
	fqFastpathMax = 8
	// fqRefillDelay is flow_refill_delay's default, msecs_to_jiffies(40),
	// here in exact time rather than jiffies.
	fqRefillDelay = 40 * sim.Millisecond
)

// FQParams configure sch_fq; zero values take fq_init's defaults.
type FQParams struct {
	LimitPkts      int          // sch->limit, default 10000
	FlowLimit      int          // flow_plimit, default 100
	Quantum        units.Bytes  // default 2 MTU (3000 B)
	InitialQuantum units.Bytes  // default 10 MTU (15000 B)
	Horizon        sim.Duration // default 10 s; later departure times are dropped
}

// fqEntry is a queued packet with its time_to_send (fq_skb_cb).
type fqEntry struct {
	id  packet.ID
	tts sim.Time
}

// fqState is where a flow is: detached (on no list), on the new or old
// round-robin list, or throttled (in the delayed set).
type fqState uint8

const (
	fqDetached fqState = iota
	fqListed
	fqThrottled
)

// fqFlow is struct fq_flow. Packets with non-decreasing time_to_send go to
// the linear list; the others to tree, kept sorted (t_root).
type fqFlow struct {
	list           []fqEntry
	lhead          int
	tree           []fqEntry
	qlen           int
	credit         int32
	next           int32
	state          fqState
	age            sim.Time // when it became detached
	timeNextPacket sim.Time
	band           uint8 // f->band: 0 from the slab until its first packet sets it
}

// fqBands is FQ_BANDS.
const fqBands = 3

// fqBand is struct fq_perband_flows.
type fqBand struct {
	newFlows, oldFlows fqList
	credit, quantum    int32
}

// fqList is a round-robin list of flows (struct fq_flow_head).
type fqList struct{ head, tail int32 }

func (l *fqList) pushBack(flows []fqFlow, i int32) {
	flows[i].next = -1
	flows[i].state = fqListed
	if l.head < 0 {
		l.head = i
	} else {
		flows[l.tail].next = i
	}
	l.tail = i
}

// FQ is net/sched/sch_fq.c for a host's egress: per-flow queues served by
// DRR (quantum 2 MTU, a new flow starting with 10 MTU of credit), new flows
// first within a band, the three priority bands by weighted round robin,
// each packet held until its earliest departure time (packet.TxTime, the
// EDT model Linux TCP uses with fq). A flow here is a socket: the packets
// of one flow index leaving one node.
//
// Left out: the per-socket pacing-rate path for packets without a
// departure time (a sender that wants pacing stamps TxTime),
// flow_max_rate, ce_threshold, priorities other than 0, and garbage
// collection of idle flows (flow state lives for the run).
type FQ struct {
	env   Env
	p     FQParams
	flows []fqFlow
	byKey map[uint64]int32
	// bands are fq_perband_flows, with quanta of 9, 3 and 1 × 64 KiB
	// (fq_init). Our packets are all priority 0, band 1 in the default
	// priomap, but a flow fresh from the slab has band 0 when fq_enqueue
	// adds it to a new list (f->band is set after fq_flow_add_tail), so its
	// first attach is to band 0's list and it waits for the band round to
	// reach band 0: after band 1 has spent its 192 KiB of credit, or run
	// out of packets. Until 2026-12-07 a new flow went first, as if all
	// flows shared one band.
	bands     [fqBands]fqBand
	bandNr    int
	delayed   []int32 // throttled flows by time_next_packet, ties in arrival order
	nextDelay sim.Time
	internal  fqFlow // the fast-path queue (q->internal), in time_to_send order as flow_queue_add keeps it

	qlen, bandPkts int
	inactive       int
	backlog        units.Bytes

	// Stats counts fq's own drops and events.
	Stats FQStats
}

// FQStats are fq's counters (tc_fq_qd_stats).
type FQStats struct {
	HorizonDrops, FlowLimitDrops, BandDrops uint64
	Throttled, Fastpath                     uint64
}

// NewFQ follows fq_init.
func NewFQ(env Env, p FQParams) *FQ {
	if p.LimitPkts == 0 {
		p.LimitPkts = 10000
	}
	if p.FlowLimit == 0 {
		p.FlowLimit = 100
	}
	if p.Quantum == 0 {
		p.Quantum = 2 * codelDefaultMTU
	}
	if p.InitialQuantum == 0 {
		p.InitialQuantum = 10 * codelDefaultMTU
	}
	if p.Horizon == 0 {
		p.Horizon = 10 * sim.Second
	}
	q := &FQ{env: env, p: p, byKey: map[uint64]int32{}, nextDelay: sim.Never}
	for i, w := range [fqBands]int32{9 << 16, 3 << 16, 1 << 16} {
		q.bands[i] = fqBand{newFlows: fqList{-1, -1}, oldFlows: fqList{-1, -1}, quantum: w}
	}
	return q
}

// addTail follows fq_flow_add_tail: onto the flow's band's new or old list.
func (q *FQ) addTail(fi int32, old bool) {
	b := &q.bands[q.flows[fi].band]
	if old {
		b.oldFlows.pushBack(q.flows, fi)
	} else {
		b.newFlows.pushBack(q.flows, fi)
	}
}

// Backlog is the queued bytes and packets.
func (q *FQ) Backlog() (units.Bytes, int) { return q.backlog, q.qlen }

// NextAt is when a throttled flow becomes eligible (time_next_delayed_flow),
// where fq_dequeue arms its watchdog after finding nothing to send.
func (q *FQ) NextAt() (sim.Time, bool) { return q.nextDelay, q.nextDelay != sim.Never }

// fastpath follows fq_fastpath_check: a packet due now may skip the flow
// queues when nothing else is eligible, no throttled flow is due and the
// fast-path queue is short.
func (q *FQ) fastpath(tts, now sim.Time) bool {
	if tts > now {
		return false
	}
	if q.qlen != 0 {
		if len(q.flows) != q.inactive+len(q.delayed) {
			return false
		}
		if q.internal.qlen >= fqFastpathMax {
			return false
		}
		// A throttled flow already due but not yet served keeps its turn.
		if q.nextDelay <= now {
			return false
		}
	}
	return true
}

// classify follows fq_classify for a socket's packet: the flow of (source
// node, flow index), created detached with the initial quantum. It returns
// -1 for the fast path.
func (q *FQ) classify(p *packet.Packet, tts, now sim.Time) int32 {
	if q.fastpath(tts, now) {
		q.Stats.Fastpath++
		return -1
	}
	key := uint64(uint32(p.Src))<<32 | uint64(uint32(p.Flow))
	if i, ok := q.byKey[key]; ok {
		return i
	}
	i := int32(len(q.flows))
	q.flows = append(q.flows, fqFlow{credit: int32(q.p.InitialQuantum), next: -1, state: fqDetached, age: now})
	q.byKey[key] = i
	q.inactive++
	return i
}

// Enqueue follows fq_enqueue: drop at the limit, or if the departure time
// is beyond the horizon (horizon_drop), or if the flow holds flow_plimit
// packets; a detached flow joins the new list, its credit topped up to a
// quantum if it has been idle longer than flow_refill_delay.
func (q *FQ) Enqueue(id packet.ID, now sim.Time) bool {
	if q.bandPkts >= q.p.LimitPkts {
		q.Stats.BandDrops++
		return false
	}
	p := q.env.Pool.Get(id)
	tts := now
	if p.TxTime != 0 {
		if p.TxTime > now.Add(q.p.Horizon) {
			q.Stats.HorizonDrops++
			return false
		}
		tts = p.TxTime
	}
	fi := q.classify(p, tts, now)
	p.EnqAt = now
	if fi < 0 {
		q.internal.qlen++
		q.internal.add(fqEntry{id, tts})
	} else {
		f := &q.flows[fi]
		if f.qlen >= q.p.FlowLimit {
			q.Stats.FlowLimitDrops++
			return false
		}
		if f.state == fqDetached {
			q.addTail(fi, false)
			if now > f.age.Add(fqRefillDelay) {
				f.credit = max(f.credit, int32(q.p.Quantum))
			}
		}
		f.band = 1 // priority 0's band (fq_prio2band, the default priomap)
		q.bandPkts++
		if f.qlen == 0 {
			q.inactive--
		}
		f.qlen++
		f.add(fqEntry{id, tts})
	}
	q.qlen++
	q.backlog += p.Size
	return true
}

// add follows flow_queue_add: append if not earlier than the tail, else
// insert into the sorted tree after any entries with the same time.
func (f *fqFlow) add(e fqEntry) {
	if f.lhead == len(f.list) || e.tts >= f.list[len(f.list)-1].tts {
		f.list = append(f.list, e)
		return
	}
	i, _ := slices.BinarySearchFunc(f.tree, e.tts, func(x fqEntry, t sim.Time) int {
		if x.tts <= t {
			return -1
		}
		return 1
	})
	f.tree = slices.Insert(f.tree, i, e)
}

// peek follows fq_peek: the earlier of the tree's first and the list's head.
func (f *fqFlow) peek() (fqEntry, bool) {
	hasList := f.lhead < len(f.list)
	if len(f.tree) > 0 && (!hasList || f.tree[0].tts < f.list[f.lhead].tts) {
		return f.tree[0], true
	}
	if hasList {
		return f.list[f.lhead], true
	}
	return fqEntry{}, false
}

// remove takes out the entry peek returned (fq_erase_head).
func (f *fqFlow) remove(e fqEntry) {
	if len(f.tree) > 0 && f.tree[0] == e {
		f.tree = f.tree[1:]
		return
	}
	f.lhead++
	if f.lhead == len(f.list) {
		f.list, f.lhead = f.list[:0], 0
	}
}

// setThrottled follows fq_flow_set_throttled.
func (q *FQ) setThrottled(fi int32) {
	t := q.flows[fi].timeNextPacket
	i, _ := slices.BinarySearchFunc(q.delayed, t, func(x int32, t sim.Time) int {
		if q.flows[x].timeNextPacket <= t {
			return -1
		}
		return 1
	})
	q.delayed = slices.Insert(q.delayed, i, fi)
	q.flows[fi].state = fqThrottled
	q.Stats.Throttled++
	if q.nextDelay > t {
		q.nextDelay = t
	}
}

// checkThrottled follows fq_check_throttled: flows whose time has come go
// back to the tail of the old list.
func (q *FQ) checkThrottled(now sim.Time) {
	if q.nextDelay > now {
		return
	}
	q.nextDelay = sim.Never
	for len(q.delayed) > 0 {
		fi := q.delayed[0]
		if t := q.flows[fi].timeNextPacket; t > now {
			q.nextDelay = t
			return
		}
		q.delayed = q.delayed[1:]
		q.addTail(fi, true)
	}
}

// Dequeue follows fq_dequeue: the fast-path queue first; then, after
// releasing due throttled flows, the current band's first flow of its new
// list, else of its old list. A band out of credit or of flows hands over
// to the next, whose credit is topped up by its quantum (at most to it). A
// flow out of credit gets a quantum and goes to the tail of its band's old
// list; a flow whose next packet is not yet due is throttled; an empty flow
// on a new list gets one pass through an old list, an empty old flow is
// detached.
func (q *FQ) Dequeue(now sim.Time) (packet.ID, bool) {
	if q.qlen == 0 {
		return 0, false
	}
	if e, ok := q.internal.peek(); ok {
		q.internal.qlen--
		q.internal.remove(e)
		q.sent(e.id)
		return e.id, true
	}
	q.checkThrottled(now)
	retry := 0
	for {
		pb := &q.bands[q.bandNr]
		var head *fqList
		if pb.credit > 0 { // fq_pband_head_select
			if pb.newFlows.head >= 0 {
				head = &pb.newFlows
			} else if pb.oldFlows.head >= 0 {
				head = &pb.oldFlows
			}
		}
		if head == nil {
			next := false
			for retry++; retry <= fqBands; retry++ {
				if q.bandNr++; q.bandNr == fqBands {
					q.bandNr = 0
				}
				b := &q.bands[q.bandNr]
				b.credit = min(b.credit+b.quantum, b.quantum)
				if b.credit > 0 {
					next = true
					break
				}
				retry = 0
			}
			if next {
				continue
			}
			return 0, false
		}
		fi := head.head
		f := &q.flows[fi]
		retry = 0
		if f.credit <= 0 {
			f.credit += int32(q.p.Quantum)
			head.head = f.next
			q.addTail(fi, true)
			continue
		}
		e, ok := f.peek()
		if !ok {
			head.head = f.next
			if head == &pb.newFlows {
				q.addTail(fi, true)
			} else {
				f.state, f.age = fqDetached, now
			}
			continue
		}
		if t := max(e.tts, f.timeNextPacket); now < t {
			head.head = f.next
			f.timeNextPacket = t
			q.setThrottled(fi)
			continue
		}
		f.qlen--
		if f.qlen == 0 {
			q.inactive++
		}
		q.bandPkts--
		f.remove(e)
		plen := int32(q.env.Pool.Get(e.id).Size)
		f.credit -= plen
		pb.credit -= plen
		q.sent(e.id)
		return e.id, true
	}
}

// sent accounts for a packet leaving (fq_dequeue_skb).
func (q *FQ) sent(id packet.ID) {
	q.qlen--
	q.backlog -= q.env.Pool.Get(id).Size
}

// SetLimit changes the packet limit (sch->limit); Trim then sheds
// what it holds beyond it.
func (q *FQ) SetLimit(bytes units.Bytes, pkts int) error {
	if bytes != 0 || pkts <= 0 {
		return errPacketLimit
	}
	q.p.LimitPkts = pkts
	return nil
}

// Trim follows fq_change: dequeue and drop until the queue is within the
// limit, or nothing is due (throttled packets stay).
func (q *FQ) Trim(now sim.Time) {
	for q.qlen > q.p.LimitPkts {
		id, ok := q.Dequeue(now)
		if !ok {
			return
		}
		q.env.Drop(id, now)
	}
}

// Limit is the packet limit (sch->limit).
func (q *FQ) Limit() (units.Bytes, int) { return 0, q.p.LimitPkts }
