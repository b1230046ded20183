package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// The RTO follows RFC 6298 §2 as the kernel computes it (tcp_rtt_estimator,
// tcp_set_rto): on the first sample R, SRTT = R and RTTVAR = R/2, so
// RTO = R + 4·R/2 = 3R — but the kernel floors the variance term at
// TCP_RTO_MIN (rttvar_us ≥ 200 ms), so RTO = R + max(2R, 200 ms). A second
// sample R' updates SRTT = 7/8·SRTT + 1/8·R' and mdev = 3/4·mdev + 1/4·|R'−SRTT|
// (scaled by 4 in the kernel), rttvar tracking the larger of the two.
func TestRTOFromSamples(t *testing.T) {
	ms := func(v int64) int64 { return v * 1000 }
	for _, tc := range []struct {
		name    string
		samples []int64 // µs
		srtt    sim.Duration
		rto     sim.Duration
	}{
		// R = 300 ms: 3R = 900 ms (above the floor).
		{"first sample 300ms", []int64{ms(300)}, 300 * sim.Millisecond, 900 * sim.Millisecond},
		// R = 40 ms: 40 + max(80, 200) = 240 ms.
		{"first sample 40ms", []int64{ms(40)}, 40 * sim.Millisecond, 240 * sim.Millisecond},
		// R = 100 ms then 180 ms: SRTT = 100 + 80/8 = 110 ms; mdev (the
		// kernel's, 4·RFC RTTVAR) = 200 + (80 − 200/4) = 230 ms, so
		// rttvar = max(230, 200) ms and RTO = 110 + 230 = 340 ms.
		{"rise", []int64{ms(100), ms(180)}, 110 * sim.Millisecond, 340 * sim.Millisecond},
		// R = 100 ms then 20 ms: SRTT = 100 − 80/8 = 90 ms; a fall moves
		// mdev 8× slower: mdev = 200 + (80 − 50)/8 = 203.75 → 203 ms (µs
		// integer arithmetic: 200000 + 30000>>3 = 203750), RTO = 90 + 203.75
		// = 293.75 → 294 ms (rounded up to jiffies).
		{"fall", []int64{ms(100), ms(20)}, 90 * sim.Millisecond, 294 * sim.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rttEstimator
			for _, s := range tc.samples {
				r.sample(s, 1, 1)
				r.setRTO()
			}
			if got := r.srtt(); got != tc.srtt {
				t.Errorf("srtt = %v, want %v", got, tc.srtt)
			}
			if r.rto != tc.rto {
				t.Errorf("rto = %v, want %v", r.rto, tc.rto)
			}
		})
	}
}

// The windowed min filter (lib/win_minmax.c) keeps the minimum over its window
// and forgets it once it is older than the window (times in ticks).
func TestMinRTTWindow(t *testing.T) {
	var m minRTTFilter
	const win = 10000
	m.runningMin(win, 0, 50)
	m.runningMin(win, 1000, 60)
	m.runningMin(win, 2000, 40)
	if m.get() != 40 {
		t.Errorf("min = %d, want 40", m.get())
	}
	m.runningMin(win, 5000, 70)
	m.runningMin(win, 13000, 80)
	if m.get() != 70 {
		t.Errorf("min after the 40 expired = %d, want 70 (the best sample within the window)", m.get())
	}
}

// tcp_update_rtt_min runs the filter on tcp_jiffies32 over
// tcp_min_rtt_wlen·HZ = 75,000 ticks at HZ 250: a minimum taken 1 ms into
// a tick is still the minimum 300 s and 2 ms later, 75,000 ticks on (not
// more than the window), and gone at the next tick, when the sample of the
// tick before, the filter's second choice, takes its place. On the
// picosecond clock it had expired 300 s + 1 ps on.
func TestMinRTTExpiresByTheTick(t *testing.T) {
	d := &DataSender{}
	d.rtt.hz = newHZClock(250, 0)
	t0 := sim.Time(7*sim.Second + sim.Millisecond)
	for _, s := range []struct {
		at   sim.Time
		us   int64
		want int64
	}{
		{t0, 1, 1},
		{t0 + sim.Time(300*sim.Second+2*sim.Millisecond), 252, 1},
		{t0 + sim.Time(300*sim.Second+3*sim.Millisecond), 253, 252},
	} {
		d.st.Now = s.at
		d.updateRTTMin(s.us, 0)
		if got := d.rtt.minRTTUs(); got != s.want {
			t.Errorf("at %v, sample %d µs: min_rtt %d µs, want %d", s.at, s.us, got, s.want)
		}
	}
}

