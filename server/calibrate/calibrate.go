package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// headerBytes are the IPv4 and TCP headers with the timestamp option that
// a full segment carries beside its MSS of payload (20 + 20 + 12).
const headerBytes = 52

// Path is what a capture says about the path and the receiver.
type Path struct {
	// RateBps is the bottleneck's wire rate: the delivery rate while a
	// standing queue kept the bottleneck busy (the 90th percentile of
	// those samples: a delivery-rate sample cannot much exceed the
	// bottleneck, but host scheduling and ACK batching pull some below it),
	// scaled from payload to wire bytes by (MSS + 52) / MSS.
	RateBps int64 `json:"rate_bps"`
	// FloorUs is the round-trip propagation delay: the smallest RTT less
	// the serialisation it holds at RateBps: a full segment's and an ACK's
	// for a data sample, the SYN's and SYN-ACK's for tcpi_min_rtt.
	FloorUs int64 `json:"floor_us"`
	// BufferBytes is the bottleneck buffer: the srtt over the floor and a
	// data segment's serialisation, as queueing delay, times the rate,
	// taking srtt at its 95th percentile
	// rather than the WarpSIM paper's largest smoothed RTT. A host stall
	// inflates the largest samples: on this project's loaded machine one
	// 50 ms stall of ACK processing lifted the kernel's srtt from 62 to
	// 113 ms for 30 ms of a 5 s capture (1% of its samples), while a
	// loss-based CC that fills the buffer holds srtt near its top for a
	// good share of every cycle. A capture of a CC that keeps the queue
	// short (BBR) says little about the buffer: calibrate from CUBIC's.
	BufferBytes int64 `json:"buffer_bytes"`
	// BufferNotReached says the capture retransmitted nothing: the buffer
	// never overflowed, so BufferBytes is only the queue the flow built, a
	// lower bound. The scenario then gives the buffer at least the
	// receiver's largest window (RwndMax), more than one flow can queue,
	// so that the replay drops nothing either: sized at the lower bound,
	// a replay of a window-limited CUBIC flow (200 Mbps, 122 ms, 2 BDP)
	// retransmitted 886 segments where the capture had none.
	BufferNotReached bool `json:"buffer_not_reached"`
	// InitCwnd is the initial window in segments (the first sample's cwnd,
	// or for a pcap the segments sent before the first ACK of data).
	InitCwnd uint32 `json:"init_cwnd"`
	MSS      uint32 `json:"mss"`
	// The receiver's advertised window: first seen, largest, and when the
	// largest was first reached (µs from the first sample); 0 where the
	// capture does not carry it.
	RwndFirst   uint32 `json:"rwnd_first_bytes"`
	RwndMax     uint32 `json:"rwnd_max_bytes"`
	RwndMaxAtUs int64  `json:"rwnd_max_at_us"`
	// SaturatedSamples is how many samples showed a standing queue (the
	// rate estimate's basis); when too few, the rate is the 90th
	// percentile of all delivery-rate samples instead.
	SaturatedSamples int `json:"saturated_samples"`
}

// Deduce estimates the path from a flow's samples.
func Deduce(ss []Sample) (Path, error) {
	var p Path
	minRTT := int64(math.MaxInt64)
	handshake := false // minRTT is tcpi_min_rtt, which the SYN's RTT sample set
	for _, s := range ss {
		p.MSS = max(p.MSS, s.MSS)
		if s.MinRTTUs > 0 {
			minRTT, handshake = min(minRTT, int64(s.MinRTTUs)), !s.MinRTTOfData
		} else if s.RTTUs > 0 {
			minRTT = min(minRTT, int64(s.RTTUs))
		}
	}
	if minRTT == math.MaxInt64 {
		return p, errors.New("calibrate: no RTT in the capture")
	}
	if p.MSS == 0 {
		p.MSS = 1448
	}
	// A standing queue of at least max(2 ms, 10% of the floor) means the
	// bottleneck was busy, so the delivery rate is its rate.
	margin := max(2000, minRTT/10)
	var sat, all []int64
	for _, s := range ss {
		if s.DeliveryRateBps <= 0 {
			continue
		}
		all = append(all, s.DeliveryRateBps)
		if int64(s.RTTUs) >= minRTT+margin {
			sat = append(sat, s.DeliveryRateBps)
		}
	}
	if len(all) == 0 {
		return p, errors.New("calibrate: no delivery-rate samples in the capture")
	}
	p.SaturatedSamples = len(sat)
	var payload int64
	if len(sat) >= 5 {
		payload = quantile(sat, 0.9)
	} else {
		payload = quantile(all, 0.9)
	}
	p.RateBps = payload * int64(p.MSS+headerBytes) / int64(p.MSS)
	// A data segment's RTT holds its own and its ACK's serialisation. The
	// smallest RTT holds those too when it is a data sample; tcpi_min_rtt
	// is the handshake's, whose SYN and SYN-ACK are header-sized (a 2 Mbps
	// path: 0.4 ms against 6.2 ms for a full segment).
	serial := (int64(p.MSS+headerBytes) + headerBytes) * 8 * 1_000_000 / p.RateBps
	minSerial := serial
	if handshake {
		minSerial = 2 * headerBytes * 8 * 1_000_000 / p.RateBps
	}
	p.FloorUs = max(minRTT-minSerial, 0)
	var srtts []int64
	for _, s := range ss {
		if s.RTTUs > 0 {
			srtts = append(srtts, int64(s.RTTUs))
		}
	}
	p.BufferBytes = max(quantile(srtts, 0.95)-p.FloorUs-serial, 0) * p.RateBps / 8 / 1_000_000
	p.BufferNotReached = ss[len(ss)-1].TotalRetrans == 0
	p.InitCwnd = ss[0].Cwnd
	if p.InitCwnd == 0 {
		p.InitCwnd = 10
	}
	for _, s := range ss {
		if s.SndWnd == 0 {
			continue
		}
		if p.RwndFirst == 0 {
			p.RwndFirst = s.SndWnd
		}
		if s.SndWnd > p.RwndMax {
			p.RwndMax, p.RwndMaxAtUs = s.SndWnd, s.TUs-ss[0].TUs
		}
	}
	return p, nil
}

