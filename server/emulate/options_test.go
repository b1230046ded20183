package emulate

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// A kernel run samples TCP_INFO at the interval asked for, else at a
// sampled trace's, else every 5 ms; never at 0, which had the relay's loop
// sample on every turn when compare handed it a change trace turned into
// a sampled one with no interval (lateness p99 631 ms at 100 Mbps).
func TestSampleIntervalIsNeverZero(t *testing.T) {
	ms := sim.Millisecond
	for _, c := range []struct {
		set   sim.Duration
		trace config.Trace
		want  sim.Duration
	}{
		{0, config.Trace{Detail: config.TraceChange}, 5 * ms},
		{0, config.Trace{Detail: config.TraceSampled}, 5 * ms},
		{0, config.Trace{Detail: config.TraceSampled, Interval: 10 * ms}, 10 * ms},
		{0, config.Trace{Detail: config.TraceSummary}, 5 * ms},
		{2 * ms, config.Trace{Detail: config.TraceSampled, Interval: 10 * ms}, 2 * ms},
	} {
		if got := sampleInterval(c.set, c.trace); got != c.want {
			t.Errorf("sampleInterval(%v, %+v) = %v, want %v", c.set, c.trace, got, c.want)
		}
	}
}