// tcp_update_rtt_min feeds the windowed min filter `rtt_us ? :
// jiffies_to_usecs(1)`: a sub-millisecond RTT is kept as measured, and only
// a zero sample (an RTT below the microsecond clock's resolution) becomes
// 1 ms. The handshake is slowed by 5 ms each way so that the data's samples
// set the minimum. Data segments of 1500 wire bytes and ACKs of 52 bytes on
// 10 Gbps with 100 µs each way take 100 + 1.2 + 100 + 0.04 µs: 201 µs in the
// kernel's whole microseconds. A one-segment transfer at 100 Gbps with no
// delay has an RTT of 0.12 µs, a zero sample: 1000 µs.
func TestMinRTTKeepsSubMillisecondSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate units.BitRate
		owd  sim.Duration
		size units.Bytes
		want int64
	}{
		{"200 µs path", 10 * units.Gbps, 100 * sim.Microsecond, units.MB, 201},
		{"zero sample", 100 * units.Gbps, 0, 1448, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := shHarness{cc: "reno", rate: tc.rate, owd: tc.owd, size: tc.size, opts: shLinuxOpts()}
			c := h.build(t)
			slowSYN := func(p *packet.Packet) sim.Duration {
				if p.Flags&packet.SYN != 0 {
					return 5 * sim.Millisecond
				}
				return 0
			}
			c.fwd.extra, c.rev.extra = slowSYN, slowSYN
			c.runUntil(sim.Time(sim.Second))
			if got := c.snd.rtt.minRTTUs(); got != tc.want {
				t.Errorf("tcp_min_rtt = %d µs, want %d", got, tc.want)
			}
		})
	}
}

// TestRTOAtHZ250: at CONFIG_HZ = 250 the RTO rounds up to 4 ms ticks
// (usecs_to_jiffies), so the "fall" case's 293.75 ms becomes 296 ms where
// HZ = 1000 gives 294; 240 ms is a whole number of ticks at both.
func TestRTOAtHZ250(t *testing.T) {
	for _, tc := range []struct {
		samples []int64 // µs
		rto     sim.Duration
	}{
		{[]int64{100000, 20000}, 296 * sim.Millisecond},
		{[]int64{40000}, 240 * sim.Millisecond},
	} {
		r := rttEstimator{hz: newHZClock(250, 0)}
		for _, s := range tc.samples {
			r.sample(s, 1, 1)
			r.setRTO()
		}
		if r.rto != tc.rto {
			t.Errorf("samples %v at HZ 250: rto = %v, want %v", tc.samples, r.rto, tc.rto)
		}
	}
}

// TestRTOAtHZ300: at CONFIG_HZ = 300 a tick is TICK_NSEC, 3,333,333 ns,
// and usecs_to_jiffies rounds up to thirds of 10 ms: the "fall" case's
// 293,750 µs is 88.125 ticks, so 89, 296.666637 ms; 240 ms is 72 ticks,
// 239.999976 ms. Read back as jiffies_to_usecs, 89 ticks are 296,666 µs
// (⌊89·10⁴/3⌋), not the 296,666.637 µs of their real time.
func TestRTOAtHZ300(t *testing.T) {
	for _, tc := range []struct {
		samples []int64 // µs
		ticks   int64
		us      int64
	}{
		{[]int64{100000, 20000}, 89, 296_666},
		{[]int64{40000}, 72, 240_000},
	} {
		r := rttEstimator{hz: newHZClock(300, 0)}
		for _, s := range tc.samples {
			r.sample(s, 1, 1)
			r.setRTO()
		}
		if want := sim.Duration(tc.ticks) * 3_333_333 * sim.Nanosecond; r.rto != want {
			t.Errorf("samples %v at HZ 300: rto = %v, want %d ticks, %v", tc.samples, r.rto, tc.ticks, want)
		}
		if got := r.hz.usecsOf(r.rto); got != tc.us {
			t.Errorf("samples %v at HZ 300: jiffies_to_usecs(rto) = %d µs, want %d", tc.samples, got, tc.us)
		}
	}
}

