package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/ccscope/ccscope/server/calibrate"
)

// calibrateMain deduces a path from a live capture, writes the scenario,
// runs it and prints sim against live.
func calibrateMain(args []string) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	cc := fs.String("cc", "cubic", "the captured flow's congestion control `NAME`, run in the simulator")
	flow := fs.String("flow", "", "which flow of the capture: the CSV flow column, or the peer `ADDR:PORT` for ss and pcap (default: the first)")
	out := fs.String("out", "", "write the deduced scenario to `FILE.json`")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: ccscope calibrate CAPTURE [options]   (CAPTURE: TCP_INFO CSV, `ss -tin` log, or sender-side pcap)")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, "CAPTURE")
	if !ok {
		return code
	}
	arg := pos[0]
	ss, format, err := calibrate.ReadCapture(arg, *flow)
	if err != nil {
		return fail(err)
	}
	rep, err := calibrate.Calibrate(ss, format, *cc)
	if err != nil {
		return fail(err)
	}
	if *out != "" {
		if err := os.WriteFile(*out, append(rep.Scenario, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
			return fail(err)
		}
		return 0
	}
	printCalibration(os.Stdout, rep, *out)
	return 0
}

func printCalibration(w io.Writer, r *calibrate.Report, out string) {
	p := r.Path
	fmt.Fprintf(w, "capture: %s, %d samples\n", r.Format, r.Samples)
	fmt.Fprintf(w, "deduced: bottleneck %.2f Mbps (from %d saturated samples), propagation floor %.3f ms, buffer %d B (%.1f ms), initial window %d, MSS %d\n",
		float64(p.RateBps)/1e6, p.SaturatedSamples, float64(p.FloorUs)/1e3, p.BufferBytes,
		float64(p.BufferBytes)*8/float64(p.RateBps)*1e3, p.InitCwnd, p.MSS)
	if p.RwndMax > 0 {
		fmt.Fprintf(w, "receiver window: %d B at first, up to %d B, reached %.0f ms in\n", p.RwndFirst, p.RwndMax, float64(p.RwndMaxAtUs)/1e3)
	}
	if p.BufferNotReached {
		fmt.Fprintf(w, "no retransmissions in the capture: the buffer never overflowed, so %d B is a lower bound; the scenario gives it %d B", p.BufferBytes, p.ReplayBuffer())
		if p.RwndMax > 0 {
			fmt.Fprint(w, " (the receiver's largest window, more than the flow could queue)")
		} else {
			fmt.Fprint(w, " (the capture has no receiver window to bound it by)")
		}
		fmt.Fprintln(w)
	}
	if out != "" {
		fmt.Fprintln(w, "scenario written to", out)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tt10 ms\tt100 ms\tgoodput Mbps\tretrans\tRTT p50 ms\tRTT p99 ms\t")
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f", *v)
	}
	pct := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", 100**v)
	}
	for _, row := range []calibrate.Row{r.Sim, r.Live} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Label, num(row.T10MBMs), num(row.T100MBMs), num(row.GoodputMbps),
			num(row.Retransmits), num(row.RTTP50Ms), num(row.RTTP99Ms))
	}
	x := r.Residual
	fmt.Fprintf(tw, "residual\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pct(x.T10MBMs), pct(x.T100MBMs), pct(x.GoodputMbps), pct(x.Retransmits), pct(x.RTTP50Ms), pct(x.RTTP99Ms))
	tw.Flush()
}
