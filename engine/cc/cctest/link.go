package cctest

import (
	"fmt"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/link"
	pkt "github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/units"
)

// LinkPath is a one-link path for the product's sender: h1 to d0 over a
// single link of Rate with a round-trip propagation delay RTT and
// Bernoulli loss LossProb on the data direction (the link's default
// queue), and socket buffers that never limit the window.
type LinkPath struct {
	Rate     units.BitRate
	RTT      sim.Duration
	LossProb float64
	Seed     uint64 // the run's seed (the loss stream derives from it)
}

// Link is one bulk flow of a registered algorithm on engine/tcp's
// DataSender, the code a simulation runs (SACK, RACK, PRR, TLP, delayed
// ACKs, timers), over a LinkPath. Where Conn is a model driven packet by
// packet, Link runs the real thing and lets a test watch it and drop
// chosen packets.
type Link struct {
	Run *engine.Run
	Snd *tcp.DataSender
	Rcv *tcp.Receiver
	tap *dropTap
	end sim.Time
}

// NewLink builds a run of algorithm alg over p lasting d.
func NewLink(alg string, p LinkPath, d sim.Duration) (*Link, error) {
	if p.Rate <= 0 || p.RTT <= 0 || p.LossProb < 0 || p.LossProb >= 1 || d <= 0 {
		return nil, fmt.Errorf("cctest: invalid link path %+v for %v", p, d)
	}
	raw := fmt.Sprintf(`{"name":"one-link","runtime":{"seed":%d,"duration":"%dus"},
 "nodes":[{"id":"h1","kind":"endpoint"},{"id":"d0","kind":"endpoint"}],
 "links":[{"id":"path","a":"h1","b":"d0","rate":"%dbps","delay":"%dns",
   "ab":{"loss":{"kind":"bernoulli","p":%v}}}],
 "flows":[{"id":"f0","src":"h1","dst":"d0","cc":%q,
   "tcp":{"sndbuf":"unlimited","rcvbuf_init":"64MiB","rcvbuf_max":"64MiB"}}]}`,
		p.Seed, d/sim.Microsecond, int64(p.Rate), p.RTT/2/sim.Nanosecond, p.LossProb, alg)
	pr, err := engine.Prepare([]byte(raw), nil)
	if err != nil {
		return nil, fmt.Errorf("cctest: %w", err)
	}
	r, err := engine.New(pr.Scenario, nil)
	if err != nil {
		return nil, fmt.Errorf("cctest: %w", err)
	}
	l := &Link{Run: r, tap: &dropTap{pool: r.Pool}, end: r.Horizon()}
	l.Snd, l.Rcv, _ = r.TCPEnds(0)
	if err := r.TapArrivals("path", "ab", func(next link.Receiver) link.Receiver {
		l.tap.next = next
		return l.tap
	}); err != nil {
		return nil, fmt.Errorf("cctest: %w", err)
	}
	return l, nil
}

// dropTap drops the next data packet once armed.
type dropTap struct {
	next  link.Receiver
	pool  *pkt.Pool
	armed bool
}

func (d *dropTap) Receive(id pkt.ID) {
	if d.armed && d.pool.Get(id).Len > 0 {
		d.armed = false
		d.pool.Free(id)
		return
	}
	d.next.Receive(id)
}

// Now is the run's current time.
func (l *Link) Now() sim.Time { return l.Run.Now() }

// RunUntil runs to t (at most the end).
func (l *Link) RunUntil(t sim.Time) { l.Run.RunUntil(t) }

// Start runs until the sender has sent its first data segment and returns
// when that was.
func (l *Link) Start() sim.Time {
	for !l.Snd.Stats.Started && l.Now() < l.end {
		l.Run.StepEvents(1)
	}
	return l.Snd.Stats.FirstSend
}

// LossAt drops the next data packet once cwnd has reached w and runs to the
// end of the fast recovery that follows. It returns cwnd on the ACK before
// the one that entered Recovery (the window at loss, as the ssthresh hook
// sees it) and the time Recovery ended (the next epoch's start). It fails
// unless exactly one fast recovery and no RTO followed.
func (l *Link) LossAt(w uint32) (cwndAtLoss uint32, end sim.Time, err error) {
	recoveries, rtos := l.Snd.Stats.Recoveries, l.Snd.Stats.RTOs
	for l.Snd.Cwnd() < w && l.Now() < l.end {
		l.Run.StepEvents(1)
	}
	l.tap.armed = true
	for l.Snd.CAState() != cc.CARecovery && l.Now() < l.end {
		cwndAtLoss = l.Snd.Cwnd()
		l.Run.StepEvents(1)
	}
	for l.Snd.CAState() != cc.CAOpen && l.Now() < l.end {
		l.Run.StepEvents(1)
	}
	if l.Snd.Stats.Recoveries != recoveries+1 || l.Snd.Stats.RTOs != rtos {
		return 0, 0, fmt.Errorf("cctest: %d recoveries and %d RTOs after the drop at cwnd %d, want one fast recovery",
			l.Snd.Stats.Recoveries-recoveries, l.Snd.Stats.RTOs-rtos, w)
	}
	return cwndAtLoss, l.Now(), nil
}

// MeanCwnd runs from the current time to `to`, sampling cwnd every step,
// and returns the mean of the samples in packets.
func (l *Link) MeanCwnd(to sim.Time, step sim.Duration) float64 {
	var sum float64
	var n int
	for at := l.Now().Add(step); at <= to; at = at.Add(step) {
		l.RunUntil(at)
		sum += float64(l.Snd.Cwnd())
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// DeliveredPkts is the payload the receiver has delivered, in MSS-sized
// packets.
func (l *Link) DeliveredPkts() float64 {
	return float64(l.Rcv.BytesDelivered()) / float64(DefaultMSS)
}
