package cctest_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// pinned keeps cwnd where the test put it, through losses too.
type pinned struct{}

func (pinned) Name() string                 { return "pinned" }
func (pinned) SSThresh(st *cc.State) uint32 { return st.CwndPkts }
func (pinned) CongAvoid(*cc.State, uint32)  {}
func (pinned) UndoCwnd(st *cc.State) uint32 { return st.CwndPkts }
func newPinned(cwnd uint32) *cctest.Conn    { return newConn(pinned{}, cwnd) }
func newConn(a cc.Algorithm, cwnd uint32) *cctest.Conn {
	c := cctest.New(a, cctest.Options{})
	c.St.CwndPkts = cwnd
	c.St.SSThreshPkts = cwnd
	return c
}

// recorder is pinned with a cong_control hook that keeps the rate samples.
type recorder struct {
	pinned
	samples []cc.RateSample
}

func (r *recorder) CongControl(_ *cc.State, rs *cc.RateSample) { r.samples = append(r.samples, *rs) }

const (
	rtt = 10 * sim.Millisecond
	bdp = 100 // packets per RTT: 10000 packets/s
)

// TestRunQueueingDelay checks the bottleneck model against queueing
// arithmetic: a window W ≤ BDP sees the bare RTT; a larger one keeps W −
// BDP packets queued, adding (W − BDP)/rate to every RTT.
func TestRunQueueingDelay(t *testing.T) {
	for _, w := range []uint32{50, 100, 150, 300} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			c := newPinned(w)
			cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp}, sim.Second, nil)
			queued := max(0, float64(w)-bdp)
			want := rtt.Seconds() + queued/(bdp/rtt.Seconds())
			if got := c.St.SRTT.Seconds(); math.Abs(got/want-1) > 0.01 {
				t.Errorf("srtt(cwnd %d) = %.4fs, want %.4fs ± 1%%", w, got, want)
			}
		})
	}
}

// TestRunDeliveryRate checks the rate samples given to cong_control against
// the operating point min(cwnd/RTT, bottleneck rate).
func TestRunDeliveryRate(t *testing.T) {
	for _, w := range []uint32{20, 50, 100, 200} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			r := &recorder{}
			c := newConn(r, w)
			cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp}, sim.Second, nil)
			want := min(float64(w), bdp) / rtt.Seconds()
			rs := r.samples[len(r.samples)-1]
			got := float64(rs.Delivered) / rs.Interval.Seconds()
			if math.Abs(got/want-1) > 0.02 {
				t.Errorf("delivery rate(cwnd %d) = %.0f pkts/s, want %.0f ± 2%%", w, got, want)
			}
		})
	}
}

// TestRunDropTail checks the buffer limit: in steady state a window fills
// the pipe (BDP) and then the buffer, so it loses packets only when it
// exceeds BDP + buffer. The window is raised from BDP after a second of
// steady state, so its growth is one burst of cwnd − BDP packets.
func TestRunDropTail(t *testing.T) {
	for _, tc := range []struct {
		cwnd      uint32
		wantDrops bool
	}{{190, false}, {200, false}, {210, true}} {
		c := newPinned(bdp)
		path := cctest.Path{RTT: rtt, BDPPkts: bdp, BufferPkts: 100}
		if res := cctest.Run(c, path, sim.Second, nil); res.Drops > 0 {
			t.Fatalf("drops(cwnd = BDP) = %d, want 0", res.Drops)
		}
		c.St.CwndPkts, c.St.SSThreshPkts = tc.cwnd, tc.cwnd
		res := cctest.Run(c, path, sim.Second, nil)
		if got := res.Drops > 0; got != tc.wantDrops {
			t.Errorf("drops(cwnd %d, BDP 100 + buffer 100) = %d, want drops: %v", tc.cwnd, res.Drops, tc.wantDrops)
		}
	}
}

// TestRunDeterministic checks that the loss stream depends on the seed
// only.
func TestRunDeterministic(t *testing.T) {
	run := func(seed uint64) cctest.Result {
		c := newConn(&cc.Reno{}, cc.InitCwnd)
		return cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp, LossProb: 0.01, Seed: seed}, 5*sim.Second, nil)
	}
	if diff := cmp.Diff(run(7), run(7)); diff != "" {
		t.Errorf("Run with seed 7 twice differs (-first +second):\n%s", diff)
	}
	if a, b := run(7), run(8); a == b {
		t.Errorf("Run with seeds 7 and 8 = %+v both, want different loss streams", a)
	}
}

