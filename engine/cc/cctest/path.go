package cctest

import (
	"fmt"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/cc"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Path is a single flow's path for Run: one FIFO bottleneck serving BDPPkts
// packets per RTT behind a drop-tail buffer, a fixed propagation delay that
// makes an unloaded round trip exactly RTT, and random loss. A packet that
// finds the link busy waits, so the RTT it measures is RTT plus its queueing
// delay: once more than BDPPkts are in flight, RTT = base + (inflight −
// BDP)/rate. ACKs return unqueued and undelayed, one per packet.
type Path struct {
	RTT        sim.Duration // unloaded round-trip time
	BDPPkts    uint32       // packets the bottleneck serves per RTT
	BufferPkts uint32       // packets waiting or in service at most; 0: unlimited
	LossProb   float64      // Bernoulli drop probability per transmission
	Seed       uint64       // seeds the loss stream (PCG)
	// Pacing releases packets one at a time at St.PacingRate, as the
	// kernel's internal pacing (EDT: each departure is one packet's time
	// at the pacing rate after the previous one), instead of in bursts. It
	// sets St.Paced. A zero pacing rate does not hold packets back.
	Pacing bool
	// Drop, if set, is asked about each transmission (after the burst it
	// belongs to was sent, so it sees that burst's window) and drops the
	// packet when it returns true. Tests use it to place single losses.
	Drop func(c *Conn) bool
	// MarkCE, if set, is asked about each transmission the bottleneck
	// accepts, with the packets it finds there (waiting or in service), and
	// CE-marks the packet when it returns true: a step AQM is
	// func(b uint32) bool { return b > K }. The packet's ACK then carries
	// CE and ECE, the per-packet echo a DCTCP or AccECN receiver gives when
	// every packet is acked on its own.
	MarkCE func(backlogPkts uint32) bool
}

// Result summarises a Run.
type Result struct {
	Duration      sim.Duration
	MeanCwndPkts  float64 // time-weighted mean of cwnd
	DeliveredPkts uint32
	Drops         uint64   // transmissions the path dropped
	Marks         uint64   // transmissions the path CE-marked
	FirstDropAt   sim.Time // when the first drop happened; meaningful if Drops > 0
	Recoveries    int      // entries into Recovery (loss events)
	Timeouts      int      // retransmission timeouts
}

// rtoMin is TCP_RTO_MIN. Run's retransmission timer is srtt + rtoMin, the
// kernel's srtt + 4·rttvar with rttvar at its floor.
const rtoMin = 200 * sim.Millisecond

// inFlight is a transmission on the path: when its ACK arrives, or dropped.
type inFlight struct {
	ackAt   sim.Time
	dropped bool
	ce      bool
}

// Run drives c over p for d of simulated time, with an always-backlogged
// sender: after every ACK it sends what the window (and the pacer) allows.
// A drop is detected by the ACK of the next delivered packet (an idealised
// SACK + RACK with no reordering window); a drop with nothing delivered
// behind it waits for the retransmission timer. observe, if set, runs after
// each ACK. Run panics on an invalid path.
func Run(c *Conn, p Path, d sim.Duration, observe func(*Conn)) Result {
	if p.RTT <= 0 || p.BDPPkts == 0 || p.LossProb < 0 || p.LossProb >= 1 {
		panic(fmt.Sprintf("cctest: invalid path %+v", p))
	}
	r := &runner{
		c: c, p: p,
		ser:   p.RTT / sim.Duration(p.BDPPkts),
		rng:   rand.New(rand.NewPCG(p.Seed, 0x6363746573742e70)),
		start: c.St.Now,
		end:   c.St.Now.Add(d),
	}
	c.St.Paced = p.Pacing
	r.send()
	for c.St.Now < r.end {
		i := 0 // the first delivered packet; those before it were dropped
		for i < len(r.q) && r.q[i].dropped {
			i++
		}
		nextAck := sim.Never
		if i < len(r.q) {
			nextAck = r.q[i].ackAt
		}
		switch {
		case p.Pacing && c.St.InFlightPkts < c.St.CwndPkts && r.nextSend < nextAck:
			r.advance(r.nextSend)
			r.send()
		case i < len(r.q):
			r.advance(nextAck)
			if c.St.Now >= r.end {
				break
			}
			wasRecovery := c.St.CA == cc.CARecovery
			a := ACK{Lost: uint32(i), Acked: 1}
			if r.q[i].ce {
				a.CE, a.ECE = 1, true
			}
			c.OnACK(a)
			if !wasRecovery && c.St.CA == cc.CARecovery {
				r.res.Recoveries++
			}
			r.q = r.q[i+1:]
			r.send()
			if observe != nil {
				observe(c)
			}
		case len(r.q) > 0: // only drops in flight: the RTO fires
			r.advance(c.St.Now.Add(c.St.SRTT + rtoMin))
			if c.St.Now >= r.end {
				break
			}
			c.Timeout()
			r.res.Timeouts++
			r.q = r.q[:0]
			r.send()
		default: // nothing in flight and nothing to send
			r.advance(r.end)
		}
	}
	r.advance(r.end)
	res := r.res
	res.Duration = c.St.Now.Sub(r.start)
	res.DeliveredPkts = c.St.Delivered
	if res.Duration > 0 {
		res.MeanCwndPkts = r.area / float64(res.Duration)
	}
	return res
}

// runner is one Run's path state.
type runner struct {
	c          *Conn
	p          Path
	ser        sim.Duration // transmission time of one packet
	rng        *rand.Rand
	q          []inFlight
	free       sim.Time // when the bottleneck finishes its backlog
	nextSend   sim.Time // when the pacer releases the next packet
	res        Result
	area       float64 // ∫ cwnd dt, packet·ps
	start, end sim.Time
}

// advance moves the clock to t (at most the end), integrating cwnd.
func (r *runner) advance(t sim.Time) {
	t = min(t, r.end)
	r.area += float64(float64(r.c.St.CwndPkts) * float64(t.Sub(r.c.St.Now))) // no FMA: see server/fma_test.go
	r.c.AdvanceTo(t)
}

// send sends what the window allows (one packet when pacing) and puts it
// on the path.
func (r *runner) send() {
	c := r.c
	before := c.Transmissions
	if !r.p.Pacing {
		c.Fill()
	} else if c.St.Now >= r.nextSend && c.Send(1) == 1 && c.St.PacingRate > 0 {
		r.nextSend = c.St.Now.Add(units.TxTime(c.St.MSS, c.St.PacingRate))
	}
	now := c.St.Now
	for range c.Transmissions - before {
		drop := r.p.Drop != nil && r.p.Drop(c)
		drop = drop || (r.p.LossProb > 0 && r.rng.Float64() < r.p.LossProb)
		var backlog sim.Duration
		if r.free > now {
			backlog = (r.free.Sub(now) + r.ser - 1) / r.ser
		}
		if !drop && r.p.BufferPkts > 0 {
			drop = backlog >= sim.Duration(r.p.BufferPkts)
		}
		if drop {
			if r.res.Drops == 0 {
				r.res.FirstDropAt = now
			}
			r.res.Drops++
			r.q = append(r.q, inFlight{dropped: true})
			continue
		}
		ce := r.p.MarkCE != nil && r.p.MarkCE(uint32(backlog))
		if ce {
			r.res.Marks++
		}
		s := max(now, r.free)
		r.free = s.Add(r.ser)
		r.q = append(r.q, inFlight{ackAt: s.Add(r.p.RTT), ce: ce})
	}
}
