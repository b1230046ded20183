package trace

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

func TestTablePath(t *testing.T) {
	tests := []struct{ path, table, want string }{
		{"run.parquet", TableFlows, "run.flows.parquet"},
		{"out/run.arrow", TableQueue, "out/run.queue.arrow"},
		{"a.b/run.x.arrow", TableSignals, "a.b/run.x.signals.arrow"},
	}
	for _, tt := range tests {
		if got := TablePath(tt.path, tt.table); got != tt.want {
			t.Errorf("TablePath(%q, %q) = %q, want %q", tt.path, tt.table, got, tt.want)
		}
	}
}

// manyRows is enough rows for the flows and signals tables to flush twice
// on their own and once more at FlushAll.
const manyRows = 2*DefaultFlushRows + 123

// recordMany fills r with manyRows flows and signals rows (row i derived
// from i), the sample queue and delivery rows, and no events.
func recordMany(r *Recorder) {
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
	sig := []int32{r.SignalIndex("bw"), r.SignalIndex("min_rtt")}
	for i := range manyRows {
		r.RecordFlow(&fs, &FlowRow{T: sim.Time(i) * 1000, Flow: int32(i % 2), CwndPkts: uint32(i), SSThreshPkts: uint32(i / 2),
			InflightBytes: int64(i) * 1448, InflightPkts: uint32(i % 100), SRTT: sim.Duration(i) * sim.Microsecond,
			RTTVar: sim.Duration(i), MinRTT: -sim.Duration(i), PacingRateBps: int64(i) << 20, DeliveryRateBps: int64(i) << 10,
			Delivered: uint64(i) << 40, Lost: uint64(i / 3), Retrans: uint64(i / 7), CAState: uint8(i % 5)})
		r.RecordSignal(&ss, sim.Time(i), int32(i%2), sig[i/2%2], float64(i)/4)
	}
}

// wantMany is what a reader of recordMany's files should see.
func wantMany() map[string][][]any {
	flows, signals := make([][]any, manyRows), make([][]any, manyRows)
	fl := []string{"f0", "f1"}
	ca := []string{"open", "disorder", "cwr", "recovery", "loss"}
	for i := range manyRows {
		n := int64(i)
		flows[i] = []any{n * 1000, fl[i%2], uint32(i), uint32(i / 2), n * 1448, uint32(i % 100), n * 1e6,
			n, -n, n << 20, n << 10, uint64(i) << 40, uint64(i / 3), uint64(i / 7), ca[i%5]}
		signals[i] = []any{n, fl[i%2], []string{"bw", "min_rtt"}[i/2%2], float64(i) / 4}
	}
	return map[string][][]any{TableQueue: wantQueue, TableDelivery: wantDelivery, TableFlows: flows,
		TableSignals: signals, TableEvents: nil}
}

// wantBatches is how many batches (row groups) each table's file holds:
// two full flushes and the remainder for flows and signals, one for the
// small tables, none for the empty events table.
var wantBatches = map[string]int{TableQueue: 1, TableDelivery: 1, TableFlows: 3, TableSignals: 3, TableEvents: 0}

func TestFileSinkRoundTrip(t *testing.T) {
	for _, ext := range []string{".arrow", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "run"+ext)
			s, err := NewFileSink(path, WithAllocator(mem))
			if err != nil {
				t.Fatalf("NewFileSink(%q) error %v", path, err)
			}
			r := NewRecorder(config.TraceChange, 0, s)
			recordMany(r)
			r.FlushAll()
			if err := r.Err(); err != nil {
				t.Fatalf("recorder error %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close error %v", err)
			}
			want := wantMany()
			for i, table := range Tables {
				p := s.Paths()[i]
				if p != TablePath(path, table) {
					t.Errorf("Paths()[%d] = %q, want %q", i, p, TablePath(path, table))
				}
				schema, batches, rows := readBack(t, p, mem)
				if !sameColumns(schema, Schema(table)) {
					t.Errorf("%s schema = %v, want %v", p, schema, Schema(table))
				}
				if batches != wantBatches[table] {
					t.Errorf("%s batches = %d, want %d", p, batches, wantBatches[table])
				}
				compareRows(t, p, want[table], rows)
				if ext == ".parquet" {
					checkDictStrings(t, p, table)
				}
			}
		})
	}
}

