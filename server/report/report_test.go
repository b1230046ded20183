package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/trace"
)

// runReport runs a built-in scenario at every-change detail with a Builder
// as its trace sink, and returns the builder with the summary set.
func runReport(t *testing.T, scenario string, sets []string) *Builder {
	t.Helper()
	b, _ := runReportTrace(t, scenario, sets, "")
	return b
}

// newRun builds a built-in scenario's run at every-change detail.
func newRun(t *testing.T, scenario string, sets []string) (*engine.Run, *engine.Prepared) {
	t.Helper()
	raw, err := config.Builtin(scenario)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := engine.Prepare(raw, append([]string{"trace.detail=change"}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.New(prep.Scenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, prep
}

// runReportTrace is runReport that also writes trace files to tracePath
// (with their .run.json) when it is not empty.
func runReportTrace(t *testing.T, scenario string, sets []string, tracePath string, opts ...trace.FileOption) (*Builder, engine.Summary) {
	t.Helper()
	r, prep := newRun(t, scenario, sets)
	meta := MetaFromRun(r, prep.Hash)
	meta.Detail, meta.Config, meta.Source = "change", string(prep.Canonical), "test"
	b, err := New(meta, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fs *trace.FileSink
	if tracePath != "" {
		if fs, err = trace.NewFileSink(tracePath, opts...); err != nil {
			t.Fatal(err)
		}
		r.Trace.SetSink(tee{b, fs}) // the file sink takes the columns: last
	} else {
		r.Trace.SetSink(b)
	}
	r.RunToEnd()
	sum := r.Summary(prep.Hash)
	if fs != nil {
		if err := fs.Close(); err != nil {
			t.Fatal(err)
		}
		if err := WriteRunInfo(tracePath, RunInfo{Summary: sum, Config: string(prep.Canonical), Detail: "change"}); err != nil {
			t.Fatal(err)
		}
	}
	b.SetSummary(&sum)
	return b, sum
}

type tee []trace.Sink

func (s tee) Flush(r *trace.Recorder, table string) error {
	for _, x := range s {
		if err := x.Flush(r, table); err != nil {
			return err
		}
	}
	return nil
}

// decodeSlots parses an encoded series back to values (NaN: empty).
func decodeSlots(t *testing.T, s string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			out = append(out, math.NaN())
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("slot %q: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}

// Thinning keeps every extreme in the order it happened, and the level a
// bucket ends at: a hand-made signal with a one-sample spike down and up
// inside one bucket of 1000 rows. An empty bucket holds the level the
// signal ended the previous one at.
func TestExtremesKeepSpikesAndLastValue(t *testing.T) {
	g := newGrid(3000, 3) // buckets of 1000 ps
	e := newExtremes(g.n)
	for ts := int64(0); ts < 1000; ts++ {
		v := 10.0
		switch ts {
		case 100:
			v = 50 // the maximum comes first...
		case 700:
			v = -5 // ...then the minimum
		case 999:
			v = 12 // and the bucket ends at 12
		}
		e.add(g.bucket(ts), ts, v)
	}
	e.add(g.bucket(2500), 2500, 7)
	e.add(g.bucket(2600), 2600, math.Inf(1)) // an unset bound: a gap, not a value
	got := decodeSlots(t, encode(e.slotValues(1)))
	want := []float64{50, -5, 12, 12, math.NaN(), math.NaN(), 7, math.NaN(), math.NaN()}
	if len(got) != len(want) {
		t.Fatalf("slots = %v, want %v", got, want)
	}
	for i := range want {
		if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("slots = %v, want %v", got, want)
		}
	}
}

// encode keeps 5 significant digits and writes exponents JavaScript reads.
func TestEncode(t *testing.T) {
	got := encode([]float64{1e6, 0.000123456, math.NaN(), 333.33333, -2, 1.5e-7, 1e100})
	if want := "1e6,0.00012346,,333.33,-2,1.5e-7,1e100"; got != want {
		t.Errorf("encode = %q, want %q", got, want)
	}
}

// pageJSON extracts the embedded data of a written page.
func pageJSON(t *testing.T, html []byte) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="ccscope-data">(.*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no embedded data in the page")
	}
	var d pageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return d
}

// writePage writes b's page and returns its embedded data.
func writePage(t *testing.T, b *Builder) pageData {
	t.Helper()
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return pageJSON(t, buf.Bytes())
}

func findSeries(d pageData, chartID, prefix string) *series {
	for _, g := range d.Groups {
		for _, c := range g.Charts {
			if c.ID != chartID {
				continue
			}
			for _, s := range c.Series {
				if strings.HasPrefix(s.Label, prefix) {
					return s
				}
			}
		}
	}
	return nil
}

// The pump scenario has a closed form: a 120 Mbps constant-rate source
// into a 100 Mbps bottleneck with a 1-BDP (500 kB = 333 packets) FIFO. Once
// the queue is full (after ~0.2 s) the goodput is the bottleneck rate,
// 100 Mbps × 1448/1500 of payload... for a pump, whose packets are all
// payload, exactly 100 Mbps; the queue sits at its 333-packet limit and
// its sojourn at 40 ms (500 kB at 100 Mbps).
func TestPumpReportMatchesClosedForm(t *testing.T) {
	b := runReport(t, "pump", []string{"runtime.duration=2s"})
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	d := pageJSON(t, buf.Bytes())
	good := findSeries(d, "f0-rates", "goodput")
	if good == nil {
		t.Fatal("no goodput series in the pump's rates panel")
	}
	vals := decodeSlots(t, good.Data)
	var sum float64
	var n int
	for i, v := range vals {
		ts := (float64(i/slots) + 0.5) * float64(d.Grid.W) / 1e12
		if ts > 0.5 && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if mean := sum / float64(n); math.Abs(mean-100) > 0.5 {
		t.Errorf("pump goodput after 0.5 s averages %.3f Mbps over %d buckets, want 100 ± 0.5", mean, n)
	}
	bl := findSeries(d, "q-bottleneck-ab-backlog", "backlog (packets)")
	so := findSeries(d, "q-bottleneck-ab-sojourn", "sojourn")
	if bl == nil || so == nil {
		t.Fatal("no bottleneck queue panel")
	}
	maxOf := func(v []float64) float64 {
		m := math.Inf(-1)
		for _, x := range v {
			if !math.IsNaN(x) {
				m = math.Max(m, x)
			}
		}
		return m
	}
	if m := maxOf(decodeSlots(t, bl.Data)); m != 333 {
		t.Errorf("max bottleneck backlog %v packets, want 333 (500 kB / 1500 B)", m)
	}
	if m := maxOf(decodeSlots(t, so.Data)); math.Abs(m-40) > 0.2 {
		t.Errorf("max sojourn %v ms, want 40 ± 0.2 (333 × 1500 B at 100 Mbps = 39.96 ms)", m)
	}
}

// `ccscope report` from trace files draws the same data as the report
// written during the run, from both file formats.
func TestReportFromFilesMatchesLiveRun(t *testing.T) {
	for _, ext := range []string{".parquet", ".arrow"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run"+ext)
			live, _ := runReportTrace(t, "p-rtr-p", []string{"flows.f0.cc=bbr", "runtime.duration=2s"}, path)
			var a bytes.Buffer
			if err := live.Write(&a); err != nil {
				t.Fatal(err)
			}
			fromFiles, err := ReadTrace(strings.TrimSuffix(path, ext), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := fromFiles.Write(&b); err != nil {
				t.Fatal(err)
			}
			da, db := pageJSON(t, a.Bytes()), pageJSON(t, b.Bytes())
			ja, _ := json.Marshal(da)
			jb, _ := json.Marshal(db)
			if !bytes.Equal(ja, jb) {
				t.Errorf("report from %s files differs from the live run's (%d vs %d bytes of data)", ext, len(jb), len(ja))
			}
			if live.Rows() != fromFiles.Rows() {
				t.Errorf("rows: live %d, files %d", live.Rows(), fromFiles.Rows())
			}
			if !bytes.Contains(b.Bytes(), []byte(live.meta.Digest)) {
				t.Errorf("the page from files does not show the digest %s", live.meta.Digest)
			}
		})
	}
}

// A 60 s every-change trace stays under 10 MB of HTML: the page's size is
// set by the bucket count, not by the run's length.
func TestSixtySecondReportSize(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"flows.f0.cc=bbr", "runtime.duration=60s"})
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("60 s every-change p-rtr-p/bbr: %d trace rows -> %d bytes of HTML", b.Rows(), buf.Len())
	if buf.Len() > 10<<20 {
		t.Errorf("report of a 60 s trace is %d bytes, want under 10 MiB", buf.Len())
	}
	if b.Rows() < 1_000_000 {
		t.Errorf("the 60 s trace had only %d rows; the size bound is meant for millions", b.Rows())
	}
	if os.Getenv("CCSCOPE_KEEP_REPORT") != "" {
		os.WriteFile(os.Getenv("CCSCOPE_KEEP_REPORT"), buf.Bytes(), 0o644)
	}
}

// Without the .run.json beside them the tables still make a page: its time
// axis spans the last row, and the page says the summary is missing. A
// prefix with no files is an error naming the file looked for.
func TestReportFromBareTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bare.arrow")
	runReportTrace(t, "pump", []string{"runtime.duration=1s"}, path)
	if err := os.Remove(RunInfoPath(path)); err != nil {
		t.Fatal(err)
	}
	b, err := ReadTrace(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The pump sends every 120 µs up to the 1 s horizon (inclusive).
	if span := b.meta.HorizonPs; span < 999e9 || span > 1000e9+1 {
		t.Errorf("span without a summary = %d ps, want the last row's time + 1 ps, within 1 ms of the 1 s horizon", span)
	}
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("no run summary was found")) {
		t.Error("the page does not say its summary is missing")
	}
	if findSeries(pageJSON(t, buf.Bytes()), "f0-rates", "goodput") == nil {
		t.Error("no goodput panel from bare tables")
	}
	_, err = ReadTrace(filepath.Join(t.TempDir(), "nothing"), Options{})
	if err == nil || !strings.Contains(err.Error(), "nothing.flows.parquet") {
		t.Errorf("ReadTrace(missing) = %v, want an error naming nothing.flows.parquet", err)
	}
}

// Trace files written with --trace-select lack tables or columns: the page
// is still drawn from what is there, and says what is missing.
func TestReportFromSelectedTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sel.parquet")
	runReportTrace(t, "pump", []string{"runtime.duration=1s"}, path)
	for _, table := range []string{trace.TableDelivery, trace.TableFlows} {
		if err := os.Remove(trace.TablePath(path, table)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := ReadTrace(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"delivery", "flows"} {
		if !bytes.Contains(buf.Bytes(), []byte("no "+table+" table")) {
			t.Errorf("the page does not say the %s table is missing", table)
		}
	}
	if findSeries(pageJSON(t, buf.Bytes()), "q-bottleneck-ab-backlog", "backlog (packets)") == nil {
		t.Error("no queue panel from the tables that are there")
	}
}

// A queue whose direction's rate or delay moved gets a panel of both, from
// the link table: p-rtr-p's bottleneck at 100 Mbps and 19 ms, down for
// 200 ms from 1 s (rate 0), its delay 30 ms from then on.
func TestReportDrawsTheLinkRate(t *testing.T) {
	b, _ := runReportTrace(t, "p-rtr-p", []string{"runtime.duration=2s",
		`changes=[{"at":"1s","link":"bottleneck","dir":"ab","outage":"200ms","delay":"30ms"}]`}, "")
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	d := pageJSON(t, buf.Bytes())
	rate, delay := findSeries(d, "q-bottleneck-ab-rate", "service rate"), findSeries(d, "q-bottleneck-ab-rate", "delay")
	if rate == nil || delay == nil {
		t.Fatal("no service rate panel under the bottleneck's queue")
	}
	seen := func(v []float64) []float64 {
		var out []float64
		for _, x := range v {
			if !math.IsNaN(x) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		return out
	}
	if got := seen(decodeSlots(t, rate.Data)); !slices.Equal(got, []float64{100, 0}) {
		t.Errorf("service rates drawn %v Mbps, want 100 and 0", got)
	}
	if got := seen(decodeSlots(t, delay.Data)); !slices.Equal(got, []float64{19, 30}) {
		t.Errorf("delays drawn %v ms, want 19 and 30", got)
	}
	if findSeries(d, "q-bottleneck-ba-rate", "service rate") != nil {
		t.Error("a rate panel for the reverse direction, whose rate and delay never moved")
	}
}

// The send rate counts transmissions as delivered + lost + in flight: over
// a lossy CUBIC run its total must match the segments the sender says it
// put on the wire (bytes_sent / MSS, retransmissions included) to 1%.
func TestSendRateCountsTransmissions(t *testing.T) {
	b, sum := runReportTrace(t, "p-rtr-p", []string{"runtime.duration=5s"}, "")
	var pkts float64
	for _, v := range b.flows[0].sent {
		pkts += v
	}
	segs := float64(sum.Flows[0].BytesSent) / 1448
	if math.Abs(pkts-segs) > 0.01*segs {
		t.Errorf("send-rate packets = %.0f, want the sender's %.0f segments (bytes_sent/1448) ± 1%%", pkts, segs)
	}
	t.Logf("send-rate packets %.0f, sender segments %.0f", pkts, segs)
	if r := sum.Flows[0].Retransmits; r == nil || *r == 0 {
		t.Error("the run had no retransmissions; the check wants some")
	}
}

// A flows table cut to some columns (the --trace-select example of
// `ccscope run --help`) still draws the series those columns feed, the
// same as the live run's, and the page names the missing columns once.
func TestReportFromSelectedColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cols.parquet")
	sel, err := trace.ParseSelection([]string{"flows.cwnd_pkts", "flows.srtt_ps", "queue"})
	if err != nil {
		t.Fatal(err)
	}
	live, _ := runReportTrace(t, "p-rtr-p", []string{"runtime.duration=300ms"}, path, trace.WithSelection(sel))
	b, err := ReadTrace(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lb, fb bytes.Buffer
	if err := live.Write(&lb); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(&fb); err != nil {
		t.Fatal(err)
	}
	dl, df := pageJSON(t, lb.Bytes()), pageJSON(t, fb.Bytes())
	for _, c := range []struct{ chart, label string }{{"f0-inflight", "cwnd"}, {"f0-rtt", "srtt"}, {"q-bottleneck-ab-backlog", "backlog (packets)"}} {
		got, want := findSeries(df, c.chart, c.label), findSeries(dl, c.chart, c.label)
		if got == nil || want == nil || got.Data != want.Data {
			t.Errorf("series %s/%s from the selected columns differs from the live run's (or is missing)", c.chart, c.label)
		}
	}
	for _, c := range []struct{ chart, label string }{{"f0-inflight", "ssthresh"}, {"f0-inflight", "inflight"}, {"f0-rtt", "min_rtt"}, {"f0-rates", "delivery rate"}} {
		if findSeries(df, c.chart, c.label) != nil {
			t.Errorf("series %s/%s drawn without its column", c.chart, c.label)
		}
	}
	page := fb.String()
	if n := strings.Count(page, "ssthresh_pkts"); n != 1 {
		t.Errorf("the page names the missing column ssthresh_pkts %d times, want once", n)
	}
	if strings.Contains(page, "has no trace rows") {
		t.Error("the page says a flow has no trace rows")
	}
}

// CUBIC's ack_cnt counts ACKs towards the next increase: a counter in
// packets, not a window, so it stays out of the inflight panel (where it
// set the scale, 1247 against a cwnd of 702 on p-rtr-p) and is drawn on a
// panel of its own.
func TestCountersStayOutOfTheInflightPanel(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"runtime.duration=1s"})
	d := writePage(t, b)
	if findSeries(d, "f0-inflight", "cc ack_cnt") != nil {
		t.Error("CUBIC's ack_cnt is drawn in the inflight panel")
	}
	if findSeries(d, "f0-inflight", "cc bic_target") == nil {
		t.Error("CUBIC's bic_target, a window, is not in the inflight panel")
	}
	if findSeries(d, "f0-cc-counters", "cc ack_cnt") == nil {
		t.Error("CUBIC's ack_cnt is not on the counters panel")
	}
}

// Goodput spikes when a repaired hole releases queued data at once (624
// Mbps on p-rtr-p's 100 Mbps path): the Rates panel's axis stops at 1.5×
// the path's bottleneck rate, so the real rates are not squashed, the
// title says the spikes are clipped, and the data keeps the peaks for the
// legend.
func TestRatesAxisClipsDeliverySpikes(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"runtime.duration=5s"})
	d := writePage(t, b)
	var rates *chart
	for _, c := range d.Groups[0].Charts {
		if c.ID == "f0-rates" {
			rates = c
		}
	}
	if rates == nil {
		t.Fatal("no rates panel")
	}
	peak := 0.0
	for _, s := range rates.Series {
		for _, v := range decodeSlots(t, s.Data) {
			if !math.IsNaN(v) {
				peak = math.Max(peak, v)
			}
		}
	}
	if peak <= 150 {
		t.Fatalf("the rates peak at %.0f Mbps; the check wants a spike above 1.5 × 100 Mbps", peak)
	}
	if m := rates.Axes[0].Max; m == nil || *m != 150 {
		t.Errorf("rates axis max = %v, want 150 (1.5 × the 100 Mbps bottleneck)", m)
	}
	if !strings.Contains(rates.Title, "clipped") {
		t.Errorf("rates title %q does not say the spikes are clipped", rates.Title)
	}
	t.Logf("rates peak %.0f Mbps; title %q", peak, rates.Title)
}

