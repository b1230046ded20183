package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/trace/pcap"
	"github.com/ccscope/ccscope/server/internal/debian"
)

// tsharkFields runs tshark on file and returns one row of the named fields
// per frame (multi-valued fields joined by commas).
func tsharkFields(t *testing.T, bin, file, filter string, fields ...string) [][]string {
	t.Helper()
	args := []string{"-r", file, "-n", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,",
		"-o", "tcp.relative_sequence_numbers:FALSE", "-o", "ip.check_checksum:TRUE", "-o", "tcp.analyze_sequence_numbers:TRUE"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line != "" {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	return rows
}

// Hand-made packets, decoded by tshark field by field: every header field
// the writer fills must read back as the value it was given.
func TestFieldsDecodeInTshark(t *testing.T) {
	bin := debian.Tool(t, "tshark", "tshark")
	path := filepath.Join(t.TempDir(), "fields.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	flows := []pcap.Flow{{Src: 0, TCP: true, MSS: 1448, SndWScale: 7, RcvWScale: 9}, {Src: 2, TCP: false}}
	w, err := pcap.NewWriter(f, flows)
	if err != nil {
		t.Fatal(err)
	}
	syn := packet.Packet{Flow: 0, Src: 0, Dst: 2, Size: 52, Flags: packet.SYN | packet.ECE | packet.CWR, TSVal: 7}
	synAck := packet.Packet{Flow: 0, Src: 2, Dst: 0, Size: 52, Flags: packet.SYN | packet.ACK | packet.ECE, Ack: 1, Wnd: 65160, TSVal: 9, TSEcr: 7}
	data := packet.Packet{Flow: 0, Src: 0, Dst: 2, Size: 1500, Flags: packet.ACK | packet.CWR | packet.AE, ECN: packet.CE,
		Seq: 1<<32 + 1001, Len: 1448, TSVal: 123456, TSEcr: 654321}
	ack := packet.Packet{Flow: 0, Src: 2, Dst: 0, Size: 52 + 4 + 24, Flags: packet.ACK | packet.ECE, Seq: 1, Ack: 5000,
		Wnd: 3 << 20, TSVal: 11, TSEcr: 12, NSack: 3,
		Sack: [3]packet.SackBlock{{Start: 9000, End: 10448}, {Start: 20000, End: 21448}, {Start: 30000, End: 31448}}}
	udp := packet.Packet{Flow: 1, Src: 2, Dst: 0, Size: 1500, ECN: packet.ECT1, Seq: 3000, Len: 1500}
	times := []sim.Time{1_500_000_000_123_000, 1_500_000_000_124_000, 2_000_000_000_000_999_000, 2_000_000_000_001_000_000, 3_000_000_000_000_000_000}
	for i, p := range []*packet.Packet{&syn, &synAck, &data, &ack, &udp} {
		w.Write(times[i], p)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rows := tsharkFields(t, bin, path, "", "frame.time_epoch", "ip.src", "ip.dst", "ip.len", "ip.dsfield.ecn", "ip.checksum.status",
		"tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.flags", "tcp.window_size_value",
		"tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr", "tcp.options.sack_le", "tcp.options.sack_re",
		"tcp.len", "tcp.options.wscale.shift", "tcp.options.mss_val", "udp.srcport", "udp.dstport", "udp.length")
	want := [][]string{
		// time (ns), src, dst, ip.len, ecn, checksum good (1), ports, seq, ack, flags, window, tsval, tsecr, sack le, re, len, wscale, mss, udp
		{"1500.000000123", "10.0.0.1", "10.0.0.3", "60", "0", "1", "32768", "5201", "0", "0", "0x00c2", "65535", "7", "0", "", "", "0", "7", "1448", "", "", ""},
		{"1500.000000124", "10.0.0.3", "10.0.0.1", "60", "0", "1", "5201", "32768", "0", "1", "0x0052", "65160", "9", "7", "", "", "0", "9", "1448", "", "", ""},
		{"2000000.000000999", "10.0.0.1", "10.0.0.3", "1500", "3", "1", "32768", "5201", "1001", "1", "0x0190", "65535", "123456", "654321", "", "", "1448", "", "", "", "", ""},
		{"2000000.000001000", "10.0.0.3", "10.0.0.1", "80", "0", "1", "5201", "32768", "1", "5000", "0x0050", "6144", "11", "12",
			"9000,20000,30000", "10448,21448,31448", "0", "", "", "", "", ""},
		{"3000000.000000000", "10.0.0.3", "10.0.0.1", "1500", "1", "1", "", "", "", "", "", "", "", "", "", "", "", "", "", "32769", "5201", "1480"},
	}
	if len(rows) != len(want) {
		t.Fatalf("tshark read %d frames, want %d: %q", len(rows), len(want), rows)
	}
	names := []string{"time", "ip.src", "ip.dst", "ip.len", "ecn", "ip.checksum.status", "tcp.srcport", "tcp.dstport", "seq", "ack",
		"flags", "window", "tsval", "tsecr", "sack_le", "sack_re", "tcp.len", "wscale", "mss", "udp.srcport", "udp.dstport", "udp.length"}
	for i := range want {
		for j := range want[i] {
			got := ""
			if j < len(rows[i]) {
				got = rows[i][j]
			}
			if j == 0 {
				// tshark prints epoch time with 9 decimals; compare numerically.
				g, _ := strconv.ParseFloat(got, 64)
				w, _ := strconv.ParseFloat(want[i][j], 64)
				if got != want[i][j] && g != w {
					t.Errorf("frame %d %s = %q, want %q", i+1, names[j], got, want[i][j])
				}
				continue
			}
			if got != want[i][j] {
				t.Errorf("frame %d %s = %q, want %q", i+1, names[j], got, want[i][j])
			}
		}
	}
}

// twoFlows is p-rtr-p with two finite flows that both complete well before
// the run ends, so every packet they send crosses every link in the capture.
const twoFlows = `{
  "name": "pcap-two-flows",
  "runtime": {"seed": 3, "duration": "6s"},
  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
  "links": [
    {"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
    {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "100Mbps", "delay": "19ms", "ab": {"qdisc": {"kind": "fifo", "limit": "0.5BDP"}}}
  ],
  "flows": [
    {"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic", "size": "12MB"},
    {"id": "f1", "src": "h1", "dst": "h2", "cc": "reno", "start": "300ms", "size": "8MB"}
  ],
  "trace": {"detail": "change"}
}`

// A simulated run's captures, read by tshark, against the simulator's own
// counts: per-flow payload bytes on the access link (everything sent) and
// at the bottleneck's far end (everything sent less what the bottleneck
// dropped); the retransmissions tshark's sequence analysis flags on the
// access link (which never reorders or loses, so every segment that does not
// advance the sequence is a retransmission: tshark calls it a
// retransmission, a fast retransmission, or — when the original passed
// less than an RTT before — out-of-order); and every SACK block of the ACKs
// crossing the bottleneck back, against the SACK events the sender logged
// as those ACKs reached it.
func TestSimulatedRunInTshark(t *testing.T) {
	bin := debian.Tool(t, "tshark", "tshark")
	prep, err := engine.Prepare([]byte(twoFlows), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The captures, as --pcap sets them up.
	var caps []*pcapOut
	open := func(spec string) *pcapOut {
		o, err := openPcap(filepath.Join(dir, spec), r)
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, o)
		return o
	}
	access := open("access.pcap:access:both")
	bottleneck := open("bottleneck.pcap") // the default: the first flow's bottleneck direction
	acks := open("acks.pcap:bottleneck:ba")
	r.RunToEnd()
	for _, c := range caps {
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
	}
	if bottleneck.at != "bottleneck/ab" {
		t.Errorf("the default capture is at %s, want the bottleneck's data direction bottleneck/ab", bottleneck.at)
	}
	sum := r.Summary(prep.Hash)
	// Taps pass packets on in the same call and schedule nothing: the run
	// is the one it would have been without them.
	plain, err := engine.New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain.RunToEnd()
	if d := plain.Summary(prep.Hash).Digest; d != sum.Digest {
		t.Errorf("digest with taps %s, without %s", sum.Digest, d)
	}

	// The simulator's own counts, from its summary and trace.
	ev := &r.Trace.EventT
	n := len(prep.Scenario.Flows)
	dropped := make([]int64, n)
	retrans := make([]int, n)
	sends := make([]int, n)    // new data segments (send events)
	logged := make([]int64, n) // payload bytes of send and retransmit events
	type sack struct{ le, re uint32 }
	sacks := make([][]sack, n)
	for i := range ev.T {
		switch ev.Kind[i] {
		case trace.EvDrop:
			dropped[ev.Flow[i]] += int64(ev.Length[i])
		case trace.EvSend:
			sends[ev.Flow[i]]++
			logged[ev.Flow[i]] += int64(ev.Length[i])
		case trace.EvRetransmit:
			retrans[ev.Flow[i]]++
			logged[ev.Flow[i]] += int64(ev.Length[i])
		case trace.EvSack:
			sacks[ev.Flow[i]] = append(sacks[ev.Flow[i]], sack{uint32(ev.Seq[i]), uint32(ev.Seq[i] + int64(ev.Length[i]))})
		}
	}

	// tshark's view, one pass per question: payload bytes per sender port
	// on each link, flagged retransmissions, and the ACKs' SACK blocks.
	bytesBy := func(path, filter string) (bytes map[string]int64, packets map[string]int) {
		bytes, packets = map[string]int64{}, map[string]int{}
		for _, row := range tsharkFields(t, bin, path, filter, "tcp.srcport", "tcp.len") {
			v, _ := strconv.ParseInt(row[1], 10, 64)
			bytes[row[0]] += v
			packets[row[0]]++
		}
		return bytes, packets
	}
	const data = "tcp.len > 0"
	sentAccess, packetsAccess := bytesBy(access.path, data)
	pastBottleneck, _ := bytesBy(bottleneck.path, data)
	flaggedBy := map[string]int{}
	for _, row := range tsharkFields(t, bin, access.path, data+" && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission || "+
		"tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)", "tcp.srcport") {
		flaggedBy[row[0]]++
	}
	sacksBy := map[string][]sack{}
	for _, row := range tsharkFields(t, bin, acks.path, "tcp.options.sack_le", "tcp.dstport", "tcp.options.sack_le", "tcp.options.sack_re") {
		le, _ := strconv.ParseUint(strings.Split(row[1], ",")[0], 10, 32)
		re, _ := strconv.ParseUint(strings.Split(row[2], ",")[0], 10, 32)
		sacksBy[row[0]] = append(sacksBy[row[0]], sack{uint32(le), uint32(re)})
	}

	for fi, fs := range sum.Flows {
		if fs.BytesDelivered != map[string]int64{"f0": 12e6, "f1": 8e6}[fs.ID] {
			t.Fatalf("flow %s delivered %d bytes; the test needs it complete", fs.ID, fs.BytesDelivered)
		}
		port := strconv.Itoa(pcap.SenderPortBase + fi)
		if got := sentAccess[port]; got != fs.BytesSent {
			t.Errorf("flow %s: tshark counts %d payload bytes on the access link, the sender sent %d", fs.ID, got, fs.BytesSent)
		}
		if got := pastBottleneck[port]; got != fs.BytesSent-dropped[fi] {
			t.Errorf("flow %s: tshark counts %d payload bytes past the bottleneck, want sent %d - dropped %d = %d",
				fs.ID, got, fs.BytesSent, dropped[fi], fs.BytesSent-dropped[fi])
		}
		if logged[fi] != sentAccess[port] || sends[fi] != packetsAccess[port]-flaggedBy[port] {
			t.Errorf("flow %s: the sender logged %d send events and %d B in send and retransmit events; tshark reads %d unflagged data segments and %d B",
				fs.ID, sends[fi], logged[fi], packetsAccess[port]-flaggedBy[port], sentAccess[port])
		}
		if flaggedBy[port] != retrans[fi] || fs.Retransmits == nil || int64(retrans[fi]) != *fs.Retransmits {
			t.Errorf("flow %s: tshark flags %d retransmitted segments on the access link; the sender logged %d retransmit events, its summary says %v",
				fs.ID, flaggedBy[port], retrans[fi], fs.Retransmits)
		}
		if retrans[fi] == 0 {
			t.Errorf("flow %s: no retransmissions; the test wants losses to check", fs.ID)
		}
		got := sacksBy[port]
		if len(got) != len(sacks[fi]) {
			t.Errorf("flow %s: tshark sees %d ACKs with SACK blocks, the sender logged %d", fs.ID, len(got), len(sacks[fi]))
		}
		for i := range min(len(got), len(sacks[fi])) {
			if got[i] != sacks[fi][i] {
				t.Errorf("flow %s: SACK ACK %d: tshark reads first block %v, the sender logged %v", fs.ID, i, got[i], sacks[fi][i])
				break
			}
		}
		t.Logf("flow %s: %d B sent, %d B dropped at the bottleneck, %d retransmissions, %d SACK ACKs — all as tshark reads the captures",
			fs.ID, fs.BytesSent, dropped[fi], retrans[fi], len(got))
	}
}

// A capture on a split flow's second leg (p-we-p's last link, past the
// proxy) holds leg 1's packets, sent from the proxy, as tshark reads them:
// each leg is a flow of the run, from its own source, where the capture
// knew only the scenario's flows and failed after the run.
func TestPcapOfSplitFlowLeg(t *testing.T) {
	bin := debian.Tool(t, "tshark", "tshark")
	path := filepath.Join(t.TempDir(), "leg1.pcap")
	code, _, stderr := ccscope(t, "run", "p-we-p", "--duration", "300ms", "--pcap", path+":last:both", "--json")
	if code != 0 {
		t.Fatalf("run p-we-p --pcap %s:last:both: exit %d, %s", path, code, stderr)
	}
	raw, err := config.Builtin("p-we-p")
	if err != nil {
		t.Fatal(err)
	}
	prep, err := engine.Prepare(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := ""
	for _, n := range prep.Scenario.Nodes {
		if n.Kind == config.Proxy {
			proxy = fmt.Sprintf("10.0.0.%d", r.Net.Node(n.ID).Index+1)
		}
	}
	rows := tsharkFields(t, bin, path, "tcp.len > 0", "ip.src", "tcp.srcport")
	if len(rows) == 0 {
		t.Fatal("no data segments in the capture")
	}
	for _, row := range rows {
		if row[0] != proxy {
			t.Fatalf("a data segment from %s:%s on the leg past the proxy, want from the proxy %s", row[0], row[1], proxy)
		}
	}
}
