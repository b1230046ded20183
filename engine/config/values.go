package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// obj is a JSON object being decoded against its shape. Reading a key the
// shape does not list panics: the decoder and the field table must agree.
type obj struct {
	path  string
	m     map[string]any
	shape *shape
}

// object checks that v is an object and reports each of its keys that the
// shape does not know, in sorted order.
func (c *collector) object(path string, v any, sh *shape) (obj, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, "must be an object, not %s", describe(v))
		return obj{}, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, known := sh.fields[k]; !known {
			c.add(join(path, k), "unknown field; expected one of %s", fieldList(sh))
		}
	}
	return obj{path: path, m: m, shape: sh}, true
}

// get returns the value under key and its path, if the key is present and
// not null.
func (o obj) get(key string) (v any, path string, ok bool) {
	if _, known := o.shape.fields[key]; !known {
		panic("config: decoder reads key " + key + " missing from the field table")
	}
	v, ok = o.m[key]
	return v, join(o.path, key), ok && v != nil
}

func fieldList(sh *shape) string {
	keys := make([]string, 0, len(sh.fields))
	for k := range sh.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// describe names a JSON value's type for error messages.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + t.String()
	case string:
		return strconv.Quote(t)
	}
	return fmt.Sprintf("%T", v)
}

// str decodes a string.
func (c *collector) str(path string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		c.add(path, "must be a string, not %s", describe(v))
	}
	return s, ok
}

// boolean decodes true or false.
func (c *collector) boolean(path string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		c.add(path, "must be true or false, not %s", describe(v))
	}
	return b, ok
}

// count decodes a plain non-negative JSON integer no larger than max.
func (c *collector) count(path string, v any, max uint64) (uint64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		c.add(path, "must be an integer in [0, %d], not %s", max, describe(v))
		return 0, false
	}
	u, err := strconv.ParseUint(n.String(), 10, 64)
	if err != nil || u > max {
		c.add(path, "%s is not an integer in [0, %d]", n, max)
		return 0, false
	}
	return u, true
}

// countIn decodes a plain JSON integer in [lo, hi], naming the range when
// the value is outside it on either side.
func (c *collector) countIn(path string, v any, lo, hi uint64) (uint64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		c.add(path, "must be an integer in [%d, %d], not %s", lo, hi, describe(v))
		return 0, false
	}
	u, err := strconv.ParseUint(n.String(), 10, 64)
	if err != nil || u < lo || u > hi {
		c.add(path, "%s is not an integer in [%d, %d]", n, lo, hi)
		return 0, false
	}
	return u, true
}

// prob decodes a probability: a JSON number in [0, 1].
func (c *collector) prob(path string, v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		c.add(path, "must be a number in [0, 1], not %s", describe(v))
		return 0, false
	}
	p, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || !(p >= 0 && p <= 1) {
		c.add(path, "%s is not a probability in [0, 1]", n)
		return 0, false
	}
	if Underflows(n.String(), p) {
		c.add(path, "%s is below the smallest float64 and would read as 0; write 0 for none", n)
		return 0, false
	}
	return p, true
}

// Underflows reports whether x, read from the number s, is 0 although s is
// not (1e-400): a probability written so would otherwise turn silently into
// none. math/big's exponent reaches far below float64's.
func Underflows(s string, x float64) bool {
	if x != 0 {
		return false
	}
	f, _, err := big.ParseFloat(s, 0, 64, big.ToNearestEven)
	return err == nil && f.Sign() != 0
}

// baseUnits decodes a plain JSON integer that counts a quantity's base unit
// (picoseconds, bits per second, bytes).
func (c *collector) baseUnits(path string, n json.Number, unit, example string) (int64, bool) {
	i, err := strconv.ParseInt(n.String(), 10, 64)
	switch {
	case err == nil && i >= 0:
		return i, true
	case err == nil:
		c.add(path, "%s is negative", n)
	case errors.Is(err, strconv.ErrRange):
		c.add(path, "%s is too large for a count of %s", n, unit)
	case strings.ContainsAny(n.String(), "eE"):
		c.add(path, "%s has an exponent; a plain number is a count of %s written out, or give a unit, e.g. %q", n, unit, example)
	default:
		c.add(path, "%s is not a whole number of %s; give a unit, e.g. %q", n, unit, example)
	}
	return 0, false
}

// duration decodes "40ms" or integer picoseconds; never negative.
func (c *collector) duration(path string, v any) (sim.Duration, bool) {
	switch t := v.(type) {
	case json.Number:
		i, ok := c.baseUnits(path, t, "picoseconds", "40ms")
		if err := sim.CheckMax(sim.Duration(i)); ok && err != nil {
			c.add(path, "%s %v", t, err)
			return 0, false
		}
		return sim.Duration(i), ok
	case string:
		d, err := sim.ParseDuration(t)
		if err == nil {
			if err = sim.CheckMax(d); err != nil {
				err = fmt.Errorf("%q %w", t, err)
			}
		}
		if err != nil {
			c.add(path, "%v", err)
			return 0, false
		}
		return d, true
	}
	c.add(path, "must be a duration such as \"40ms\", not %s", describe(v))
	return 0, false
}

