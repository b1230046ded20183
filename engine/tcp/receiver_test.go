package tcp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/google/go-cmp/cmp"
)

const (
	ms = sim.Millisecond
	us = sim.Microsecond
)

// ackedAfter lists, for each ACK, how many segments of size mss it covers
// (ack-1)/mss: the index of the last segment it acknowledges.
func ackedAfter(acks []ackRec, mss uint64) []uint64 {
	var out []uint64
	for _, a := range acks {
		out = append(out, (a.Ack-1)/mss)
	}
	return out
}

// TestQuickAckThenEverySecond checks tcp_incr_quickack sizing and the
// every-second-segment rule of __tcp_ack_snd_check. Segments of 1448 B
// arrive 100 us apart, so ato stays TCP_ATO_MIN and no delayed-ACK timer
// fires while the burst lasts.
//
// With RcvBufInit 128 KiB the initial window is 65536 rounded down to
// 1448-byte segments, 65160, so quickacks = min(65160/(2·1448), 16) =
// min(22, 16) = 16. The first segment measures scaling_ratio 160 (1448 B in
// a 2304-byte skb), which lifts the window clamp from 64088 to 81920 and
// rcv_ssthresh to 65160; tcp_grow_window then raises rcv_ssthresh by 2896
// on each of segments 1..6, up to the free space (131072 − 2304)·160/256 =
// 80480, and each raise sets quick |= 1, an extra quick ACK while quick is
// even: segments 1..22 are ACKed one by one, then every second (24, 26,
// ...). A real 6.18 receiver does the same (its first ACKs offer 68096,
// 71040, ... up to 80512: these windows rounded up to the 128-byte scale).
// With 32 KiB: 16384 rounds down to 15928, quickacks = 15928/2896 = 5; the
// clamp becomes 20480 and rcv_ssthresh grows on segments 1 and 2 (to the
// free space, 19040), which leaves quick at 5 after the first |= 1 and at
// 4 after the ACK of each: segments 1..6 are ACKed one by one, then 8 and
// 10. Only 11 segments are sent then: the 12th completes the first
// window-based receiver RTT sample (rcv_nxt passes rcv_nxt + rcv_wnd of the
// first segment), after which DRS grows the buffer and tcp_grow_window asks
// for a quick ACK on every segment. Without delayed ACK, every segment.
func TestQuickAckThenEverySecond(t *testing.T) {
	every := func(from, to, step uint64) []uint64 {
		var v []uint64
		for i := from; i <= to; i += step {
			v = append(v, i)
		}
		return v
	}
	cases := []struct {
		name   string
		rcvBuf units.Bytes
		delack bool
		n      int
		want   []uint64
	}{
		{"128KiB", 128 * units.KiB, true, 30, append(every(1, 22, 1), every(24, 30, 2)...)},
		{"32KiB", 32 * units.KiB, true, 11, append(every(1, 6, 1), every(8, 11, 2)...)},
		{"no-delack", 128 * units.KiB, false, 30, every(1, 30, 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.RcvBufInit = c.rcvBuf
			o.DelayedAck = c.delack
			h := newHarness(t, o, EchoClassic)
			h.handshake(0, packet.NotECT)
			for i := range c.n {
				h.at(10*ms + sim.Duration(i)*100*us)
				h.seg(1+uint64(i)*1448, 1448, packet.NotECT, 0)
			}
			got := ackedAfter(h.acksFrom(0), 1448)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("segments ACKed (-want +got):\n%s\nlog:\n%s", d, h.log())
			}
		})
	}
}