// The CC's enums get a panel of their own: on the CA state panel's second
// axis CUBIC's 0/1 hystart_found lined up with the "open" and "loss" rows.
func TestCCEnumsApartFromTheCAState(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"runtime.duration=3s"})
	d := writePage(t, b)
	if findSeries(d, "f0-phase", "CA state") == nil {
		t.Error("no CA state on the phase panel")
	}
	if findSeries(d, "f0-phase", "cc ") != nil {
		t.Error("a CC enum shares the CA state panel")
	}
	if findSeries(d, "f0-cc-phase", "cc hystart_found") == nil {
		t.Error("CUBIC's hystart_found is not on the CC phase panel")
	}
}

// A page written twice is the same page: laying out the panels converts
// units on copies (the send rate to bytes, BBR's bandwidth to Mbps, its
// delays to ms), not on the builder's own values. Before, each Write
// scaled them again.
func TestWriteTwiceSamePage(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"flows.f0.cc=bbr", "runtime.duration=1s"})
	first, second := writePage(t, b), writePage(t, b)
	ja, _ := json.Marshal(first)
	jb, _ := json.Marshal(second)
	if !bytes.Equal(ja, jb) {
		t.Error("the second page's data differ from the first's")
	}
	if findSeries(first, "f0-rates", "send rate") == nil || findSeries(first, "f0-rates", "cc ") == nil {
		t.Error("no send rate or CC rate signal: the test needs both")
	}
}

