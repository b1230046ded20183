package config

import (
	"fmt"
	"slices"
	"strings"
)

// FieldError is one problem in a scenario: the JSON path of the offending
// value and what is wrong with it. Paths address arrays of objects by id
// ("links[bottleneck].ab.rate"), by index when an element has no usable id
// ("links[#2]"), and changes, which have no ids, by index ("changes[0].at").
type FieldError struct {
	Path   string
	Reason string
}

// Error returns "path: reason".
func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Errors is every problem found in a scenario, in document order. Parse and
// the override helpers return it so a caller can report each path at once.
type Errors struct {
	List []FieldError
}

// Error prints one problem per line, each prefixed with the package name.
func (e *Errors) Error() string {
	var b strings.Builder
	for i, fe := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("config: ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// collector accumulates FieldErrors while a scenario is walked.
type collector struct {
	errs  []FieldError
	dir   string            // the scenario file's directory, for trace and CDF files ("" = none)
	files map[string][]byte // trace and CDF files sent with the scenario (WithFiles)
	texts map[string]string // embedded trace texts by SHA-256
}

// add records an error. A value shared by both directions of a link is
// checked once per direction; the repeat is dropped.
func (c *collector) add(path, format string, args ...any) {
	fe := FieldError{Path: path, Reason: fmt.Sprintf(format, args...)}
	if slices.Contains(c.errs, fe) {
		return
	}
	c.errs = append(c.errs, fe)
}

// err returns the collected errors as *Errors, or nil if there are none.
func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &Errors{List: c.errs}
}

// join appends a key to a JSON path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