// TestTrickleDelayedAck sends one full segment every 100 ms. After the 22
// quick ACKs (TestQuickAckThenEverySecond) each segment waits for the delayed-ACK timer: ato starts at
// TCP_ATO_MIN = 40 ms; every missed delayed ACK doubles ato (at most the
// RTO = 10 ms + max(2·10 ms, 200 ms) = 210 ms), but tcp_send_delayed_ack
// bounds the timeout by max(srtt, TCP_DELACK_MIN) = max(10, 40) = 40 ms.
// The timer is due 40 ticks after the tick the segment arrives in, on
// level 0 of the timer wheel (delays under 63 ticks), whose timers fire at
// the tick after they are due (calc_index rounds up so that none fires
// early): each segment arrives on a tick boundary, and its ACK leaves 41 ms
// later. With PSH set, the
// application's read finds a pushed segment and tcp_cleanup_rbuf ACKs at
// once.
func TestTrickleDelayedAck(t *testing.T) {
	cases := []struct {
		name  string
		flags packet.Flags
		delay sim.Duration
	}{
		{"full-size", 0, 41 * ms},
		{"psh", packet.PSH, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, defaultOpts(), EchoClassic)
			h.handshake(0, packet.NotECT)
			const n = 24
			for i := range n {
				h.at(10*ms + sim.Duration(i)*100*ms)
				h.seg(1+uint64(i)*1448, 1448, packet.NotECT, c.flags)
			}
			h.at(10*ms + n*100*ms)
			acks := h.acksFrom(0)
			if len(acks) != n {
				t.Fatalf("ACKs = %d, want %d\n%s", len(acks), n, h.log())
			}
			for i, a := range acks {
				arrive := 10*ms + sim.Duration(i)*100*ms
				want := arrive
				if i >= 22 {
					want += c.delay
				}
				if sim.Duration(a.At) != want || a.Ack != 1+uint64(i+1)*1448 {
					t.Errorf("ACK %d at %v ack=%d, want at %v ack=%d", i, sim.Duration(a.At), a.Ack, want, 1+uint64(i+1)*1448)
				}
			}
		})
	}
}

// TestOutOfOrderSack checks the SACK block order rules of RFC 2018 §4 as
// tcp_sack_new_ofo_skb implements them (the block containing the most
// recent segment first), the first three duplicate ACKs being immediate
// (__tcp_ack_snd_check's dup_ack_counter) and the immediate ACK when the
// hole fills (RFC 5681 §4.2, ICSK_ACK_NOW). Segments are 1000 B (MSS 1000);
// 20 in-order segments first use up the 16 quick ACKs.
func TestOutOfOrderSack(t *testing.T) {
	o := defaultOpts()
	o.MSS = 1000
	h := newHarness(t, o, EchoClassic)
	h.handshake(0, packet.NotECT)
	for i := range 20 {
		h.at(10*ms + sim.Duration(i)*100*us)
		h.seg(1+uint64(i)*1000, 1000, packet.NotECT, 0)
	}
	mark := len(h.out.acks)
	// rcv_nxt = 20001. Holes: 20001-21001 and 22001-23001.
	steps := []struct {
		seq  uint64
		want string
	}{
		{21001, "ack=20001 sack=21001-22001"},
		{23001, "ack=20001 sack=23001-24001 sack=21001-22001"},
		{22001, "ack=20001 sack=21001-24001"}, // fills the second hole: blocks coalesce
		{20001, "ack=24001"},                  // fills the first: ofo queue empties
	}
	for i, st := range steps {
		h.at(20*ms + sim.Duration(i)*ms)
		h.seg(st.seq, 1000, packet.NotECT, 0)
		acks := h.acksFrom(mark)
		if len(acks) != 1 {
			t.Fatalf("segment %d: %d ACKs, want 1 immediate\n%s", st.seq, len(acks), h.log())
		}
		if got := ackBody(acks[0]); got != st.want || acks[0].At != h.s.Now() {
			t.Errorf("segment %d: ACK %q at %v, want %q at %v", st.seq, got, acks[0].At, st.want, h.s.Now())
		}
		mark = len(h.out.acks)
	}
}

