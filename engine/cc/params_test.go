package cc_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/cc/cctest"
	"github.com/ccscope/ccscope/engine/sim"
)

// TestParamsDefaultsAreTheKernels holds each module parameter's default to
// the kernel's source (tcp_cubic.c, tcp_dctcp.c) and the L4S tree's
// tcp_prague.c, and every parameterised name to a registered algorithm.
func TestParamsDefaultsAreTheKernels(t *testing.T) {
	want := map[string]map[string]int64{
		"cubic": {"beta": 717, "bic_scale": 41, "fast_convergence": 1, "tcp_friendliness": 1, "hystart": 1,
			"hystart_detect": 3, "hystart_low_window": 16, "hystart_ack_delta_us": 2000, "initial_ssthresh": 0},
		"dctcp":  {"dctcp_shift_g": 4, "dctcp_alpha_on_init": 1024},
		"prague": {"prague_burst_shift": 12, "prague_max_tso_segs": 0, "prague_rtt_transition": 4, "prague_rtt_target": 25000, "prague_alpha_mode": 0, "prague_cwnd_mode": 2, "prague_cwnd_transit": 4},
		// tcp_htcp.c, tcp_illinois.c, tcp_cdg.c (backoff_beta = 0.7071·1024
		// as an unsigned int), tcp_nv.c.
		"htcp":     {"use_rtt_scaling": 1, "use_bandwidth_switch": 1},
		"illinois": {"win_thresh": 15, "theta": 5},
		"cdg":      {"backoff_beta": 724, "backoff_factor": 42, "hystart_detect": 3, "use_ineff": 5, "use_shadow": 1, "use_tolerance": 0},
		"nv":       {"nv_pad": 10, "nv_reset_period": 5, "nv_min_cwnd": 2},
	}
	for _, name := range cc.Names() {
		specs := cc.Params(name)
		if len(specs) != len(want[name]) {
			t.Errorf("%s: %d parameters, want %d", name, len(specs), len(want[name]))
		}
		for _, s := range specs {
			if d, ok := want[name][s.Name]; !ok || s.Default != d {
				t.Errorf("%s's %s: default %d, want %d (known: %v)", name, s.Name, s.Default, d, ok)
			}
			if s.Default < s.Min || s.Default > s.Max {
				t.Errorf("%s's %s: default %d outside %d..%d", name, s.Name, s.Default, s.Min, s.Max)
			}
			if _, err := cc.NewWith(name, map[string]int64{s.Name: s.Default}); err != nil {
				t.Errorf("%s with %s at its default: %v", name, s.Name, err)
			}
		}
	}
}

// TestNewWithRefuses names the algorithm and parameter of each bad setting.
func TestNewWithRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		set  map[string]int64
		want string
	}{
		{"cubic", map[string]int64{"betta": 512}, `cubic has no module parameter "betta"; its parameters: beta, bic_scale`},
		{"cubic", map[string]int64{"beta": 1024}, "cubic's beta is 1024, want 1..1023"},
		{"cubic", map[string]int64{"hystart": 2}, "cubic's hystart is 2, want 0..1"},
		{"dctcp", map[string]int64{"dctcp_shift_g": 11}, "dctcp's dctcp_shift_g is 11, want 0..10"},
		{"bbr", map[string]int64{"beta": 512}, "bbr has no module parameters"},
	} {
		_, err := cc.NewWith(c.name, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewWith(%s, %v) = %v, want an error containing %q", c.name, c.set, err, c.want)
		}
	}
}

// TestCheckParamsTogether: CUBIC's beta 100 keeps beta_scale at
// 8·1124/3/924 = 3, so with tcp_friendliness the Reno-friendly loop's
// cwnd·3/8 ACKs a packet is 0 at a cwnd of 2 and never ends; alone each
// value is in range.
func TestCheckParamsTogether(t *testing.T) {
	for _, c := range []struct {
		name string
		set  map[string]int64
		want string // "" for no error
	}{
		{"cubic", map[string]int64{"beta": 100}, "cubic: beta = 100 with tcp_friendliness 1 and a cwnd of 2"},
		{"cubic", map[string]int64{"beta": 100, "tcp_friendliness": 0}, ""},
		{"cubic", map[string]int64{"beta": 717}, ""},
		{"bbr", nil, ""},
	} {
		err := cc.CheckParams(c.name, c.set)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("CheckParams(%s, %v) = %v, want %q", c.name, c.set, err, c.want)
		}
	}
}

// TestCubicParamsShapeTheCurve sets tcp_cubic's beta and bic_scale and
// checks RFC 9438's curve with those constants: after a loss at W_max =
// 1000 the window is β·W_max, then W(t) = C·(t − K)³ + W_max with K =
// cbrt(W_max·(1 − β)/C), β = 512/1024 and C = 82·10/1024.
func TestCubicParamsShapeTheCurve(t *testing.T) {
	a, err := cc.NewWith("cubic", map[string]int64{"beta": 512, "bic_scale": 82})
	if err != nil {
		t.Fatal(err)
	}
	c := cctest.New(a, cctest.Options{})
	c.St.CwndPkts, c.St.SSThreshPkts = 1000, 1000
	path := cctest.Path{RTT: 100 * sim.Millisecond, BDPPkts: 20000, Drop: dropFirst()}
	trace, wmax, _ := epochTrace(c, path, 16*sim.Second, 1)
	if wmax != 1000 {
		t.Fatalf("cwnd at loss = %d, want 1000", wmax)
	}
	beta, cC := 0.5, 820.0/1024
	if got := trace[0]; got != 500 {
		t.Errorf("cwnd at the epoch's start = %d, want β·W_max = 500", got)
	}
	k := math.Cbrt(1000 * (1 - beta) / cC)
	for _, ts := range []float64{1, 3, 5, 7, 8, 10, 12} {
		want := cC*math.Pow(ts-k, 3) + 1000
		if got := float64(trace[ts]); math.Abs(got/want-1) > 0.01 {
			t.Errorf("cwnd(t=%.0fs) = %.0f, want W(t) = %.1f ± 1%% (K %.2fs)", ts, got, want, k)
		}
	}
}
