package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func obsMap(t *testing.T, res map[string]any) map[string]int64 {
	t.Helper()
	raw, ok := res["obs"].([]any)
	if !ok || len(raw) != len(ObservationFields) {
		t.Fatalf("step result obs = %v, want %d values", res["obs"], len(ObservationFields))
	}
	m := map[string]int64{}
	for i, f := range ObservationFields {
		m[f] = asInt(raw[i])
	}
	return m
}

// A step that carries its action and observes the flow is the same as act
// then step, one round trip instead of two: the same action log, the same
// digest at the end. Its observation is the path's: on p-rtr-p (100 Mbps,
// 40 ms base RTT, MSS 1448 in 1500-byte packets) a bulk CUBIC flow after 5 s
// delivers at most 100 · 1448/1500 = 96.5 Mbps of payload, and its min RTT
// is the 40 ms of propagation plus serialisation (0.12 ms at 100 Mbps, a
// little more for the ACK and the access links) — under 41 ms.
func TestStepWithActionAndObservation(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	one := c.open("p-rtr-p", "runtime.duration=8s")
	two := c.open("p-rtr-p", "runtime.duration=8s")
	c.call("step", map[string]any{"session": one, "time": "5s"})
	c.call("step", map[string]any{"session": two, "time": "5s"})
	action := map[string]any{"flow": "f0", "cwnd": 100}
	res := c.call("step", map[string]any{"session": one, "time": "10ms", "action": action, "observe": "f0"})
	c.call("act", map[string]any{"session": two, "action": action})
	plain := c.call("step", map[string]any{"session": two, "time": "10ms"})
	if res["sim_time_ps"] != plain["sim_time_ps"] || res["events"] != plain["events"] || asInt(res["action_index"]) != 0 {
		t.Errorf("step with action = %v, act then step = %v", res, plain)
	}
	o := obsMap(t, res)
	if o["t_ps"] != asInt(res["sim_time_ps"]) {
		t.Errorf("obs t_ps = %d, want the step's sim_time_ps %v", o["t_ps"], res["sim_time_ps"])
	}
	if o["min_rtt_ps"] < 40e9 || o["min_rtt_ps"] > 41e9 {
		t.Errorf("obs min_rtt_ps = %d, want in [40 ms, 41 ms]", o["min_rtt_ps"])
	}
	if o["srtt_ps"] < o["min_rtt_ps"] {
		t.Errorf("obs srtt_ps %d < min_rtt_ps %d", o["srtt_ps"], o["min_rtt_ps"])
	}
	if r := o["delivery_rate_bps"]; r <= 0 || r > 100_000_000*1448/1500+1 {
		t.Errorf("obs delivery_rate_bps = %d, want in (0, 96.5 Mbps]", r)
	}
	// The sender counts a packet delivered when its ACK returns, half an
	// RTT after the receiving application got it: the application is
	// ahead, by at most a window.
	if ahead := o["bytes_delivered"] - o["delivered_pkts"]*1448; ahead < 0 || ahead > (o["cwnd_pkts"]+o["inflight_pkts"])*1448 {
		t.Errorf("obs %v: the application is %d bytes ahead of the sender's delivered count, want within a window", o, ahead)
	}
	cpOne := c.call("checkpoint", map[string]any{"session": one})["checkpoint"].(map[string]any)
	cpTwo := c.call("checkpoint", map[string]any{"session": two})["checkpoint"].(map[string]any)
	if diff := cmp.Diff(cpTwo["actions"], cpOne["actions"]); diff != "" {
		t.Errorf("action logs differ (-act then step +step with action):\n%s", diff)
	}
	a := c.call("run", map[string]any{"session": one})
	b := c.call("run", map[string]any{"session": two})
	if a["digest"] != b["digest"] {
		t.Errorf("digests differ: step with action %v, act then step %v", a["digest"], b["digest"])
	}
}

func TestStepObserveErrorsNameTheArgument(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open("p-rtr-p", "runtime.duration=1s")
	for _, tc := range []struct {
		name string
		args map[string]any
		path string
		why  string // what the message must say
	}{
		{"unknown flow", map[string]any{"time": "1ms", "observe": "f9"}, "observe", `observe: "f9" is not a TCP flow of this session`},
		{"action without target", map[string]any{"time": "1ms", "action": map[string]any{"cwnd": 10}}, "action.link", "action.link (with action.dir) or action.flow is required"},
		{"action on a link with cwnd", map[string]any{"time": "1ms", "action": map[string]any{"link": "bottleneck", "dir": "ab", "cwnd": 1}}, "action.cwnd", "action.cwnd does not apply to a link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["session"] = id
			e := c.fail("step", tc.args)
			if m, _ := e["message"].(string); e["code"] != string(CodeBadArgs) || e["path"] != tc.path || !strings.Contains(m, tc.why) {
				t.Errorf("step %v: error %v, want bad_args at %s saying %q", tc.args, e, tc.path, tc.why)
			}
		})
	}
	// A bad step leaves nothing logged.
	cp := c.call("checkpoint", map[string]any{"session": id})["checkpoint"].(map[string]any)
	if acts, _ := cp["actions"].([]any); len(acts) != 0 {
		t.Errorf("action log after failed steps = %v, want empty", acts)
	}
}

// obs_format "int64le" carries the same 13 values as a bin of
// little-endian int64s (the layout numpy reads with dtype "<i8"), decoded
// here by hand: byte k of value i is bits 8k..8k+7 of the integer.
func TestStepObsFormatInt64LE(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	one := c.open("p-rtr-p", "runtime.duration=2s")
	two := c.open("p-rtr-p", "runtime.duration=2s")
	for range 3 {
		list := c.call("step", map[string]any{"session": one, "time": "200ms", "observe": "f0"})
		bin := c.call("step", map[string]any{"session": two, "time": "200ms", "observe": "f0", "obs_format": "int64le"})
		raw, ok := bin["obs"].([]byte)
		if !ok || len(raw) != 8*len(ObservationFields) {
			t.Fatalf("obs = %T %v, want a bin of %d bytes", bin["obs"], bin["obs"], 8*len(ObservationFields))
		}
		want := list["obs"].([]any)
		for i := range ObservationFields {
			var v uint64
			for k := range 8 {
				v |= uint64(raw[8*i+k]) << (8 * k)
			}
			if int64(v) != asInt(want[i]) {
				t.Errorf("obs[%d] (%s) = %d from the bin, %d from the array", i, ObservationFields[i], int64(v), asInt(want[i]))
			}
		}
	}
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"unknown format", map[string]any{"time": "1ms", "observe": "f0", "obs_format": "float32"}},
		{"not a string", map[string]any{"time": "1ms", "observe": "f0", "obs_format": 1}},
		{"without observe", map[string]any{"time": "1ms", "obs_format": "int64le"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["session"] = one
			if e := c.fail("step", tc.args); e["code"] != string(CodeBadArgs) || e["path"] != "obs_format" {
				t.Errorf("step %v: error %v, want bad_args at obs_format", tc.args, e)
			}
		})
	}
}
