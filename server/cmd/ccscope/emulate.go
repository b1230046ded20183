package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/server/calibrate"
	"github.com/ccscope/ccscope/server/emulate"
	"github.com/ccscope/ccscope/server/report"
)

// emulateMain runs a scenario on this machine's kernel TCP (Linux, root).
func emulateMain(args []string) int {
	c := newScenarioCmd("emulate", "Usage: ccscope emulate SCENARIO|FILE.json [options]   (Linux, root)",
		"wall-clock duration `D`, e.g. 10s (overrides runtime.duration)", true)
	fs := c.fs
	tracePath := fs.String("trace", "", "write the trace to `FILE` (.arrow or .parquet)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	capPath := fs.String("capture", "", "write every TCP_INFO sample to `FILE.csv` (a TCP_INFO CSV for calibrate)")
	pcapPath := fs.String("pcap", "", "write the first flow's sender-side packets (headers) to `FILE.pcap`")
	ccState := fs.Bool("cc-state", false, "read each sender's kernel CC state (BBR's rounds and mode, CUBIC's epoch) with bpftrace into the signals table")
	maxRate := fs.Int64("max-rate", 0, "refuse scenarios whose bottlenecks add up to more than `BPS` (default: the measured ceiling)")
	raw, sets, opts, code, ok := c.parse(args)
	if !ok {
		return code
	}
	prep, err := engine.Prepare(raw, sets, opts...)
	if err != nil {
		return fail(err)
	}
	printNotes(prep.Notes)
	sink, err := openTrace(*tracePath, "", prep.Scenario)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var ts trace.Sink
	if sink != nil {
		ts = sink
	}
	res, err := emulate.Run(ctx, prep.Scenario, prep.Hash, emulate.Options{Sink: ts, MaxRateBps: *maxRate,
		Capture: *capPath != "", Pcap: *pcapPath != "", CCState: *ccState})
	if err != nil {
		return fail(err)
	}
	if sink != nil {
		if err := sink.Close(); err != nil {
			return fail(err)
		}
		if err := report.WriteRunInfo(*tracePath, report.RunInfo{Summary: res.Summary.Summary, Config: string(prep.Canonical),
			Detail: emulate.RecordedDetail(prep.Scenario.Trace).String()}); err != nil {
			return fail(err)
		}
		fmt.Fprintln(os.Stderr, "ccscope: trace written to", joinPaths(sink.Paths()))
	}
	if *capPath != "" {
		f, err := os.Create(*capPath)
		if err != nil {
			return fail(err)
		}
		err = calibrate.WriteCSV(f, res.Capture)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(err)
		}
	}
	if *pcapPath != "" {
		if err := os.WriteFile(*pcapPath, res.Pcap, 0o644); err != nil {
			return fail(err)
		}
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(res.Summary); err != nil {
			return fail(err)
		}
		return 0
	}
	printEmulateSummary(os.Stdout, res.Summary)
	return 0
}

func joinPaths(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

func printEmulateSummary(w io.Writer, s emulate.Summary) {
	fmt.Fprintf(w, "emulated on Linux %s  realtime %v  relay lateness p50 %s p99 %s max %s over %d packets\n",
		s.Kernel, s.Realtime, durStr(s.Lateness.P50Ps), durStr(s.Lateness.P99Ps), durStr(&s.Lateness.MaxPs), s.Lateness.Packets)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	printSummary(w, s.Summary)
}