// ackBody is an ACK without its time and window.
func ackBody(a ackRec) string {
	var out []string
	for _, f := range strings.Fields(a.String())[1:] {
		if !strings.HasPrefix(f, "win=") {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// TestDSack checks RFC 2883 reporting: a duplicate segment is reported in
// a D-SACK block placed first, followed by the SACK blocks (§4: "the first
// SACK block ... MUST specify the contiguous sequence space of the
// duplicate"; §4.1.2 example 2: the D-SACK block is followed by the SACK
// block that contains it). All ACKs here are immediate: the connection is
// in quick-ACK mode, and an old duplicate enters it again
// (tcp_enter_quickack_mode(TCP_MAX_QUICKACKS)).
func TestDSack(t *testing.T) {
	o := defaultOpts()
	o.MSS = 1000
	cases := []struct {
		name string
		segs [][2]uint64 // seq, len
		want string      // the last ACK
	}{
		{"old duplicate", [][2]uint64{{1, 1000}, {1001, 1000}, {1, 1000}}, "ack=2001 sack=1-1001"},
		{"partial overlap with rcv_nxt", [][2]uint64{{1, 1000}, {501, 1000}}, "ack=1501 sack=501-1001"},
		{"duplicate below an ofo block", [][2]uint64{{1, 1000}, {1001, 1000}, {3001, 1000}, {1001, 1000}},
			"ack=2001 sack=1001-2001 sack=3001-4001"},
		{"duplicate of an ofo block", [][2]uint64{{1, 1000}, {3001, 1000}, {5001, 1000}, {3001, 1000}},
			"ack=1001 sack=3001-4001 sack=3001-4001 sack=5001-6001"},
		{"hole fill overlapping ofo data", [][2]uint64{{1, 1000}, {2001, 1000}, {1001, 1500}},
			"ack=3001 sack=2001-2501"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, o, EchoClassic)
			h.handshake(0, packet.NotECT)
			for i, s := range c.segs {
				h.at(10*ms + sim.Duration(i)*ms)
				h.seg(s[0], uint32(s[1]), packet.NotECT, 0)
			}
			acks := h.acksFrom(0)
			last := acks[len(acks)-1]
			if got := ackBody(last); got != c.want || last.At != h.s.Now() {
				t.Errorf("last ACK %q at %v, want %q at %v\n%s", got, last.At, c.want, h.s.Now(), h.log())
			}
			if h.r.Stats().DSacks != 1 {
				t.Errorf("DSacks = %d, want 1", h.r.Stats().DSacks)
			}
		})
	}
}

// TestFourHolesThreeBlocks: four out-of-order runs are remembered
// (TCP_NUM_SACKS = 4) but only three blocks fit beside the timestamp
// option, most recent first (RFC 2018 §4); the SACK option makes the ACK
// 52 + 4 + 3·8 = 80 bytes.
func TestFourHolesThreeBlocks(t *testing.T) {
	o := defaultOpts()
	o.MSS = 1000
	h := newHarness(t, o, EchoClassic)
	h.handshake(0, packet.NotECT)
	for i, seq := range []uint64{1, 2001, 4001, 6001, 8001} {
		h.at(10*ms + sim.Duration(i)*ms)
		h.seg(seq, 1000, packet.NotECT, 0)
	}
	acks := h.acksFrom(0)
	last := acks[len(acks)-1]
	want := "ack=1001 sack=8001-9001 sack=6001-7001 sack=4001-5001"
	if got := ackBody(last); got != want || last.Size != 80 {
		t.Errorf("last ACK %q size %d, want %q size 80", got, last.Size, want)
	}
	// Filling the first hole drops the covered block [2001,3001); the three
	// most recent remain.
	h.at(20 * ms)
	h.seg(1001, 1000, packet.NotECT, 0)
	acks = h.acksFrom(0)
	last = acks[len(acks)-1]
	want = "ack=3001 sack=8001-9001 sack=6001-7001 sack=4001-5001"
	if got := ackBody(last); got != want {
		t.Errorf("after fill: ACK %q, want %q", got, want)
	}
}

// TestSackCompression: with delayed ACKs in force (quick ACKs used up), the
// first TCP_FASTRETRANS_THRESH = 3 duplicate ACKs for one rcv_nxt go out at
// once; later ones are compressed into one ACK sent when the hrtimer
// fires: delay = min(comp_sack_delay_ns = 1 ms, rtt/20) plus the 100 us
// slack. With a 10 ms RTT (SYN-ACK RTT and timestamp RTT both 10 ms) that
// is 500 us + 100 us; with no receiver RTT estimate yet (rcv_rtt_est = 0,
// which the kernel does not replace by srtt) it is 0 + 100 us.
func TestSackCompression(t *testing.T) {
	cases := []struct {
		name  string
		tsEcr bool
		delay sim.Duration
	}{
		{"rtt 10ms", true, 600 * us},
		{"no rcv rtt", false, 100 * us},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.MSS = 1000
			h := newHarness(t, o, EchoClassic)
			h.at(10 * ms)
			h.syn(0, packet.NotECT)
			for i := range 20 {
				h.at(20*ms + sim.Duration(i)*100*us)
				ecr := uint32(0)
				if c.tsEcr {
					ecr = tsNow(h.s.Now()) - 10 // our TSVal from 10 ms ago
				}
				h.segTS(1+uint64(i)*1000, 1000, packet.NotECT, 0, ecr)
			}
			mark := len(h.out.acks)
			// rcv_nxt = 20001; eight segments beyond a hole, 10 us apart.
			start := 30 * ms
			for i := range 8 {
				h.at(start + sim.Duration(i)*10*us)
				h.seg(21001+uint64(i)*1000, 1000, packet.NotECT, 0)
			}
			h.at(40 * ms)
			acks := h.acksFrom(mark)
			var times []sim.Duration
			for _, a := range acks {
				times = append(times, sim.Duration(a.At)-start)
			}
			// Three immediate dupacks (at 0, 10, 20 us); the fourth
			// segment (30 us) starts the timer.
			want := []sim.Duration{0, 10 * us, 20 * us, 30*us + c.delay}
			if d := cmp.Diff(want, times); d != "" {
				t.Fatalf("ACK times after the first ofo segment (-want +got):\n%s\n%s", d, h.log())
			}
			if got, w := ackBody(acks[3]), "ack=20001 sack=21001-29001"; got != w {
				t.Errorf("compressed ACK %q, want %q", got, w)
			}
			if got := h.r.Stats().CompressedAcks; got != 4 {
				t.Errorf("CompressedAcks = %d, want 4 (5 dupacks folded into 1)", got)
			}
		})
	}
}

