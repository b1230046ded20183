package server

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// BenchmarkStepRoundTrip measures one `step 1ms` request to its response
// over loopback, on a pump session in steady state (queue full, dropping),
// and reports the median and 99th percentile latency.
func BenchmarkStepRoundTrip(b *testing.B) {
	_, url := newTestServer(b, Options{})
	c := dial(b, url)
	id := c.open(testScenario, "runtime.duration=3600s")
	c.call("step", map[string]any{"session": id, "time": "1s"}) // past the queue's fill-up
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		c.call("step", map[string]any{"session": id, "time": "1ms"})
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// signalRows is the number of rows one streaming iteration pushes: one
// recorder flush's worth, 16 times.
const signalRows = 16 * pushRows

// BenchmarkStreamSignalRows measures per-flow CC signal rows streamed to a
// Go client over loopback: the session turns recorder rows into Arrow
// record batches, IPC streams and msgpack push frames; the client reads the
// frames, decodes msgpack and reads every record batch. The rows are
// written straight into the session's recorder (4 flows, 8 signals), so
// the simulation's own cost is not part of the figure. cpu-ms/op is the
// process's CPU time (server and client).
func BenchmarkStreamSignalRows(b *testing.B) {
	srv, url := newTestServer(b, Options{})
	c := dial(b, url)
	id := c.open(testScenario, "trace.detail=change")
	c.call("subscribe", map[string]any{"session": id, "tables": []any{"signals"}, "every_ms": 0})
	sess := sessionOf(b, srv, id)
	b.SetBytes(int64(signalRows) * 28) // t_ps, value, and two small ids per row
	var rows int64
	cpu0 := cpuTime(b)
	start := time.Now()
	for b.Loop() {
		done := make(chan struct{})
		if e := sess.enqueue(sessionReq{call: func(s *session) {
			defer close(done)
			fillSignals(s, signalRows)
			if e := s.pushDue(true); e != nil {
				b.Errorf("pushDue: %v", e)
			}
		}}); e != nil {
			b.Fatalf("enqueue: %v", e)
		}
		for got := int64(0); got < signalRows; {
			p := c.next()
			got += arrowRows(b, p["arrow"].([]byte))
		}
		rows += signalRows
		<-done
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds()/1e6, "Mrows/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// fillSignals appends n signal rows to the session's recorder, flushing as
// the engine would.
func fillSignals(s *session, n int) {
	r := s.st.run.Trace
	for len(r.Flows) < 4 {
		r.Flows = append(r.Flows, "x")
	}
	for i := range 8 {
		r.SignalIndex("sig" + string(rune('a'+i)))
	}
	var ss trace.SignalSampler
	for i := range n {
		r.RecordSignal(&ss, sim.Time(i)*sim.Time(sim.Microsecond), int32(i%4), int32(i%8), float64(i))
	}
}

// sessionOf finds a live session by id.
func sessionOf(t testing.TB, srv *Server, id string) *session {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s := srv.sessions[id]
	if s == nil {
		t.Fatalf("no session %s", id)
	}
	return s
}

// BenchmarkSignalsFlowsTable measures the signals op fetching a 20 s
// p-rtr-p run's every-change flows table (about 163k rows, 17 MB of Arrow)
// over loopback into a Go client that reads every record batch — the Go
// side of client-python/benchmarks/bench_flows_table.py. cpu-ms/op is the
// process's CPU time (server and client), which other load on the machine
// does not inflate the way it does wall time.
func BenchmarkSignalsFlowsTable(b *testing.B) {
	_, url := newTestServer(b, Options{})
	c := dial(b, url)
	id := c.open("p-rtr-p", "trace.detail=change")
	c.call("run", map[string]any{"session": id})
	var rows int64
	cpu0 := cpuTime(b)
	start := time.Now()
	for b.Loop() {
		res := c.call("signals", map[string]any{"session": id, "table": "flows"})
		n := arrowRows(b, res["arrow"].([]byte))
		if n != asInt(res["rows"]) || n == 0 {
			b.Fatalf("signals: %d rows in the stream, %v reported", n, res["rows"])
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds()/1e6, "Mrows/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
