package pump

import "testing"

// A packet's first arrival (by sequence, 1,500-byte packets) counts and
// any later one does not: in order, past a loss, late into the middle,
// start and end of a hole, and copies of each; in order nothing is kept,
// and however many packets are lost, at most maxHoles gaps are.
func TestArrivedCountsEachPacketOnce(t *testing.T) {
	a := arrived{pktSize: 1500}
	first := func(i uint64) bool { return a.first(i * 1500) } // packet i's sequence
	for i := uint64(0); i < 1000; i++ {
		if !first(i) || first(i) {
			t.Fatalf("in order: packet %d not first once", i)
		}
	}
	if len(a.holes) != 0 {
		t.Fatalf("in order: %d holes kept, want none", len(a.holes))
	}
	// Packets 1000–1009 are late: 1010…1199 come first, some twice.
	for i := uint64(1010); i < 1200; i++ {
		if !first(i) {
			t.Fatalf("past a gap: packet %d not first", i)
		}
		if i%7 == 0 && first(i) {
			t.Fatalf("past a gap: packet %d counted twice", i)
		}
	}
	for _, i := range []uint64{1005, 1000, 1009, 1001, 1002, 1003, 1004, 1006, 1007, 1008} {
		if !first(i) || first(i) {
			t.Fatalf("late packet %d not first once", i)
		}
	}
	if len(a.holes) != 0 || first(999) || first(1100) {
		t.Fatalf("%d holes left, or an old packet counted again", len(a.holes))
	}
	// Every other packet lost for a while: the holes stay bounded, and
	// packets past them still count once.
	for i := uint64(1200); i < 1200+4*maxHoles; i += 2 {
		if !first(i) || first(i) {
			t.Fatalf("lossy: packet %d not first once", i)
		}
	}
	if len(a.holes) != maxHoles {
		t.Errorf("%d holes after %d gaps, want the last %d", len(a.holes), 2*maxHoles, maxHoles)
	}
	newest, forgotten := uint64(1200+4*maxHoles-3), uint64(1201) // the newest hole's packet, the oldest's
	if !first(newest) || first(newest) {
		t.Errorf("packet %d, in the newest hole, not first once", newest)
	}
	if first(forgotten) {
		t.Errorf("packet %d, behind %d newer holes, counted", forgotten, maxHoles)
	}
}
