package emulate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// CompareOptions configure Compare.
type CompareOptions struct {
	Seeds []uint64 // default: the scenario's runtime.seed
	// TraceDir, if set, receives each run's trace tables as Parquet:
	// sim-seedN.<table>.parquet and kernel-seedN.<table>.parquet.
	TraceDir string
	// Emulate configures the kernel runs (its Sink is not used).
	Emulate Options
	// Retries is how many more times a seed's kernel run is taken while
	// its relay runs late (lateness p99 over LateWarn: the host did not
	// keep up in real time, and the kernel's timing was disturbed); the
	// least late run is kept, and a note says so.
	Retries int
	// Progress, if set, hears what Compare is doing, a line at a time.
	Progress func(msg string)
	// Config are the scenario's parse options: config.WithDir for a
	// scenario file, whose trace and CDF files are relative to it.
	Config []config.Option
	// Seed, if set, hears each seed's pair of runs once they are compared
	// (compare --report draws them); an error it returns ends Compare.
	Seed func(SeedRuns) error
}

// SeedRuns is one seed's pair of runs, as Compare hands them to
// CompareOptions.Seed.
type SeedRuns struct {
	Seed uint64
	// Config is the seed's scenario, canonical JSON.
	Config []byte
	// Sim and Kernel are the runs' traces; the simulator's is sampled
	// every millisecond.
	Sim, Kernel               *trace.Recorder
	SimSummary, KernelSummary *engine.Summary
	// KernelRelease is the kernel's uname -r.
	KernelRelease string
	Rows          []CompareRow // the seed's rows, as in Comparison.Rows
	// Notes are the comparison's notes on this seed, the scenario's with
	// the first seed's, and the kernel run's own.
	Notes []string
}

// CompareRow is one metric of one flow, or of one flow group, in one
// seed's pair of runs.
type CompareRow struct {
	Seed uint64 `json:"seed"`
	Flow string `json:"flow"` // a flow's id, or a group's for the group's own rows
	// Group is the group a flow's row belongs to; empty for a group's own
	// rows and for flows outside groups.
	Group   string   `json:"group,omitempty"`
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	Sim     *float64 `json:"sim"`
	Kernel  *float64 `json:"kernel"`
	RelDiff *float64 `json:"rel_diff"` // (kernel − sim) / sim
}

// Comparison is a scenario run both ways, seed by seed.
type Comparison struct {
	Scenario string           `json:"scenario"`
	Kernel   string           `json:"kernel"`
	Seeds    []uint64         `json:"seeds"`
	Rows     []CompareRow     `json:"rows"`
	Sim      []engine.Summary `json:"sim"`
	Emulated []Summary        `json:"emulated"`
	Traces   []string         `json:"traces,omitempty"`
	// Notes warn of --set overrides that replaced an object and dropped
	// some of its fields (engine.Prepared.Notes).
	Notes []string `json:"notes,omitempty"`
}

// CompareMetrics are the metrics of a comparison, in table order.
var CompareMetrics = [...]struct{ Name, Unit string }{
	{"goodput", "Mbps"}, {"t_1MB", "ms"}, {"t_10MB", "ms"}, {"t_100MB", "ms"},
	{"retransmits", "pkts"}, {"srtt_p50", "ms"}, {"srtt_p99", "ms"},
}

// PingMetrics are the metrics of a ping flow: its probes' RTT quantiles,
// from the summaries (the relay runs the engine's probe beside the
// kernel's flows, so they differ by what the kernels' flows do to the
// queues).
var PingMetrics = [...]struct{ Name, Unit string }{{"probe_rtt_p50", "ms"}, {"probe_rtt_p99", "ms"}}

// simSample is the sampling interval of the simulated side's trace: fine
// enough that a milestone read off the delivery table is within 1 ms.
const simSample = sim.Millisecond

