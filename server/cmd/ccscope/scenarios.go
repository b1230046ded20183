package main

import (
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

func scenariosMain(args []string) int {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	show := fs.String("show", "", "print the JSON of built-in scenario `NAME`, to copy and edit")
	ccs := fs.Bool("ccs", false, "list the congestion-control algorithms (values of a flow's cc), one a line")
	params := fs.String("cc-params", "", "list the module parameters of algorithm `NAME` (a flow's cc_params): name, default, range, meaning")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: ccscope scenarios [--show NAME | --ccs | --cc-params NAME]\n\nWithout options, lists the built-in scenarios with their descriptions.\n")
		fs.PrintDefaults()
	}
	if _, code, ok := parseArgs(fs, args); !ok {
		return code
	}
	if given := btoi(*ccs) + btoi(*show != "") + btoi(*params != ""); given > 1 {
		fmt.Fprintln(os.Stderr, "ccscope: scenarios: give one of --show, --ccs and --cc-params")
		return 2
	}
	if *ccs {
		for _, n := range cc.Names() {
			fmt.Println(n)
		}
		return 0
	}
	if *params != "" {
		return listParams(*params)
	}
	if *show != "" {
		raw, err := config.Builtin(*show)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ccscope:", err)
			return 1
		}
		os.Stdout.Write(raw)
		return 0
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tDESCRIPTION")
	for _, b := range config.Builtins() {
		fmt.Fprintf(w, "%s\t%s\n", b.Name, b.Description)
	}
	w.Flush()
	return 0
}

// listParams prints algorithm name's module parameters as a table.
func listParams(name string) int {
	if _, err := cc.New(name); err != nil {
		fmt.Fprintln(os.Stderr, "ccscope: scenarios: --cc-params:", err)
		return 2
	}
	specs := cc.Params(name)
	if len(specs) == 0 {
		fmt.Printf("%s has no module parameters\n", name)
		return 0
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PARAMETER\tDEFAULT\tRANGE\tMEANING")
	for _, s := range specs {
		fmt.Fprintf(w, "%s\t%d\t%d..%d\t%s\n", s.Name, s.Default, s.Min, s.Max, s.Help)
	}
	w.Flush()
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func versionMain(args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "Usage: ccscope version") }
	if _, code, ok := parseArgs(fs, args); !ok {
		return code
	}
	fmt.Printf("ccscope %s\n", engine.Version)
	return 0
}
