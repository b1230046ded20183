// Package calibrate configures a simulated path from a live flow's record,
// as the WarpSIM paper's section 8.1 does: it reads the sender's TCP state
// sampled over time (a TCP_INFO CSV, an `ss -tin` log, or a sender-side
// pcap), deduces the bottleneck rate, the propagation floor, the buffer, the
// initial window and the receiver's window growth, writes a scenario that
// reproduces the path, runs it, and lines the simulated flow up against the
// live one in the shape of the paper's Table 1.
package calibrate

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Sample is one observation of a live sender's state, in TCP_INFO's terms
// (struct tcp_info, include/uapi/linux/tcp.h) with rates in bits/s.
type Sample struct {
	TUs             int64 // microseconds since the capture began
	Flow            string
	CAState         uint8
	Cwnd, SSThresh  uint32 // packets
	RTTUs, RTTVarUs uint32 // smoothed RTT and its variation
	MinRTTUs        uint32
	// MinRTTOfData says MinRTTUs is the least RTT of data segments (a
	// pcap's), not tcpi_min_rtt, which the handshake's RTT sets.
	MinRTTOfData    bool
	MSS             uint32 // snd_mss
	PacingRateBps   int64
	DeliveryRateBps int64
	Delivered       uint32 // packets delivered (tcpi_delivered, counts the SYN)
	BytesAcked      uint64
	BytesSent       uint64 // payload bytes sent, retransmissions included
	TotalRetrans    uint32
	SndWnd          uint32 // the receiver's advertised window, bytes; 0: unknown
}

// csvHeader names the TCP_INFO CSV's columns: struct tcp_info's fields
// without the tcpi_ prefix, times in µs and rates in bits/s.
var csvHeader = []string{"t_us", "flow", "ca_state", "snd_cwnd", "snd_ssthresh", "rtt_us", "rttvar_us", "min_rtt_us",
	"snd_mss", "pacing_rate_bps", "delivery_rate_bps", "delivered", "bytes_acked", "bytes_sent", "total_retrans", "snd_wnd"}