// Compare runs raw (with sets) in the simulator and on the kernel for each
// seed and lines up, per flow: goodput; the receiver-side times from the
// first payload byte delivered to 1, 10 and 100 MB delivered;
// retransmissions; and the sender's srtt quantiles over time (srttQuantiles).
func Compare(ctx context.Context, raw []byte, sets []string, opt CompareOptions) (*Comparison, error) {
	seeds := opt.Seeds
	if len(seeds) == 0 {
		prep, err := engine.Prepare(raw, sets, opt.Config...)
		if err != nil {
			return nil, err
		}
		seeds = []uint64{prep.Scenario.Runtime.Seed}
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string) {}
	}
	c := &Comparison{Seeds: seeds, Rows: []CompareRow{}}
	for n, seed := range seeds {
		rowStart, noteStart := len(c.Rows), len(c.Notes)
		s := append(slices.Clone(sets), "runtime.seed="+strconv.FormatUint(seed, 10))
		prep, err := engine.Prepare(raw, s, opt.Config...)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			if err := checkCCs(prep.Scenario); err != nil {
				return nil, err
			}
			c.Scenario, c.Notes = prep.Scenario.Name, prep.Notes
			c.Notes = append(c.Notes, lpOffsetNotes(prep.Scenario.Flows)...)
		}
		progress(fmt.Sprintf("seed %d (%d of %d): simulating", seed, n+1, len(seeds)))
		prep.Scenario.Trace = config.Trace{Detail: config.TraceSampled, Interval: simSample}
		r, err := engine.New(prep.Scenario, nil)
		if err != nil {
			return nil, err
		}
		r.RunToEnd()
		simSum := r.Summary(prep.Hash)
		kernelRun := func() (*Result, error) {
			kprep, err := engine.Prepare(raw, s, opt.Config...)
			if err != nil {
				return nil, err
			}
			if kprep.Scenario.Trace.Detail == config.TraceChange {
				kprep.Scenario.Trace.Detail = config.TraceSampled
			}
			progress(fmt.Sprintf("seed %d: running on the kernel for %v", seed, prep.Scenario.Runtime.Duration))
			eo := opt.Emulate
			eo.Sink = nil
			return Run(ctx, kprep.Scenario, kprep.Hash, eo)
		}
		res, tries, err := leastLate(kernelRun, opt.Retries, func(late sim.Duration) {
			progress(fmt.Sprintf("seed %d: the relay ran %.2f ms late at the 99th percentile, over %v: running the kernel side again",
				seed, late.Seconds()*1e3, LateWarn))
		})
		if err != nil {
			return nil, err
		}
		if tries > 1 {
			c.Notes = append(c.Notes, fmt.Sprintf("seed %d: the kernel side was run %d times, as its relay ran late; the least late run is kept (lateness p99 %.2f ms)",
				seed, tries, sim.Duration(*res.Summary.Lateness.P99Ps).Seconds()*1e3))
		}
		if n := stallNote(seed, res.Summary.Lateness.MaxPs, simSum.Flows); n != "" {
			c.Notes = append(c.Notes, n)
		}
		c.Kernel = res.Summary.Kernel
		c.Sim = append(c.Sim, simSum)
		c.Emulated = append(c.Emulated, res.Summary)
		if len(res.Summary.Flows) != len(simSum.Flows) {
			return nil, fmt.Errorf("compare: seed %d: the kernel run has %d flows and the simulated one %d", seed, len(res.Summary.Flows), len(simSum.Flows))
		}
		// Row by row of the summaries: the scenario's flows, a split flow's
		// leg 0 in its place, then the legs 1 (engine/proxy.go).
		// A group's split flow keeps its group on both legs' rows.
		legGroup := map[string]string{}
		for i, f := range prep.Scenario.Flows {
			if simSum.Flows[i].ID != f.ID {
				legGroup[f.ID+".1"] = f.Group
			}
		}
		for i, sf := range simSum.Flows {
			group := legGroup[sf.ID]
			if i < len(prep.Scenario.Flows) {
				group = prep.Scenario.Flows[i].Group
			}
			row := func(name, unit string, sv, kv *float64) {
				c.Rows = append(c.Rows, compareRow(CompareRow{Seed: seed, Flow: sf.ID, Group: group, Metric: name, Unit: unit}, sv, kv))
			}
			if sf.Kind == "ping" {
				kf := res.Summary.Flows[i]
				sv := [len(PingMetrics)]*float64{psMs(sf.RTTP50Ps), psMs(sf.RTTP99Ps)}
				kv := [len(PingMetrics)]*float64{psMs(kf.RTTP50Ps), psMs(kf.RTTP99Ps)}
				for m, met := range PingMetrics {
					row(met.Name, met.Unit, sv[m], kv[m])
				}
				continue
			}
			sv := simMetrics(r.Trace, sf, int32(i))
			kv := kernelMetrics(res, int32(i))
			for m, met := range CompareMetrics {
				row(met.Name, met.Unit, sv[m], kv[m])
			}
			if n := minRTTNote(seed, sf, r.Trace, res.Trace, int32(i)); n != "" {
				c.Notes = append(c.Notes, n)
			}
			if n := probeRTTNote(seed, sf, r.Trace, res.Trace, int32(i)); n != "" {
				c.Notes = append(c.Notes, n)
			}
			if n := bwNote(seed, sf, r.Trace, res.Trace, int32(i), simSum.SimTimePs); n != "" {
				c.Notes = append(c.Notes, n)
			}
			if n := abortNote(seed, sf, res.Summary.Flows[i]); n != "" {
				c.Notes = append(c.Notes, n)
			}
		}
		for g := range simSum.Groups {
			c.Rows = append(c.Rows, groupRows(seed, simSum.Groups[g], res.Summary.Groups[g])...)
		}
		if opt.Seed != nil {
			err := opt.Seed(SeedRuns{Seed: seed, Config: prep.Canonical, Sim: r.Trace, Kernel: res.Trace,
				SimSummary: &simSum, KernelSummary: &res.Summary.Summary, KernelRelease: res.Summary.Kernel,
				Rows: c.Rows[rowStart:], Notes: append(slices.Clone(c.Notes[noteStart:]), res.Summary.Notes...)})
			if err != nil {
				return nil, err
			}
		}
		if opt.TraceDir != "" {
			for _, t := range []struct {
				name string
				rec  *trace.Recorder
			}{{"sim", r.Trace}, {"kernel", res.Trace}} {
				paths, err := writeTrace(t.rec, TracePath(opt.TraceDir, t.name, seed))
				if err != nil {
					return nil, err
				}
				c.Traces = append(c.Traces, paths...)
			}
		}
	}
	return c, nil
}

