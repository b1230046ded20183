//go:build linux

package emulate

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// TestCubicParamsChecked: tcp_cubic's module parameters are the kernel's,
// not a socket's, so the cubic flows of a run must agree on them (the
// defaults for a flow that sets none); bic_scale (read-only) and beta
// (half taken at run time) are refused, and another CC's parameters too,
// each naming its field.
func TestCubicParamsChecked(t *testing.T) {
	flow := func(id, cc string, p map[string]int64) config.Flow {
		return config.Flow{ID: id, Params: &config.Params{CC: cc, CCParams: p}}
	}
	want, errs := cubicParams([]config.Flow{flow("a", "cubic", map[string]int64{"hystart": 0}),
		flow("b", "cubic", map[string]int64{"hystart": 0}), flow("c", "bbr", nil)})
	if len(errs) > 0 || want["hystart"] != 0 || want["hystart_low_window"] != 16 || want["beta"] != 717 {
		t.Errorf("two cubic flows alike: %v, %v; want hystart 0 over the defaults, no error", want, errs)
	}
	if _, ok := want["bic_scale"]; ok {
		t.Errorf("want %v sets the read-only bic_scale", want)
	}
	_, errs = cubicParams([]config.Flow{flow("a", "cubic", map[string]int64{"hystart": 0, "beta": 512, "bic_scale": 82}),
		flow("b", "cubic", nil), flow("d", "dctcp", map[string]int64{"dctcp_shift_g": 2})})
	for _, w := range []string{
		"flows[a].cc_params.beta: the running kernel would take it in its loss response",
		"flows[a].cc_params.bic_scale: the kernel shows it read-only",
		"flows[b].cc_params.hystart: 1, but flows[a] runs tcp_cubic with 0",
		"flows[d].cc_params: emulation sets only tcp_cubic's module parameters, not dctcp's",
	} {
		if !strings.Contains(strings.Join(errs, "\n"), w) {
			t.Errorf("errors %q lack %q", errs, w)
		}
	}
}

// TestCubicParamsReachTheKernel runs CUBIC without HyStart and with an
// initial ssthresh of 40 packets (bictcp_init takes initial_ssthresh only
// then) on the kernel and in the simulator: both leave slow start at 40,
// with no loss, and the kernel's parameters are its own again afterwards.
func TestCubicParamsReachTheKernel(t *testing.T) {
	requireEmulation(t)
	before := map[string]string{}
	for _, k := range []string{"hystart", "initial_ssthresh"} {
		b, err := os.ReadFile(filepath.Join(cubicParamDir, k))
		if err != nil {
			t.Fatal(err)
		}
		before[k] = strings.TrimSpace(string(b))
	}
	raw := strings.Replace(cleanPath, `"cc": "cubic", "tcp": {"pacing": true}}`,
		`"cc": "cubic", "cc_params": {"hystart": false, "initial_ssthresh": 40}}`, 1)
	prep, err := engine.Prepare([]byte(raw), []string{"runtime.duration=2s"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), prep.Scenario, prep.Hash, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Trace.FlowsT.Rows
	if len(rows) == 0 || rows[0].SSThreshPkts != 40 {
		t.Fatalf("the kernel's first TCP_INFO sample: %+v; want snd_ssthresh 40", rows[:min(len(rows), 1)])
	}
	// From 40 congestion avoidance grows by at least 5 % a round
	// (bictcp_update caps cnt at 20 while last_max_cwnd is 0): about 60
	// by 500 ms, where slow start would have passed 600.
	at := func(rows []trace.FlowRow, t sim.Time) trace.FlowRow {
		i := sort.Search(len(rows), func(i int) bool { return rows[i].T > t })
		return rows[max(i-1, 0)]
	}
	k := at(rows, sim.Time(500*sim.Millisecond))
	if k.CwndPkts < 45 || k.CwndPkts > 80 || k.Retrans > 0 {
		t.Errorf("the kernel at 500 ms: cwnd %d, %d retransmitted; want 45..80 in congestion avoidance, none", k.CwndPkts, k.Retrans)
	}
	sprep := *prep
	scn := *prep.Scenario
	scn.Trace = config.Trace{Detail: config.TraceChange}
	sprep.Scenario = &scn
	r, err := engine.New(sprep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.RunUntil(500 * sim.Time(sim.Millisecond))
	srows := r.Trace.FlowsT.Rows
	s := at(srows, sim.Time(500*sim.Millisecond))
	t.Logf("at 500 ms: cwnd %d on the kernel, %d simulated", k.CwndPkts, s.CwndPkts)
	if s.SSThreshPkts != 40 || math.Abs(float64(s.CwndPkts)/float64(k.CwndPkts)-1) > 0.1 {
		t.Errorf("the simulator at 500 ms: ssthresh %d, cwnd %d; want 40 and the kernel's %d ± 10 %%", s.SSThreshPkts, s.CwndPkts, k.CwndPkts)
	}
	for k, v := range before {
		b, _ := os.ReadFile(filepath.Join(cubicParamDir, k))
		if got := strings.TrimSpace(string(b)); got != v {
			t.Errorf("tcp_cubic's %s is %s after the run, want %s as before", k, got, v)
		}
	}
}

// TestCubicParamsWithoutSysfs: a kernel that shows no tcp_cubic parameters
// runs its defaults for flows that set none, and refuses a flow that sets
// some, naming it. With the parameters shown, a value that differs is
// written and the old one restored at cleanup.
func TestCubicParamsWithoutSysfs(t *testing.T) {
	saved := cubicParamDir
	defer func() { cubicParamDir = saved }()
	cubicParamDir = filepath.Join(t.TempDir(), "absent")
	plain := []config.Flow{{ID: "a", Params: &config.Params{CC: "cubic"}}}
	set := []config.Flow{{ID: "b", Params: &config.Params{CC: "cubic", CCParams: map[string]int64{"hystart": 0}}}}
	if err := (&run{}).setCubicParams(map[string]int64{"hystart": 1}, plain); err != nil {
		t.Errorf("defaults without sysfs: %v", err)
	}
	if err := (&run{}).setCubicParams(map[string]int64{"hystart": 0}, set); err == nil || !strings.Contains(err.Error(), "flows[b].cc_params") {
		t.Errorf("cc_params without sysfs: %v, want an error naming flows[b].cc_params", err)
	}
	cubicParamDir = t.TempDir()
	path := filepath.Join(cubicParamDir, "hystart")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &run{}
	if err := e.setCubicParams(map[string]int64{"hystart": 0}, set); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "0" {
		t.Errorf("hystart = %q during the run, want 0", b)
	}
	if err := e.cleanup(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "1" {
		t.Errorf("hystart = %q after cleanup, want 1", b)
	}
}
