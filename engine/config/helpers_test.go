package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// baseJSON is a small valid scenario the error tests mutate: h1 —access—
// r1 —bottleneck— h2, one CUBIC flow, one pump flow, one change.
const baseJSON = `{
  "name": "base", "description": "test base",
  "runtime": {"seed": 3, "duration": "10s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
    {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "100Mbps", "delay": "19ms",
     "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"}, "loss": {"kind": "bernoulli", "p": 0.01}}}
  ],
  "flows": [
    {"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic"},
    {"id": "p0", "src": "h1", "dst": "h2", "cc": "pump", "rate": "120Mbps"}
  ],
  "changes": [{"at": "5s", "link": "bottleneck", "dir": "ab", "rate": "50Mbps"}]
}`

// mutate decodes baseJSON with encoding/json (not the code under test),
// lets f edit it and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseJSON), &m); err != nil {
		t.Fatalf("baseJSON: %v", err)
	}
	if f != nil {
		f(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// at walks a decoded document: object keys, and array elements by id.
func at(m map[string]any, path ...string) map[string]any {
	var cur any = m
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[p]
			if !ok {
				next = map[string]any{}
				c[p] = next
			}
			cur = next
		case []any:
			for _, e := range c {
				if e.(map[string]any)["id"] == p {
					cur = e
				}
			}
		}
	}
	return cur.(map[string]any)
}

func list(m map[string]any, key string) []any { return m[key].([]any) }

// fieldErrors unwraps Parse's error into its list.
func fieldErrors(t *testing.T, err error) []FieldError {
	t.Helper()
	var es *Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T) is not *Errors", err, err)
	}
	return es.List
}

// want is an expected error: its exact path and a fragment of its reason.
type want struct{ path, reason string }

func matches(fe FieldError, w want) bool {
	return fe.Path == w.path && strings.Contains(fe.Reason, w.reason)
}

func mustParse(t *testing.T, raw []byte, opts ...Option) *Scenario {
	t.Helper()
	s, err := Parse(raw, opts...)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}
