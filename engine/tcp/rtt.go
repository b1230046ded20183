package tcp

import (
	"math"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/sim"
)

// Kernel timer constants of the sender (include/net/tcp.h); those counted
// in jiffies are hzClock's.
const (
	rtoMax         = 120 * sim.Second // TCP_RTO_MAX
	timeoutInit    = sim.Second       // TCP_TIMEOUT_INIT: SYN and no-RTT RTO
	rtoMinUs       = 200000           // tcp_rto_min_us(): TCP_RTO_MIN, 200 ms at any HZ
	synRetriesMax  = 6                // sysctl_tcp_syn_retries
	synLinearRTOs  = 4                // sysctl_tcp_syn_linear_timeouts (6.5+)
	reorderingInit = 3                // sysctl_tcp_reordering
	reorderingMax  = 300              // sysctl_tcp_max_reordering
)

// toUs converts a duration to whole microseconds, the kernel's tcp_mstamp unit.
func toUs(d sim.Duration) int64 { return int64(d / sim.Microsecond) }

// rttEstimator holds the kernel's RTT state in its own units: srtt in
// microseconds << 3, mdev and rttvar in microseconds (scaled by 4 as the
// kernel keeps them: rto = srtt/8 + rttvar).
type rttEstimator struct {
	srttUs8   int64 // tp->srtt_us
	mdevUs    int64 // tp->mdev_us
	mdevMaxUs int64 // tp->mdev_max_us
	rttvarUs  int64 // tp->rttvar_us
	rttSeq    uint64
	rto       sim.Duration // icsk_rto (before backoff is applied by the timer)
	minRTT    minRTTFilter
	hz        hzClock
}

// sample follows tcp_rtt_estimator in tcp_input.c (Van Jacobson's algorithm
// with the kernel's mdev_max/rttvar refinement). sndUna and sndNxt are the
// sender's sequence numbers at the sample.
func (r *rttEstimator) sample(mUs int64, sndUna, sndNxt uint64) {
	m := mUs
	srtt := r.srttUs8
	if srtt != 0 {
		m -= srtt >> 3 // m is now the error in the estimate
		srtt += m      // rtt = 7/8 rtt + 1/8 new
		if m < 0 {
			m = -m
			m -= r.mdevUs >> 2
			// A sample below the estimate moves mdev 8 times more
			// slowly, so RTT decreases do not inflate the RTO.
			if m > 0 {
				m >>= 3
			}
		} else {
			m -= r.mdevUs >> 2
		}
		r.mdevUs += m // mdev = 3/4 mdev + 1/4 new
		if r.mdevUs > r.mdevMaxUs {
			r.mdevMaxUs = r.mdevUs
			if r.mdevMaxUs > r.rttvarUs {
				r.rttvarUs = r.mdevMaxUs
			}
		}
		if sndUna > r.rttSeq {
			// Once per RTT, let rttvar decay towards this RTT's mdev_max.
			if r.mdevMaxUs < r.rttvarUs {
				r.rttvarUs -= (r.rttvarUs - r.mdevMaxUs) >> 2
			}
			r.rttSeq = sndNxt
			r.mdevMaxUs = rtoMinUs
		}
	} else {
		srtt = m << 3
		r.mdevUs = m << 1 // makes the first RTO 3·RTT
		r.rttvarUs = max(r.mdevUs, rtoMinUs)
		r.mdevMaxUs = r.rttvarUs
		r.rttSeq = sndNxt
	}
	r.srttUs8 = max(1, srtt)
}

// setRTO follows tcp_set_rto / __tcp_set_rto / tcp_bound_rto:
// rto = srtt + rttvar (already ≥ 200 ms through rttvar's floor), rounded up
// to jiffies and capped at TCP_RTO_MAX.
func (r *rttEstimator) setRTO() {
	r.rto = min(r.hz.usToJiffies(r.srttUs8>>3+r.rttvarUs), rtoMax)
}

// srtt is the smoothed RTT as a duration.
func (r *rttEstimator) srtt() sim.Duration { return sim.Duration(r.srttUs8>>3) * sim.Microsecond }

// rttvar is the RTT variance term of the RTO (rttvar_us / 4 is the RFC
// 6298 RTTVAR; the kernel keeps it scaled by 4).
func (r *rttEstimator) rttvar() sim.Duration { return sim.Duration(r.rttvarUs>>2) * sim.Microsecond }

// minRTTUs is tcp_min_rtt(): the windowed minimum, ^0 (all ones) before any
// sample as the kernel's minmax reports ~0U.
func (r *rttEstimator) minRTTUs() int64 {
	if !r.minRTT.valid {
		return 1<<32 - 1
	}
	return r.minRTT.get()
}

// minRTTFilter is tp->rtt_min: lib/win_minmax.c's windowed running minimum
// (cc.Minmax) on tcp_jiffies32, so a minimum expires at the tick the
// kernel's does, with valid standing in for the ~0U the kernel's filter
// holds before any sample.
type minRTTFilter struct {
	m     cc.Minmax[int64]
	valid bool
}

// runningMin follows minmax_running_min at jiffy j over a window of win
// ticks; the first sample resets the filter.
func (f *minRTTFilter) runningMin(win, j, v int64) {
	if !f.valid {
		f.m.Reset(j, v)
		f.valid = true
		return
	}
	f.m.RunningMin(win, j, v)
}

// get follows minmax_get.
func (f *minRTTFilter) get() int64 { return f.m.Get() }

// rttTsoptUs follows tcp_rtt_tsopt_us: the timestamp ticks (ms) since the
// echoed one, in µs, a delta of 0 taken as least; -1, no sample, for an
// echo from the future or more than INT_MAX/1000 ticks (35.8 min) old.
func rttTsoptUs(now, tsecr, least uint32) int64 {
	delta := now - tsecr
	if delta >= math.MaxInt32/1000 {
		return -1
	}
	if delta == 0 {
		delta = least
	}
	return int64(delta) * 1000
}
