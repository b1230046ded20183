package tcp

import (
	"math/rand/v2"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// reassemblyModel is a byte bitmap of what has arrived: the obvious model
// the interval-set reassembly must agree with.
type reassemblyModel struct{ got []bool }

// next is the first byte not yet received (rcv_nxt).
func (m *reassemblyModel) next() uint64 {
	for i, g := range m.got {
		if !g {
			return uint64(i)
		}
	}
	return uint64(len(m.got))
}

// runs lists the received runs beyond rcv_nxt (the out-of-order queue).
func (m *reassemblyModel) runs() []packet.SackBlock {
	var out []packet.SackBlock
	n := m.next()
	for i := n; i < uint64(len(m.got)); i++ {
		if m.got[i] && (i == n || !m.got[i-1]) {
			out = append(out, packet.SackBlock{Start: i, End: i})
		}
		if m.got[i] {
			out[len(out)-1].End = i + 1
		}
	}
	return out
}

// all reports whether every byte of b arrived.
func (m *reassemblyModel) all(b packet.SackBlock) bool {
	for i := b.Start; i < b.End; i++ {
		if !m.got[i] {
			return false
		}
	}
	return b.Start < b.End
}

// checkReassembly delivers segments (byte offsets and lengths in a 4000-byte
// stream; sequence numbers are offset+1) and checks after each one: rcv_nxt
// and the bytes delivered match the model, the out-of-order queue holds
// exactly the model's runs, every SACK block covers received data and the
// first contains the newest out-of-order segment (RFC 2018 §4), and a
// D-SACK block covers only bytes that had arrived before and are in the
// segment (RFC 2883 §4).
func checkReassembly(t *testing.T, segs [][2]uint64) {
	const size = 4000
	o := defaultOpts()
	o.MSS = 100
	h := newHarness(t, o, EchoClassic)
	h.handshake(0, packet.NotECT)
	m := &reassemblyModel{got: make([]bool, size)}
	for i, s := range segs {
		off, l := s[0]%size, s[1]%300+1
		if off+l > size {
			l = size - off
		}
		before := append([]bool(nil), m.got...)
		for b := off; b < off+l; b++ {
			m.got[b] = true
		}
		h.at(10*ms + sim.Duration(i)*us)
		h.seg(off+1, uint32(l), packet.NotECT, 0)

		r := h.r
		if got, want := r.rcvNxt, m.next()+1; got != want {
			t.Fatalf("segment %d [%d,%d): rcv_nxt = %d, want %d", i, off, off+l, got, want)
		}
		if got, want := uint64(r.BytesDelivered()), m.next(); got != want {
			t.Fatalf("segment %d: BytesDelivered = %d, want %d", i, got, want)
		}
		runs := m.runs()
		var held uint64
		for k := range runs {
			runs[k].Start++
			runs[k].End++
			held += runs[k].End - runs[k].Start
		}
		if len(runs) != len(r.ofo.iv) || r.ofo.bytes != held {
			t.Fatalf("segment %d: ofo queue %v (%d B), want %v (%d B)", i, r.ofo.iv, r.ofo.bytes, runs, held)
		}
		for k := range runs {
			if runs[k] != r.ofo.iv[k] {
				t.Fatalf("segment %d: ofo queue %v, want %v", i, r.ofo.iv, runs)
			}
		}
		for k, b := range r.sack.blocks[:r.sack.num] {
			if b.Start <= r.rcvNxt || !m.all(packet.SackBlock{Start: b.Start - 1, End: b.End - 1}) {
				t.Fatalf("segment %d: SACK block %d %v not received data beyond rcv_nxt %d", i, k, b, r.rcvNxt)
			}
		}
		if off+1 > r.rcvNxt && r.sack.num > 0 {
			if b := r.sack.blocks[0]; b.Start > off+1 || b.End < off+1+l {
				t.Fatalf("segment %d [%d,%d): first SACK block %v does not contain it", i, off+1, off+1+l, b)
			}
		}
		if r.sack.dsack {
			d := r.sack.dup
			for b := d.Start - 1; b < d.End-1; b++ {
				if !before[b] || b < off || b >= off+l {
					t.Fatalf("segment %d [%d,%d): D-SACK %v covers byte %d that is not a duplicate", i, off+1, off+1+l, d, b+1)
				}
			}
		}
	}
}

// TestReassemblyRandom runs checkReassembly on 300 seeded random
// sequences of 60 segments.
func TestReassemblyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		segs := make([][2]uint64, 60)
		for i := range segs {
			segs[i] = [2]uint64{rng.Uint64N(4000), rng.Uint64N(300)}
		}
		checkReassembly(t, segs)
	}
}

// FuzzReassembly feeds checkReassembly segments decoded from fuzz input,
// three bytes each: a 16-bit offset and a length.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{0, 0, 50, 0, 200, 50, 0, 100, 99})
	f.Add([]byte{1, 0, 10, 0, 0, 255, 0, 128, 3, 2, 0, 10})
	// Found by fuzzing: an in-order segment reaching two queued runs at
	// once must drain both (tcp_ofo_queue loops).
	f.Add([]byte("\x00B0\x000\x00\x00\x00A"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var segs [][2]uint64
		for i := 0; i+3 <= len(in) && len(segs) < 200; i += 3 {
			segs = append(segs, [2]uint64{uint64(in[i])<<8 | uint64(in[i+1]), uint64(in[i+2])})
		}
		checkReassembly(t, segs)
	})
}
