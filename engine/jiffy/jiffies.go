// Package jiffy is the kernel's jiffies clock at a CONFIG_HZ: how long a
// tick lasts, and the conversions between ticks and time units
// (include/linux/jiffies.h, kernel/time/time.c) with the fixed-point
// constants kernel/time/timeconst.bc generates for an HZ that does not
// divide a second's milli- or microseconds (300).
package jiffy

import "github.com/ccscope/ccscope/engine/sim"

// Tick is TICK_NSEC, (NSEC_PER_SEC + HZ/2)/HZ: the tick timer's period, by
// which jiffies advance. At HZ 300 it is 3,333,333 ns, a third of a
// nanosecond under 1/HZ s, as on the kernel.
func Tick(hz uint32) sim.Duration {
	return sim.Duration((1_000_000_000+uint64(hz)/2)/uint64(hz)) * sim.Nanosecond
}

// UsecsTo is usecs_to_jiffies: u µs rounded up to whole ticks. An HZ that
// divides USEC_PER_SEC divides; another multiplies by timeconst.bc's
// USEC_TO_HZ_MUL32 and shifts.
func UsecsTo(hz, u uint32) uint64 { return roundUp(hz, u, 1_000_000, usecToHZ300) }

// MsecsTo is msecs_to_jiffies: m ms rounded up to whole ticks, by
// MSEC_TO_HZ_MUL32 for an HZ that does not divide MSEC_PER_SEC.
func MsecsTo(hz, m uint32) uint64 { return roundUp(hz, m, 1000, msecToHZ300) }

// roundUp is x units, perSec to the second, in whole ticks rounded up:
// by division where HZ divides perSec, else by timeconst.bc's fixed point
// (c300 holds HZ 300's).
func roundUp(hz, x uint32, perSec uint64, c300 mulAdj) uint64 {
	if h := uint64(hz); h <= perSec && perSec%h == 0 {
		per := perSec / h
		return (uint64(x) + per - 1) / per
	}
	c := c300
	if hz != 300 {
		c = timeconst(32, uint64(hz), perSec)
	}
	return (c.mul*uint64(x) + c.adj) >> c.shr
}

// ToUsecs is jiffies_to_usecs on a 64-bit kernel: (j·HZ_TO_USEC_NUM) /
// HZ_TO_USEC_DEN, rounded down (3,333 µs a tick at HZ 300).
func ToUsecs(hz uint32, j uint64) uint64 {
	g := gcd(uint64(hz), 1_000_000)
	return j * (1_000_000 / g) / (uint64(hz) / g)
}

// NsecsTo is nsecs_to_jiffies64: n ns in whole ticks, rounded down. An HZ
// that divides NSEC_PER_SEC divides; another takes the kernel's generic
// form, n·9 / ((9·NSEC_PER_SEC + HZ/2)/HZ).
func NsecsTo(hz uint32, n uint64) uint64 {
	if 1_000_000_000%hz == 0 {
		return n / uint64(1_000_000_000/hz)
	}
	return n * 9 / ((9*1_000_000_000 + uint64(hz)/2) / uint64(hz))
}

// The constants of the one such HZ the kernel offers (CONFIG_HZ_300),
// worked out once: the timers convert on every RTT sample.
var (
	usecToHZ300 = timeconst(32, 300, 1_000_000)
	msecToHZ300 = timeconst(32, 300, 1000)
)

// mulAdj is one of timeconst.bc's triples: x·n/d rounded up is
// (mul·x + adj) >> shr.
type mulAdj struct{ mul, adj, shr uint64 }

// timeconst follows timeconst.bc's fmuls, fmul and fadj for the ratio n/d
// at b bits: the smallest shift that brings mul = ⌈2^shr·n/d⌉ to 2^(b−1)
// or more, and adj = 2^shr·(d′−1)/d′ with d′ = d/gcd(n, d), rounded down.
// The products fit in 64 bits for the ratios the conversions use (HZ over
// 1,000 or 1,000,000).
func timeconst(b, n, d uint64) mulAdj {
	var s uint64
	for (uint64(1)<<s*n+d-1)/d < uint64(1)<<(b-1) {
		s++
	}
	dr := d / gcd(n, d)
	return mulAdj{mul: (uint64(1)<<s*n + d - 1) / d, adj: (uint64(1) << s) * (dr - 1) / dr, shr: s}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
