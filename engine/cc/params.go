package cc

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ccscope/ccscope/engine/sim"
)

// ParamSpec is one module parameter of an algorithm, under the kernel's
// name (/sys/module/<module>/parameters/<name>), in the kernel's units: an
// integer, a flag being 0 or 1.
type ParamSpec struct {
	Name     string
	Min, Max int64
	Default  int64
	Help     string
}

// paramSet is an algorithm's module parameters and how to build it with
// some of them set.
type paramSet struct {
	specs []ParamSpec
	build func(set map[string]int64) (Algorithm, error)
}

var paramSets = map[string]paramSet{}

// param is a module parameter of an algorithm whose parameters are a T.
type param[T any] struct {
	ParamSpec
	set func(p *T, v int64)
}

// registerParams gives the algorithm registered as name its module
// parameters: NewWith sets those given (each one of params, within its
// range) on def and builds the algorithm from it.
func registerParams[T any](name string, def T, params []param[T], build func(T) (Algorithm, error)) {
	specs := make([]ParamSpec, len(params))
	for i, q := range params {
		specs[i] = q.ParamSpec
	}
	paramSets[name] = paramSet{specs, func(set map[string]int64) (Algorithm, error) {
		p := def
		for _, q := range params {
			if v, ok := set[q.Name]; ok {
				q.set(&p, v)
			}
		}
		return build(p)
	}}
}

// Params lists an algorithm's module parameters; nil when it has none.
func Params(name string) []ParamSpec { return paramSets[name].specs }

// CheckParam reports whether algorithm name has a parameter param and v is
// within its range, in words for a config error.
func CheckParam(name, param string, v int64) error {
	ps, ok := paramSets[name]
	if !ok {
		return fmt.Errorf("%s has no module parameters", name)
	}
	for _, s := range ps.specs {
		if s.Name != param {
			continue
		}
		if v < s.Min || v > s.Max {
			return fmt.Errorf("%s's %s is %d, want %d..%d (%s)", name, param, v, s.Min, s.Max, s.Help)
		}
		return nil
	}
	names := make([]string, len(ps.specs))
	for i, s := range ps.specs {
		names[i] = s.Name
	}
	return fmt.Errorf("%s has no module parameter %q; its parameters: %s", name, param, strings.Join(names, ", "))
}

// CheckParams reports whether module parameters that each pass CheckParam
// are valid together, by the algorithm's own rules (such as CUBIC's beta
// with tcp_friendliness); the error leaves out NewWith's "cc: " prefix.
func CheckParams(name string, set map[string]int64) error {
	ps, ok := paramSets[name]
	if !ok || len(set) == 0 {
		return nil
	}
	if _, err := ps.build(set); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "cc: "))
	}
	return nil
}

