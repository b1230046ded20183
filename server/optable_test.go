package server

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The op summary in proto/README.md is the op table rendered: the spec
// cannot list an op, an argument or a scope the server does not have.
func TestSpecTableMatchesOpTable(t *testing.T) {
	b, err := os.ReadFile("../proto/README.md")
	if err != nil {
		t.Fatalf("reading the spec: %v", err)
	}
	const begin, end = "<!-- op table: begin -->\n", "<!-- op table: end -->"
	_, rest, ok := strings.Cut(string(b), begin)
	got, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("proto/README.md has no %q ... %q section", begin, end)
	}
	if diff := cmp.Diff(specTable(), got); diff != "" {
		t.Errorf("proto/README.md op table (-server +spec):\n%s", diff)
	}
}

// Every "### op" heading of the spec is in the op table, and every op of
// the table has its heading.
func TestSpecHeadingsMatchOpTable(t *testing.T) {
	b, err := os.ReadFile("../proto/README.md")
	if err != nil {
		t.Fatalf("reading the spec: %v", err)
	}
	_, sec, _ := strings.Cut(string(b), "\n## Operations\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	var headings []string
	for _, l := range strings.Split(sec, "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			headings = append(headings, h)
		}
	}
	var names []string
	for _, o := range ops {
		names = append(names, o.name)
	}
	if diff := cmp.Diff(names, headings); diff != "" {
		t.Errorf("spec headings (-table +spec):\n%s", diff)
	}
}