// ecnRun delivers segments of 1448 B, 100 us apart from 10 ms, with the
// given codepoints and flags, after a handshake with syn flags.
func ecnRun(t *testing.T, echo EchoMode, synFlags packet.Flags, ecns []packet.ECN, flags map[int]packet.Flags) *harness {
	o := defaultOpts()
	o.ECN = true
	h := newHarness(t, o, echo)
	h.handshake(synFlags, packet.NotECT)
	for i, e := range ecns {
		h.at(10*ms + sim.Duration(i)*100*us)
		h.seg(1+uint64(i)*1448, 1448, e, flags[i])
	}
	return h
}

// repeat returns n copies of e.
func repeat(e packet.ECN, n int) []packet.ECN {
	v := make([]packet.ECN, n)
	for i := range v {
		v[i] = e
	}
	return v
}

// ackLines renders ACKs as "last segment ACKed[ ecn flags]", segments
// being 1448 bytes from sequence 1.
func ackLines(acks []ackRec) []string {
	var out []string
	for _, a := range acks {
		s := strconv.FormatUint((a.Ack-1)/1448, 10)
		for _, f := range []struct {
			f packet.Flags
			n string
		}{{packet.AE, " ae"}, {packet.CWR, " cwr"}, {packet.ECE, " ece"}} {
			if a.Flags&f.f != 0 {
				s += f.n
			}
		}
		out = append(out, s)
	}
	return out
}

// TestClassicECE: RFC 3168 §6.1.3. 26 ECT(0) segments (22 quick ACKs, see
// TestQuickAckThenEverySecond, then ACKs at 24 and 26); segment 27 is CE:
// ECE is latched and quick-ACK mode entered with 2 ACKs
// (tcp_enter_quickack_mode(sk, 2)), so 27 and 28 are ACKed at once, 29
// waits and 30 completes the pair, all with ECE. Segment 31 carries CWR:
// ECE stops and, the sender's window being possibly tiny, it is ACKed at
// once (tcp_ecn_accept_cwr). 32 waits, 33 pairs, without ECE.
func TestClassicECE(t *testing.T) {
	ecns := append(repeat(packet.ECT0, 26), packet.CE)
	ecns = append(ecns, repeat(packet.ECT0, 6)...)
	h := ecnRun(t, EchoClassic, packet.ECE|packet.CWR, ecns, map[int]packet.Flags{30: packet.CWR})
	if syn := h.out.acks[0]; syn.Flags != packet.SYN|packet.ACK|packet.ECE {
		t.Errorf("SYN-ACK flags %b, want SYN|ACK|ECE", syn.Flags)
	}
	got := ackLines(h.acksFrom(0))[22:]
	want := []string{"24", "26", "27 ece", "28 ece", "30 ece", "31", "33"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ACKs after the quick ones (-want +got):\n%s", d)
	}
}

