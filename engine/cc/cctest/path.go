package cctest

import (
	"fmt"
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/cc"

	"github.com/ccscope/ccscope/engine/sim"
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
	// Drop, if set, is asked about each transmission (after the burst it
	// belongs to was sent, so it sees that burst's window) and drops the
	// packet when it returns true. Tests use it to place single losses.
	Drop func(c *Conn) bool
}

// Result summarises a Run.
type Result struct {
	Duration      sim.Duration
	MeanCwndPkts  float64 // time-weighted mean of cwnd
	DeliveredPkts uint32
	Drops         uint64   // transmissions the path dropped
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
}

// Run drives c over p for d of simulated time, with an always-backlogged
// sender: after every ACK it sends what the window allows. A drop is
// detected by the ACK of the next delivered packet (an idealised SACK +
// RACK with no reordering window); a drop with nothing delivered behind it
// waits for the retransmission timer. observe, if set, runs after each ACK.
// Run panics on an invalid path.
func Run(c *Conn, p Path, d sim.Duration, observe func(*Conn)) Result {
	if p.RTT <= 0 || p.BDPPkts == 0 || p.LossProb < 0 || p.LossProb >= 1 {
		panic(fmt.Sprintf("cctest: invalid path %+v", p))
	}
	ser := p.RTT / sim.Duration(p.BDPPkts) // transmission time of one packet
	rng := rand.New(rand.NewPCG(p.Seed, 0x6363746573742e70))
	var (
		q     []inFlight
		free  sim.Time // when the bottleneck finishes its backlog
		res   Result
		area  float64 // ∫ cwnd dt, packet·ps
		start = c.St.Now
		end   = start.Add(d)
	)
	advance := func(t sim.Time) {
		t = min(t, end)
		area += float64(c.St.CwndPkts) * float64(t.Sub(c.St.Now))
		c.AdvanceTo(t)
	}
	send := func() {
		before := c.Transmissions
		c.Fill()
		now := c.St.Now
		for range c.Transmissions - before {
			drop := p.Drop != nil && p.Drop(c)
			drop = drop || (p.LossProb > 0 && rng.Float64() < p.LossProb)
			if !drop && p.BufferPkts > 0 && free > now {
				backlog := (free.Sub(now) + ser - 1) / ser
				drop = backlog >= sim.Duration(p.BufferPkts)
			}
			if drop {
				if res.Drops == 0 {
					res.FirstDropAt = now
				}
				res.Drops++
				q = append(q, inFlight{dropped: true})
				continue
			}
			s := max(now, free)
			free = s.Add(ser)
			q = append(q, inFlight{ackAt: s.Add(p.RTT)})
		}
	}

	send()
	for c.St.Now < end && len(q) > 0 {
		i := 0
		for i < len(q) && q[i].dropped {
			i++
		}
		if i == len(q) {
			advance(c.St.Now.Add(c.St.SRTT + rtoMin))
			if c.St.Now >= end {
				break
			}
			c.Timeout()
			res.Timeouts++
			q = q[:0]
			send()
			continue
		}
		advance(q[i].ackAt)
		if c.St.Now >= end {
			break
		}
		wasRecovery := c.St.CA == cc.CARecovery
		c.OnACK(ACK{Lost: uint32(i), Acked: 1})
		if !wasRecovery && c.St.CA == cc.CARecovery {
			res.Recoveries++
		}
		q = q[i+1:]
		send()
		if observe != nil {
			observe(c)
		}
	}
	advance(end)
	res.Duration = c.St.Now.Sub(start)
	res.DeliveredPkts = c.St.Delivered
	if res.Duration > 0 {
		res.MeanCwndPkts = area / float64(res.Duration)
	}
	return res
}
