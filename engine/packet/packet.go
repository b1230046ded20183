// Package packet holds the simulated packet and the pool that owns them.
// Packets are values in fixed-size slabs, referenced by ID, so per-packet work
// allocates nothing once the pool has grown to the run's working set and a
// *Packet stays valid while its ID is live.
package packet

import (
	"fmt"
	"unsafe"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// ID refers to a packet in a Pool.
type ID int32

// ECN is the IP header's ECN field (RFC 3168).
type ECN uint8

// ECN codepoints.
const (
	NotECT ECN = 0
	ECT1   ECN = 1 // L4S (RFC 9331)
	ECT0   ECN = 2
	CE     ECN = 3
)

// Flags are TCP header flags.
type Flags uint16

// TCP flags.
const (
	FIN Flags = 1 << iota
	SYN
	RST
	PSH
	ACK
	URG
	ECE
	CWR
	AE // AccECN (RFC 9768) uses the former NS bit
)

// SackBlock is one SACK block [Start, End) in byte sequence space.
type SackBlock struct{ Start, End uint64 }

// MaxSack is the number of SACK blocks that fit beside the timestamp option.
const MaxSack = 3

// Packet is one simulated IP packet. Link and queue code reads only the
// network fields; transport fields belong to the flow's endpoints.
//
// The layout is for the caches: a packet is 192 bytes (three cache lines;
// the slabs are page-aligned), and the fields a router or a queue touches
// come first and fill exactly the first line, so forwarding a packet that
// has spent milliseconds on a wire costs one line's miss, and prefetching
// its first line covers it (TestPacketLayout).
type Packet struct {
	// Network.
	Flow  int32       // index of the flow it belongs to
	Src   int32       // source node index
	Dst   int32       // destination node index
	Hash  uint32      // flow hash for fair queueing; 0: the qdisc hashes the flow's identity
	Size  units.Bytes // bytes on the wire
	EnqAt sim.Time    // when it entered its current queue (for sojourn)
	// TxTime is the earliest departure time the sender asks for (EDT,
	// skb->tstamp), 0 for none. Only the fq qdisc honours it, holding the
	// packet until then and dropping it if it lies beyond fq's horizon;
	// a paced TCP sender stamps each segment with its pacing schedule.
	TxTime sim.Time
	ECN    ECN

	// Transport (TCP; a pump uses Seq and SentAt only).
	NSack  uint8
	Flags  Flags
	Len    uint32 // payload bytes
	Seq    uint64 // first payload byte (unwrapped sequence space)
	Ack    uint64 // cumulative ACK
	Wnd    uint32 // advertised receive window, bytes
	TSVal  uint32 // timestamp option: the sender's clock in ms (TCP_TS_HZ 1000)
	TSEcr  uint32
	Tx     int32              // sender-private index of this transmission's record
	SentAt sim.Time           // when the sender handed it to the network
	AccECN [3]uint32          // AccECN (RFC 9768) echo counters, owned by the TCP endpoint
	Sack   [MaxSack]SackBlock // last: Alloc clears what lies before it
	_      [40]byte           // to a whole number of cache lines
}

// A slab holds 1,024 packets (192 KB, still whole pages): a one-flow path
// at 100 Mbps needs a few hundred, and allocating 4,096 at once made each
// run allocate, zero and fault in 768 KB it never used (and so collect
// garbage twice as often across a sweep's runs). IDs come out in the same
// order whatever the slab size: fresh IDs are taken in ascending order,
// after any freed ones.
const (
	slabShift = 10
	slabSize  = 1 << slabShift
)

// Pool owns a run's packets.
type Pool struct {
	slabs []*[slabSize]Packet // arrays, so Get's index within a slab needs no bounds check
	free  []ID
	live  int
	// OnClone, if set, hears of every Clone: an owner that keeps data
	// beside the packets (the emulator's packet bytes, by ID) copies it.
	OnClone func(from, to ID)
}

// Alloc returns the ID of a packet whose fields are all zero but Sack,
// which is only ever read below NSack (zero) and is written before NSack
// grows: clearing it would write the packet's third cache line for every
// data packet, a miss when the slot comes back cold.
func (p *Pool) Alloc() ID {
	if len(p.free) == 0 {
		base := ID(len(p.slabs) * slabSize)
		p.slabs = append(p.slabs, new([slabSize]Packet))
		for i := ID(slabSize - 1); i >= 0; i-- {
			p.free = append(p.free, base+i)
		}
	}
	id := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.live++
	clear((*[unsafe.Offsetof(Packet{}.Sack)]byte)(unsafe.Pointer(p.Get(id)))[:])
	return id
}

// Clone returns a new packet with all of id's fields (a switch's flooded
// copy of a frame).
func (p *Pool) Clone(id ID) ID {
	c := p.Alloc()
	*p.Get(c) = *p.Get(id)
	if p.OnClone != nil {
		p.OnClone(id, c)
	}
	return c
}

// Get returns the packet with id. The pointer stays valid until Free(id).
func (p *Pool) Get(id ID) *Packet {
	return (*Packet)(p.addr(id))
}

// addr is packet id's address. It is computed from the slab's, not taken
// as &slab[i]: indexing through the slab pointer makes the compiler check
// it for nil with a load of the slab's first byte, which every Get and
// Prefetch paid for nothing (cachegrind, the 1,024-flow dumbbell: 0.5 %
// of the run's instructions; those lines stay cached, so no misses).
func (p *Pool) addr(id ID) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(p.slabs[id>>slabShift]), uintptr(id&(slabSize-1))*unsafe.Sizeof(Packet{}))
}

// Free returns id to the pool.
func (p *Pool) Free(id ID) {
	if p.live <= 0 {
		panic(fmt.Sprintf("packet: free of %d with no live packets", id))
	}
	p.live--
	p.free = append(p.free, id)
}

// Live is the number of allocated packets.
func (p *Pool) Live() int { return p.live }