// checkDictStrings checks that a Parquet table file stores its string
// columns dictionary-encoded in every row group — the sink hands them over
// as dictionary indices, and a fallback to plain encoding would mean it
// paid for hashing every value — and its numbers plain.
func checkDictStrings(t *testing.T, path, table string) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("file.OpenParquetFile(%s) error %v", path, err)
	}
	defer pf.Close()
	for g := range pf.NumRowGroups() {
		rg := pf.MetaData().RowGroup(g)
		for i, fd := range Schema(table).Fields() {
			cc, err := rg.ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			dict := slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict)
			if want := fd.Type.ID() == arrow.STRING; dict != want {
				t.Errorf("%s row group %d column %s encodings %v: dictionary = %v, want %v", path, g, fd.Name, cc.Encodings(), dict, want)
			}
		}
	}
}

// sameColumns compares column names, types and nullability and the table
// metadata key, not field metadata: the Go Parquet reader adds
// PARQUET:field_id to every field.
func sameColumns(a, b *arrow.Schema) bool {
	ta, _ := a.Metadata().GetValue(SchemaTableKey)
	tb, _ := b.Metadata().GetValue(SchemaTableKey)
	return ta == tb && slices.EqualFunc(a.Fields(), b.Fields(), func(x, y arrow.Field) bool {
		return x.Name == y.Name && arrow.TypeEqual(x.Type, y.Type) && x.Nullable == y.Nullable
	})
}

// compareRows reports the first row that differs; cmp.Diff over all rows
// would take seconds.
func compareRows(t *testing.T, name string, want, got [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s rows = %d, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		if !slices.Equal(want[i], got[i]) {
			t.Errorf("%s row %d (-want +got):\n%s", name, i, cmp.Diff(want[i], got[i]))
			return
		}
	}
}

// readBack reads a table file with the Go Arrow IPC or Parquet reader and
// returns its schema, its number of record batches or row groups, and its
// rows.
func readBack(t *testing.T, path string, mem memory.Allocator) (*arrow.Schema, int, [][]any) {
	t.Helper()
	var rows [][]any
	if filepath.Ext(path) == ".arrow" {
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		defer f.Close()
		rd, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			t.Fatalf("ipc.NewFileReader(%s) error %v", path, err)
		}
		defer rd.Close()
		for i := range rd.NumRecords() {
			rec, err := rd.RecordAt(i)
			if err != nil {
				t.Fatalf("%s record %d: %v", path, i, err)
			}
			rows = append(rows, rowsOf(t, rec)...)
			rec.Release()
		}
		return rd.Schema(), rd.NumRecords(), rows
	}
	mem = parquetReadMem
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatalf("file.OpenParquetFile(%s) error %v", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultFlushRows}, mem)
	if err != nil {
		t.Fatalf("pqarrow.NewFileReader(%s) error %v", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		t.Fatalf("%s schema: %v", path, err)
	}
	for g := range pf.NumRowGroups() {
		rr, err := fr.GetRecordReader(context.Background(), nil, []int{g})
		if err != nil {
			t.Fatalf("%s row group %d: %v", path, g, err)
		}
		for rr.Next() {
			rows = append(rows, rowsOf(t, rr.Record())...)
		}
		err = rr.Err()
		rr.Release()
		if err != nil && err != io.EOF { // the reader reports its end as io.EOF
			t.Fatalf("%s row group %d: %v", path, g, err)
		}
	}
	return schema, pf.NumRowGroups(), rows
}

// failWriter is a table file whose writes fail, standing in for a full disk.
type failWriter struct{ writes int }

var errDiskFull = errors.New("disk full")

func (f *failWriter) write(arrow.Record) error { f.writes++; return errDiskFull }
func (f *failWriter) close() error             { return nil }