// WriteCSV writes samples as a TCP_INFO CSV.
func WriteCSV(w io.Writer, samples []Sample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, s := range samples {
		rec := []string{strconv.FormatInt(s.TUs, 10), s.Flow, u(uint64(s.CAState)), u(uint64(s.Cwnd)), u(uint64(s.SSThresh)),
			u(uint64(s.RTTUs)), u(uint64(s.RTTVarUs)), u(uint64(s.MinRTTUs)), u(uint64(s.MSS)),
			strconv.FormatInt(s.PacingRateBps, 10), strconv.FormatInt(s.DeliveryRateBps, 10), u(uint64(s.Delivered)),
			u(s.BytesAcked), u(s.BytesSent), u(uint64(s.TotalRetrans)), u(uint64(s.SndWnd))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCapture reads a capture file, telling its format from its content: a
// pcap by its magic number, a TCP_INFO CSV by its header, else an `ss -tin`
// log. It returns the samples of the flow named flow (by CSV flow column
// or, for ss and pcap, by peer address:port); "" takes the first.
func ReadCapture(path, flow string) ([]Sample, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("calibrate: %w", err)
	}
	var ss []Sample
	var format string
	switch {
	case isPcap(raw):
		format = "pcap"
		ss, err = readPcap(raw, flow)
	case isCSV(raw):
		raw = bytes.TrimPrefix(raw, []byte("\uFEFF")) // a spreadsheet's byte order mark
		format = "tcp_info csv"
		ss, err = readCSV(raw, flow)
	default:
		format = "ss -tin log"
		ss, err = readSS(raw, flow)
	}
	if err != nil {
		return nil, format, fmt.Errorf("calibrate: %s: %s: %w", path, format, err)
	}
	if len(ss) == 0 && format == "ss -tin log" && flow == "" {
		return nil, format, fmt.Errorf("calibrate: %s: not a capture this reads: no pcap header, no TCP_INFO CSV header (a t_us or t_s column), no `ss -tin` flow lines", path)
	}
	if len(ss) < 10 {
		what := "the flow"
		if flow != "" {
			what = "flow " + flow
		}
		return nil, format, fmt.Errorf("calibrate: %s: %s: %d samples of %s; need at least 10", path, format, len(ss), what)
	}
	return ss, format, nil
}

// isCSV says whether raw is a TCP_INFO CSV: its header (after a UTF-8
// byte order mark, if any) names a t_us or t_s column, in any place.
func isCSV(raw []byte) bool {
	head, _, _ := bytes.Cut(bytes.TrimPrefix(raw, []byte("\uFEFF")), []byte("\n"))
	for _, c := range bytes.Split(bytes.TrimRight(head, "\r"), []byte(",")) {
		if c := string(bytes.TrimSpace(c)); c == "t_us" || c == "t_s" {
			return true
		}
	}
	return false
}

// readCSV parses a TCP_INFO CSV. Columns may come in any order; t_us (or
// t_s), rtt_us, min_rtt_us, delivery_rate_bps and bytes_acked are required.
func readCSV(raw []byte, flow string) ([]Sample, error) {
	r := csv.NewReader(bytes.NewReader(raw))
	head, err := r.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"rtt_us", "min_rtt_us", "delivery_rate_bps", "bytes_acked"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("no %q column (have %s)", need, strings.Join(head, ","))
		}
	}
	_, tUs := col["t_us"]
	var out []Sample
	line := 1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return nil, err
		}
		num := func(name string) (uint64, error) {
			i, ok := col[name]
			if !ok {
				return 0, nil
			}
			v, err := strconv.ParseUint(strings.TrimSpace(rec[i]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("line %d, column %s: %q is not a non-negative integer", line, name, rec[i])
			}
			return v, nil
		}
		var s Sample
		if i, ok := col["flow"]; ok {
			s.Flow = rec[i]
		}
		if flow == "" && len(out) == 0 {
			flow = s.Flow
		}
		if s.Flow != flow {
			continue
		}
		if tUs {
			t, err := strconv.ParseInt(rec[col["t_us"]], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column t_us: %q is not an integer", line, rec[col["t_us"]])
			}
			s.TUs = t
		} else {
			t, err := strconv.ParseFloat(rec[col["t_s"]], 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
				return nil, fmt.Errorf("line %d, column t_s: %q is not a time in seconds", line, rec[col["t_s"]])
			}
			s.TUs = int64(t * 1e6)
		}
		// The deduction reads the first and last samples as the capture's
		// start and end: a capture out of time order would be misread.
		if n := len(out); n > 0 && s.TUs < out[n-1].TUs {
			tc := "t_s"
			if tUs {
				tc = "t_us"
			}
			return nil, fmt.Errorf("line %d, column %s: %q is before the sample above it; samples must come in time order", line, tc, rec[col[tc]])
		}
		var vals [14]uint64
		for k, name := range []string{"ca_state", "snd_cwnd", "snd_ssthresh", "rtt_us", "rttvar_us", "min_rtt_us", "snd_mss",
			"pacing_rate_bps", "delivery_rate_bps", "delivered", "bytes_acked", "bytes_sent", "total_retrans", "snd_wnd"} {
			if vals[k], err = num(name); err != nil {
				return nil, err
			}
		}
		s.CAState, s.Cwnd, s.SSThresh = uint8(vals[0]), uint32(vals[1]), uint32(vals[2])
		s.RTTUs, s.RTTVarUs, s.MinRTTUs, s.MSS = uint32(vals[3]), uint32(vals[4]), uint32(vals[5]), uint32(vals[6])
		s.PacingRateBps, s.DeliveryRateBps = int64(vals[7]), int64(vals[8])
		s.Delivered, s.BytesAcked, s.BytesSent = uint32(vals[9]), vals[10], vals[11]
		s.TotalRetrans, s.SndWnd = uint32(vals[12]), uint32(vals[13])
		if s.MSS == 0 {
			s.MSS = 1448
		}
		out = append(out, s)
	}
	return out, nil
}

