package server

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// args reads a request's (or a nested map's) arguments, remembering which
// keys were asked for so that done can refuse the rest. prefix is the path
// of the map itself ("action."), prepended to the paths in errors; known
// lists every key the map takes, for done's message.
//
// An argument whose value is nil is an argument not given, everywhere: an
// optional one is left at its default, a required one is missing. (The
// Python client leaves out arguments that are None; a client that sends
// them as nil means the same.)
type args struct {
	m      map[string]any
	prefix string
	known  []string
	used   []string
}

func newArgs(m map[string]any, prefix string, known []string) *args {
	return &args{m: m, prefix: prefix, known: known}
}

func (a *args) path(key string) string { return a.prefix + key }

// get returns the value of key; absent and nil are the same.
func (a *args) get(key string) (any, bool) {
	a.used = append(a.used, key)
	v, ok := a.m[key]
	return v, ok && v != nil
}

// has reports whether key is present and not nil. Asking counts as using
// key: a key sent as nil is not given, not unknown.
func (a *args) has(key string) bool {
	a.used = append(a.used, key)
	v, ok := a.m[key]
	return ok && v != nil
}

func (a *args) typeErr(key, want string, v any) *Error {
	return errorf(CodeBadArgs, a.path(key), "%s is %s, want %s", a.path(key), typeName(v), want)
}

func (a *args) missing(key string) *Error {
	return errorf(CodeBadArgs, a.path(key), "missing argument %s", a.path(key))
}

// str reads a required string.
func (a *args) str(key string) (string, *Error) {
	v, ok := a.get(key)
	if !ok {
		return "", a.missing(key)
	}
	s, ok := v.(string)
	if !ok {
		return "", a.typeErr(key, "a string", v)
	}
	return s, nil
}

// optStr reads an optional string.
func (a *args) optStr(key string) (string, bool, *Error) {
	if !a.has(key) {
		return "", false, nil
	}
	s, err := a.str(key)
	return s, err == nil, err
}

// uint reads a required non-negative integer. A float with an integral value
// is accepted, since some clients cannot tell 3 from 3.0.
func (a *args) uint(key string) (uint64, *Error) {
	v, ok := a.get(key)
	if !ok {
		return 0, a.missing(key)
	}
	return a.toUint(key, v)
}

func (a *args) toUint(key string, v any) (uint64, *Error) {
	switch n := v.(type) {
	case int64:
		if n >= 0 {
			return uint64(n), nil
		}
		return 0, errorf(CodeBadArgs, a.path(key), "%s is %d, want a non-negative integer", a.path(key), n)
	case uint64:
		return n, nil
	case float64:
		if n >= 0 && n < 1<<63 && n == math.Trunc(n) {
			return uint64(n), nil
		}
		return 0, errorf(CodeBadArgs, a.path(key), "%s is %v, want a non-negative integer", a.path(key), n)
	}
	return 0, a.typeErr(key, "a non-negative integer", v)
}

// duration reads a required duration string ("100ms").
func (a *args) duration(key string) (sim.Duration, *Error) {
	s, err := a.str(key)
	if err != nil {
		return 0, err
	}
	d, perr := sim.ParseDuration(s)
	if perr != nil {
		return 0, errorf(CodeBadArgs, a.path(key), "%s: %v", a.path(key), perr)
	}
	if d < 0 {
		return 0, errorf(CodeBadArgs, a.path(key), "%s: %s is negative", a.path(key), s)
	}
	if err := sim.CheckMax(d); err != nil {
		return 0, errorf(CodeBadArgs, a.path(key), "%s: %q %v", a.path(key), s, err)
	}
	return d, nil
}

// rate reads a rate: a string with units or an integer in bits per second.
func (a *args) rate(key string) (units.BitRate, *Error) {
	v, _ := a.get(key)
	if s, ok := v.(string); ok {
		r, err := units.ParseRate(s)
		if err != nil {
			return 0, errorf(CodeBadArgs, a.path(key), "%s: %v", a.path(key), err)
		}
		return r, nil
	}
	n, err := a.toUint(key, v)
	if err != nil {
		switch v.(type) {
		case int64, float64: // a number, but negative or fractional
			return 0, errorf(CodeBadArgs, a.path(key), "%s is %v, want a rate: \"50Mbps\" or a non-negative integer of bits per second", a.path(key), v)
		}
		return 0, a.typeErr(key, `a rate ("50Mbps") or an integer in bits per second`, v)
	}
	if n > math.MaxInt64 {
		return 0, errorf(CodeBadArgs, a.path(key), "%s: %d bps is too large", a.path(key), n)
	}
	return units.BitRate(n), nil
}

// strList reads an optional list of strings (nil when absent).
func (a *args) strList(key string) ([]string, *Error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, a.typeErr(key, "a list of strings", v)
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, errorf(CodeBadArgs, a.path(key), "%s[%d] is %s, want a string", a.path(key), i, typeName(e))
		}
		out[i] = s
	}
	return out, nil
}

// mapArg reads a required map.
func (a *args) mapArg(key string) (map[string]any, *Error) {
	v, ok := a.get(key)
	if !ok {
		return nil, a.missing(key)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, a.typeErr(key, "a map", v)
	}
	return m, nil
}

// files reads an optional map of file names to their contents, each a
// string or bytes (nil when absent).
func (a *args) files(key string) (map[string][]byte, *Error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, a.typeErr(key, "a map {name: content}", v)
	}
	out := make(map[string][]byte, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) { // the first bad one by name, every time
		switch c := m[name].(type) {
		case string:
			out[name] = []byte(c)
		case []byte:
			out[name] = c
		default:
			p := a.path(key) + "[" + strconv.Quote(name) + "]"
			return nil, errorf(CodeBadArgs, p, "%s is %s, want the file's content as a string or bytes", p, typeName(c))
		}
	}
	return out, nil
}

// done refuses keys no accessor asked for, naming every key the map takes.
func (a *args) done() *Error {
	var extra []string
	for k := range a.m {
		if !slices.Contains(a.used, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return errorf(CodeBadArgs, a.path(extra[0]), "unknown argument %s (known: %s)", a.path(extra[0]), strings.Join(a.known, ", "))
}
