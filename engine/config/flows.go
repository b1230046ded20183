package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Flow and TCP defaults. The buffer sizes are a Linux 6.18 host's: tcp_wmem
// caps the send buffer at 4 MiB (tcp_init's max_wshare, 4194304), tcp_rmem
// starts the receive buffer at 131072 bytes and lets autotuning grow it to
// 32 MiB (6.16+'s max_rshare on a host with 4 GB or more; 6 MiB before).
// The initial window is TCP_INIT_CWND (10, RFC 6928) and the MSS is 1448,
// what a 1500-byte MTU leaves after IPv4, TCP and the timestamp option.
const (
	DefaultPacketSize = 1500 * units.B
	DefaultMSS        = 1448 * units.B
	DefaultInitCwnd   = 10
	DefaultSndBuf     = 4 * units.MiB
	DefaultRcvBufInit = 131072 * units.B
	DefaultRcvBufMax  = 32 * units.MiB
	DefaultHZ         = 1000
	// DefaultTimestamps is sysctl tcp_timestamps' default: each connection's
	// timestamps carry a random offset.
	DefaultTimestamps = 1

	// MinMSS is TCP_MIN_MSS from include/net/tcp.h: the kernel clamps any
	// smaller MSS up to it.
	MinMSS = 88 * units.B
	// MaxMSS is MAX_TCP_WINDOW, the largest TCP_MAXSEG the kernel accepts.
	MaxMSS = 32767 * units.B
)

// DefaultTCPOptions returns a TCP flow's options when it sets none: every
// mechanism on except ECN and ECNLow, as on a stock Linux host.
func DefaultTCPOptions() TCPOptions {
	return TCPOptions{
		SACK: true, RACK: true, TLP: true, PRR: true, FRTO: true,
		Pacing: PacingAuto, TSO: true, GRO: true, DelayedAck: true, ECN: false,
		MSS: DefaultMSS, InitCwnd: DefaultInitCwnd, SndBuf: DefaultSndBuf,
		RcvBufInit: DefaultRcvBufInit, RcvBufMax: DefaultRcvBufMax, HZ: DefaultHZ,
		Timestamps: DefaultTimestamps,
	}
}

var (
	appKinds    = map[string]AppKind{"greedy": Greedy, "rate": AppRate, "onoff": OnOff}
	ecnMarkings = map[string]ECNField{"not-ect": NotECT, "ect0": ECT0, "ect1": ECT1}
)

func (c *collector) flow(path string, o obj, id string, opts options) Flow {
	if _, p, ok := o.get("count"); ok {
		c.add(p, "only for flow groups (\"group\" instead of \"id\")")
	}
	var src, dst string
	for _, end := range []struct {
		key string
		dst *string
	}{{"src", &src}, {"dst", &dst}} {
		if v, p, ok := o.get(end.key); ok {
			*end.dst, _ = c.str(p, v)
		} else {
			c.add(p, "missing; name an endpoint node")
		}
	}
	f := c.flowCommon(path, o, id, opts)
	f.Src, f.Dst = src, dst
	if v, p, ok := o.get("start"); ok {
		f.Start, _ = c.duration(p, v)
	}
	if v, p, ok := o.get("size"); ok {
		f.Size, _ = c.size(p, v)
	}
	return f
}

// flowCommon decodes what a flow and a group's flows share: the CC and the
// pump's or the TCP endpoint's settings.
func (c *collector) flowCommon(path string, o obj, id string, opts options) Flow {
	f := Flow{ID: id, Params: &Params{CC: DefaultCC}}
	if v, p, ok := o.get("cc"); ok {
		if s, ok := c.str(p, v); ok {
			f.CC = s
			if s != Pump && s != Ping && opts.ccs != nil && !slices.Contains(opts.ccs, s) {
				c.add(p, "unknown congestion control %q; known: %s", s, strings.Join(append(append([]string{Pump}, opts.ccs...), Ping), ", "))
			}
		}
	}
	if f.CC == Pump {
		c.pump(path, o, &f)
		return f
	}
	if f.CC == Ping {
		c.ping(o, &f)
		return f
	}
	if _, p, ok := o.get("interval"); ok {
		c.add(p, "only for ping flows (cc %q)", Ping)
	}
	for _, key := range []struct{ name, tcp string }{
		{"rate", "a TCP flow's app sets its rate"},
		{"packet_size", "a TCP flow's segments are tcp.mss long"},
		{"ecn", "a TCP flow's is tcp.ecn"},
	} {
		if _, p, ok := o.get(key.name); ok {
			c.add(p, "only for pump flows (cc %q); %s", Pump, key.tcp)
		}
	}
	f.CCParams = c.ccParams(o, f.CC, opts)
	f.App = c.app(o)
	f.TCP = c.tcp(o)
	if w := f.App.Write; w > 0 && w < f.TCP.MSS {
		c.add(join(join(o.path, "app"), "write"), "%v is below the flow's MSS of %v: the application writes whole segments", w, f.TCP.MSS)
	}
	f.Rcv = c.rcvPath(o)
	f.Legs = c.legs(o, f, opts)
	return f
}

