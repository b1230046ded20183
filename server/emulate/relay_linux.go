//go:build linux

package emulate

import (
	"encoding/binary"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/rcvpath"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/ccscope/ccscope/server/calibrate"
)

// The relay moves packets between the endpoints' TUN devices through the
// engine's own network — topo.Build's link directions, qdiscs, loss and
// jitter — driven by wall-clock time: simulated time is the time since the
// relay started, and one loop alternates between dispatching the events
// that are due, reading packets the kernels sent, and sleeping until the
// next event or packet. Packet bytes live in slabs indexed by the engine
// pool's packet IDs, so the loop allocates nothing per packet.

const (
	slabShift = 12   // as engine/packet's slabs: 4096 packets per slab
	basePort  = 5201 // flow i listens on basePort+i
)

// slotFor is the bytes of a packet slot for TUN devices of the given MTU:
// 2 KiB for 1500, a jumbo MTU rounded up to a cache line.
func slotFor(mtu int) int { return max(2048, (mtu+63)&^63) }

// relay is the real-time event loop.
type relay struct {
	s     *sim.Sim
	pool  *packet.Pool
	nw    *topo.Network
	t0    time.Time
	ports []*tunPort
	// nodeOf maps the last octet of an emulated address to a node index.
	nodeOf [256]int32
	bufs   [][]byte
	slot   int // bytes per packet slot (slotFor)
	nflows int
	rtt    []rttTrack
	rec    *trace.Recorder
	queues []*queueObs

	stop atomic.Bool

	late    trace.Hist // actual − scheduled time of every packet written, ps
	lateMax int64
	// foreign counts packets the relay could not place (not IPv4, or to an
	// address no endpoint has); writeErrs counts failed TUN writes.
	foreign, writeErrs uint64
	realtime           bool
	pcap               *calibrate.PcapWriter // nil: no capture
	// acks is what each flow's receiver sends through: its receive path's
	// ACK models (receivePath), nil for none. ackNum is the last
	// cumulative ACK each flow's receiver sent, unwrapped to 64 bits as
	// the models compare them.
	acks   []rcvpath.Sink
	ackNum []uint64
}

// tunPort is one endpoint's TUN device: packets read from it enter the
// emulated network at its node, packets arriving at its node are written
// to it.
type tunPort struct {
	r       *relay
	fd      int
	node    int32
	capture bool // record this device's packets in the relay's pcap
}

// now is wall-clock time since the relay started, as simulated time.
func (r *relay) now() sim.Time { return sim.Time(time.Since(r.t0).Nanoseconds() * 1000) }

// buf is the byte slot of packet id.
func (r *relay) buf(id packet.ID) []byte {
	s := int(id) >> slabShift
	for len(r.bufs) <= s {
		r.bufs = append(r.bufs, make([]byte, r.slot<<slabShift))
	}
	o := (int(id) & (1<<slabShift - 1)) * r.slot
	return r.bufs[s][o : o+r.slot]
}

// Receive writes a packet arriving at the port's node to its TUN device,
// updating the IP header if a qdisc CE-marked it, and records how late the
// write is against the time the engine scheduled the arrival for.
func (p *tunPort) Receive(id packet.ID) {
	r := p.r
	pk := r.pool.Get(id)
	b := r.buf(id)[:pk.Size]
	if ecn := packet.ECN(b[1] & 3); ecn != pk.ECN {
		b[1] = b[1]&^3 | byte(pk.ECN)
		ipChecksum(b)
	}
	if pk.Flow < int32(r.nflows) && pk.Src != p.node {
		if ack, ok := tcpAck(b); ok && pk.Dst == r.rtt[pk.Flow].src {
			r.rtt[pk.Flow].acked(ack, int64(r.now()))
		}
	}
	if p.capture {
		r.pcap.Add(int64(r.now())/1000, b)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(p.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b))); e != 0 {
		r.writeErrs++
	}
	late := int64(r.now() - r.s.Now())
	r.late.Add(max(late, 0))
	r.lateMax = max(r.lateMax, late)
	r.pool.Free(id)
}

// warm grows the packet pool and the byte slots to their first slab and
// touches every page before the clock starts: the first packets would
// otherwise wait for megabytes of page faults.
func (r *relay) warm() {
	ids := make([]packet.ID, 1<<slabShift)
	for i := range ids {
		ids[i] = r.pool.Alloc()
		r.buf(ids[i])[0] = 0
	}
	for _, id := range ids {
		r.pool.Free(id)
	}
}

