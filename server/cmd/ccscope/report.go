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

// openReport returns the report builder for --report (nil when not asked
// for), drawing the panels of flows (nil: the first 32).
func openReport(path string, r *engine.Run, prep *engine.Prepared, flows []string) (*report.Builder, error) {
	if path == "" {
		return nil, nil
	}
	scn := prep.Scenario
	meta := report.MetaFromRun(r, prep.Hash)
	meta.Detail, meta.Config, meta.Source = scn.Trace.Detail.String(), string(prep.Canonical), "ccscope run "+strings.Join(os.Args[2:], " ")
	b, err := report.New(meta, report.Options{Flows: flows})
	if err != nil && flows != nil {
		return nil, fmt.Errorf("--report-flows: %w", err)
	}
	return b, err
}

// flowList reads a flag's comma-separated flow names ("" is none).
func flowList(flag, v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	flows := strings.Split(v, ",")
	if slices.Contains(flows, "") {
		return nil, fmt.Errorf("%s %q: an empty flow name", flag, v)
	}
	return flows, nil
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
	var besides prefixList
	fs.Var(&besides, "beside", "draw another run's trace, at `TRACE_PREFIX`, in the same panels, dashed (the kernel's of compare --trace, another CC's, ...); up to 3, each in a dash pattern of its own")
	labels := fs.String("labels", "", "the runs' names in legends and titles with --beside, `A,B,...`, the page's own first (default: the prefixes' file names)")
	flowsArg := fs.String("flows", "", "draw the panels of these flows, `LIST` such as f0,web/3 (default: the first 32 in trace order)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ccscope report TRACE_PREFIX [-o out.html] [--flows LIST] [--beside TRACE_PREFIX]... [--labels A,B,...]")
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
	if *labels != "" && len(besides) == 0 {
		return fail(fmt.Errorf("--labels %q: only with --beside", *labels))
	}
	flows, err := flowList("--flows", *flowsArg)
	if err != nil {
		return fail(err)
	}
	opt := report.Options{Buckets: *buckets, Flows: flows}
	start := time.Now()
	var b *report.Builder
	if len(besides) == 0 {
		b, err = report.ReadTrace(arg, opt)
	} else {
		prefixes := append([]string{arg}, besides...)
		var names []string
		if names, err = besideLabels(*labels, prefixes); err == nil {
			b, err = report.ReadBeside(prefixes, names, opt)
		}
	}
	if err != nil {
		return fail(err)
	}
	path := *out
	if path == "" {
		path = tracePrefix(arg)
		for _, p := range besides {
			path += "-vs-" + filepath.Base(tracePrefix(p))
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

// besideLabels are --labels' names, one per trace, or the prefixes' file
// names (their paths when two names are the same: a/run and b/run).
func besideLabels(arg string, prefixes []string) ([]string, error) {
	if arg != "" {
		names := strings.Split(arg, ",")
		if len(names) != len(prefixes) || slices.Contains(names, "") {
			return nil, fmt.Errorf("--labels %q: want %d names, the page's own run's first, as A,B", arg, len(prefixes))
		}
		return names, nil
	}
	names := make([]string, len(prefixes))
	for i, p := range prefixes {
		names[i] = filepath.Base(tracePrefix(p))
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) < len(names) {
		for i, p := range prefixes {
			names[i] = tracePrefix(p)
		}
	}
	return names, nil
}

// prefixList is a flag given once per trace prefix (--beside).
type prefixList []string

func (l *prefixList) String() string { return strings.Join(*l, ",") }

func (l *prefixList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("an empty trace prefix")
	}
	*l = append(*l, v)
	return nil
}
