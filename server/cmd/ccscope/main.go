// Command ccscope is the ccscope binary: serve (and, in the lead's version
// of this file, run, scenarios and version).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: ccscope serve [flags]")
		os.Exit(2)
	}
	os.Exit(serveMain(os.Args[2:]))
}