// legs decodes the per-leg CC and TCP options a proxy uses when it splits
// the flow; a leg that gives none takes the flow's. Without "legs": nil,
// both legs the flow's own.
func (c *collector) legs(o obj, f Flow, opts options) *[2]Leg {
	v, p, ok := o.get("legs")
	if !ok {
		return nil
	}
	out := &[2]Leg{{f.CC, f.CCParams, f.TCP}, {f.CC, f.CCParams, f.TCP}}
	arr, isArr := v.([]any)
	if !isArr || len(arr) != 2 {
		c.add(p, "must be an array of two legs: [to the proxy, from the proxy]")
		return out
	}
	for i, e := range arr {
		lp := fmt.Sprintf("%s[%d]", p, i)
		lo, ok := c.object(lp, e, legShape)
		if !ok {
			continue
		}
		if v, cp, ok := lo.get("cc"); ok {
			if s, ok := c.str(cp, v); ok {
				if s == Pump || s == Ping || opts.ccs != nil && !slices.Contains(opts.ccs, s) {
					c.add(cp, "unknown congestion control %q; known: %s", s, strings.Join(opts.ccs, ", "))
				}
				out[i].CC, out[i].CCParams = s, nil // a leg of another CC takes none of the flow's
			}
		}
		if _, _, ok := lo.get("cc_params"); ok {
			out[i].CCParams = c.ccParams(lo, out[i].CC, opts)
		}
		if _, _, ok := lo.get("tcp"); ok {
			out[i].TCP = c.tcp(lo)
		}
	}
	return out
}

// ccParams decodes the module parameters a flow (or a leg, o) sets for its
// CC: an object of integers, a flag as true or false (or 1 or 0), each
// checked against the CC's parameters when Parse knows them. nil when the
// object is absent or empty.
func (c *collector) ccParams(o obj, cc string, opts options) map[string]int64 {
	v, p, ok := o.get("cc_params")
	if !ok {
		return nil
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		c.add(p, "must be an object of the CC's module parameters, such as {\"beta\": 512, \"hystart\": false}, not %s", describe(v))
		return nil
	}
	var out map[string]int64
	bad := false
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kp := join(p, k)
		var n int64
		switch x := m[k].(type) {
		case bool:
			if x {
				n = 1
			}
		case json.Number:
			i, err := strconv.ParseInt(x.String(), 10, 64)
			if err != nil {
				c.add(kp, "%s is not an integer: module parameters are integers, a flag true or false", x)
				bad = true
				continue
			}
			n = i
		default:
			c.add(kp, "must be an integer or true or false, not %s", describe(m[k]))
			bad = true
			continue
		}
		if opts.param != nil {
			if err := opts.param(cc, k, n); err != nil {
				c.add(kp, "%v", err)
				bad = true
				continue
			}
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[k] = n
	}
	if !bad && out != nil && opts.paramSet != nil {
		if err := opts.paramSet(cc, out); err != nil {
			c.add(p, "%v", err)
		}
	}
	return out
}

