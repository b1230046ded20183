package tcp

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// lossRecorder is Reno with the skb_marked_lost hook, recording each call
// and State.Lost at it.
type lossRecorder struct {
	cc.Algorithm
	calls []cc.LostPacket
	lost  []uint32
}

func (r *lossRecorder) SkbMarkedLost(st *cc.State, p cc.LostPacket) {
	r.calls = append(r.calls, p)
	r.lost = append(r.lost, st.Lost)
}

// The google/bbr v3 branch stamps each skb with tx.in_flight, what was in
// flight once it left, counting the whole skb (tcp_set_tx_in_flight); its
// tcp_fragment re-stamps the pieces of a sent skb it splits as if each had
// left on its own, in order; and tcp_mark_skb_lost calls skb_marked_lost
// once per skb, after adding its pcount to tp->lost. The initial window
// leaves as 5 TSO chunks of 2 segments (tcp_tso_autosize's minimum), in
// flight 2, 4, 6, 8, 10. A SACK of segment 9 splits the last chunk: segment
// 8 alone now counts 8 + 1 = 9, segment 9 keeps 10. RACK then marks
// segments 0-8 lost (the reordering timer, 25 ms on): 5 calls, one per skb,
// with pcount 2, 2, 2, 2, 1, tx_in_flight 2, 4, 6, 8, 9 and tp->lost 2, 4,
// 6, 8, 9. (Before, 9 calls of one segment each, segment 8's stamp still
// 10: bbr_inflight_hi_from_lost_skb took in flight before a lost chunk to
// be its whole stamp less one segment.)
func TestLostSkbsAsTheKernelMarksThem(t *testing.T) {
	sc, rec := lostSkbConn(t, true)
	d := sc.d
	stamps := func() (s []uint32) {
		for n := uint64(0); n < 10; n++ {
			s = append(s, d.sb.seg(n).tx.InFlight)
		}
		return s
	}
	if got, want := stamps(), []uint32{2, 2, 4, 4, 6, 6, 8, 8, 10, 10}; !slices.Equal(got, want) {
		t.Fatalf("initial window's tx.in_flight %v, want %v (5 chunks of 2)", got, want)
	}
	sc.s.RunUntil(sim.Time(200 * sim.Millisecond))
	sc.deliver(func(p *packet.Packet) {
		p.Ack, p.Wnd, p.NSack = 1, 65160, 1
		p.Sack[0] = packet.SackBlock{Start: seqOfSeg(9), End: seqOfSeg(10)}
	})
	if got, want := stamps(), []uint32{2, 2, 4, 4, 6, 6, 8, 8, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("after the SACK of segment 9: tx.in_flight %v, want %v", got, want)
	}
	sc.s.RunUntil(sim.Time(300 * sim.Millisecond))
	var pcounts, inflights []uint32
	for _, c := range rec.calls {
		pcounts, inflights = append(pcounts, c.PCount), append(inflights, c.TxInFlight)
	}
	if want := []uint32{2, 2, 2, 2, 1}; !slices.Equal(pcounts, want) {
		t.Errorf("skb_marked_lost pcounts %v, want %v", pcounts, want)
	}
	if want := []uint32{2, 4, 6, 8, 9}; !slices.Equal(inflights, want) {
		t.Errorf("skb_marked_lost tx_in_flight %v, want %v", inflights, want)
	}
	if want := []uint32{2, 4, 6, 8, 9}; !slices.Equal(rec.lost, want) {
		t.Errorf("tp->lost at each call %v, want %v", rec.lost, want)
	}
}

// lostSkbConn is a Reno sender with lossRecorder's hook after its initial
// window (5 TSO chunks of 2 segments, sent at 100 ms), with SACK as given.
func lostSkbConn(t *testing.T, sack bool) (*senderScript, *lossRecorder) {
	t.Helper()
	reno, err := cc.New("reno")
	if err != nil {
		t.Fatal(err)
	}
	rec := &lossRecorder{Algorithm: reno}
	sc := &senderScript{opts: shLinuxOpts(), alg: rec}
	sc.opts.Pacing = config.PacingOff
	sc.opts.SACK = sack
	if err := sc.start(); err != nil {
		t.Fatal(err)
	}
	sc.s.RunUntil(sim.Time(100 * sim.Millisecond))
	sc.deliver(func(p *packet.Packet) { p.Flags, p.Ack, p.Wnd = packet.SYN|packet.ACK, 1, 65160 })
	return sc, rec
}

// lostSegs lists the segments of the initial window marked lost.
func lostSegs(d *DataSender) (l []uint64) {
	for n := uint64(0); n < 10; n++ {
		if d.sb.seg(n).flags&flagLost != 0 {
			l = append(l, n)
		}
	}
	return l
}

// The kernel marks skbs lost, not segments: an RTO's tcp_timeout_mark_lost
// marks the head skb whatever RACK says of it (skb != head), here the whole
// first chunk while RACK still counts the window recent (RACK.rtt 50 ms, 10
// ms after it left); and without SACK tcp_newreno_mark_lost first splits the
// head skb to one MSS (tcp_fragment), so that only that segment is lost.
// Each is one skb_marked_lost call.
func TestLossMarkingTakesWholeSkbs(t *testing.T) {
	sc, rec := lostSkbConn(t, true)
	d := sc.d
	sc.s.RunUntil(sim.Time(110 * sim.Millisecond))
	d.rack.rttUs = 50_000
	d.timeoutMarkLost()
	if got := lostSegs(d); !slices.Equal(got, []uint64{0, 1}) || len(rec.calls) != 1 || rec.calls[0].PCount != 2 {
		t.Errorf("RTO: lost %v, skb_marked_lost %+v; want segments 0 and 1, one call of pcount 2", got, rec.calls)
	}

	sc, rec = lostSkbConn(t, false)
	d = sc.d
	sc.s.RunUntil(sim.Time(200 * sim.Millisecond))
	for range 3 {
		sc.deliver(func(p *packet.Packet) { p.Ack, p.Wnd = 1, 65160 })
	}
	if got := lostSegs(d); !slices.Equal(got, []uint64{0}) || d.sb.seg(1).flags&flagSkbHead == 0 ||
		len(rec.calls) != 1 || rec.calls[0].PCount != 1 || rec.calls[0].TxInFlight != 1 {
		t.Errorf("NewReno: lost %v, segment 1 starts an skb: %v, skb_marked_lost %+v; want segment 0 split off and lost, one call of pcount 1 counting 1 in flight",
			got, d.sb.seg(1).flags&flagSkbHead != 0, rec.calls)
	}
}
