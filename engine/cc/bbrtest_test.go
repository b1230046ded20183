package cc

import (
	"container/heap"
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// This file is a small single-bottleneck driver for the BBR tests: a bulk
// sender with pacing, one FIFO link of rate R and a finite buffer, a fixed
// base RTT (optionally with normally distributed jitter on each direction,
// which may reorder), Bernoulli loss and step CE marking. It acknowledges every
// packet and builds each ACK's rate sample as tcp_rate.c does
// (tcp_rate_skb_sent, tcp_rate_skb_delivered, tcp_rate_gen). Loss detection
// is an oracle (a dropped transmission is marked lost when one sent after it
// is acknowledged); lost segments are retransmitted first, and recovery
// lasts until the cumulative ACK passes the highest segment sent when it
// began (high_seq), as in the kernel.

// pathConfig describes the path.
type pathConfig struct {
	rate       units.BitRate
	baseRTT    sim.Duration // propagation RTT, excluding serialisation
	bufferPkts int          // bottleneck queue capacity (tail drop)
	lossProb   float64      // Bernoulli drop probability after the queue
	jitter     sim.Duration // σ of normal jitter on each direction's delay; 0: none
	ceThresh   int          // CE-mark arrivals finding ≥ this many queued; 0: off
	mss        units.Bytes
	seed       uint64 // the path's random stream (loss, jitter)
	algSeed    uint64 // the algorithm's random stream (Seeder)

	// A token-bucket policer before the queue: rate and bucket depth
	// (policerRate 0: none).
	policerRate  units.BitRate
	policerBurst units.Bytes
}

// txPkt is one transmission of segment seg.
type txPkt struct {
	seg           int
	retrans       bool
	sent          sim.Time
	delivered     uint32 // tx.delivered
	deliveredCE   uint32 // tx.delivered_ce
	deliveredTime sim.Time
	firstTx       sim.Time
	appLimited    bool
	inFlight      uint32 // tx.in_flight, counting itself
	txLost        uint32 // tx.lost
	dropped, ce   bool
	acked, lost   bool
}

type ackEvent struct {
	at  sim.Time
	seq int
}

type ackHeap []ackEvent

func (h ackHeap) Len() int { return len(h) }
func (h ackHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h ackHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *ackHeap) Push(x any)   { *h = append(*h, x.(ackEvent)) }
func (h *ackHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// signalRecord is one recorded signal change.
type signalRecord struct {
	t sim.Time
	v float64
}

// signalLog is a SignalSink keeping every change per signal.
type signalLog struct{ byID map[SignalID][]signalRecord }

func (l *signalLog) RecordSignal(t sim.Time, id SignalID, v float64) {
	l.byID[id] = append(l.byID[id], signalRecord{t, v})
}

type pathSim struct {
	cfg  pathConfig
	alg  Hooks
	st   State
	rng  *rand.Rand
	log  *signalLog
	pkts []txPkt // transmissions
	segs []bool  // per segment: acknowledged
	rtx  []int   // segments marked lost, awaiting retransmission
	acks ackHeap

	linkFree   sim.Time
	pacingNext sim.Time
	tokens     units.Bytes // policer bucket
	tokensAt   sim.Time
	firstTx    sim.Time // tp->first_tx_mstamp
	una        int      // first unacknowledged segment (snd_una)
	txScan     int      // first transmission neither acked nor marked lost
	recovery   int      // high_seq: recovery ends when una reaches it

	cwndLimitedUntil int // segments sent when cwnd last limited sending

	// onAck, if set, runs after each CongControl call.
	onAck func(rs *RateSample)
}

// startTime offsets the clock so no timestamp is zero (tcp_rate.c treats a
// zero prior_mstamp as "no sample").
const startTime = sim.Time(sim.Second)

func newPathSim(t *testing.T, name string, cfg pathConfig) *pathSim {
	t.Helper()
	a, err := New(name)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	p := &pathSim{
		cfg: cfg,
		alg: Resolve(a),
		rng: rand.New(rand.NewPCG(cfg.seed, 0x6262)),
		log: &signalLog{byID: map[SignalID][]signalRecord{}},
	}
	p.st = State{
		Now:           startTime,
		CwndPkts:      tcpInitCwnd,
		CwndClampPkts: ^uint32(0),
		SSThreshPkts:  tcpInfiniteSSThresh,
		MSS:           cfg.mss,
		ECNOk:         cfg.ceThresh > 0,
		ECNLow:        cfg.ceThresh > 0,
		DeliveredTime: startTime,
	}
	p.st.Signals = NewSignals(p.log, &p.st.Now)
	if p.alg.Seed != nil {
		p.alg.Seed.Seed(rand.New(rand.NewPCG(cfg.algSeed, 0xbb)))
	}
	if p.alg.Init != nil {
		p.alg.Init.Init(&p.st)
	}
	return p
}

// signal returns the recorded changes of the named signal.
func (p *pathSim) signal(t *testing.T, name string) []signalRecord {
	t.Helper()
	for i, d := range p.st.Signals.Defs() {
		if d.Name == name {
			return p.log.byID[SignalID(i)]
		}
	}
	t.Fatalf("signal %q not defined", name)
	return nil
}

func (p *pathSim) txTime() sim.Duration { return units.TxTime(p.cfg.mss, p.cfg.rate) }

// run advances the simulation to until.
func (p *pathSim) run(until sim.Time) {
	for {
		sendAt := sim.Never
		if p.st.InFlightPkts < p.st.CwndPkts {
			sendAt = max(p.st.Now, p.pacingNext)
		} else {
			p.cwndLimitedUntil = len(p.segs)
		}
		ackAt := sim.Never
		if len(p.acks) > 0 {
			ackAt = p.acks[0].at
		}
		next := min(sendAt, ackAt)
		if next > until {
			p.st.Now = until
			return
		}
		p.st.Now = next
		if ackAt <= sendAt {
			p.ack(heap.Pop(&p.acks).(ackEvent).seq)
		} else {
			p.send()
		}
	}
}

// send transmits one packet, a retransmission if any segment awaits one:
// tcp_rate_skb_sent plus the link.
func (p *pathSim) send() {
	now := p.st.Now
	if p.st.InFlightPkts == 0 {
		p.firstTx = now
		p.st.DeliveredTime = now
		if p.alg.CwndEvent != nil {
			p.alg.CwndEvent.CwndEvent(&p.st, EventTxStart)
		}
	}
	p.st.InFlightPkts++
	seg, retrans := len(p.segs), false
	if len(p.rtx) > 0 {
		seg, retrans, p.rtx = p.rtx[0], true, p.rtx[1:]
	} else {
		p.segs = append(p.segs, false)
	}
	pk := txPkt{
		seg:           seg,
		retrans:       retrans,
		sent:          now,
		delivered:     p.st.Delivered,
		deliveredCE:   p.st.DeliveredCE,
		deliveredTime: p.st.DeliveredTime,
		firstTx:       p.firstTx,
		appLimited:    p.st.AppLimited != 0,
		inFlight:      p.st.InFlightPkts,
		txLost:        p.st.Lost,
	}
	seq := len(p.pkts)
	// Pace after the first 10 segments, as tcp_update_skb_after_send.
	if p.st.PacingRate > 0 && seq >= 10 {
		p.pacingNext = max(p.pacingNext, now) + sim.Time(units.TxTime(p.cfg.mss, p.st.PacingRate))
	}
	p.st.NextDepartureTime = p.pacingNext
	tx := p.txTime()
	queued := int((p.linkFree - now + sim.Time(tx) - 1) / sim.Time(tx))
	if p.policed(now) || queued >= p.cfg.bufferPkts {
		pk.dropped = true
	} else {
		depart := max(now, p.linkFree) + sim.Time(tx)
		p.linkFree = depart
		// Random loss strikes after the bottleneck (as netem loss on the
		// link), so a lost packet still used its share of the rate R.
		pk.dropped = p.cfg.lossProb > 0 && p.rng.Float64() < p.cfg.lossProb
	}
	if !pk.dropped {
		depart := p.linkFree
		pk.ce = p.cfg.ceThresh > 0 && queued >= p.cfg.ceThresh
		fwd, back := p.jittered(p.cfg.baseRTT/2), p.jittered(p.cfg.baseRTT-p.cfg.baseRTT/2)
		heap.Push(&p.acks, ackEvent{at: depart + sim.Time(fwd+back), seq: seq})
	}
	p.pkts = append(p.pkts, pk)
	p.st.SndNxt = uint64(len(p.segs)) * uint64(p.cfg.mss)
}

// policed reports whether the token-bucket policer drops a packet sent at
// now, taking its tokens if not.
func (p *pathSim) policed(now sim.Time) bool {
	if p.cfg.policerRate == 0 {
		return false
	}
	if p.tokensAt == 0 {
		p.tokens = p.cfg.policerBurst
	} else {
		p.tokens = min(p.cfg.policerBurst, p.tokens+units.BytesIn(p.cfg.policerRate, now.Sub(p.tokensAt)))
	}
	p.tokensAt = now
	if p.tokens < p.cfg.mss {
		return true
	}
	p.tokens -= p.cfg.mss
	return false
}

// jittered returns a one-way delay d plus, when jitter is configured, a
// normal N(0, σ²) term, clipped at zero (netem's delay jitter).
func (p *pathSim) jittered(d sim.Duration) sim.Duration {
	if p.cfg.jitter == 0 {
		return d
	}
	return max(0, d+sim.Duration(float64(p.cfg.jitter)*p.rng.NormFloat64()))
}

// setCA moves the CA state, calling the set_state hook first as
// tcp_set_ca_state does.
func (p *pathSim) setCA(s CAState) {
	if p.alg.SetState != nil {
		p.alg.SetState.SetState(&p.st, s)
	}
	p.st.CA = s
}

// ack processes the ACK of transmission seq: delivery, loss marking,
// recovery, rate sample, then cong_control.
func (p *pathSim) ack(seq int) {
	now := p.st.Now
	priorInFlight := p.st.InFlightPkts
	pk := &p.pkts[seq]
	pk.acked = true
	p.segs[pk.seg] = true
	p.st.InFlightPkts--
	p.st.Delivered++
	if pk.ce {
		p.st.DeliveredCE++
	}
	rtt := sim.Duration(-1) // Karn: no RTT sample from a retransmission
	if !pk.retrans {
		rtt = now.Sub(pk.sent)
		if p.st.SRTT == 0 {
			p.st.SRTT = rtt
		} else {
			p.st.SRTT += (rtt - p.st.SRTT) / 8
		}
		if p.st.MinRTT == 0 || rtt < p.st.MinRTT {
			p.st.MinRTT = rtt
		}
	}

	var losses uint32
	for i := p.txScan; i < seq; i++ {
		q := &p.pkts[i]
		if q.dropped && !q.lost {
			q.lost = true
			losses++
			p.st.Lost++
			p.st.InFlightPkts--
			p.rtx = append(p.rtx, q.seg)
			if p.alg.MarkedLost != nil {
				p.alg.MarkedLost.SkbMarkedLost(&p.st, LostPacket{
					PCount: 1, TxInFlight: q.inFlight, TxLost: q.txLost, TxAppLimited: q.appLimited,
				})
			}
		}
	}
	for p.txScan < len(p.pkts) && (p.pkts[p.txScan].acked || p.pkts[p.txScan].lost) {
		p.txScan++
	}
	for p.una < len(p.segs) && p.segs[p.una] {
		p.una++
	}
	p.st.SndUna = uint64(p.una) * uint64(p.cfg.mss)
	if p.st.CA == CARecovery && p.una >= p.recovery {
		p.setCA(CAOpen)
	}
	if losses > 0 && p.st.CA == CAOpen {
		p.st.PriorCwndPkts = p.st.CwndPkts
		p.st.SSThreshPkts = p.alg.SSThresh(&p.st)
		p.setCA(CARecovery)
		p.recovery = len(p.segs)
	}
	// This model's flag is tp->is_cwnd_limited's (the window in flight
	// was cwnd-limited), without a slow-start term.
	p.st.CwndLimited = p.una <= p.cwndLimitedUntil
	p.st.IsCwndLimited = p.st.CwndLimited

	// tcp_rate_skb_delivered for the one packet this ACK covers.
	p.firstTx = pk.sent
	// tcp_rate_gen.
	if p.st.AppLimited != 0 && after32(p.st.Delivered, p.st.AppLimited) {
		p.st.AppLimited = 0
	}
	p.st.DeliveredTime = now
	rs := RateSample{
		PriorTime:         pk.deliveredTime,
		PriorDelivered:    pk.delivered,
		PriorDeliveredCE:  pk.deliveredCE,
		Delivered:         int32(p.st.Delivered - pk.delivered),
		DeliveredCE:       int32(p.st.DeliveredCE - pk.deliveredCE),
		SendInterval:      pk.sent.Sub(pk.firstTx),
		RecvInterval:      now.Sub(pk.deliveredTime),
		RTT:               rtt,
		Losses:            losses,
		AckedSacked:       1,
		PriorInFlightPkts: priorInFlight,
		IsAppLimited:      pk.appLimited,
		IsRetrans:         pk.retrans,
		TxInFlight:        pk.inFlight,
		Lost:              p.st.Lost - pk.txLost,
		IsECE:             pk.ce,
	}
	rs.Interval = max(rs.SendInterval, rs.RecvInterval)
	if rs.Interval < p.st.MinRTT {
		rs.Interval = -1 // an interval shorter than min_rtt is unreliable
	}
	p.alg.CongControl.CongControl(&p.st, &rs)
	if p.onAck != nil {
		p.onAck(&rs)
	}
}

// rateBetween runs the simulation to `to` and returns the delivered bits
// per second over [from, to].
func (p *pathSim) rateBetween(from, to sim.Time) units.BitRate {
	p.run(from)
	d0 := p.st.Delivered
	p.run(to)
	bits := int64(p.st.Delivered-d0) * int64(p.cfg.mss) * 8
	return units.BitRate(float64(bits) / to.Sub(from).Seconds())
}

// bdpPkts is the path's bandwidth-delay product in packets.
func (c pathConfig) bdpPkts() float64 {
	return float64(c.rate) * (c.baseRTT.Seconds()) / 8 / float64(c.mss)
}
