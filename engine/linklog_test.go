package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// The link log draws nothing and schedules nothing. On the moving paths
// of the liveness sweep (Mahimahi traces, capacity processes with dips and
// grant ramps, jitter, scheduled changes of capacity, outages and rate), a
// run that records every change, read every 10 ms, gives the digest of one
// that records nothing, read at its end; and its link table has a row at 0
// for each direction, and rows in time order within each.
func TestLinkLogLeavesMovingRunsAlone(t *testing.T) {
	t.Parallel()
	n := 60
	if testing.Short() {
		n = 15
	}
	r := rand.New(rand.NewPCG(43, 2026))
	dur := 3 * sim.Second
	for i := range n {
		c := livenessCase(r, cc.Names(), dur, true)
		c.desc += moveBottleneck(r, c.scn, dur, false)
		run := func(detail config.TraceDetail, step sim.Duration) *Run {
			scn := *c.scn
			scn.Trace = config.Trace{Detail: detail, Interval: 10 * sim.Millisecond}
			run, err := New(&scn, nil)
			if err != nil {
				t.Fatalf("case %d (%s): New: %v", i, c.desc, err)
			}
			for at := sim.Time(0); at < run.Horizon(); {
				at = min(run.Horizon(), at.Add(step))
				run.RunUntil(at)
			}
			return run
		}
		quiet, logged := run(config.TraceSummary, dur), run(config.TraceChange, 10*sim.Millisecond)
		if quiet.Sim.Digest() != logged.Sim.Digest() {
			t.Fatalf("case %d (%s): digest %x recording the link table, %x without", i, c.desc, logged.Sim.Digest(), quiet.Sim.Digest())
		}
		lt := &logged.Trace.LinkT
		if quiet.Trace.LinkT.Len() != 0 || lt.Len() < len(logged.Net.Dirs) {
			t.Fatalf("case %d (%s): %d link rows without a trace, %d with, for %d directions", i, c.desc, quiet.Trace.LinkT.Len(), lt.Len(), len(logged.Net.Dirs))
		}
		last := map[[2]int32]int64{}
		for k := range lt.T {
			dir := [2]int32{lt.Link[k], 0}
			if lt.DirAB[k] {
				dir[1] = 1
			}
			if prev, ok := last[dir]; ok && lt.T[k] < prev {
				t.Fatalf("case %d (%s): a row at %d ps after one at %d", i, c.desc, lt.T[k], prev)
			} else if !ok && lt.T[k] != 0 {
				t.Fatalf("case %d (%s): a direction's first row is at %d ps, not 0", i, c.desc, lt.T[k])
			}
			last[dir] = lt.T[k]
		}
	}
}
