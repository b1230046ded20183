package tcp

import (
	"github.com/ccscope/ccscope/engine/jiffy"
	"github.com/ccscope/ccscope/engine/sim"
)

// hzClock is the kernel's jiffies clock at CONFIG_HZ
// (config.TCPOptions.HZ): the delayed-ACK, loss-probe, reordering and RTO
// timers round to its ticks, and the constants of include/net/tcp.h are
// counted in them (TCP_RTO_MIN = HZ/5, TCP_ATO_MIN = HZ/25, …), so at
// HZ = 250 a timer rounds up to 4 ms where at 1000 it rounds to 1 ms.
// TCP_TIMEOUT_MIN_US, which the loss-probe and reordering timers add before
// rounding, is 2 ms whatever HZ.
//
// zero is the kernel clock's reading at the run's time 0 (config.KernelClock):
// its ticks, and the timer wheel's buckets, fall wherever that puts them,
// as a kernel's fall wherever its uptime does.
type hzClock struct {
	hz   int64        // 0 (the zero value) is 1000
	tick sim.Duration // the tick at an HZ other than 1000
	zero sim.Duration // the kernel clock's reading at time 0
}

func newHZClock(hz int, zero sim.Duration) hzClock {
	if hz == 1000 || hz == 0 {
		return hzClock{zero: zero} // odd is then one comparison, and the fast paths inline
	}
	return hzClock{int64(hz), jiffy.Tick(uint32(hz)), zero}
}

// HZ is the clock's rate.
func (c hzClock) HZ() int64 {
	if c.hz == 0 {
		return 1000
	}
	return c.hz
}

// jiffy is one tick, TICK_NSEC (3,333,333 ns at HZ 300). The default HZ's
// tick is a constant: the timers ask for it on every ACK.
func (c hzClock) jiffy() sim.Duration {
	if c.hz == 0 {
		return sim.Millisecond
	}
	return c.tick
}

// jiffies is the tick count at t.
func (c hzClock) jiffies(t sim.Time) int64 {
	t += sim.Time(c.zero)
	if c.odd() {
		return int64(t / sim.Time(c.jiffy()))
	}
	return int64(t / sim.Time(sim.Millisecond))
}

// since is how long before now t was in whole ticks, as the kernel's
// tcp_jiffies32 − stamp: the idle and application-limited tests count it.
func (c hzClock) since(now, t sim.Time) sim.Duration {
	return sim.Duration(c.jiffies(now)-c.jiffies(t)) * c.jiffy()
}

// odd is an HZ other than 1000. At 1000 the arithmetic divides by
// constants (multiplies) and inlines: the timers use the clock on every
// ACK, and the general forms cost the default run 2 % more instructions.
func (c hzClock) odd() bool { return c.hz != 0 }

// at is the time tick j begins, when a timer set to expire at j fires.
func (c hzClock) at(j int64) sim.Time { return sim.Time(j*int64(c.jiffy())) - sim.Time(c.zero) }

// ms is the kernel's millisecond clock at t, as tcp_time_stamp_ms reads it.
func (c hzClock) ms(t sim.Time) uint32 {
	return uint32((t + sim.Time(c.zero)) / sim.Time(sim.Millisecond))
}

// usecs is usecs_to_jiffies: microseconds rounded up to whole ticks.
func (c hzClock) usecs(us int64) int64 {
	if c.odd() {
		return c.usecsOdd(us)
	}
	return (us + 999) / 1000
}

//go:noinline
func (c hzClock) usecsOdd(us int64) int64 {
	return int64(jiffy.UsecsTo(uint32(c.hz), uint32(us)))
}

// msecs is msecs_to_jiffies.
func (c hzClock) msecs(ms int64) int64 {
	if c.odd() {
		return int64(jiffy.MsecsTo(uint32(c.hz), uint32(ms)))
	}
	return ms
}

// paced is when, whole ticks, plus a pacing delay in the ticks
// nsecs_to_jiffies gives it. At HZ 1000 that is the sum: a tick is a whole
// number of the delay's nanoseconds.
func (c hzClock) paced(when, delay sim.Duration) sim.Duration {
	if c.odd() {
		return c.pacedOdd(when, delay)
	}
	return when + delay
}

//go:noinline
func (c hzClock) pacedOdd(when, delay sim.Duration) sim.Duration {
	ticks := int64(when/c.jiffy()) + int64(jiffy.NsecsTo(uint32(c.hz), uint64(delay/sim.Nanosecond)))
	return sim.Duration(ticks) * c.jiffy()
}

// usecsOf is jiffies_to_usecs of a count of ticks held as a duration (an
// RTO): at HZ 300 a tick is 3,333 µs to it, not 3,333.333.
func (c hzClock) usecsOf(d sim.Duration) int64 {
	if c.odd() {
		return c.usecsOfOdd(d)
	}
	return toUs(d)
}

//go:noinline
func (c hzClock) usecsOfOdd(d sim.Duration) int64 {
	return int64(jiffy.ToUsecs(uint32(c.hz), uint64(d/c.jiffy())))
}

