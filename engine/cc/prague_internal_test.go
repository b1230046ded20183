package cc

import (
	"math/big"
	"testing"
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
