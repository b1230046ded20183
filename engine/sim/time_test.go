package sim

import (
	"math"
	"strings"
	"testing"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want Duration
	}{
		{"0.5us", 500000},
		{"2.5µs", 2500000},
		{"40ms", 40000000000},
		{"1.5ms", 1500000000},
		{"1s", 1000000000000},
		{"12ps", 12},
		{"0.001ns", 1},
		{"0.000000000001s", 1},
		{"1.000000000001s", 1000000000001},
		{"0s", 0},
		{".5ms", 500000000},
		{"5.ms", 5000000000},
		{" 40 ms ", 40000000000},
		{"0.5000000000000000000000s", 500000000000}, // trailing zeros are not precision
		{"9223372.036854775807s", math.MaxInt64},    // the largest Duration
		{"9223372036854775ns", 9223372036854775000},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("ParseDuration(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseDurationErrors(t *testing.T) {
	cases := []struct{ in, reason string }{
		{"5", "has no unit"},
		{"", "has no unit"},
		{"5m", `unknown unit "m"`},
		{"5min", `unknown unit "min"`},
		{"-1ms", `"-1ms" is negative`},
		{"+1ms", "has a sign"},
		{"1e3ms", `"1e3ms" has an exponent`},
		{"1.5E-3s", "has an exponent"},
		{"1..5ms", "is not a number"},
		{"ms", "is not a number"},
		{".ms", "is not a number"},
		{"0.1ps", "finer than the unit allows"},
		{"0.0000000000001s", "finer than the unit allows"},
		{"9223372.036854775808s", "too large"},
		{"99999999999999999999s", "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("ParseDuration(%q) = %d, %v, want an error containing %q", tc.in, got, err, tc.reason)
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	cases := []struct {
		d    Duration
		want string
	}{
		{0, "0s"},
		{1, "1ps"},
		{999, "999ps"},
		{1000, "1ns"},
		{1500, "1.5ns"},
		{120000000, "120us"},
		{1500000000, "1.5ms"},
		{40 * Millisecond, "40ms"},
		{Second + 1, "1.000000000001s"},
		{-1500 * Microsecond, "-1.5ms"},
		{math.MaxInt64, "9223372.036854775807s"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("Duration(%d).String() = %q, want %q", int64(tc.d), got, tc.want)
			}
			if tc.d < 0 {
				return
			}
			if back, err := ParseDuration(tc.want); err != nil || back != tc.d {
				t.Errorf("ParseDuration(%q) = %d, %v, want %d", tc.want, back, err, int64(tc.d))
			}
		})
	}
}

func TestTimeArithmetic(t *testing.T) {
	t0 := Time(5 * Second)
	if got := t0.Add(250 * Millisecond); got != Time(5250*Millisecond) {
		t.Errorf("5s + 250ms = %v, want 5.25s", got)
	}
	if got := Time(Second).Sub(Time(3 * Second)); got != -2*Second {
		t.Errorf("1s - 3s = %v, want -2s", got)
	}
	if got := Time(1500 * Millisecond).String(); got != "1.5s" {
		t.Errorf("Time(1.5s).String() = %q, want \"1.5s\"", got)
	}
	if got := Duration(2500 * Millisecond).Seconds(); got != 2.5 {
		t.Errorf("Duration(2.5s).Seconds() = %v, want 2.5", got)
	}
}

func TestScaleDecimal(t *testing.T) {
	cases := []struct {
		num   string
		scale uint64
		want  int64
		err   string
	}{
		{"12", 1000, 12000, ""},
		{"0.5", 10, 5, ""},
		{"1.25", 1000, 1250, ""},
		{"0.125", 1000, 125, ""},
		{"0.0005", 1000, 0, "finer than the unit allows"},
		{"9223372036854775807", 1, math.MaxInt64, ""},
		{"9223372036854775808", 1, 0, "too large"},
		{"18446744073709551616", 1, 0, "too large"},
		{"", 1, 0, "is not a number"},
		{".", 1, 0, "is not a number"},
		{"+1", 1, 0, "is not a number"},
		{"1.2.3", 1, 0, "is not a number"},
		{"0.1234567890123456789", 10, 0, "too many decimals"},
	}
	for _, tc := range cases {
		t.Run(tc.num, func(t *testing.T) {
			got, err := ScaleDecimal(tc.num, tc.scale)
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("ScaleDecimal(%q, %d) = %d, %v, want %d", tc.num, tc.scale, got, err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ScaleDecimal(%q, %d) = %d, %v, want an error containing %q", tc.num, tc.scale, got, err, tc.err)
			}
		})
	}
}
