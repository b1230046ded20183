package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccscope/ccscope/engine/sim"
)

// Apply applies --set overrides, each "path=value", to scenario JSON and
// returns the new JSON (keys sorted, no whitespace). A path is dotted: it
// walks object keys, and arrays of objects by their "id" (a flow group by
// its "group": "flows.web.count") ("links.bottleneck.ab.loss.p",
// "flows.f0.start", "runtime.seed");
// changes, which have no ids, by index ("changes.0.at"). The value is read as
// JSON when it parses as JSON ("7", "true", "{\"kind\":\"codel\"}") and as a
// string otherwise ("1s", "bbr"). Objects missing along the path are created
// when the format allows them there, so "links.bottleneck.ab.qdisc.limit=2BDP"
// works on a link without an "ab"; a path the format does not have is an
// error naming it. Every bad override is reported, as *Errors. The result is
// not validated: Parse does that.
func Apply(raw []byte, sets []string) ([]byte, error) {
	out, _, err := ApplyNoted(raw, sets)
	return out, err
}

// ApplyNoted is Apply, with a note for each override that replaces an
// object by one that lacks some of its fields. Those fields are gone from
// the scenario, as the override says, but it is rarely what is meant:
// flows.f0.tcp={"hz":250} on the wifi built-in drops its gro_interval,
// where flows.f0.tcp.hz=250 keeps it.
func ApplyNoted(raw []byte, sets []string) ([]byte, []string, error) {
	root, err := decodeTree(raw)
	if err != nil {
		return nil, nil, &Errors{List: []FieldError{{Reason: "invalid JSON: " + err.Error()}}}
	}
	c := &collector{}
	var notes []string
	for _, s := range sets {
		path, value, ok := strings.Cut(s, "=")
		if !ok {
			c.add(s, "an override is path=value")
			continue
		}
		if !utf8.ValidString(s) {
			// JSON would carry U+FFFD for the bytes: not what was given.
			c.add(path, "not UTF-8 at byte %d", notUTF8At([]byte(s)))
			continue
		}
		notes = setNoted(c, root, path, parseSetValue(value), notes)
	}
	if err := c.err(); err != nil {
		return nil, nil, err
	}
	return encodeTree(root), notes, nil
}

// setNoted is setPath, appending to notes a note when v, an object,
// replaced one with fields it lacks, or when v is a bare number too small
// for the field's base unit to be what was meant.
func setNoted(c *collector, root any, path string, v any, notes []string) []string {
	old, leaf := setPath(c, root, path, v)
	if n := bareNumberNote(path, leaf, v); n != "" {
		notes = append(notes, n)
	}
	if v == nil && old != nil {
		return append(notes, nullNote(path, old))
	}
	dropped := droppedKeys(old, v)
	if len(dropped) == 0 {
		return notes
	}
	return append(notes, fmt.Sprintf("set %s replaces the whole object and drops its %s; to change one field, set %s.FIELD alone",
		path, strings.Join(dropped, ", "), path))
}

// nullNote is the note for an override that set path to null where old
// was: the field is gone, and with it all it held, so its default applies.
func nullNote(path string, old any) string {
	if m, ok := old.(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, strconv.Quote(k))
		}
		slices.Sort(keys)
		if len(keys) == 0 {
			return fmt.Sprintf("set %s=null removes it: its defaults apply", path)
		}
		return fmt.Sprintf("set %s=null removes it and its %s: their defaults apply", path, strings.Join(keys, ", "))
	}
	b, _ := json.Marshal(old)
	return fmt.Sprintf("set %s=null removes its value %s: the default applies", path, b)
}

// droppedKeys are the keys of old, an object an override replaced, that
// v, the object replacing it, does not have; none unless both are objects.
func droppedKeys(old, v any) []string {
	om, ok1 := old.(map[string]any)
	vm, ok2 := v.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	var out []string
	for k := range om {
		if _, kept := vm[k]; !kept {
			out = append(out, strconv.Quote(k))
		}
	}
	slices.Sort(out)
	return out
}

// Override sets one path (as in Apply) to a Go value: a string, bool,
// number, nil, or a map or slice of those, such as a msgpack decoder yields.
// Strings are taken as they are, never parsed as JSON.
func Override(raw []byte, path string, value any) ([]byte, error) {
	return OverrideAll(raw, map[string]any{path: value})
}

// OverrideAll applies Override for every entry of values, in sorted path
// order so that a whole object is set before a path inside it.
func OverrideAll(raw []byte, values map[string]any) ([]byte, error) {
	out, _, err := OverrideAllNoted(raw, values)
	return out, err
}