// pump decodes a constant-rate flow's rate and packet size.
func (c *collector) pump(path string, o obj, f *Flow) {
	if v, p, ok := o.get("rate"); ok {
		f.Rate, _ = c.rate(p, v)
	} else {
		c.add(p, "missing; a pump flow sends at a fixed rate, e.g. \"120Mbps\"")
	}
	f.PacketSize = DefaultPacketSize
	if v, p, ok := o.get("packet_size"); ok {
		if n, ok := c.size(p, v); ok {
			if n == 0 {
				c.add(p, "must be positive")
			}
			c.packetFits(p, n)
			f.PacketSize = n
		}
	}
	if v, p, ok := o.get("ecn"); ok {
		f.ECN, _ = enum(c, p, v, ecnMarkings)
	}
	for _, key := range []string{"app", "tcp", "cc_params", "legs", "rcv_hold", "ack_hold", "ack_grant"} {
		if _, p, ok := o.get(key); ok {
			c.add(p, "only for TCP flows; this flow's cc is %q", Pump)
		}
	}
	if _, p, ok := o.get("interval"); ok {
		c.add(p, "only for ping flows (cc %q)", Ping)
	}
}

// Ping is the cc name of a latency probe: an echo request of PacketSize
// bytes every Interval, which the destination answers at once, as ping or
// irtt beside a load test.
const Ping = "ping"

// Ping defaults: one probe every 200 ms (flent's RRUL ping interval), of
// 84 bytes on the wire (ping's 56 data bytes, an 8-byte ICMP header and a
// 20-byte IP header).
const (
	DefaultPingInterval = 200 * sim.Millisecond
	DefaultPingSize     = 84 * units.B
	MinPingSize         = 28 * units.B // an echo request without data: its IP and ICMP headers
	MinPingInterval     = 10 * sim.Microsecond
)

// MaxPacketSize is the largest IPv4 packet, its total length field's limit.
const MaxPacketSize = 65535 * units.B

// packetFits refuses a packet_size no IPv4 packet can have.
func (c *collector) packetFits(p string, n units.Bytes) {
	if n > MaxPacketSize {
		c.add(p, "%v is above %v, the largest IPv4 packet", n, MaxPacketSize)
	}
}

// ping decodes a latency probe's interval and packet size.
func (c *collector) ping(o obj, f *Flow) {
	f.Interval, f.PacketSize = DefaultPingInterval, DefaultPingSize
	if v, p, ok := o.get("interval"); ok {
		if d, ok := c.duration(p, v); ok {
			if d < MinPingInterval {
				c.add(p, "%v is below %v: each probe's RTT is kept, and faster probes would be a flood, not a probe", d, MinPingInterval)
			}
			f.Interval = d
		}
	}
	if v, p, ok := o.get("packet_size"); ok {
		if n, ok := c.size(p, v); ok {
			if n < MinPingSize {
				c.add(p, "%v is below an echo request's %v of IP and ICMP headers", n, MinPingSize)
			}
			c.packetFits(p, n)
			f.PacketSize = n
		}
	}
	for _, key := range []string{"app", "size"} {
		if _, p, ok := o.get(key); ok {
			c.add(p, "not for ping flows (cc %q): a probe runs from its start to the end of the run", Ping)
		}
	}
	for _, key := range []string{"tcp", "cc_params", "rate", "ecn", "legs"} {
		if _, p, ok := o.get(key); ok {
			c.add(p, "not for ping flows (cc %q): a probe is an echo request and its reply, not a TCP flow or a pump", Ping)
		}
	}
}

func (c *collector) app(flow obj) AppPattern {
	a := AppPattern{Kind: Greedy}
	v, path, ok := flow.get("app")
	if !ok {
		return a
	}
	o, ok := c.object(path, v, appShape)
	if !ok {
		return a
	}
	kindOK := true
	if v, p, ok := o.get("kind"); ok {
		a.Kind, kindOK = enum(c, p, v, appKinds)
	}
	v, p, ok := o.get("rate")
	switch {
	case ok && a.Kind == AppRate:
		a.Rate, _ = c.rate(p, v)
	case ok && kindOK:
		c.add(p, "only for app kind \"rate\"")
	case a.Kind == AppRate:
		c.add(p, "missing; app kind \"rate\" writes at a fixed rate, e.g. \"10Mbps\"")
	}
	for _, f := range []struct {
		key string
		dst *sim.Duration
	}{{"on", &a.On}, {"off", &a.Off}} {
		v, p, ok := o.get(f.key)
		switch {
		case ok && a.Kind == OnOff:
			if d, ok := c.duration(p, v); ok {
				if d == 0 {
					c.add(p, "must be positive")
				}
				*f.dst = d
			}
		case ok && kindOK:
			c.add(p, "only for app kind \"onoff\"")
		case a.Kind == OnOff:
			c.add(p, "missing; app kind \"onoff\" needs on and off durations")
		}
	}
	v, p, ok = o.get("write")
	switch {
	case ok && a.Kind == Greedy:
		if n, ok := c.size(p, v); ok {
			switch {
			case n == 0:
				c.add(p, "must be positive")
			case n > MaxAppWrite:
				c.add(p, "%v is above %v", n, MaxAppWrite)
			}
			a.Write = n
		}
	case ok && kindOK:
		c.add(p, "only for app kind \"greedy\"")
	}
	return a
}

