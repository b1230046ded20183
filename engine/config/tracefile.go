package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// MaxTraceBytes bounds a trace file; Mahimahi's longest published traces
// are a few MB.
const MaxTraceBytes = 32 << 20

// traceOpportunityBits is what one delivery opportunity carries of IP: one
// 1500-byte packet (Mahimahi's opportunity is 1504 bytes, that packet and
// the 4-byte TUN header mm-link counts with it; see link.TraceBytes).
const traceOpportunityBits = 1500 * 8

// WithDir resolves trace and flow-size CDF files named in the scenario
// relative to dir, the directory of the scenario file. Without it (or
// WithFiles) only the traces shipped with ccscope (under "traces/", as the
// built-in scenarios name them), those embedded in the scenario's "traces"
// by content hash, and the built-in CDFs can be read: a server never reads
// files a client names. A name that is not a file there but is a shipped
// trace reads the shipped one, so a built-in saved to a file still runs.
func WithDir(dir string) Option {
	return func(o *options) { o.dir = dir }
}

// WithFiles gives the trace and CDF files a scenario names, by the names it
// gives them, as a client sends them with the scenario: a server reads
// them from here and never from its own disk. They are looked up before
// the scenario file's directory.
func WithFiles(files map[string][]byte) Option {
	return func(o *options) { o.files = files }
}

// MeanRate is the trace's long-run rate: its opportunities' bits over its
// length.
func (t *TraceLink) MeanRate() units.BitRate {
	ms := t.Opportunities[len(t.Opportunities)-1]
	return max(1, units.BitRate(uint64(len(t.Opportunities))*traceOpportunityBits*1000/ms))
}

// Text is the trace in its normalised form: one decimal millisecond per
// line, each line ending in a newline. SHA256 is the hash of this text; a
// Mahimahi file that ends in a newline is already in this form.
func (t *TraceLink) Text() string {
	var b strings.Builder
	for _, ms := range t.Opportunities {
		b.WriteString(strconv.FormatUint(ms, 10))
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseTrace reads a Mahimahi trace: one non-negative integer per line, the
// millisecond of a delivery opportunity, nondecreasing, the last one after
// 0 (the rules of mahimahi's LinkQueue constructor). A number may carry a
// leading '+', as strtol, which mahimahi reads it with, allows. Blank lines
// are skipped (mahimahi refuses them); spaces and a carriage return around
// a number are allowed (mahimahi allows them only before it).
func ParseTrace(text []byte) ([]uint64, error) {
	var out []uint64
	last := 0 // the line of out's last timestamp
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		digits := line
		if len(digits) > 1 && digits[0] == '+' && digits[1] >= '0' && digits[1] <= '9' {
			digits = digits[1:]
		}
		ms, err := strconv.ParseUint(digits, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errors.New("line " + strconv.Itoa(i+1) + ": " + strconv.Quote(line) + " is not a whole number of milliseconds")
		}
		if err != nil || ms > uint64(sim.MaxDuration/sim.Millisecond) {
			return nil, errors.New("line " + strconv.Itoa(i+1) + ": " + line + " ms is later than " + sim.MaxDuration.String() + ", the longest duration ccscope takes")
		}
		if n := len(out); n > 0 && ms < out[n-1] {
			return nil, errors.New("line " + strconv.Itoa(i+1) + ": timestamps must not decrease (" + strconv.FormatUint(ms, 10) + " after " + strconv.FormatUint(out[n-1], 10) + ")")
		}
		out, last = append(out, ms), i+1
	}
	if len(out) == 0 {
		return nil, errors.New("no timestamps")
	}
	if out[len(out)-1] == 0 {
		return nil, errors.New("line " + strconv.Itoa(last) + ": the trace must last a nonzero time (its last timestamp is 0)")
	}
	return out, nil
}

// traceLink decodes a direction's trace object. The trace is found by its
// sha256 among the scenario's embedded "traces", else read from file.
func (c *collector) traceLink(path string, v any) *TraceLink {
	o, ok := c.object(path, v, traceShape)
	if !ok {
		return nil
	}
	t := &TraceLink{Loop: true}
	if v, p, ok := o.get("loop"); ok {
		t.Loop, _ = c.boolean(p, v)
	}
	fv, fp, hasFile := o.get("file")
	hv, hp, hasHash := o.get("sha256")
	file := ""
	if hasFile {
		file, _ = c.str(fp, fv)
	}
	if hasHash {
		t.SHA256, _ = c.str(hp, hv)
	}
	var text []byte
	switch {
	case hasHash && c.texts[t.SHA256] != "":
		text = []byte(c.texts[t.SHA256])
	case hasFile && file != "":
		b, err := c.readTrace(file)
		if err != nil {
			c.add(fp, "%v", err)
			return nil
		}
		text = b
	case hasHash:
		c.add(hp, "no trace with this hash in the scenario's \"traces\"; give \"file\" too")
		return nil
	default:
		c.add(join(path, "file"), "missing; the Mahimahi trace file, relative to the scenario file")
		return nil
	}
	ops, err := ParseTrace(text)
	if err != nil {
		where := fp
		if !hasFile {
			where = hp
		}
		c.add(where, "not a Mahimahi trace: %v", err)
		return nil
	}
	t.Opportunities = ops
	sum := sha256.Sum256([]byte(t.Text()))
	h := hex.EncodeToString(sum[:])
	if hasHash && t.SHA256 != h {
		c.add(hp, "the trace's content hashes to %s, not %s", h, t.SHA256)
	}
	t.SHA256 = h
	return t
}

// readTrace reads a trace file the scenario names (scenarioFile), or one
// shipped with ccscope.
func (c *collector) readTrace(name string) ([]byte, error) {
	b, err := c.scenarioFile(name, MaxTraceBytes, "trace")
	why, missing := err.(noFile)
	if !missing {
		return b, err
	}
	if !fs.ValidPath(name) {
		if why == errNoFiles {
			return nil, errors.New(strconv.Quote(name) + " is not a shipped trace; without the scenario file's directory only \"traces/...\" files shipped with ccscope can be read")
		}
		return nil, why
	}
	if b, err := builtinFS.ReadFile("scenarios/" + name); err == nil {
		return b, nil
	}
	return nil, errors.New("no shipped trace " + strconv.Quote(name) + "; " + why.Error())
}

// texts decodes the scenario's embedded traces: normalised trace text by
// the hex SHA-256 of that text.
func (c *collector) embeddedTraces(root obj) {
	v, p, ok := root.get("traces")
	if !ok {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.add(p, "must be an object of trace texts by their sha256, not %s", describe(v))
		return
	}
	c.texts = map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s, ok := m[k].(string)
		if !ok {
			c.add(join(p, k), "must be a trace's text, not %s", describe(m[k]))
			continue
		}
		sum := sha256.Sum256([]byte(s))
		if hex.EncodeToString(sum[:]) != k {
			c.add(join(p, k), "the text's SHA-256 is %s, not its key", hex.EncodeToString(sum[:]))
			continue
		}
		c.texts[k] = s
	}
}
