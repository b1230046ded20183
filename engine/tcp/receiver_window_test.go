package tcp

import (
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/google/go-cmp/cmp"
)

// TestAutotuning drives a window-limited sender with a 10 ms RTT (the
// SYN-ACK RTT, and every segment echoes a timestamp of ours 10 ms old):
// each round it sends floor(window/1448) segments 1 us apart, the window
// being the one of the last ACK. Hand derivation (MSS 1448, RcvBufInit
// 128 KiB, scaling ratio 1/2):
//
//	establish: clamp = 65536 − 1448 = 64088 (tcp_init_buffer_space), and
//	  rcv_ssthresh = min(65160, 64088) = 64088; rcvq_space = 10·1448 = 14480.
//	round 0 (20 ms): 45 segments, no room to grow: window 64088.
//	round 1 (30 ms): 44 segments. The first one's read is one RTT after
//	  establishment: copied = 46·1448 = 66608 > 14480, so
//	  rcvwin = 2·66608 + 16·1448 = 156384,
//	  grow = 156384·(66608 − 14480)/14480 = 562982,
//	  rcvwin += 2·grow → 1282348, rcvbuf = 2·rcvwin = 2564696, capped by
//	  tcp_rmem[2]; clamp = rcvbuf/2. The other 43 segments each grow
//	  rcv_ssthresh by 2·1448: 64088 + 43·2896 = 188616.
//	round 2 (40 ms): 130 segments; DRS sees 44·1448 < 66608 (no change);
//	  rcv_ssthresh grows until capped by tcp_space = rcvbuf/2 − 1448 (the
//	  segment being processed is still unread): with 1 MiB that is 522840.
//	round 3: stays at the cap.
func TestAutotuning(t *testing.T) {
	cases := []struct {
		name       string
		max        units.Bytes
		wantWnd    []uint32
		wantRcvBuf units.Bytes
	}{
		{"1MiB", units.MiB, []uint32{64088, 188616, 522840, 522840}, units.MiB},
		{"6MiB", 6 * units.MiB, []uint32{64088, 188616, 188616 + 130*2896}, 2564696},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.RcvBufMax = c.max
			h := newHarness(t, o, EchoClassic)
			h.at(10 * ms)
			h.syn(0, packet.NotECT)
			seq := uint64(1)
			wnd := uint64(65160) // from the SYN-ACK
			var got []uint32
			for r := range len(c.wantWnd) {
				start := 20*ms + sim.Duration(r)*10*ms
				for i := range wnd / 1448 {
					h.at(start + sim.Duration(i)*us)
					h.segTS(seq, 1448, packet.NotECT, 0, tsNow(h.s.Now())-10)
					seq += 1448
				}
				last := h.out.acks[len(h.out.acks)-1]
				got = append(got, last.Wnd)
				wnd = uint64(last.Wnd)
			}
			if d := cmp.Diff(c.wantWnd, got); d != "" {
				t.Errorf("window at the end of each round (-want +got):\n%s", d)
			}
			if h.r.RcvBuf() != c.wantRcvBuf {
				t.Errorf("RcvBuf = %d, want %d", h.r.RcvBuf(), c.wantRcvBuf)
			}
		})
	}
}
