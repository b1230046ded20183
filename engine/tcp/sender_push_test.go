package tcp

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// A bulk flow's TSO chunks of two segments or more carry PSH on their last
// segment, as Linux 6.18's do on the wire. The reference is a sender-side
// capture of the kernel (`compare c2-stag`: two CUBIC flows, unpaced, on
// 50 Mbps over 40 ms with a 1-BDP FIFO, congestion avoidance from 4 to
// 10 s): every multi-segment burst, 5,564 of them of three segments, had
// PSH on its last segment and no other segment of it did; single segments
// had none (129 of 132). Where PSH falls is the sender's alone, so one
// CUBIC flow on that path (p-rtr-p at 50 Mbps) over that window is held to
// it. The capture's ACK split (45 % covering one segment, 55 % two: a
// pushed chunk of three answered by an ACK of two and one of one) follows
// from its flow's chunk length, which a lone flow's pacing rate does not
// share (its chunks are of four, ACKed two by two), and that two-flow
// scenario is not in the repository to rebuild; the receiver's answer to a
// pushed segment is TestPushMarksWriteEnds's.
func TestChunkEndsCarryPSH(t *testing.T) {
	c := prtrp{cc: "cubic", rate: 50 * units.Mbps, opts: compareOpts(config.DefaultSndBuf)}.build(t)
	c.runUntil(sim.Time(10 * sim.Second))
	i := slices.IndexFunc(c.fwd.log, func(x shSent) bool { return x.at >= sim.Time(4*sim.Second) })
	endPushed, multi := checkChunkPushes(t, c.fwd.log[i:], -1)
	if multi < 5000 {
		t.Fatalf("%d multi-segment bursts from 4 to 10 s, want thousands, as the kernel's 5,564", multi)
	}
	if share := float64(endPushed) / float64(multi); share < 0.95 {
		t.Errorf("bursts of two or more ending with PSH: %d of %d (%.3f), want at least 0.95 (the kernel's: 0.995)", endPushed, multi, share)
	}
}

// checkChunkPushes checks the PSH marks of the data segments in log: the
// segments that leave at one instant are one or more TSO chunks, and PSH
// may only end a chunk of two segments or more, so the first segment of a
// burst never carries it, a burst of two or more carries it at least once,
// and a lone segment does not, unless it is the segment ending at writeEnd
// (the application's last byte; -1: none). A burst may end with a lone
// chunk of one segment, as the kernel's did in 32 of some 6,500 bursts, so
// it counts only how many bursts of two or more end with PSH; it returns
// that count and the number of such bursts.
func checkChunkPushes(t *testing.T, log []shSent, writeEnd int64) (endPushed, multi int) {
	t.Helper()
	var burst []shSent
	check := func() {
		n := len(burst)
		if n == 0 {
			return
		}
		first, last := burst[0], burst[n-1]
		pushed := 0
		for _, x := range burst {
			if x.flags&packet.PSH != 0 {
				pushed++
			}
		}
		end := int64(last.seq) + int64(last.len)
		switch {
		case n == 1 && pushed != 0 && end != writeEnd:
			t.Fatalf("lone segment at seq %d (%v) carries PSH", last.seq, last.at)
		case n >= 2 && first.flags&packet.PSH != 0:
			t.Fatalf("burst of %d at %v: its first segment (seq %d) carries PSH", n, first.at, first.seq)
		case n >= 2 && pushed == 0:
			t.Fatalf("burst of %d at %v: no segment carries PSH", n, first.at)
		}
		if n >= 2 {
			multi++
			if last.flags&packet.PSH != 0 {
				endPushed++
			}
		}
		burst = burst[:0]
	}
	for _, x := range log {
		if x.len == 0 {
			continue
		}
		if len(burst) > 0 && x.at != burst[0].at {
			check()
		}
		burst = append(burst, x)
	}
	check()
	return endPushed, multi
}

// The pacing timer's tcp_tsq_write calls tcp_write_xmit whether or not
// anything waits unsent, and tcp_write_xmit's tail notes a full cwnd
// (is_cwnd_limited |= in flight >= cwnd; tcp_cwnd_validate): a flow with
// its window full and nothing left to send is marked cwnd-limited at the
// kick, so its CC may still grow cwnd (tcp_is_cwnd_limited). The other
// pushes (tcp_push and tcp_push_pending_frames) call it only with a send
// head, and leave the mark alone.
func TestPaceKickNotesFullCwndWithNothingUnsent(t *testing.T) {
	const segs = 100
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: segs * 1448, opts: shLinuxOpts()}
	for _, kick := range []bool{true, false} {
		c := h.build(t)
		for !(c.snd.sndNxt == c.snd.writeSeq && c.snd.writeSeq > 1 && c.snd.sb.packetsOut() > 0) && c.s.Step(1) > 0 {
		}
		if c.snd.sndNxt != c.snd.writeSeq || c.snd.sb.packetsOut() == 0 {
			t.Fatalf("never all sent with data in flight")
		}
		c.snd.st.CwndPkts = c.snd.sb.inFlight() // the window is full
		c.snd.cwndUse.IsCwndLimited = false
		c.snd.cwndUse.UsageSeq = c.snd.sndNxt + 1 // no fresh round: only a cwnd-limited call sets the mark
		what := "push"
		if kick {
			what = "pace kick"
			c.snd.paceKick()
		} else {
			c.snd.push()
		}
		if got := c.snd.cwndUse.IsCwndLimited; got != kick {
			t.Errorf("after a %s with nothing unsent and cwnd full: cwnd-limited %v, want %v", what, got, kick)
		}
	}
}