// TestPRR checks the harness's fast recovery against RFC 6937 (one loss in
// a window of 20, Reno's ssthresh 10) as tcp_cwnd_reduction writes it.
// While pipe > ssthresh the proportional part sends ceil(delivered·10/20)
// in total: one packet per two delivered, the first being the
// retransmission. Pipe = 18 + sent − delivered falls to ssthresh at the
// 16th ACK after the loss; from there the reduction bound keeps it at
// ssthresh: send nothing at pipe = ssthresh, then one per ACK. When the
// retransmission is acked, recovery ends at cwnd = ssthresh.
func TestPRR(t *testing.T) {
	c := newConn(&cc.Reno{}, 20)
	c.Fill()
	c.Advance(rtt)
	c.Lose(1) // SACKs packet 1, marks packet 0 lost
	var sent []uint32
	sent = append(sent, c.Fill())
	for range 18 { // packets 2..19
		c.Ack(1)
		sent = append(sent, c.Fill())
	}
	want := []uint32{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("packets sent per ACK in recovery (-want +got):\n%s", diff)
	}
	if c.St.CA != cc.CARecovery {
		t.Fatalf("CA before the retransmission is acked = %v, want recovery", c.St.CA)
	}
	c.Ack(1) // the retransmission: snd_una passes high_seq
	if c.St.CA != cc.CAOpen || c.St.CwndPkts != 10 {
		t.Errorf("after recovery: CA %v cwnd %d, want open, 10", c.St.CA, c.St.CwndPkts)
	}
}

// TestTimeout checks RTO recovery against RFC 5681 §3.1: ssthresh =
// max(FlightSize/2, 2), cwnd = 1 (the loss window), then slow start back
// to ssthresh (2, 4, 8, 16, 20 after each round) and one packet per RTT
// above it; Loss ends once all 40 lost packets (1+2+4+8+16 resent in the
// first five rounds) are resent and acked, in the sixth round.
func TestTimeout(t *testing.T) {
	c := newConn(&cc.Reno{}, 40)
	c.Fill()
	c.Advance(rtt)
	c.Timeout()
	if c.St.CA != cc.CALoss || c.St.CwndPkts != 1 || c.St.SSThreshPkts != 20 {
		t.Fatalf("after RTO: CA %v cwnd %d ssthresh %d, want loss, 1, 20", c.St.CA, c.St.CwndPkts, c.St.SSThreshPkts)
	}
	var got []uint32
	var ca []cc.CAState
	for range 6 {
		c.Round(rtt)
		got = append(got, c.St.CwndPkts)
		ca = append(ca, c.St.CA)
	}
	if diff := cmp.Diff([]uint32{2, 4, 8, 16, 20, 21}, got); diff != "" {
		t.Errorf("cwnd per round after RTO (-want +got):\n%s", diff)
	}
	wantCA := []cc.CAState{cc.CALoss, cc.CALoss, cc.CALoss, cc.CALoss, cc.CALoss, cc.CAOpen}
	if diff := cmp.Diff(wantCA, ca); diff != "" {
		t.Errorf("CA state per round after RTO (-want +got):\n%s", diff)
	}
}

// TestCwndLimited checks tcp_is_cwnd_limited (include/net/tcp.h): in slow
// start a window counts as used while cwnd < 2·max_packets_out, so Reno
// grows only then; in congestion avoidance only a full window counts.
func TestCwndLimited(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ssthresh uint32
		send     uint32
		want     bool
	}{
		{"slow start, 4 of 10 sent", cc.InfiniteSSThresh, 4, false},
		{"slow start, 6 of 10 sent", cc.InfiniteSSThresh, 6, true},
		{"avoidance, 9 of 10 sent", 5, 9, false},
		{"avoidance, 10 of 10 sent", 5, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConn(&cc.Reno{}, 10)
			c.St.SSThreshPkts = tc.ssthresh
			c.Send(tc.send)
			c.Advance(rtt)
			c.Ack(1)
			if c.St.CwndLimited != tc.want {
				t.Errorf("CwndLimited = %v, want %v", c.St.CwndLimited, tc.want)
			}
			if grew := c.St.CwndPkts > 10 || c.St.CwndCnt > 0; grew != tc.want {
				t.Errorf("Reno grew (cwnd %d, cnt %d) = %v, want %v", c.St.CwndPkts, c.St.CwndCnt, grew, tc.want)
			}
		})
	}
}

