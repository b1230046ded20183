package engine

import (
	"math"
	"slices"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/units"
)

// GroupSummary reports one flow group: how many of its flows started and
// completed, flow completion times (FCT) and slowdowns by flow-size bucket,
// and Jain's fairness index over its bulk flows' goodputs.
type GroupSummary struct {
	Group     string `json:"group" msgpack:"group"`
	Flows     int    `json:"flows" msgpack:"flows"`
	Started   int    `json:"started" msgpack:"started"`
	Completed int    `json:"completed" msgpack:"completed"`
	// Aborted counts the flows whose senders gave up on their connections
	// (FlowSummary.AbortedPs set).
	Aborted int `json:"aborted" msgpack:"aborted"`
	// Buckets cover the sized flows that completed, by size.
	Buckets []FCTBucket `json:"buckets" msgpack:"buckets"`
	// JainBulk is Jain's index (Σx)²/(n·Σx²) over the goodputs of the
	// group's bulk flows that started; null if it has none.
	JainBulk *float64 `json:"jain_bulk" msgpack:"jain_bulk"`
}

// FCTBucket holds the completed flows of sizes in [MinBytes, MaxBytes).
// Slowdown is FCT over the ideal FCT: the path's base RTT (the handshake)
// plus its one-way delay plus the flow's packets serialised at the path's
// bottleneck rate — the time the flow would take alone, sending all its
// bytes at once. Quantiles are by rank, exact.
type FCTBucket struct {
	MinBytes     int64   `json:"min_bytes" msgpack:"min_bytes"`
	MaxBytes     int64   `json:"max_bytes" msgpack:"max_bytes"`
	Count        int     `json:"count" msgpack:"count"`
	FCTP50Ps     int64   `json:"fct_p50_ps" msgpack:"fct_p50_ps"`
	FCTP99Ps     int64   `json:"fct_p99_ps" msgpack:"fct_p99_ps"`
	SlowdownP50  float64 `json:"slowdown_p50" msgpack:"slowdown_p50"`
	SlowdownP99  float64 `json:"slowdown_p99" msgpack:"slowdown_p99"`
	SlowdownMean float64 `json:"slowdown_mean" msgpack:"slowdown_mean"`
}

// fctBucketEdges are the bucket boundaries in bytes: under 10 KB, 10-100 KB,
// 100 KB-1 MB, 1-10 MB, 10 MB and over (the bins data-centre FCT plots use).
var fctBucketEdges = []int64{0, 10_000, 100_000, 1_000_000, 10_000_000, math.MaxInt64}

// IdealFCT is the completion time of a flow of size payload bytes alone on
// network nw's path from src to dst: one base RTT for the handshake, the
// one-way delay, and every packet (MSS-sized, with headers) serialised at
// the bottleneck rate.
func IdealFCT(nw *topo.Network, f config.Flow) sim.Duration {
	src, dst := nw.Node(f.Src).Index, nw.Node(f.Dst).Index
	var oneWay sim.Duration
	for _, d := range nw.Path(src, dst) {
		oneWay += d.Delay()
	}
	mss := f.TCP.MSS
	if mss == 0 {
		mss = config.DefaultMSS
	}
	pkts := (f.Size + mss - 1) / mss
	wire := f.Size + pkts*tcp.HeaderBytes
	return nw.BaseRTT(src, dst) + oneWay + units.TxTime(wire, nw.Bottleneck(src, dst))
}

// GroupSummaries summarises each of scn's flow groups from its flows'
// summaries (in scn.Flows order) on network nw, which gives the ideal FCTs:
// a simulated run's, or an emulated one's of the kernels' flows.
func GroupSummaries(scn *config.Scenario, nw *topo.Network, flows []FlowSummary) []GroupSummary {
	var out []GroupSummary
	for _, g := range scn.Groups {
		gs := GroupSummary{Group: g.ID, Buckets: []FCTBucket{}}
		type done struct {
			fct      int64
			slowdown float64
			size     int64
		}
		var completed []done
		var sum, sumSq float64
		bulk := 0
		for i, f := range scn.Flows {
			if f.Group != g.ID {
				continue
			}
			gs.Flows++
			fs := flows[i]
			if fs.BytesSent > 0 || fs.GoodputBps != nil {
				gs.Started++
			}
			if fs.AbortedPs != nil {
				gs.Aborted++
			}
			if f.Size == 0 && fs.GoodputBps != nil {
				x := float64(*fs.GoodputBps)
				sum, sumSq, bulk = sum+x, sumSq+float64(x*x), bulk+1
			}
			if fs.FCTPs != nil {
				ideal := IdealFCT(nw, f)
				completed = append(completed, done{*fs.FCTPs, float64(*fs.FCTPs) / float64(ideal), int64(f.Size)})
			}
		}
		gs.Completed = len(completed)
		if bulk > 0 && sumSq > 0 {
			j := float64(sum*sum) / float64(float64(bulk)*sumSq)
			gs.JainBulk = &j
		}
		for b := 1; b < len(fctBucketEdges); b++ {
			lo, hi := fctBucketEdges[b-1], fctBucketEdges[b]
			var fcts []int64
			var slows []float64
			var slowSum float64
			for _, c := range completed {
				if c.size >= lo && c.size < hi {
					fcts, slows, slowSum = append(fcts, c.fct), append(slows, c.slowdown), slowSum+c.slowdown
				}
			}
			if len(fcts) == 0 {
				continue
			}
			slices.Sort(fcts)
			slices.Sort(slows)
			gs.Buckets = append(gs.Buckets, FCTBucket{MinBytes: lo, MaxBytes: hi, Count: len(fcts),
				FCTP50Ps: rankQuantile(fcts, 0.5), FCTP99Ps: rankQuantile(fcts, 0.99),
				SlowdownP50: rankQuantile(slows, 0.5), SlowdownP99: rankQuantile(slows, 0.99),
				SlowdownMean: slowSum / float64(len(slows))})
		}
		out = append(out, gs)
	}
	return out
}

// rankQuantile is the q-quantile of sorted xs by nearest rank.
func rankQuantile[T int64 | float64](xs []T, q float64) T {
	i := int(math.Ceil(float64(q*float64(len(xs))))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