// TracePath is where CompareOptions.TraceDir holds one side's trace
// ("sim" or "kernel") of a seed: dir/sim-seed1.parquet, whose tables are
// dir/sim-seed1.flows.parquet, ….
func TracePath(dir, side string, seed uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s-seed%d.parquet", side, seed))
}

// leastLate takes a run, then up to retries more while none so far had
// its relay's lateness p99 at or under LateWarn (again hears the last
// run's lateness before each), and returns the least late run and how many
// were taken.
func leastLate(run func() (*Result, error), retries int, again func(late sim.Duration)) (*Result, int, error) {
	lateness := func(r *Result) sim.Duration {
		if p := r.Summary.Lateness.P99Ps; p != nil {
			return sim.Duration(*p)
		}
		return 0
	}
	last, err := run()
	if err != nil {
		return nil, 0, err
	}
	best, tries := last, 1
	for ; tries <= retries && lateness(best) > LateWarn; tries++ {
		again(lateness(last))
		if last, err = run(); err != nil {
			return nil, tries, err
		}
		if lateness(last) < lateness(best) {
			best = last
		}
	}
	return best, tries, nil
}

// compareRow is r with the simulated and kernel values and their relative
// difference.
func compareRow(r CompareRow, sv, kv *float64) CompareRow {
	r.Sim, r.Kernel = sv, kv
	if sv != nil && kv != nil && *sv != 0 {
		r.RelDiff = fptr((*kv - *sv) / *sv)
	}
	return r
}

