package engine

import (
	"math"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// toyDCTCP is a test-only, ACK-clocked window sender with DCTCP's reaction
// to marks (Alizadeh et al., SIGCOMM 2010, §3.1, as Linux's tcp_dctcp.c
// does it): per ACK cwnd += 1/cwnd; once per window of data
// α ← (1−g)·α + g·F, F the fraction of the window's packets that came back
// marked; on the first marked ACK cwnd ← cwnd·(1 − α/2), then no further
// cut until the data sent before the cut is acknowledged (CWR). It has no
// loss recovery: the test keeps the queue far below its limit. Its receiver
// echoes each packet's CE mark on its ACK, as DCTCP's receiver does with
// delayed ACKs off.
type toyDCTCP struct {
	r          *Run
	h1, h2     *topo.Node
	flow       int32
	ecn        packet.ECN // ECT(0) for DCTCP, ECT(1) for an L4S flow
	cwnd       float64
	alpha      float64
	inflight   int
	next       uint64 // next sequence number (packets)
	windowEnd  uint64
	acked      int // ACKs in this window
	marked     int // of which echoed CE
	cwrEnd     uint64
	inCWR      bool
	onDelivery func(now sim.Time, p *packet.Packet) // a data packet arrives
}

const toyG = 1.0 / 16 // DCTCP's g

func (d *toyDCTCP) send() {
	for float64(d.inflight) < d.cwnd {
		id := d.r.Pool.Alloc()
		p := d.r.Pool.Get(id)
		p.Flow, p.Src, p.Dst, p.Size, p.ECN, p.Seq = d.flow, d.h1.Index, d.h2.Index, 1500, d.ecn, d.next
		p.SentAt = d.r.Now()
		d.next++
		d.inflight++
		d.h1.Send(id)
	}
}

// toyReceiver is the receiving end at h2: it turns data into ACKs.
type toyReceiver struct{ d *toyDCTCP }

func (rc toyReceiver) Receive(id packet.ID) {
	d := rc.d
	p := d.r.Pool.Get(id)
	if d.onDelivery != nil {
		d.onDelivery(d.r.Now(), p)
	}
	seq, ce := p.Seq, p.ECN == packet.CE
	d.r.Pool.Free(id)
	ack := d.r.Pool.Alloc()
	a := d.r.Pool.Get(ack)
	a.Flow, a.Src, a.Dst, a.Size, a.Ack, a.Flags = d.flow, d.h2.Index, d.h1.Index, 40, seq, packet.ACK
	if ce {
		a.Flags |= packet.ECE
	}
	d.h2.Send(ack)
}

// Receive is the sender end at h1: it takes ACKs.
func (d *toyDCTCP) Receive(id packet.ID) {
	a := d.r.Pool.Get(id)
	seq, ece := a.Ack, a.Flags&packet.ECE != 0
	d.r.Pool.Free(id)
	d.inflight--
	d.acked++
	if ece {
		d.marked++
	}
	if d.inCWR && seq >= d.cwrEnd {
		d.inCWR = false
	}
	switch {
	case ece && !d.inCWR:
		d.cwnd *= 1 - d.alpha/2
		d.inCWR, d.cwrEnd = true, d.next
	case !d.inCWR:
		d.cwnd += 1 / d.cwnd
	}
	if seq >= d.windowEnd {
		d.alpha = (1-toyG)*d.alpha + toyG*float64(d.marked)/float64(d.acked)
		d.acked, d.marked, d.windowEnd = 0, 0, d.next
	}
	d.send()
}

// A step marker at K holds a DCTCP flow's queue in a sawtooth just around
// K, with the link fully used. The DCTCP paper's steady-state analysis
// (§3.3, N = 1 flow): the window peaks at W* = C·RTT + K, α settles at
// √(2/W*), each cut removes D = W*·α/2 = √(W*/2) packets, so the queue
// swings between Q_max = K + N and Q_min = Q_max − D. Here C = 100 Mbps,
// base RTT = 2·(1 ms + 19 ms) + serialisation ≈ 40.3 ms, C·RTT = 336 packets
// of 1500 B, K = 65: W* = 401, D ≈ 14.2, so the queue runs from about 52
// to 66 packets and never empties. Checked over 20–40 s: the largest queue
// within K + 1 ± 3, the smallest within Q_min ± 6 (the model is fluid;
// the flow sees marks a window late), the fraction of packets marked
// against α = √(2/W*) ± 30% (in steady state F = α), and goodput ≥ 99% of
// the link.
func TestStepMarkingDCTCPSawtooth(t *testing.T) {
	scn := pumpScenario(units.Mbps, 100*units.Mbps, 19*sim.Millisecond, stepFIFO(), 40*sim.Second)
	scn.Flows = nil
	r, err := New(scn, nil)
	if err != nil {
		t.Fatal(err)
	}
	bn, _ := r.Net.Dir("bottleneck", "ab")
	d := &toyDCTCP{r: r, h1: r.Net.Node("h1"), h2: r.Net.Node("h2"), ecn: packet.ECT0, cwnd: 10}
	d.h1.Attach(0, d)
	d.h2.Attach(0, toyReceiver{d})
	qmin, qmax := math.MaxInt, 0
	var delivered, marked int
	from := sim.Time(20 * sim.Second)
	d.onDelivery = func(now sim.Time, p *packet.Packet) {
		if now < from {
			return
		}
		delivered++
		if p.ECN == packet.CE {
			marked++
		}
		_, n := bn.Qdisc().Backlog()
		qmin, qmax = min(qmin, n), max(qmax, n)
	}
	d.send()
	r.RunToEnd()
	const k = 65
	bdp := float64(units.BytesIn(100*units.Mbps, r.Net.BaseRTT(0, 2)+units.TxTime(1500, 100*units.Mbps))) / 1500
	wstar := bdp + k
	qMinModel := k + 1 - math.Sqrt(wstar/2)
	if math.Abs(float64(qmax)-(k+1)) > 3 {
		t.Errorf("largest queue = %d packets, want K+1 = %d ± 3", qmax, k+1)
	}
	if math.Abs(float64(qmin)-qMinModel) > 6 {
		t.Errorf("smallest queue = %d packets, want Q_min = %.1f ± 6", qmin, qMinModel)
	}
	rate := float64(delivered) * 1500 * 8 / 20
	if rate < 0.99*100e6 {
		t.Errorf("goodput = %.2f Mbps, want ≥ 99 Mbps", rate/1e6)
	}
	frac := float64(marked) / float64(delivered)
	if want := math.Sqrt(2 / wstar); math.Abs(frac-want) > 0.3*want {
		t.Errorf("marked fraction = %.4f, want α = √(2/W*) = %.4f ± 30%%", frac, want)
	}
	t.Logf("queue %d..%d packets (model %.1f..%d), W* %.0f, marked fraction %.4f, α %.4f (model %.4f), goodput %.2f Mbps",
		qmin, qmax, qMinModel, k+1, wstar, frac, d.alpha, math.Sqrt(2/wstar), rate/1e6)
}

// Through DualPI2 a scalable (DCTCP-reacting) flow sending ECT(1) lives in
// the L-queue, where the 1 ms step threshold marks it: RFC 9332's aim is
// L4S queueing delay of about a millisecond. With the flow reacting a round
// trip late, the L-queue's sojourn stays within 2 ms at the 99th
// percentile (checked over 10–20 s from each packet's one-way delay less
// the 20.132 ms of propagation and serialisation), and the flow still
// uses most of the link (≥ 90%; a 1 ms step is below the C·RTT/7 the
// DCTCP paper asks of K for full use, so some loss of throughput is
// expected).
func TestDualPI2L4SDelay(t *testing.T) {
	q := config.Qdisc{Kind: config.DualPI2, Limit: config.QueueLimit{Packets: 10000}, Target: 15 * sim.Millisecond,
		TUpdate: 16 * sim.Millisecond, StepThreshold: sim.Millisecond, Coupling: 2, CProtection: 10}
	scn := pumpScenario(units.Mbps, 100*units.Mbps, 19*sim.Millisecond, q, 20*sim.Second)
	scn.Flows = nil
	r, err := New(scn, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &toyDCTCP{r: r, h1: r.Net.Node("h1"), h2: r.Net.Node("h2"), ecn: packet.ECT1, cwnd: 10}
	d.h1.Attach(0, d)
	d.h2.Attach(0, toyReceiver{d})
	base := sim.Millisecond + units.TxTime(1500, units.Gbps) + 19*sim.Millisecond + units.TxTime(1500, 100*units.Mbps)
	var qdelay trace.Hist
	var delivered int
	from := sim.Time(10 * sim.Second)
	d.onDelivery = func(now sim.Time, p *packet.Packet) {
		if now < from {
			return
		}
		delivered++
		qdelay.Add(int64(now.Sub(p.SentAt) - base))
	}
	d.send()
	r.RunToEnd()
	p99, _ := qdelay.Quantile(0.99)
	if sim.Duration(p99) > 2*sim.Millisecond {
		t.Errorf("L-queue delay p99 = %v, want ≤ 2ms", sim.Duration(p99))
	}
	rate := float64(delivered) * 1500 * 8 / 10
	if rate < 0.9*100e6 {
		t.Errorf("goodput = %.2f Mbps, want ≥ 90 Mbps", rate/1e6)
	}
	bn, _ := r.Net.Dir("bottleneck", "ab")
	st := bn.Qdisc().(*qdisc.DualPI2).Stats
	t.Logf("L-queue delay p99 %v, goodput %.2f Mbps, step marks %d, PI marks %d", sim.Duration(p99), rate/1e6, st.StepMarks, st.LMarks)
}
