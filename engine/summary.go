package engine

import (
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/ping"
	"github.com/ccscope/ccscope/engine/pump"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rcvpath"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// Summary is a run's end-of-run report; its JSON form is what
// `ccscope run --json` prints and the server's summary op returns.
type Summary struct {
	Scenario string `json:"scenario" msgpack:"scenario"`
	Seed     uint64 `json:"seed" msgpack:"seed"`
	// KernelClockPs is where the hosts' kernel clock stood at time 0
	// (runtime.kernel_clock; absent when aligned, at zero).
	KernelClockPs int64          `json:"kernel_clock_ps,omitempty" msgpack:"kernel_clock_ps,omitempty"`
	ConfigHash    string         `json:"config_hash" msgpack:"config_hash"`
	SimTimePs     int64          `json:"sim_time_ps" msgpack:"sim_time_ps"`
	Events        uint64         `json:"events" msgpack:"events"`
	Digest        string         `json:"digest" msgpack:"digest"`
	WallS         float64        `json:"wall_s" msgpack:"wall_s"`
	Flows         []FlowSummary  `json:"flows" msgpack:"flows"`
	Queues        []QueueSummary `json:"queues" msgpack:"queues"`
	// Groups summarises each flow group (absent when there are none).
	Groups []GroupSummary `json:"groups,omitempty" msgpack:"groups,omitempty"`
}

// FlowSummary reports one flow. Pointers are null where a value does not
// apply or was not reached.
type FlowSummary struct {
	ID   string `json:"id" msgpack:"id"`
	Kind string `json:"kind" msgpack:"kind"` // "pump" or "tcp"
	CC   string `json:"cc" msgpack:"cc"`
	// CCParams are the module parameters the flow set for its CC
	// (cc_params; absent when it set none).
	CCParams       map[string]int64 `json:"cc_params,omitempty" msgpack:"cc_params,omitempty"`
	BytesSent      int64            `json:"bytes_sent" msgpack:"bytes_sent"`
	BytesDelivered int64            `json:"bytes_delivered" msgpack:"bytes_delivered"`
	GoodputBps     *int64           `json:"goodput_bps" msgpack:"goodput_bps"`
	Retransmits    *int64           `json:"retransmits" msgpack:"retransmits"`
	T10MBPs        *int64           `json:"t_10MB_ps" msgpack:"t_10MB_ps"`
	T100MBPs       *int64           `json:"t_100MB_ps" msgpack:"t_100MB_ps"`
	RTTP50Ps       *int64           `json:"rtt_p50_ps" msgpack:"rtt_p50_ps"`
	RTTP99Ps       *int64           `json:"rtt_p99_ps" msgpack:"rtt_p99_ps"`
	PathFacts
	// FCTPs is a group flow's completion time: from its start to the
	// receiving application having its last byte (sized flows that
	// completed; absent for flows not in a group). The legs of a group
	// flow split by a proxy have one each: leg 0's when the proxy has the
	// last byte, leg 1's when the destination has it, which is the flow's
	// FCT in the group's summary.
	FCTPs *int64 `json:"fct_ps,omitempty" msgpack:"fct_ps,omitempty"`
	// ProbesSent and ProbesReceived count a ping flow's echo requests and
	// replies (absent for other flows); its rtt_p50_ps and rtt_p99_ps are
	// exact, over every probe.
	ProbesSent     *int64 `json:"probes_sent,omitempty" msgpack:"probes_sent,omitempty"`
	ProbesReceived *int64 `json:"probes_received,omitempty" msgpack:"probes_received,omitempty"`
	// AbortedPs is when a TCP flow's sender gave up on its connection, as
	// Linux's tcp_write_err does (ETIMEDOUT), and AbortReason why:
	// "syn_retries" (no SYN-ACK after tcp_syn_retries +
	// tcp_syn_linear_timeouts retransmitted SYNs, 131 s from the first
	// and the timer wheel's rounding),
	// "retries2" (retransmission timeouts for tcp_retries2's 924.6 s from
	// the first retransmission) or "window_probes" (tcp_retries2
	// zero-window probes in a row unanswered). Absent while it stands.
	AbortedPs   *int64 `json:"aborted_ps,omitempty" msgpack:"aborted_ps,omitempty"`
	AbortReason string `json:"abort_reason,omitempty" msgpack:"abort_reason,omitempty"`
	// CC holds algorithm-specific final values (e.g. BBR's bw and min_rtt).
	CCFinal map[string]float64 `json:"cc_final,omitempty" msgpack:"cc_final,omitempty"`
	// RcvPath counts what the flow's receive-path models did (absent
	// without them).
	RcvPath *rcvpath.Stats `json:"rcv_path,omitempty" msgpack:"rcv_path,omitempty"`
}

// PathFacts describe a flow's path as the scenario configures it, before
// any scheduled change or action: the lowest rate on the data direction,
// the round-trip propagation delay (data direction plus the reverse path
// the ACKs take) and their product. Plots draw the BDP from these rather
// than re-deriving routes.
type PathFacts struct {
	BottleneckBps int64 `json:"path_bottleneck_bps" msgpack:"path_bottleneck_bps"`
	BaseRTTPs     int64 `json:"path_base_rtt_ps" msgpack:"path_base_rtt_ps"`
	BDPBytes      int64 `json:"path_bdp_bytes" msgpack:"path_bdp_bytes"`
	// Bottleneck names the data direction with that rate nearest the
	// source, as "<link>/ab" or "<link>/ba".
	Bottleneck string `json:"path_bottleneck" msgpack:"path_bottleneck"`
}

// QueueSummary reports one link direction's egress queue.
type QueueSummary struct {
	Link       string `json:"link" msgpack:"link"`
	Dir        string `json:"dir" msgpack:"dir"`
	Enqueued   uint64 `json:"enqueued" msgpack:"enqueued"`
	Drops      uint64 `json:"drops" msgpack:"drops"`
	Marks      uint64 `json:"marks" msgpack:"marks"`
	WireLosses uint64 `json:"wire_losses" msgpack:"wire_losses"`
	// OutageDrops are packets refused while the direction was down
	// (drop_on_outage, or a full queue during an outage); not in Drops.
	OutageDrops uint64 `json:"outage_drops,omitempty" msgpack:"outage_drops,omitempty"`
	// Duplicated are the copies the direction's duplicate model sent.
	Duplicated      uint64 `json:"duplicated,omitempty" msgpack:"duplicated,omitempty"`
	MaxBacklogBytes int64  `json:"max_backlog_bytes" msgpack:"max_backlog_bytes"`
	// LimitBytes and LimitPackets are the qdisc's limits as they stand, a
	// BDP multiple resolved to bytes; omitted where there is none.
	LimitBytes   int64  `json:"limit_bytes,omitempty" msgpack:"limit_bytes,omitempty"`
	LimitPackets int64  `json:"limit_packets,omitempty" msgpack:"limit_packets,omitempty"`
	SojournP50Ps *int64 `json:"sojourn_p50_ps" msgpack:"sojourn_p50_ps"`
	SojournP99Ps *int64 `json:"sojourn_p99_ps" msgpack:"sojourn_p99_ps"`
}

// Summary reports the run so far. hash is the scenario's config hash.
func (r *Run) Summary(hash string) Summary {
	now := r.Sim.Now()
	s := Summary{Scenario: r.Scenario.Name, Seed: r.Scenario.Runtime.Seed, KernelClockPs: int64(r.clock), ConfigHash: hash,
		SimTimePs: int64(now), Events: r.Sim.Events(), Digest: DigestString(r.Sim.Digest()),
		Flows: []FlowSummary{}, Queues: []QueueSummary{}}
	for i, f := range r.Flows {
		fs := f.Summary(now)
		fs.PathFacts = r.Path(i)
		s.Flows = append(s.Flows, fs)
	}
	s.Groups = GroupSummaries(r.Scenario, r.Net, r.endToEnd(s.Flows))
	for i, d := range r.Net.Dirs {
		if q, ok := r.queues[i].Row(d); ok {
			s.Queues = append(s.Queues, q)
		}
	}
	return s
}

// Row is d's row of the summary's queue table, false while d has seen no
// packet.
func (q *QueueRecorder) Row(d *link.Dir) (QueueSummary, bool) {
	if d.Stats.Enqueued == 0 && d.Stats.Drops == 0 && d.Stats.OutageDrops == 0 {
		return QueueSummary{}, false
	}
	row := QueueSummary{Link: d.Link, Dir: d.DirName(), Enqueued: d.Stats.Enqueued,
		Drops: d.Stats.Drops, Marks: d.Stats.Marks, WireLosses: d.Stats.WireLosses, OutageDrops: d.Stats.OutageDrops,
		Duplicated: d.Stats.Duplicated, MaxBacklogBytes: int64(d.Stats.MaxBacklog),
		SojournP50Ps: quantile(&q.Sojourn, 0.5), SojournP99Ps: quantile(&q.Sojourn, 0.99)}
	row.LimitBytes, row.LimitPackets = QueueLimit(d)
	return row, true
}

// QueueLimit is the limits of d's qdisc as they stand, in bytes and
// packets, 0 for none (a BDP multiple was resolved to bytes when built).
func QueueLimit(d *link.Dir) (bytes, pkts int64) {
	if l, ok := d.Qdisc().(qdisc.Limiter); ok {
		b, p := l.Limit()
		return int64(b), int64(p)
	}
	return 0, 0
}

// DigestString formats a run digest as 16 hex digits.
func DigestString(d uint64) string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[d&15]
		d >>= 4
	}
	return string(b[:])
}

