package cc

import "testing"

// TestHyStartRoundWrapsAsU32 traces hystart_update's round test by hand: the
// kernel starts a new round when after(ack, end_seq), a comparison of u32
// sequence numbers, so an end_seq 2^31 bytes or more behind snd_una (as
// after gigabytes acked outside slow start) reads as ahead of it and the
// old round goes on. A differential run against the compiled tcp_cubic.c
// found the 64-bit comparison resetting it.
func TestHyStartRoundWrapsAsU32(t *testing.T) {
	const end = 1_000
	for _, tc := range []struct {
		name     string
		una      uint64
		newRound bool
	}{
		{"just behind the end", end - 1, false},
		{"past the end", end + 1448, true},
		{"2^31 − 1448 past", end + 1<<31 - 1448, true},
		{"2^31 + 1448 past: behind as a u32", end + 1<<31 + 1448, false},
		{"2^32 + 1448 past: one wrap on", end + 1<<32 + 1448, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCubic(DefaultCubicParams())
			c.endSeq = end
			st := &State{SndUna: tc.una, SndNxt: tc.una + 100_000, CwndPkts: 2} // below the low window: no detector runs
			c.hystartUpdate(st, 40_000)
			if got := c.endSeq == st.SndNxt; got != tc.newRound {
				t.Errorf("snd_una %d, end_seq %d: new round %v, want %v", tc.una, end, got, tc.newRound)
			}
		})
	}
}

// TestSeqAfterIsTheKernels checks seqAfter and seqBefore against after()
// and before() of include/net/tcp.h, (s32)(seq2 − seq1) < 0 and
// (s32)(seq1 − seq2) < 0, worked by hand on unwrapped State numbers.
func TestSeqAfterIsTheKernels(t *testing.T) {
	for _, c := range []struct {
		a, b          uint64
		after, before bool
	}{
		{1448, 0, true, false},
		{0, 1448, false, true},
		{7, 7, false, false},
		{1000 + 1<<31 - 1, 1000, true, false},    // s32 gap 2^31 − 1
		{1000 + 1<<31, 1000, true, true},         // 2^31 apart: both, as −2^31 is its own negation
		{1000 + 1<<31 + 1448, 1000, false, true}, // reads as behind
		{1<<32 + 5, 3, true, false},              // one wrap on, 2 ahead
	} {
		if got := seqAfter(c.a, c.b); got != c.after {
			t.Errorf("seqAfter(%d, %d) = %v, want %v", c.a, c.b, got, c.after)
		}
		if got := seqBefore(c.a, c.b); got != c.before {
			t.Errorf("seqBefore(%d, %d) = %v, want %v", c.a, c.b, got, c.before)
		}
	}
}
