package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
)

// sbModel is the scoreboard's reference: one flag byte per segment ever
// sent, a send-order list, and counters recomputed from scratch.
type sbModel struct {
	una, nxt uint64
	flags    map[uint64]uint8
	order    []uint64 // the kernel's time-sorted list: unacked, unsacked segments RACK has not marked lost, in transmission order
}

// walked is the list RACK acts on: order without the segments it skips,
// those marked lost and not retransmitted since.
func (m *sbModel) walked() []uint64 {
	var out []uint64
	for _, n := range m.order {
		if m.flags[n]&(flagLost|flagRetransOut) != flagLost {
			out = append(out, n)
		}
	}
	return out
}

func (m *sbModel) counts() (sacked, lost, retrans uint32) {
	for n := m.una; n < m.nxt; n++ {
		f := m.flags[n]
		if f&flagSacked != 0 {
			sacked++
		}
		if f&flagLost != 0 {
			lost++
		}
		if f&flagRetransOut != 0 {
			retrans++
		}
	}
	return
}

func (m *sbModel) remove(n uint64) {
	for i, x := range m.order {
		if x == n {
			m.order = append(m.order[:i], m.order[i+1:]...)
			return
		}
	}
}

func (b *scoreboard) listOrder() []uint64 {
	var out []uint64
	for n := b.head; n >= 0; n = b.seg(uint64(n)).next {
		out = append(out, uint64(n))
	}
	return out
}

// checkAgainst compares b with the model.
func checkAgainst(t *testing.T, step int, b *scoreboard, m *sbModel) {
	t.Helper()
	if b.una != m.una || b.nxt != m.nxt {
		t.Fatalf("step %d: una, nxt = %d, %d; want %d, %d", step, b.una, b.nxt, m.una, m.nxt)
	}
	s, l, r := m.counts()
	if b.sackedOut != s || b.lostOut != l || b.retransOut != r {
		t.Fatalf("step %d: sacked, lost, retrans = %d, %d, %d; want %d, %d, %d", step, b.sackedOut, b.lostOut, b.retransOut, s, l, r)
	}
	var heads uint32
	for n := m.una; n < m.nxt; n++ {
		got := b.seg(n).flags
		if got&flagSkbHead != 0 {
			heads++
		}
		if got &^= flagSkbHead; got != m.flags[n] {
			t.Fatalf("step %d: segment %d flags = %04b, want %04b", step, n, got, m.flags[n])
		}
	}
	if b.skbs != heads {
		t.Fatalf("step %d: %d skbs counted, %d segments flagged as an skb's first", step, b.skbs, heads)
	}
	got, want := b.listOrder(), m.walked()
	if len(got) != len(want) {
		t.Fatalf("step %d: walked list %v, want %v (time-sorted %v)", step, got, want, m.order)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("step %d: walked list %v, want %v (time-sorted %v)", step, got, want, m.order)
		}
	}
	listed := 0
	for n := b.una; n < b.nxt; n++ {
		if b.seg(n).listed {
			listed++
		}
	}
	if listed != len(m.order) {
		t.Fatalf("step %d: %d segments listed, want %d (%v)", step, listed, len(m.order), m.order)
	}
}

