package config

import (
	"slices"
	"strings"
	"testing"
)

// ParseTrace reads every form mahimahi's mm-link loads (a line is
// strtol(…, 10) consumed whole: C whitespace and a sign may lead the
// number) to the same timestamps, and its errors name the line.
func TestParseTraceForms(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []uint64
		err        string
	}{
		{name: "plain", text: "1\n2\n2\n5\n", want: []uint64{1, 2, 2, 5}},
		{name: "no final newline", text: "0\n3", want: []uint64{0, 3}},
		{name: "strtol's leading whitespace", text: " 1\n\t2\n\v3\n", want: []uint64{1, 2, 3}},
		{name: "strtol's plus sign", text: "+1\n+12\n", want: []uint64{1, 12}},
		{name: "CRLF", text: "1\r\n4\r\n", want: []uint64{1, 4}},
		{name: "blank lines", text: "\n1\n\n4\n\n", want: []uint64{1, 4}},
		{name: "a sign alone", text: "1\n+\n", err: `line 2: "+" is not a whole number of milliseconds`},
		{name: "two signs", text: "++1\n", err: `line 1: "++1" is not a whole number of milliseconds`},
		{name: "negative", text: "-1\n2\n", err: `line 1: "-1" is not a whole number of milliseconds`},
		{name: "decreasing", text: "1\n5\n4\n", err: "line 3: timestamps must not decrease (4 after 5)"},
		{name: "last at 0", text: "0\n\n0\n\n", err: "line 3: the trace must last a nonzero time (its last timestamp is 0)"},
		{name: "empty", text: "\n \n", err: "no timestamps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTrace([]byte(tc.text))
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ParseTrace(%q) = %v, %v; want error %q", tc.text, got, err, tc.err)
			case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
				t.Errorf("ParseTrace(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
			}
		})
	}
}
