//go:build linux

package emulate

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
)

// benchRelay is a relay over the clean path whose TUN devices are
// /dev/null, so the packet path runs without root or a kernel behind it.
func benchRelay(tb testing.TB) (*relay, []byte) {
	prep, err := engine.Prepare([]byte(cleanPath), nil)
	if err != nil {
		tb.Fatal(err)
	}
	s, pool := sim.New(), &packet.Pool{}
	nw, err := topo.Build(s, pool, prep.Scenario)
	if err != nil {
		tb.Fatal(err)
	}
	null, err := syscall.Open("/dev/null", syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Close(null) })
	r := &relay{s: s, pool: pool, nw: nw, nflows: 1, slot: slotFor(1500), rec: trace.NewRecorder(config.TraceSummary, 0, nil), t0: time.Now()}
	for i := range r.nodeOf {
		r.nodeOf[i] = -1
	}
	for i := range nw.Nodes {
		p := &tunPort{r: r, fd: null, node: int32(i)}
		r.ports = append(r.ports, p)
		r.nodeOf[i+1] = int32(i)
		nw.Nodes[i].Attach(0, p)
		nw.Nodes[i].Attach(r.foreignFlow(int32(i)), p)
	}
	r.rtt = []rttTrack{{src: 0, ring: make([]rttEntry, 1<<16)}}
	for i, d := range nw.Dirs {
		q := &queueObs{QueueRecorder: engine.QueueRecorder{Trace: r.rec, Link: int32(i / 2), AB: d.AB}, r: r}
		r.queues = append(r.queues, q)
		d.Observe(q)
	}
	r.warm()
	// A full-size data segment from 10.201.0.1 to flow 0's port at 10.201.0.2.
	pkt := make([]byte, 1500)
	pkt[0], pkt[8], pkt[9] = 0x45, 64, syscall.IPPROTO_TCP
	binary.BigEndian.PutUint16(pkt[2:], 1500)
	copy(pkt[12:], []byte{10, 201, 0, 1, 10, 201, 0, 2})
	ipChecksum(pkt)
	binary.BigEndian.PutUint16(pkt[20:], 40000)
	binary.BigEndian.PutUint16(pkt[22:], basePort)
	pkt[32] = 8 << 4 // 32-byte TCP header (timestamps)
	pkt[33] = 0x10
	return r, pkt
}

// relayStepper returns a function that feeds the relay one data segment per
// 240 µs of emulated time (50 Mbps, the clean path's rate, so the queue
// stays steady), delivering what is due first.
func relayStepper(r *relay, pkt []byte) func() {
	var now sim.Time
	seq := uint32(1)
	return func() {
		now += 240 * sim.Time(sim.Microsecond)
		r.s.RunUntil(now)
		id := r.pool.Alloc()
		buf := r.buf(id)
		copy(buf, pkt)
		binary.BigEndian.PutUint32(buf[24:], seq)
		seq += 1448
		r.admit(r.ports[0], id, buf[:len(pkt)], now)
	}
}

// BenchmarkRelayPacket measures the relay's own per-packet work — parse the
// IPv4/TCP header, run the engine's link (FIFO, serialisation, propagation)
// for it, deliver it at its arrival event, write it — with /dev/null as
// both TUN devices, one data segment per 240 µs of emulated time (50 Mbps,
// the clean path's rate, so the queue stays steady). It must not allocate.
func BenchmarkRelayPacket(b *testing.B) {
	step := relayStepper(benchRelay(b))
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
}

// TestRelayAllocatesNothingPerPacket is the benchmark's claim as a test:
// once warm, relaying a packet allocates nothing.
func TestRelayAllocatesNothingPerPacket(t *testing.T) {
	r, pkt := benchRelay(t)
	step := relayStepper(r, pkt)
	for range 5000 { // past the link's wire ring growth
		step()
	}
	if a := testing.AllocsPerRun(2000, step); a != 0 {
		t.Errorf("relaying a packet allocates %.2f times, want 0", a)
	}
	if r.late.Count() == 0 {
		t.Errorf("no packet was delivered")
	}
}
