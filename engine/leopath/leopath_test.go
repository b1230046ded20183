package leopath

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

func TestGenerateDeterministicBySeed(t *testing.T) {
	p := Default()
	p.Duration = 300 * sim.Second
	p.Seed = 7
	a, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(p)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Generate(seed 7) twice gave different schedules")
	}
	p.Seed = 8
	c, _ := Generate(p)
	if reflect.DeepEqual(a, c) {
		t.Errorf("Generate(seed 8) = Generate(seed 7), want a different draw")
	}
}

// The schedule of a 300 s path with a 50 ms outage and a 1 s announce
// lead, against its parameters: the starting values at 0; reassignments
// at 12 s + k·15 s (12, 27, …, 297: 20 of them), each two changes at that
// instant taking both directions down for 50 ms, the lead on the ab one
// only, and setting the interval's rate and delays (halves summing to an
// RTT inside the range at 100 us resolution, a rate at 1 Mbps resolution)
// with loss 0.1 % on ab and none on ba.
func TestGenerateMatchesParameters(t *testing.T) {
	lead := sim.Second
	p := Default()
	p.Seed, p.Duration, p.Outage, p.LossP, p.Announce = 1, 300*sim.Second, 50*sim.Millisecond, 0.001, &lead
	p.RTTMin, p.RTTMax, p.RateMin, p.RateMax = 20*sim.Millisecond, 80*sim.Millisecond, 10_000_000, 100_000_000
	ch, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 21; len(ch) != want {
		t.Fatalf("%d changes, want 2 at 0 + 2 per reassignment × 20 = %d", len(ch), want)
	}
	for k := range 21 {
		ab, ba := ch[2*k], ch[2*k+1]
		at := sim.Duration(0)
		if k > 0 {
			at = 12*sim.Second + sim.Duration(k-1)*15*sim.Second
		}
		if ab.At != at || ba.At != at || ab.Dir != "ab" || ba.Dir != "ba" {
			t.Fatalf("interval %d: changes at %v/%v (%s,%s), want ab and ba at %v", k, ab.At, ba.At, ab.Dir, ba.Dir, at)
		}
		rtt := *ab.Delay + *ba.Delay
		if rtt < p.RTTMin || rtt > p.RTTMax || rtt%(100*sim.Microsecond) != 0 {
			t.Errorf("RTT at %v = %v, want within %v–%v at 100 us resolution", at, rtt, p.RTTMin, p.RTTMax)
		}
		if r := *ab.Rate; r < p.RateMin || r > p.RateMax || r%1_000_000 != 0 {
			t.Errorf("rate at %v = %v, want within %v–%v at 1 Mbps resolution", at, r, p.RateMin, p.RateMax)
		}
		if *ab.LossP != 0.001 || *ba.LossP != 0 || ba.Rate != nil {
			t.Errorf("at %v: loss ab %v ba %v, ba rate %v; want 0.001, 0, untouched", at, *ab.LossP, *ba.LossP, ba.Rate)
		}
		if k == 0 {
			if ab.Outage != nil || ba.Outage != nil || ab.Announce != nil {
				t.Errorf("the starting values carry an outage or an announcement")
			}
			continue
		}
		if ab.Outage == nil || ba.Outage == nil || *ab.Outage != p.Outage || *ba.Outage != p.Outage {
			t.Errorf("reassignment at %v: outages %v %v, want %v on both directions", at, ab.Outage, ba.Outage, p.Outage)
		}
		if ab.Announce == nil || *ab.Announce != lead || ba.Announce != nil {
			t.Errorf("reassignment at %v: the lead must ride on the ab change only", at)
		}
	}
}