// TestHZClockConstants checks the clock against include/net/tcp.h and
// jiffies.h at each CONFIG_HZ: TCP_RTO_MIN = HZ/5 and TCP_ATO_MIN = HZ/25
// are 200 and 40 ms whatever HZ, and usecs_to_jiffies rounds up to a whole
// tick.
func TestHZClockConstants(t *testing.T) {
	for _, tc := range []struct {
		hz   int
		tick sim.Duration
		up   [3][2]int64 // usecs_to_jiffies(us) = ticks
	}{
		{100, 10 * sim.Millisecond, [3][2]int64{{1, 1}, {10000, 1}, {10001, 2}}},
		{250, 4 * sim.Millisecond, [3][2]int64{{1, 1}, {4000, 1}, {4001, 2}}},
		{1000, sim.Millisecond, [3][2]int64{{1, 1}, {1000, 1}, {1001, 2}}},
		{300, 3_333_333 * sim.Nanosecond, [3][2]int64{{1, 1}, {3333, 1}, {3334, 2}}},
	} {
		c := newHZClock(tc.hz, 0)
		if c.jiffy() != tc.tick {
			t.Errorf("HZ %d: tick %v, want %v", tc.hz, c.jiffy(), tc.tick)
		}
		// 200 and 40 ms, less the third of a nanosecond a tick falls
		// short of 1/HZ s at HZ 300.
		near := func(j int64, want sim.Duration) bool {
			d := sim.Duration(j) * c.jiffy()
			return d <= want && want-d < sim.Duration(j)*sim.Nanosecond
		}
		for name, j := range map[string]int64{"TCP_RTO_MIN": c.rtoMin(), "TCP_DELACK_MAX": c.delackMax()} {
			if !near(j, 200*sim.Millisecond) {
				t.Errorf("HZ %d: %s = %d ticks, %v; want 200 ms", tc.hz, name, j, sim.Duration(j)*c.jiffy())
			}
		}
		if j := c.atoMin(); !near(j, 40*sim.Millisecond) {
			t.Errorf("HZ %d: TCP_ATO_MIN = %d ticks, %v; want 40 ms", tc.hz, j, sim.Duration(j)*c.jiffy())
		}
		for _, u := range tc.up {
			if got := c.usecs(u[0]); got != u[1] {
				t.Errorf("HZ %d: usecs_to_jiffies(%d) = %d, want %d", tc.hz, u[0], got, u[1])
			}
		}
		if j := c.jiffies(sim.Time(9 * sim.Millisecond)); sim.Duration(j)*c.jiffy() > 9*sim.Millisecond || sim.Duration(j+1)*c.jiffy() <= 9*sim.Millisecond {
			t.Errorf("HZ %d: jiffies(9 ms) = %d, want the tick 9 ms falls in", tc.hz, j)
		}
	}
	if newHZClock(0, 0) != (hzClock{}) || (hzClock{}).HZ() != 1000 {
		t.Errorf("an unset HZ is not 1000")
	}
}

// TestTimerWheelBuckets checks hzClock.bucket against kernel/time/timer.c:
// level n of the wheel takes the delays from LVL_START(n) = 63·8^(n−1)
// ticks at a granularity of 8^n ticks, calc_index rounds the expiry up to
// the next multiple of the granularity strictly after it, and a delay past
// the last level (LVL_DEPTH 9 above HZ 100, 8 at 100) is cut to
// WHEEL_TIMEOUT_MAX, LVL_START(LVL_DEPTH) − the last granularity
// (62·8^(LVL_DEPTH−1) ticks), which calc_index rounds up like any other
// expiry, to 63·8^(LVL_DEPTH−1). Each case is worked by hand from those
// constants.
func TestTimerWheelBuckets(t *testing.T) {
	for _, tc := range []struct {
		name             string
		hz               int
		clk, expires, at int64
	}{
		{"delayed ACK, 40 ticks: level 0, the tick after", 1000, 1000, 1040, 1041},
		{"62 ticks: still level 0", 1000, 1000, 1062, 1063},
		{"63 ticks: level 1, 8-tick buckets", 1000, 1000, 1063, 1064},
		{"RTO 200 ticks", 1000, 1000, 1200, 1208},
		{"on a bucket boundary: the next one", 1000, 1000, 1216, 1224},
		{"503 ticks: last of level 1", 1000, 1000, 1503, 1504},
		{"504 ticks: level 2, 64-tick buckets", 1000, 1000, 1504, 1536},
		{"SYN, TCP_TIMEOUT_INIT from tick 0", 1000, 0, 1000, 1024},
		{"TCP_RTO_MAX at HZ 1000: level 4, 4096-tick buckets", 1000, 0, 120000, 122880},
		{"TCP_RTO_MAX at HZ 250 (30000 ticks): level 3, 512", 250, 0, 30000, 30208},
		{"already due", 1000, 100, 90, 100},
		{"beyond the wheel at HZ 1000: cut to 62·2^24, fires at 63·2^24", 1000, 0, 2_000_000_000, 63 << 24},
		{"beyond the wheel at HZ 100 (8 levels): cut to 62·2^21, fires at 63·2^21", 100, 0, 2_000_000_000, 63 << 21},
	} {
		if got := newHZClock(tc.hz, 0).bucket(tc.clk, tc.expires); got != tc.at {
			t.Errorf("%s: armed at tick %d to expire at %d fires at %d, want %d", tc.name, tc.clk, tc.expires, got, tc.at)
		}
	}
}

