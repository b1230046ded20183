package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// pathBuiltins are the built-ins of paths that move; TestPathBuiltins checks
// them, TestBuiltins the rest.
var pathBuiltins = []string{"cellular", "wifi", "leo-handover"}

// TestPathBuiltins checks each path built-in against what issue 10 asks of
// it: cellular runs on the shipped trace with bernoulli_train loss and the
// lte ACK grant; wifi has the wifi ACK grant and wifi_txop jitter both ways, with TXOPs that carry more than the link's
// rate (else the TXOP schedule would queue outside the qdisc); leo-handover
// has a 50–100 Mbps capacity process, a 100–200 ms outage with a delay
// change every 15 s in both directions, RTTs in 40–60 ms and light loss.
func TestPathBuiltins(t *testing.T) {
	load := func(name string) *Scenario {
		raw, err := Builtin(name)
		if err != nil {
			t.Fatalf("Builtin(%q): %v", name, err)
		}
		return mustParse(t, raw, WithCCs(designCCs))
	}
	t.Run("cellular", func(t *testing.T) {
		s := load("cellular")
		b := bottleneck(s)
		file, err := os.ReadFile("scenarios/traces/cellular.trace")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(file)
		if tr := b.AB.Trace; tr == nil || tr.SHA256 != hex.EncodeToString(sum[:]) || !tr.Loop {
			t.Errorf("bottleneck ab trace = %+v, want the shipped cellular.trace (sha256 %x), looping", tr, sum)
		}
		if l := b.AB.Loss; l.Kind != BernoulliTrain || l.Position != LossPost {
			t.Errorf("bottleneck ab loss = %+v, want bernoulli_train after serialisation", l)
		}
		if g := s.Flows[0].Rcv.Grant; g == nil || g.Profile != "lte" {
			t.Errorf("f0 ack_grant = %+v, want the lte profile", g)
		}
	})
	t.Run("wifi", func(t *testing.T) {
		s := load("wifi")
		b := bottleneck(s)
		if g := s.Flows[0].Rcv.Grant; g == nil || g.Profile != "wifi" {
			t.Errorf("f0 ack_grant = %+v, want the wifi profile", g)
		}
		// The receiver ACKs a TXOP's burst at once, as the kernel's does:
		// it merges the segments of one within-burst spread (σ).
		if o := s.Flows[0].TCP; !o.GRO || o.GROInterval != b.AB.Jitter.Sigma {
			t.Errorf("f0 gro, gro_interval = %v, %v; want on, the within-burst σ %v", o.GRO, o.GROInterval, b.AB.Jitter.Sigma)
		}
		for _, d := range []Direction{b.AB, b.BA} {
			j := d.Jitter
			if j.Kind != WiFiTXOP {
				t.Fatalf("jitter = %+v, want wifi_txop", j)
			}
			txop := units.BitRate(j.BurstSize * DefaultMTU * 8 * int64(sim.Second/j.Interval))
			if txop <= d.Rate {
				t.Errorf("TXOPs carry %v, not above the rate %v", txop, d.Rate)
			}
		}
	})
	t.Run("leo-handover", func(t *testing.T) {
		s := load("leo-handover")
		b := bottleneck(s)
		if b.AB.Capacity == nil {
			t.Fatalf("bottleneck ab has no capacity process")
		}
		for _, st := range b.AB.Capacity.States {
			if st.Rate < 50*units.Mbps || st.Rate > 100*units.Mbps {
				t.Errorf("capacity state at %v, outside 50–100 Mbps", st.Rate)
			}
		}
		if l := b.AB.Loss; l.Kind != Bernoulli || l.P <= 0 || l.P > 0.001 {
			t.Errorf("loss = %+v, want light Bernoulli loss (≤ 0.1%%)", l)
		}
		ground, _ := pathDelay(s, s.Flows[0].Src, "gateway")
		byTime := map[sim.Duration]int{}
		for _, ch := range s.Changes {
			byTime[ch.At]++
			if ch.At%(15*sim.Second) != 0 {
				t.Errorf("change at %v, not a 15 s handover", ch.At)
			}
			if ch.Outage == nil || *ch.Outage < 100*sim.Millisecond || *ch.Outage > 200*sim.Millisecond {
				t.Errorf("change at %v: outage %v, want 100–200 ms", ch.At, ch.Outage)
			}
			if ch.Delay == nil {
				t.Fatalf("change at %v changes no delay", ch.At)
			}
			if rtt := 2 * (ground + *ch.Delay); rtt < 40*sim.Millisecond || rtt > 60*sim.Millisecond {
				t.Errorf("change at %v: RTT %v, outside 40–60 ms", ch.At, rtt)
			}
		}
		for _, at := range []sim.Duration{15 * sim.Second, 30 * sim.Second, 45 * sim.Second} {
			if byTime[at] != 2 {
				t.Errorf("%d changes at %v, want both directions", byTime[at], at)
			}
		}
	})
}
