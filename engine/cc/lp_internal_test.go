package cc

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// newLP is an LP attached to a state as a flow attaches it.
func newLP() (*LP, *State) {
	var now sim.Time
	st := &State{Signals: NewSignals(nil, &now), CwndPkts: 100, SSThreshPkts: 1 << 30, CwndClampPkts: 1 << 30}
	l := &LP{}
	l.Init(st)
	return l, st
}

// ack feeds LP one ACK: the peer's timestamp, the echo of ours, our clock
// (all ms, as tcp_time_stamp_ts) and the ACK's RTT.
func (l *LP) ack(st *State, tsval, tsecr, now uint32, rtt sim.Duration) {
	st.RcvTSVal, st.RcvTSEcr, st.TSNow = tsval, tsecr, now
	l.PktsAcked(st, AckSample{PktsAcked: 1, RTT: rtt})
}

// The remote HZ estimate, worked by hand from tcp_lp_remote_hz_estimator:
// the first ACK only records the reference stamps; one that moves the
// peer's stamp by 10 ms and the echo by 10 ms gives m = 1000·10/10, taken
// whole (rhz = 1000 << 6); one of 3 against 2 gives m = 1500, of which
// 1/64 of the error is added: 64,000 + 500 = 64,500, so 1007 Hz. An ACK
// that moves only one of the two stamps leaves the estimate alone but
// still takes its stamps as the new references.
func TestLPRemoteHZHandWorked(t *testing.T) {
	l, st := newLP()
	const rtt = 40 * sim.Millisecond
	for _, step := range []struct {
		tsval, tsecr uint32
		want         uint32
	}{
		{5000, 1000, 0},
		{5010, 1010, 1000},
		{5013, 1012, 1007},
		{5013, 1020, 1007}, // the peer's stamp did not move
		{5015, 1024, 999},  // m = 1000·2/4 = 500: (64,448 − 507) >> 6
	} {
		l.ack(st, step.tsval, step.tsecr, step.tsecr+40, rtt)
		if l.remoteHZ != step.want {
			t.Fatalf("after tsval %d tsecr %d: remote_hz %d, want %d", step.tsval, step.tsecr, l.remoteHZ, step.want)
		}
	}
}

// Above 1000 Hz the kernel's LP_RESOL / remote_hz is 0, so the one-way
// delay is 0 − tsecr as a u32; at or below it (down to 501 Hz), the scale
// is 1 and the delay is tsval − tsecr.
func TestLPOneWayDelayScale(t *testing.T) {
	l, st := newLP()
	l.ack(st, 5000, 1000, 1040, 40*sim.Millisecond)
	l.ack(st, 5010, 1010, 1050, 40*sim.Millisecond) // 1000 Hz
	if l.owd != 4000 {
		t.Fatalf("at 1000 Hz owd %d, want 5010 − 1010 = 4000", l.owd)
	}
	l.ack(st, 5013, 1012, 1052, 40*sim.Millisecond) // 1007 Hz
	if want := uint32(1<<32 - 1012); l.owd != want {
		t.Fatalf("at 1007 Hz owd %d, want 2^32 − 1012 = %d", l.owd, want)
	}
}

