// Command ccscope runs congestion-control simulations: one scenario from the
// command line (run), an HTML report from trace files (report), the built-in scenarios (scenarios), or a session server
// for notebooks (serve).
package main

import (
	"fmt"
	"os"
)

const usage = `ccscope — a deterministic packet-level simulator of TCP congestion control

Usage:
  ccscope run SCENARIO|FILE.json [--seed N] [--duration D] [--set path=value]... [--trace FILE [--trace-select LIST]]
              [--report FILE.html] [--pcap FILE[:link[:dir]]] [--json]
  ccscope report TRACE_PREFIX [-o FILE.html]
  ccscope scenarios [--show NAME]
  ccscope serve [--addr HOST:PORT] [--token T] [--max-sessions N] [--log-format json|console]
  ccscope version

Run 'ccscope COMMAND --help' for a command's options.
`

var commands = map[string]func(args []string) int{
	"run":       runMain,
	"report":    reportMain,
	"scenarios": scenariosMain,
	"serve":     serveMain,
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
