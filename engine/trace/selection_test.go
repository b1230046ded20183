package trace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/ccscope/ccscope/engine/config"
)

func TestParseSelectionErrors(t *testing.T) {
	tests := []struct{ item, want string }{
		{"flow", `no table "flow"`},
		{"flows.cwnd", `table flows has no column "cwnd"`},
		{"queue.", `table queue has no column ""`},
	}
	for _, tt := range tests {
		t.Run(tt.item, func(t *testing.T) {
			_, err := ParseSelection([]string{tt.item})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseSelection(%q) error = %v, want one containing %q", tt.item, err, tt.want)
			}
		})
	}
}

// TestFileSinkSelection writes recordMany's rows with a selection of one
// whole table and two columns of another: only those two files exist, the
// cut table keeps its key columns, and the tables left out are not even
// recorded.
func TestFileSinkSelection(t *testing.T) {
	for _, ext := range []string{".arrow", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			sel, err := ParseSelection([]string{"queue", "flows.cwnd_pkts", "flows.ca_state"})
			if err != nil {
				t.Fatalf("ParseSelection error %v", err)
			}
			path := filepath.Join(t.TempDir(), "run"+ext)
			s, err := NewFileSink(path, WithAllocator(mem), WithSelection(sel))
			if err != nil {
				t.Fatalf("NewFileSink error %v", err)
			}
			r := NewRecorder(config.TraceChange, 0, s)
			recordMany(r)
			if n := r.SignalT.Len() + r.Delivery.Len(); n != 0 {
				t.Errorf("rows recorded for tables left out = %d, want 0", n)
			}
			r.FlushAll()
			if err := s.Close(); err != nil {
				t.Fatalf("Close error %v", err)
			}
			wantPaths := []string{TablePath(path, TableQueue), TablePath(path, TableFlows)}
			if diff := cmp.Diff(wantPaths, s.Paths()); diff != "" {
				t.Errorf("Paths() diff (-want +got):\n%s", diff)
			}
			schema, _, rows := readBack(t, TablePath(path, TableFlows), mem)
			var names []string
			for _, f := range schema.Fields() {
				names = append(names, f.Name)
			}
			if diff := cmp.Diff([]string{"t_ps", "flow", "cwnd_pkts", "ca_state"}, names); diff != "" {
				t.Errorf("flows columns diff (-want +got):\n%s", diff)
			}
			full := wantMany()[TableFlows]
			want := make([][]any, len(full))
			for i, row := range full {
				want[i] = []any{row[0], row[1], row[2], row[14]}
			}
			compareRows(t, "flows", want, rows)
			_, _, qrows := readBack(t, TablePath(path, TableQueue), mem)
			compareRows(t, "queue", wantQueue, qrows)
		})
	}
}
