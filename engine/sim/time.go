package sim

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Time is an instant of simulated time in integer picoseconds since the start
// of a run. int64 picoseconds span ±106 days, far beyond any run.
type Time int64

// Duration is a span of simulated time in integer picoseconds. It is signed so
// that subtracting two Times never wraps.
type Duration int64

// Duration units. A Duration in these units converts to time.Duration only at
// the edges of the engine (CLI, logs), never inside a run.
const (
	Picosecond  Duration = 1
	Nanosecond           = 1000 * Picosecond
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
)

// MaxDuration is the longest duration a scenario or a request may give. A
// run that long, plus a few delays as long, stays far inside int64
// picoseconds, so "now + delay" never wraps.
const MaxDuration = 1_000_000 * Second

// Never is a Time later than any event a run can schedule.
const Never Time = math.MaxInt64

// Add returns t+d.
func (t Time) Add(d Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Seconds returns t in seconds as a float, for display only.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Seconds returns d in seconds as a float, for display only.
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// String formats t like a Duration since the start of the run.
func (t Time) String() string { return Duration(t).String() }

var durationUnits = []struct {
	name string
	ps   Duration
}{
	{"s", Second}, {"ms", Millisecond}, {"us", Microsecond}, {"ns", Nanosecond}, {"ps", Picosecond},
}

// String formats d exactly in the largest unit that keeps it readable, with as
// many decimals as needed and no more ("1.5ms", "40ms", "12ps").
func (d Duration) String() string {
	if d == 0 {
		return "0s"
	}
	neg := d < 0
	u := uint64(d)
	if neg {
		u = uint64(-d)
	}
	for _, unit := range durationUnits {
		scale := uint64(unit.ps)
		if u < scale && unit.ps != Picosecond {
			continue
		}
		whole, frac := u/scale, u%scale
		s := strconv.FormatUint(whole, 10)
		if frac != 0 {
			digits := len(strconv.FormatUint(scale, 10)) - 1
			f := fmt.Sprintf("%0*d", digits, frac)
			s += "." + strings.TrimRight(f, "0")
		}
		if neg {
			s = "-" + s
		}
		return s + unit.name
	}
	panic("unreachable")
}

// ParseDuration parses a non-negative decimal number with a unit suffix (ps,
// ns, us, µs, ms, s) exactly into picoseconds, never through a float: "0.5us"
// is exactly 500000 ps. A fraction finer than one picosecond is an error, as is
// a value that overflows int64 picoseconds.
func ParseDuration(s string) (Duration, error) {
	if err := FormError(s); err != nil {
		return 0, err
	}
	num, unit := splitUnit(s)
	var scale Duration
	switch unit {
	case "ps":
		scale = Picosecond
	case "ns":
		scale = Nanosecond
	case "us", "µs":
		scale = Microsecond
	case "ms":
		scale = Millisecond
	case "s":
		scale = Second
	case "":
		return 0, fmt.Errorf("%q has no unit; expected e.g. \"40ms\" (units: ps, ns, us, ms, s)", s)
	default:
		return 0, fmt.Errorf("%q has unknown unit %q; expected ps, ns, us, ms or s", s, unit)
	}
	v, err := ScaleDecimal(num, uint64(scale))
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return Duration(v), nil
}

// CheckMax refuses a duration longer than MaxDuration.
func CheckMax(d Duration) error {
	if d > MaxDuration {
		return fmt.Errorf("is longer than %s, the longest duration ccscope takes", MaxDuration)
	}
	return nil
}

// FormError explains a quantity written with a sign or an exponent, which
// the parsers of durations, rates and sizes would otherwise read as part of
// an unknown unit; it is nil for any other string.
func FormError(s string) error {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '-' || t[0] == '+') {
		if t[0] == '-' {
			return fmt.Errorf("%q is negative", s) // the field's own check says what it takes
		}
		return fmt.Errorf("%q has a sign; write the number alone", s)
	}
	num, unit := splitUnit(t)
	if num != "" && len(unit) > 1 && (unit[0] == 'e' || unit[0] == 'E') && strings.ContainsRune("0123456789+-", rune(unit[1])) {
		return fmt.Errorf("%q has an exponent; write the number out in decimal", s)
	}
	return nil
}

// splitUnit splits "12.5ms" into "12.5" and "ms".
func splitUnit(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// ScaleDecimal returns the decimal string num ("12", "0.5", "1.25") times
// scale, exactly, as an int64-ranged integer. It rejects signs, exponents,
// empty input, results that overflow int64 and fractions the scale cannot
// represent exactly ("0.1" of a picosecond).
func ScaleDecimal(num string, scale uint64) (int64, error) {
	whole, frac, _ := strings.Cut(num, ".")
	if whole == "" && frac == "" || strings.Contains(frac, ".") || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 18 {
		return 0, fmt.Errorf("%q has too many decimals", num)
	}
	w, err := strconv.ParseUint("0"+whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", num)
	}
	f, _ := strconv.ParseUint("0"+frac, 10, 64)
	pow := uint64(1)
	for range frac {
		pow *= 10
	}
	// total = w*scale + f*scale/pow, each product in 128 bits.
	hi, lo := bits.Mul64(w, scale)
	fhi, flo := bits.Mul64(f, scale)
	if fhi >= pow {
		return 0, fmt.Errorf("%q is too large", num)
	}
	q, r := bits.Div64(fhi, flo, pow)
	if r != 0 {
		return 0, fmt.Errorf("%q is finer than the unit allows", num)
	}
	sum, carry := bits.Add64(lo, q, 0)
	if hi != 0 || carry != 0 || sum > math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", num)
	}
	return int64(sum), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
