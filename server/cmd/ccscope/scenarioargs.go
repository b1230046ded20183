package main

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// setFlags collects a repeatable flag's values in order.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// seedFlag is a --seed: a decimal integer, leading zeros and all. 007 is 7,
// not an octal number (flag.Uint64 reads 010 as 8) nor a string (JSON, as
// --set runtime.seed=007 reads it, has no leading zeros).
type seedFlag struct {
	seed uint64
	set  bool
}

func (s *seedFlag) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.FormatUint(s.seed, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("want a decimal integer from 0 to %d", uint64(math.MaxUint64))
	}
	s.seed, s.set = n, true
	return nil
}

// scenarioCmd holds what run, emulate and compare share: one positional
// scenario (a built-in's name or a JSON file), --seed, --duration and
// repeatable --set overrides.
type scenarioCmd struct {
	fs    *flag.FlagSet
	seed  *seedFlag
	dur   *string
	files *string
	sets  setFlags
}

// newScenarioCmd makes the command's flag set with the shared options;
// withSeed adds --seed.
func newScenarioCmd(name, usage, durHelp string, withSeed bool) *scenarioCmd {
	c := &scenarioCmd{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	if withSeed {
		c.seed = &seedFlag{}
		c.fs.Var(c.seed, "seed", "master random seed `N` (overrides runtime.seed)")
	}
	c.dur = c.fs.String("duration", "", durHelp)
	c.files = filesDirFlag(c.fs)
	c.fs.Var(&c.sets, "set", "override a scenario field: `path=value` (repeatable), e.g. links.bottleneck.ab.rate=50Mbps")
	c.fs.Usage = func() {
		fmt.Fprintln(c.fs.Output(), usage)
		c.fs.PrintDefaults()
	}
	return c
}

// parse reads args and loads the scenario, with its parse options
// (scenarioOptions). When ok is false the command exits with code (argument
// errors are said on stderr).
func (c *scenarioCmd) parse(args []string) (raw []byte, sets []string, opts []config.Option, code int, ok bool) {
	pos, code, ok := parseArgs(c.fs, args, "SCENARIO")
	if !ok {
		return nil, nil, nil, code, false
	}
	arg := pos[0]
	raw, err := loadScenario(arg)
	if err != nil {
		return nil, nil, nil, fail(err), false
	}
	// --seed and --duration come after the --set overrides, so they win.
	sets = c.sets
	if c.seed != nil && c.seed.set {
		printNotes(overrideNotes("--seed", "runtime.seed", c.seed.String(), "--set", sets))
		sets = append(sets, "runtime.seed="+c.seed.String())
	}
	if *c.dur != "" {
		if err := checkDurationFlag(*c.dur); err != nil {
			return nil, nil, nil, fail(err), false
		}
		printNotes(overrideNotes("--duration", "runtime.duration", *c.dur, "--set", c.sets))
		sets = append(sets, "runtime.duration="+*c.dur)
	}
	return raw, sets, scenarioOptions(arg, *c.files), 0, true
}

// checkDurationFlag refuses a --duration without a unit: typed at a
// prompt, "10" means seconds to its writer, and as runtime.duration it
// would be 10 ps (a scenario's bare numbers are picoseconds).
func checkDurationFlag(v string) error {
	if _, err := sim.ParseDuration(v); err != nil {
		return fmt.Errorf("--duration: %w", err)
	}
	return nil
}

// overrideNotes are the notes for a flag that stands for the override
// path=value and comes after earlier (path=value overrides, given as
// what): it wins over each that sets the same path.
func overrideNotes(flag, path, value, what string, earlier []string) []string {
	var notes []string
	for _, s := range earlier {
		if config.OverrideSets(s, path) {
			notes = append(notes, fmt.Sprintf("%s %s overrides %s %s", flag, value, what, s))
		}
	}
	return notes
}

// filesDirFlag adds --files-dir to fs.
func filesDirFlag(fs *flag.FlagSet) *string {
	return fs.String("files-dir", "", "read the trace and CDF files the scenario names relative to `DIR` (default: the scenario file's directory; for a built-in, none but the shipped ones)")
}

// scenarioOptions are the parse options of the scenario arg names: the
// trace and CDF files a scenario file names are relative to it, or to
// filesDir if given.
func scenarioOptions(arg, filesDir string) []config.Option {
	switch {
	case filesDir != "":
		return []config.Option{config.WithDir(filesDir)}
	case isScenarioFile(arg):
		return []config.Option{config.WithDir(filepath.Dir(arg))}
	}
	return nil
}