// drain reads every packet waiting on every TUN device and hands each to
// the emulated network at its node, at the time it was read.
func (r *relay) drain() {
	for _, p := range r.ports {
		for {
			id := r.pool.Alloc()
			b := r.buf(id)
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(p.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if e != 0 || n == 0 {
				r.pool.Free(id)
				break
			}
			now := r.now()
			if p.capture {
				r.pcap.Add(int64(now)/1000, b[:int(n)])
			}
			r.s.RunUntil(now)
			if !r.admit(p, id, b[:int(n)], now) {
				r.foreign++
				r.pool.Free(id)
			}
		}
	}
}

// admit fills packet id's network fields from its IPv4 header and sends it.
func (r *relay) admit(p *tunPort, id packet.ID, b []byte, now sim.Time) bool {
	if len(b) < 20 || b[0]>>4 != 4 {
		return false
	}
	dst := r.nodeOf[b[19]]
	if dst < 0 || dst == p.node {
		return false
	}
	pk := r.pool.Get(id)
	pk.Src, pk.Dst, pk.Size, pk.ECN = p.node, dst, units.Bytes(len(b)), packet.ECN(b[1]&3)
	pk.SentAt = now
	pk.Flow = r.foreignFlow(dst) // not a flow's: ICMP, a stray segment
	if sport, dport, seq, plen, ok := tcpPorts(b); ok {
		switch {
		case dport >= basePort && int(dport-basePort) < r.nflows:
			f := int32(dport - basePort)
			pk.Flow, pk.Seq, pk.Len = f, uint64(seq), plen
			if plen > 0 {
				r.rtt[f].sent(seq, seq+plen, int64(now))
			}
		case sport >= basePort && int(sport-basePort) < r.nflows:
			f := int32(sport - basePort)
			pk.Flow = f
			if r.acks[f] != nil {
				r.describeAck(pk, f, b, plen)
				r.acks[f].Send(id)
				return true
			}
		}
	}
	r.nw.Nodes[p.node].Send(id)
	return true
}

// port is node's TUN device (nil for a router).
func (r *relay) port(node int32) *tunPort {
	for _, p := range r.ports {
		if p.node == node {
			return p
		}
	}
	return nil
}

// foreignFlow is the flow index the relay gives packets to node that belong
// to no flow: one past the flows for each node, as the network holds a
// flow's receivers at two nodes only.
func (r *relay) foreignFlow(node int32) int32 { return int32(r.nflows) + node }

// receivePath builds flow f's receive-path models (config.RcvPath) around
// the kernel's receiver, with the engine's own code and random streams:
// the data the receiver's node delivers passes the receive hold and is
// counted by the ACK hold, and what the receiver sends passes the ACK hold
// and the grant (engine.AckPath). It returns their counts.
func (r *relay) receivePath(f *eflow, seed uint64) *rcvpath.Stats {
	dst := r.nw.Nodes[f.dst.index]
	stats := &rcvpath.Stats{}
	acks, hold := engine.AckPath(r.s, r.pool, seed, &f.cfg, r.nw.Bottleneck(f.src.index, f.dst.index), stats, dst)
	if acks != rcvpath.Sink(dst) {
		r.acks[f.idx] = acks
	}
	var in rcvpath.Sink = portSink{r.port(f.dst.index)}
	if hold != nil {
		in = arrivals{hold, r.pool, in}
	}
	if h := engine.RcvHold(r.s, &f.cfg, in); h != nil {
		dst.Attach(int32(f.idx), h)
	} else if hold != nil {
		dst.Attach(int32(f.idx), portReceiver{in})
	}
	return stats
}

// describeAck fills the header fields the receive-path models read of a
// segment the receiver sent (rcvpath: pure ACK or not, cumulative ACK,
// SACK blocks, ECN echo) from its bytes.
func (r *relay) describeAck(pk *packet.Packet, f int32, b []byte, plen uint32) {
	ihl := int(b[0]&15) * 4
	t := b[ihl:]
	pk.Len = plen
	pk.Flags = packet.Flags(t[12]&1)<<8 | packet.Flags(t[13])
	pk.NSack = 0
	if pk.Flags&packet.ACK != 0 {
		ack := binary.BigEndian.Uint32(t[8:])
		if r.ackNum[f] == 0 {
			r.ackNum[f] = 1<<32 | uint64(ack) // room below for an ACK that goes back
		} else {
			r.ackNum[f] += uint64(int64(int32(ack - uint32(r.ackNum[f]))))
		}
		pk.Ack = r.ackNum[f]
	}
	var opts []byte
	if doff := int(t[12]>>4) * 4; doff > 20 {
		opts = t[20:doff] // within the packet: tcpPorts checked the offset
	}
	for len(opts) > 0 && opts[0] != 0 {
		if opts[0] == 1 || len(opts) < 2 || int(opts[1]) < 2 || int(opts[1]) > len(opts) {
			opts = opts[1:] // NOP, or a malformed option: step over a byte
			continue
		}
		if opts[0] == 5 { // SACK (RFC 2018): 8 bytes a block
			pk.NSack = uint8((int(opts[1]) - 2) / 8)
		}
		opts = opts[opts[1]:]
	}
}

// arrivals notes each data packet of a flow arriving at its receiver for
// the ACK hold's saturation test, then passes it on.
type arrivals struct {
	hold *rcvpath.AckHold
	pool *packet.Pool
	to   rcvpath.Sink
}

func (a arrivals) Send(id packet.ID) {
	a.hold.NoteArrival(a.pool.Get(id).Size)
	a.to.Send(id)
}

// portSink writes to a port's TUN device; portReceiver takes packets from
// a node for a sink.
type (
	portSink     struct{ p *tunPort }
	portReceiver struct{ s rcvpath.Sink }
)

func (s portSink) Send(id packet.ID)        { s.p.Receive(id) }
func (r portReceiver) Receive(id packet.ID) { r.s.Send(id) }

// loop runs the relay until the horizon or stop, calling tick every
// interval (from the loop's own goroutine, so that tick may use the trace
// recorder). It runs on a locked OS thread in SCHED_FIFO where allowed,
// with 1 ns timer slack, so that its sleeps end when they should.
func (r *relay) loop(epfd int, horizon sim.Time, interval sim.Duration, tick func(now sim.Time)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.realtime = setRealtime()
	// A collection stops every goroutine, the loop's too, until it ends,
	// and on a loaded machine its workers wait for CPU: one cost the relay
	// milliseconds of lateness. The loop allocates nothing per packet, so
	// collections are postponed to a 1 GiB heap for the run's length.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	var evs [8]syscall.EpollEvent
	next := sim.Time(0)
	for !r.stop.Load() {
		now := r.now()
		if now >= horizon {
			r.s.RunUntil(horizon)
			break
		}
		r.s.RunUntil(now)
		r.drain()
		if now >= next {
			tick(now)
			next = now.Add(interval)
		}
		wake := min(r.s.NextAt(), next, horizon)
		if wait := wake - r.now(); wait > 0 {
			if err := epollWait(epfd, evs[:], sim.Duration(wait)); err != nil {
				return err
			}
		}
	}
	return nil
}

// setRealtime moves the calling thread to SCHED_FIFO priority 10; it
// reports false where that is not allowed. The loop sleeps in epoll
// whenever it has nothing due, so it cannot starve the machine.
func setRealtime() bool { return setRealtimePrio(10) }

// setRealtimePrio moves the calling thread to SCHED_FIFO at prio, with 1 ns
// timer slack.
func setRealtimePrio(prio int32) bool {
	const prSetTimerslack = 29
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
	const schedFIFO = 1
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, schedFIFO, uintptr(unsafe.Pointer(&prio)))
	return e == 0
}

