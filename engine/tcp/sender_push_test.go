package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// A bulk flow's TSO chunks of two segments or more carry PSH on their last
// segment, as Linux 6.18's do on the wire, and the receiver answers the
// pushed segment at once (tcp_measure_rcv_mss sets ICSK_ACK_PUSHED, the read
// that empties the queue sends the ACK). The reference is a sender-side
// capture of the kernel (`ccscope emulate`, CUBIC unpaced on 50 Mbps over
// 40 ms, congestion avoidance from 4 to 10 s): every multi-segment burst,
// 5,564 of them of three segments, had PSH on its last segment and no other
// segment of it did; single segments had none (129 of 132); and 45 % of the
// ACKs covered one segment, 55 % two. Before, only a segment ending the
// application's write carried PSH, and every ACK covered two segments.
func TestChunkEndsCarryPSH(t *testing.T) {
	opts := shLinuxOpts()
	opts.Pacing = config.PacingAuto // CUBIC on a host without fq: unpaced
	h := shHarness{cc: "cubic", rate: 50 * units.Mbps, owd: 20 * sim.Millisecond, opts: opts}
	c := h.build(t)
	c.runUntil(sim.Time(3 * sim.Second))

	endPushed, multi := checkChunkPushes(t, c.fwd.log, -1)
	if multi < 100 {
		t.Fatalf("%d multi-segment bursts in 3 s, want hundreds", multi)
	}
	if share := float64(endPushed) / float64(multi); share < 0.95 {
		t.Errorf("bursts of two or more ending with PSH: %d of %d (%.3f), want at least 0.95 (the kernel's: 0.995)", endPushed, multi, share)
	}

	// The ACKs of congestion avoidance (from 1.5 s): how many segments each
	// newly covers.
	var one, two, other int
	var last uint64
	for _, x := range c.rev.log {
		if x.at < sim.Time(1500*sim.Millisecond) {
			last = max(last, x.ack)
			continue
		}
		if x.ack <= last {
			continue
		}
		switch n := (x.ack - last + 724) / 1448; n {
		case 1:
			one++
		case 2:
			two++
		default:
			other++
		}
		last = x.ack
	}
	total := one + two + other
	if total == 0 {
		t.Fatal("no ACKs after 1.5 s")
	}
	if share := float64(one) / float64(total); share < 0.35 || share > 0.55 {
		t.Errorf("ACKs covering one segment: %d of %d (%.2f), want about 0.45 as the kernel's receiver (two: %d, more: %d)", one, total, share, two, other)
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
