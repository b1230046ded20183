package cc_test

import (
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/units"
)

// PRR (RFC 6937 section 3) after one loss in a window of 20 with Reno's
// ssthresh of 10: while more than ssthresh is in flight, each ACK lets
// prr_out grow to ⌈prr_delivered·ssthresh/prior_cwnd⌉, i.e. one segment on
// every other ACK (the RFC's section 5 example), the first ACK forcing the
// fast retransmit; once in flight falls to ssthresh the window ends at it.
func TestPRRProportional(t *testing.T) {
	const prior, ssthresh = 20, 10
	st := cc.State{PriorCwndPkts: prior, SSThreshPkts: ssthresh}
	var p cc.PRR
	p.Start()
	inFlight := uint32(prior - 1) // one segment lost
	var sentOn []int
	ack := 1
	for ; ack <= 20; ack++ {
		inFlight-- // this ACK SACKs one segment
		p.CwndReduction(&st, inFlight, cc.PRRAck{NewlyAckedSacked: 1})
		if inFlight <= ssthresh {
			break
		}
		if st.CwndPkts > inFlight {
			n := st.CwndPkts - inFlight
			p.Sent(n)
			inFlight += n
			sentOn = append(sentOn, ack)
		}
		want := (uint32(ack)*ssthresh + prior - 1) / prior
		if p.Out != want {
			t.Fatalf("after ACK %d prr_out = %d, want ⌈%d·%d/%d⌉ = %d", ack, p.Out, ack, ssthresh, prior, want)
		}
	}
	// Eight segments sent on ACKs 1, 3, …, 15: ACK 17 leaves 19 − 17 + 8 =
	// 10 = ssthresh in flight, and PRR-SSRB then holds cwnd there.
	if ack != 17 || st.CwndPkts != ssthresh {
		t.Errorf("pipe reached ssthresh at ACK %d with cwnd %d, want ACK 17 and cwnd %d", ack, st.CwndPkts, ssthresh)
	}
	for i, ack := range sentOn {
		if ack != 2*i+1 {
			t.Errorf("PRR sent on ACKs %v, want every odd ACK 1, 3, 5, …", sentOn)
			break
		}
	}
}

// PRR-SSRB (RFC 6937 section 3.1): below ssthresh, sndcnt =
// MIN(ssthresh − pipe, MAX(prr_delivered − prr_out, DeliveredData) + 1) when
// the ACK advances snd_una and marks nothing lost; hand-computed cases.
func TestPRRSlowStartReductionBound(t *testing.T) {
	for _, tc := range []struct {
		name              string
		delivered, out    uint32 // prr_delivered, prr_out before the ACK
		inFlight          uint32 // pipe after the ACK
		ack               cc.PRRAck
		wantCwnd, wantDel uint32
	}{
		// max(4−2, 1) + 1 = 3 ≤ 10 − 4: cwnd = 4 + 3.
		{"una advanced", 3, 2, 4, cc.PRRAck{NewlyAckedSacked: 1, UnaAdvanced: true}, 7, 4},
		// A SACK-only ACK earns no extra segment: 4 + max(2, 1).
		{"sack only", 3, 2, 4, cc.PRRAck{NewlyAckedSacked: 1}, 6, 4},
		// A newly lost segment also withholds it.
		{"newly lost", 3, 2, 4, cc.PRRAck{NewlyAckedSacked: 1, NewlyLost: 1, UnaAdvanced: true}, 6, 4},
		// Bounded by ssthresh − pipe: max(13−6, 1) + 1 = 8 > 10 − 8 = 2.
		{"bounded by ssthresh", 12, 6, 8, cc.PRRAck{NewlyAckedSacked: 1, UnaAdvanced: true}, 10, 13},
		// Nothing delivered: no change (tcp_cwnd_reduction returns early).
		{"nothing delivered", 3, 2, 4, cc.PRRAck{}, 99, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := cc.State{PriorCwndPkts: 20, SSThreshPkts: 10, CwndPkts: 99}
			p := cc.PRR{Delivered: tc.delivered, Out: tc.out}
			p.CwndReduction(&st, tc.inFlight, tc.ack)
			if st.CwndPkts != tc.wantCwnd || p.Delivered != tc.wantDel {
				t.Errorf("cwnd, prr_delivered = %d, %d, want %d, %d", st.CwndPkts, p.Delivered, tc.wantCwnd, tc.wantDel)
			}
		})
	}
}

// tcp_update_pacing_rate: 200% of cwnd·mss/srtt below ssthresh/2, 120%
// after, hand-computed.
func TestPacingRate(t *testing.T) {
	for _, tc := range []struct {
		name                string
		cwnd, ssthresh, out uint32
		srttUs8             int64
		want                units.BitRate
	}{
		// 2 · 10 · 1448 B / 100 ms = 289600 B/s.
		{"slow start", 10, cc.InfiniteSSThresh, 0, 100_000 << 3, 289600 * 8},
		// 1.2 · 100 · 1448 B / 10 ms = 17376000 B/s.
		{"congestion avoidance", 100, 100, 50, 10_000 << 3, 17376000 * 8},
		// packets_out above cwnd counts: 1.2 · 150 · 1448 B / 10 ms.
		{"packets out above cwnd", 100, 100, 150, 10_000 << 3, 26064000 * 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := cc.State{MSS: 1448, CwndPkts: tc.cwnd, SSThreshPkts: tc.ssthresh}
			if got := cc.PacingRate(&st, tc.out, tc.srttUs8); got != tc.want {
				t.Errorf("PacingRate = %d bps, want %d", got, tc.want)
			}
		})
	}
}

// tcp_current_ssthresh: 3/4 of cwnd when above ssthresh outside a
// reduction, ssthresh itself during one.
func TestCurrentSSThresh(t *testing.T) {
	for _, tc := range []struct {
		ca             cc.CAState
		cwnd, ssthresh uint32
		want           uint32
	}{
		{cc.CAOpen, 40, 10, 30},
		{cc.CAOpen, 40, 35, 35},
		{cc.CARecovery, 40, 10, 10},
		{cc.CACWR, 40, 10, 10},
		{cc.CALoss, 40, 10, 30},
	} {
		st := cc.State{CA: tc.ca, CwndPkts: tc.cwnd, SSThreshPkts: tc.ssthresh}
		if got := cc.CurrentSSThresh(&st); got != tc.want {
			t.Errorf("CurrentSSThresh(%v, cwnd %d, ssthresh %d) = %d, want %d", tc.ca, tc.cwnd, tc.ssthresh, got, tc.want)
		}
	}
}