// ReplayBuffer is the buffer the scenario gives the path: the deduced one,
// at least one full packet, and at least the receiver's largest window
// when the capture never filled the buffer (BufferNotReached).
func (p Path) ReplayBuffer() int64 {
	buf := max(p.BufferBytes, int64(p.MSS+headerBytes))
	if p.BufferNotReached {
		buf = max(buf, int64(p.RwndMax))
	}
	return buf
}

// replayTCP is the replay flow's TCP options: the capture's initial window
// and MSS, and, where the capture carries the receiver's window, a receive
// buffer ceiling that lets the window grow to the largest one seen and no
// further (tcp.RcvBufForWindow; at least tcp_rmem[1]). Left at the default
// (32 MiB, 6.16+) a replay of a flow held by a 6 MiB receiver's window
// overshot in slow start: 252 retransmissions where the capture had none.
func (p Path) replayTCP() map[string]any {
	o := map[string]any{"init_cwnd": p.InitCwnd, "mss": fmt.Sprintf("%dB", p.MSS)}
	if p.RwndMax > 0 {
		b := max(tcp.RcvBufForWindow(units.Bytes(p.RwndMax), units.Bytes(p.MSS)), config.DefaultRcvBufInit)
		o["rcvbuf_max"] = fmt.Sprintf("%dB", b)
	}
	return o
}

// quantile is the nearest-rank q-quantile of xs (sorted in place).
func quantile(xs []int64, q float64) int64 {
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}

// Scenario writes a scenario that reproduces the path: two endpoints on
// one link of the deduced rate, half the floor each way, a FIFO of the
// deduced buffer at the sender's end (ReplayBuffer), and one bulk flow of
// cc with the deduced initial window and receive buffer (replayTCP), run
// for durationUs.
func Scenario(p Path, cc string, durationUs int64) ([]byte, error) {
	ms := func(us int64) string { return fmt.Sprintf("%dus", us) }
	buf := p.ReplayBuffer()
	scn := map[string]any{
		"name":        "calibrated",
		"description": fmt.Sprintf("Calibrated from a capture: %.2f Mbps bottleneck, %.3f ms propagation floor, %d B buffer, initial window %d.", float64(p.RateBps)/1e6, float64(p.FloorUs)/1e3, buf, p.InitCwnd),
		"runtime":     map[string]any{"seed": 1, "duration": ms(durationUs)},
		"nodes":       []any{map[string]any{"id": "h1", "kind": "endpoint"}, map[string]any{"id": "h2", "kind": "endpoint"}},
		"links": []any{map[string]any{"id": "bottleneck", "a": "h1", "b": "h2", "rate": fmt.Sprintf("%dbps", p.RateBps),
			"delay": fmt.Sprintf("%dns", p.FloorUs*1000/2),
			"ab":    map[string]any{"qdisc": map[string]any{"kind": "fifo", "limit": fmt.Sprintf("%dB", buf)}}}},
		"flows": []any{map[string]any{"id": "f0", "src": "h1", "dst": "h2", "cc": cc, "tcp": p.replayTCP()}},
		"trace": map[string]any{"detail": "sampled", "interval": "1ms"},
	}
	return json.MarshalIndent(scn, "", "  ")
}

// Row is one line of the comparison table (the WarpSIM paper's Table 1
// with retransmissions and RTT quantiles added). Times in ms, goodput in
// Mbps; nil where not reached.
type Row struct {
	Label       string   `json:"label"`
	T10MBMs     *float64 `json:"t_10MB_ms"`
	T100MBMs    *float64 `json:"t_100MB_ms"`
	GoodputMbps *float64 `json:"goodput_mbps"`
	Retransmits *float64 `json:"retransmits"`
	RTTP50Ms    *float64 `json:"rtt_p50_ms"`
	RTTP99Ms    *float64 `json:"rtt_p99_ms"`
}

