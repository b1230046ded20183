package cc

// MinmaxTime is the unit a Minmax keeps time and values in: the kernel's u32
// (BBR's packet-timed round counts, rates in BW_UNIT) or a wider signed
// integer (the sender's picosecond clock and microsecond RTTs). Differences
// of u32 times wrap as the kernel's do.
type MinmaxTime interface{ ~uint32 | ~int64 }

// MinmaxSample is struct minmax_sample: a value and the time it was
// measured.
type MinmaxSample[T MinmaxTime] struct {
	T, V T
}

// Minmax is struct minmax from lib/win_minmax.c (6.x): Kathleen Nichols'
// windowed min/max tracker, keeping the best, second and third best values
// so the min or max over a sliding window costs constant space and time.
// engine/tcp's min_rtt filter and BBR's max-bandwidth filter share it.
type Minmax[T MinmaxTime] struct {
	s [3]MinmaxSample[T]
}

// Get follows minmax_get.
func (m *Minmax[T]) Get() T { return m.s[0].V }

// Reset follows minmax_reset: forget everything and start from (t, meas).
func (m *Minmax[T]) Reset(t, meas T) T {
	v := MinmaxSample[T]{T: t, V: meas}
	m.s = [3]MinmaxSample[T]{v, v, v}
	return m.s[0].V
}

// subwinUpdate follows minmax_subwin_update: as time advances, promote the
// 2nd and 3rd choices and keep them spread over the window.
func (m *Minmax[T]) subwinUpdate(win T, val MinmaxSample[T]) T {
	dt := val.T - m.s[0].T
	switch {
	case dt > win:
		// The whole window passed without a new best: shift choices; the
		// 2nd choice may be stale too, so possibly shift twice.
		m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		if val.T-m.s[0].T > win {
			m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		}
	case m.s[1].T == m.s[0].T && dt > win/4:
		// A quarter window without a new val: take a 2nd choice from the
		// 2nd quarter.
		m.s[1], m.s[2] = val, val
	case m.s[2].T == m.s[1].T && dt > win/2:
		// Half a window: take a 3rd choice from the last half.
		m.s[2] = val
	}
	return m.s[0].V
}

// RunningMax follows minmax_running_max.
func (m *Minmax[T]) RunningMax(win, t, meas T) T {
	val := MinmaxSample[T]{T: t, V: meas}
	if val.V >= m.s[0].V || val.T-m.s[2].T > win {
		return m.Reset(t, meas) // new max, or nothing left in the window
	}
	if val.V >= m.s[1].V {
		m.s[1], m.s[2] = val, val
	} else if val.V >= m.s[2].V {
		m.s[2] = val
	}
	return m.subwinUpdate(win, val)
}

// RunningMin follows minmax_running_min.
func (m *Minmax[T]) RunningMin(win, t, meas T) T {
	val := MinmaxSample[T]{T: t, V: meas}
	if val.V <= m.s[0].V || val.T-m.s[2].T > win {
		return m.Reset(t, meas) // new min, or nothing left in the window
	}
	if val.V <= m.s[1].V {
		m.s[1], m.s[2] = val, val
	} else if val.V <= m.s[2].V {
		m.s[2] = val
	}
	return m.subwinUpdate(win, val)
}
