package server

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// A record built in buffers the allocator hands out again — dirtied with
// 0xAA first, so any byte Arrow did not write shows — writes the same IPC
// stream, byte for byte, as one built in Arrow's zeroed Go allocator.
func TestReuseAllocatorStreamsMatchGoAllocator(t *testing.T) {
	r := &trace.Recorder{Flows: []string{"f0", "flow-1"}}
	for i := range 5000 {
		r.FlowsT.Rows = append(r.FlowsT.Rows, trace.FlowRow{T: sim.Time(i) * 1000, Flow: int32(i % 2),
			CwndPkts: uint32(i), SSThreshPkts: 7, InflightBytes: int64(3 * i), SRTT: sim.Duration(i), Delivered: uint64(i),
			CAState: uint8(i % 5)})
	}
	var ss trace.SignalSampler
	for i := range 5000 {
		r.RecordSignal(&ss, sim.Time(i), int32(i%2), r.SignalIndex([]string{"cwnd", "pacing_gain"}[i%2]), float64(i)/3)
	}
	stream := func(mem memory.Allocator, table string) []byte {
		rec, err := r.Batch(table, mem)
		if err != nil {
			t.Fatalf("Batch(%s): %v", table, err)
		}
		defer rec.Release()
		var b bytes.Buffer
		if err := trace.WriteIPCStream(&b, trace.Schema(table), rec); err != nil {
			t.Fatalf("WriteIPCStream(%s): %v", table, err)
		}
		return b.Bytes()
	}
	a := newReuseAllocator(64 << 20)
	for _, table := range []string{trace.TableFlows, trace.TableSignals} {
		t.Run(table, func(t *testing.T) {
			want := stream(memory.NewGoAllocator(), table)
			stream(a, table) // fills the free list
			for _, b := range a.free {
				for i := range b {
					b[i] = 0xAA
				}
			}
			kept := len(a.free)
			if kept == 0 {
				t.Fatalf("no buffer kept after a %s batch was released", table)
			}
			if got := stream(a, table); !bytes.Equal(got, want) {
				t.Errorf("stream from reused buffers differs from the Go allocator's (%d vs %d bytes)", len(got), len(want))
			}
			if len(a.free) != kept {
				t.Errorf("free list holds %d buffers after a second batch, want the %d it reused", len(a.free), kept)
			}
		})
	}
}

// The allocator hands out a kept buffer only for a size it fits within a
// factor of two, and keeps no more than its limit.
func TestReuseAllocatorSizes(t *testing.T) {
	a := newReuseAllocator(100 << 10)
	big := a.Allocate(64 << 10)
	a.Free(big)
	tests := []struct {
		name  string
		size  int
		reuse bool
	}{
		{"same size", 64 << 10, true},
		{"half", 32 << 10, true},
		{"under half", 31 << 10, false},
		{"larger", 65 << 10, false},
		{"small", 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := a.Allocate(tt.size)
			if len(b) != tt.size {
				t.Errorf("Allocate(%d) has length %d", tt.size, len(b))
			}
			if got := &b[0] == &big[0]; got != tt.reuse {
				t.Errorf("Allocate(%d) reused the 64 KiB buffer = %v, want %v", tt.size, got, tt.reuse)
			}
			if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
				t.Errorf("Allocate(%d) is not 64-byte aligned", tt.size)
			}
			a.Free(b)
		})
	}
	a.Free(make([]byte, 64<<10))
	if a.kept > a.max {
		t.Errorf("kept %d bytes, over the limit of %d", a.kept, a.max)
	}
}
