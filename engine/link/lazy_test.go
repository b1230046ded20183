package link

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A FIFO direction at 12 Mbps (1500 B in exactly 1 ms) with a 5 ms delay,
// fed 20 packets every 0.25 ms, builds a queue and serves it back to back:
// packet k starts at k ms and arrives at k + 1 + 5 ms, by hand. Served
// lazily, the direction's only events are the arrivals, one per packet
// (the first packet's start needs none: it passes an idle link). The sends
// at 1, 2, 3 and 4 ms come at the picosecond a queued packet starts: four
// ties, each served first.
func TestLazyServesBackToBack(t *testing.T) {
	s, d, src, a := testDir(Config{Rate: 12 * units.Mbps, Delay: 5 * sim.Millisecond}, 100, 20, 250*sim.Microsecond, 1)
	s.Run()
	if len(a.at) != 20 {
		t.Fatalf("%d arrivals, want 20", len(a.at))
	}
	for k, at := range a.at {
		if want := sim.Time(k+6) * sim.Time(sim.Millisecond); at != want || a.seq[k] != uint64(k) {
			t.Errorf("arrival %d: packet %d at %v, want packet %d at %v", k, a.seq[k], at, k, want)
		}
	}
	if got, want := s.Events(), uint64(20+20); got != want {
		t.Errorf("events = %d, want %d (20 sends, 20 arrivals)", got, want)
	}
	if d.Ties() != 4 {
		t.Errorf("Ties() = %d, want 4", d.Ties())
	}
	if len(src.sent) != 20 {
		t.Errorf("%d sent, want 20", len(src.sent))
	}
}

// An outage stops the serialiser and the wire runs dry; the queue resumes
// at the outage's end, and that one start costs an event: at 12 Mbps,
// 1 ms delay, 10 packets sent at 0, down from 2.5 ms to 7 ms. Packets 0–1
// start at 0 and 1 ms; packet 2 would start at 2 ms (before the outage),
// 3 at 3 ms — inside it — so 3 starts at 7 ms, and k ≥ 3 at 4 + k ms; each
// arrives 2 ms after its start (1 ms serialisation, 1 ms delay).
func TestLazyResumesAfterOutage(t *testing.T) {
	out := &config.Outages{Windows: []config.OutageWindow{{At: 2500 * sim.Microsecond, Duration: 4500 * sim.Microsecond}}}
	s, d, _, a := testDir(Config{Rate: 12 * units.Mbps, Delay: sim.Millisecond, Outages: out}, 100, 10, 0, 1)
	s.Run()
	for k, at := range a.at {
		start := sim.Time(k) * sim.Time(sim.Millisecond)
		if k >= 3 {
			start = sim.Time(4+k) * sim.Time(sim.Millisecond)
		}
		if want := start.Add(2 * sim.Millisecond); at != want {
			t.Errorf("arrival %d at %v, want %v", k, at, want)
		}
	}
	if len(a.at) != 10 {
		t.Fatalf("%d arrivals, want 10", len(a.at))
	}
	// 10 sends, 10 arrivals, and one kindTxDone at 7 ms: the wire's last
	// packet (2, arriving at 4 ms) arrives before the next start.
	if got, want := s.Events(), uint64(10+10+1); got != want {
		t.Errorf("events = %d, want %d", got, want)
	}
	_ = d
}

// A non-looping trace that runs out leaves its queue unserved; a constant
// rate set later serves it lazily from that instant: 5 packets at 0, a
// trace of two opportunities (1 and 2 ms), then 12 Mbps (1 ms a packet)
// from 10 ms, 1 ms delay: the last three start at 10, 11 and 12 ms and
// arrive 2 ms later.
func TestLazyTakesOverAnEndedTrace(t *testing.T) {
	tr := &config.TraceLink{Opportunities: []uint64{1, 2}}
	s, d, _, a := testDir(Config{Delay: sim.Millisecond, Trace: tr}, 100, 5, 0, 1)
	s.RunUntil(10 * sim.Time(sim.Millisecond))
	if len(a.at) != 2 {
		t.Fatalf("%d arrivals while the trace lasted, want 2", len(a.at))
	}
	d.SetRate(12 * units.Mbps)
	s.Run()
	if len(a.at) != 5 {
		t.Fatalf("%d arrivals, want 5", len(a.at))
	}
	for k, at := range a.at[2:] {
		if want := sim.Time(12+k) * sim.Time(sim.Millisecond); at != want {
			t.Errorf("arrival %d at %v, want %v", k+2, at, want)
		}
	}
}
