package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/leopath"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

const leoPathUsage = `Usage: ccscope leo-path [--scenario NAME|FILE.json] [--link ID] [options]

Emits the scheduled changes of a LEO satellite path for one link: a
reassignment every --period (Starlink: 15 s, at --offset 12 s into each
period; on another period the offset defaults to 0) with a new RTT and
bandwidth drawn from --rtt and --rate, a hard-handover --outage at each
reassignment, non-congestive --loss, and an --announce lead for SaTCP.
Seeded: the same --seed gives the same path.
--trace FILE.csv (or "example", the shipped synthetic trace) replays a
per-interval CSV (time_s,rtt_ms,bandwidth_mbps[,loss]) instead, with
--outage and --announce; the flags that draw a path are refused with it.

With --scenario, prints that scenario with the changes appended, ready for
'ccscope run FILE.json'; without, prints the changes array.

Options:
`

// leoPathMain is the leo-path command.
func leoPathMain(args []string) int {
	fs := flag.NewFlagSet("leo-path", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), leoPathUsage)
		fs.PrintDefaults()
	}
	d := leopath.Default()
	scenario := fs.String("scenario", "", "built-in scenario `NAME` or FILE.json to add the changes to")
	filesDir := filesDirFlag(fs)
	link := fs.String("link", "bottleneck", "`ID` of the link that models the satellite hop")
	seed := &seedFlag{seed: 1, set: true}
	fs.Var(seed, "seed", "seed `N` of the path's random stream")
	duration := fs.String("duration", "", "how long the path runs, e.g. 300s (default: the scenario's runtime.duration)")
	period := fs.String("period", d.Period.String(), "reassignment interval")
	offset := fs.String("offset", "", "first reassignment within a period (default: "+d.Offset.String()+" on a "+d.Period.String()+" period, else 0s)")
	rtt := fs.String("rtt", d.RTTMin.String()+"-"+d.RTTMax.String(), "RTT range `MIN-MAX` the link contributes")
	rate := fs.String("rate", d.RateMin.String()+"-"+d.RateMax.String(), "bandwidth range `MIN-MAX` of the data direction (ab)")
	outage := fs.String("outage", "0s", "hard-handover outage at each reassignment")
	loss := fs.Float64("loss", 0, "non-congestive loss probability of the data direction")
	announce := fs.String("announce", "", "announce each reassignment this `LEAD` ahead (SaTCP); empty: no announcement")
	trace := fs.String("trace", "", "replay `FILE.csv` (or \"example\") instead of drawing intervals")
	if _, code, ok := parseArgs(fs, args); !ok {
		return code
	}
	usageErr := func(err error) int {
		fmt.Fprintln(os.Stderr, "ccscope: leo-path:", err)
		return 2
	}
	if *trace != "" {
		if err := checkReplayFlags(fs); err != nil {
			return usageErr(err)
		}
	}

	var doc map[string]any
	if *scenario != "" {
		raw, err := loadScenario(*scenario)
		if err != nil {
			return fail(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return fail(fmt.Errorf("scenario %s: %w", *scenario, err))
		}
		rt, _ := doc["runtime"].(map[string]any)
		if rt == nil {
			rt = map[string]any{}
			doc["runtime"] = rt
		}
		if *duration == "" {
			if s, ok := rt["duration"].(string); ok {
				*duration = s
			}
		} else {
			rt["duration"] = *duration // the run covers the whole path
		}
	}
	p := leopath.Params{Seed: seed.seed, LossP: *loss}
	var err error
	parse := func(name, s string, dst *sim.Duration) {
		if err == nil {
			if *dst, err = sim.ParseDuration(s); err != nil {
				err = fmt.Errorf("--%s: %w", name, err)
			}
		}
	}
	if *duration == "" {
		return usageErr(errors.New("--duration: missing; how long the path runs (or give --scenario with a runtime.duration)"))
	}
	parse("duration", *duration, &p.Duration)
	parse("outage", *outage, &p.Outage)
	if *announce != "" {
		var lead sim.Duration
		parse("announce", *announce, &lead)
		p.Announce = &lead
	}
	if *trace == "" {
		parse("period", *period, &p.Period)
		if *offset != "" {
			parse("offset", *offset, &p.Offset)
		} else if p.Period == d.Period {
			p.Offset = d.Offset // Starlink's schedule; on another period 12 s means nothing
		}
		if err == nil {
			lo, hi, ok := strings.Cut(*rtt, "-")
			if !ok {
				err = fmt.Errorf("--rtt: %q is not a range MIN-MAX", *rtt)
			}
			parse("rtt", lo, &p.RTTMin)
			parse("rtt", hi, &p.RTTMax)
		}
		if err == nil {
			p.RateMin, p.RateMax, err = rateRange(*rate)
		}
	}
	if err != nil {
		return usageErr(err)
	}

	var changes []leopath.Change
	if *trace != "" {
		data := leopath.ExampleTrace
		if *trace != "example" {
			if data, err = os.ReadFile(*trace); err != nil {
				return fail(fmt.Errorf("reading trace: %w", err))
			}
		}
		iv, err := leopath.ParseTrace(data)
		if err != nil {
			return fail(err)
		}
		if changes, err = leopath.Replay(iv, p.Duration, p.Outage, p.Announce); err != nil {
			return usageErr(err)
		}
	} else if changes, err = leopath.Generate(p); err != nil {
		return usageErr(err)
	}

	list := make([]any, len(changes))
	for i, c := range changes {
		list[i] = changeJSON(*link, c)
	}
	out := any(list)
	if doc != nil {
		prior, _ := doc["changes"].([]any)
		doc["changes"] = append(prior, list...)
		out = doc
		raw, err := json.Marshal(doc)
		if err == nil {
			_, err = config.Parse(raw, scenarioOptions(*scenario, *filesDir)...)
		}
		if err != nil {
			return fail(err)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fail(err)
	}
	return 0
}

// replayUnused are the flags that draw a synthetic path, and why a
// replayed trace has no use for them.
var replayUnused = map[string]string{
	"period": "the trace's time_s column places the reassignments",
	"offset": "the trace's time_s column places the reassignments",
	"rtt":    "the trace's rtt_ms column gives each interval's RTT",
	"rate":   "the trace's bandwidth_mbps column gives each interval's rate",
	"loss":   "the trace's loss column gives each interval's loss (none without it)",
	"seed":   "a replay draws nothing",
}

// checkReplayFlags refuses each flag given beside --trace that a replay does
// not use, rather than ignoring it.
func checkReplayFlags(fs *flag.FlagSet) error {
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		if why, ok := replayUnused[f.Name]; ok {
			errs = append(errs, fmt.Errorf("--%s: not used with --trace: %s", f.Name, why))
		}
	})
	return errors.Join(errs...)
}

// rateRange parses "MIN-MAX" rates.
func rateRange(s string) (lo, hi units.BitRate, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("--rate: %q is not a range MIN-MAX", s)
	}
	if lo, err = units.ParseRate(a); err == nil {
		hi, err = units.ParseRate(b)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("--rate: %w", err)
	}
	return lo, hi, nil
}

// changeJSON is one scenario changes[] entry.
func changeJSON(link string, c leopath.Change) map[string]any {
	m := map[string]any{"at": c.At.String(), "link": link, "dir": c.Dir}
	if c.Rate != nil {
		m["rate"] = c.Rate.String()
	}
	if c.Delay != nil {
		m["delay"] = c.Delay.String()
	}
	if c.LossP != nil {
		if *c.LossP == 0 {
			m["loss"] = map[string]any{"kind": "none"}
		} else {
			m["loss"] = map[string]any{"kind": "bernoulli", "p": json.Number(strconv.FormatFloat(*c.LossP, 'g', -1, 64))}
		}
	}
	if c.Outage != nil {
		m["outage"] = c.Outage.String()
	}
	if c.Announce != nil {
		m["announce"] = c.Announce.String()
	}
	return m
}
