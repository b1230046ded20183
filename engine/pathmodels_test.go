package engine

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A scheduled change reaches the path models: at 1 s the bottleneck goes
// down for 200 ms and its delay rises to 30 ms (a LEO handover). A 50 Mbps
// pump offers 200 ms × 50 Mbps / 1500 B = 833 packets in the outage; the
// 1-BDP FIFO (100 Mbps × 40 ms = 333 packets) keeps 333 of them and refuses
// the other 500 as outage drops, and the oldest kept packet waits the whole
// outage: the largest one-way delay is 200 ms + 1 ms + 12 µs + 30 ms + 120 µs.
// At 2 s a reorder jitter replaces the (absent) jitter model: from then
// each packet is held 1 ms with probability 0.1, and a held packet arrives
// out of order (RFC 4737 §3.3: below the highest sequence seen) if one of
// the packets sent in the next 1 ms is not held: the pump sends one every
// 240 µs, so one of the next four, 1 − 0.1⁴ of the time. Of the packets sent
// in [2 s, 2.9 s) (their followers all arrive before the end), a fraction
// 0.1 × (1 − 0.1⁴) = 0.09999 arrives out of order, within 4 binomial
// standard errors; of those that left the bottleneck before 2 s, none.
func TestScheduledOutageAndDelayChange(t *testing.T) {
	scn := pumpScenario(50*units.Mbps, 100*units.Mbps, 19*sim.Millisecond, bdpFIFO(), 3*sim.Second)
	outage, delay := 200*sim.Millisecond, 30*sim.Millisecond
	j := config.Jitter{Kind: config.Reorder, Order: config.OrderReorder, P: 0.1, Delay: sim.Millisecond}
	scn.Changes = []config.Change{
		{At: sim.Second, Link: "bottleneck", Dir: "ab", Outage: &outage, Delay: &delay},
		{At: 2 * sim.Second, Link: "bottleneck", Dir: "ab", Jitter: &j},
	}
	r, err := New(scn, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	order := &reorderTap{pool: r.Pool}
	if err := r.TapArrivals("bottleneck", "ab", func(next link.Receiver) link.Receiver { order.next = next; return order }); err != nil {
		t.Fatal(err)
	}
	r.RunToEnd()
	// A packet sent before 1.99 s left the bottleneck 1 ms + 12 µs + 120 µs
	// later, before the change.
	if n := order.sentIn(0, sim.Time(1990*sim.Millisecond)); n.reordered != 0 {
		t.Errorf("%d of %d packets sent before 1.99 s arrived out of order, want 0", n.reordered, n.arrived)
	}
	if n := order.sentIn(sim.Time(2*sim.Second), sim.Time(2900*sim.Millisecond)); n.arrived < 3700 {
		t.Errorf("%d packets sent in [2 s, 2.9 s) arrived, want the pump's 3,750", n.arrived)
	} else {
		want := j.P * (1 - math.Pow(j.P, 4))
		got := float64(n.reordered) / float64(n.arrived)
		se := math.Sqrt(want * (1 - want) / float64(n.arrived))
		if math.Abs(got-want) > 4*se {
			t.Errorf("%d of %d packets sent after 2 s arrived out of order (%.4f), want %.5f ± %.4f (4 SE)", n.reordered, n.arrived, got, want, 4*se)
		}
	}
	bn, _ := r.Net.Dir("bottleneck", "ab")
	if d := bn.Stats.OutageDrops; d < 499 || d > 501 {
		t.Errorf("outage drops = %d, want 500 ± 1", d)
	}
	if bn.Stats.Drops != 0 {
		t.Errorf("qdisc drops = %d, want 0 (refusals in the outage count as outage drops)", bn.Stats.Drops)
	}
	p := r.Flows[0].(pumpFlow).p
	got, _ := p.OneWay.Quantile(1)
	want := int64(outage + sim.Millisecond + units.TxTime(1500, units.Gbps) + delay + units.TxTime(1500, 100*units.Mbps))
	// The histogram resolves values to 1/64 of their power of two.
	if d := got - want; d < -want/64 || d > want/64 {
		t.Errorf("largest one-way delay = %v, want %v", sim.Duration(got), sim.Duration(want))
	}
	var found bool
	for _, q := range r.Summary("").Queues {
		if q.Link == "bottleneck" && q.Dir == "ab" {
			found = q.OutageDrops == bn.Stats.OutageDrops
		}
	}
	if !found {
		t.Errorf("summary of bottleneck/ab lacks outage_drops = %d", bn.Stats.OutageDrops)
	}
}

// reorderTap passes packets on to next and keeps, for each arrival, when
// its packet was sent and whether it arrived out of order.
type reorderTap struct {
	next      link.Receiver
	pool      *packet.Pool
	top       uint64
	sentAt    []sim.Time
	reordered []bool
}

func (c *reorderTap) Receive(id packet.ID) {
	p := c.pool.Get(id)
	c.sentAt = append(c.sentAt, p.SentAt)
	c.reordered = append(c.reordered, p.Seq < c.top)
	c.top = max(c.top, p.Seq)
	c.next.Receive(id)
}

// sentIn counts the arrivals of the packets sent in [from, to), and how many
// of them arrived out of order.
func (c *reorderTap) sentIn(from, to sim.Time) (n struct{ arrived, reordered int }) {
	for i, at := range c.sentAt {
		if at >= from && at < to {
			n.arrived++
			if c.reordered[i] {
				n.reordered++
			}
		}
	}
	return n
}
