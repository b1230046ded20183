package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/server/emulate"
	"github.com/ccscope/ccscope/server/report"
	"github.com/ccscope/ccscope/server/sweep"
)

// compareMain runs a scenario in the simulator and on the kernel and prints
// the two side by side.
func compareMain(args []string) int {
	c := newScenarioCmd("compare", "Usage: ccscope compare SCENARIO|FILE.json [options]   (Linux, root)",
		"duration `D` of both runs, e.g. 10s (overrides runtime.duration)", false)
	fs := c.fs
	seedsArg := fs.String("seeds", "", "seeds to run, `LIST` such as 1-3 or 1,4,7 (default: the scenario's)")
	traceDir := fs.String("trace", "", "write both runs' traces as Parquet into `DIR` (sim-seedN.*, kernel-seedN.*)")
	asJSON := fs.Bool("json", false, "print the comparison as one JSON object")
	maxRate := fs.Int64("max-rate", 0, "emulation refusal threshold in `BPS` (default: the measured ceiling)")
	ccState := fs.Bool("cc-state", false, "read the kernel CC's state with bpftrace into the kernel runs' signals table (see emulate --cc-state)")
	retries := fs.Int("retries", 2, "run a seed's kernel side up to `N` more times while its relay runs late (p99 over 1 ms), keeping the least late")
	reportPath := fs.String("report", "", "write an HTML report of each seed's two runs, the kernel's dashed in the simulator's panels, to `FILE.html` (FILE-seedN.html for several seeds)")
	raw, sets, opts, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if *retries < 0 {
		return fail(fmt.Errorf("--retries %d: want 0 or more", *retries))
	}
	if isSet(fs, "report") && !strings.HasSuffix(*reportPath, ".html") {
		return fail(fmt.Errorf("--report %q: the file name must end in .html", *reportPath))
	}
	seeds, err := parseSeeds(*seedsArg)
	if err != nil {
		return fail(err)
	}
	files := seedFiles{traceDir: *traceDir, report: *reportPath, several: len(seeds) > 1}
	if *traceDir != "" {
		if err := os.MkdirAll(*traceDir, 0o755); err != nil {
			return fail(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmp, err := emulate.Compare(ctx, raw, sets, emulate.CompareOptions{Seeds: seeds, TraceDir: *traceDir,
		Emulate: emulate.Options{MaxRateBps: *maxRate, CCState: *ccState}, Retries: *retries,
		Progress: func(msg string) { fmt.Fprintln(os.Stderr, "compare:", msg) }, Config: opts, Seed: files.write})
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(cmp); err != nil {
			return fail(err)
		}
		return 0
	}
	printComparison(os.Stdout, cmp)
	return 0
}

// parseSeeds reads "1-3", "1,4,7" or a mix (as sweep does); "" is none. A
// comparison runs each seed on the kernel in real time: it takes at most
// 1000.
func parseSeeds(s string) ([]uint64, error) {
	if s == "" {
		return nil, nil
	}
	seeds, err := sweep.ParseSeeds(s, 1000)
	if err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	return seeds, nil
}

// tableGroupFlows is the size above which a group's flows are left out of
// the printed table, which keeps the group's own rows (--json has all).
const tableGroupFlows = 8

// printComparison prints, per flow and per flow group, each metric's mean
// over the seeds in the simulator and on the kernel, and their relative
// difference.
func printComparison(w io.Writer, c *emulate.Comparison) {
	fmt.Fprintf(w, "scenario %s  seeds %v  simulator vs Linux %s", c.Scenario, c.Seeds, c.Kernel)
	if len(c.Emulated) > 0 {
		// The worst seed's: one late kernel run is reason enough to doubt.
		var p99 *int64
		var worst int64
		for _, e := range c.Emulated {
			if l := e.Lateness; l.P99Ps != nil && (p99 == nil || *l.P99Ps > *p99) {
				p99 = l.P99Ps
			}
			worst = max(worst, e.Lateness.MaxPs)
		}
		fmt.Fprintf(w, "  (relay lateness p99 %s, max %s", durStr(p99), durStr(&worst))
		if len(c.Emulated) > 1 {
			fmt.Fprintf(w, ", the worst of %d seeds", len(c.Emulated))
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	said := map[string]bool{}
	for _, e := range c.Emulated {
		for _, n := range e.Notes {
			if !said[n] {
				said[n] = true
				fmt.Fprintf(w, "note: %s\n", n)
			}
		}
	}
	type key struct{ flow, metric string }
	type acc struct {
		sim, kern   float64
		nSim, nKern int
		simR, kernR [2]float64 // per-seed min and max
		unit        string
		first       int
	}
	members := map[string]map[string]bool{}
	var big []string
	for _, r := range c.Rows {
		if r.Group == "" {
			continue
		}
		if members[r.Group] == nil {
			members[r.Group] = map[string]bool{}
		}
		if !members[r.Group][r.Flow] {
			members[r.Group][r.Flow] = true
			if len(members[r.Group]) == tableGroupFlows+1 {
				big = append(big, r.Group)
			}
		}
	}
	sums := map[key]*acc{}
	var keys []key
	for i, r := range c.Rows {
		if len(members[r.Group]) > tableGroupFlows {
			continue
		}
		k := key{r.Flow, r.Metric}
		a, ok := sums[k]
		if !ok {
			a = &acc{unit: r.Unit, first: i}
			sums[k] = a
			keys = append(keys, k)
		}
		if r.Sim != nil {
			a.sim += *r.Sim
			a.nSim++
			a.simR = widen(a.simR, *r.Sim, a.nSim == 1)
		}
		if r.Kernel != nil {
			a.kern += *r.Kernel
			a.nKern++
			a.kernR = widen(a.kernR, *r.Kernel, a.nKern == 1)
		}
	}
	// With several seeds each side's per-seed range follows its mean: a
	// difference between means is worth reading only beside how far the
	// seeds of one side spread (BBR's retransmissions on wifi: 0 to 377
	// per seed simulated, 0 to 293 on the kernel).
	ranges := len(c.Seeds) > 1
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	row := func(flow, metric, unit, sv, sr, kv, kr, diff string) {
		cols := []string{flow, metric, unit, sv, kv, diff}
		if ranges {
			cols = []string{flow, metric, unit, sv, sr, kv, kr, diff}
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	row("flow", "metric", "unit", "sim", "sim range", "kernel", "kernel range", "diff")
	for _, k := range keys {
		a := sums[k]
		sv, kv, diff, sr, kr := "-", "-", "-", "-", "-"
		if a.nSim > 0 {
			sv = fmt.Sprintf("%.2f", a.sim/float64(a.nSim))
			sr = fmt.Sprintf("%.2f–%.2f", a.simR[0], a.simR[1])
		}
		if a.nKern > 0 {
			kv = fmt.Sprintf("%.2f", a.kern/float64(a.nKern))
			kr = fmt.Sprintf("%.2f–%.2f", a.kernR[0], a.kernR[1])
		}
		if a.nSim > 0 && a.nKern > 0 && a.sim != 0 {
			s, kk := a.sim/float64(a.nSim), a.kern/float64(a.nKern)
			diff = fmt.Sprintf("%+.1f%%", 100*(kk-s)/s)
		}
		row(k.flow, k.metric, a.unit, sv, sr, kv, kr, diff)
	}
	tw.Flush()
	for _, g := range big {
		// A flow split at a proxy has a row for each leg, "<id>.0" and "<id>.1".
		flows, legs := 0, ""
		for name := range members[g] {
			if strings.HasSuffix(name, ".1") {
				legs = ", each leg's,"
			} else {
				flows++
			}
		}
		fmt.Fprintf(w, "group %s: its %d flows' own rows%s are left out here (--json has them)\n", g, flows, legs)
	}
	for _, p := range c.Traces {
		fmt.Fprintln(w, "trace:", p)
	}
}

// widen extends a [min, max] range by v; first starts it at v.
func widen(r [2]float64, v float64, first bool) [2]float64 {
	if first {
		return [2]float64{v, v}
	}
	return [2]float64{min(r[0], v), max(r[1], v)}
}

// seedFiles writes what compare keeps of each seed's pair of runs beside
// the trace tables Compare writes itself: each run's .run.json in the
// trace directory, so that `ccscope report` draws their pages with the
// summary and scenario as it does for `run --trace`, and the seed's
// --report page.
type seedFiles struct {
	traceDir, report string
	several          bool // a page per seed: FILE-seedN.html
}

func (f seedFiles) write(s emulate.SeedRuns) error {
	if f.traceDir != "" {
		for _, run := range []struct {
			side string
			sum  *engine.Summary
		}{{"sim", s.SimSummary}, {"kernel", s.KernelSummary}} {
			info := report.RunInfo{Summary: *run.sum, Config: string(s.Config), Detail: "sampled"}
			if err := report.WriteRunInfo(emulate.TracePath(f.traceDir, run.side, s.Seed), info); err != nil {
				return err
			}
		}
	}
	if f.report == "" {
		return nil
	}
	path := f.report
	if f.several {
		path = fmt.Sprintf("%s-seed%d.html", strings.TrimSuffix(path, ".html"), s.Seed)
	}
	if err := compareReport(path, s); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "compare: report written to", path)
	return nil
}

// compareReport writes one seed's two runs as one page: the simulator's
// panels with the kernel's series dashed in them, the seed's rows as a
// table and its notes.
func compareReport(path string, s emulate.SeedRuns) error {
	ma := report.MetaFromSummary(s.SimSummary)
	ma.Detail, ma.Config = "sampled", string(s.Config)
	ma.Source = "ccscope compare " + strings.Join(os.Args[2:], " ")
	mb := report.MetaFromSummary(s.KernelSummary)
	mb.Flows, mb.HorizonPs = ma.Flows, ma.HorizonPs // one time axis; the flows as the simulator names them
	mb.Source = "Linux " + s.KernelRelease + " on the emulated path"
	a, err := report.FromRecorder(ma, report.Options{}, s.Sim)
	if err != nil {
		return err
	}
	b, err := report.FromRecorder(mb, report.Options{}, s.Kernel)
	if err != nil {
		return err
	}
	if err := a.Beside(b, "sim", "kernel"); err != nil {
		return err
	}
	t := report.Table{Title: fmt.Sprintf("The simulator beside Linux %s, seed %d", s.KernelRelease, s.Seed),
		Head: []string{"flow", "metric", "unit", "sim", "kernel", "diff"}}
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", *v)
	}
	for _, r := range s.Rows {
		diff := "-"
		if r.RelDiff != nil {
			diff = fmt.Sprintf("%+.1f%%", 100**r.RelDiff)
		}
		t.Rows = append(t.Rows, []string{r.Flow, r.Metric, r.Unit, num(r.Sim), num(r.Kernel), diff})
	}
	a.AddTable(t)
	for _, n := range s.Notes {
		a.AddNote(n)
	}
	return writeFile(path, a)
}
