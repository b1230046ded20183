package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server/report"
)

// Options configure Run.
type Options struct {
	// Catalog is the Parquet file to write (and to resume from).
	Catalog string
	// Jobs is the number of runs at once (0: GOMAXPROCS).
	Jobs int
	// TraceDir, if set, keeps each run's trace as TraceDir/<run>.parquet
	// (five sibling files, see trace.FileSink), recording every change
	// unless the scenario asks for sampled traces.
	TraceDir string
	// ReportDir, if set, receives the catalog page (index.html) and one
	// page per run (runs/<run>.html): the run's summary tables, or with
	// RunReports its full HTML report (server/report, as `ccscope run
	// --report` writes it).
	ReportDir string
	// RunReports records every run's trace (every change, or the
	// scenario's sampled detail) and writes its full report as its page.
	// Each costs a traced run and a few MB of HTML.
	RunReports bool
	// Metric is the catalog column the catalog page charts (default
	// goodput_bps).
	Metric string
	// Load resolves the spec's scenario when it is a name or path.
	Load func(nameOrPath string) ([]byte, error)
	// Config are the scenario's parse options: config.WithDir for a
	// scenario file, whose trace and CDF files are relative to it.
	Config []config.Option
	// Progress is called after each finished or skipped point from the
	// driver goroutine (never concurrently).
	Progress func(p Progress)
	// FlushEvery is how often the catalog is rewritten while the sweep
	// runs, so that an interrupted sweep resumes (default 5 s).
	FlushEvery time.Duration
}

// Progress reports a sweep's state.
type Progress struct {
	Done, Skipped, Total int
	Elapsed              time.Duration
	// CPU is the summed wall time of the runs done so far (each run is
	// single-threaded, so on an otherwise idle machine this is its CPU
	// time).
	RunWall time.Duration
}

// Result summarises a finished sweep.
type Result struct {
	// Ran counts the points run; Skipped those already in the catalog;
	// Reused those whose scenario is another point's, in this sweep or in
	// the catalog under another axis (their rows are copied, not rerun).
	Ran, Skipped, Reused int
	Rows                 int
	Elapsed              time.Duration
	RunWall              time.Duration // summed wall time of the runs themselves
	// Notes are the points' override notes (engine.Prepared.Notes), each
	// once: a grid value that replaces an object and drops its fields.
	Notes []string
}

// PointError is a point whose scenario was invalid or whose run failed.
type PointError struct {
	Point Point
	Err   error
}

func (e *PointError) Error() string {
	return fmt.Sprintf("sweep: point %s: %v", e.Describe(), e.Err)
}

// Describe names the point by its parameters and seed.
func (e *PointError) Describe() string {
	var parts []string
	for _, p := range e.Point.Params {
		parts = append(parts, p.Path+"="+display(p.Values[0]))
	}
	if e.Point.HasSeed {
		parts = append(parts, fmt.Sprintf("seed=%d", e.Point.Seed))
	}
	if len(parts) == 0 {
		return "(no swept parameters)"
	}
	return strings.Join(parts, " ")
}

func (e *PointError) Unwrap() error { return e.Err }

// PointErrors are a sweep's invalid points, all of them, found before any
// run.
type PointErrors []*PointError

func (e PointErrors) Error() string {
	msgs := make([]string, len(e))
	for i, pe := range e {
		msgs[i] = pe.Error()
	}
	return strings.Join(msgs, "\n")
}

func (e PointErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, pe := range e {
		out[i] = pe
	}
	return out
}

// validate prepares every point without running it and returns all the
// invalid ones. Points that differ only in their seed are prepared once,
// and named without it: any seed is valid. With none invalid, it returns
// the config hash of each seedless set of overrides it prepared, keyed by
// the overrides joined with NULs (Plan).
func validate(spec *Spec, points []Point, base []byte, opt Options) (map[string]string, error) {
	var bad PointErrors
	hashes := map[string]string{}
	for _, p := range points {
		p.Seed, p.HasSeed = 0, false
		sets := p.Sets(spec)
		key := strings.Join(sets, "\x00")
		if _, done := hashes[key]; done {
			continue
		}
		prep, err := engine.Prepare(base, sets, opt.Config...)
		if err != nil {
			bad = append(bad, &PointError{Point: p, Err: err})
			hashes[key] = ""
			continue
		}
		hashes[key] = prep.Hash
	}
	if len(bad) > 0 {
		return nil, bad
	}
	return hashes, nil
}

