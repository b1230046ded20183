package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/trace"
)

// pageOf reads the data a report page embeds: its time grid and its
// groups of panels.
func pageOf(t *testing.T, html []byte) (widthPs, buckets int64, titles []string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="ccscope-data">(.*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no embedded data in the page")
	}
	var d struct {
		Grid struct {
			W int64 `json:"w_ps"`
			N int64 `json:"n"`
		} `json:"grid"`
		Groups []struct {
			Title  string `json:"title"`
			Charts []any  `json:"charts"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	for _, g := range d.Groups {
		if len(g.Charts) > 0 {
			titles = append(titles, g.Title)
		}
	}
	return d.Grid.W, d.Grid.N, titles
}

// The report op draws a session's trace so far as `run --report` draws a
// run: every row the signals op returns, over all tables, on a time axis
// that ends at the session's clock, with the flow's and the bottleneck
// queue's panels. Before the first step there is nothing to draw; a bad
// bucket count names the argument; a session that dropped its oldest rows
// says so on the page.
func TestReportOp(t *testing.T) {
	t.Parallel()
	_, url := newTestServer(t, Options{})
	c := dial(t, url)
	id := c.open("p-rtr-p", "runtime.duration=2s", "trace.detail=change")
	if e := c.fail("report", map[string]any{"session": id}); e["code"] != string(CodeBadRequest) || !strings.Contains(e["message"].(string), "has not run yet") {
		t.Errorf("report before a step: %v, want bad_request saying the session has not run", e)
	}
	c.call("step", map[string]any{"session": id, "time": "500ms"})
	r := c.call("report", map[string]any{"session": id})
	var want int64
	for _, table := range trace.Tables {
		want += asInt(c.call("signals", map[string]any{"session": id, "table": table})["rows"])
	}
	if got := asInt(r["rows"]); got != want || want == 0 {
		t.Errorf("the page drew %d rows, signals returns %d; want them equal and some", got, want)
	}
	w, n, titles := pageOf(t, r["html"].([]byte))
	if span := w * n; span < 500e9 || span >= 500e9+n {
		t.Errorf("the time axis spans %d ps (%d buckets of %d), want the session's 500 ms", span, n, w)
	}
	if !slices.Contains(titles, "flow f0 · cubic") || !slices.Contains(titles, "queue bottleneck/ab") {
		t.Errorf("groups %q, want the flow's and the bottleneck's among them", titles)
	}
	if _, n, _ := pageOf(t, c.call("report", map[string]any{"session": id, "buckets": 100})["html"].([]byte)); n != 100 {
		t.Errorf("buckets 100: the page has %d", n)
	}
	if e := c.fail("report", map[string]any{"session": id, "flows": []any{"f0", "f9"}}); e["code"] != string(CodeNotFound) || e["path"] != "flows[1]" {
		t.Errorf("flows [f0 f9]: %v, want not_found at flows[1]", e)
	}
	for _, b := range []any{0, 100_001, "many"} {
		if e := c.fail("report", map[string]any{"session": id, "buckets": b}); e["code"] != string(CodeBadArgs) || e["path"] != "buckets" {
			t.Errorf("buckets %v: %v, want bad_args at buckets", b, e)
		}
	}

	// The flows option picks the flows drawn, by their trace names.
	id = c.open("dumbbell-n", "flows.bulk.count=3", "runtime.duration=100ms", "trace.detail=change")
	c.call("step", map[string]any{"session": id, "time": "50ms"})
	_, _, titles = pageOf(t, c.call("report", map[string]any{"session": id, "flows": []any{"bulk/2"}})["html"].([]byte))
	if !slices.Contains(titles, "flow bulk/2 · cubic") || slices.Contains(titles, "flow bulk/0 · cubic") {
		t.Errorf("flows [bulk/2]: groups %q, want bulk/2's alone of the flows", titles)
	}

	// A split flow's id draws both legs, as it selects both in signals;
	// a leg's name draws that leg alone.
	id = c.open("p-we-p", "runtime.duration=100ms", "trace.detail=change")
	c.call("step", map[string]any{"session": id, "time": "50ms"})
	for _, tc := range []struct {
		flows []any
		want  string
	}{
		{[]any{"f0"}, "flow f0.0 · cubic, flow f0.1 · cubic"},
		{[]any{"f0.1"}, "flow f0.1 · cubic"},
	} {
		var flows []string
		_, _, titles = pageOf(t, c.call("report", map[string]any{"session": id, "flows": tc.flows})["html"].([]byte))
		for _, ti := range titles {
			if strings.HasPrefix(ti, "flow ") {
				flows = append(flows, ti)
			}
		}
		if got := strings.Join(flows, ", "); got != tc.want {
			t.Errorf("p-we-p, flows %v: flow groups %q, want %q", tc.flows, got, tc.want)
		}
	}

	// Rows are kept in chunks of a flush (64 Ki rows), the newest always:
	// a second of every change at 1 Gbps flushes some tables several times.
	_, url = newTestServer(t, Options{MaxTraceRows: 1000})
	c = dial(t, url)
	id = c.open("dumbbell-1g", "runtime.duration=1s", "trace.detail=change")
	c.call("run", map[string]any{"session": id})
	page := string(c.call("report", map[string]any{"session": id})["html"].([]byte))
	notes := 0
	for _, table := range trace.Tables {
		dropped := asInt(c.call("signals", map[string]any{"session": id, "table": table})["dropped_rows"])
		if dropped == 0 {
			continue
		}
		notes++
		if note := fmt.Sprintf("the %d oldest of the %s table were dropped", dropped, table); !strings.Contains(page, note) {
			t.Errorf("a session that dropped %d %s rows: the page does not say %q", dropped, table, note)
		}
	}
	if notes == 0 {
		t.Error("no table dropped rows: the test needs some")
	}
}