// applyOp runs one encoded operation on both the scoreboard and the model.
// The SACK operation goes through newSackRanges: tagging only the new parts
// of the blocks must leave the same segments sacked as tagging every block
// in full (the model).
func applyOp(b *scoreboard, m *sbModel, op, x, y byte, now sim.Time) {
	switch op % 9 {
	case 0, 1: // send up to 1+x%8 segments
		for range 1 + int(x%8) {
			n := b.push(b.start(b.nxt)+b.mss, now)
			m.nxt++
			m.flags[n] = 0
			m.order = append(m.order, n)
		}
	case 2: // SACK up to two blocks
		if b.nxt == b.una {
			return
		}
		span := b.nxt - b.una
		s1 := b.una + uint64(x)%span
		e1 := min(s1+1+uint64(y%5), b.nxt)
		s2 := b.una + uint64(y)%span
		e2 := min(s2+1+uint64(x%3), b.nxt)
		blocks := [][2]uint64{{s1, e1}}
		if e2 <= s1 || s2 >= e1 {
			blocks = append(blocks, [2]uint64{s2, e2})
		}
		for _, r := range b.newSackRanges(blocks, nil) {
			for n := r[0]; n < r[1]; n++ {
				if b.markSacked(n) {
					b.clearLost(n)
				}
			}
		}
		for _, blk := range blocks {
			for n := blk[0]; n < blk[1]; n++ {
				if m.flags[n]&flagSacked == 0 {
					m.flags[n] = m.flags[n]&^flagLost | flagSacked
					m.remove(n)
				}
			}
		}
	case 3: // cumulative ACK of up to x%6 segments
		to := min(b.una+uint64(x%6), b.nxt)
		b.ackTo(to)
		for ; m.una < to; m.una++ {
			m.remove(m.una)
		}
	case 4: // mark a segment lost; RACK (odd y) also takes it off the list
		if b.nxt == b.una {
			return
		}
		n := b.una + uint64(x)%(b.nxt-b.una)
		b.markLost(n)
		if y%2 == 1 {
			b.listRemove(n)
		}
		f := m.flags[n]
		if f&flagSacked != 0 {
			return
		}
		if y%2 == 1 {
			m.remove(n)
		}
		if f&flagLost != 0 {
			m.flags[n] = f &^ flagRetransOut
		} else {
			m.flags[n] = f | flagLost
		}
	case 5: // retransmit a lost, not yet retransmitted segment
		if b.nxt == b.una {
			return
		}
		n := b.una + uint64(x)%(b.nxt-b.una)
		f := m.flags[n]
		if f&flagLost == 0 || f&(flagSacked|flagRetransOut) != 0 {
			return
		}
		b.resent(n, now)
		b.setRetransOut(n)
		m.flags[n] = f | flagRetrans
		m.remove(n)
		m.order = append(m.order, n)
	case 6: // a loss probe resends an unsacked segment, not counted in retrans_out
		if b.nxt == b.una {
			return
		}
		n := b.una + uint64(x)%(b.nxt-b.una)
		f := m.flags[n]
		if f&flagSacked != 0 {
			return
		}
		b.resent(n, now)
		m.flags[n] = f | flagEverRetrans
		m.remove(n)
		m.order = append(m.order, n)
	case 7: // an undo clears every lost mark (tcp_undo_cwnd_reduction)
		for n := b.una; n < b.nxt; n++ {
			b.clearLost(n)
			m.flags[n] &^= flagLost
		}
	case 8: // a D-SACK for a retransmission: it is no longer in flight
		if b.nxt == b.una {
			return
		}
		n := b.una + uint64(x)%(b.nxt-b.una)
		b.clearRetransOut(n)
		m.flags[n] &^= flagRetransOut
	}
}

func runOps(t *testing.T, ops []byte) {
	b := newScoreboard(1448, nil)
	m := &sbModel{flags: map[uint64]uint8{}}
	for i := 0; i+2 < len(ops); i += 3 {
		applyOp(b, m, ops[i], ops[i+1], ops[i+2], sim.Time(i))
		checkAgainst(t, i/3, b, m)
	}
}

// FuzzScoreboard compares the scoreboard with a bitmap model under random
// sends, SACKs (through the SACK-block cache), cumulative ACKs, loss marks,
// retransmissions, loss probes, undos and D-SACKs, including ring growth
// past 64 segments.
func FuzzScoreboard(f *testing.F) {
	f.Add([]byte{0, 7, 0, 0, 7, 0, 2, 3, 1, 2, 3, 2, 4, 0, 0, 5, 0, 0, 3, 5, 0})
	f.Add([]byte{1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 1, 7, 7, 2, 40, 4, 2, 41, 4, 3, 5, 0})
	// An RTO's marks, retransmissions that unpark, a probe, an undo that
	// puts the rest back in place, a D-SACK.
	f.Add([]byte{1, 7, 7, 1, 7, 7, 4, 1, 0, 4, 2, 0, 4, 3, 0, 4, 5, 0, 4, 9, 0, 5, 2, 0, 6, 3, 0, 5, 9, 0,
		7, 0, 0, 4, 4, 0, 8, 2, 0, 1, 3, 3, 4, 1, 0, 7, 0, 0, 3, 2, 0})
	f.Fuzz(func(t *testing.T, ops []byte) { runOps(t, ops) })
}