// resume reads the catalog a sweep adds to (none if the file does not
// exist) and indexes its rows.
func resume(spec *Spec, path string) ([]Row, catalogued, error) {
	old, oldBase, err := readCatalog(path)
	if err != nil {
		return nil, catalogued{}, err
	}
	// Resuming adds points to a catalog, never a second sweep's runs: their
	// rows would share the swept columns and be drawn as one's seeds.
	if fixed := spec.Base(); len(old) > 0 && oldBase != "" && oldBase != fixed {
		return nil, catalogued{}, fmt.Errorf("sweep: catalog %s holds the runs of a sweep with other fixed settings (%s; this one %s): write this one to another catalog (-o), or remove that one to start again", path, oldBase, fixed)
	}
	// A run is catalogued once per axis it appears on: the same scenario
	// can be a point of two axes (each axis's baseline value), and is then
	// run once and its rows copied.
	have := catalogued{rows: map[string][]Row{}, keys: map[string]bool{}, claims: &sync.Map{}}
	for _, r := range old {
		have.rows[r.ConfigHash] = append(have.rows[r.ConfigHash], r)
		have.keys[r.ConfigHash+"\x00"+r.Axis] = true
	}
	return old, have, nil
}

// catalogued indexes the catalog's rows by config hash, and which (hash,
// axis) pairs it holds. Read-only while the workers run.
type catalogued struct {
	rows map[string][]Row
	keys map[string]bool
	// claims holds this sweep's runs by config hash (*claim): the first
	// point with a hash runs it, later ones wait for its rows.
	claims *sync.Map
}

// claim is one run of this sweep that points with the same config hash
// share.
type claim struct {
	done chan struct{}
	rows []Row // nil if the run failed
}

type outcome struct {
	index   int // the point's index in spec.Points()
	notes   []string
	rows    []Row
	skipped bool
	reused  bool
	wall    time.Duration
	err     error
}