// TestDCTCPEcho follows dctcp_ece_ack_update by hand for CE pattern
// 0,0,1,1,0 on segments 27..31, after 26 ECT(0) segments (the 22 quick
// ACKs used up; ACKs at 24 and 26, so nothing is pending):
//
//	27 ECT  no flip; 1 segment unACKed → delayed-ACK timer armed
//	28 ECT  no flip; 2 segments → ACK 28, no ECE
//	29 CE   flip 0→1, no timer pending → ACK_NOW: ACK 29 with ECE
//	30 CE   no flip → timer armed
//	31 ECT  flip 1→0 with the timer pending → first ACK 30 with the old
//	        state (ECE), then ACK_NOW: ACK 31 without ECE
//
// So every byte's ECE matches the CE mark it arrived with. In quick-ACK
// mode every segment is ACKed with its own mark.
func TestDCTCPEcho(t *testing.T) {
	ce := []packet.ECN{packet.ECT0, packet.ECT0, packet.CE, packet.CE, packet.ECT0}
	cases := []struct {
		name   string
		prefix int
		want   []string
	}{
		{"delayed", 26, []string{"28", "29 ece", "30 ece", "31"}},
		{"quick", 0, []string{"1", "2", "3 ece", "4 ece", "5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ecns := append(repeat(packet.ECT0, c.prefix), ce...)
			h := ecnRun(t, EchoDCTCP, packet.ECE|packet.CWR, ecns, nil)
			h.at(sim.Second)
			all := ackLines(h.acksFrom(0))
			got := all
			if c.prefix > 0 {
				got = all[24:] // 22 quick ACKs and the ACKs of 24 and 26
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("ACKs (-want +got):\n%s", d)
			}
		})
	}
}

// TestAccECN: RFC 9768. The SYN asks for AccECN (AE, CWR, ECE) and arrives
// Not-ECT, so the SYN-ACK carries (AE, CWR, ECE) = 010 (Table 2). r.cep
// starts at 5, r.e1b at 1, r.ceb at 0 (§3.2.1). 26 ECT(1) segments (ACKs at
// 1..22, 24, 26), then CE on 27, 28, 29 and ECT(1) on 30, 31. Linux 6.18
// (tcp_ecn_received_counters) ACKs at once on every change of the IP-ECN
// field, and has no increment trigger a pure receiver meets:
//
//	27 ECT(1) → CE: change-triggered ACK: cep 6, ACE 110 (ae cwr)
//	28 CE, 1 segment unACKed → delayed
//	29 CE, the second segment → ACK: cep 8, ACE 000
//	30 CE → ECT(1): change-triggered ACK, cep 8
//	31 ECT(1), 1 segment unACKed → the delayed-ACK timer's ACK
//
// Byte counters at the end: e1b = 1 + 28·1448 = 40545, ceb = 3·1448 = 4344.
func TestAccECN(t *testing.T) {
	ecns := append(repeat(packet.ECT1, 26), packet.CE, packet.CE, packet.CE, packet.ECT1, packet.ECT1)
	h := ecnRun(t, EchoAccECN, packet.AE|packet.CWR|packet.ECE, ecns, nil)
	h.at(sim.Second)
	if syn := h.out.acks[0]; syn.Flags != packet.SYN|packet.ACK|packet.CWR {
		t.Errorf("SYN-ACK flags %b, want SYN|ACK|CWR (ACE 010)", syn.Flags)
	}
	acks := h.acksFrom(0)
	// Before any CE, ACE = 5 = 101 (ae ece).
	if got := ackLines(acks[:1]); got[0] != "1 ae ece" {
		t.Errorf("first ACK %q, want %q", got[0], "1 ae ece")
	}
	got := ackLines(acks)[22:]
	want := []string{"24 ae ece", "26 ae ece", "27 ae cwr", "29", "30", "31"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ACKs after the quick ones (-want +got):\n%s", d)
	}
	last := acks[len(acks)-1]
	if w := [3]uint32{8, 40545, 4344}; last.AccECN != w {
		t.Errorf("AccECN counters %v, want %v", last.AccECN, w)
	}
}