// The SACK-block cache walks only what a block adds to the previous ACK's
// blocks, as the kernel's recv_sack_cache does.
func TestNewSackRanges(t *testing.T) {
	b := newScoreboard(1448, nil)
	for range 40 {
		b.push(0, 0)
	}
	for _, tc := range []struct {
		name   string
		blocks [][2]uint64
		want   [][2]uint64
	}{
		{"first block", [][2]uint64{{10, 12}}, [][2]uint64{{10, 12}}},
		{"same block again", [][2]uint64{{10, 12}}, nil},
		{"grown right", [][2]uint64{{10, 14}}, [][2]uint64{{12, 14}}},
		{"new block ahead", [][2]uint64{{20, 21}, {10, 14}}, [][2]uint64{{20, 21}}},
		{"grown both sides", [][2]uint64{{8, 16}, {20, 21}}, [][2]uint64{{8, 10}, {14, 16}}},
		{"clipped to the queue", [][2]uint64{{38, 45}}, [][2]uint64{{38, 40}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := b.newSackRanges(tc.blocks, nil)
			if len(got) != len(tc.want) {
				t.Fatalf("newSackRanges(%v) = %v, want %v", tc.blocks, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("newSackRanges(%v) = %v, want %v", tc.blocks, got, tc.want)
				}
			}
		})
	}
}

// A hand-run scoreboard: counters and in-flight follow the kernel's
// tcp_packets_in_flight = packets_out − (sacked_out + lost_out) + retrans_out.
func TestScoreboardInFlight(t *testing.T) {
	b := newScoreboard(1448, nil)
	for range 10 {
		b.push(0, 0)
	}
	b.markSacked(5)
	b.markSacked(6)
	b.markLost(2)
	b.resent(2, 1)
	b.setRetransOut(2)
	b.markLost(3)
	// 10 out, 2 sacked, 2 lost, 1 retransmitted: 10 − 4 + 1 = 7.
	if got := b.inFlight(); got != 7 {
		t.Errorf("inFlight = %d, want 7", got)
	}
	// The retransmission of 2 is lost again: no longer counted.
	b.markLost(2)
	if got := b.inFlight(); got != 6 {
		t.Errorf("inFlight after the retransmission is lost = %d, want 6", got)
	}
	b.ackTo(7)
	if b.packetsOut() != 3 || b.sackedOut != 0 || b.lostOut != 0 || b.inFlight() != 3 {
		t.Errorf("after ACK to 7: out, sacked, lost, in flight = %d, %d, %d, %d; want 3, 0, 0, 3",
			b.packetsOut(), b.sackedOut, b.lostOut, b.inFlight())
	}
	if got := b.listOrder(); len(got) != 3 || got[0] != 7 {
		t.Errorf("time-sorted list = %v, want [7 8 9]", got)
	}
}

// A finished sender's ring, recycled, comes back to the next sender cleared
// and behaves as a new one (the fuzz corpus's operations check it against
// the model); a ring that grew and rings recycled after Close are left to
// the collector.
func TestRecycledRing(t *testing.T) {
	rec := &Recycler{}
	sender := func() *DataSender {
		return &DataSender{cfg: SenderConfig{Recycler: rec}, sb: newScoreboard(1448, rec)}
	}
	d := sender()
	for i := range 50 {
		d.sb.push(uint64(1+1448*(i+1)), sim.Time(i))
	}
	d.sb.markLost(d.sb.una)
	ring := d.sb.ring
	d.Recycle()
	e := sender()
	if &e.sb.ring[0] != &ring[0] || len(rec.rings) != 0 {
		t.Fatal("the next sender did not get the recycled ring")
	}
	for i, s := range e.sb.ring {
		if s != (txSeg{}) {
			t.Fatalf("recycled ring's slot %d not cleared: %+v", i, s)
		}
	}
	m := &sbModel{flags: map[uint64]uint8{}}
	ops := []byte{1, 7, 7, 1, 7, 7, 4, 1, 0, 4, 2, 0, 4, 3, 0, 4, 5, 0, 4, 9, 0, 5, 2, 0, 6, 3, 0, 5, 9, 0,
		7, 0, 0, 4, 4, 0, 8, 2, 0, 1, 3, 3, 4, 1, 0, 7, 0, 0, 3, 2, 0}
	for i := 0; i+2 < len(ops); i += 3 {
		applyOp(e.sb, m, ops[i], ops[i+1], ops[i+2], sim.Time(i))
		checkAgainst(t, i/3, e.sb, m)
	}

	g := sender()
	for i := range 2 * initialRing {
		g.sb.push(uint64(1+1448*(i+1)), 0)
	}
	g.Recycle()
	if len(rec.rings) != 0 {
		t.Error("a grown ring was kept")
	}
	rec.Close()
	sender().Recycle()
	if len(rec.rings) != 0 {
		t.Error("a ring was kept after Close")
	}
}