// A pending timer set again to the expiry it has keeps its bucket
// (__mod_timer returns at once), even where a timer newly armed for that
// expiry would land on a finer level; once it has fired, the same expiry
// is armed afresh.
func TestWheelTimerKeepsItsBucket(t *testing.T) {
	s := sim.New()
	w := wheelTimer{t: s.NewTimer(s.Register(noHandler{}, "t"), 1)}
	c := newHZClock(1000, 0)
	ms := func(n int64) sim.Time { return sim.Time(n * int64(sim.Millisecond)) }
	w.set(c, ms(1000), 1070) // 70 ticks: level 1
	w.set(c, ms(1010), 1070) // 60 ticks from here: level 0 if armed afresh
	if got := w.t.Deadline(); got != ms(1072) {
		t.Errorf("set again to its expiry, fires at %v, want 1072 ms", got)
	}
	w.set(c, ms(1010), 1069)
	if got := w.t.Deadline(); got != ms(1070) {
		t.Errorf("set to a new expiry 59 ticks ahead, fires at %v, want 1070 ms", got)
	}
	w.set(c, ms(1070), 1069)
	if got := w.t.Deadline(); got != ms(1070) {
		t.Errorf("set after firing to an expiry passed, fires at %v, want at once (1070 ms)", got)
	}
}

// A kernel clock that stood at 1,700,300 µs (425 ticks and 300 µs at HZ
// 250) when the run began: its ticks fall 3.7 ms, 7.7 ms, … into the run,
// the timestamp clock reads 1,700 ms at time 0 and turns 0.7 ms in, and a
// timer set at 10 ms to expire 70 ticks on (level 1, 8-tick buckets) fires
// at the first bucket boundary past its expiry, counted on that clock:
// jiffies(10 ms) = ⌊1,710.3 / 4⌋ = 427, the expiry 497, the bucket (497 >>
// 3 + 1) << 3 = 504, which begins at 504·4 − 1,700.3 = 315.7 ms.
func TestHZClockStandsWhereTheKernelsDoes(t *testing.T) {
	us := func(n int64) sim.Time { return sim.Time(n * int64(sim.Microsecond)) }
	c := newHZClock(250, 1_700_300*sim.Microsecond)
	for _, tc := range []struct {
		at   sim.Time
		tick int64
	}{{0, 425}, {us(3699), 425}, {us(3700), 426}, {us(7700), 427}} {
		if got := c.jiffies(tc.at); got != tc.tick {
			t.Errorf("jiffies(%v) = %d, want %d", tc.at, got, tc.tick)
		}
	}
	if got := c.at(426); got != us(3700) {
		t.Errorf("tick 426 begins at %v, want 3.7 ms", got)
	}
	if got, got2 := c.ms(us(699)), c.ms(us(700)); got != 1700 || got2 != 1701 {
		t.Errorf("timestamp clock at 0.699 ms and 0.7 ms: %d, %d; want 1700, 1701", got, got2)
	}
	s := sim.New()
	w := wheelTimer{t: s.NewTimer(s.Register(noHandler{}, "t"), 1)}
	now := us(10_000)
	w.set(c, now, c.jiffies(now)+70)
	if got := w.t.Deadline(); got != us(315_700) {
		t.Errorf("a timer 70 ticks on, set at 10 ms, fires at %v, want 315.7 ms", got)
	}
}

type noHandler struct{}

func (noHandler) Handle(sim.Event) {}

// tcp_rtt_tsopt_us by hand: a delta of 0 ticks is min_delta, a delta up to
// INT_MAX / 1000 − 1 = 2,147,482 ms is a sample, and anything at or past
// 2,147,483 ms (an echo 35.8 min old, or one from the future, as a u32
// difference) is none.
func TestRttTsoptUs(t *testing.T) {
	const now = 3_000_000
	for _, tc := range []struct {
		tsecr, least uint32
		want         int64
	}{
		{now, 1, 1000}, {now, 0, 0}, {now - 40, 1, 40000},
		{now - 2147482, 1, 2147482000}, {now - 2147483, 1, -1}, {now + 1, 1, -1},
	} {
		if got := rttTsoptUs(now, tc.tsecr, tc.least); got != tc.want {
			t.Errorf("tcp_rtt_tsopt_us(now %d, tsecr %d, min %d) = %d, want %d", now, tc.tsecr, tc.least, got, tc.want)
		}
	}
}
