package units

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// TestTxTime checks serialisation times against hand arithmetic:
// 1500 B = 12000 bits, and 12000 bits / r bps = 12000·10^12 / r ps.
func TestTxTime(t *testing.T) {
	cases := []struct {
		name string
		n    Bytes
		r    BitRate
		want sim.Duration
	}{
		{"1500B at 100Mbps", 1500, 100 * Mbps, 120000000},
		{"1500B at 1Gbps", 1500, Gbps, 12000000},
		{"1500B at 100Gbps", 1500, 100 * Gbps, 120000},
		{"1500B at 1.2Tbps", 1500, 1200 * Gbps, 10000},
		{"64B at 10Mbps", 64, 10 * Mbps, 51200000},
		{"0B", 0, Gbps, 0},
		// 8 bits at 3 bps is 2.666…s: rounded up so the link never beats its rate.
		{"1B at 3bps rounds up", 1, 3, 2666666666667},
		// 1500 B at 1 bps is 12000 s = 1.2·10^16 ps: the product 1.2·10^16 fits
		// only because the division is done in 128 bits.
		{"1500B at 1bps", 1500, 1, 12000 * sim.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := TxTime(tc.n, tc.r); got != tc.want {
				t.Errorf("TxTime(%d, %d) = %d, want %d", tc.n, tc.r, got, tc.want)
			}
		})
	}
}

// ByteTime is exact where it claims to be: n bytes at rate r take
// n·ByteTime(r), which is ceil(n·8·10^12 / r) computed in big integers,
// and it declines rates that do not divide 8·10^12.
func TestByteTime(t *testing.T) {
	for _, r := range []BitRate{1, 3, 12 * Mbps, 100 * Mbps, Gbps, 10 * Gbps, 25 * Gbps, 100 * Gbps, 1200 * Gbps, 7 * Gbps} {
		bt, ok := ByteTime(r)
		exact := new(big.Int).Mod(big.NewInt(8e12), big.NewInt(int64(r))).Sign() == 0
		if ok != exact {
			t.Errorf("ByteTime(%d) ok = %v, want %v", r, ok, exact)
			continue
		}
		if !ok {
			continue
		}
		for _, n := range []Bytes{0, 1, 40, 1500, 9000, 65536} {
			num := new(big.Int).Mul(big.NewInt(int64(n)), big.NewInt(8e12))
			q, m := new(big.Int).QuoRem(num, big.NewInt(int64(r)), new(big.Int))
			if m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			if got := sim.Duration(n) * bt; int64(got) != q.Int64() {
				t.Errorf("%d B at %d bps: %d·ByteTime = %d, want %d", n, r, n, got, q.Int64())
			}
		}
	}
}

func TestTxTimePanicsOnZeroRate(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "non-positive rate") {
			t.Errorf("TxTime(1500, 0) panic = %v, want one naming the non-positive rate", r)
		}
	}()
	TxTime(1500, 0)
}

// TestBytesIn checks bandwidth-delay products: 100 Mbps × 40 ms = 4·10^6
// bits = 500000 bytes; 1 Gbps × 30 ms = 3750000 bytes.
func TestBytesIn(t *testing.T) {
	cases := []struct {
		name string
		r    BitRate
		d    sim.Duration
		want Bytes
	}{
		{"100Mbps x 40ms", 100 * Mbps, 40 * sim.Millisecond, 500000},
		{"1Gbps x 30ms", Gbps, 30 * sim.Millisecond, 3750000},
		{"1Gbps x 100us", Gbps, 100 * sim.Microsecond, 12500},
		{"3bps x 1s rounds down", 3, sim.Second, 0},
		{"zero rate", 0, sim.Second, 0},
		{"negative time", Gbps, -sim.Second, 0},
		{"saturates", math.MaxInt64, math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := BytesIn(tc.r, tc.d); got != tc.want {
				t.Errorf("BytesIn(%d, %d) = %d, want %d", tc.r, tc.d, got, tc.want)
			}
		})
	}
}