// TestECNNegotiation: the SYN-ACK answers RFC 3168 and RFC 9768 requests
// according to the receiver's switches, and a duplicate SYN gets another
// SYN-ACK.
func TestECNNegotiation(t *testing.T) {
	cases := []struct {
		name  string
		ecn   bool
		echo  EchoMode
		syn   packet.Flags
		ip    packet.ECN
		flags packet.Flags
	}{
		{"no ecn requested", true, EchoClassic, 0, packet.NotECT, 0},
		{"ecn off", false, EchoClassic, packet.ECE | packet.CWR, packet.NotECT, 0},
		{"classic", true, EchoClassic, packet.ECE | packet.CWR, packet.NotECT, packet.ECE},
		{"dctcp", true, EchoDCTCP, packet.ECE | packet.CWR, packet.NotECT, packet.ECE},
		{"accecn not-ect", true, EchoAccECN, packet.AE | packet.ECE | packet.CWR, packet.NotECT, packet.CWR},
		{"accecn ect1", true, EchoAccECN, packet.AE | packet.ECE | packet.CWR, packet.ECT1, packet.CWR | packet.ECE},
		{"accecn ect0", true, EchoAccECN, packet.AE | packet.ECE | packet.CWR, packet.ECT0, packet.AE},
		{"accecn ce", true, EchoAccECN, packet.AE | packet.ECE | packet.CWR, packet.CE, packet.AE | packet.CWR},
		{"accecn asked, classic server", true, EchoClassic, packet.AE | packet.ECE | packet.CWR, packet.NotECT, packet.ECE},
		{"classic asked, accecn server", true, EchoAccECN, packet.ECE | packet.CWR, packet.NotECT, packet.ECE},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.ECN = c.ecn
			h := newHarness(t, o, c.echo)
			h.syn(c.syn, c.ip)
			h.at(1 * sim.Second)
			h.syn(c.syn, c.ip)
			if len(h.out.acks) != 2 {
				t.Fatalf("%d packets, want 2 SYN-ACKs", len(h.out.acks))
			}
			for i, a := range h.out.acks {
				want := packet.SYN | packet.ACK | c.flags
				if a.Flags != want || a.Ack != 1 || a.Wnd != 65160 {
					t.Errorf("SYN-ACK %d: flags %b ack %d wnd %d, want flags %b ack 1 wnd 65160", i, a.Flags, a.Ack, a.Wnd, want)
				}
			}
		})
	}
}

