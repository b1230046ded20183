package trace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

// TestSchema checks every table's columns against the trace format agreed
// for files and the wire: unit-suffixed names and these types.
func TestSchema(t *testing.T) {
	want := map[string][]string{
		TableQueue: {"t_ps:int64", "link:utf8", "dir:utf8", "backlog_bytes:int64", "backlog_pkts:int64",
			"sojourn_ps:int64", "drops:uint64", "marks:uint64"},
		TableDelivery: {"t_ps:int64", "flow:utf8", "bytes_delivered:int64"},
		TableFlows: {"t_ps:int64", "flow:utf8", "cwnd_pkts:uint32", "ssthresh_pkts:uint32",
			"inflight_bytes:int64", "inflight_pkts:uint32", "srtt_ps:int64", "rttvar_ps:int64",
			"min_rtt_ps:int64", "pacing_rate_bps:int64", "delivery_rate_bps:int64",
			"delivered_pkts:uint64", "lost_pkts:uint64", "retrans_pkts:uint64", "ca_state:utf8"},
		TableSignals: {"t_ps:int64", "flow:utf8", "signal:utf8", "value:float64"},
		TableEvents:  {"t_ps:int64", "flow:utf8", "kind:utf8", "seq:int64", "len:int32"},
		TableLink:    {"t_ps:int64", "link:utf8", "dir:utf8", "rate_bps:int64", "delay_ps:int64"},
	}
	for _, table := range Tables {
		t.Run(table, func(t *testing.T) {
			s := Schema(table)
			var got []string
			for _, f := range s.Fields() {
				got = append(got, f.Name+":"+f.Type.String())
			}
			if d := cmp.Diff(want[table], got); d != "" {
				t.Errorf("Schema(%q) columns (-want +got):\n%s", table, d)
			}
			if v, _ := s.Metadata().GetValue(SchemaTableKey); v != table {
				t.Errorf("Schema(%q) metadata %s = %q, want %q", table, SchemaTableKey, v, table)
			}
		})
	}
	if s := Schema("nope"); s != nil {
		t.Errorf("Schema(nope) = %v, want nil", s)
	}
}

// sampleRecorder records a few rows in every table. The want* variables
// below are the same rows written out by hand as a reader should see them.
func sampleRecorder() *Recorder {
	r := NewRecorder(config.TraceChange, 0, nil)
	r.Links = []string{"bottleneck", "access"}
	r.Flows = []string{"f0", "f1"}
	var qs QueueSampler
	var ds DeliverySampler
	var fs FlowSampler
	var ss SignalSampler
	r.RecordQueue(&qs, &QueueRow{T: 10, Link: 0, DirAB: true, BacklogBytes: 3000, BacklogPkts: 2, Drops: 1})
	r.RecordQueue(&qs, &QueueRow{T: 20, Link: 1, DirAB: false, BacklogBytes: 1500, BacklogPkts: 1,
		Sojourn: 5 * sim.Microsecond, Marks: 7})
	r.RecordDelivery(&ds, 30, 0, 1448)
	r.RecordDelivery(&ds, 40, 1, 2896)
	r.RecordFlow(&fs, &FlowRow{T: 50, Flow: 0, CwndPkts: 10, SSThreshPkts: 1<<31 - 1, InflightBytes: 14480,
		InflightPkts: 10, SRTT: 20 * sim.Millisecond, RTTVar: 5 * sim.Millisecond, MinRTT: 19 * sim.Millisecond,
		PacingRateBps: 100_000_000, DeliveryRateBps: 90_000_000, Delivered: 100, Lost: 2, Retrans: 3, CAState: 0})
	r.RecordFlow(&fs, &FlowRow{T: 60, Flow: 1, CwndPkts: 7, SSThreshPkts: 7, CAState: 3})
	r.RecordFlow(&fs, &FlowRow{T: 70, Flow: 0, CwndPkts: 1, SSThreshPkts: 5, CAState: 4})
	bw, minRTT := r.SignalIndex("bw"), r.SignalIndex("min_rtt")
	r.RecordSignal(&ss, 80, 0, bw, 1.5e6)
	r.RecordSignal(&ss, 90, 1, minRTT, 0.02)
	r.RecordSignal(&ss, 95, 1, bw, -2)
	r.RecordEvent(100, 1, EvRTO, 1448, 1448)
	r.RecordEvent(110, 0, EvECNMark, 0, 1500)
	r.RecordEvent(120, 1, EventKind(200), -1, 0)
	return r
}

