package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server"
	"github.com/ccscope/ccscope/server/report"
)

func runMain(args []string) int {
	c := newScenarioCmd("run", "Usage: ccscope run SCENARIO|FILE.json [options]",
		"simulated duration `D`, e.g. 20s (overrides runtime.duration)", true)
	fs := c.fs
	tracePath := fs.String("trace", "", "write the trace to `FILE` (.arrow: Arrow IPC, .parquet: Parquet)")
	traceSelect := fs.String("trace-select", "", "with --trace, write only these tables or columns: `LIST` of table or table.column, comma-separated (e.g. flows.cwnd_pkts,flows.srtt_ps,queue)")
	pcapSpec := fs.String("pcap", "", "write the packets crossing a link direction to a pcap: `FILE[:link[:dir]]` (default: the first flow's bottleneck direction)")
	reportPath := fs.String("report", "", "write a self-contained HTML report of the run to `FILE.html`")
	reportFlows := fs.String("report-flows", "", "with --report, draw the panels of these flows, `LIST` such as bulk/3,bulk/9 (default: the first 32)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	raw, sets, opts, code, ok := c.parse(args)
	if !ok {
		return code
	}
	prep, err := engine.Prepare(raw, sets, opts...)
	if err != nil {
		return fail(err)
	}
	printNotes(prep.Notes)
	if *reportPath != "" && !strings.HasSuffix(*reportPath, ".html") {
		return fail(fmt.Errorf("--report %q: the file name must end in .html", *reportPath))
	}
	flows, err := flowList("--report-flows", *reportFlows)
	if err != nil {
		return fail(err)
	}
	if flows != nil && *reportPath == "" {
		return fail(fmt.Errorf("--report-flows %q: only with --report", *reportFlows))
	}
	if *reportPath != "" && prep.Scenario.Trace.Detail == config.TraceSummary {
		prep.Scenario.Trace.Detail = config.TraceChange
		fmt.Fprintln(os.Stderr, "ccscope: the scenario's trace.detail is \"summary\"; --report records every change (set trace.detail to \"sampled\" for less)")
	}
	noteMemory(prep.Scenario)
	sink, err := openTrace(*tracePath, *traceSelect, prep.Scenario)
	if err != nil {
		return fail(err)
	}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		return fail(err)
	}
	rep, err := openReport(*reportPath, r, prep, flows)
	if err != nil {
		return fail(err)
	}
	pc, err := openPcap(*pcapSpec, r)
	if err != nil {
		return fail(err)
	}
	// The report reads each table before the file sink takes its columns
	// (it swaps them out of the recorder to write them on its goroutine).
	switch {
	case rep != nil && sink != nil:
		r.Trace.SetSink(trace.Tee(rep, sink))
	case rep != nil:
		r.Trace.SetSink(rep)
	case sink != nil:
		r.Trace.SetSink(sink)
	}
	start := time.Now()
	runWithProgress(r, start)
	if err := closeTrace(sink, r); err != nil {
		return fail(err)
	}
	if err := pc.close(); err != nil {
		return fail(err)
	}
	sum := r.Summary(prep.Hash)
	sum.WallS = time.Since(start).Seconds()
	if sink != nil {
		if err := report.WriteRunInfo(*tracePath, report.RunInfo{Summary: sum, Config: string(prep.Canonical),
			Detail: prep.Scenario.Trace.Detail.String()}); err != nil {
			return fail(err)
		}
	}
	if err := writeReport(*reportPath, rep, &sum); err != nil {
		return fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		if err := enc.Encode(sum); err != nil {
			return fail(err)
		}
		return 0
	}
	printSummary(os.Stdout, sum)
	return 0
}

