package link

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/rng"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

type logRow struct {
	at    sim.Time
	rate  units.BitRate
	delay sim.Duration
}

type rowLog []logRow

func (l *rowLog) LinkChanged(_ *Dir, at sim.Time, rate units.BitRate, delay sim.Duration) {
	*l = append(*l, logRow{at, rate, delay})
}

// flapping is a capacity process between 40 and 7 Mbps with mean dwells
// of high and low, and dips to a quarter of the rate every every (mean),
// 3 ms long (Pareto, shape 1.5) and at most dipCap.
func flapping(high, low, every, dipCap sim.Duration) config.Capacity {
	return config.Capacity{
		States:      []config.CapacityState{{Rate: 40 * units.Mbps, Dwell: high}, {Rate: 7 * units.Mbps, Dwell: low}},
		Transitions: [][]float64{{0, 1}, {1, 0}},
		Dips:        &config.CapacityDips{Every: every, Depth: 0.25, Scale: 3 * sim.Millisecond, Shape: 1.5, Cap: dipCap},
	}
}

// The link log of a direction with a capacity process (two states, dips,
// some to no rate at all), periodic outages and a scheduled change of
// delay is the step function of its rate and delay: sampled every 100 µs
// over 5 s, it gives what a fresh copy of the process gives at that
// instant, 0 inside the scenario's outage windows, and the delay in force.
// It is the same whether the run is read every millisecond or only at its
// end, and the run's arrivals are the same with the log as without it.
func TestLinkLogFollowsTheRate(t *testing.T) {
	ms := sim.Millisecond
	c := flapping(137*ms, 61*ms, 90*ms, 40*ms)
	out := config.Outages{Start: 200 * ms, Every: 700 * ms, Duration: 50 * ms}
	const end = sim.Time(5 * sim.Second)
	run := func(log bool, step sim.Duration) (rowLog, []sim.Time) {
		s, d, src, a := testDir(Config{Rate: 40 * units.Mbps, Delay: ms, Capacity: &c, Outages: &out}, 100_000, 50_000, 100*sim.Microsecond, 9)
		src.onAct = func(i uint64) {
			if i == 25_000 { // at 2.5 s
				d.SetDelay(3 * ms)
			}
		}
		var rows rowLog
		if log {
			d.LogLink(&rows)
		}
		for t := sim.Time(0); t < end; {
			t = min(end, t.Add(step))
			s.RunUntil(t)
			d.CatchUp()
		}
		return rows, a.at
	}
	rows, arrivals := run(true, sim.Second)
	fine, _ := run(true, ms)
	_, plain := run(false, sim.Second)
	if !slices.Equal(arrivals, plain) {
		i := 0
		for i < min(len(arrivals), len(plain)) && arrivals[i] == plain[i] {
			i++
		}
		t.Fatalf("logging changed the run: %d arrivals, %d without; the first difference at arrival %d", len(arrivals), len(plain), i)
	}
	if len(fine) != len(rows) {
		t.Fatalf("read every ms the log has %d rows, read at the end %d", len(fine), len(rows))
	}
	for i := range rows {
		if fine[i] != rows[i] {
			t.Fatalf("row %d: read every ms %+v, at the end %+v", i, fine[i], rows[i])
		}
	}
	ref := newCapacityModel(&c, 0, rng.PCG(9, "link/t/ab/capacity"), rng.PCG(9, "link/t/ab/capacity/dips"))
	k, changes := 0, 0
	for at := sim.Time(0); at < end; at = at.Add(100 * sim.Microsecond) {
		for k+1 < len(rows) && rows[k+1].at <= at {
			k++
		}
		ref.advance(at)
		want := logRow{rate: ref.rateAt(at), delay: ms}
		if phase := at.Sub(sim.Time(out.Start)); phase >= 0 && phase%out.Every < out.Duration {
			want.rate = 0
		}
		if at >= sim.Time(2500*ms) {
			want.delay = 3 * ms
		}
		if got := rows[k]; got.rate != want.rate || got.delay != want.delay {
			t.Fatalf("at %v the log says %v and %v (row %d, from %v), want %v and %v", at, got.rate, got.delay, k, got.at, want.rate, want.delay)
		}
		if k > 0 && rows[k].at > at.Add(-100*sim.Microsecond) {
			changes++
		}
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].at < rows[i-1].at {
			t.Fatalf("row %d at %v comes after one at %v", i, rows[i].at, rows[i-1].at)
		}
	}
	t.Logf("%d rows, %d changes seen by the 100 µs samples", len(rows), changes)
	if changes < 100 {
		t.Errorf("only %d changes sampled: the process barely moved", changes)
	}
}

// callAt runs f at the time its event is scheduled for.
type callAt func()

func (f callAt) Handle(sim.Event) { f() }

// A scheduled change that replaces a capacity process (here by another one
// at 2.6 s, 100 ms after a packet, which continues its streams) leaves the run
// as it is whether the link is logged or not. The log advances the process
// as time reaches each of its changes; without it the process stood at the
// last packet's start, so the new process drew from streams left
// elsewhere, and a traced run (detail change or sampled) differed from an
// untraced one.
func TestLinkLogLeavesReplacedCapacityAlone(t *testing.T) {
	ms := sim.Millisecond
	c := flapping(37*ms, 21*ms, 20*ms, 10*ms)
	next := c
	next.States = []config.CapacityState{{Rate: 20 * units.Mbps, Dwell: 50 * ms}, {Rate: 5 * units.Mbps, Dwell: 20 * ms}}
	run := func(log bool) []sim.Time {
		// A packet every 200 ms: the process runs on between packets.
		s, d, _, a := testDir(Config{Rate: 40 * units.Mbps, Delay: ms, Capacity: &c}, 100, 30, 200*ms, 9)
		s.Schedule(sim.Time(2600*ms), s.Register(callAt(func() { d.SetCapacity(&next) }), "change"), 1, 0)
		if log {
			d.LogLink(&rowLog{})
		}
		s.RunUntil(sim.Time(6 * sim.Second))
		return a.at
	}
	logged, plain := run(true), run(false)
	if len(logged) != len(plain) {
		t.Fatalf("logged: %d arrivals, not logged: %d", len(logged), len(plain))
	}
	for i := range plain {
		if logged[i] != plain[i] {
			t.Fatalf("arrival %d at %v logged, %v not logged", i, logged[i], plain[i])
		}
	}
}