// Rows as readers see them. CA states follow enum tcp_ca_state (open 0,
// disorder 1, cwr 2, recovery 3, loss 4); dir "ab" is DirAB true.
var (
	wantQueue = [][]any{
		{int64(10), "bottleneck", "ab", int64(3000), int64(2), int64(0), uint64(1), uint64(0)},
		{int64(20), "access", "ba", int64(1500), int64(1), int64(5_000_000), uint64(0), uint64(7)},
	}
	wantDelivery = [][]any{
		{int64(30), "f0", int64(1448)},
		{int64(40), "f1", int64(2896)},
	}
	wantFlows = [][]any{
		{int64(50), "f0", uint32(10), uint32(1<<31 - 1), int64(14480), uint32(10), int64(20e9), int64(5e9),
			int64(19e9), int64(100e6), int64(90e6), uint64(100), uint64(2), uint64(3), "open"},
		{int64(60), "f1", uint32(7), uint32(7), int64(0), uint32(0), int64(0), int64(0), int64(0), int64(0),
			int64(0), uint64(0), uint64(0), uint64(0), "recovery"},
		{int64(70), "f0", uint32(1), uint32(5), int64(0), uint32(0), int64(0), int64(0), int64(0), int64(0),
			int64(0), uint64(0), uint64(0), uint64(0), "loss"},
	}
	wantSignals = [][]any{
		{int64(80), "f0", "bw", 1.5e6},
		{int64(90), "f1", "min_rtt", 0.02},
		{int64(95), "f1", "bw", -2.0},
	}
	wantEvents = [][]any{
		{int64(100), "f1", "rto", int64(1448), int32(1448)},
		{int64(110), "f0", "ecn_mark", int64(0), int32(1500)},
		{int64(120), "f1", "EventKind(200)", int64(-1), int32(0)},
	}
)

// rowsOf reads a record back row by row through the typed array accessors.
func rowsOf(t *testing.T, rec arrow.Record) [][]any {
	t.Helper()
	rows := make([][]any, rec.NumRows())
	for i := range rows {
		for _, col := range rec.Columns() {
			var v any
			switch a := col.(type) {
			case *array.Int64:
				v = a.Value(i)
			case *array.Int32:
				v = a.Value(i)
			case *array.Uint32:
				v = a.Value(i)
			case *array.Uint64:
				v = a.Value(i)
			case *array.Float64:
				v = a.Value(i)
			case *array.String:
				v = a.Value(i)
			default:
				t.Fatalf("column type %T not handled", col)
			}
			if col.IsNull(i) {
				t.Errorf("row %d column %s is null", i, col.DataType())
			}
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

func TestBatch(t *testing.T) {
	r := sampleRecorder()
	tests := []struct {
		table  string
		filter Filter
		want   [][]any
	}{
		{TableQueue, Filter{}, wantQueue},
		{TableDelivery, Filter{}, wantDelivery},
		{TableFlows, Filter{}, wantFlows},
		{TableSignals, Filter{}, wantSignals},
		{TableEvents, Filter{}, wantEvents},
		// The queue table has no flow column: a flow filter leaves it whole.
		{TableQueue, Filter{Flows: []string{"f1"}}, wantQueue},
		{TableDelivery, Filter{Flows: []string{"f1"}}, wantDelivery[1:]},
		{TableFlows, Filter{Flows: []string{"f1"}}, wantFlows[1:2]},
		{TableFlows, Filter{Flows: []string{"f0", "f1"}}, wantFlows},
		{TableFlows, Filter{Flows: []string{"unknown"}}, nil},
		{TableSignals, Filter{Flows: []string{"f1"}}, wantSignals[1:]},
		{TableSignals, Filter{Signals: []string{"bw"}}, [][]any{wantSignals[0], wantSignals[2]}},
		{TableSignals, Filter{Flows: []string{"f1"}, Signals: []string{"bw"}}, wantSignals[2:]},
		{TableSignals, Filter{Signals: []string{"cwnd_gain"}}, nil},
		{TableEvents, Filter{Flows: []string{"f0"}}, wantEvents[1:2]},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v/%v", tt.table, tt.filter.Flows, tt.filter.Signals), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec, err := r.BatchFiltered(tt.table, mem, tt.filter)
			if err != nil {
				t.Fatalf("BatchFiltered(%s, %+v) error %v", tt.table, tt.filter, err)
			}
			defer rec.Release()
			if !rec.Schema().Equal(Schema(tt.table)) {
				t.Errorf("BatchFiltered(%s) schema = %v, want %v", tt.table, rec.Schema(), Schema(tt.table))
			}
			got := rowsOf(t, rec)
			if len(tt.want) == 0 && len(got) == 0 {
				return
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("BatchFiltered(%s, %+v) rows (-want +got):\n%s", tt.table, tt.filter, d)
			}
		})
	}
}

func TestBatchEmptyAndUnknown(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := NewRecorder(config.TraceChange, 0, nil)
	for _, table := range Tables {
		rec, err := r.Batch(table, mem)
		if err != nil {
			t.Fatalf("Batch(%s) of an empty table error %v", table, err)
		}
		if rec.NumRows() != 0 || rec.NumCols() != int64(len(Schema(table).Fields())) {
			t.Errorf("Batch(%s) of an empty table = %d rows × %d cols, want 0 × %d", table, rec.NumRows(),
				rec.NumCols(), len(Schema(table).Fields()))
		}
		rec.Release()
	}
	if _, err := r.Batch("nope", mem); err == nil {
		t.Errorf("Batch(nope) error = nil, want an error")
	}
}

// TestWriteIPCStream writes batches as the server pushes them and reads the
// bytes back with the IPC stream reader, the Go twin of
// pyarrow.ipc.open_stream.
func TestWriteIPCStream(t *testing.T) {
	r := sampleRecorder()
	tests := []struct {
		name  string
		table string
		recs  int
	}{
		{"two batches", TableFlows, 2},
		{"one batch", TableEvents, 1},
		{"schema only", TableSignals, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var recs []arrow.Record
			var want [][]any
			for range tt.recs {
				rec, err := r.Batch(tt.table, mem)
				if err != nil {
					t.Fatalf("Batch(%s) error %v", tt.table, err)
				}
				defer rec.Release()
				recs = append(recs, rec)
				want = append(want, rowsOf(t, rec)...)
			}
			var buf bytes.Buffer
			if err := WriteIPCStream(&buf, Schema(tt.table), recs...); err != nil {
				t.Fatalf("WriteIPCStream error %v", err)
			}
			rd, err := ipc.NewReader(&buf, ipc.WithAllocator(mem))
			if err != nil {
				t.Fatalf("ipc.NewReader error %v", err)
			}
			defer rd.Release()
			if !rd.Schema().Equal(Schema(tt.table)) {
				t.Errorf("stream schema = %v, want %v", rd.Schema(), Schema(tt.table))
			}
			var got [][]any
			batches := 0
			for rd.Next() {
				batches++
				got = append(got, rowsOf(t, rd.Record())...)
			}
			if err := rd.Err(); err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if batches != tt.recs {
				t.Errorf("stream batches = %d, want %d", batches, tt.recs)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("stream rows (-want +got):\n%s", d)
			}
		})
	}
}

