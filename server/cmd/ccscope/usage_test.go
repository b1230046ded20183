package main

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every command answers --help with a usage that starts "Usage: ccscope
// COMMAND", and every flag the top-level usage shows for a command is one
// the command's own --help lists: the overview cannot name a flag the
// command lacks.
func TestUsageMatchesCommands(t *testing.T) {
	t.Parallel()
	shown := map[string][]string{} // command: flags the overview shows
	var cmd string
	for _, line := range strings.Split(usage, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "ccscope" {
			cmd = fields[1]
		} else if !strings.HasPrefix(line, "              ") {
			cmd = ""
		}
		if cmd == "" {
			continue
		}
		for _, m := range regexp.MustCompile(`(?:\[|\| )-{1,2}([a-z][a-z-]*)`).FindAllStringSubmatch(line, -1) {
			shown[cmd] = append(shown[cmd], m[1])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := ccscope(t, name, "--help")
			help := stdout + stderr
			if code != 0 {
				t.Errorf("ccscope %s --help exits %d", name, code)
			}
			if !strings.HasPrefix(help, "Usage: ccscope "+name) {
				t.Errorf("ccscope %s --help begins %q, want \"Usage: ccscope %s\"", name, strings.SplitN(help, "\n", 2)[0], name)
			}
			if !strings.Contains(usage, "\n  ccscope "+name) {
				t.Errorf("the top-level usage has no line for %s", name)
			}
			for _, f := range shown[name] {
				if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `\b`).MatchString(help) {
					t.Errorf("the top-level usage shows --%s for %s, which its --help does not list", f, name)
				}
			}
		})
	}
}
