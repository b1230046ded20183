package server

import "testing"

// A learning loop's first steps fall in the handshake: a cwnd it sets
// there is held as the connection's initial window, not reset to IW10
// when the connection comes up (p-rtr-p's at 40.009 ms).
func TestCwndActionInHandshakeHeld(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	sid := c.open("p-rtr-p", "runtime.duration=1s")
	for _, step := range []map[string]any{
		{"session": sid, "time": "40ms", "action": map[string]any{"flow": "f0", "cwnd": 5}, "observe": "f0"},
		{"session": sid, "time": "1050us", "observe": "f0"},
	} {
		obs, _ := c.call("step", step)["obs"].([]any)
		if len(obs) != len(ObservationFields) || asInt(obs[1]) != 5 {
			t.Errorf("step %v: obs %v, want cwnd_pkts 5", step, obs)
		}
	}
}
