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
	var pool Pool
	id := pool.Alloc()
	if a := uintptr(unsafe.Pointer(pool.Get(id))); a%line != 0 {
		t.Errorf("packet at %#x is not line-aligned", a)
	}
}
