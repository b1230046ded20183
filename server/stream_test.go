package server

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// signalsFrame writes, byte for byte, what the msgpack library encodes for
// the response {id, ok: true, result: {rows, dropped_rows, arrow}} with
// the Arrow stream as a bin in its smallest encoding (bin16 for a small
// stream, bin32 for a large one).
func TestSignalsFrameMatchesMsgpack(t *testing.T) {
	type result struct {
		Rows        int64  `msgpack:"rows"`
		DroppedRows int64  `msgpack:"dropped_rows"`
		Arrow       []byte `msgpack:"arrow"`
	}
	tests := []struct {
		name    string
		id      any
		rows    int
		dropped int64
	}{
		{"empty stream, int id", int64(7), 0, 0},
		{"small stream, string id", "req-1", 3, 5},
		{"large stream, nil id", nil, 20000, 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &trace.Recorder{Flows: []string{"f0"}}
			var ss trace.SignalSampler
			sig := r.SignalIndex("cwnd")
			for i := range tt.rows {
				r.RecordSignal(&ss, sim.Time(i), 0, sig, float64(i))
			}
			var recs []arrow.Record
			if tt.rows > 0 {
				rec, err := r.Batch(trace.TableSignals, memory.NewGoAllocator())
				if err != nil {
					t.Fatal(err)
				}
				defer rec.Release()
				recs = append(recs, rec)
			}
			var ipc bytes.Buffer
			if err := trace.WriteIPCStream(&ipc, trace.Schema(trace.TableSignals), recs...); err != nil {
				t.Fatal(err)
			}
			want, err := marshal(&response{ID: tt.id, OK: true,
				Result: &result{Rows: int64(tt.rows), DroppedRows: tt.dropped, Arrow: ipc.Bytes()}})
			if err != nil {
				t.Fatal(err)
			}
			frame, got, err := signalsFrame(tt.id, trace.TableSignals, recs, int64(tt.rows), tt.dropped)
			if err != nil {
				t.Fatalf("signalsFrame: %v", err)
			}
			defer recycle(frame)
			if !bytes.Equal(got, want) {
				t.Errorf("signalsFrame = %d bytes, differs from msgpack's %d bytes", len(got), len(want))
			}
			var dec map[string]any
			if err := msgpack.Unmarshal(got, &dec); err != nil {
				t.Fatalf("frame does not decode: %v", err)
			}
		})
	}
}

// shrinkBin32 leaves the header msgpack's EncodeBytes writes for each
// length class: bin8 below 256 bytes, bin16 below 64 KiB, else bin32.
func TestShrinkBin32(t *testing.T) {
	for _, n := range []int{0, 255, 256, 65535, 65536} {
		payload := bytes.Repeat([]byte{0xAB}, n)
		want, err := msgpack.Marshal([]any{"head", payload})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := msgpack.NewEncoder(&b)
		_ = enc.EncodeArrayLen(2)
		_ = enc.EncodeString("head")
		head := b.Len()
		b.Write([]byte{0xc6, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		b.Write(payload)
		if got := shrinkBin32(b.Bytes(), head); !bytes.Equal(got, want) {
			t.Errorf("shrinkBin32 of a %d-byte bin = % x..., want % x...", n, got[:min(len(got), 10)], want[:min(len(want), 10)])
		}
	}
}