// groupRows line up a flow group's summaries: how many of its flows
// completed (and gave up, where either side's did), the median and 99th percentile FCT of each size bucket
// either side has flows in (as "fct_p50[10KB,100KB)"), and Jain's index
// over its bulk flows.
func groupRows(seed uint64, sg, kg engine.GroupSummary) []CompareRow {
	at := func(name, unit string, sv, kv *float64) CompareRow {
		return compareRow(CompareRow{Seed: seed, Flow: sg.Group, Metric: name, Unit: unit}, sv, kv)
	}
	rows := []CompareRow{at("completed", "flows", fptr(float64(sg.Completed)), fptr(float64(kg.Completed)))}
	if sg.Aborted > 0 || kg.Aborted > 0 {
		rows = append(rows, at("aborted", "flows", fptr(float64(sg.Aborted)), fptr(float64(kg.Aborted))))
	}
	type bucket struct{ lo, hi int64 }
	var order []bucket
	byB := map[bucket][2]*engine.FCTBucket{}
	for side, g := range []engine.GroupSummary{sg, kg} {
		for i := range g.Buckets {
			b := &g.Buckets[i]
			k := bucket{b.MinBytes, b.MaxBytes}
			v, seen := byB[k]
			if !seen {
				order = append(order, k)
			}
			v[side] = b
			byB[k] = v
		}
	}
	slices.SortFunc(order, func(a, b bucket) int { return cmp.Compare(a.lo, b.lo) })
	for _, k := range order {
		v := byB[k]
		label := "[" + decimalBytes(k.lo) + "," + decimalBytes(k.hi) + ")"
		for _, q := range []struct {
			name string
			of   func(*engine.FCTBucket) int64
		}{{"fct_p50", func(b *engine.FCTBucket) int64 { return b.FCTP50Ps }}, {"fct_p99", func(b *engine.FCTBucket) int64 { return b.FCTP99Ps }}} {
			var ms [2]*float64
			for side, b := range v {
				if b != nil {
					ms[side] = fptr(float64(q.of(b)) / float64(sim.Millisecond))
				}
			}
			rows = append(rows, at(q.name+label, "ms", ms[0], ms[1]))
		}
	}
	if sg.JainBulk != nil || kg.JainBulk != nil {
		rows = append(rows, at("jain_bulk", "", sg.JainBulk, kg.JainBulk))
	}
	return rows
}

