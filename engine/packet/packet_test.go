package packet

import (
	"testing"
	"unsafe"
)

// The network fields fill the first cache line and a packet is a whole
// number of lines in a line-aligned slab, so every packet's first line
// holds all that a router or queue reads or writes.
func TestPacketLayout(t *testing.T) {
	const line = 64
	var p Packet
	if n := unsafe.Sizeof(p); n%line != 0 {
		t.Errorf("Packet is %d bytes, not a whole number of %d-byte lines", n, line)
	}
	network := map[string]uintptr{
		"Flow": unsafe.Offsetof(p.Flow) + unsafe.Sizeof(p.Flow), "Src": unsafe.Offsetof(p.Src) + unsafe.Sizeof(p.Src),
		"Dst": unsafe.Offsetof(p.Dst) + unsafe.Sizeof(p.Dst), "Hash": unsafe.Offsetof(p.Hash) + unsafe.Sizeof(p.Hash),
		"Size": unsafe.Offsetof(p.Size) + unsafe.Sizeof(p.Size), "EnqAt": unsafe.Offsetof(p.EnqAt) + unsafe.Sizeof(p.EnqAt),
		"TxTime": unsafe.Offsetof(p.TxTime) + unsafe.Sizeof(p.TxTime), "ECN": unsafe.Offsetof(p.ECN) + unsafe.Sizeof(p.ECN),
	}
	for f, end := range network {
		if end > line {
			t.Errorf("network field %s ends at byte %d, past the first line", f, end)
		}
	}
	if end := unsafe.Offsetof(p.Sack) + unsafe.Sizeof(p.Sack); unsafe.Sizeof(p)-end != 40 {
		t.Errorf("Sack is not the last field before the padding: Alloc would not clear a field after it")
	}
	var pool Pool
	id := pool.Alloc()
	if a := uintptr(unsafe.Pointer(pool.Get(id))); a%line != 0 {
		t.Errorf("packet at %#x is not line-aligned", a)
	}
}

// A packet from Alloc reads as zero wherever it is read: every field, and
// the SACK blocks below NSack, even when its slot held a packet before.
func TestAllocClears(t *testing.T) {
	var pool Pool
	id := pool.Alloc()
	q := pool.Get(id)
	*q = Packet{Flow: 1, Src: 2, Dst: 3, Hash: 4, Size: 5, EnqAt: 6, TxTime: 7, ECN: CE, NSack: 2, Flags: SYN, Len: 8,
		Seq: 9, Ack: 10, Wnd: 11, TSVal: 12, TSEcr: 13, Tx: 14, SentAt: 15, AccECN: [3]uint32{1, 2, 3},
		Sack: [MaxSack]SackBlock{{1, 2}, {3, 4}, {5, 6}}}
	pool.Free(id)
	again := pool.Alloc()
	if again != id {
		t.Fatalf("Alloc after Free gave %d, want the freed slot %d", again, id)
	}
	got := *pool.Get(again)
	if got.NSack != 0 {
		t.Fatalf("NSack = %d after Alloc", got.NSack)
	}
	got.Sack = [MaxSack]SackBlock{} // not read while NSack is 0
	if got != (Packet{}) {
		t.Errorf("reused packet not cleared: %+v", got)
	}
}

// TestClone: a clone has every field of the original, its own ID, and
// OnClone hears of it (the emulator copies the packet's bytes there).
func TestClone(t *testing.T) {
	var p Pool
	var heard [][2]ID
	p.OnClone = func(from, to ID) { heard = append(heard, [2]ID{from, to}) }
	id := p.Alloc()
	orig := p.Get(id)
	orig.Flow, orig.Dst, orig.Seq, orig.NSack = 3, 7, 1449, 1
	orig.Sack[0] = SackBlock{Start: 2897, End: 4345}
	c := p.Clone(id)
	if c == id || *p.Get(c) != *orig || p.Live() != 2 {
		t.Errorf("clone %d of %d = %+v, live %d; want a second packet equal to %+v", c, id, *p.Get(c), p.Live(), *orig)
	}
	if len(heard) != 1 || heard[0] != [2]ID{id, c} {
		t.Errorf("OnClone heard %v, want [[%d %d]]", heard, id, c)
	}
}