// OverrideAllNoted is OverrideAll, with ApplyNoted's notes.
func OverrideAllNoted(raw []byte, values map[string]any) ([]byte, []string, error) {
	root, err := decodeTree(raw)
	if err != nil {
		return nil, nil, &Errors{List: []FieldError{{Reason: "invalid JSON: " + err.Error()}}}
	}
	paths := make([]string, 0, len(values))
	for p := range values {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	c := &collector{}
	var notes []string
	for _, p := range paths {
		b, err := json.Marshal(values[p])
		if err != nil {
			c.add(p, "value cannot be written as JSON: %v", err)
			continue
		}
		v, err := decodeTree(b)
		if err != nil {
			c.add(p, "value cannot be written as JSON: %v", err)
			continue
		}
		notes = setNoted(c, root, p, v, notes)
	}
	if err := c.err(); err != nil {
		return nil, nil, err
	}
	return encodeTree(root), notes, nil
}

// OverrideSets says whether the override s ("path=value") sets path:
// names it, or names the object holding it with a value for its field
// (runtime={"seed":2} sets runtime.seed).
func OverrideSets(s, path string) bool {
	p, v, _ := strings.Cut(s, "=")
	field, inside := strings.CutPrefix(path, p+".")
	if !inside {
		return p == path
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(v), &obj) != nil {
		return false
	}
	_, ok := obj[field]
	return ok
}

func parseSetValue(s string) any {
	if v, err := decodeTree([]byte(s)); err == nil {
		return v
	}
	return s
}

// bareNumberNote is the note for a bare number below a microsecond of a
// duration or a kilobit per second of a rate: the format's base units
// (picoseconds, bits per second) take it as given, where the writer of
// links.bottleneck.delay=20 most likely meant milliseconds.
func bareNumberNote(path string, leaf *shape, v any) string {
	n, ok := v.(json.Number)
	if !ok || leaf == nil {
		return ""
	}
	i, err := n.Int64()
	switch {
	case err != nil || i <= 0:
		return ""
	case (leaf.kind == kDuration || leaf.kind == kStart) && i < int64(sim.Microsecond):
		return fmt.Sprintf("set %s=%s is %s picoseconds (a bare number is a count of the base unit); write it with its unit, such as %q or %q, if that is not what you mean", path, n, n, n.String()+"ms", n.String()+"s")
	case leaf.kind == kRate && i < 1000:
		return fmt.Sprintf("set %s=%s is %s bits per second (a bare number is a count of the base unit); write it with its unit, such as %q or %q, if that is not what you mean", path, n, n, n.String()+"Mbps", n.String()+"kbps")
	}
	return ""
}

// setPath walks path through the tree and the format's field table together
// and stores v at its end, returning what was there (nil if nothing) and
// the field's shape.
func setPath(c *collector, root any, path string, v any) (replaced any, leaf *shape) {
	segs := strings.Split(path, ".")
	cur, sh := root, scenarioShape
	for i, seg := range segs {
		here := strings.Join(segs[:i+1], ".")
		last := i == len(segs)-1
		if _, isObj := cur.(map[string]any); isObj && sh.alt != nil {
			sh = sh.alt
		}
		switch sh.kind {
		case kObject:
			next, known := sh.fields[seg]
			if !known {
				c.add(path, "the scenario format has no %q here; expected one of %s", here, fieldList(sh))
				return nil, nil
			}
			m, ok := cur.(map[string]any)
			if !ok {
				if i == 0 {
					c.add(path, "the scenario is %s, not an object", describe(cur))
				} else {
					c.add(path, "%q is %s, not an object", strings.Join(segs[:i], "."), describe(cur))
				}
				return nil, nil
			}
			if last {
				replaced = m[seg]
				m[seg] = v
				return replaced, next
			}
			child, present := m[seg]
			if !present || child == nil {
				if next.kind == kList {
					c.add(path, "%q is absent; set the whole array first", here)
					return nil, nil
				}
				if next.kind != kObject && next.kind != kCCParams {
					c.add(path, "%q is absent; set the whole value first", here)
					return nil, nil
				}
				child = map[string]any{}
				m[seg] = child
			}
			cur, sh = child, next
		case kList:
			arr, ok := cur.([]any)
			if !ok {
				c.add(path, "%q is %s, not an array", strings.Join(segs[:i], "."), describe(cur))
				return nil, nil
			}
			idx := element(arr, seg, sh.byID)
			if idx < 0 {
				if sh.byID {
					c.add(path, "no element with id %q in %q; its ids: %s", seg, strings.Join(segs[:i], "."), elementIDs(arr))
				} else {
					c.add(path, "no element %q in %q (%d of them, addressed by index from 0)", seg, strings.Join(segs[:i], "."), len(arr))
				}
				return nil, nil
			}
			if last {
				replaced = arr[idx]
				arr[idx] = v
				return replaced, sh.elem
			}
			cur, sh = arr[idx], sh.elem
		case kCCParams:
			// Free keys (the CC's parameter names, checked by Parse): a
			// parameter is a leaf; an absent object is made.
			m, ok := cur.(map[string]any)
			if !ok {
				c.add(path, "%q is %s, not an object", strings.Join(segs[:i], "."), describe(cur))
				return nil, nil
			}
			if !last {
				c.add(path, "%q is a module parameter and has no field %q", here, segs[i+1])
				return nil, nil
			}
			replaced = m[seg]
			m[seg] = v
			return replaced, &shape{kind: kCount}
		default:
			if sh.alt != nil {
				c.add(path, "%q is %s, which has no field %q; only its object form has fields: set the whole object first", strings.Join(segs[:i], "."), describe(cur), seg)
				return nil, nil
			}
			c.add(path, "%q is a value and has no field %q", strings.Join(segs[:i], "."), seg)
			return nil, nil
		}
	}
	return nil, nil // not reached: the last segment returns
}

// elementIDs lists the ids --set reaches an array's elements by (a group's
// name), the first ten and a count of the rest, for errors.
func elementIDs(arr []any) string {
	const shown = 10
	var ids []string
	for _, e := range arr {
		m, _ := e.(map[string]any)
		id, ok := m["id"].(string)
		if !ok {
			id, ok = m["group"].(string)
		}
		if ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "none"
	}
	if len(ids) > shown {
		return strings.Join(ids[:shown], ", ") + fmt.Sprintf(" and %d more", len(ids)-shown)
	}
	return strings.Join(ids, ", ")
}

// element finds an array element by id, or by index for arrays without ids.
func element(arr []any, seg string, byID bool) int {
	if !byID {
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(arr) || fmt.Sprint(i) != seg {
			return -1
		}
		return i
	}
	for i, e := range arr {
		if m, ok := e.(map[string]any); ok && (m["id"] == seg || m["id"] == nil && m["group"] == seg) {
			return i
		}
	}
	return -1
}