// PSH on a multi-segment chunk's last segment comes from
// __tcp_transmit_skb, on the clone it sends (tcp_skb_pcount(skb) > 1), and
// is not kept in the skb: a lone retransmission of that segment carries
// none, and a retransmission run of several segments carries it on its
// last. Within the run, only a segment whose skb tcp_mark_push marked
// keeps PSH, and it had it when first sent. Unpaced slow start sends
// chunks of two. Segment 41, which ended one, is lost alone; then
// segments 60 to 65 are lost, and the ACK that reveals them releases
// several retransmissions at one instant.
func TestRetransmissionPSHIsTheRuns(t *testing.T) {
	opts := shLinuxOpts()
	opts.Pacing = config.PacingOff
	h := shHarness{cc: "reno", rate: 100 * units.Mbps, owd: 20 * sim.Millisecond, size: 300 * 1448, opts: opts}
	transmissions := func(lost ...uint64) map[uint64][]shSent {
		c := h.build(t)
		var seqs []uint64
		for _, n := range lost {
			seqs = append(seqs, seqOfSeg(n))
		}
		c.fwd.drop = dropOnce(seqs...)
		c.runUntil(sim.Time(2 * sim.Second))
		if got := c.rcv.BytesDelivered(); got != h.size {
			t.Fatalf("lost %v: delivered %d of %d bytes", lost, got, h.size)
		}
		tx := map[uint64][]shSent{}
		for _, x := range c.fwd.log {
			if x.len > 0 {
				n := (x.seq - 1) / 1448
				tx[n] = append(tx[n], x)
			}
		}
		return tx
	}
	psh := func(x shSent) bool { return x.flags&packet.PSH != 0 }

	tx := transmissions(41)
	if first := tx[41][0]; !psh(first) || tx[40][0].at != first.at || psh(tx[40][0]) {
		t.Fatalf("segments 40 and 41 first left %+v and %+v; want one chunk, PSH on 41", tx[40][0], first)
	}
	if len(tx[41]) != 2 || psh(tx[41][1]) {
		t.Errorf("segment 41 left %+v; want a retransmission without PSH", tx[41])
	}

	tx = transmissions(60, 61, 62, 63, 64, 65)
	at := tx[65][1].at
	var run []uint64
	for n := uint64(60); n <= 65; n++ {
		if len(tx[n]) > 1 && tx[n][1].at == at {
			run = append(run, n)
		}
	}
	if len(run) < 2 {
		t.Fatalf("segment 65's retransmission left with %v: want it in a run of several", run)
	}
	if !psh(tx[65][1]) {
		t.Errorf("the retransmissions %v at %v: no PSH on the last", run, at)
	}
	bare := 0
	for _, n := range run[:len(run)-1] {
		if psh(tx[n][1]) && !psh(tx[n][0]) {
			t.Errorf("segment %d retransmitted with PSH, sent first without it", n)
		}
		if !psh(tx[n][1]) {
			bare++
		}
	}
	if bare == 0 {
		t.Errorf("the retransmissions %v: PSH on every one, want it only where the skbs were marked", run)
	}
}

// One tcp_write_xmit iteration sends one skb: the send head, grown by
// tcp_grow_skb from the next skb only, up to the quota. Hand-computed from
// tcp_output.c: a head of 14 segments, then skbs of 2 and 30, quota 20:
// the head takes the 2-segment skb whole (missing_bytes is 6 segments), is
// 16 segments long, fits tcp_mss_split_point's max_len of 20 segments and
// leaves as one chunk of 16, its last segment pushed; the next call starts
// at the 30-segment skb. Sending across skbs made it one chunk of 20.
func TestChunkIsTheGrownSendHead(t *testing.T) {
	d, wire := wiredSender(config.DefaultTCPOptions())
	d.st.CwndPkts = 100
	d.sndWnd = 1 << 30
	mss := d.mss
	first := d.sndNxt
	d.wq = unmarkedQueue(first+14*mss, first+16*mss, first+46*mss)
	d.writeSeq = first + 46*mss
	d.wq.grow(first + 20*mss) // as writeXmit does before its window tests
	if n := d.sendChunk(20); n != 16 {
		t.Fatalf("a chunk of %d segments, want 16: the head and the skb after it", n)
	}
	if want := []uint64{first + 15*mss}; !slices.Equal(wire.pushed, want) {
		t.Errorf("PSH on the segments from %v, want %v (the chunk's last)", wire.pushed, want)
	}
	d.wq.grow(d.sndNxt + 20*mss)
	if n := d.sendChunk(20); n != 20 {
		t.Errorf("the next chunk is %d segments, want 20 from the 30-segment skb", n)
	}
}

