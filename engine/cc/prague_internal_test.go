package cc

import (
	"math/big"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// TestMulShr checks mul_u64_u64_shr against math/big: the full 128-bit
// product shifted right, truncated to 64 bits.
func TestMulShr(t *testing.T) {
	for _, tc := range []struct {
		a, b uint64
		s    uint
	}{
		{3, 5, 0}, {1 << 63, 4, 3}, {^uint64(0), ^uint64(0), 64 - 1}, {12_500_000_000, 200_000, 23}, {1 << 40, 1 << 30, 20},
	} {
		want := new(big.Int).Mul(new(big.Int).SetUint64(tc.a), new(big.Int).SetUint64(tc.b))
		want.Rsh(want, tc.s)
		want.And(want, new(big.Int).SetUint64(^uint64(0)))
		if got := mulShr(tc.a, tc.b, tc.s); got != want.Uint64() {
			t.Errorf("mulShr(%d, %d, %d) = %d, want %d", tc.a, tc.b, tc.s, got, want.Uint64())
		}
	}
}

// TestPragueSinceUSBetweenStamps traces tcp_stamp_us_delta(tcp_mstamp,
// alpha_stamp) by hand: the kernel stamps both in whole µs first, so an
// alpha stamp at 10.6 µs read at 20.4 µs is 20 − 10 = 10 µs, where the
// picosecond difference rounded down is 9; a stamp ahead of now gives 0.
// A differential run against tcp_prague.c found the target-RTT checks a µs
// apart here.
func TestPragueSinceUSBetweenStamps(t *testing.T) {
	ps := func(us, frac int64) sim.Time { return sim.Time(us*int64(sim.Microsecond) + frac) }
	for _, c := range []struct {
		now, stamp sim.Time
		want       uint64
	}{
		{ps(20, 400_000), ps(10, 600_000), 10},
		{ps(20, 900_000), ps(10, 100_000), 10},
		{ps(25_000, 0), ps(0, 999_999), 25_000},
		{ps(10, 0), ps(10, 500_000), 0},
		{ps(9, 0), ps(10, 0), 0},
	} {
		if got := sinceUS(&State{Now: c.now}, c.stamp); got != c.want {
			t.Errorf("sinceUS(now %v, stamp %v) = %d µs, want %d", c.now, c.stamp, got, c.want)
		}
	}
}
