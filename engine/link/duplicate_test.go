package link

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// dupDir is testDir with a duplicate fraction p.
func dupDir(c Config, p float64, n uint64, seed uint64) (*sim.Sim, *Dir, *arrivals) {
	c.Duplicate = p
	s, d, _, a := testDir(c, 1000, n, 200*sim.Microsecond, seed)
	return s, d, a
}

// A fraction p of the packets arrives twice, within 4 standard errors of p
// over 200,000 packets, and none three times. The copy goes first and
// both cross the 100 Mbps link back to back: they arrive 120 µs apart
// (12,000 bits), the packets 200 µs apart. The direction counts its copies.
func TestDuplicateSendsCopies(t *testing.T) {
	const n, p = 200_000, 0.05
	s, d, a := dupDir(Config{Rate: 100 * units.Mbps, Delay: sim.Millisecond}, p, n, 1)
	s.Run()
	twice := 0
	for i := 0; i < len(a.seq); i++ {
		if i+1 < len(a.seq) && a.seq[i+1] == a.seq[i] {
			if i+2 < len(a.seq) && a.seq[i+2] == a.seq[i] {
				t.Fatalf("packet %d arrived three times", a.seq[i])
			}
			if gap := a.at[i+1] - a.at[i]; gap != sim.Time(120*sim.Microsecond) {
				t.Fatalf("packet %d's copies arrived %v apart, want 120µs", a.seq[i], gap)
			}
			twice++
			i++
		}
	}
	if got := len(a.seq) - n; got != twice || uint64(got) != d.Stats.Duplicated {
		t.Fatalf("%d arrivals for %d packets, %d of them twice, %d copies counted", len(a.seq), n, twice, d.Stats.Duplicated)
	}
	se := math.Sqrt(p * (1 - p) / n)
	within(t, "fraction sent twice", float64(twice)/n, p, se)
}

// Each copy meets the loss model as any packet: with every packet sent
// twice and pre-queue Bernoulli loss of ½, a packet arrives twice, once or
// not at all with probabilities ¼, ½, ¼ (within 4 standard errors over
// 100,000 packets).
func TestDuplicateCopiesMeetLoss(t *testing.T) {
	const n = 100_000
	s, _, a := dupDir(Config{Rate: 100 * units.Mbps, Delay: sim.Millisecond,
		Loss: config.Loss{Kind: config.Bernoulli, P: 0.5}}, 1, n, 2)
	s.Run()
	seen := make([]int, n)
	for _, q := range a.seq {
		seen[q]++
	}
	var count [3]float64
	for _, c := range seen {
		count[c]++
	}
	for k, want := range []float64{0.25, 0.5, 0.25} {
		within(t, "fraction arriving "+[]string{"never", "once", "twice"}[k], count[k]/n, want, math.Sqrt(want*(1-want)/n))
	}
}

// A scheduled change or an action sets the fraction mid-run: none of the
// first 1,000 packets is copied, every one of the next 1,000 is (p = 1),
// then none again; and a loss model set while copies are on keeps them.
func TestSetDuplicateMidRun(t *testing.T) {
	const n = 3000
	s, d, src, a := testDir(Config{Rate: 100 * units.Mbps, Delay: sim.Millisecond}, 1000, n, 200*sim.Microsecond, 3)
	src.onAct = func(i uint64) {
		switch i {
		case 1000:
			d.SetDuplicate(1)
			d.SetLoss(config.Loss{Kind: config.Periodic, Every: 1_000_000})
		case 2000:
			d.SetDuplicate(0)
		}
	}
	s.Run()
	count := make([]int, n)
	for _, q := range a.seq {
		count[q]++
	}
	for i, c := range count {
		want := 1
		if i >= 1000 && i < 2000 {
			want = 2
		}
		if c != want {
			t.Fatalf("packet %d arrived %d times, want %d", i, c, want)
		}
	}
	if d.Stats.Duplicated != 1000 || d.loss != nil && d.loss.dup != nil {
		t.Errorf("%d copies, duplicate model still on the loss slot: %v; want 1000 and off", d.Stats.Duplicated, d.loss != nil && d.loss.dup != nil)
	}
}