// sysEpollPwait2 is epoll_pwait2(2), the same number on every architecture
// (Linux 5.11); it takes a nanosecond timeout where epoll_wait takes ms.
const sysEpollPwait2 = 441

// epollWait sleeps until a TUN device is readable or d has passed.
//
// The relay's system calls are raw: they keep the goroutine's P, so the
// loop never waits for a P to come back when a read, write or sleep ends
// (with GOMAXPROCS at 2, the flows' goroutines would otherwise take both).
// A garbage collection waits for the loop's sleep to end, at most one
// sampling interval; the loop postpones collections anyway.
func epollWait(epfd int, evs []syscall.EpollEvent, d sim.Duration) error {
	ns := int64(d) / 1000
	ts := syscall.Timespec{Sec: ns / 1e9, Nsec: ns % 1e9}
	_, _, e := syscall.RawSyscall6(sysEpollPwait2, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
	if e != 0 && e != syscall.EINTR {
		return e
	}
	return nil
}

// newEpoll watches the TUN devices for readable packets.
func newEpoll(fds []int) (int, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return -1, err
	}
	for _, fd := range fds {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			syscall.Close(ep)
			return -1, err
		}
	}
	return ep, nil
}

// tcpPorts parses an IPv4 packet's TCP ports, sequence number and payload
// length.
func tcpPorts(b []byte) (sport, dport uint16, seq, plen uint32, ok bool) {
	ihl := int(b[0]&15) * 4
	if b[9] != syscall.IPPROTO_TCP || len(b) < ihl+20 {
		return 0, 0, 0, 0, false
	}
	t := b[ihl:]
	doff := int(t[12]>>4) * 4
	tot := int(binary.BigEndian.Uint16(b[2:]))
	if tot > len(b) || ihl+doff > tot {
		return 0, 0, 0, 0, false
	}
	return binary.BigEndian.Uint16(t), binary.BigEndian.Uint16(t[2:]), binary.BigEndian.Uint32(t[4:]), uint32(tot - ihl - doff), true
}