// pacer is pinned, and as a cong_control algorithm it paces at a fixed
// rate.
type pacer struct {
	pinned
	rate units.BitRate
}

func (p *pacer) CongControl(st *cc.State, _ *cc.RateSample) { st.PacingRate = p.rate }

// TestRunPacing checks the pacer against the bottleneck arithmetic: a flow
// allowed three BDPs in flight but paced at exactly the bottleneck rate
// builds no queue, so it sees the bare RTT and delivers at the bottleneck
// rate; unpaced, the same window queues two BDPs and triples the RTT.
func TestRunPacing(t *testing.T) {
	rate := units.RateOf(bdp*cctest.DefaultMSS, rtt) // the bottleneck
	for _, tc := range []struct {
		pacing bool
		want   sim.Duration
	}{{true, rtt}, {false, 3 * rtt}} {
		t.Run(fmt.Sprintf("pacing=%v", tc.pacing), func(t *testing.T) {
			c := newConn(&pacer{rate: rate}, 3*bdp)
			c.St.PacingRate = rate
			path := cctest.Path{RTT: rtt, BDPPkts: bdp, Pacing: tc.pacing}
			res := cctest.Run(c, path, sim.Second, nil)
			if got := c.St.SRTT; math.Abs(got.Seconds()/tc.want.Seconds()-1) > 0.02 {
				t.Errorf("srtt = %v, want %v ± 2%%", got, tc.want)
			}
			if got, want := float64(res.DeliveredPkts), bdp*sim.Second.Seconds()/rtt.Seconds(); math.Abs(got/want-1) > 0.02 {
				t.Errorf("delivered in 1 s = %.0f, want %.0f ± 2%%", got, want)
			}
		})
	}
}

// TestRunStepMarking checks MarkCE against queueing arithmetic: a window W
// above the BDP keeps W − BDP packets at the bottleneck, so in steady state
// each packet the sender releases finds W − BDP packets there (the one its
// ACK's packet made room for has just started service and still counts),
// and a step marker "more than K" marks every packet when K < W − BDP and
// none otherwise. The marks come back as CE on the packets' ACKs, with ECE.
func TestRunStepMarking(t *testing.T) {
	const w = 150
	for _, k := range []uint32{0, 20, 49, 50, 51, 100} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			c := newPinned(w)
			var deliv0, ce0 uint32
			var sawECE bool
			steady := sim.Time(0).Add(100 * sim.Millisecond) // after the first burst's ACKs
			cctest.Run(c, cctest.Path{RTT: rtt, BDPPkts: bdp, MarkCE: func(b uint32) bool { return b > k }}, sim.Second, func(c *cctest.Conn) {
				if c.St.Now < steady {
					deliv0, ce0 = c.St.Delivered, c.St.DeliveredCE
					return
				}
				sawECE = sawECE || c.St.CA == cc.CACWR
			})
			want := 0.0
			if k < w-bdp {
				want = 1
			}
			got := float64(c.St.DeliveredCE-ce0) / float64(c.St.Delivered-deliv0)
			if got != want {
				t.Errorf("marked fraction(W %d, BDP %d, K %d) = %v, want %v", w, bdp, k, got, want)
			}
			if sawECE != (want == 1) {
				t.Errorf("entered CWR on ECE = %v, want %v", sawECE, want == 1)
			}
		})
	}
}

// NewLink rejects a path it cannot build, naming the path.
func TestNewLinkRejectsBadPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    cctest.LinkPath
	}{
		{"no rate", cctest.LinkPath{RTT: sim.Millisecond}},
		{"no rtt", cctest.LinkPath{Rate: units.Mbps}},
		{"loss 1", cctest.LinkPath{Rate: units.Mbps, RTT: sim.Millisecond, LossProb: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cctest.NewLink("reno", tc.p, sim.Second); err == nil {
				t.Errorf("NewLink(%+v) = nil error, want one", tc.p)
			}
		})
	}
	if _, err := cctest.NewLink("no-such-cc", cctest.LinkPath{Rate: units.Mbps, RTT: sim.Millisecond}, sim.Second); err == nil {
		t.Errorf("NewLink(no-such-cc) = nil error, want the scenario's error")
	}
}
