package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// A receiver read through Read (a relay's) hears of data when the data is
// in order and the packet or timer that put it there is done, as
// sk_data_ready: a GRO aggregate of segments without PSH is held until its
// timer, and only the timer's flush makes it readable. Before, the relay
// heard of data only on a packet's arrival, so the last aggregate of a
// flow, flushed by the timer, stayed unread (a proxied flow stalled short
// of its size). A segment with PSH is not held: readable on arrival.
func TestDataReadyAfterGROFlush(t *testing.T) {
	o := defaultOpts()
	o.GRO = true
	o.GROInterval = 100 * us
	s := sim.New()
	pool := &packet.Pool{}
	var r *Receiver
	var reads []uint64 // what each DataReady read
	var at []sim.Time
	r = NewReceiver(s, pool, &capture{pool: pool}, nil, ReceiverConfig{Flow: 0, Node: 1, Peer: 0, Opts: o,
		DataReady: func() {
			reads = append(reads, r.Read(1<<20))
			at = append(at, s.Now())
		}})
	h := &harness{t: t, s: s, pool: pool, r: r}
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	h.seg(1, 1448, packet.NotECT, 0)
	h.at(10*ms + 10*us)
	h.seg(1449, 1448, packet.NotECT, 0)
	if len(reads) != 0 {
		t.Fatalf("DataReady read %v while the aggregate is held", reads)
	}
	h.at(10*ms + 200*us)
	if len(reads) != 1 || reads[0] != 2*1448 || at[0] != sim.Time(10*ms+100*us) {
		t.Fatalf("after the GRO timer: reads %v at %v, want one of 2896 B at 10.1 ms", reads, at)
	}
	h.at(20 * ms)
	h.seg(2897, 100, packet.NotECT, packet.PSH)
	if len(reads) != 2 || reads[1] != 100 || at[1] != sim.Time(20*ms) {
		t.Fatalf("a PSH segment: reads %v at %v, want 100 B at 20 ms", reads, at)
	}
}