// Measure reads a flow's figures off its samples, on the TCP_INFO clock:
// times count from the first sample showing data acknowledged, bytes are
// bytes_acked, RTT quantiles are over the srtt samples.
func Measure(label string, ss []Sample) Row {
	r := Row{Label: label}
	first := -1
	for i, s := range ss {
		if s.BytesAcked > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return r
	}
	t0 := ss[first].TUs
	f := func(v float64) *float64 { return &v }
	for _, s := range ss[first:] {
		if r.T10MBMs == nil && s.BytesAcked >= 10_000_000 {
			r.T10MBMs = f(float64(s.TUs-t0) / 1e3)
		}
		if r.T100MBMs == nil && s.BytesAcked >= 100_000_000 {
			r.T100MBMs = f(float64(s.TUs-t0) / 1e3)
		}
	}
	last := ss[len(ss)-1]
	if last.TUs > t0 {
		r.GoodputMbps = f(float64(last.BytesAcked-ss[first].BytesAcked) * 8 / float64(last.TUs-t0))
	}
	r.Retransmits = f(float64(last.TotalRetrans))
	var rtts []int64
	for _, s := range ss {
		if s.RTTUs > 0 {
			rtts = append(rtts, int64(s.RTTUs))
		}
	}
	if len(rtts) > 0 {
		r.RTTP50Ms = f(float64(quantile(rtts, 0.5)) / 1e3)
		r.RTTP99Ms = f(float64(quantile(rtts, 0.99)) / 1e3)
	}
	return r
}

// FromTrace turns a simulated flow's rows of the flows table into samples
// on the same terms as a live capture (bytes acknowledged from delivered
// packets, less the SYN that tcpi_delivered counts, times the MSS).
func FromTrace(rows []trace.FlowRow, flow int32, mss uint32) []Sample {
	var out []Sample
	for _, r := range rows {
		if r.Flow != flow {
			continue
		}
		acked := uint64(0)
		if r.Delivered > 1 {
			acked = (r.Delivered - 1) * uint64(mss)
		}
		out = append(out, Sample{TUs: int64(r.T) / int64(sim.Microsecond), Cwnd: r.CwndPkts, SSThresh: r.SSThreshPkts,
			RTTUs: uint32(r.SRTT / sim.Microsecond), RTTVarUs: uint32(r.RTTVar / sim.Microsecond),
			MinRTTUs: uint32(r.MinRTT / sim.Microsecond), MSS: mss, PacingRateBps: r.PacingRateBps,
			DeliveryRateBps: r.DeliveryRateBps, Delivered: uint32(r.Delivered), BytesAcked: acked,
			TotalRetrans: uint32(r.Retrans), CAState: r.CAState})
	}
	return out
}

// Report is a calibration: the deduced path, the scenario written from it,
// and the simulated flow against the live one with residuals
// ((sim − live) / live).
type Report struct {
	Format   string          `json:"format"`
	Samples  int             `json:"samples"`
	CC       string          `json:"cc"`
	Path     Path            `json:"path"`
	Scenario json.RawMessage `json:"scenario"`
	Sim      Row             `json:"sim"`
	Live     Row             `json:"live"`
	Residual Row             `json:"residual"`
}

// Calibrate deduces the path from a live flow's samples, writes the
// scenario, runs it with cc, and compares.
func Calibrate(ss []Sample, format, cc string) (*Report, error) {
	p, err := Deduce(ss)
	if err != nil {
		return nil, err
	}
	dur := ss[len(ss)-1].TUs - ss[0].TUs
	raw, err := Scenario(p, cc, max(dur, 1000))
	if err != nil {
		return nil, err
	}
	prep, err := engine.Prepare(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("calibrate: the deduced scenario: %w", err)
	}
	prep.Scenario.Trace = config.Trace{Detail: config.TraceSampled, Interval: sim.Millisecond}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		return nil, err
	}
	r.RunToEnd()
	rep := &Report{Format: format, Samples: len(ss), CC: cc, Path: p, Scenario: raw,
		Sim: Measure(cc+" sim", FromTrace(r.Trace.FlowsT.Rows, 0, p.MSS)), Live: Measure(cc+" live", ss)}
	rep.Residual = residual(rep.Sim, rep.Live)
	return rep, nil
}

func residual(s, l Row) Row {
	d := func(a, b *float64) *float64 {
		if a == nil || b == nil || *b == 0 {
			return nil
		}
		v := (*a - *b) / *b
		return &v
	}
	return Row{Label: "residual", T10MBMs: d(s.T10MBMs, l.T10MBMs), T100MBMs: d(s.T100MBMs, l.T100MBMs),
		GoodputMbps: d(s.GoodputMbps, l.GoodputMbps), Retransmits: d(s.Retransmits, l.Retransmits),
		RTTP50Ms: d(s.RTTP50Ms, l.RTTP50Ms), RTTP99Ms: d(s.RTTP99Ms, l.RTTP99Ms)}
}
