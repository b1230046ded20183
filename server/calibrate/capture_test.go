package calibrate

import (
	"strings"
	"testing"
)

// TestParseSSInfo reads a details line that `ss -tin` (iproute2 6.1)
// printed for an emulated CUBIC flow, field by field.
func TestParseSSInfo(t *testing.T) {
	const line = "cubic wscale:7,7 rto:268 rtt:65.61/15.127 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:311 ssthresh:296 bytes_sent:4114712 bytes_retrans:128872 bytes_acked:3542753 segs_out:2845 segs_in:1542 data_segs_out:2843 send 54909678bps lastrcv:800 lastack:20 pacing_rate 65891488bps/9223372036854775808bps delivery_rate 48285928bps delivered:2449 busy:800ms rwnd_limited:32ms(4.0%) unacked:306 retrans:0/89 rcv_space:14480 rcv_ssthresh:64088 notsent:1490496 minrtt:40.355 snd_wnd:3569280"
	s, err := parseSSInfo(line)
	if err != nil {
		t.Fatal(err)
	}
	want := Sample{RTTUs: 65610, RTTVarUs: 15127, MinRTTUs: 40355, MSS: 1448, Cwnd: 311, SSThresh: 296,
		BytesSent: 4114712, BytesAcked: 3542753, Delivered: 2449, TotalRetrans: 89, SndWnd: 3569280,
		PacingRateBps: 65891488, DeliveryRateBps: 48285928}
	if s != want {
		t.Errorf("parseSSInfo = %+v\nwant %+v", s, want)
	}
}