// Each interval draws its RTT and rate uniformly from the k values of their
// ranges at their steps (20–80 ms at 100 us: 601; 10–110 Mbps at 1 Mbps:
// 101). Over MaxIntervals (10,000) intervals each is checked against the
// discrete uniform on a + j·step, j = 0 … k−1:
//   - every draw lies on the grid, and both ends are drawn (a fair draw
//     misses an end with probability (1 − 1/k)^n, below 10⁻⁷);
//   - Pearson's chi-square over the k values is below its 0.999 quantile
//     (712.77 at 600 dof, 149.45 at 100);
//   - the mean is (a + b)/2 and the variance ((k²−1)/12)·step², each within
//     4 SEs: σ/√n, and √((μ₄ − σ⁴)/n) with μ₄ = (k²−1)(3k²−7)/240·step⁴.
func TestIntervalsUniform(t *testing.T) {
	p := Default()
	p.Seed, p.Duration = 3, (MaxIntervals-1)*15*sim.Second
	p.RTTMin, p.RTTMax, p.RateMin, p.RateMax = 20*sim.Millisecond, 80*sim.Millisecond, 10_000_000, 110_000_000
	iv, err := p.Intervals()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		lo, hi, step int64
		of           func(Interval) int64
		crit         float64 // χ² 0.999 quantile at k−1 dof
	}{
		{"RTT", int64(p.RTTMin), int64(p.RTTMax), int64(100 * sim.Microsecond), func(v Interval) int64 { return int64(v.RTT) }, 712.77},
		{"rate", int64(p.RateMin), int64(p.RateMax), 1_000_000, func(v Interval) int64 { return int64(v.Rate) }, 149.45},
	} {
		k := (c.hi-c.lo)/c.step + 1
		counts := make([]float64, k)
		var sum, sq float64
		for _, v := range iv {
			x := c.of(v)
			if x < c.lo || x > c.hi || (x-c.lo)%c.step != 0 {
				t.Fatalf("%s %d: off the grid %d + j·%d up to %d", c.name, x, c.lo, c.step, c.hi)
			}
			counts[(x-c.lo)/c.step]++
			sum += float64(x)
			sq += float64(x) * float64(x)
		}
		n := float64(len(iv))
		if counts[0] == 0 || counts[k-1] == 0 {
			t.Errorf("%s: %v draws of the minimum and %v of the maximum, want both drawn", c.name, counts[0], counts[k-1])
		}
		e, chi2 := n/float64(k), 0.0
		for _, o := range counts {
			chi2 += (o - e) * (o - e) / e
		}
		if chi2 > c.crit {
			t.Errorf("%s: χ² over its %d values = %.1f, want ≤ %.2f (α = 0.001)", c.name, k, chi2, c.crit)
		}
		kk, h := float64(k*k), float64(c.step)
		mean, v := float64(c.lo+c.hi)/2, (kk-1)/12*h*h
		mu4 := (kk - 1) * (3*kk - 7) / 240 * h * h * h * h
		m := sum / n
		if se := math.Sqrt(v / n); math.Abs(m-mean) > 4*se {
			t.Errorf("%s: mean %.6g, want %.6g ± %.3g (4 SE)", c.name, m, mean, 4*se)
		}
		s2 := (sq - n*m*m) / (n - 1)
		if se := math.Sqrt((mu4 - v*v) / n); math.Abs(s2-v) > 4*se {
			t.Errorf("%s: variance %.6g, want %.6g ± %.3g (4 SE)", c.name, s2, v, 4*se)
		}
	}
}

// A path may have MaxIntervals intervals and no more, counted before
// anything is drawn: the count is the one Intervals draws, the first at 0
// and one at each Offset + k·Period before Duration (one at 0 counts once).
func TestIntervalBound(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		period, offset, duration sim.Duration
		want                     int64
	}{
		{"starlink 60s", 15 * sim.Second, 12 * sim.Second, 60 * sim.Second, 5},
		{"starlink 57s", 15 * sim.Second, 12 * sim.Second, 57 * sim.Second, 4},
		{"offset past the end", 15 * sim.Second, 12 * sim.Second, 12 * sim.Second, 1},
		{"offset 0", sim.Second, 0, 10 * sim.Second, 10},
		{"offset 0, 1 ps more", sim.Second, 0, 10*sim.Second + 1, 11},
		{"at the bound", sim.Second, 0, MaxIntervals * sim.Second, MaxIntervals},
		{"1 ps past the bound", sim.Second, 0, MaxIntervals*sim.Second + 1, MaxIntervals + 1},
		{"10 us over 1 s", 10 * sim.Microsecond, 0, sim.Second, 100_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			p.Period, p.Offset, p.Duration = tc.period, tc.offset, tc.duration
			if n := p.intervalCount(); n != tc.want {
				t.Errorf("intervalCount() = %d, want %d", n, tc.want)
			}
			iv, err := p.Intervals()
			switch {
			case tc.want > MaxIntervals:
				want := fmt.Sprintf("leopath: period: %v over a duration of %v makes %d intervals, more than the %d", tc.period, tc.duration, tc.want, MaxIntervals)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Intervals() = %d, %v; want an error containing %q", len(iv), err, want)
				}
			case err != nil || int64(len(iv)) != tc.want:
				t.Errorf("Intervals() = %d, %v; want %d", len(iv), err, tc.want)
			}
		})
	}
}