// usToJiffies is usecs_to_jiffies as a duration.
func (c hzClock) usToJiffies(us int64) sim.Duration {
	if c.odd() {
		return c.usToJiffiesOdd(us)
	}
	return sim.Duration((us+999)/1000) * sim.Millisecond
}

//go:noinline
func (c hzClock) usToJiffiesOdd(us int64) sim.Duration {
	return sim.Duration(c.usecsOdd(us)) * c.jiffy()
}

// jiffyUs is jiffies_to_usecs(1).
func (c hzClock) jiffyUs() int64 {
	if c.hz == 0 {
		return 1000
	}
	return int64(jiffy.ToUsecs(uint32(c.hz), 1))
}

// timeoutMinUs is TCP_TIMEOUT_MIN_US, 2 ms (2*USEC_PER_MSEC) whatever HZ:
// not TCP_TIMEOUT_MIN, which is 2 jiffies.
const timeoutMinUs = 2000

// The constants of include/net/tcp.h that are counts of ticks, as literals
// at HZ = 1000.
func (c hzClock) atoMin() int64      { return c.ticks(40, 25) }        // TCP_ATO_MIN = HZ/25
func (c hzClock) delackMin() int64   { return c.ticks(40, 25) }        // TCP_DELACK_MIN = HZ/25
func (c hzClock) delackMax() int64   { return c.ticks(200, 5) }        // TCP_DELACK_MAX = HZ/5
func (c hzClock) timeoutInit() int64 { return c.ticks(1000, 1) }       // TCP_TIMEOUT_INIT = HZ
func (c hzClock) rtoMin() int64      { return c.ticks(200, 5) }        // TCP_RTO_MIN = HZ/5
func (c hzClock) rtoMax() int64      { return 120 * c.ticks(1000, 1) } // TCP_RTO_MAX = 120·HZ
func (c hzClock) maxAto() int64      { return c.ticks(500, 2) }        // the delayed ACK's RTT-less bound, HZ/2
func (c hzClock) minRTTWlen() int64  { return 300 * c.ticks(1000, 1) } // sysctl_tcp_min_rtt_wlen (300 s)·HZ

// delackCap is tcp_delack_max (6.11+): min(icsk_delack_max, max(tcp_rto_min,
// 2) − 1), a tick under TCP_DELACK_MAX with the default RTO floor, so that a
// delayed ACK always leaves before the peer's minimum RTO.
func (c hzClock) delackCap() int64 { return min(c.delackMax(), max(c.rtoMin(), 2)-1) }

// ticks is HZ/div: at1000 at the default HZ.
func (c hzClock) ticks(at1000, div int64) int64 {
	if c.hz == 0 {
		return at1000
	}
	return c.hz / div
}

// bucket follows calc_wheel_index and calc_index (kernel/time/timer.c):
// the tick at which a timer_list armed at tick clk to expire at tick
// expires fires. The wheel's level n holds deltas from LVL_START(n) =
// 63·8^(n−1) ticks at a granularity of 8^n ticks, and the expiry is rounded
// up past expires to that granularity, so that a timer never fires early:
// one tick after expires on level 0 (under 63 ticks), up to 8 ticks after
// on level 1 (under 504), up to 64 on level 2, and so on. Beyond the last
// level's reach a timer fires at its limit (WHEEL_TIMEOUT_MAX).
func (c hzClock) bucket(clk, expires int64) int64 {
	const lvlStart1 = 63 // LVL_START(1): (LVL_SIZE − 1) << 0
	delta := expires - clk
	if delta < 0 {
		return clk
	}
	depth := 9 // LVL_DEPTH: 8 when HZ ≤ 100
	if c.HZ() <= 100 {
		depth = 8
	}
	lvl := 0
	for lvl < depth-1 && delta >= lvlStart1<<(3*lvl) {
		lvl++
	}
	if cutoff := int64(lvlStart1) << (3 * (depth - 1)); delta >= cutoff { // WHEEL_TIMEOUT_CUTOFF
		expires = clk + cutoff - 1<<(3*(depth-1)) // WHEEL_TIMEOUT_MAX
	}
	shift := 3 * lvl
	return (expires>>shift + 1) << shift
}

// wheelTimer is a timer_list: mod_timer sets it to expire at a tick, and it
// fires at its bucket's tick (bucket).
type wheelTimer struct {
	t       *sim.Timer
	expires int64    // the tick it was last set to expire at
	fires   sim.Time // when that setting fires; until then it is pending
}

// set is mod_timer(timer, expires) at now. A pending timer set to the
// expiry it already has keeps its bucket, as __mod_timer returns early
// then; the kernel's TCP leaves a cleared timer pending (no
// INET_CSK_CLEAR_TIMERS), so that holds after Stop too.
func (w *wheelTimer) set(c hzClock, now sim.Time, expires int64) {
	if now >= w.fires || expires != w.expires {
		w.expires = expires
		w.fires = c.at(c.bucket(c.jiffies(now), expires))
	}
	w.t.Arm(w.fires)
}