// A run of many flows draws the panels of the first 32 (maxDrawnFlows) and
// says how many it left out; the flows option draws those it names. Rows of
// the flows left out are not kept, nor are the series of link directions
// beyond the drawn flows' bottlenecks and the first 32 others
// (maxDrawnQueues), whose count the page gives: dumbbell-n's 1,024 flows
// drawn whole took 2 GB and made a 77 MB page.
func TestManyFlowsDrawnInPart(t *testing.T) {
	sets := []string{"flows.bulk.count=40", "runtime.duration=100ms"}
	b := runReport(t, "dumbbell-n", sets)
	var page bytes.Buffer
	if err := b.Write(&page); err != nil {
		t.Fatal(err)
	}
	d := pageJSON(t, page.Bytes())
	var flows, queues []string
	for _, g := range d.Groups {
		if strings.HasPrefix(g.Title, "flow ") {
			flows = append(flows, g.Title)
		} else {
			queues = append(queues, g.Title)
		}
	}
	if len(flows) != maxDrawnFlows || flows[0] != "flow bulk/0 · cubic" || flows[31] != "flow bulk/31 · cubic" {
		t.Errorf("%d flow groups, %q … %q; want bulk/0 to bulk/31", len(flows), flows[0], flows[len(flows)-1])
	}
	if !bytes.Contains(page.Bytes(), []byte("the page draws the panels of 32 of the run&#39;s 40 flows")) {
		t.Error("the page does not say it left 8 flows out")
	}
	kept := 0
	for _, q := range b.queues {
		if q.pkts != nil {
			kept++
		}
	}
	if kept > maxDrawnQueues+1 || !slices.Contains(queues, "queue bottleneck/ab") {
		t.Errorf("series kept of %d link directions, want at most %d, the bottleneck among them (%q)", kept, maxDrawnQueues+1, queues)
	}

	r, prep := newRun(t, "dumbbell-n", sets)
	meta := MetaFromRun(r, prep.Hash)
	if _, err := New(meta, Options{Flows: []string{"bulk/3", "bulk/40"}}); err == nil || !strings.Contains(err.Error(), `no flow "bulk/40"`) {
		t.Errorf("flows naming bulk/40 of 40: %v, want an error naming it", err)
	}
	named, err := New(meta, Options{Flows: []string{"bulk/39", "bulk/3"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Trace.SetSink(named)
	r.RunToEnd()
	flows = nil
	for _, g := range writePage(t, named).Groups {
		if strings.HasPrefix(g.Title, "flow ") {
			flows = append(flows, g.Title)
		}
	}
	if strings.Join(flows, ", ") != "flow bulk/3 · cubic, flow bulk/39 · cubic" {
		t.Errorf("flows bulk/39 and bulk/3: groups %q", flows)
	}
}
