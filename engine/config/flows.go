package config

import (
	"math"
	"slices"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Flow and TCP defaults. The buffer sizes are Linux's: tcp_wmem caps the send
// buffer at 4 MB, tcp_rmem starts the receive buffer at 131072 bytes and lets
// autotuning grow it to 6291456. The initial window is TCP_INIT_CWND (10,
// RFC 6928) and the MSS is 1448, what a 1500-byte MTU leaves after IPv4, TCP
// and the timestamp option.
const (
	DefaultPacketSize = 1500 * units.B
	DefaultMSS        = 1448 * units.B
	DefaultInitCwnd   = 10
	DefaultSndBuf     = 4 * units.MB
	DefaultRcvBufInit = 131072 * units.B
	DefaultRcvBufMax  = 6291456 * units.B

	// MinMSS is TCP_MIN_MSS from include/net/tcp.h: the kernel clamps any
	// smaller MSS up to it.
	MinMSS = 88 * units.B
)

// DefaultTCPOptions returns a TCP flow's options when it sets none: every
// mechanism on except ECN and ECNLow, as on a stock Linux host.
func DefaultTCPOptions() TCPOptions {
	return TCPOptions{
		SACK: true, RACK: true, TLP: true, PRR: true, FRTO: true,
		Pacing: PacingAuto, TSO: true, GRO: true, DelayedAck: true, ECN: false,
		MSS: DefaultMSS, InitCwnd: DefaultInitCwnd, SndBuf: DefaultSndBuf,
		RcvBufInit: DefaultRcvBufInit, RcvBufMax: DefaultRcvBufMax,
	}
}

var (
	appKinds    = map[string]AppKind{"greedy": Greedy, "rate": AppRate, "onoff": OnOff}
	ecnMarkings = map[string]ECNField{"not-ect": NotECT, "ect0": ECT0, "ect1": ECT1}
)

func (c *collector) flow(path string, o obj, id string, opts options) Flow {
	f := Flow{ID: id, CC: DefaultCC}
	for _, end := range []struct {
		key string
		dst *string
	}{{"src", &f.Src}, {"dst", &f.Dst}} {
		if v, p, ok := o.get(end.key); ok {
			*end.dst, _ = c.str(p, v)
		} else {
			c.add(p, "missing; name an endpoint node")
		}
	}
	if v, p, ok := o.get("cc"); ok {
		if s, ok := c.str(p, v); ok {
			f.CC = s
			if s != Pump && opts.ccs != nil && !slices.Contains(opts.ccs, s) {
				c.add(p, "unknown congestion control %q; known: %s", s, strings.Join(append([]string{Pump}, opts.ccs...), ", "))
			}
		}
	}
	if v, p, ok := o.get("start"); ok {
		f.Start, _ = c.duration(p, v)
	}
	if v, p, ok := o.get("size"); ok {
		f.Size, _ = c.size(p, v)
	}
	if f.CC == Pump {
		c.pump(path, o, &f)
		return f
	}
	for _, key := range []string{"rate", "packet_size", "ecn"} {
		if _, p, ok := o.get(key); ok {
			c.add(p, "only for pump flows (cc %q); a TCP flow's app sets its rate", Pump)
		}
	}
	f.App = c.app(o)
	f.TCP = c.tcp(o)
	f.Rcv = c.rcvPath(o)
	return f
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
			f.PacketSize = n
		}
	}
	if v, p, ok := o.get("ecn"); ok {
		f.ECN, _ = enum(c, p, v, ecnMarkings)
	}
	for _, key := range []string{"app", "tcp", "rcv_hold", "ack_hold", "ack_grant"} {
		if _, p, ok := o.get(key); ok {
			c.add(p, "only for TCP flows; this flow's cc is %q", Pump)
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
			t.MSS = n
		}
	}
	if v, p, ok := o.get("init_cwnd"); ok {
		if n, ok := c.count(p, v, math.MaxUint32); ok {
			if n == 0 {
				c.add(p, "must be at least 1 packet")
			}
			t.InitCwnd = uint32(n)
		}
	}
	if v, p, ok := o.get("sndbuf"); ok {
		t.SndBuf, _ = c.buffer(p, v)
	}
	if v, p, ok := o.get("rcvbuf_init"); ok {
		if n, ok := c.size(p, v); ok {
			if n == 0 {
				c.add(p, "must be positive")
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
	return t
}
