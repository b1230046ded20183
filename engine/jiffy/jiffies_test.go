package jiffy

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// The constants kernel/time/timeconst.bc prints for HZ 300 and 250
// (`echo 300 | bc -q kernel/time/timeconst.bc`, Linux 6.18).
func TestTimeconstMatchesTheKernels(t *testing.T) {
	for _, c := range []struct {
		name     string
		b, n, d  uint64
		mul, adj uint64
		shr      uint64
	}{
		{"HZ 300 MSEC_TO_HZ", 32, 300, 1000, 0x9999999A, 0x1CCCCCCCC, 33},
		{"HZ 300 USEC_TO_HZ", 32, 300, 1_000_000, 0x9D495183, 0x7FFCB923A29, 43},
		{"HZ 300 HZ_TO_MSEC", 32, 1000, 300, 0xD5555556, 0x2AAAAAAA, 30},
		{"HZ 300 HZ_TO_USEC", 32, 1_000_000, 300, 0xD0555556, 0xAAAAA, 20},
		{"HZ 250 USEC_TO_HZ", 32, 250, 1_000_000, 0x83126E98, 0x7FF7CED9168, 43},
	} {
		got := timeconst(c.b, c.n, c.d)
		if got != (mulAdj{c.mul, c.adj, c.shr}) {
			t.Errorf("%s: got mul %#x adj %#x shr %d, the kernel's %#x %#x %d",
				c.name, got.mul, got.adj, got.shr, c.mul, c.adj, c.shr)
		}
	}
}

func TestTickIsTickNsec(t *testing.T) {
	for hz, ns := range map[uint32]int64{100: 10_000_000, 250: 4_000_000, 300: 3_333_333, 1000: 1_000_000} {
		if got := Tick(hz); got != sim.Duration(ns)*sim.Nanosecond {
			t.Errorf("Tick(%d) = %v, TICK_NSEC is %d ns", hz, got, ns)
		}
	}
}

// Hand-computed: at HZ 300 a tick is 10/3 ms. The timers' constants
// (TCP_RTO_MIN 200 ms, TCP_ATO_MIN 40 ms, TCP_TIMEOUT_MIN_US 2 ms) and
// values either side of a tick's edge round up; jiffies_to_usecs rounds
// down; nsecs_to_jiffies64 divides by 10^7/3 exactly.
func TestConversionsAtHZ300(t *testing.T) {
	for _, c := range []struct{ us, want uint32 }{
		{0, 0}, {1, 1}, {2000, 1}, {3333, 1}, {3334, 2}, {6666, 2}, {6667, 3},
		{40_000, 12}, {200_000, 60}, {1_000_000, 300}, {1_000_001, 301},
	} {
		if got := UsecsTo(300, c.us); got != uint64(c.want) {
			t.Errorf("usecs_to_jiffies(%d) = %d, want %d", c.us, got, c.want)
		}
	}
	for _, c := range []struct{ ms, want uint32 }{
		{0, 0}, {1, 1}, {3, 1}, {4, 2}, {10, 3}, {11, 4}, {20, 6}, {200, 60}, {1000, 300},
	} {
		if got := MsecsTo(300, c.ms); got != uint64(c.want) {
			t.Errorf("msecs_to_jiffies(%d) = %d, want %d", c.ms, got, c.want)
		}
	}
	for _, c := range []struct{ j, want uint64 }{{1, 3333}, {2, 6666}, {3, 10_000}, {60, 200_000}, {300, 1_000_000}} {
		if got := ToUsecs(300, c.j); got != c.want {
			t.Errorf("jiffies_to_usecs(%d) = %d, want %d", c.j, got, c.want)
		}
	}
	for _, c := range []struct{ ns, want uint64 }{
		{3_333_333, 0}, {3_333_334, 1}, {6_666_666, 1}, {6_666_667, 2}, {10_000_000, 3}, {1_000_000_000, 300},
	} {
		if got := NsecsTo(300, c.ns); got != c.want {
			t.Errorf("nsecs_to_jiffies(%d) = %d, want %d", c.ns, got, c.want)
		}
	}
}

// Over every input the TCP timers can give them, the fixed-point forms
// round up exactly as the division they stand for: ⌈x·300/d⌉.
func TestFixedPointIsTheCeiling(t *testing.T) {
	for u := uint32(0); u < 130_000_000; u += 7 {
		if got, want := UsecsTo(300, u), (uint64(u)*3+9999)/10000; got != want {
			t.Fatalf("usecs_to_jiffies(%d) = %d, ⌈u·300/10⁶⌉ = %d", u, got, want)
		}
	}
	for m := uint32(0); m < 2_000_000; m++ {
		if got, want := MsecsTo(300, m), (uint64(m)*3+9)/10; got != want {
			t.Fatalf("msecs_to_jiffies(%d) = %d, ⌈m·300/1000⌉ = %d", m, got, want)
		}
	}
}

func TestDivisorsDivide(t *testing.T) {
	for _, hz := range []uint32{100, 250, 1000} {
		per := uint64(1_000_000 / hz)
		if UsecsTo(hz, uint32(per)) != 1 || UsecsTo(hz, uint32(per)+1) != 2 || ToUsecs(hz, 3) != 3*per {
			t.Errorf("HZ %d: a tick of %d µs does not convert as one", hz, per)
		}
		if NsecsTo(hz, per*1000-1) != 0 || NsecsTo(hz, per*1000) != 1 {
			t.Errorf("HZ %d: nsecs_to_jiffies at a tick's edge", hz)
		}
	}
}