func TestRateOf(t *testing.T) {
	cases := []struct {
		name string
		n    Bytes
		d    sim.Duration
		want BitRate
	}{
		{"1500B in 120us", 1500, 120 * sim.Microsecond, 100 * Mbps},
		{"500000B in 40ms", 500000, 40 * sim.Millisecond, 100 * Mbps},
		// 8 bits in 3 ps is 2.666…·10^12 bps, rounded down.
		{"1B in 3ps rounds down", 1, 3, 2666666666666},
		{"zero time", 1500, 0, 0},
		{"saturates", math.MaxInt64 / 8, 1, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RateOf(tc.n, tc.d); got != tc.want {
				t.Errorf("RateOf(%d, %d) = %d, want %d", tc.n, tc.d, got, tc.want)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want BitRate
		err  string
	}{
		{"100Mbps", 100000000, ""},
		{"1.2Tbps", 1200000000000, ""},
		{"64kbps", 64000, ""},
		{"64Kbps", 64000, ""},
		{"1000bps", 1000, ""},
		{"100mbps", 100000000, ""}, // the prefix is case-insensitive: no millibits
		{"100MBps", 0, `"100MBps" is not a rate: a capital B is bytes, and rates are in bits per second: "100Mbps", or "800Mbps" for 100 MB/s`},
		{"1.5GBPS", 0, `"1.5GBPS" is not a rate: a capital B is bytes, and rates are in bits per second: "1500Mbps", or "12Gbps" for 1.5 GB/s`},
		{"8Bps", 0, `bits per second: "8bps", or "64bps" for 8 B/s`},
		{"9223372TBps", 0, `bits per second: "9223372Tbps"`}, // 8× would overflow: no second reading
		{"2.5Gbps", 2500000000, ""},
		{"0.001Kbps", 1, ""},
		{"9223372.036854775807Tbps", math.MaxInt64, ""}, // the largest BitRate
		{"9223372.036854775808Tbps", 0, "too large"},
		{"100Mbs", 0, `"100Mbs" is not a rate; expected e.g. "100Mbps"`},
		{"100", 0, "is not a rate"},
		{"-1Mbps", 0, `"-1Mbps" is negative`},
		{"1e6bps", 0, `"1e6bps" has an exponent`},
		{"0.5bps", 0, "finer than the unit allows"},
		{"10000000Tbps", 0, "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("ParseRate(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ParseRate(%q) = %d, %v, want an error containing %q", tc.in, got, err, tc.err)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want Bytes
		err  string
	}{
		{"1500B", 1500, ""},
		{"64KB", 64000, ""},
		{"64kB", 64000, ""},
		{"1.5MB", 1500000, ""},
		{"2GB", 2000000000, ""},
		{"1KiB", 1024, ""},
		{"0.5KiB", 512, ""},
		{"4MiB", 4194304, ""},
		{"1GiB", 1073741824, ""},
		{"0.5B", 0, "finer than the unit allows"},
		{"1.5", 0, "is not a size"},
		{"10mb", 0, "is not a size"},
		{"1TB", 0, "is not a size"},
		{"10000000000GB", 0, "too large"},
		{"-1KB", 0, `"-1KB" is negative`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("ParseSize(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ParseSize(%q) = %d, %v, want an error containing %q", tc.in, got, err, tc.err)
			}
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	rates := []struct {
		r    BitRate
		want string
	}{
		{100 * Mbps, "100Mbps"}, {1200 * Gbps, "1200Gbps"}, {1500 * Kbps, "1500Kbps"},
		{Tbps, "1Tbps"}, {1, "1bps"}, {1001, "1001bps"}, {0, "0bps"},
	}
	for _, tc := range rates {
		got := tc.r.String()
		if got != tc.want {
			t.Errorf("BitRate(%d).String() = %q, want %q", tc.r, got, tc.want)
		}
		if back, err := ParseRate(got); err != nil || back != tc.r {
			t.Errorf("ParseRate(%q) = %d, %v, want %d", got, back, err, tc.r)
		}
	}
	for _, n := range []Bytes{0, 1, 1500, 4 * MB} {
		got := n.String()
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", got, back, err, n)
		}
	}
}
