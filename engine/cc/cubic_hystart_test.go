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
