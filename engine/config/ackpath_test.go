package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/sim"
)

func TestRcvPathErrors(t *testing.T) {
	cases := []struct {
		name string
		set  string
		want want
	}{
		{"unknown profile", `flows.f0.ack_grant={"profile": "3g"}`,
			want{"flows[f0].ack_grant.profile", `unknown profile "3g"; known: 5g, leo, lte, wifi`}},
		{"grant without profile or gap", `flows.f0.ack_grant={"per_grant": 4}`,
			want{"flows[f0].ack_grant.gap", "missing; give a profile"}},
		{"grant without per_grant", `flows.f0.ack_grant={"gap": ["1ms", "2ms"]}`,
			want{"flows[f0].ack_grant.per_grant", "missing"}},
		{"zero per_grant", `flows.f0.ack_grant={"profile": "lte", "per_grant": 0}`,
			want{"flows[f0].ack_grant.per_grant", "0 is not an integer in [1, 1048576]"}},
		{"decreasing quantiles", `flows.f0.ack_grant={"profile": "lte", "gap": ["1ms", "4ms", "2ms"]}`,
			want{"flows[f0].ack_grant.gap[2]", "below the previous quantile"}},
		{"one quantile", `flows.f0.ack_hold={"quantiles": ["1ms"]}`,
			want{"flows[f0].ack_hold.quantiles", "has 1 values; give at least two"}},
		{"quantiles not a list", `flows.f0.ack_hold={"quantiles": "1ms"}`,
			want{"flows[f0].ack_hold.quantiles", "is not a list"}},
		{"hold without quantiles", `flows.f0.ack_hold={"saturation": 0.5}`,
			want{"flows[f0].ack_hold.quantiles", "missing"}},
		{"quantile without unit", `flows.f0.ack_hold={"quantiles": ["1ms", "5"]}`,
			want{"flows[f0].ack_hold.quantiles[1]", `"5" has no unit`}},
		{"zero saturation", `flows.f0.ack_hold={"quantiles": ["0ms", "1ms"], "saturation": 0}`,
			want{"flows[f0].ack_hold.saturation", "must be above 0"}},
		{"loss above 1", `flows.f0.ack_grant={"profile": "wifi", "loss": 1.5}`,
			want{"flows[f0].ack_grant.loss", "1.5"}},
		{"unknown grant field", `flows.f0.ack_grant={"profile": "wifi", "slots": "1ms"}`,
			want{"flows[f0].ack_grant.slots", "unknown field"}},
		{"on a pump", `flows.p0.rcv_hold=1ms`,
			want{"flows[p0].rcv_hold", "only for TCP flows"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := Apply([]byte(baseJSON), []string{tc.set})
			if err != nil {
				t.Fatalf("Apply(%q): %v", tc.set, err)
			}
			_, err = Parse(raw)
			if err == nil {
				t.Fatalf("Parse = nil error, want %s: %s", tc.want.path, tc.want.reason)
			}
			for _, fe := range fieldErrors(t, err) {
				if matches(fe, tc.want) {
					return
				}
			}
			t.Errorf("Parse errors =\n%v\nwant one at %s containing %q", err, tc.want.path, tc.want.reason)
		})
	}
}

// TestRcvPathProfile: a profile fills the grant, fields given override it,
// and the hold takes its documented defaults.
func TestRcvPathProfile(t *testing.T) {
	raw, err := Apply([]byte(baseJSON), []string{
		`flows.f0.ack_grant={"profile": "lte", "per_grant": 4}`,
		`flows.f0.ack_hold={"quantiles": ["0ms", "2ms"]}`, "flows.f0.rcv_hold=150us"})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, raw)
	f := s.Flows[0]
	lte := AckProfiles["lte"]
	want := RcvPath{
		Hold:    150 * sim.Microsecond,
		AckHold: &AckHold{Quantiles: []sim.Duration{0, 2 * sim.Millisecond}, Saturation: 0.9, Window: 10 * sim.Millisecond},
		Grant:   &AckGrant{Profile: "lte", Gap: lte.Gap, PerGrant: 4, Loss: lte.Loss, Filter: lte.Filter, Slot: lte.Slot},
	}
	if diff := cmp.Diff(want, f.Rcv); diff != "" {
		t.Errorf("flows[f0] receive path diff (-want +got):\n%s", diff)
	}
	if got := AckProfiles["lte"].Gap[2]; got != 4*sim.Millisecond {
		t.Errorf("lte profile median gap = %v, want 4ms", got)
	}
}
