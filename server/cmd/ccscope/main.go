// Command ccscope runs congestion-control simulations: one scenario from the
// command line (run), an HTML report from trace files (report), the built-in scenarios (scenarios), a session server
// for notebooks (serve), or many runs at once with a catalog (sweep); on Linux as root, the same scenario on the
// kernel's TCP (emulate, compare) and scenarios calibrated from live captures (calibrate).
package main

import (
	"fmt"
	"os"
)

const usage = `ccscope — a deterministic packet-level simulator of TCP congestion control

Usage:
  ccscope run SCENARIO|FILE.json [--seed N] [--duration D] [--set path=value]... [--trace FILE [--trace-select LIST]]
              [--report FILE.html [--report-flows LIST]] [--pcap FILE[:link[:dir]]] [--json]
  ccscope report TRACE_PREFIX [-o FILE.html] [--flows LIST] [--beside TRACE_PREFIX]... [--labels A,B,...]
  ccscope sweep SPEC.json|SCENARIO [--grid path=v1,v2]... [--axis path=v1,v2]... [--seeds 1-5] [-o catalog.parquet] [--report-dir DIR]
  ccscope emulate SCENARIO|FILE.json [--seed N] [--duration D] [--set path=value]... [--trace FILE] [--capture FILE.csv]
              [--pcap FILE] [--json]
  ccscope compare SCENARIO|FILE.json [--seeds 1-3] [--duration D] [--set path=value]... [--trace DIR] [--report FILE.html] [--retries N] [--json]
  ccscope calibrate CAPTURE [--cc NAME] [--flow F] [--out FILE.json] [--json]
  ccscope scenarios [--show NAME | --ccs | --cc-params NAME]
  ccscope leo-path [--scenario NAME|FILE.json] [--link ID] [--seed N] [--duration D] [--outage D]
              [--loss P] [--announce LEAD] [--rtt MIN-MAX] [--rate MIN-MAX] [--trace FILE.csv|example]
  ccscope serve [--addr HOST:PORT] [--token T] [--max-sessions N] [--log-format json|console]
  ccscope version

Run 'ccscope COMMAND --help' for a command's options. run, sweep, emulate, compare and leo-path read
the trace and CDF files a scenario file names relative to it, or to --files-dir DIR.
`

var commands = map[string]func(args []string) int{
	"run":       runMain,
	"report":    reportMain,
	"emulate":   emulateMain,
	"compare":   compareMain,
	"calibrate": calibrateMain,
	"scenarios": scenariosMain,
	"leo-path":  leoPathMain,
	"serve":     serveMain,
	"sweep":     sweepMain,
	"version":   versionMain,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ccscope: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	os.Exit(cmd(os.Args[2:]))
}
