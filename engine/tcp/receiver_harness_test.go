package tcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// ackRec is one packet the receiver sent, as the fake sender saw it.
type ackRec struct {
	At     sim.Time
	Flags  packet.Flags
	Ack    uint64
	Wnd    uint32
	TSVal  uint32
	TSEcr  uint32
	Sack   []packet.SackBlock
	AccECN [3]uint32
	Size   units.Bytes
}

// String renders an ACK for logs: time, ACK number, window, SACK blocks
// and ECN flags.
func (a ackRec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v ", sim.Duration(a.At))
	if a.Flags&packet.SYN != 0 {
		b.WriteString("SYN-ACK ")
	}
	fmt.Fprintf(&b, "ack=%d win=%d", a.Ack, a.Wnd)
	for _, s := range a.Sack {
		fmt.Fprintf(&b, " sack=%d-%d", s.Start, s.End)
	}
	for _, f := range []struct {
		f packet.Flags
		n string
	}{{packet.AE, "ae"}, {packet.CWR, "cwr"}, {packet.ECE, "ece"}} {
		if a.Flags&f.f != 0 {
			b.WriteString(" " + f.n)
		}
	}
	if a.AccECN != [3]uint32{} {
		fmt.Fprintf(&b, " cep=%d e1b=%d ceb=%d", a.AccECN[0], a.AccECN[1], a.AccECN[2])
	}
	return b.String()
}

// capture is a fake Sender: it records every packet the receiver sends
// and frees it, as the real sender would.
type capture struct {
	pool *packet.Pool
	acks []ackRec
}

func (c *capture) Send(id packet.ID) {
	p := c.pool.Get(id)
	c.acks = append(c.acks, ackRec{
		At: p.SentAt, Flags: p.Flags, Ack: p.Ack, Wnd: p.Wnd, TSVal: p.TSVal, TSEcr: p.TSEcr,
		Sack: append([]packet.SackBlock(nil), p.Sack[:p.NSack]...), AccECN: p.AccECN, Size: p.Size,
	})
	c.pool.Free(id)
}

// harness drives one receiver with hand-made packets on a real sim clock.
type harness struct {
	t    testing.TB
	s    *sim.Sim
	pool *packet.Pool
	out  *capture
	r    *Receiver
}

// defaultOpts are a Linux host's defaults (config.TCPOptions doc).
func defaultOpts() config.TCPOptions {
	return config.TCPOptions{
		SACK: true, DelayedAck: true, MSS: 1448,
		RcvBufInit: 128 * units.KiB, RcvBufMax: 6 * units.MiB,
	}
}

func newHarness(t testing.TB, o config.TCPOptions, echo EchoMode) *harness {
	s := sim.New()
	pool := &packet.Pool{}
	out := &capture{pool: pool}
	r := NewReceiver(s, pool, out, nil, ReceiverConfig{Flow: 0, Node: 1, Peer: 0, Opts: o, Echo: echo})
	return &harness{t: t, s: s, pool: pool, out: out, r: r}
}

// at runs the clock (and the receiver's timers) up to t.
func (h *harness) at(t sim.Duration) { h.s.RunUntil(sim.Time(t)) }

// syn delivers a SYN with the given flags and IP-ECN codepoint now.
func (h *harness) syn(flags packet.Flags, ecn packet.ECN) {
	id := h.pool.Alloc()
	p := h.pool.Get(id)
	p.Flow, p.Src, p.Dst = 0, 0, 1
	p.Flags = packet.SYN | flags
	p.ECN = ecn
	p.TSVal = tsNow(h.s.Now())
	p.Size = HeaderBytes
	h.r.Receive(id)
}

// seg delivers a data segment [seq, seq+n) now.
func (h *harness) seg(seq uint64, n uint32, ecn packet.ECN, flags packet.Flags) {
	h.segTS(seq, n, ecn, flags, 0)
}

// segTS is seg with an explicit TSEcr.
func (h *harness) segTS(seq uint64, n uint32, ecn packet.ECN, flags packet.Flags, tsEcr uint32) {
	h.segStamped(seq, n, ecn, flags, tsNow(h.s.Now()), tsEcr)
}

// segStamped is segTS with the sender's timestamp tsVal too, as a packet
// delayed on the path carries the one it left with.
func (h *harness) segStamped(seq uint64, n uint32, ecn packet.ECN, flags packet.Flags, tsVal, tsEcr uint32) {
	id := h.pool.Alloc()
	p := h.pool.Get(id)
	p.Flow, p.Src, p.Dst = 0, 0, 1
	p.Flags = packet.ACK | flags
	p.Seq, p.Len, p.Ack = seq, n, 1
	p.Size = units.Bytes(n) + HeaderBytes
	p.ECN = ecn
	p.TSVal = tsVal
	p.TSEcr = tsEcr
	h.r.Receive(id)
}

// handshake delivers a SYN at time 0. The first data segment the caller
// then delivers completes it, so the receiver's SYN-ACK RTT (its only srtt
// sample) is that segment's arrival time.
func (h *harness) handshake(flags packet.Flags, ecn packet.ECN) {
	h.at(0)
	h.syn(flags, ecn)
}

// acksFrom returns the ACKs (not SYN-ACKs) sent from index i on.
func (h *harness) acksFrom(i int) []ackRec {
	var out []ackRec
	for _, a := range h.out.acks[i:] {
		if a.Flags&packet.SYN == 0 {
			out = append(out, a)
		}
	}
	return out
}

// log renders all packets sent so far, one per line.
func (h *harness) log() string {
	var b strings.Builder
	for _, a := range h.out.acks {
		b.WriteString(a.String() + "\n")
	}
	return b.String()
}

// tsNow is the TCP timestamp clock of a host whose clock reads zero at time
// 0 (the harnesses' receivers): milliseconds, as tcp_time_stamp_ts.
func tsNow(t sim.Time) uint32 { return uint32(t / sim.Time(sim.Millisecond)) }
