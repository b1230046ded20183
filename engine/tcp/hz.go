package tcp

import "github.com/ccscope/ccscope/engine/sim"

// hzClock is the kernel's jiffies clock at CONFIG_HZ
// (config.TCPOptions.HZ): the delayed-ACK, loss-probe, reordering and RTO
// timers round to its ticks, and the constants of include/net/tcp.h are
// counted in them (TCP_RTO_MIN = HZ/5, TCP_ATO_MIN = HZ/25, …), so at
// HZ = 250 a timer rounds up to 4 ms where at 1000 it rounds to 1 ms, and
// TCP_TIMEOUT_MIN (2 jiffies) is 8 ms instead of 2.
type hzClock struct{ hz int64 } // 0 (the zero value) means 1000

func newHZClock(hz int) hzClock { return hzClock{int64(hz)} }

// HZ is the clock's rate.
func (c hzClock) HZ() int64 {
	if c.hz == 0 {
		return 1000
	}
	return c.hz
}

// jiffy is one tick (config allows only HZ that divide a second in ps).
func (c hzClock) jiffy() sim.Duration { return sim.Second / sim.Duration(c.HZ()) }

// jiffies is the tick count at t.
func (c hzClock) jiffies(t sim.Time) int64 { return int64(t) / int64(c.jiffy()) }

// at is the time tick j begins, when a timer set to expire at j fires.
func (c hzClock) at(j int64) sim.Time { return sim.Time(j * int64(c.jiffy())) }

// usecs is usecs_to_jiffies: microseconds rounded up to whole ticks.
func (c hzClock) usecs(us int64) int64 {
	per := c.jiffyUs()
	return (us + per - 1) / per
}

// usToJiffies is usecs_to_jiffies as a duration.
func (c hzClock) usToJiffies(us int64) sim.Duration { return sim.Duration(c.usecs(us)) * c.jiffy() }

// jiffyUs is jiffies_to_usecs(1).
func (c hzClock) jiffyUs() int64 { return 1_000_000 / c.HZ() }

// timeoutMinUs is TCP_TIMEOUT_MIN_US: 2 jiffies.
func (c hzClock) timeoutMinUs() int64 { return 2 * c.jiffyUs() }

// The constants of include/net/tcp.h that are counts of ticks.
func (c hzClock) atoMin() int64      { return c.HZ() / 25 }  // TCP_ATO_MIN
func (c hzClock) delackMin() int64   { return c.HZ() / 25 }  // TCP_DELACK_MIN
func (c hzClock) delackMax() int64   { return c.HZ() / 5 }   // TCP_DELACK_MAX
func (c hzClock) timeoutInit() int64 { return c.HZ() }       // TCP_TIMEOUT_INIT
func (c hzClock) rtoMin() int64      { return c.HZ() / 5 }   // TCP_RTO_MIN
func (c hzClock) rtoMax() int64      { return 120 * c.HZ() } // TCP_RTO_MAX
func (c hzClock) maxAto() int64      { return c.HZ() / 2 }   // the delayed ACK's RTT-less bound, HZ/2
