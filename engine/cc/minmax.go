package cc

// minmaxSample is struct minmax_sample: a value and the time (in the
// caller's unit: BBR uses packet-timed round counts) it was measured.
type minmaxSample struct {
	t, v uint32
}

// minmax is struct minmax from lib/win_minmax.c: Kathleen Nichols' windowed
// max tracker, keeping the best, second and third best values so the max
// over a sliding window costs constant space and time.
type minmax struct {
	s [3]minmaxSample
}

// get follows minmax_get.
func (m *minmax) get() uint32 { return m.s[0].v }

// reset follows minmax_reset: forget everything and start from (t, meas).
func (m *minmax) reset(t, meas uint32) uint32 {
	v := minmaxSample{t: t, v: meas}
	m.s = [3]minmaxSample{v, v, v}
	return m.s[0].v
}

// subwinUpdate follows minmax_subwin_update: as time advances, promote the
// 2nd and 3rd choices and keep them spread over the window.
func (m *minmax) subwinUpdate(win uint32, val minmaxSample) uint32 {
	dt := val.t - m.s[0].t // u32 arithmetic, wraps as in the kernel
	switch {
	case dt > win:
		// The whole window passed without a new best: shift choices; the
		// 2nd choice may be stale too, so possibly shift twice.
		m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		if val.t-m.s[0].t > win {
			m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		}
	case m.s[1].t == m.s[0].t && dt > win/4:
		// A quarter window without a new val: take a 2nd choice from the
		// 2nd quarter.
		m.s[1], m.s[2] = val, val
	case m.s[2].t == m.s[1].t && dt > win/2:
		// Half a window: take a 3rd choice from the last half.
		m.s[2] = val
	}
	return m.s[0].v
}

// runningMax follows minmax_running_max.
func (m *minmax) runningMax(win, t, meas uint32) uint32 {
	val := minmaxSample{t: t, v: meas}
	if val.v >= m.s[0].v || val.t-m.s[2].t > win {
		return m.reset(t, meas) // new max, or nothing left in the window
	}
	if val.v >= m.s[1].v {
		m.s[1], m.s[2] = val, val
	} else if val.v >= m.s[2].v {
		m.s[2] = val
	}
	return m.subwinUpdate(win, val)
}
