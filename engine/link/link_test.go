package link

import (
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// sink records arrival times and frees the packets.
type sink struct {
	s    *sim.Sim
	pool *packet.Pool
	at   []sim.Time
	flow []int32
}

func (k *sink) Receive(id packet.ID) {
	k.at = append(k.at, k.s.Now())
	k.flow = append(k.flow, k.pool.Get(id).Flow)
	k.pool.Free(id)
}

// qdiscLink is a direction of link name at rate, 1 ms of delay, with the
// qdisc q makes, and the sink at its far end.
func qdiscLink(name string, rate units.BitRate, q func(qdisc.Env) qdisc.Qdisc) (*sim.Sim, *packet.Pool, *Dir, *sink) {
	s, pool := sim.New(), &packet.Pool{}
	d := New(s, pool, Config{Name: name + "/ab", Link: name, AB: true, Rate: rate, Delay: sim.Millisecond})
	d.SetQdisc(q(d.QdiscEnv()))
	k := &sink{s: s, pool: pool}
	d.Connect(k)
	return s, pool, d, k
}

// fqLink is a 1 Gbps direction with an fq qdisc of default parameters.
func fqLink() (*sim.Sim, *packet.Pool, *Dir, *sink) {
	return qdiscLink("host", units.Gbps, func(env qdisc.Env) qdisc.Qdisc { return qdisc.NewFQ(env, qdisc.FQParams{}) })
}

// send hands d a 1500-byte packet of flow f with departure time tx.
func send(pool *packet.Pool, d *Dir, f int32, tx sim.Time) {
	id := pool.Alloc()
	p := pool.Get(id)
	p.Flow, p.Src, p.Dst, p.Size, p.TxTime = f, 0, 1, 1500, tx
	d.Send(id)
}

// A sender that stamps its packets with departure times spaced at R (the
// EDT pacing Linux TCP does with fq) and hands them over all at once sees
// them leave at R: fq holds each until its time, the link's watchdog wakes
// it then, and at 1 Gbps the serialisation fits in the gap of 100 Mbps, so
// no packet waits for the one before. Arrival i is exactly start + i·gap +
// tx + delay: gap = 12,000 bit / 100 Mbps = 120 µs, tx = 12,000 bit /
// 1 Gbps = 12 µs, so 1 ms + i·120 µs + 12 µs + 1 ms = 2.012 ms + i·120 µs.
func TestFQPacesToTxTime(t *testing.T) {
	s, pool, d, k := fqLink()
	const bits = 1500 * 8
	gap := sim.Duration(bits * int64(sim.Second) / int64(100*units.Mbps))
	tx := sim.Duration(bits * int64(sim.Second) / int64(units.Gbps))
	start := sim.Time(sim.Millisecond)
	const n = 100 // fq's flow_limit
	for i := 0; i < n; i++ {
		send(pool, d, 0, start.Add(sim.Duration(i)*gap))
	}
	s.Run()
	if len(k.at) != n {
		t.Fatalf("arrivals = %d, want %d", len(k.at), n)
	}
	for i, at := range k.at {
		if want := start.Add(sim.Duration(i)*gap + tx + sim.Millisecond); at != want {
			t.Errorf("arrival %d at %v, want %v", i, at, want)
		}
	}
}

// fq_packet_beyond_horizon: a departure time more than the horizon (10 s)
// after now is dropped at enqueue; exactly at the horizon it is kept. The
// kept packet leaves at 10 s. A 101st packet of one flow exceeds
// flow_plimit (100) and is dropped too.
func TestFQHorizonAndFlowLimit(t *testing.T) {
	s, pool, d, k := fqLink()
	horizon := sim.Time(10 * sim.Second)
	send(pool, d, 0, horizon+1)
	send(pool, d, 0, horizon)
	if d.Stats.Drops != 1 {
		t.Errorf("drops after a packet 1 ps beyond the horizon = %d, want 1", d.Stats.Drops)
	}
	for i := 0; i < 101; i++ {
		send(pool, d, 1, horizon)
	}
	if d.Stats.Drops != 2 {
		t.Errorf("drops after 101 packets of flow 1 = %d, want 2 (flow_plimit 100)", d.Stats.Drops)
	}
	s.Run()
	if len(k.at) != 101 {
		t.Fatalf("arrivals = %d, want 101", len(k.at))
	}
	want := horizon.Add(units.TxTime(1500, units.Gbps) + sim.Millisecond)
	if k.at[0] != want {
		t.Errorf("first arrival at %v, want %v", k.at[0], want)
	}
}

// Two flows with 40 packets each, all due at once, by hand through
// fq_enqueue and fq_dequeue:
//   - flow 0's first packet finds fq empty and takes the fast path
//     (fq_fastpath_check); the idle link sends it at once. Its next 8 also
//     take the fast path, since no flow exists yet and the fast-path queue
//     holds fewer than 8; the 31 after them open flow 0. Flow 1's 40 open
//     flow 1.
//   - fq_dequeue empties the fast-path queue first (8 packets); then flow
//     0, new with initial_quantum = 10 MTU of credit, sends 10; then flow 1
//     sends 10; then both are on the old list with quantum = 2 MTU per
//     round and alternate two by two until flow 0's last packet; flow 1
//     sends the rest alone.
//
// Order: 0×19, 1×10, (0 0 1 1)×10, 0, 1×10.
func TestFQRoundRobin(t *testing.T) {
	s, pool, d, k := fqLink()
	for i := 0; i < 40; i++ {
		send(pool, d, 0, 0)
	}
	for i := 0; i < 40; i++ {
		send(pool, d, 1, 0)
	}
	s.Run()
	var want []int32
	add := func(f int32, n int) {
		for i := 0; i < n; i++ {
			want = append(want, f)
		}
	}
	add(0, 19)
	add(1, 10)
	for i := 0; i < 10; i++ {
		add(0, 2)
		add(1, 2)
	}
	add(0, 1)
	add(1, 10)
	if !slices.Equal(k.flow, want) {
		t.Errorf("departure order by flow = %v, want %v", k.flow, want)
	}
}
