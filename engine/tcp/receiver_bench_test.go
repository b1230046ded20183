//go:build unix

package tcp

import (
	"syscall"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// freeSender drops every ACK back into the pool, as the real sender does
// once it has read it.
type freeSender struct{ pool *packet.Pool }

func (f freeSender) Send(id packet.ID) { f.pool.Free(id) }

// BenchmarkReceiverInOrder measures the receiver's per-packet cost in
// steady state: an established connection (quick ACKs used up, delayed
// ACK on, SACK on, autotuning running) receiving in-order 1448-byte
// segments 1 us apart, one ACK per two segments. Each iteration advances
// the clock (firing any due timer), builds the data packet and delivers
// it; ACKs are freed on sending. Two metrics: ns/packet is wall time;
// cpu-ns/packet is the process's user+system CPU time per packet, which a
// machine shared with other jobs does not inflate (nothing allocates, so
// no GC time hides in it). Both include the ~10 ns of building the packet.
func BenchmarkReceiverInOrder(b *testing.B) {
	s := sim.New()
	pool := &packet.Pool{}
	r := NewReceiver(s, pool, freeSender{pool}, nil, ReceiverConfig{Node: 1, Opts: defaultOpts()})
	syn := pool.Alloc()
	p := pool.Get(syn)
	p.Flags = packet.SYN
	r.Receive(syn)
	now := sim.Time(10 * sim.Millisecond)
	seq := uint64(1)
	deliver := func() {
		now += sim.Time(sim.Microsecond)
		s.RunUntil(now)
		id := pool.Alloc()
		p := pool.Get(id)
		p.Flags = packet.ACK
		p.Seq, p.Len, p.Ack = seq, 1448, 1
		p.Size = 1448 + HeaderBytes
		p.TSVal = tsNow(now)
		r.Receive(id)
		seq += 1448
	}
	for range 1000 {
		deliver()
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		deliver()
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/packet")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