// tcpAck returns a TCP segment's acknowledgment number.
func tcpAck(b []byte) (uint32, bool) {
	ihl := int(b[0]&15) * 4
	if b[9] != syscall.IPPROTO_TCP || len(b) < ihl+20 || b[ihl+13]&0x10 == 0 {
		return 0, false
	}
	return binary.BigEndian.Uint32(b[ihl+8:]), true
}

// ipChecksum recomputes an IPv4 header's checksum (RFC 791).
func ipChecksum(b []byte) {
	ihl := int(b[0]&15) * 4
	b[10], b[11] = 0, 0
	var sum uint32
	for i := 0; i < ihl; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(b[10:], ^uint16(sum))
}

// rttTrack measures a flow's round-trip times at the relay: from a data
// segment's read off the sender's TUN to the write of the first ACK that
// covers it back to the sender, skipping segments sent before a
// retransmission of their range (Karn's rule, RFC 6298 §3). It misses the
// microseconds the hosts' stacks add and nothing else.
type rttTrack struct {
	src      int32 // the sender's node
	ring     []rttEntry
	head, n  int
	started  bool
	high     uint32 // highest end sequence sent
	retx     bool
	retxHigh uint32 // highest end of a retransmitted range
	hist     trace.Hist
}

type rttEntry struct {
	end uint32
	t   int64
}

func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }

func (t *rttTrack) sent(seq, end uint32, now int64) {
	if !t.started {
		t.started, t.high = true, seq
	}
	if !seqAfter(end, t.high) || seqAfter(t.high, seq) {
		t.retx = true
		if seqAfter(end, t.retxHigh) || t.retxHigh == 0 {
			t.retxHigh = end
		}
		if !seqAfter(end, t.high) {
			return
		}
	}
	t.high = end
	if t.n == len(t.ring) {
		return // more than the ring in flight: skip the sample
	}
	t.ring[(t.head+t.n)%len(t.ring)] = rttEntry{end, now}
	t.n++
}

func (t *rttTrack) acked(ack uint32, now int64) {
	var last rttEntry
	got := false
	for t.n > 0 && !seqAfter(t.ring[t.head].end, ack) {
		last, got = t.ring[t.head], true
		t.head = (t.head + 1) % len(t.ring)
		t.n--
	}
	if got && !(t.retx && !seqAfter(last.end, t.retxHigh)) {
		t.hist.Add(now - last.t)
	}
}

// queueObs records a direction's queue activity with the engine's own
// recorder, and the drops and marks of the emulated flows' packets.
type queueObs struct {
	engine.QueueRecorder
	r *relay
}

func (q *queueObs) Dropped(d *link.Dir, now sim.Time, id packet.ID, onWire bool) {
	p := q.r.pool.Get(id)
	if int(p.Flow) >= q.r.nflows {
		return
	}
	q.r.rec.RecordEvent(now, p.Flow, trace.EvDrop, int64(p.Seq), int32(p.Len))
}

func (q *queueObs) Marked(d *link.Dir, now sim.Time, id packet.ID) {
	p := q.r.pool.Get(id)
	if int(p.Flow) >= q.r.nflows {
		return
	}
	q.r.rec.RecordEvent(now, p.Flow, trace.EvECNMark, int64(p.Seq), int32(p.Len))
}
