package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The canonical form keeps a flow's receive path: Parse(Canonical) gives
// the same rcv_hold, ack_hold and ack_grant (a profile with a field set
// over it included), so a server session or a checkpoint, both built from
// the canonical form, run the same receive path. Flows without one keep
// their canonical form.
func TestCanonicalKeepsReceivePath(t *testing.T) {
	s, err := parseSets(t, []string{
		"flows.f0.rcv_hold=100us",
		`flows.f0.ack_hold={"quantiles":["0ms","1ms","4ms"],"saturation":0.8}`,
		`flows.f0.ack_grant={"profile":"lte","per_grant":8}`,
	})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	again := mustParse(t, s.Canonical())
	if diff := cmp.Diff(s.Flows[0].Rcv, again.Flows[0].Rcv); diff != "" {
		t.Errorf("receive path after a canonical round trip (-first +again):\n%s", diff)
	}
	if g := again.Flows[0].Rcv.Grant; g == nil || g.Profile != "lte" || g.PerGrant != 8 {
		t.Errorf("ack_grant = %+v, want the lte profile with per_grant 8", g)
	}
	plain := string(mustParse(t, []byte(baseJSON)).Canonical())
	for _, k := range []string{"rcv_hold", "ack_hold", "ack_grant"} {
		if strings.Contains(plain, k) {
			t.Errorf("canonical form of flows without a receive path has %q", k)
		}
	}
}
