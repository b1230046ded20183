package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ccscope/ccscope/server/sweep"
)

func sweepMain(args []string) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var grids, axes, sets setFlags
	fs.Var(&grids, "grid", "cross a parameter: `path=v1,v2,...` (repeatable), e.g. flows.f0.cc=cubic,bbr")
	fs.Var(&axes, "axis", "an impairment axis varied alone: `path=v1,v2,...` (repeatable)")
	fs.Var(&sets, "set", "a fixed override `path=value` (repeatable)")
	seeds := fs.String("seeds", "", "master seeds, e.g. `1-5` or 1,3,7 (default: the scenario's)")
	dur := fs.String("duration", "", "simulated duration `D` of every run (overrides runtime.duration)")
	out := fs.String("o", "sweep.parquet", "the catalog `FILE` (Parquet); an existing one is resumed")
	jobs := fs.Int("jobs", 0, "runs at once (0: the number of CPUs)")
	traceDir := fs.String("trace-dir", "", "keep every run's trace under `DIR` (<run>.*.parquet)")
	reportDir := fs.String("report-dir", "", "write the catalog page DIR/index.html and a page per run under `DIR`/runs/")
	runReports := fs.Bool("run-reports", false, "with --report-dir: trace every run and write its full HTML report (as run --report) as its page")
	metric := fs.String("metric", "goodput_bps", "the catalog column the catalog page charts")
	progress := fs.String("progress", "auto", "progress display: auto (a bar on a terminal), bar, json (one line per run on stderr), none")
	dryRun := fs.Bool("dry-run", false, "run nothing: check every point and print each as a JSON line (its overrides, config hash, and whether it would run, share another point's run, or is in the catalog -o)")
	filesDir := filesDirFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ccscope sweep SPEC.json|SCENARIO [options]")
		fmt.Fprintln(fs.Output(), "\nRuns one simulation per point (grid × each axis value × seeds) on all cores and writes a Parquet catalog,")
		fmt.Fprintln(fs.Output(), "one row per run and flow. Points already in the catalog (same config hash) are skipped.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, "SPEC.json|SCENARIO")
	if !ok {
		return code
	}
	arg := pos[0]
	if err := checkSweepFlags(fs, *jobs, *metric, *reportDir, *dryRun); err != nil {
		return fail(err)
	}
	spec, err := sweepSpec(arg)
	if err != nil {
		return fail(err)
	}
	// A scenario file's trace and CDF files are relative to it; an inline
	// scenario's, to its spec file (unless --files-dir says where).
	var name string
	scnOpts := scenarioOptions(arg, *filesDir)
	if json.Unmarshal(spec.Scenario, &name) == nil {
		scnOpts = scenarioOptions(name, *filesDir)
	}
	for _, g := range grids {
		p, err := sweep.ParseGrid(g)
		if err != nil {
			return fail(fmt.Errorf("--grid %w", err))
		}
		spec.Grid = append(spec.Grid, p)
	}
	for _, a := range axes {
		p, err := sweep.ParseGrid(a)
		if err != nil {
			return fail(fmt.Errorf("--axis %w", err))
		}
		spec.Axes = append(spec.Axes, p)
	}
	if *dur != "" {
		if err := checkDurationFlag(*dur); err != nil {
			return fail(err)
		}
		printNotes(overrideNotes("--duration", "runtime.duration", *dur, "the spec's set", specSets(spec)))
		printNotes(overrideNotes("--duration", "runtime.duration", *dur, "--set", sets))
		sets = append(sets, "runtime.duration="+*dur)
	}
	for _, s := range sets {
		path, v, ok := strings.Cut(s, "=")
		if !ok {
			return fail(fmt.Errorf("--set %q: expected path=value", s))
		}
		spec.Set = append(spec.Set, sweep.Param{Path: path, Values: []json.RawMessage{jsonOrString(v)}})
	}
	if *seeds != "" && len(spec.Seeds) > 0 {
		printNotes([]string{fmt.Sprintf("--seeds %s overrides the spec's seeds", *seeds)})
	}
	if *seeds != "" {
		if spec.Seeds, err = sweep.ParseSeeds(*seeds, sweep.MaxSeeds); err != nil {
			return fail(fmt.Errorf("--seeds: %w", err))
		}
	}
	if err := spec.Validate(); err != nil {
		return fail(err)
	}
	if *dryRun {
		return sweepDryRun(spec, sweep.Options{Catalog: *out, Load: loadScenario, Config: scnOpts})
	}
	mode := *progress
	if mode == "auto" {
		mode = "none"
		if isTerminal(os.Stderr) {
			mode = "bar"
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := sweep.Options{Catalog: *out, Jobs: *jobs, TraceDir: *traceDir, ReportDir: *reportDir, RunReports: *runReports, Metric: *metric,
		Load: loadScenario, Config: scnOpts}
	var last time.Time
	switch mode {
	case "bar":
		opt.Progress = func(p sweep.Progress) {
			if time.Since(last) > 100*time.Millisecond || p.Done == p.Total {
				drawSweepProgress(os.Stderr, p)
				last = time.Now()
			}
		}
	case "json":
		enc := json.NewEncoder(os.Stderr)
		opt.Progress = func(p sweep.Progress) {
			_ = enc.Encode(map[string]any{"done": p.Done, "skipped": p.Skipped, "total": p.Total, "elapsed_s": p.Elapsed.Seconds()})
		}
	case "none":
	default:
		return fail(fmt.Errorf("--progress %q: auto, bar, json or none", *progress))
	}
	res, err := sweep.Run(ctx, spec, opt)
	if mode == "bar" {
		fmt.Fprintln(os.Stderr)
	}
	printNotes(res.Notes)
	var stopped *sweep.Interrupted
	if errors.As(err, &stopped) {
		fail(err)
		return 130 // as a shell reports a command SIGINT stopped
	}
	if err != nil {
		return failSweep(err)
	}
	perRun := 0.0
	if res.Ran > 0 {
		perRun = res.RunWall.Seconds() / float64(res.Ran) * 1e3
	}
	fmt.Fprintf(os.Stderr, "ccscope: %d runs (%d already in the catalog, %d shared with another point) in %.1f s; %.1f ms of run time per run; %d rows in %s\n",
		res.Ran, res.Skipped, res.Reused, res.Elapsed.Seconds(), perRun, res.Rows, *out)
	if *reportDir != "" {
		fmt.Fprintf(os.Stderr, "ccscope: catalog page %s/index.html\n", strings.TrimRight(*reportDir, "/"))
	}
	return 0
}

// failSweep prints a failed sweep's error, each bad point with its own.
func failSweep(err error) int {
	var bad sweep.PointErrors
	if !errors.As(err, &bad) {
		var pe *sweep.PointError
		if !errors.As(err, &pe) {
			return fail(err)
		}
		bad = sweep.PointErrors{pe}
	}
	for _, pe := range bad {
		fmt.Fprintf(os.Stderr, "ccscope: sweep point %s:\n", pe.Describe())
		fail(pe.Err)
	}
	return 1
}

// sweepDryRun prints the points of spec as sweep.Plan finds them, one JSON
// object a line on stdout, and a count on stderr.
func sweepDryRun(spec *sweep.Spec, opt sweep.Options) int {
	plan, err := sweep.Plan(spec, opt)
	if err != nil {
		return failSweep(err)
	}
	type line struct {
		Index      int                        `json:"index"`
		Axis       string                     `json:"axis"`
		Params     map[string]json.RawMessage `json:"params"`
		Seed       *uint64                    `json:"seed,omitempty"`
		Sets       []string                   `json:"sets"`
		ConfigHash string                     `json:"config_hash"`
		Status     string                     `json:"status"`
	}
	enc := json.NewEncoder(os.Stdout)
	n := map[string]int{}
	for i, p := range plan {
		l := line{Index: i, Axis: p.Point.Axis, Params: map[string]json.RawMessage{}, Sets: p.Sets, ConfigHash: p.Hash, Status: p.Status}
		for _, q := range p.Point.Params {
			l.Params[q.Path] = q.Values[0]
		}
		if p.Point.HasSeed {
			l.Seed = &p.Point.Seed
		}
		if err := enc.Encode(l); err != nil {
			return fail(err)
		}
		n[p.Status]++
	}
	points := "points"
	if len(plan) == 1 {
		points = "point"
	}
	fmt.Fprintf(os.Stderr, "ccscope: dry run: %d %s: %d to run, %d sharing another point's run, %d already in %s; nothing run\n",
		len(plan), points, n[sweep.PlanRun], n[sweep.PlanShared], n[sweep.PlanCatalogued], opt.Catalog)
	return 0
}

// checkSweepFlags refuses the sweep's flags that are out of range or that
// would have nothing to act on, before the sweep reads its spec.
func checkSweepFlags(fs *flag.FlagSet, jobs int, metric, reportDir string, dryRun bool) error {
	if jobs < 0 {
		return fmt.Errorf("--jobs %d: want 1 or more (or 0: the number of CPUs)", jobs)
	}
	if dryRun {
		for _, name := range []string{"trace-dir", "report-dir", "run-reports", "metric"} {
			if isSet(fs, name) {
				return fmt.Errorf("--%s: --dry-run runs nothing and writes no files", name)
			}
		}
	}
	if err := sweep.CheckMetric(metric); err != nil {
		return err
	}
	if reportDir == "" {
		for _, name := range []string{"metric", "run-reports"} {
			if isSet(fs, name) {
				return fmt.Errorf("--%s: needs --report-dir DIR, whose pages it is for", name)
			}
		}
	}
	return nil
}

// specSets are a spec's fixed overrides as path=value.
func specSets(spec *sweep.Spec) []string {
	var out []string
	for _, p := range spec.Set {
		out = append(out, p.Path+"="+string(p.Values[0]))
	}
	return out
}

// sweepSpec reads a sweep spec file, or makes an empty spec over a
// scenario name or scenario file.
func sweepSpec(arg string) (*sweep.Spec, error) {
	if strings.HasSuffix(arg, ".json") {
		raw, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", arg, err)
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) == nil && isSpec(probe) {
			s, err := sweep.ParseSpec(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			return s, nil
		}
	}
	name, _ := json.Marshal(arg)
	return &sweep.Spec{Scenario: name}, nil
}

// isSpec says whether a JSON object's keys are a sweep spec's rather than
// a scenario's: it has one of a spec's keys, which no scenario has, or none
// at all ({} is a spec that lacks its scenario more than a scenario that
// lacks everything).
func isSpec(obj map[string]json.RawMessage) bool {
	for _, k := range []string{"scenario", "set", "grid", "axes", "points", "seeds"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return len(obj) == 0
}

func jsonOrString(v string) json.RawMessage {
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

func drawSweepProgress(w io.Writer, p sweep.Progress) {
	const width = 30
	frac := float64(p.Done) / float64(max(p.Total, 1))
	n := int(frac * width)
	eta := "--"
	if ran := p.Done - p.Skipped; ran > 0 {
		left := time.Duration(float64(p.Elapsed) / float64(ran) * float64(p.Total-p.Done))
		eta = left.Round(time.Second).String()
	}
	fmt.Fprintf(w, "\r[%s%s] %d/%d runs (%d skipped)  %.0fs  ETA %s   ", strings.Repeat("#", n), strings.Repeat(" ", width-n),
		p.Done, p.Total, p.Skipped, p.Elapsed.Seconds(), eta)
}