// BenchmarkBatchFlows measures building one record batch from a full flows
// table (DefaultFlushRows rows of 4 interleaved flows), the conversion a
// sink or the server runs at every flush.
func BenchmarkBatchFlows(b *testing.B) {
	r := NewRecorder(config.TraceChange, 0, nil)
	r.Flows = []string{"f0", "f1", "cubic-2", "bbr-3"}
	var fs FlowSampler
	for i := range DefaultFlushRows {
		r.RecordFlow(&fs, &FlowRow{T: sim.Time(i) * 1000, Flow: int32(i % 4), CwndPkts: uint32(i), SRTT: 20e9,
			Delivered: uint64(i), CAState: uint8(i % 5)})
	}
	mem := memory.NewGoAllocator()
	b.ReportAllocs()
	for b.Loop() {
		rec, err := r.Batch(TableFlows, mem)
		if err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	b.ReportMetric(float64(b.N)*DefaultFlushRows/b.Elapsed().Seconds(), "rows/s")
}

// TestFlushWithoutSinkKeepsRows: a recorder without a sink accumulates, so
// the flush at the end of a run (engine.Run.RunToEnd) must not discard its
// rows.
func TestFlushWithoutSinkKeepsRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := sampleRecorder()
	r.FlushAll()
	rec, err := r.Batch(TableFlows, mem)
	if err != nil {
		t.Fatalf("Batch(flows) error %v", err)
	}
	defer rec.Release()
	if d := cmp.Diff(wantFlows, rowsOf(t, rec)); d != "" {
		t.Errorf("flows after FlushAll without a sink (-want +got):\n%s", d)
	}
}

// BenchmarkBatchSignals measures building a record batch from a full signals
// table (DefaultFlushRows rows, 4 flows × 4 signals), whole and filtered to
// one flow and two signals (an eighth of the rows) as a subscription would.
func BenchmarkBatchSignals(b *testing.B) {
	r := NewRecorder(config.TraceChange, 0, nil)
	r.Flows = []string{"f0", "f1", "cubic-2", "bbr-3"}
	sigs := []int32{r.SignalIndex("bw"), r.SignalIndex("min_rtt"), r.SignalIndex("pacing_gain"), r.SignalIndex("cwnd_gain")}
	var ss SignalSampler
	for i := range DefaultFlushRows {
		r.RecordSignal(&ss, sim.Time(i)*1000, int32(i%4), sigs[i/4%4], float64(i))
	}
	for _, tt := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"filtered", Filter{Flows: []string{"f1"}, Signals: []string{"bw", "min_rtt"}}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			b.ReportAllocs()
			for b.Loop() {
				rec, err := r.BatchFiltered(TableSignals, mem, tt.f)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
			b.ReportMetric(float64(b.N)*DefaultFlushRows/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
