// Package units holds the engine's byte and bit-rate types and their exact
// conversions to and from simulated time. Nothing here goes through a float.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

// Bytes is a size in bytes.
type Bytes int64

// BitRate is a rate in bits per second.
type BitRate int64

// Common rates.
const (
	Bps  BitRate = 1
	Kbps         = 1000 * Bps
	Mbps         = 1000 * Kbps
	Gbps         = 1000 * Mbps
	Tbps         = 1000 * Gbps
)

// Common sizes. K, M and G are decimal as in networking ("1.5MB" is 1,500,000
// bytes); KiB, MiB and GiB are binary.
const (
	B   Bytes = 1
	KB        = 1000 * B
	MB        = 1000 * KB
	GB        = 1000 * MB
	KiB       = 1024 * B
	MiB       = 1024 * KiB
	GiB       = 1024 * MiB
)

const psPerSecond = uint64(sim.Second)

// TxTime returns how long a link of rate r takes to serialise n bytes:
// ceil(n·8·10^12 / r) picoseconds. Rounding up keeps a link from ever
// exceeding its rate.
func TxTime(n Bytes, r BitRate) sim.Duration {
	if r <= 0 {
		panic(fmt.Sprintf("units: TxTime at non-positive rate %d bps", r))
	}
	hi, lo := bits.Mul64(uint64(n)*8, psPerSecond)
	q, rem := bits.Div64(hi, lo, uint64(r))
	if rem != 0 {
		q++
	}
	return sim.Duration(q)
}

// ByteTime is the exact time a link of rate r takes per byte, when 8·10^12
// is a multiple of r (10 Gbps: 800 ps); ok is false otherwise. Then
// TxTime(n, r) is n·ByteTime(r), with no division.
func ByteTime(r BitRate) (t sim.Duration, ok bool) {
	if r <= 0 || 8*psPerSecond%uint64(r) != 0 {
		return 0, false
	}
	return sim.Duration(8 * psPerSecond / uint64(r)), true
}

// BytesIn returns how many whole bytes a rate r carries in d: floor(r·d/8/10^12).
func BytesIn(r BitRate, d sim.Duration) Bytes {
	if r <= 0 || d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(r), uint64(d))
	if hi >= psPerSecond*8 {
		return Bytes(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, psPerSecond*8)
	if q > math.MaxInt64 {
		return Bytes(math.MaxInt64)
	}
	return Bytes(q)
}

// RateOf returns the rate that carries n bytes in d, in bits per second,
// rounded down: n·8·10^12 / d.
func RateOf(n Bytes, d sim.Duration) BitRate {
	if d <= 0 || n <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(n)*8, psPerSecond)
	if hi >= uint64(d) {
		return BitRate(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > math.MaxInt64 {
		return BitRate(math.MaxInt64)
	}
	return BitRate(q)
}

// ParseRate parses "100Mbps", "1.2Tbps", "64kbps" or "1000bps" exactly.
// Prefixes are decimal (k/K = 10^3, M, G, T).
func ParseRate(s string) (BitRate, error) {
	if err := sim.FormError(s); err != nil {
		return 0, err
	}
	num, unit := split(s)
	var scale BitRate
	switch strings.ToLower(unit) {
	case "bps":
		scale = Bps
	case "kbps":
		scale = Kbps
	case "mbps":
		scale = Mbps
	case "gbps":
		scale = Gbps
	case "tbps":
		scale = Tbps
	default:
		return 0, fmt.Errorf("%q is not a rate; expected e.g. \"100Mbps\" (units: bps, Kbps, Mbps, Gbps, Tbps)", s)
	}
	v, err := sim.ScaleDecimal(num, uint64(scale))
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate: %w", s, err)
	}
	if strings.Contains(unit, "B") {
		// ns-3 and tc read a capital B as bytes: folded to bits, "MBps"
		// would be a rate 8× below the one meant.
		msg := fmt.Sprintf("%q is not a rate: a capital B is bytes, and rates are in bits per second: %q", s, BitRate(v).String())
		if v <= math.MaxInt64/8 {
			msg += fmt.Sprintf(", or %q for %s %sB/s", BitRate(8*v).String(), num, unit[:len(unit)-3])
		}
		return 0, errors.New(msg)
	}
	return BitRate(v), nil
}

// ParseSize parses "1500B", "64KB", "1.5MB" or "4MiB" exactly.
func ParseSize(s string) (Bytes, error) {
	if err := sim.FormError(s); err != nil {
		return 0, err
	}
	num, unit := split(s)
	var scale Bytes
	switch unit {
	case "B":
		scale = B
	case "KB", "kB":
		scale = KB
	case "MB":
		scale = MB
	case "GB":
		scale = GB
	case "KiB":
		scale = KiB
	case "MiB":
		scale = MiB
	case "GiB":
		scale = GiB
	default:
		return 0, fmt.Errorf("%q is not a size; expected e.g. \"1500B\", \"64KB\" or \"4MiB\"", s)
	}
	v, err := sim.ScaleDecimal(num, uint64(scale))
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %w", s, err)
	}
	return Bytes(v), nil
}

// String formats r in the largest decimal unit that keeps it exact.
func (r BitRate) String() string {
	for _, u := range []struct {
		name  string
		scale BitRate
	}{{"Tbps", Tbps}, {"Gbps", Gbps}, {"Mbps", Mbps}, {"Kbps", Kbps}} {
		if r != 0 && r%u.scale == 0 {
			return strconv.FormatInt(int64(r/u.scale), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(r), 10) + "bps"
}

// String formats n in bytes.
func (n Bytes) String() string { return strconv.FormatInt(int64(n), 10) + "B" }

func split(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}