// NewWith returns a fresh instance of the named algorithm with module
// parameters set (the others at the kernel's defaults); New when set is
// empty.
func NewWith(name string, set map[string]int64) (Algorithm, error) {
	if len(set) == 0 {
		return New(name)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error is the same every time
	for _, k := range keys {
		if err := CheckParam(name, k, set[k]); err != nil {
			return nil, fmt.Errorf("cc: %w", err)
		}
	}
	return paramSets[name].build(set)
}

// flag is a 0/1 module parameter.
func flag(name string, def bool, help string) ParamSpec {
	d := int64(0)
	if def {
		d = 1
	}
	return ParamSpec{Name: name, Min: 0, Max: 1, Default: d, Help: help}
}

func init() {
	d := DefaultCubicParams()
	registerParams("cubic", d, []param[CubicParams]{
		{ParamSpec{"beta", 1, betaScale - 1, int64(d.Beta), "window kept on loss, /1024"},
			func(p *CubicParams, v int64) { p.Beta = uint32(v) }},
		{ParamSpec{"bic_scale", 1, 1024, int64(d.BicScale), "the cubic's C = bic_scale·10/1024"},
			func(p *CubicParams, v int64) { p.BicScale = uint32(v) }},
		{flag("fast_convergence", d.FastConvergence, "lower W_max on a loss below it"),
			func(p *CubicParams, v int64) { p.FastConvergence = v != 0 }},
		{flag("tcp_friendliness", d.TCPFriendliness, "keep at least the Reno-friendly window"),
			func(p *CubicParams, v int64) { p.TCPFriendliness = v != 0 }},
		{flag("hystart", d.HyStart, "hybrid slow start"),
			func(p *CubicParams, v int64) { p.HyStart = v != 0 }},
		{ParamSpec{"hystart_detect", 0, 3, int64(d.HyStartDetect), "HyStart's detectors: 1 ACK train, 2 delay"},
			func(p *CubicParams, v int64) { p.HyStartDetect = HyStartDetect(v) }},
		{ParamSpec{"hystart_low_window", 0, 1<<31 - 1, int64(d.HyStartLowWindow), "smallest cwnd, packets, HyStart may end slow start at"},
			func(p *CubicParams, v int64) { p.HyStartLowWindow = uint32(v) }},
		{ParamSpec{"hystart_ack_delta_us", 0, 1_000_000, int64(d.HyStartAckDeltaUS), "largest ACK spacing, µs, within one train"},
			func(p *CubicParams, v int64) { p.HyStartAckDeltaUS = uint32(v) }},
		{ParamSpec{"initial_ssthresh", 0, 1<<31 - 1, 0, "initial ssthresh, packets, when HyStart is off; 0 keeps it infinite"},
			func(p *CubicParams, v int64) { p.InitialSSThresh = uint32(v) }},
	}, func(p CubicParams) (Algorithm, error) { return NewCubic(p) })

	dd := DefaultDCTCPParams()
	registerParams("dctcp", dd, []param[DCTCPParams]{
		{ParamSpec{"dctcp_shift_g", 0, 10, int64(dd.ShiftG), "the alpha EWMA's gain is 1/2^g"},
			func(p *DCTCPParams, v int64) { p.ShiftG = uint32(v) }},
		{ParamSpec{"dctcp_alpha_on_init", 0, DCTCPMaxAlpha, int64(dd.AlphaOnInit), "alpha at the start, /1024"},
			func(p *DCTCPParams, v int64) { p.AlphaOnInit = uint32(v) }},
	}, func(p DCTCPParams) (Algorithm, error) { return NewDCTCP(p) })

	pd := DefaultPragueParams()
	registerParams("prague", pd, []param[PragueParams]{
		{ParamSpec{"prague_burst_shift", 0, 63, int64(pd.BurstShift), "a GSO burst lasts at most 2^-n s at the pacing rate"},
			func(p *PragueParams, v int64) { p.BurstShift = uint32(v) }},
		{ParamSpec{"prague_max_tso_segs", 0, 1<<31 - 1, int64(pd.MaxTSOSegs), "cap on a burst, segments; 0 none"},
			func(p *PragueParams, v int64) { p.MaxTSOSegs = uint32(v) }},
		{ParamSpec{"prague_rtt_transition", 0, 1<<31 - 1, int64(pd.RTTTransition), "rounds after slow start before RTT independence"},
			func(p *PragueParams, v int64) { p.RTTTransition = uint32(v) }},
		{ParamSpec{"prague_rtt_target", 1, 1 << 28, int64(pd.RTTTarget / sim.Microsecond), "RTT, µs, below which the flow grows as at it"},
			func(p *PragueParams, v int64) { p.RTTTarget = sim.Duration(v) * sim.Microsecond }},
		{ParamSpec{"prague_alpha_mode", 0, 1, int64(pd.AlphaMode), "0 halve at the first mark, 1 alpha starts at 1"},
			func(p *PragueParams, v int64) { p.AlphaMode = PragueAlphaMode(v) }},
		{ParamSpec{"prague_cwnd_mode", 0, 2, int64(pd.CwndMode), "0 window, 1 rate, 2 switch by window size"},
			func(p *PragueParams, v int64) { p.CwndMode = PragueCwndMode(v) }},
		{ParamSpec{"prague_cwnd_transit", 0, 1<<31 - 1, int64(pd.CwndTransitPkts), "window, 1500-byte packets, where mode 2 switches"},
			func(p *PragueParams, v int64) { p.CwndTransitPkts = uint32(v) }},
	}, func(p PragueParams) (Algorithm, error) { return NewPrague(p) })

	hd := DefaultHTCPParams()
	registerParams("htcp", hd, []param[HTCPParams]{
		{flag("use_rtt_scaling", hd.UseRTTScaling, "scale α by minRTT/100 ms"),
			func(p *HTCPParams, v int64) { p.UseRTTScaling = v != 0 }},
		{flag("use_bandwidth_switch", hd.UseBandwidthSwitch, "β back to 0.5 when the throughput moved over 20 %"),
			func(p *HTCPParams, v int64) { p.UseBandwidthSwitch = v != 0 }},
	}, func(p HTCPParams) (Algorithm, error) { return &HTCP{p: p}, nil })

	id := DefaultIllinoisParams()
	registerParams("illinois", id, []param[IllinoisParams]{
		{ParamSpec{"win_thresh", 0, 1<<31 - 1, int64(id.WinThresh), "below this cwnd, packets, Reno's α and β"},
			func(p *IllinoisParams, v int64) { p.WinThresh = uint32(v) }},
		{ParamSpec{"theta", 0, 1<<31 - 1, int64(id.Theta), "low-delay rounds before α returns to α_max"},
			func(p *IllinoisParams, v int64) { p.Theta = int(v) }},
	}, func(p IllinoisParams) (Algorithm, error) { return &Illinois{p: p}, nil })

	cd := DefaultCDGParams()
	registerParams("cdg", cd, []param[CDGParams]{
		{ParamSpec{"backoff_beta", 0, 1024, int64(cd.BackoffBeta), "cwnd kept at a delay backoff, /1024"},
			func(p *CDGParams, v int64) { p.BackoffBeta = uint32(v) }},
		{ParamSpec{"backoff_factor", 0, 1 << 20, int64(cd.BackoffFactor), "backoff probability scale, 1000/(G·window) of the paper"},
			func(p *CDGParams, v int64) { p.BackoffFactor = uint32(v) }},
		{ParamSpec{"hystart_detect", 0, 3, int64(cd.HystartDetect), "HyStart's detectors: 1 ACK train, 2 delay"},
			func(p *CDGParams, v int64) { p.HystartDetect = uint32(v) }},
		{ParamSpec{"use_ineff", 0, 65535, int64(cd.UseIneff), "backoffs without the delay falling before they stop; 0 no limit"},
			func(p *CDGParams, v int64) { p.UseIneff = uint32(v) }},
		{flag("use_shadow", cd.UseShadow, "a loss keeps half the shadow window"),
			func(p *CDGParams, v int64) { p.UseShadow = v != 0 }},
		{flag("use_tolerance", cd.UseTolerance, "a loss while the queue is not full keeps cwnd"),
			func(p *CDGParams, v int64) { p.UseTolerance = v != 0 }},
	}, func(p CDGParams) (Algorithm, error) { return &CDG{p: p}, nil })

	nd := DefaultNVParams()
	registerParams("nv", nd, []param[NVParams]{
		{ParamSpec{"nv_pad", 0, 1 << 16, int64(nd.Pad), "queued packets allowed above the window the rate needs"},
			func(p *NVParams, v int64) { p.Pad = uint32(v) }},
		{ParamSpec{"nv_reset_period", 0, 3000, int64(nd.ResetPeriod), "min_rtt reset period, s (±25 % at random)"},
			func(p *NVParams, v int64) { p.ResetPeriod = uint32(v) }},
		{ParamSpec{"nv_min_cwnd", 0, 1 << 16, int64(nd.MinCwnd), "no decrease below this cwnd, packets, without losses"},
			func(p *NVParams, v int64) { p.MinCwnd = uint32(v) }},
	}, func(p NVParams) (Algorithm, error) { return &NV{p: p}, nil })
}