// decimalBytes writes a bucket edge as FCT plots label them: 10KB, 1MB; ""
// for the open ends.
func decimalBytes(b int64) string {
	switch {
	case b == 0 || b == math.MaxInt64:
		return ""
	case b%1_000_000 == 0:
		return strconv.FormatInt(b/1_000_000, 10) + "MB"
	case b%1_000 == 0:
		return strconv.FormatInt(b/1_000, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}

// writeTrace writes a recorder's in-memory tables to files at path.
func writeTrace(rec *trace.Recorder, path string) ([]string, error) {
	sink, err := trace.NewFileSink(path)
	if err != nil {
		return nil, err
	}
	rec.SetSink(sink)
	rec.FlushAll()
	rec.SetSink(nil)
	if err := sink.Close(); err != nil {
		return nil, err
	}
	return sink.Paths(), rec.Err()
}

func fptr(v float64) *float64 { return &v }

// handshakeExcess is how far above the simulator's the kernel's BBR may
// take its first min_rtt before compare says so: on p-rtr-p the kernel's
// handshake sample ran 110-266 µs above the path's, its data samples 43-60
// µs above theirs.
const handshakeExcess = 50 // µs

// bbrMinRTTWindow is how long BBR keeps min_rtt without a lower sample
// (bbr_min_rtt_win_sec): a flow that ends sooner never meets PROBE_RTT,
// whatever its first sample.
const bbrMinRTTWindow = 10e12 // ps

// signalSpan is the time, in ps, from a flow's first recorded signal to
// its last.
func signalSpan(rec *trace.Recorder, flow int32) int64 {
	first, last := int64(-1), int64(-1)
	t := &rec.SignalT
	for i := range t.T {
		if t.Flow[i] == flow {
			if first < 0 {
				first = t.T[i]
			}
			last = t.T[i]
		}
	}
	return last - first
}

// minRTTNote says when a BBR flow's kernel side took its first min_rtt
// (from the handshake) well above the simulator's: BBR keeps min_rtt until
// a lower sample or 10 s, so data samples below an inflated handshake
// sample restart that window and move PROBE_RTT later on the kernel side
// (README, "The real kernel beside the simulator"). A flow whose signals
// span no more than that window is passed over. "" otherwise.
func minRTTNote(seed uint64, sf engine.FlowSummary, simRec, kernRec *trace.Recorder, flow int32) string {
	if sf.CC != "bbr" || signalSpan(simRec, flow) <= bbrMinRTTWindow {
		return ""
	}
	s, ok1 := firstSignal(simRec, flow, "min_rtt")
	k, ok2 := firstSignal(kernRec, flow, "min_rtt")
	if !ok1 || !ok2 || k-s <= handshakeExcess {
		return ""
	}
	return fmt.Sprintf("seed %d, flows[%s]: the kernel's BBR took its first min_rtt, %.3f ms, %.0f µs above the simulator's %.3f ms (a handshake's packets cross the relay and the kernels more slowly than data): data samples below it restart BBR's 10 s min_rtt window, so PROBE_RTT can come later on the kernel side",
		seed, sf.ID, k/1e3, k-s, s/1e3)
}

// probeRTTNote says when a BBR flow entered PROBE_RTT a different number
// of times on the two sides, with the times. BBR enters it once min_rtt
// has gone 10 s without a lower sample: the kernel's RTT samples carry
// tens of microseconds of noise, so one now and then undercuts min_rtt and
// restarts the window, where the simulator's at an empty queue are all
// equal (README, "How close they are"). A PROBE_RTT is where BBR v1's
// cwnd_gain falls to 1 (bbr_update_gains), which both sides record. ""
// otherwise.
func probeRTTNote(seed uint64, sf engine.FlowSummary, simRec, kernRec *trace.Recorder, flow int32) string {
	if sf.CC != "bbr" {
		return ""
	}
	s, k := probeRTTs(simRec, flow), probeRTTs(kernRec, flow)
	if len(s) == len(k) {
		return ""
	}
	at := func(ts []float64) string {
		if len(ts) == 0 {
			return "never"
		}
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = fmt.Sprintf("%.1f", t)
		}
		return "at " + strings.Join(parts, ", ") + " s"
	}
	return fmt.Sprintf("seed %d, flows[%s]: the simulated BBR entered PROBE_RTT %s, the kernel's %s: the kernel's RTT samples carry tens of microseconds of noise, so one now and then falls under min_rtt and restarts its 10 s window, where the simulator's at an empty queue are all equal",
		seed, sf.ID, at(s), at(k))
}

// probeRTTs are the times, in seconds, at which a flow's cwnd_gain signal
// fell to 1 from another value (0 is no gain set yet).
func probeRTTs(rec *trace.Recorder, flow int32) []float64 {
	ts, vs := signalSeries(rec, flow, "cwnd_gain")
	var out []float64
	for i := 1; i < len(vs); i++ {
		if vs[i] == 1 && vs[i-1] != 1 && vs[i-1] != 0 {
			out = append(out, float64(ts[i])/1e12)
		}
	}
	return out
}

// bwExcess is how far above the simulator's the kernel's BBR bandwidth
// estimate may run, as a fraction, before compare says so. The simulator's
// estimate of a link-limited flow is the link's payload rate exactly.
const bwExcess = 0.001

// bwNote says when a link-limited BBR flow's kernel side read more
// bandwidth than the simulator's over the run (time-weighted medians of the
// bw signal; link-limited: the simulator's within 1 % of the path's payload
// rate, 1448 of each 1500 bytes). The kernel's ACKs carry the relay's and
// the hosts' timing noise, which shortens some delivery-rate intervals, and
// BBR's max filter keeps the highest: it paces that much faster in cruise
// and keeps a standing queue (README, "How close they are"). "" otherwise.
func bwNote(seed uint64, sf engine.FlowSummary, simRec, kernRec *trace.Recorder, flow int32, endPs int64) string {
	if sf.CC != "bbr" || sf.BottleneckBps <= 0 {
		return ""
	}
	s, ok1 := timeMedian(simRec, flow, "bw", endPs)
	k, ok2 := timeMedian(kernRec, flow, "bw", endPs)
	payload := float64(sf.BottleneckBps) * 1448 / 1500
	if !ok1 || !ok2 || math.Abs(s/payload-1) > 0.01 || k <= s*(1+bwExcess) {
		return ""
	}
	return fmt.Sprintf("seed %d, flows[%s]: the kernel's BBR read %.2f Mbps of bandwidth (the median over the run), %.2f %% above the simulator's %.2f (the link's payload rate): its ACKs carry the relay's and the hosts' timing noise, so it paces faster in cruise and keeps more queue, more so on short paths; jitter on the ACK direction gives the simulator the same",
		seed, sf.ID, k/1e6, 100*(k/s-1), s/1e6)
}

// timeMedian is the median over time of a flow's signal from its first
// value to endPs, each value holding until the next; false if the flow has
// none.
func timeMedian(rec *trace.Recorder, flow int32, name string, endPs int64) (float64, bool) {
	ts, vs := signalSeries(rec, flow, name)
	if len(vs) == 0 {
		return 0, false
	}
	xs := make([]timeSpan, len(vs))
	for i, v := range vs {
		end := endPs
		if i+1 < len(ts) {
			end = ts[i+1]
		}
		xs[i] = timeSpan{v, max(0, end-ts[i])}
	}
	return spanQuantiles(xs, 0.5)[0], true
}

// timeSpan is a value that held for w picoseconds.
type timeSpan struct {
	v float64
	w int64
}

// spanQuantiles sorts xs by value and gives, for each fraction in ps, the
// value at which that fraction of their time is reached. Spans that all
// share one instant (no time at all) weigh alike.
func spanQuantiles(xs []timeSpan, ps ...float64) []float64 {
	var total int64
	for _, x := range xs {
		total += x.w
	}
	if total == 0 {
		for i := range xs {
			xs[i].w = 1
		}
		total = int64(len(xs))
	}
	slices.SortFunc(xs, func(a, b timeSpan) int { return cmp.Compare(a.v, b.v) })
	out := make([]float64, len(ps))
	for k, p := range ps {
		var acc int64
		out[k] = xs[len(xs)-1].v
		for _, x := range xs {
			if acc += x.w; float64(acc) >= p*float64(total) {
				out[k] = x.v
				break
			}
		}
	}
	return out
}

// lpOffsetNotes warns, per LP flow with timestamp offsets, that the two
// sides draw the receiver's offset differently (the kernel per address
// pair, the simulator per flow and seed), and that LP's outcome rests on
// it: from 2^29 up it is Reno, below it does not yield either, with none
// it yields (README, "Congestion controllers").
func lpOffsetNotes(flows []config.Flow) []string {
	var notes []string
	for _, f := range flows {
		if f.CC == "lp" && f.TCP.Timestamps == 1 {
			notes = append(notes, fmt.Sprintf("flows[%s]: lp's one-way delay includes the receiver's timestamp offset, which the kernel draws per address pair (secure_tcp_ts_off) and the simulator per flow and seed; LP is Reno when it is 2^29 or more, so the two sides may land apart: set tcp.timestamps=2 (no offsets) to compare like with like", f.ID))
		}
	}
	return notes
}

// abortNote says when either side's sender gave up on a flow's connection
// (ETIMEDOUT), and why; the kernel side's time is its first TCP_INFO poll
// that found the socket closed, or its connect's return.
func abortNote(seed uint64, sf, kf engine.FlowSummary) string {
	if sf.AbortedPs == nil && kf.AbortedPs == nil {
		return ""
	}
	side := func(f engine.FlowSummary) string {
		if f.AbortedPs == nil {
			return "kept its connection"
		}
		return fmt.Sprintf("gave up at %.3f s (%s)", float64(*f.AbortedPs)/1e12, f.AbortReason)
	}
	return fmt.Sprintf("seed %d, flows[%s]: the simulated sender %s, the kernel's %s", seed, sf.ID, side(sf), side(kf))
}

// stallNote says when the kept kernel run's relay stalled, at its worst,
// for more than a quarter of the shortest base RTT of the flows: its p99
// can be well under LateWarn while one pause clumps a fast path's packets
// into a burst its queue drops (CUBIC at 121.5 Mbps over 13 ms: 8.5 ms at
// most, 0.22 ms at p99, and two loss events the simulator did not have).
func stallNote(seed uint64, maxPs int64, flows []engine.FlowSummary) string {
	var rtt int64
	for _, f := range flows {
		if f.BaseRTTPs > 0 && (rtt == 0 || f.BaseRTTPs < rtt) {
			rtt = f.BaseRTTPs
		}
	}
	if rtt == 0 || 4*maxPs <= rtt {
		return ""
	}
	return fmt.Sprintf("seed %d: the kernel run's relay stalled for up to %.2f ms, %.0f %% of the shortest base RTT (%.2f ms): packets it held left in a burst, so read that seed's losses and delay on the kernel side with care",
		seed, float64(maxPs)/1e9, 100*float64(maxPs)/float64(rtt), float64(rtt)/1e9)
}

// firstSignal is the first value a flow recorded for a signal, in the
// signal's units; false if none (a value of 0 or above an hour is no
// measurement yet).
func firstSignal(rec *trace.Recorder, flow int32, name string) (float64, bool) {
	_, vs := signalSeries(rec, flow, name)
	for _, v := range vs {
		if v > 0 && v < 3.6e9 {
			return v, true
		}
	}
	return 0, false
}

// signalSeries is a flow's values of one signal and the times (ps) they
// were recorded at, in order; none if the recorder has no such signal.
func signalSeries(rec *trace.Recorder, flow int32, name string) (ts []int64, vs []float64) {
	idx := slices.Index(rec.Signals, name)
	if idx < 0 {
		return nil, nil
	}
	t := &rec.SignalT
	for i := range t.T {
		if t.Flow[i] == flow && t.Signal[i] == int32(idx) {
			ts, vs = append(ts, t.T[i]), append(vs, t.Value[i])
		}
	}
	return ts, vs
}

func psMs(p *int64) *float64 {
	if p == nil {
		return nil
	}
	return fptr(float64(*p) / float64(sim.Millisecond))
}

// simMetrics reads a simulated flow's metrics off its summary and trace.
func simMetrics(rec *trace.Recorder, fs engine.FlowSummary, flow int32) [len(CompareMetrics)]*float64 {
	var v [len(CompareMetrics)]*float64
	if fs.GoodputBps != nil {
		v[0] = fptr(float64(*fs.GoodputBps) / 1e6)
	}
	d := &rec.Delivery
	var first sim.Time = -1
	var crossed [3]sim.Time
	for i := range d.T {
		if d.Flow[i] != flow || d.BytesDelivered[i] == 0 {
			continue
		}
		t := sim.Time(d.T[i])
		if first < 0 {
			first = t
		}
		for k, m := range milestoneBytes {
			if crossed[k] == 0 && d.BytesDelivered[i] >= m {
				crossed[k] = t
			}
		}
	}
	for k := range crossed {
		if first >= 0 && crossed[k] != 0 {
			v[1+k] = fptr(crossed[k].Sub(first).Seconds() * 1000)
		}
	}
	if fs.Retransmits != nil {
		v[4] = fptr(float64(*fs.Retransmits))
	}
	v[5], v[6] = srttQuantiles(rec.FlowsT.Rows, flow, lastDelivery(&rec.Delivery, flow))
	return v
}

// kernelMetrics reads an emulated flow's metrics off its summary and trace.
func kernelMetrics(res *Result, flow int32) [len(CompareMetrics)]*float64 {
	var v [len(CompareMetrics)]*float64
	fs, rx := res.Summary.Flows[flow], res.Summary.Receivers[flow]
	if fs.GoodputBps != nil {
		v[0] = fptr(float64(*fs.GoodputBps) / 1e6)
	}
	v[1], v[2], v[3] = psMs(rx.T1MBPs), psMs(rx.T10MBPs), psMs(rx.T100MBPs)
	if fs.Retransmits != nil {
		v[4] = fptr(float64(*fs.Retransmits))
	}
	v[5], v[6] = srttQuantiles(res.Trace.FlowsT.Rows, flow, lastDelivery(&res.Trace.Delivery, flow))
	return v
}

// lastDelivery is when a flow's delivered bytes last grew in a delivery
// table: a sized flow's completion (or the poll just after it), a bulk
// flow's last sample.
func lastDelivery(d *trace.DeliveryTable, flow int32) sim.Time {
	var at sim.Time
	var got int64
	for i := range d.T {
		if d.Flow[i] == flow && d.BytesDelivered[i] > got {
			at, got = sim.Time(d.T[i]), d.BytesDelivered[i]
		}
	}
	return at
}

// srttQuantiles are the median and 99th percentile of a flow's srtt in ms
// over time while it moved data: from the first RTT measurement to until,
// its last delivery. Each sample holds until the next, so the quantiles
// weigh time, not samples: the simulator records a row on a flow's events
// (at most one per ms), sparse in slow start when ACKs come once a round
// and dense after, and the emulator polls at a steady rate; counting rows
// put the simulator's median 6 % above the kernel's on the same 10 MB
// CUBIC transfer (65.7 against 61.7 ms). After until a sized flow is done
// and only the emulator's polls go on.
func srttQuantiles(rows []trace.FlowRow, flow int32, until sim.Time) (p50, p99 *float64) {
	var own []trace.FlowRow
	for _, r := range rows {
		if r.Flow == flow && r.SRTT > 0 && r.T <= until {
			own = append(own, r)
		}
	}
	if len(own) == 0 {
		return nil, nil
	}
	xs := make([]timeSpan, len(own))
	for i, r := range own {
		end := until
		if i+1 < len(own) {
			end = own[i+1].T
		}
		xs[i] = timeSpan{r.SRTT.Seconds() * 1000, int64(end.Sub(r.T))}
	}
	q := spanQuantiles(xs, 0.5, 0.99)
	return fptr(q[0]), fptr(q[1])
}