// TestFileSinkStickyError checks that the first write error stops further
// writes, reaches the recorder and Close, and that the other files are
// still finalised and readable.
func TestFileSinkStickyError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "run.arrow")
	s, err := NewFileSink(path, WithAllocator(mem))
	if err != nil {
		t.Fatalf("NewFileSink error %v", err)
	}
	fi := tableIndex(TableFlows)
	real := s.writers[fi]
	fw := &failWriter{}
	s.writers[fi] = fw
	r := NewRecorder(config.TraceChange, 0, nil)
	recordMany(r)
	if err := s.Flush(r, TableQueue); err != nil {
		t.Fatalf("Flush(queue) error %v", err)
	}
	// The failing write happens on the writer goroutine: Flush queues it,
	// and a later Flush reports it.
	if err := s.Flush(r, TableFlows); err != nil && !errors.Is(err, errDiskFull) {
		t.Errorf("Flush(flows) error = %v, want nil or %v", err, errDiskFull)
	}
	waitErr(t, s)
	if err := s.Flush(r, TableDelivery); !errors.Is(err, errDiskFull) {
		t.Errorf("Flush(delivery) after the error = %v, want the sticky %v", err, errDiskFull)
	}
	if fw.writes != 1 {
		t.Errorf("writes to the failing file = %d, want 1", fw.writes)
	}
	if err := real.close(); err != nil {
		t.Fatalf("closing the replaced writer: %v", err)
	}
	if err := s.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close() = %v, want %v", err, errDiskFull)
	}
	if err := s.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("second Close() = %v, want %v", err, errDiskFull)
	}
	if err := s.Flush(r, TableQueue); err == nil {
		t.Errorf("Flush after Close error = nil, want an error")
	}
	_, batches, rows := readBack(t, TablePath(path, TableQueue), mem)
	if batches != 1 || len(rows) != len(wantQueue) {
		t.Errorf("queue file after the error = %d batches, %d rows, want 1, %d", batches, len(rows), len(wantQueue))
	}
	_, batches, _ = readBack(t, TablePath(path, TableDelivery), mem)
	if batches != 0 {
		t.Errorf("delivery file after the error = %d batches, want 0", batches)
	}
}

// parquetReadMem is the allocator the tests read Parquet files back with:
// Go's, unchecked, because arrow-go v17's delta decoder
// (deltaBitPackDecoder.initBlock) never frees its block buffer. That leak
// is the reader's; everything the sink allocates while writing stays on
// the tests' checked allocators.
var parquetReadMem = memory.DefaultAllocator

// waitErr waits until s's writer goroutine has recorded an error.
func waitErr(t *testing.T, s *FileSink) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the sink reported no error within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNewFileSinkErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, path string }{
		{"unknown extension", filepath.Join(dir, "run.csv")},
		{"no extension", filepath.Join(dir, "run")},
		{"missing directory", filepath.Join(dir, "nope", "run.parquet")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s, err := NewFileSink(tt.path); err == nil {
				s.Close()
				t.Errorf("NewFileSink(%q) error = nil, want an error", tt.path)
			}
		})
	}
}

// BenchmarkFileSinkFlows measures a FileSink's flush of a full flows table
// (DefaultFlushRows rows, 4 flows): record batch, encoding, compression and
// the write to disk. The sink is reopened every 32 flushes so the files stay
// small; those reopenings, footers included, are part of the cost.
func BenchmarkFileSinkFlows(b *testing.B) {
	for _, ext := range []string{".arrow", ".parquet"} {
		b.Run(ext[1:], func(b *testing.B) {
			r := NewRecorder(config.TraceChange, 0, nil)
			r.Flows = []string{"f0", "f1", "cubic-2", "bbr-3"}
			var fs FlowSampler
			for i := range DefaultFlushRows {
				r.RecordFlow(&fs, &FlowRow{T: sim.Time(i) * 1000, Flow: int32(i % 4), CwndPkts: uint32(i / 64),
					InflightBytes: int64(i%64) * 1448, SRTT: 20e9 + sim.Duration(i%1000)*1e6, Delivered: uint64(i),
					PacingRateBps: 1e8, CAState: uint8(i / 1000 % 5)})
			}
			path := filepath.Join(b.TempDir(), "run"+ext)
			var s *FileSink
			flushes := 0
			b.ReportAllocs()
			for b.Loop() {
				if s == nil {
					var err error
					if s, err = NewFileSink(path); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Flush(r, TableFlows); err != nil {
					b.Fatal(err)
				}
				if flushes++; flushes%32 == 0 {
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					s = nil
				}
			}
			if s != nil {
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*DefaultFlushRows/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
