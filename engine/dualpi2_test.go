package engine

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// DualPI2 under unresponsive load reaches the PI2 fixed point set by flow
// balance: drops remove the excess, so with a classic (Not-ECT) pump at λC
// and an L4S (ECT(1)) pump at λL — marked, never dropped while k·p' < 1 —
// on a link of capacity C, λC·p_C = λC + λL − C, so p_C = p'² =
// (λC + λL − C)/λC (RFC 9332 §2.1's p_C = (p_L/k)² coupling with p_L = k·p').
// The controller finds it fast: its β term acts on the queue's rate of
// change every 16 ms. (Its α term then walks the queue to the 15 ms target
// with a time constant of tens of seconds for unresponsive load, so the
// delay target is not what this checks.) Checked over 4–20 s:
//   - the mean of p' against the fixed point, within 3%;
//   - the classic drop fraction against mean(p'²), and the L-queue's PI
//     mark fraction against k·mean(p'), within 5% (the coupling law);
//   - the L4S pump's queueing delay (one-way delay less the 20.132 ms of
//     propagation and serialisation) p99 ≤ 2 ms: the L-queue gets 90% of
//     the WRR and its 30 Mbps never builds a queue.
func TestDualPI2Coupling(t *testing.T) {
	cases := []struct {
		name       string
		classic, l units.BitRate
	}{
		{"classic only", 120 * units.Mbps, 0},
		{"classic and l4s", 80 * units.Mbps, 30 * units.Mbps},
	}
	const capacity = 100e6
	base := sim.Millisecond + units.TxTime(1500, units.Gbps) + 19*sim.Millisecond + units.TxTime(1500, 100*units.Mbps)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rates := []units.BitRate{c.classic}
			if c.l > 0 {
				rates = append(rates, c.l)
			}
			q := config.Qdisc{Kind: config.DualPI2, Limit: config.QueueLimit{Packets: 10000}, Target: 15 * sim.Millisecond,
				TUpdate: 16 * sim.Millisecond, StepThreshold: sim.Millisecond, Coupling: 2, CProtection: 10}
			scn := multiPump(q, 20*sim.Second, rates...)
			if c.l > 0 {
				scn.Flows[1].ECN = config.ECT1
			}
			r, err := New(scn, nil)
			if err != nil {
				t.Fatal(err)
			}
			bn, _ := r.Net.Dir("bottleneck", "ab")
			dq := bn.Qdisc().(*qdisc.DualPI2)
			r.RunUntil(sim.Time(4 * sim.Second))
			before := dq.Stats
			if c.l > 0 {
				r.Flows[1].(pumpFlow).p.OneWay = trace.Hist{}
			}
			var sum, sumSq float64
			var n int
			for at := sim.Time(4 * sim.Second); at < sim.Time(20*sim.Second); at += sim.Time(16 * sim.Millisecond) {
				r.RunUntil(at)
				p := float64(dq.Prob(at)) / math.MaxUint32
				sum += p
				sumSq += p * p
				n++
			}
			r.RunToEnd()
			mean, meanSq := sum/float64(n), sumSq/float64(n)
			lam := float64(c.classic + c.l)
			want := math.Sqrt((lam - capacity) / float64(c.classic))
			if math.Abs(mean-want) > 0.03*want {
				t.Errorf("mean p' = %.4f, want %.4f ± 3%%", mean, want)
			}
			s := dq.Stats
			drops := float64(s.ClassicDrops - before.ClassicDrops)
			pc := drops / (drops + float64(s.ClassicSent-before.ClassicSent))
			if math.Abs(pc-meanSq) > 0.05*meanSq {
				t.Errorf("classic drop fraction = %.4f, want mean(p'²) = %.4f ± 5%%", pc, meanSq)
			}
			t.Logf("p' mean %.4f (fixed point %.4f), p_C %.4f, mean p'² %.4f", mean, want, pc, meanSq)
			if c.l == 0 {
				return
			}
			pl := float64(s.LMarks-before.LMarks) / float64(s.LSent-before.LSent)
			if math.Abs(pl-2*mean) > 0.05*2*mean {
				t.Errorf("L-queue PI mark fraction = %.4f, want 2·mean(p') = %.4f ± 5%%", pl, 2*mean)
			}
			p99, _ := r.Flows[1].(pumpFlow).p.OneWay.Quantile(0.99)
			if qd := sim.Duration(p99) - base; qd > 2*sim.Millisecond {
				t.Errorf("L4S queueing delay p99 = %v, want ≤ 2ms", qd)
			}
			t.Logf("p_L %.4f, L4S one-way p99 %v (base %v), step marks %d", pl, sim.Duration(p99), base, s.StepMarks-before.StepMarks)
		})
	}
}