// TestParseSSRate checks ss's rate formats (misc/ss.c sprint_bw prints
// bits per second with a decimal prefix, or raw with -n style output).
func TestParseSSRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"48285928bps", 48285928}, {"48.3Mbps", 48300000}, {"950Kbps", 950000}, {"1.2Gbps", 1200000000}, {"800bps", 800},
		{"65891488bps/9223372036854775808bps", 65891488}} {
		got, err := parseSSRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseSSRate(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// TestDeduceSynthetic checks the deduction on a hand-built capture of a
// 20 Mbps path with a 30 ms floor and a 100 KB buffer: the standing-queue
// samples deliver 20e6 × 1448/1500 bit/s of payload; tcpi_min_rtt is the
// handshake's, the floor plus a SYN's and a SYN-ACK's 52 bytes (41.6 µs at
// 20 Mbps), and a data segment's RTT is at least the floor plus one segment
// (600 µs) and one ACK (20.8 µs); srtt rises to that plus the full
// buffer's 40 ms and holds there.
func TestDeduceSynthetic(t *testing.T) {
	payload := int64(20e6) * 1448 / 1500
	var ss []Sample
	for i := 0; i < 100; i++ {
		rtt := uint32(min(30620+500*i, 70220)) // 30.62 ms, rising to 70.22 ms and holding there
		if i == 50 {
			rtt = 150000 // one host stall: ignored
		}
		ss = append(ss, Sample{TUs: int64(i) * 10000, Cwnd: 10, RTTUs: rtt, MinRTTUs: 30041, MSS: 1448,
			DeliveryRateBps: payload, BytesAcked: uint64(i) * 25000})
	}
	p, err := Deduce(ss)
	if err != nil {
		t.Fatal(err)
	}
	// The payload rate is an integer (truncated), so the wire rate comes
	// back within a bit per second.
	if p.RateBps < 20e6-1 || p.RateBps > 20e6 {
		t.Errorf("rate = %d, want 20000000 (−1)", p.RateBps)
	}
	if want := int64(30041 - 41); p.FloorUs != want {
		t.Errorf("floor = %d µs, want %d", p.FloorUs, want)
	}
	if want := int64(70220-30620) * 20 / 8; p.BufferBytes < want-1 || p.BufferBytes > want {
		t.Errorf("buffer = %d B, want %d (39.6 ms at 20 Mbps)", p.BufferBytes, want)
	}
	if p.InitCwnd != 10 {
		t.Errorf("init cwnd = %d, want 10", p.InitCwnd)
	}
}

// A capture that retransmitted gives the replay the buffer it deduced; one
// that did not only a lower bound, so the replay's buffer is at least the
// receiver's largest window.
func TestReplayBuffer(t *testing.T) {
	// A 20 ms floor: the handshake's RTT 100 µs over it, a data segment's
	// 1,498 µs (at 8 Mbps of payload, 8.29 on the wire).
	ss := []Sample{
		{TUs: 0, Cwnd: 10, RTTUs: 21498, MinRTTUs: 20100, MSS: 1448, DeliveryRateBps: 8e6, SndWnd: 65535},
		{TUs: 1000, Cwnd: 40, RTTUs: 31498, MinRTTUs: 20100, MSS: 1448, DeliveryRateBps: 8e6, SndWnd: 200000},
	}
	p, err := Deduce(ss)
	if err != nil {
		t.Fatal(err)
	}
	// 10 ms of queue at 8 Mbps of payload, 1500/1448 on the wire.
	if want := int64(10_000) * (int64(8e6) * 1500 / 1448) / 8 / 1_000_000; !p.BufferNotReached || p.BufferBytes != want || p.ReplayBuffer() != 200000 {
		t.Errorf("no retransmissions: buffer %d (want %d), not reached %v, replay %d; want the replay at the 200,000 B window",
			p.BufferBytes, want, p.BufferNotReached, p.ReplayBuffer())
	}
	ss[1].TotalRetrans = 3
	if p, _ = Deduce(ss); p.BufferNotReached || p.ReplayBuffer() != p.BufferBytes {
		t.Errorf("3 retransmissions: not reached %v, replay %d; want the deduced %d", p.BufferNotReached, p.ReplayBuffer(), p.BufferBytes)
	}
}

// A TCP_INFO CSV whose samples go back in time, or whose time is not a
// number, is refused at the line and column: the deduction reads the first
// and last samples as the capture's start and end.
func TestReadCSVRefusesTimeOutOfOrder(t *testing.T) {
	const head = "t_s,flow,ca_state,snd_cwnd,snd_ssthresh,rtt_us,rttvar_us,min_rtt_us,snd_mss,pacing_rate_bps,delivery_rate_bps,delivered,bytes_acked,bytes_sent,total_retrans,snd_wnd\n"
	row := func(t string) string { return t + ",f,0,10,0,30000,1000,30000,1448,0,1000000,1,1448,1448,0,65535\n" }
	for _, tc := range []struct{ rows, want string }{
		{row("0.1") + row("0.2") + row("0.15"), `line 4, column t_s: "0.15" is before the sample above it`},
		{row("0.1") + row("NaN"), `line 3, column t_s: "NaN" is not a time in seconds`},
		{row("-1"), `line 2, column t_s: "-1" is not a time in seconds`},
	} {
		if _, err := readCSV([]byte(head+tc.rows), ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readCSV of %q: %v, want %q", tc.rows, err, tc.want)
		}
	}
	if ss, err := readCSV([]byte(head+row("0.1")+row("0.1")+row("0.2")), ""); err != nil || len(ss) != 3 {
		t.Errorf("samples in time order, two at one instant: %d, %v; want 3 and no error", len(ss), err)
	}
}

// A TCP_INFO CSV is told by a t_us or t_s column anywhere in its header,
// after a byte order mark as a spreadsheet writes it; another CSV is not.
func TestIsCSV(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"t_us,flow,rtt_us\n", true},
		{"flow,rtt_us,t_s\r\n", true},
		{"\uFEFFflow, t_us ,rtt_us\n", true},
		{"time_s,rtt_ms\n", false},
		{"cubic wscale:7,7 rto:268\n", false},
	} {
		if got := isCSV([]byte(tc.head + "1,2,3\n")); got != tc.want {
			t.Errorf("isCSV(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}