// readSS parses a log of `ss -tin` output. A line holding only a number is
// a timestamp in seconds (e.g. from `date +%s.%N` between calls) for the
// records after it; a connection line (state, queues, local and peer
// addresses) is followed by its indented details line, of which the
// fields rtt:, minrtt:, cwnd:, ssthresh:, mss:, bytes_acked:, bytes_sent:,
// delivered:, retrans:, snd_wnd:, delivery_rate and pacing_rate are read.
func readSS(raw []byte, flow string) ([]Sample, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Sample
	var now float64 = -1
	var t0 float64 = -1
	peer := ""
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		tl := strings.TrimSpace(l)
		if tl == "" {
			continue
		}
		if v, err := strconv.ParseFloat(tl, 64); err == nil {
			now = v
			if t0 < 0 {
				t0 = v
			}
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			f := strings.Fields(l)
			peer = ""
			if len(f) >= 5 && f[0] != "State" {
				peer = f[len(f)-1]
			}
			continue
		}
		if peer == "" {
			continue
		}
		if flow == "" {
			flow = peer
		}
		if peer != flow {
			continue
		}
		if now < 0 {
			return nil, fmt.Errorf("line %d: a record before any timestamp line", line)
		}
		s, err := parseSSInfo(tl)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if s.RTTUs == 0 {
			continue // before the handshake completed (SYN-SENT): no RTT yet
		}
		s.Flow = peer
		s.TUs = int64((now - t0) * 1e6)
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSSInfo reads ss's details line (misc/ss.c tcp_show_info).
func parseSSInfo(l string) (Sample, error) {
	var s Sample
	f := strings.Fields(l)
	for i := 0; i < len(f); i++ {
		k, v, ok := strings.Cut(f[i], ":")
		if !ok {
			// "delivery_rate 48.2Mbps", "pacing_rate 69.7Mbps", "send 58Mbps"
			if (f[i] == "delivery_rate" || f[i] == "pacing_rate") && i+1 < len(f) {
				bps, err := parseSSRate(f[i+1])
				if err != nil {
					return s, err
				}
				if f[i] == "delivery_rate" {
					s.DeliveryRateBps = bps
				} else {
					s.PacingRateBps = bps
				}
				i++
			}
			continue
		}
		u := func(x string) uint64 { n, _ := strconv.ParseUint(x, 10, 64); return n }
		ms := func(x string) uint32 { v, _ := strconv.ParseFloat(x, 64); return uint32(v*1000 + 0.5) }
		switch k {
		case "rtt":
			a, b, _ := strings.Cut(v, "/")
			s.RTTUs, s.RTTVarUs = ms(a), ms(b)
		case "minrtt":
			s.MinRTTUs = ms(v)
		case "cwnd":
			s.Cwnd = uint32(u(v))
		case "ssthresh":
			s.SSThresh = uint32(u(v))
		case "mss":
			s.MSS = uint32(u(v))
		case "bytes_acked":
			s.BytesAcked = u(v)
		case "bytes_sent":
			s.BytesSent = u(v)
		case "delivered":
			s.Delivered = uint32(u(v))
		case "retrans":
			_, tot, _ := strings.Cut(v, "/")
			s.TotalRetrans = uint32(u(tot))
		case "snd_wnd":
			s.SndWnd = uint32(u(v))
		}
	}
	if s.MSS == 0 {
		s.MSS = 1448
	}
	return s, nil
}

// parseSSRate reads ss's rate format ("48.2Mbps", "950Kbps", "1.2Gbps",
// "800bps"); ss prints bits per second with a decimal prefix.
func parseSSRate(v string) (int64, error) {
	v, _, _ = strings.Cut(v, "/") // "pacing_rate 65891488bps/9223372036854775808bps": rate/max
	mult := 1.0
	num := strings.TrimSuffix(v, "bps")
	switch {
	case strings.HasSuffix(num, "G"):
		mult, num = 1e9, strings.TrimSuffix(num, "G")
	case strings.HasSuffix(num, "M"):
		mult, num = 1e6, strings.TrimSuffix(num, "M")
	case strings.HasSuffix(num, "K"), strings.HasSuffix(num, "k"):
		mult, num = 1e3, num[:len(num)-1]
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: not a number", v)
	}
	return int64(x * mult), nil
}