// TestGRO: with a 100 us coalescing interval, ten segments arriving 10 us
// apart (all within one timestamp tick, so their options match) form one
// aggregate flushed 100 us after the first; TCP sees 14480 bytes at once,
// more than one MSS, and ACKs once. A CE mark on the sixth (a different
// ECN field) splits them in three: 23..27 (flushed by the CE packet,
// ACKed: five segments), 28 alone (one segment: the ACK is delayed; ECN
// was not negotiated so CE means nothing) and 29..32 flushed by the timer
// and ACKed with 28. With interval 0 nothing is held: after
// the quick ACKs, every second segment is ACKed.
func TestGRO(t *testing.T) {
	cases := []struct {
		name     string
		interval sim.Duration
		ceAt     int // segment index with CE, or -1
		wantAcks []string
		flushes  uint64
	}{
		{"100us", 100 * us, -1, []string{"32"}, 1},
		{"split by CE", 100 * us, 5, []string{"27", "32"}, 3},
		{"interval 0", 0, -1, []string{"24", "26", "28", "30", "32"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultOpts()
			o.GRO = true
			o.GROInterval = c.interval
			h := newHarness(t, o, EchoClassic)
			h.handshake(0, packet.NotECT)
			// 22 segments 1 ms apart use up the quick ACKs
			// (TestQuickAckThenEverySecond).
			for i := range 22 {
				h.at(10*ms + sim.Duration(i)*ms)
				h.seg(1+uint64(i)*1448, 1448, packet.NotECT, 0)
			}
			h.at(40 * ms)
			mark := len(h.out.acks)
			before := h.r.Stats().GROFlushes
			for i := range 10 {
				h.at(50*ms + sim.Duration(i)*10*us)
				e := packet.NotECT
				if i == c.ceAt {
					e = packet.CE
				}
				h.seg(1+uint64(22+i)*1448, 1448, e, 0)
			}
			h.at(50*ms + 200*us)
			got := ackLines(h.acksFrom(mark))
			if d := cmp.Diff(c.wantAcks, got); d != "" {
				t.Errorf("ACKs (-want +got):\n%s\n%s", d, h.log())
			}
			if f := h.r.Stats().GROFlushes - before; f != c.flushes {
				t.Errorf("GRO flushes = %d, want %d", f, c.flushes)
			}
		})
	}
}

// TestOutOfWindow: after the first segment the receiver offered 68096
// bytes from rcv_nxt = 1449 (rcv_ssthresh 65160 grown by two segments, see
// TestQuickAckThenEverySecond, 68056, rounded up to the scale unit of 128:
// the kernel's pcap shows 68096), so the window ends at 69545. A segment
// starting at or beyond that edge is dropped (tcp_sequence, or
// tcp_data_queue's "out of window" check) and answered by an immediate
// duplicate ACK without SACK blocks; nothing is queued.
func TestOutOfWindow(t *testing.T) {
	for _, seq := range []uint64{69545, 69546, 200000} {
		h := newHarness(t, defaultOpts(), EchoClassic)
		h.handshake(0, packet.NotECT)
		h.at(10 * ms)
		h.seg(1, 1448, packet.NotECT, 0)
		h.at(11 * ms)
		h.seg(seq, 1448, packet.NotECT, 0)
		acks := h.acksFrom(0)
		if got := ackBody(acks[len(acks)-1]); len(acks) != 2 || got != "ack=1449" || acks[1].At != h.s.Now() {
			t.Errorf("seq %d: %d ACKs, last %q at %v, want 2, %q at %v", seq, len(acks), got, acks[len(acks)-1].At, "ack=1449", h.s.Now())
		}
		if n := h.r.Stats().OfoSegments; n != 0 {
			t.Errorf("seq %d: OfoSegments = %d, want 0", seq, n)
		}
	}
}

// A segment across the window's right edge (69545, as in TestOutOfWindow)
// is accepted only into an empty receive queue (tcp_sequence, 6.18): while
// the application reads, it is queued out of order; while the first
// segment waits unread, it is dropped and answered by a duplicate ACK.
func TestAcrossTheWindowEdge(t *testing.T) {
	for _, unread := range []bool{false, true} {
		h := newHarness(t, defaultOpts(), EchoClassic)
		h.r.readStopped = unread
		h.handshake(0, packet.NotECT)
		h.at(10 * ms)
		h.seg(1, 1448, packet.NotECT, 0)
		h.at(11 * ms)
		h.seg(69545-100, 1448, packet.NotECT, 0)
		acks := h.acksFrom(0)
		last := acks[len(acks)-1]
		queued := h.r.Stats().OfoSegments == 1
		if queued == unread || unread && (ackBody(last) != "ack=1449" || last.At != h.s.Now()) {
			t.Errorf("data unread %v: queued out of order %v, last ACK %q at %v; want queued %v and, when dropped, a dupack now",
				unread, queued, ackBody(last), last.At, !unread)
		}
	}
}