// noteMemory says, before a large build, that the run may take more memory
// than the machine has available (server.SessionBytes, an estimate that
// runs up to 4× high, against /proc/meminfo's MemAvailable): a flow group
// of a million flows takes some 17 GB and a minute to build, unsaid.
func noteMemory(scn *config.Scenario) {
	est := server.SessionBytes(scn)
	if avail := memAvailable(); avail > 0 && est > avail {
		fmt.Fprintf(os.Stderr, "ccscope: note: the run may take up to %.1f GiB to build (%d flows, %d links), more than the %.1f GiB this machine has available\n",
			float64(est)/(1<<30), len(scn.Flows), len(scn.Links), float64(avail)/(1<<30))
	}
}

// memAvailable is MemAvailable from /proc/meminfo in bytes; 0 where there
// is none.
func memAvailable() int64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// isScenarioFile says whether arg names a file rather than a built-in.
func isScenarioFile(arg string) bool {
	return strings.HasSuffix(arg, ".json") || strings.ContainsAny(arg, `/\`)
}

// loadScenario reads a built-in by name or a JSON file by path.
func loadScenario(arg string) ([]byte, error) {
	if isScenarioFile(arg) {
		raw, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("reading scenario: %w", err)
		}
		return raw, nil
	}
	return config.Builtin(arg)
}

// printNotes writes the notes of a scenario's overrides (engine.Prepared)
// to standard error, where they do not mix with --json output.
func printNotes(notes []string) {
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "ccscope: note: %s\n", n)
	}
}

// fail prints err for a user — every field error on its own line — and
// returns the exit status.
func fail(err error) int {
	var ce *config.Errors
	if errors.As(err, &ce) {
		fmt.Fprintln(os.Stderr, "ccscope: invalid scenario:")
		for _, fe := range ce.List {
			fmt.Fprintf(os.Stderr, "  %s\n", fe.Error())
		}
		return 1
	}
	fmt.Fprintln(os.Stderr, "ccscope:", err)
	return 1
}

// runWithProgress runs r to its end in slices of simulated time, drawing a
// progress bar on stderr once the run has taken a second, if stderr is a
// terminal. The slices run the event loop alone (Sim.RunUntil): the bar
// reads only the clock, and bringing every link up to date after each
// slice (Run.RunUntil) read every link direction 200 times a run (820,000
// reads at 1,024 flows). RunToEnd brings them up to date once.
func runWithProgress(r *engine.Run, start time.Time) {
	tty := isTerminal(os.Stderr)
	const slices = 200
	h := r.Horizon()
	drawn := false
	for i := 1; i <= slices; i++ {
		r.Sim.RunUntil(sim.Time(int64(h) / slices * int64(i)))
		if tty && time.Since(start) > time.Second {
			drawProgress(os.Stderr, float64(i)/slices, r.Now(), time.Since(start))
			drawn = true
		}
	}
	r.RunToEnd()
	if drawn {
		fmt.Fprintln(os.Stderr)
	}
}

func drawProgress(w io.Writer, frac float64, now sim.Time, wall time.Duration) {
	const width = 40
	n := int(frac * width)
	fmt.Fprintf(w, "\r[%s%s] %3.0f%%  sim %v  wall %.1fs", strings.Repeat("#", n), strings.Repeat(" ", width-n), frac*100, sim.Duration(now), wall.Seconds())
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printSummary prints a run's summary as tables: its flows (a group of
// more than tableGroupFlows flows without its flows' rows, said once), its
// groups' completion times by size, and its queues (without those of such
// a group's own host links, said once too).
func printSummary(w io.Writer, s engine.Summary) {
	clock := ""
	if s.KernelClockPs != 0 {
		clock = fmt.Sprintf("  kernel clock %v", sim.Duration(s.KernelClockPs))
	}
	fmt.Fprintf(w, "scenario %s  seed %d%s  sim %v  events %d  digest %s  wall %.2fs\n\n",
		s.Scenario, s.Seed, clock, sim.Duration(s.SimTimePs), s.Events, s.Digest, s.WallS)
	big := map[string]bool{}
	for _, g := range s.Groups {
		big[g.Group] = g.Flows > tableGroupFlows
	}
	// The fct column appears only when a flow completed in a group.
	fct := false
	for _, f := range s.Flows {
		fct = fct || f.FCTPs != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "flow\tcc\tsent\tdelivered\tgoodput\tretrans\tt_10MB\tt_100MB\trtt_p50\trtt_p99\t"
	if fct {
		head += "fct\t"
	}
	rows := 0
	for _, f := range s.Flows {
		if big[groupOf(f.ID, s.Groups)] {
			continue
		}
		if rows++; rows == 1 {
			fmt.Fprintln(tw, head)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", f.ID, f.CC, bytesStr(f.BytesSent), bytesStr(f.BytesDelivered),
			rateStr(f.GoodputBps), intStr(f.Retransmits), durStr(f.T10MBPs), durStr(f.T100MBPs), durStr(f.RTTP50Ps), durStr(f.RTTP99Ps))
		if fct {
			fmt.Fprintf(tw, "%s\t", durStr(f.FCTPs))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, g := range s.Groups {
		if big[g.Group] {
			fmt.Fprintf(w, "group %s: its %d flows' own rows are left out here (--json has them)\n", g.Group, g.Flows)
		}
	}
	printCCParams(w, s, big)
	printAborts(w, s, big)
	if len(s.Groups) > 0 {
		fmt.Fprintln(w)
		printGroups(w, s.Groups)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	// The outage_drops and duplicated columns appear only when a direction
	// had outages that refused packets or sent copies, so the usual table
	// keeps its shape.
	outages, dups := false, false
	for _, q := range s.Queues {
		outages = outages || q.OutageDrops > 0
		dups = dups || q.Duplicated > 0
	}
	head = "queue\tenqueued\tdrops\tmarks\twire_losses\tmax_backlog\tlimit\tsojourn_p50\tsojourn_p99\t"
	if outages {
		head += "outage_drops\t"
	}
	if dups {
		head += "duplicated\t"
	}
	fmt.Fprintln(tw, head)
	hidden := map[string]bool{} // groups whose hosts' own links are left out
	for _, q := range s.Queues {
		if g := groupOf(hostFlow(q.Link), s.Groups); big[g] {
			hidden[g] = true
			continue
		}
		fmt.Fprintf(tw, "%s/%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t", q.Link, q.Dir, q.Enqueued, q.Drops, q.Marks, q.WireLosses,
			bytesStr(q.MaxBacklogBytes), limitStr(q), durStr(q.SojournP50Ps), durStr(q.SojournP99Ps))
		if outages {
			fmt.Fprintf(tw, "%d\t", q.OutageDrops)
		}
		if dups {
			fmt.Fprintf(tw, "%d\t", q.Duplicated)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, g := range s.Groups {
		if hidden[g.Group] {
			fmt.Fprintf(w, "group %s: the queues of its flows' own host links are left out here (--json has them)\n", g.Group)
		}
	}
}

// printCCParams says which of the table's flows ran their CC with module
// parameters of their own, which the cc column does not show.
func printCCParams(w io.Writer, s engine.Summary, big map[string]bool) {
	for _, f := range s.Flows {
		if len(f.CCParams) == 0 || big[groupOf(f.ID, s.Groups)] {
			continue
		}
		var set []string
		for _, k := range slices.Sorted(maps.Keys(f.CCParams)) {
			set = append(set, fmt.Sprintf("%s=%d", k, f.CCParams[k]))
		}
		fmt.Fprintf(w, "%s: %s with %s\n", f.ID, f.CC, strings.Join(set, " "))
	}
}

// abortWhy says what each FlowSummary.AbortReason means, with the
// kernel's settings that bound it.
var abortWhy = map[string]string{
	"syn_retries":   "no SYN-ACK after 10 retransmitted SYNs (tcp_syn_retries 6 + tcp_syn_linear_timeouts 4)",
	"retries2":      "retransmission timeouts for 924.6 s from the first retransmission (tcp_retries2 15)",
	"window_probes": "15 zero-window probes in a row unanswered (tcp_retries2)",
}

// printAborts says which flows' senders gave up on their connections
// (ETIMEDOUT), each flow by name, or a count per group whose rows the table
// leaves out.
func printAborts(w io.Writer, s engine.Summary, big map[string]bool) {
	for _, f := range s.Flows {
		if f.AbortedPs == nil || big[groupOf(f.ID, s.Groups)] {
			continue
		}
		fmt.Fprintf(w, "flow %s: the sender gave up at %v: %s\n", f.ID, sim.Duration(*f.AbortedPs), abortWhy[f.AbortReason])
	}
	for _, g := range s.Groups {
		if n := g.Aborted; n > 0 && big[g.Group] {
			fmt.Fprintf(w, "group %s: %d flows' senders gave up on their connections (--json has when and why)\n", g.Group, n)
		}
	}
}

// hostFlow is the flow whose own host a link joins ("web/3" of "web/3/src"
// or "web/3/dst"), or "".
func hostFlow(link string) string {
	if f, ok := strings.CutSuffix(link, "/src"); ok {
		return f
	}
	f, _ := strings.CutSuffix(link, "/dst")
	return f
}

// printGroups prints each group's counts, then its completed flows' FCT
// and slowdown (FCT over the ideal) by size bucket.
func printGroups(w io.Writer, groups []engine.GroupSummary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tflows\tstarted\tcompleted\tsizes\tin_bucket\tfct_p50\tfct_p99\tslowdown_p50\tslowdown_p99\tslowdown_mean\tjain_bulk\t")
	for _, g := range groups {
		jain := "-"
		if g.JainBulk != nil {
			jain = fmt.Sprintf("%.3f", *g.JainBulk)
		}
		counts := fmt.Sprintf("%s\t%d\t%d\t%d", g.Group, g.Flows, g.Started, g.Completed)
		if len(g.Buckets) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t%s\t\n", counts, jain)
		}
		for i, b := range g.Buckets {
			if i > 0 {
				counts, jain = "\t\t\t", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t\n", counts, bucketStr(b), b.Count,
				durStr(&b.FCTP50Ps), durStr(&b.FCTP99Ps), b.SlowdownP50, b.SlowdownP99, b.SlowdownMean, jain)
		}
	}
	tw.Flush()
}

// bucketStr is a size bucket's range, "10KB-100KB" or "10MB+".
func bucketStr(b engine.FCTBucket) string {
	if b.MaxBytes == math.MaxInt64 {
		return bytesStr(b.MinBytes) + "+"
	}
	return bytesStr(b.MinBytes) + "-" + bytesStr(b.MaxBytes)
}

// groupOf names the group whose flow id is ("<group>/<i>", or a proxy's
// leg of one, "<group>/<i>.0" or ".1"), or "" for a flow of none.
func groupOf(id string, groups []engine.GroupSummary) string {
	for _, g := range groups {
		rest, ok := strings.CutPrefix(id, g.Group+"/")
		if !ok {
			continue
		}
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, ".0"), ".1")
		if _, err := strconv.Atoi(rest); err == nil {
			return g.Group
		}
	}
	return ""
}

func bytesStr(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fGB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fMB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fKB", float64(n)/1e3)
	}
	return fmt.Sprintf("%dB", n)
}

// limitStr is a queue's limits: bytes, packets or both ("-" for none).
func limitStr(q engine.QueueSummary) string {
	var parts []string
	if q.LimitBytes > 0 {
		parts = append(parts, bytesStr(q.LimitBytes))
	}
	if q.LimitPackets > 0 {
		parts = append(parts, fmt.Sprintf("%dp", q.LimitPackets))
	}
	if parts == nil {
		return "-"
	}
	return strings.Join(parts, "/")
}

func rateStr(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fMbps", float64(*v)/1e6)
}

func intStr(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func durStr(v *int64) string {
	if v == nil {
		return "-"
	}
	d := float64(*v) / float64(sim.Millisecond)
	return fmt.Sprintf("%.3fms", d)
}