// Validate names the parameter at fault, and only it; a zero period, RTT
// range or rate range is refused like any other bad value, not replaced by
// Default's.
func TestValidateNamesParameter(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Params)
		want string
	}{
		{"no duration", func(p *Params) { p.Duration = 0 }, "duration: 0s is not positive"},
		{"offset past period", func(p *Params) { p.Period, p.Offset = 10*sim.Second, 10*sim.Second }, "offset"},
		{"rtt reversed", func(p *Params) { p.RTTMin, p.RTTMax = 50*sim.Millisecond, 20*sim.Millisecond }, "rtt"},
		{"outage too long", func(p *Params) { p.Outage = 20 * sim.Second }, "outage"},
		{"loss 1", func(p *Params) { p.LossP = 1 }, "loss"},
		{"zero period", func(p *Params) { p.Period = 0 }, "period: 0s is not positive"},
		{"zero rtt", func(p *Params) { p.RTTMin, p.RTTMax = 0, 0 }, "rtt: range 0s–0s must be positive"},
		{"zero rate", func(p *Params) { p.RateMin, p.RateMax = 0, 0 }, "rate: range 0bps–0bps must be positive"},
		// Narrower than a draw's step: every interval would get the minimum.
		{"rate range under a step", func(p *Params) { p.RateMin, p.RateMax = 500_000, 900_000 }, "rate: range 500Kbps–900Kbps is narrower than the 1Mbps step"},
		{"rtt range under a step", func(p *Params) { p.RTTMin, p.RTTMax = sim.Millisecond, 1050*sim.Microsecond }, "rtt: range 1ms–1.05ms is narrower than the 100us step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			p.Duration = sim.Second
			tc.set(&p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), "leopath: "+tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate() = %v, want one error, containing %q", err, "leopath: "+tc.want)
			}
		})
	}
}

// The shipped example replays row for row: 21 intervals at 0 and 12 s +
// k·15 s, its first row 38.2 ms / 120 Mbps / no loss.
func TestExampleTraceReplays(t *testing.T) {
	iv, err := ParseTrace(ExampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	if len(iv) != 21 {
		t.Fatalf("%d rows, want 21", len(iv))
	}
	want0 := Interval{At: 0, RTT: 38200 * sim.Microsecond, Rate: 120 * units.Mbps}
	if iv[0] != want0 || iv[1].At != 12*sim.Second || iv[20].At != 297*sim.Second || iv[1].LossP != 0.001 {
		t.Errorf("rows = %+v, %+v … %+v", iv[0], iv[1], iv[20])
	}
	ch := Changes(Until(iv, 100*sim.Second), 0, nil)
	if len(ch) != 2*7 || ch[2].At != 12*sim.Second || *ch[2].Delay+*ch[3].Delay != 45600*sim.Microsecond || *ch[2].Rate != 95_500_000 {
		t.Errorf("replay to 100 s: %d changes (want 14), second interval %+v %+v", len(ch), ch[2], ch[3])
	}
}

// Replay checks what a replay uses: an outage that reaches the next
// interval's start (here the 1 s interval at 2 s, not the 2 s one at 0 s,
// which starts with no handover) is refused, naming the interval.
func TestReplayErrors(t *testing.T) {
	iv, err := ParseTrace([]byte("time_s,rtt_ms,bandwidth_mbps\n0,10,10\n2,10,10\n3,10,10\n5,10,10\n"))
	if err != nil {
		t.Fatal(err)
	}
	neg := -sim.Second
	for _, tc := range []struct {
		name             string
		duration, outage sim.Duration
		announce         *sim.Duration
		want             string
	}{
		{"no duration", 0, 0, nil, "duration: 0s is not positive"},
		{"outage into the next interval", 10 * sim.Second, sim.Second, nil, "outage: 1s is not shorter than the trace's interval at 2s (1s long)"},
		{"negative outage", 10 * sim.Second, -sim.Millisecond, nil, "outage: -1ms is negative"},
		{"negative announce", 10 * sim.Second, 0, &neg, "announce: -1s is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replay(iv, tc.duration, tc.outage, tc.announce)
			if err == nil || !strings.Contains(err.Error(), "leopath: "+tc.want) {
				t.Errorf("Replay = %v, want an error containing %q", err, "leopath: "+tc.want)
			}
		})
	}
	// Up to 3 s the interval at 2 s is the last: its outage has no next
	// start to reach.
	if ch, err := Replay(iv, 3*sim.Second, 1500*sim.Millisecond, nil); err != nil || len(ch) != 4 {
		t.Errorf("Replay(to 3s, outage 1.5s) = %d changes, %v; want 4, nil", len(ch), err)
	}
}

