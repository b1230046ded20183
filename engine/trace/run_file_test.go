package trace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// TestRunToFiles runs a pump through the engine into a FileSink and checks
// the files against the path's arithmetic. h1 —1 Gbps, 1 ms— r1 —100 Mbps,
// 19 ms— h2; the pump sends 1500 B every 250 µs (48 Mbps) from t = 0.
// Packet k leaves h1 at k·250 µs and reaches h2 12 µs (1500 B at 1 Gbps) +
// 1 ms + 120 µs (at 100 Mbps) + 19 ms later, at k·250 µs + 20.132 ms: by
// the 1 s horizon packets 0..3919 have arrived (3919·250 µs + 20.132 ms =
// 999.882 ms; the next would arrive at 1000.132 ms). Packets reach each
// queue 250 µs apart and take at most 120 µs to serialise, so no queue
// ever holds more than the one packet being sent and none waits or drops.
func TestRunToFiles(t *testing.T) {
	access := config.Direction{Rate: units.Gbps, Delay: sim.Millisecond,
		Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 100}}}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond,
		Qdisc: config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: 100}}}
	scn := &config.Scenario{
		Name:    "file-sink",
		Runtime: config.Runtime{Seed: 1, Duration: sim.Second},
		Trace:   config.Trace{Detail: config.TraceChange},
		Nodes:   []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: access, BA: access},
			{ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn},
		},
		Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", Params: &config.Params{CC: "pump", Rate: 48 * units.Mbps, PacketSize: 1500}}},
	}
	for _, ext := range []string{".arrow", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "run"+ext)
			sink, err := trace.NewFileSink(path, trace.WithAllocator(mem))
			if err != nil {
				t.Fatalf("NewFileSink error %v", err)
			}
			run, err := engine.New(scn, sink)
			if err != nil {
				t.Fatalf("engine.New error %v", err)
			}
			run.RunToEnd()
			if err := run.Trace.Err(); err != nil {
				t.Fatalf("trace error %v", err)
			}
			if err := sink.Close(); err != nil {
				t.Fatalf("Close error %v", err)
			}

			d := readTable(t, trace.TablePath(path, trace.TableDelivery), mem)
			defer d.Release()
			ts, flows, delivered := int64s(d, "t_ps"), strs(d, "flow"), int64s(d, "bytes_delivered")
			if len(ts) != 3920 {
				t.Fatalf("delivery rows = %d, want 3920", len(ts))
			}
			for k := range ts {
				wantT := int64(k)*250e6 + 20_132e6
				if ts[k] != wantT || flows[k] != "f0" || delivered[k] != int64(k+1)*1500 {
					t.Fatalf("delivery row %d = (%d, %s, %d), want (%d, f0, %d)", k, ts[k], flows[k],
						delivered[k], wantT, (k+1)*1500)
				}
			}
			if s := run.Flows[0].Summary(run.Now()); s.BytesDelivered != delivered[len(delivered)-1] {
				t.Errorf("summary bytes delivered = %d, last trace row %d", s.BytesDelivered, delivered[len(delivered)-1])
			}

			q := readTable(t, trace.TablePath(path, trace.TableQueue), mem)
			defer q.Release()
			links, dirs := strs(q, "link"), strs(q, "dir")
			pkts, sojourn, drops := int64s(q, "backlog_pkts"), int64s(q, "sojourn_ps"), uint64s(q, "drops")
			seen := map[string]bool{}
			for i := range links {
				seen[links[i]+"/"+dirs[i]] = true
				if pkts[i] > 1 || sojourn[i] != 0 || drops[i] != 0 {
					t.Fatalf("queue row %d %s/%s: backlog %d pkts, sojourn %d ps, drops %d; want ≤ 1, 0, 0",
						i, links[i], dirs[i], pkts[i], sojourn[i], drops[i])
				}
			}
			if len(seen) != 2 || !seen["access/ab"] || !seen["bottleneck/ab"] {
				t.Errorf("queue rows cover %v, want access/ab and bottleneck/ab", seen)
			}
		})
	}
}

// readTable reads a whole table file with the Go Arrow IPC or Parquet
// reader.
func readTable(t *testing.T, path string, mem memory.Allocator) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	if filepath.Ext(path) == ".parquet" {
		// Unchecked: arrow-go v17's delta decoder leaks its block buffer.
		mem = memory.DefaultAllocator
		tbl, err := pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(mem),
			pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatalf("pqarrow.ReadTable(%s) error %v", path, err)
		}
		return tbl
	}
	rd, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatalf("ipc.NewFileReader(%s) error %v", path, err)
	}
	defer rd.Close()
	var recs []arrow.Record
	for i := range rd.NumRecords() {
		rec, err := rd.RecordAt(i)
		if err != nil {
			t.Fatalf("%s record %d: %v", path, i, err)
		}
		defer rec.Release()
		recs = append(recs, rec)
	}
	return array.NewTableFromRecords(rd.Schema(), recs)
}

// column concatenates a table column's chunks through get.
func column[T any, A arrow.Array](tbl arrow.Table, name string, get func(A, int) T) []T {
	var out []T
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(name)[0]).Data().Chunks() {
		a := c.(A)
		for i := range a.Len() {
			out = append(out, get(a, i))
		}
	}
	return out
}

func int64s(tbl arrow.Table, name string) []int64 {
	return column(tbl, name, (*array.Int64).Value)
}

func uint64s(tbl arrow.Table, name string) []uint64 {
	return column(tbl, name, (*array.Uint64).Value)
}

func strs(tbl arrow.Table, name string) []string {
	return column(tbl, name, (*array.String).Value)
}