// rate decodes "100Mbps" or integer bits per second; always positive.
func (c *collector) rate(path string, v any) (units.BitRate, bool) {
	var r units.BitRate
	switch t := v.(type) {
	case json.Number:
		i, ok := c.baseUnits(path, t, "bits per second", "100Mbps")
		if !ok {
			return 0, false
		}
		r = units.BitRate(i)
	case string:
		var err error
		if r, err = units.ParseRate(t); err != nil {
			c.add(path, "%v", err)
			return 0, false
		}
	default:
		c.add(path, "must be a rate such as \"100Mbps\", not %s", describe(v))
		return 0, false
	}
	if r <= 0 {
		c.add(path, "rate must be positive")
		return 0, false
	}
	return r, true
}

// size decodes "1500B" or integer bytes; never negative.
func (c *collector) size(path string, v any) (units.Bytes, bool) {
	switch t := v.(type) {
	case json.Number:
		i, ok := c.baseUnits(path, t, "bytes", "1500B")
		return units.Bytes(i), ok
	case string:
		n, err := units.ParseSize(t)
		if err != nil {
			c.add(path, "%v", err)
			return 0, false
		}
		return n, true
	}
	c.add(path, "must be a size such as \"1500B\", not %s", describe(v))
	return 0, false
}

// pacingAuto is the pacing value that follows the kernel's rule.
const pacingAuto = "auto"

// pacing decodes a pacing switch: true, false or "auto".
func (c *collector) pacing(path string, v any) (Pacing, bool) {
	switch v {
	case true:
		return PacingOn, true
	case false:
		return PacingOff, true
	case pacingAuto:
		return PacingAuto, true
	}
	c.add(path, "must be true, false or %q, not %s", pacingAuto, describe(v))
	return PacingAuto, false
}

// unlimited is the sndbuf value that removes the send-buffer ceiling, and
// the limit of a FIFO that holds whatever comes (mm-link's default queue).
const unlimited = "unlimited"

// buffer decodes a size or "unlimited" (returned as 0).
func (c *collector) buffer(path string, v any) (units.Bytes, bool) {
	if v == unlimited {
		return 0, true
	}
	n, ok := c.size(path, v)
	if ok && n == 0 {
		c.add(path, "must be positive; write %q for no limit", unlimited)
		return 0, false
	}
	return n, ok
}

// limit decodes a queue limit: a size ("150KB", or integer bytes), a packet
// count ("100p") or a multiple of the path's bandwidth-delay product ("1BDP",
// "0.5BDP", kept exactly in thousandths). It must be positive, or
// "unlimited", the zero QueueLimit, which the callers that take it allow.
func (c *collector) limit(path string, v any) (QueueLimit, bool) {
	const hint = `expected a size ("150KB"), packets ("100p"), a BDP multiple ("1BDP") or "unlimited"`
	s, isStr := v.(string)
	var l QueueLimit
	switch {
	case s == unlimited:
		return l, true
	case isStr && strings.HasSuffix(s, "BDP"):
		m, err := sim.ScaleDecimal(strings.TrimSpace(strings.TrimSuffix(s, "BDP")), 1000)
		if err != nil {
			c.add(path, "%q is not a BDP multiple (thousandths at most): %v", s, err)
			return l, false
		}
		l.MilliBDPs = m
	case isStr && strings.HasSuffix(s, "p"):
		num := strings.TrimSpace(strings.TrimSuffix(s, "p"))
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || !allDigits(num) {
			c.add(path, "%q is not a whole number of packets; %s", s, hint)
			return l, false
		}
		l.Packets = n
	case isStr:
		n, err := units.ParseSize(s)
		if err != nil {
			c.add(path, "%q is not a queue limit; %s", s, hint)
			return l, false
		}
		l.Bytes = n
	default:
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, "must be a queue limit, not %s; %s", describe(v), hint)
			return l, false
		}
		i, ok := c.baseUnits(path, n, "bytes", "150KB")
		if !ok {
			return l, false
		}
		l.Bytes = units.Bytes(i)
	}
	if l.Bytes == 0 && l.Packets == 0 && l.MilliBDPs == 0 {
		c.add(path, "queue limit must be positive")
		return l, false
	}
	return l, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// String is the limit as a scenario writes it ("100p", "0.5BDP", "150KB").
func (l QueueLimit) String() string { return formatLimit(l) }

// formatLimit writes a limit in the form limit parses.
func formatLimit(l QueueLimit) string {
	switch {
	case l == (QueueLimit{}):
		return unlimited
	case l.Packets != 0:
		return strconv.FormatInt(l.Packets, 10) + "p"
	case l.MilliBDPs != 0:
		s := strconv.FormatInt(l.MilliBDPs/1000, 10)
		if f := l.MilliBDPs % 1000; f != 0 {
			s += "." + strings.TrimRight(fmt.Sprintf("%03d", f), "0")
		}
		return s + "BDP"
	}
	return formatSize(l.Bytes)
}