// Run runs every point of spec not already in the catalog (same config
// hash), writes the catalog, and with a report directory its pages.
func Run(ctx context.Context, spec *Spec, opt Options) (Result, error) {
	start := time.Now()
	if opt.Catalog == "" {
		return Result{}, errors.New("sweep: no catalog path")
	}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	if opt.FlushEvery <= 0 {
		opt.FlushEvery = 5 * time.Second
	}
	if opt.Metric == "" {
		opt.Metric = "goodput_bps"
	}
	// Checked before any run, not once they are all done.
	if err := CheckMetric(opt.Metric); err != nil {
		return Result{}, err
	}
	base, err := scenarioBytes(spec.Scenario, opt.Load)
	if err != nil {
		return Result{}, err
	}
	points := spec.Points()
	// Before any run, so that a sweep with a bad point writes nothing and
	// names every bad point, not the first one a worker reached.
	if _, err := validate(spec, points, base, opt); err != nil {
		return Result{}, err
	}
	old, have, err := resume(spec, opt.Catalog)
	if err != nil {
		return Result{}, err
	}
	fixed := spec.Base()
	rows := old
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	results := make(chan outcome, opt.Jobs)
	var wg sync.WaitGroup
	for w := 0; w < opt.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				o := runPoint(spec, points[i], base, have, opt)
				o.index = i
				results <- o
			}
		}()
	}
	go func() {
		defer close(work)
		for i := range points {
			select {
			case work <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	res := Result{}
	var firstErr error
	lastFlush := time.Now()
	seen := map[string]bool{}
	pointOf := make([]int, len(old)) // each new row's point index; -1 for old rows
	for i := range pointOf {
		pointOf[i] = -1
	}
	order := spec.Columns()
	for o := range results {
		for _, n := range o.notes {
			if !slices.Contains(res.Notes, n) {
				res.Notes = append(res.Notes, n)
			}
		}
		if o.err != nil {
			if firstErr == nil {
				firstErr = o.err
				cancel()
			}
			continue
		}
		switch {
		case o.skipped:
			res.Skipped++
		case o.reused:
			res.Reused++
		default:
			res.Ran++
			res.RunWall += o.wall
		}
		if len(o.rows) > 0 {
			k := o.rows[0].ConfigHash + "\x00" + o.rows[0].Axis
			if !seen[k] {
				seen[k] = true
				rows = append(rows, o.rows...)
				pointOf = append(pointOf, slices.Repeat([]int{o.index}, len(o.rows))...)
			}
		}
		if opt.Progress != nil {
			opt.Progress(Progress{Done: res.Ran + res.Skipped + res.Reused, Skipped: res.Skipped + res.Reused, Total: len(points),
				Elapsed: time.Since(start), RunWall: res.RunWall})
		}
		if time.Since(lastFlush) > opt.FlushEvery {
			if err := writeCatalog(opt.Catalog, fixed, order, rows); err != nil && firstErr == nil {
				firstErr = err
				cancel()
			}
			lastFlush = time.Now()
		}
	}
	// The new rows go after the old ones in the order of the points,
	// whatever order the runs finished in: the same sweep gives the same
	// catalog. The runs that finished are kept even when another point
	// failed, so that fixing the point and rerunning resumes.
	sortNew(rows[len(old):], pointOf[len(old):])
	if err := writeCatalog(opt.Catalog, fixed, order, rows); err != nil && firstErr == nil {
		firstErr = err
	}
	if done := res.Ran + res.Skipped + res.Reused; firstErr == nil && parent.Err() != nil && done < len(points) {
		firstErr = &Interrupted{NotRun: len(points) - done, Points: len(points)}
	}
	if firstErr == nil && opt.ReportDir != "" {
		firstErr = WriteCatalogHTML(filepath.Join(opt.ReportDir, "index.html"), spec, rows, opt.Metric)
	}
	res.Rows = len(rows)
	res.Elapsed = time.Since(start)
	return res, firstErr
}

// Interrupted is the error of a sweep stopped (SIGINT, SIGTERM) before all
// its points ran: the catalog keeps those that did, and the same sweep run
// again resumes from them.
type Interrupted struct {
	NotRun, Points int
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("sweep: interrupted with %d of its %d points not run; the catalog keeps the rest, and the same sweep run again resumes", e.NotRun, e.Points)
}

// sortNew orders rows by their points' indices, stably.
func sortNew(rows []Row, index []int) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return index[idx[a]] < index[idx[b]] })
	sorted := make([]Row, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// scenarioBytes resolves the spec's scenario to JSON.
func scenarioBytes(raw json.RawMessage, load func(string) ([]byte, error)) ([]byte, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if load == nil {
			return config.Builtin(name)
		}
		return load(name)
	}
	if len(raw) > 0 && raw[0] == '{' {
		return raw, nil
	}
	return nil, fmt.Errorf("sweep spec: scenario: a built-in name, a file path or an inline scenario object")
}

// runPoint prepares, skips (already catalogued) or runs one point.
func runPoint(spec *Spec, p Point, base []byte, have catalogued, opt Options) outcome {
	prep, err := engine.Prepare(base, p.Sets(spec), opt.Config...)
	if err != nil {
		return outcome{err: &PointError{Point: p, Err: err}}
	}
	o := skipOrRun(spec, p, prep, have, opt)
	o.notes = prep.Notes
	return o
}

