package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// parseArgs parses a command's arguments: one positional argument for each
// of names (SCENARIO, TRACE_PREFIX) and fs's flags, before or after them.
// A missing or unexpected argument is said on fs's output; when ok is false
// the command exits with code.
func parseArgs(fs *flag.FlagSet, args []string, names ...string) (pos []string, code int, ok bool) {
	pos, flags := splitArgs(fs, args)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, false // asked for: the usage is the answer
		}
		return nil, 2, false
	}
	// A flag given an empty value (--trace "", an unset $OUT) would be
	// taken for one not given: its output would go nowhere, unsaid.
	empty := ""
	fs.Visit(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && f.Value.String() == "" && empty == "" {
			empty = f.Name
		}
	})
	if empty != "" {
		what, _ := flag.UnquoteUsage(fs.Lookup(empty))
		dash := "--"
		if len(empty) == 1 {
			dash = "-" // -o, as the usage writes it
		}
		fmt.Fprintf(fs.Output(), "ccscope: %s: %s%s is empty; give %s, or leave the flag out\n", fs.Name(), dash, empty, what)
		return nil, 2, false
	}
	switch {
	case len(pos) < len(names):
		fmt.Fprintf(fs.Output(), "ccscope: %s: missing %s\n", fs.Name(), names[len(pos)])
		fs.Usage()
		return nil, 2, false
	case len(pos) > len(names):
		fmt.Fprintf(fs.Output(), "ccscope: %s: unexpected argument %q\n", fs.Name(), pos[len(names)])
		return nil, 2, false
	}
	return pos, 0, true
}

// isSet says whether the command line gave fs's flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// splitArgs separates the positional arguments from the flags of fs. A
// flag that takes a value (any but a bool flag, as the flag package tells
// them apart) takes the next argument unless written -flag=value, so that
// `run --duration 1s pump` does not take 1s for the scenario; after "--"
// every argument is positional.
func splitArgs(fs *flag.FlagSet, args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(pos, args[i+1:]...), flags
		case a == "-" || !strings.HasPrefix(a, "-"):
			pos = append(pos, a)
		default:
			flags = append(flags, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return pos, flags
}

// takesValue says whether arg, a flag, is one of fs's whose value is the
// next argument.
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return !isBool || !b.IsBoolFlag()
}