// The first delay sample is a congestion indication: owd_min, owd_max and
// sowd >> 3 are all that sample, and the kernel's test is strictly below
// owd_min + 15 % of nothing. So LP halves its window on its first sample
// and restarts min and max at sowd >> 3 and sowd >> 2. Within the
// inference time (3 × the echo's RTT, in ms) Reno's growth is off, and a
// second indication drops the window to 1. Worked by hand (same clock at
// both ends, tcp_timestamps 2; stamps in ms):
//
//	tsecr  tsval  now   owd  sowd>>3  min  max  threshold         cwnd
//	1000   1020   1040   -     -       -    -   (references)       100
//	1010   1030   1050  20    20      20   20   20 + 0            50, cut
//	1020   1040   1060  20    20      20   40   20 + 15·20/100 = 23  50
//	1020   1100   1100  80    27      20   40   23 (echo unmoved:   1, cut within
//	                                            rate estimate kept)     1100 − 1050 < 3·80
//	1400   1420   1440  20    26      20   55   20 + 15·35/100 = 25  1, cut (not
//	                                                                 within: 340 ≥ 120)
//
// and after the last ACK's cut, outside the inference time it was tested
// against, CongAvoid grows the window again (slow start: 1 → 2).
func TestLPCutsHalfThenToOne(t *testing.T) {
	l, st := newLP()
	steps := []struct {
		tsecr, tsval, now uint32
		cwnd              uint32
		withinInf         bool
	}{
		{1000, 1020, 1040, 100, false},
		{1010, 1030, 1050, 50, false},
		{1020, 1040, 1060, 50, true},
		{1020, 1100, 1100, 1, true},
		{1400, 1420, 1440, 1, false},
	}
	for i, s := range steps {
		l.ack(st, s.tsval, s.tsecr, s.now, sim.Duration(s.now-s.tsecr)*sim.Millisecond)
		if st.CwndPkts != s.cwnd || (l.flag&lpWithinInf != 0) != s.withinInf {
			t.Fatalf("ACK %d (tsecr %d tsval %d): cwnd %d, within inference %v; want %d, %v (sowd>>3 %d, min %d, max %d)",
				i, s.tsecr, s.tsval, st.CwndPkts, l.flag&lpWithinInf != 0, s.cwnd, s.withinInf, l.sowd>>3, l.owdMin, l.owdMax)
		}
		if i == 2 {
			st.CwndLimited = true
			l.CongAvoid(st, 1)
			if st.CwndPkts != 50 {
				t.Fatalf("CongAvoid within the inference time grew cwnd to %d", st.CwndPkts)
			}
		}
	}
	if l.remoteHZ != 997 {
		t.Fatalf("remote_hz %d, want (64,000 + 1000·320/380 − 1000) >> 6 = 997", l.remoteHZ)
	}
	l.CongAvoid(st, 1)
	if st.CwndPkts != 2 {
		t.Fatalf("after the inference time cwnd %d, want Reno's slow start to 2", st.CwndPkts)
	}
}

// With Linux's default random timestamp offsets, the delay LP measures is
// the peer's offset plus the real one, and sowd keeps it << 3 in a u32.
//   - From 2^29 up, sowd wraps: sowd >> 3 is the delay mod 2^29, below
//     owd_min, so no delay, however high, is ever an indication: LP is
//     Reno.
//   - Below 2^29 the first sample cuts (see above), and the cut sets
//     owd_max to twice the offset: the threshold is 15 % of the offset
//     above owd_min, out of reach of any queue.
//   - Only with no offset (tcp_timestamps 2) does a queue of a few
//     milliseconds count: the delay here climbs from 20 to 100 ms, and LP
//     cuts to 1 within the inference time.
//
// The delay steps on ACKs that echo the stamp before them, so the remote
// HZ estimate stays at exactly 1000 (an estimate above 1000 would zero
// the scale; see TestLPOneWayDelayScale).
func TestLPOffsetDecidesWhetherItYields(t *testing.T) {
	for _, tc := range []struct {
		name     string
		offset   uint32
		wantCuts int
		wantCwnd uint32
	}{
		{"no offset (tcp_timestamps 2)", 0, 3, 1},
		{"offset 2^28", 1 << 28, 1, 50},
		{"offset 2^29", 1 << 29, 0, 100},
		{"offset 0xf0000000", 0xf0000000, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, st := newLP()
			cuts := 0
			owd, tsecr := uint32(20), uint32(1000)
			ack := func() {
				prev := st.CwndPkts
				l.ack(st, tc.offset+tsecr+owd, tsecr, tsecr+2*owd, sim.Duration(2*owd)*sim.Millisecond)
				if st.CwndPkts < prev {
					cuts++
				}
				if l.remoteHZ != 0 && l.remoteHZ != 1000 {
					t.Fatalf("remote_hz %d, want 1000", l.remoteHZ)
				}
			}
			ack()
			next := func(n int) {
				for range n {
					tsecr += 10
					ack()
				}
			}
			next(60)
			for owd < 100 {
				owd += 20
				ack() // the echo has not moved
				next(1)
			}
			next(30)
			if cuts != tc.wantCuts || st.CwndPkts != tc.wantCwnd {
				t.Fatalf("offset %#x: %d cuts, cwnd %d; want %d, %d", tc.offset, cuts, st.CwndPkts, tc.wantCuts, tc.wantCwnd)
			}
		})
	}
}