// wiredSender is an established Reno sender with a greedy application at
// time 0, sending into a pshWire, for tests that set its state by hand.
func wiredSender(o config.TCPOptions) (*DataSender, *pshWire) {
	pool := &packet.Pool{}
	wire := &pshWire{pool: pool}
	d := NewSender(sim.New(), pool, wire, trace.NewRecorder(config.TraceSummary, 0, nil),
		SenderConfig{Opts: o, CC: &cc.Reno{}, App: config.AppPattern{Kind: config.Greedy}})
	d.state = sndEstablished
	return d, wire
}

// pshWire frees what a sender sends, noting where each PSH segment starts.
type pshWire struct {
	pool   *packet.Pool
	pushed []uint64
}

func (w *pshWire) Send(id packet.ID) {
	if p := w.pool.Get(id); p.Flags&packet.PSH != 0 {
		w.pushed = append(w.pushed, p.Seq)
	}
	w.pool.Free(id)
}

// tcp_event_new_data_sent re-arms the RTO of the skb that puts data in
// flight after tcp_transmit_skb has advanced tcp_wstamp_ns by that skb's
// pacing time, and tcp_reset_xmit_timer adds tcp_pacing_delay, so a paced
// flight that leaves an idle sender has its RTO the flight's own pacing
// later: at 1 Mbps a chunk of two 1,448-byte segments takes 23.168 ms, 23
// ticks at HZ 1000 (the sender starts at time 0, so no idle credit). With
// TLP on, the loss probe would take the timer's place.
func TestRTOArmedAfterTheChunksPacing(t *testing.T) {
	o := config.DefaultTCPOptions()
	o.TLP = false
	d, _ := wiredSender(o)
	d.st.CwndPkts = 4 // tcp_cwnd_test's quota: half the window, 2
	d.sndWnd = 1 << 30
	d.paced, d.st.PacingRate = true, units.Mbps
	d.Stats.SegsSent = unpacedSegs // past the unpaced start
	first := d.sndNxt
	d.wq = unmarkedQueue(first + 2*d.mss)
	d.writeSeq = first + 2*d.mss
	d.writeXmit(0)
	if d.sndNxt != first+2*d.mss || d.pending != timeRetrans {
		t.Fatalf("sent to %d (want %d), timer %v; want one chunk of two and the RTO", d.sndNxt-first, 2*d.mss, d.pending)
	}
	pacing := d.wstamp.Sub(d.st.Now)
	if pacing != 23168*sim.Microsecond {
		t.Fatalf("pacing delay %v, want 23.168 ms", pacing)
	}
	want := d.rtt.hz.jiffies(d.st.Now) + int64((d.rto+pacing)/sim.Millisecond)
	if d.xmitTimer.expires != want {
		t.Errorf("RTO at tick %d, want %d: the RTO (%v) and the chunk's pacing delay (%v)", d.xmitTimer.expires, want, d.rto, pacing)
	}
}

// tcp_grow_skb grows the send head from the next skb only, and before the
// window test, which may then stop the loop: the head keeps what it took.
// Hand-computed from tcp_output.c, skbs of 2, 1 and 7 segments and a quota
// of 5 (cwnd 10): a push into a closed window grows the head to 3 segments
// (the 1-segment skb eaten whole) and sends nothing; once the window opens
// the head takes 2 more from the 7-segment skb and leaves as a chunk of 5,
// then the rest as one of 5 (PSH on each chunk's last segment). Growing
// afresh from the writer's layout sent chunks of 3, 5 and 2.
func TestGrownHeadKeepsItsGrowth(t *testing.T) {
	d, wire := wiredSender(config.DefaultTCPOptions())
	d.st.CwndPkts = 10
	d.st.PacingRate = 10 * units.Gbps // TSO chunks of up to 64 KB
	mss := d.mss
	first := d.sndNxt
	d.wq = unmarkedQueue(first+2*mss, first+3*mss, first+10*mss)
	d.writeSeq = first + 10*mss
	d.sndWnd = 0
	d.writeXmit(0)
	if d.sndNxt != first || d.wq.headEnd() != first+3*mss {
		t.Fatalf("closed window: sent %d bytes, head ends %d segments in; want 0 and 3", d.sndNxt-first, (d.wq.headEnd()-first)/mss)
	}
	d.sndWnd = 1 << 30
	d.writeXmit(0)
	if want := []uint64{first + 4*mss, first + 9*mss}; !slices.Equal(wire.pushed, want) {
		t.Errorf("PSH on the segments from %v, want %v: chunks of 5 and 5", wire.pushed, want)
	}
}