// GRO merges by size only (skb_gro_receive: the aggregate, IP and TCP
// headers included, stays below 64 KB): 45 segments of 1,448 bytes make
// 65,212 B and merge, the 46th starts the next aggregate. And a segment
// carrying CWR reaches TCP alone: tcp_gro_receive flushes on CWR in the
// arriving segment, and on any flag difference but FIN and PSH with the
// held one, so nothing merges into a held CWR segment either.
func TestGROAggregates(t *testing.T) {
	o := defaultOpts()
	o.GRO, o.GROInterval = true, sim.Millisecond
	h := newHarness(t, o, EchoClassic)
	h.handshake(0, packet.NotECT)
	h.at(10 * ms)
	for i := range uint64(46) {
		h.seg(1+i*1448, 1448, packet.NotECT, 0)
	}
	h.at(20 * ms)
	if got := h.r.stats.GROFlushes; got != 2 {
		t.Errorf("46 segments at once: %d GRO aggregates, want 2 (45 and 1)", got)
	}
	if ack := h.out.acks[1].Ack; ack != 1+45*1448 {
		t.Errorf("the first aggregate's ACK acks %d, want %d (45 segments)", ack, 1+45*1448)
	}
	flushes := h.r.stats.GROFlushes
	h.seg(1+46*1448, 1448, packet.NotECT, packet.CWR)
	h.seg(1+47*1448, 1448, packet.NotECT, 0)
	h.at(30 * ms)
	if got := h.r.stats.GROFlushes - flushes; got != 2 {
		t.Errorf("a CWR segment and the next: %d GRO aggregates, want 2", got)
	}
}

// tcp_synack_rtt_meas takes the SYN-ACK's RTT in microseconds only while no
// SYN-ACK was sent again (req->num_retrans 0); after a retransmitted SYN
// drew a second one, the RTT comes from the ACK's echo of the SYN-ACK
// timestamp, in whole milliseconds. SYN at 0, the first data 40.4 ms after
// the (last) SYN-ACK: srtt 40,400 µs, or 40,000 when the SYN came again at
// 1 s (it had been 40,400 from the SYN-ACK of 1 s).
func TestSynAckRTTAfterItsRetransmission(t *testing.T) {
	for _, tc := range []struct {
		resent bool
		want   uint32
	}{{false, 40_400}, {true, 40_000}} {
		h := newHarness(t, defaultOpts(), EchoClassic)
		h.handshake(0, packet.NotECT)
		last := sim.Duration(0)
		if tc.resent {
			last = sim.Second
			h.at(last)
			h.syn(0, packet.NotECT)
		}
		h.at(last + 40_400*sim.Microsecond)
		h.segTS(1, 1448, packet.NotECT, 0, tsNow(sim.Time(last)))
		if got := h.r.ack.srttUs >> 3; got != tc.want {
			t.Errorf("SYN-ACK sent again %v: srtt %d µs, want %d", tc.resent, got, tc.want)
		}
	}
}

// The receiver's one RTT sample comes from the SYN-ACK (tcp_synack_rtt_meas)
// and may be 0 µs: tcp_rtt_estimator then keeps srtt_us at its floor of 1,
// so __tcp_set_rto adds srtt_us >> 3 = 0 to rttvar's 200 ms, 50 ticks at
// HZ 250 (flooring the sample at 1 µs gave usecs_to_jiffies(200,001) = 51).
// After a 40 ms handshake: 40 + 200 ms = 240 ms, 60 ticks.
func TestReceiverRTOFromSynAck(t *testing.T) {
	for _, tc := range []struct {
		rtt      sim.Duration
		srtt     uint32
		rtoTicks int64
	}{{0, 1, 50}, {40 * ms, 320000, 60}} {
		o := defaultOpts()
		o.HZ = 250
		h := newHarness(t, o, EchoClassic)
		h.handshake(0, packet.NotECT)
		h.at(tc.rtt)
		h.seg(1, 1448, packet.NotECT, 0)
		if h.r.ack.srttUs != tc.srtt || h.r.ack.rto != tc.rtoTicks {
			t.Errorf("handshake of %v: srtt_us %d, rto %d ticks; want %d and %d", tc.rtt, h.r.ack.srttUs, h.r.ack.rto, tc.srtt, tc.rtoTicks)
		}
	}
}
