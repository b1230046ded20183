package report

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/ccscope/ccscope/engine"
)

// The charting library: uPlot 1.6.32 (MIT, © Leon Sorokin; the licence is
// assets/uPlot.LICENSE and is repeated in every page), from the npm package
// "uplot" (`npm pack uplot`, tarball sha256
// 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d). It
// draws on canvas, is about 50 KB minified with no dependencies, and stays
// interactive at millions of points; cursor sync and zoom hooks give the
// shared time axis.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/uPlot.LICENSE
	uplotLicense string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/report.html
	pageHTML string
)

// UPlotVersion is the version of the embedded uPlot.
const UPlotVersion = "1.6.32"

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms": func(v *int64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f ms", float64(*v)/1e9)
	},
	"rate": func(v *int64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.2f Mbps", float64(*v)/1e6)
	},
	"num": func(v *int64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprint(*v)
	},
	"psms": func(v int64) string { return fmt.Sprintf("%.3f ms", float64(v)/1e9) },
	"bps":  rateStr,
	"secs": secsStr,
}).Parse(pageHTML))

// dashNames name report.js's dash patterns, for the page's note.
var dashNames = [maxBeside]string{"dashed", "dotted", "dash-dotted"}

// pageData is what the browser script reads (as JSON).
type pageData struct {
	Grid struct {
		W     int64 `json:"w_ps"`
		N     int   `json:"n"`
		Slots int   `json:"slots"`
	} `json:"grid"`
	Groups []group `json:"groups"`
}

// view is the template's input.
type view struct {
	Meta      Meta
	Title     string
	Generated string
	Rows      int64
	Buckets   int
	BucketMs  float64
	Summary   *engine.Summary
	Data      template.JS
	UPlotJS   template.JS
	UPlotCSS  template.CSS
	ReportJS  template.JS
	ReportCSS template.CSS
	License   string
	Version   string
	Notes     []string
	Tables    []Table
	SummaryOf string // the run the summary is of, when the page shows two
}

// Write renders the page. The page holds everything it needs.
func (b *Builder) Write(w io.Writer) error {
	var d pageData
	d.Grid.W, d.Grid.N, d.Grid.Slots = b.g.w, b.g.n, slots
	notes := append([]string(nil), b.notes...)
	if o := b.beside; o != nil {
		runs := []string{fmt.Sprintf("solid lines are %s (%s)", o.label, b.meta.Source)}
		for k, r := range o.runs {
			runs = append(runs, fmt.Sprintf("%s ones %s (%s)", dashNames[k], o.labels[k], r.meta.Source))
		}
		notes = append(notes, fmt.Sprintf("%d runs on one page: %s; the summary is %s's", len(o.runs)+1, strings.Join(runs, ", "), o.label))
		for k, r := range o.runs {
			for _, n := range r.notes {
				notes = append(notes, o.labels[k]+": "+n)
			}
		}
	}
	if n := len(b.undrawn); n > 0 {
		which := fmt.Sprintf("the first %d in trace order; the flows option picks others: `ccscope report --flows LIST`, `run --report-flows`", len(b.flows))
		if b.opt.Flows != nil {
			which = "those the flows option names"
		}
		notes = append(notes, fmt.Sprintf("the page draws the panels of %d of the run's %d flows (%s); the summary tables list every flow",
			len(b.flows), len(b.flows)+n, which))
	}
	if _, n := b.shownQueues(); n > 0 {
		notes = append(notes, fmt.Sprintf("%d more link directions queued or dropped; the page draws the queues of the drawn flows' bottlenecks and of the first %d directions in the trace, and the summary tables list every queue",
			n, maxDrawnQueues))
	}
	var empty []string
	d.Groups, empty = b.groups()
	for _, id := range empty {
		// Trace files that lack tables or columns say so already.
		if !b.partial {
			notes = append(notes, fmt.Sprintf("flow %s has no trace rows (is trace.detail \"summary\"?)", id))
		}
	}
	if b.meta.Detail == "sampled" {
		notes = append(notes, "the trace was sampled: events (ACK, SACK, TLP, RTO, …) are recorded at trace.detail \"change\" only")
	}
	if b.meta.Summary == nil {
		notes = append(notes, "no run summary was found beside the trace files, so the summary tables are missing")
	}
	js, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	title := fmt.Sprintf("ccscope · %s · seed %d", b.meta.Scenario, b.meta.Seed)
	v := view{Meta: b.meta, Title: title, Rows: b.rows, Buckets: b.g.n, BucketMs: float64(b.g.w) / 1e9,
		Summary: b.meta.Summary, Data: template.JS(js), UPlotJS: template.JS(uplotJS), UPlotCSS: template.CSS(uplotCSS),
		ReportJS: template.JS(reportJS), ReportCSS: template.CSS(reportCSS), License: uplotLicense, Version: UPlotVersion,
		Notes: notes, Generated: time.Now().UTC().Format(time.RFC3339), Tables: b.tables}
	if b.beside != nil {
		v.SummaryOf = b.beside.label
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := page.Execute(bw, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