func quantile(h *trace.Hist, q float64) *int64 {
	v, ok := h.Quantile(q)
	if !ok {
		return nil
	}
	return &v
}

func ptr(v int64) *int64 { return &v }

// Goodput is payload bytes delivered per second of the flow's active time:
// from its first data byte sent to its completion, or to now if it has not
// completed.
func Goodput(delivered units.Bytes, first, done, now sim.Time) *int64 {
	end := now
	if done != 0 {
		end = done
	}
	if end <= first {
		return nil
	}
	return ptr(int64(units.RateOf(delivered, end.Sub(first))))
}

// milestone converts a milestone duration (0: not reached) to a summary value.
func milestone(d sim.Duration) *int64 {
	if d == 0 {
		return nil
	}
	return ptr(int64(d))
}

type pumpFlow struct {
	p   *pump.Pump
	cfg config.Flow
}

func (f pumpFlow) Summary(now sim.Time) FlowSummary {
	p := f.p
	s := FlowSummary{ID: f.cfg.ID, Kind: "pump", CC: "pump", BytesSent: int64(p.BytesSent),
		BytesDelivered: int64(p.BytesDelivered), T10MBPs: milestone(p.Milestones.T10MB),
		T100MBPs: milestone(p.Milestones.T100MB)}
	if p.Sent > 0 {
		s.GoodputBps = Goodput(p.BytesDelivered, p.FirstSend, p.Done, now)
	}
	return s
}

type pingFlow struct {
	p   *ping.Probe
	cfg config.Flow
}

func (f pingFlow) Summary(now sim.Time) FlowSummary { return PingSummary(f.p, f.cfg) }

// PingSummary is the summary of ping flow f, whose probe is p.
func PingSummary(p *ping.Probe, f config.Flow) FlowSummary {
	s := FlowSummary{ID: f.ID, Kind: "ping", CC: "ping", BytesSent: int64(p.BytesSent),
		BytesDelivered: int64(p.BytesReceived), ProbesSent: ptr(int64(p.Sent)), ProbesReceived: ptr(int64(p.Received))}
	if v, ok := p.Quantile(0.5); ok {
		s.RTTP50Ps = ptr(int64(v))
	}
	if v, ok := p.Quantile(0.99); ok {
		s.RTTP99Ps = ptr(int64(v))
	}
	return s
}