// skipOrRun skips, reuses or runs one prepared point.
func skipOrRun(spec *Spec, p Point, prep *engine.Prepared, have catalogued, opt Options) outcome {
	if have.keys[prep.Hash+"\x00"+p.Axis] {
		return outcome{skipped: true}
	}
	if old := have.rows[prep.Hash]; len(old) > 0 {
		return outcome{rows: relabel(old, p), reused: true}
	}
	c := &claim{done: make(chan struct{})}
	if prev, loaded := have.claims.LoadOrStore(prep.Hash, c); loaded {
		pc := prev.(*claim)
		<-pc.done
		if pc.rows == nil {
			return outcome{err: &PointError{Point: p, Err: errors.New("its run (shared with another point) failed")}}
		}
		return outcome{rows: relabel(pc.rows, p), reused: true}
	}
	o := runPrepared(spec, p, prep, opt)
	c.rows = o.rows
	close(c.done)
	return o
}

// relabel copies a run's rows (those of its first axis) for point p.
func relabel(rows []Row, p Point) []Row {
	params := map[string]json.RawMessage{}
	for _, q := range p.Params {
		params[q.Path] = q.Values[0]
	}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		if r.Axis != rows[0].Axis {
			break
		}
		r.Axis, r.Params = p.Axis, params
		out = append(out, r)
	}
	return out
}

// runPrepared runs one prepared point and returns its rows.
func runPrepared(spec *Spec, p Point, prep *engine.Prepared, opt Options) outcome {
	var err error
	id := runID(prep.Hash)
	var sink *trace.FileSink
	var tracePath *string
	if opt.TraceDir != "" {
		if prep.Scenario.Trace.Detail == config.TraceSummary {
			prep.Scenario.Trace.Detail = config.TraceChange
		}
		path := filepath.Join(opt.TraceDir, id+".parquet")
		if sink, err = trace.NewFileSink(path); err != nil {
			return outcome{err: &PointError{Point: p, Err: err}}
		}
		tracePath = &path
	}
	var ts trace.Sink
	if sink != nil {
		ts = sink
	}
	if opt.RunReports && opt.ReportDir != "" && prep.Scenario.Trace.Detail == config.TraceSummary {
		prep.Scenario.Trace.Detail = config.TraceChange
	}
	t0 := time.Now()
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		return outcome{err: &PointError{Point: p, Err: err}}
	}
	var rep *report.Builder
	if opt.RunReports && opt.ReportDir != "" {
		scn := prep.Scenario
		meta := report.MetaFromRun(r, prep.Hash)
		meta.Detail, meta.Config, meta.Source = scn.Trace.Detail.String(), string(prep.Canonical), "ccscope sweep: "+strings.Join(p.Sets(spec), " ")
		if rep, err = report.New(meta, report.Options{}); err != nil {
			return outcome{err: &PointError{Point: p, Err: err}}
		}
	}
	switch {
	case rep != nil && ts != nil:
		r.Trace.SetSink(trace.Tee(rep, ts))
	case rep != nil:
		r.Trace.SetSink(rep)
	case ts != nil:
		r.Trace.SetSink(ts)
	}
	r.RunToEnd()
	wall := time.Since(t0)
	if sink != nil {
		if err := errors.Join(sink.Close(), r.Trace.Err()); err != nil {
			return outcome{err: &PointError{Point: p, Err: err}}
		}
	}
	sum := r.Summary(prep.Hash)
	sum.WallS = wall.Seconds()
	var reportPath *string
	if opt.ReportDir != "" {
		rel := filepath.Join("runs", id+".html")
		var werr error
		if rep != nil {
			rep.SetSummary(&sum)
			werr = writeReport(filepath.Join(opt.ReportDir, rel), rep)
		} else {
			werr = WriteRunHTML(filepath.Join(opt.ReportDir, rel), p, spec, sum)
		}
		if werr != nil {
			return outcome{err: &PointError{Point: p, Err: werr}}
		}
		reportPath = &rel
	}
	return outcome{rows: rowsOf(p, sum, tracePath, reportPath), wall: wall}
}

// writeReport writes a run's full report page.
func writeReport(path string, b *report.Builder) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sweep: report: %w", err)
	}
	if err := b.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