func (c *collector) tcp(flow obj) TCPOptions {
	t := DefaultTCPOptions()
	v, path, ok := flow.get("tcp")
	if !ok {
		return t
	}
	o, ok := c.object(path, v, tcpShape)
	if !ok {
		return t
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{
		{"sack", &t.SACK}, {"rack", &t.RACK}, {"tlp", &t.TLP}, {"prr", &t.PRR}, {"frto", &t.FRTO},
		{"tso", &t.TSO}, {"gro", &t.GRO}, {"delayed_ack", &t.DelayedAck}, {"ecn", &t.ECN},
		{"ecn_low", &t.ECNLow},
	} {
		if v, p, ok := o.get(b.key); ok {
			if x, ok := c.boolean(p, v); ok {
				*b.dst = x
			}
		}
	}
	if v, p, ok := o.get("pacing"); ok {
		t.Pacing, _ = c.pacing(p, v)
	}
	if v, p, ok := o.get("mss"); ok {
		if n, ok := c.size(p, v); ok {
			if n < MinMSS {
				c.add(p, "%v is below the kernel's minimum MSS of %v (TCP_MIN_MSS)", n, MinMSS)
			}
			if n > MaxMSS {
				c.add(p, "%v is above the largest MSS the kernel takes, %v (TCP_MAXSEG's bound, MAX_TCP_WINDOW)", n, MaxMSS)
			}
			t.MSS = n
		}
	}
	if v, p, ok := o.get("init_cwnd"); ok {
		if n, ok := c.countIn(p, v, 1, math.MaxUint32); ok {
			t.InitCwnd = uint32(n)
		}
	}
	if v, p, ok := o.get("sndbuf"); ok {
		t.SndBuf, _ = c.buffer(p, v)
	}
	if v, p, ok := o.get("rcvbuf_init"); ok {
		if n, ok := c.size(p, v); ok {
			// The handshake offers half the buffer (tcp_select_initial_window
			// at scaling_ratio ½); below one MSS no full segment fits, and
			// the zero-window probes Linux would crawl on are not modelled.
			if n < 2*t.MSS {
				c.add(p, "%v is below twice the MSS (%v): the handshake's window, half the buffer, would hold no full segment", n, 2*t.MSS)
			}
			t.RcvBufInit = n
		}
	}
	v, p, given := o.get("rcvbuf_max")
	valid := true
	if given {
		t.RcvBufMax, valid = c.size(p, v)
	}
	if valid && t.RcvBufMax < t.RcvBufInit {
		c.add(p, "%v is below rcvbuf_init %v", t.RcvBufMax, t.RcvBufInit)
	}
	if v, p, ok := o.get("gro_interval"); ok {
		t.GROInterval, _ = c.duration(p, v)
	}
	if v, p, ok := o.get("hz"); ok {
		if n, ok := c.count(p, v, math.MaxInt32); ok {
			switch n {
			case 100, 250, 300, 1000:
				t.HZ = int(n)
			default:
				c.add(p, "%d is not a CONFIG_HZ the kernel offers; expected 100, 250, 300 or 1000", n)
			}
		}
	}
	if v, p, ok := o.get("timestamps"); ok {
		if n, ok := c.count(p, v, math.MaxInt32); ok {
			switch n {
			case 1, 2:
				t.Timestamps = int(n)
			case 0:
				c.add(p, "0 (no timestamps) is not simulated: the endpoint always negotiates them; expected 1 (random offsets, Linux's default) or 2 (none)")
			default:
				c.add(p, "%d is not a value of sysctl tcp_timestamps; expected 1 (random offsets, Linux's default) or 2 (none)", n)
			}
		}
	}
	return t
}