// A replay, too, may have MaxIntervals intervals up to its duration.
func TestReplayBound(t *testing.T) {
	iv := make([]Interval, MaxIntervals+1)
	for i := range iv {
		iv[i] = Interval{At: sim.Duration(i) * sim.Second, RTT: 10 * sim.Millisecond, Rate: 10 * units.Mbps}
	}
	if ch, err := Replay(iv, MaxIntervals*sim.Second, 0, nil); err != nil || len(ch) != 2*MaxIntervals {
		t.Errorf("Replay(to %d s) = %d changes, %v; want %d, nil", MaxIntervals, len(ch), err, 2*MaxIntervals)
	}
	want := fmt.Sprintf("leopath: duration: the trace has %d rows before %v, more than the %d", MaxIntervals+1, MaxIntervals*sim.Second+1, MaxIntervals)
	if _, err := Replay(iv, MaxIntervals*sim.Second+1, 0, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Replay(past the bound) = %v, want an error containing %q", err, want)
	}
}

func TestParseTraceErrors(t *testing.T) {
	for _, tc := range []struct{ name, csv, want string }{
		{"header", "t,rtt,bw\n0,1,1\n", "line 1: header"},
		{"rtt", "time_s,rtt_ms,bandwidth_mbps\n0,abc,10\n", "line 2, rtt_ms"},
		{"start", "time_s,rtt_ms,bandwidth_mbps\n1,10,10\n", "line 2, time_s: the first row starts at 1s"},
		{"order", "time_s,rtt_ms,bandwidth_mbps\n0,10,10\n5,10,10\n5,10,10\n", "line 4, time_s"},
		{"loss", "time_s,rtt_ms,bandwidth_mbps,loss\n0,10,10,1.5\n", "line 2, loss"},
		{"empty", "time_s,rtt_ms,bandwidth_mbps\n", "no rows"},
		// A cell that is not a plain decimal says why, in ccscope's words
		// for durations and rates, not just that it is not a bandwidth.
		{"bandwidth exponent", "time_s,rtt_ms,bandwidth_mbps\n0,10,1e12\n", `line 2, bandwidth_mbps: "1e12" has an exponent; write the number out in decimal`},
		{"bandwidth too large", "time_s,rtt_ms,bandwidth_mbps\n0,10,10000000000000\n", `line 2, bandwidth_mbps: "10000000000000" is too large`},
		{"bandwidth zero", "time_s,rtt_ms,bandwidth_mbps\n0,10,0\n", `line 2, bandwidth_mbps: "0" is not positive`},
		{"bandwidth negative", "time_s,rtt_ms,bandwidth_mbps\n0,10,-5\n", `line 2, bandwidth_mbps: "-5" is not positive`},
		{"bandwidth below 1 bps", "time_s,rtt_ms,bandwidth_mbps\n0,10,1.0000001\n", `line 2, bandwidth_mbps: "1.0000001" is finer than the unit allows`},
		{"rtt exponent", "time_s,rtt_ms,bandwidth_mbps\n0,1e2,10\n", `line 2, rtt_ms: "1e2" has an exponent`},
		{"rtt zero", "time_s,rtt_ms,bandwidth_mbps\n0,0,10\n", `line 2, rtt_ms: "0" is not positive`},
		{"time with a unit", "time_s,rtt_ms,bandwidth_mbps\n0s,10,10\n", `line 2, time_s: "0s" is not a number`},
		{"time negative", "time_s,rtt_ms,bandwidth_mbps\n-1,10,10\n", `line 2, time_s: "-1" is negative`},
		// A malformed record names its line and column, without a panic
		// (a csv.Reader has no field positions after such an error).
		{"stray quote", "time_s,rtt_ms,bandwidth_mbps\n0,1,1\n1,\"2\"x,1\n", `line 3, column 5: extraneous or missing " in quoted-field`},
		{"open quote", "time_s,rtt_ms,bandwidth_mbps\n0,1,1\n\n\n1,\"2,1\n", `line 5, column 8: extraneous or missing " in quoted-field`},
		{"quote in the header", "time_s,rtt\"_ms,bandwidth_mbps\n0,1,1\n", `line 1, column 11: bare " in non-quoted-field`},
		{"loss below float64", "time_s,rtt_ms,bandwidth_mbps,loss\n0,10,10,1e-400\n", `line 2, loss: "1e-400" is below the smallest float64`},
		{"hex loss below float64", "time_s,rtt_ms,bandwidth_mbps,loss\n0,10,10,0x1p-1100\n", `line 2, loss: "0x1p-1100" is below the smallest float64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTrace([]byte(tc.csv))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseTrace = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
