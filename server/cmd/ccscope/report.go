package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/server/report"
)

// openReport returns the report builder for --report (nil when not asked for).
func openReport(path string, r *engine.Run, prep *engine.Prepared) (*report.Builder, error) {
	if path == "" {
		return nil, nil
	}
	scn := prep.Scenario
	meta := report.MetaFromRun(r, prep.Hash)
	meta.Detail, meta.Config, meta.Source = scn.Trace.Detail.String(), string(prep.Canonical), "ccscope run "+strings.Join(os.Args[2:], " ")
	return report.New(meta, report.Options{})
}

// writeReport writes the page once the run is over.
func writeReport(path string, b *report.Builder, sum *engine.Summary) error {
	if b == nil {
		return nil
	}
	b.SetSummary(sum)
	if err := writeFile(path, b); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "ccscope: report written to", path)
	return nil
}

func writeFile(path string, b *report.Builder) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := b.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reportMain is `ccscope report TRACE_PREFIX -o out.html`.
func reportMain(args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "", "write the HTML report to `FILE.html` (default: TRACE_PREFIX.html)")
	buckets := fs.Int("buckets", 0, "time buckets every chart shares, 1 to 100000 (default 4000; fewer with many flows)")
	besideArg := fs.String("beside", "", "draw a second run's trace, at `TRACE_PREFIX`, dashed in the same panels (the kernel's of compare --trace, another CC's, ...)")
	labels := fs.String("labels", "", "the two runs' names in legends and titles with --beside, `A,B` (default: the prefixes' file names)")
	flowsArg := fs.String("flows", "", "draw the panels of these flows, `LIST` such as f0,web/3 (default: the first 32 in trace order)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ccscope report TRACE_PREFIX [-o out.html] [--flows LIST] [--beside TRACE_PREFIX [--labels A,B]]")
		fmt.Fprintln(fs.Output(), "TRACE_PREFIX is what --trace was given (out.parquet, out.arrow) or the name before .flows.parquet.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, "TRACE_PREFIX")
	if !ok {
		return code
	}
	arg := pos[0]
	if isSet(fs, "buckets") && (*buckets < 1 || *buckets > 100_000) {
		return fail(fmt.Errorf("--buckets %d: want 1 to 100000", *buckets))
	}
	if *labels != "" && *besideArg == "" {
		return fail(fmt.Errorf("--labels %q: only with --beside", *labels))
	}
	opt := report.Options{Buckets: *buckets}
	if *flowsArg != "" {
		opt.Flows = strings.Split(*flowsArg, ",")
		if slices.Contains(opt.Flows, "") {
			return fail(fmt.Errorf("--flows %q: an empty flow name", *flowsArg))
		}
	}
	start := time.Now()
	var b *report.Builder
	var err error
	if *besideArg == "" {
		b, err = report.ReadTrace(arg, opt)
	} else {
		var la, lb string
		if la, lb, err = besideLabels(*labels, arg, *besideArg); err == nil {
			b, err = report.ReadBeside(arg, *besideArg, la, lb, opt)
		}
	}
	if err != nil {
		return fail(err)
	}
	path := *out
	if path == "" {
		path = tracePrefix(arg)
		if *besideArg != "" {
			path += "-vs-" + filepath.Base(tracePrefix(*besideArg))
		}
		path += ".html"
	}
	if !strings.HasSuffix(path, ".html") {
		return fail(fmt.Errorf("-o %q: the file name must end in .html", path))
	}
	if err := writeFile(path, b); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "ccscope: report of %d trace rows written to %s in %.1fs\n", b.Rows(), path, time.Since(start).Seconds())
	return 0
}

// tracePrefix is the path of arg's trace files without the extension
// (out/sim-seed1), or arg itself when it has none.
func tracePrefix(arg string) string {
	base, err := report.ResolveTrace(arg)
	if err != nil {
		base = arg
	}
	return strings.TrimSuffix(strings.TrimSuffix(base, ".parquet"), ".arrow")
}

// besideLabels are --labels' two names, or the prefixes' file names (their
// paths when the names are the same: a/run and b/run).
func besideLabels(arg, a, b string) (string, string, error) {
	if arg == "" {
		la, lb := filepath.Base(tracePrefix(a)), filepath.Base(tracePrefix(b))
		if la == lb {
			la, lb = tracePrefix(a), tracePrefix(b)
		}
		return la, lb, nil
	}
	la, lb, ok := strings.Cut(arg, ",")
	if !ok || la == "" || lb == "" || strings.Contains(lb, ",") {
		return "", "", fmt.Errorf("--labels %q: want two names, A,B", arg)
	}
	return la, lb, nil
}
