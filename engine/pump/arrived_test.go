package pump

import "testing"

// A packet's first arrival (by sequence, 1,500-byte packets) counts and
// any later one does not, in order, reordered, after a loss, and across
// word boundaries; in order nothing is kept, and once the hole a loss left
// is filled the words behind it go.
func TestArrivedCountsEachPacketOnce(t *testing.T) {
	a := arrived{pktSize: 1500}
	first := func(i uint64) bool { return a.first(i * 1500) } // packet i's sequence
	for i := uint64(0); i < 1000; i++ {
		if !first(i) || first(i) {
			t.Fatalf("in order: packet %d not first once", i)
		}
	}
	if len(a.bits) != 0 || a.next != 1000*1500 {
		t.Fatalf("in order: next %d, %d words kept; want 1000, none", a.next, len(a.bits))
	}
	// Packet 1000 is late: 1001…1199 come first, some twice.
	for i := uint64(1001); i < 1200; i++ {
		if !first(i) {
			t.Fatalf("above a hole: packet %d not first", i)
		}
		if i%7 == 0 && first(i) {
			t.Fatalf("above a hole: packet %d counted twice", i)
		}
	}
	if a.next != 1000*1500 || first(999) {
		t.Fatalf("next %d, or packet 999 counted again", a.next)
	}
	if !first(1000) || a.next != 1200*1500 || first(1000) || first(1100) {
		t.Fatalf("the late packet: next %d, want 1200, each counted once", a.next)
	}
	if len(a.bits) > 1 {
		t.Errorf("%d words kept once the hole closed, want at most the one holding next", len(a.bits))
	}
	for i := uint64(1200); i < 1300; i++ {
		if !first(i) {
			t.Fatalf("after the hole: packet %d not first", i)
		}
	}
}
