package trace

import (
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ccscope/ccscope/engine/cc"
)

// Tables lists the table names in the order files and streams use them.
var Tables = [...]string{iQueue: TableQueue, iDelivery: TableDelivery, iFlows: TableFlows, iSignals: TableSignals, iEvents: TableEvents, iLink: TableLink}

// Each table's index in Tables.
const (
	iQueue = iota
	iDelivery
	iFlows
	iSignals
	iEvents
	iLink
)

// Strings are plain utf8 rather than dictionary-encoded: every reader
// (pyarrow, pandas, polars, DuckDB) takes utf8 as is, and a dictionary that
// grows between batches is a replacement the Arrow IPC file format forbids.
// Parquet dictionary-encodes the columns on disk anyway. No column is
// nullable: every row has every value.
var (
	i64  = arrow.PrimitiveTypes.Int64
	i32  = arrow.PrimitiveTypes.Int32
	u8   = arrow.PrimitiveTypes.Uint8
	u32  = arrow.PrimitiveTypes.Uint32
	u64  = arrow.PrimitiveTypes.Uint64
	f64  = arrow.PrimitiveTypes.Float64
	utf8 = arrow.BinaryTypes.String

	schemas = map[string]*arrow.Schema{
		TableQueue: newSchema(TableQueue,
			"t_ps", i64, "link", utf8, "dir", utf8, "backlog_bytes", i64, "backlog_pkts", i64,
			"sojourn_ps", i64, "drops", u64, "marks", u64),
		TableDelivery: newSchema(TableDelivery,
			"t_ps", i64, "flow", utf8, "bytes_delivered", i64),
		TableFlows: newSchema(TableFlows,
			"t_ps", i64, "flow", utf8, "cwnd_pkts", u32, "ssthresh_pkts", u32,
			"inflight_bytes", i64, "inflight_pkts", u32, "srtt_ps", i64, "rttvar_ps", i64,
			"min_rtt_ps", i64, "pacing_rate_bps", i64, "delivery_rate_bps", i64,
			"delivered_pkts", u64, "lost_pkts", u64, "retrans_pkts", u64, "ca_state", utf8),
		TableSignals: newSchema(TableSignals,
			"t_ps", i64, "flow", utf8, "signal", utf8, "value", f64),
		TableEvents: newSchema(TableEvents,
			"t_ps", i64, "flow", utf8, "kind", utf8, "seq", i64, "len", i32),
		TableLink: newSchema(TableLink,
			"t_ps", i64, "link", utf8, "dir", utf8, "rate_bps", i64, "delay_ps", i64),
	}
)

// SchemaTableKey is the schema metadata key naming the table, so a reader
// handed a bare stream or file can tell which table it holds.
const SchemaTableKey = "ccscope.table"

// newSchema builds a schema from alternating column names and types.
func newSchema(table string, cols ...any) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(cols)/2)
	for i := 0; i < len(cols); i += 2 {
		fields = append(fields, arrow.Field{Name: cols[i].(string), Type: cols[i+1].(arrow.DataType)})
	}
	md := arrow.NewMetadata([]string{SchemaTableKey}, []string{table})
	return arrow.NewSchema(fields, &md)
}

// Schema is the Arrow schema of a table, or nil for an unknown table name.
func Schema(table string) *arrow.Schema { return schemas[table] }

// Filter selects rows by flow id and signal name. A nil or empty list
// selects everything; names the recorder has not seen select nothing.
// Flows applies to every table with a flow column (all but queue), Signals
// to the signals table only.
type Filter struct {
	Flows   []string
	Signals []string
}

// Batch builds one record batch from the table's current rows. The caller
// releases it.
func (r *Recorder) Batch(table string, mem memory.Allocator) (arrow.Record, error) {
	return r.BatchFiltered(table, mem, Filter{})
}

// BatchFiltered builds one record batch from the table's current rows that
// pass f. The caller releases it.
func (r *Recorder) BatchFiltered(table string, mem memory.Allocator, f Filter) (arrow.Record, error) {
	return r.batch(table, mem, f, false)
}

// batch builds a table's record batch. With dict its string columns are
// dictionary arrays (the recorder's indices into its names), for writers
// that store strings dictionary-encoded: they take the indices as they are
// instead of hashing every value. Its fixed-width columns then borrow the
// recorder's memory as well, so the record is valid only until the table
// changes.
func (r *Recorder) batch(table string, mem memory.Allocator, f Filter, dict bool) (arrow.Record, error) {
	flows := mask(r.Flows, f.Flows)
	b := batch{mem: mem, dict: dict}
	switch table {
	case TableQueue:
		q := &r.Queue
		fixedCol(&b, i64, q.T, nil)
		utf8Col(&b, r.Links, q.Link, nil)
		utf8Col(&b, dirNames[:], dirIndex(q.DirAB), nil)
		fixedCol(&b, i64, q.BacklogBytes, nil)
		fixedCol(&b, i64, q.BacklogPkts, nil)
		fixedCol(&b, i64, q.SojournPs, nil)
		fixedCol(&b, u64, q.Drops, nil)
		fixedCol(&b, u64, q.Marks, nil)
	case TableDelivery:
		d := &r.Delivery
		sel := selectRows(d.Flow, flows, nil, nil)
		fixedCol(&b, i64, d.T, sel)
		utf8Col(&b, r.Flows, d.Flow, sel)
		fixedCol(&b, i64, d.BytesDelivered, sel)
	case TableFlows:
		r.flowColumns(&b, flows)
	case TableSignals:
		s := &r.SignalT
		sel := selectRows(s.Flow, flows, s.Signal, mask(r.Signals, f.Signals))
		fixedCol(&b, i64, s.T, sel)
		utf8Col(&b, r.Flows, s.Flow, sel)
		utf8Col(&b, r.Signals, s.Signal, sel)
		fixedCol(&b, f64, s.Value, sel)
	case TableEvents:
		e := &r.EventT
		sel := selectRows(e.Flow, flows, nil, nil)
		fixedCol(&b, i64, e.T, sel)
		utf8Col(&b, r.Flows, e.Flow, sel)
		utf8Col(&b, kindNames[:], e.Kind, sel)
		fixedCol(&b, i64, e.Seq, sel)
		fixedCol(&b, i32, e.Length, sel)
	case TableLink:
		l := &r.LinkT
		fixedCol(&b, i64, l.T, nil)
		utf8Col(&b, r.Links, l.Link, nil)
		utf8Col(&b, dirNames[:], dirIndex(l.DirAB), nil)
		fixedCol(&b, i64, l.RateBps, nil)
		fixedCol(&b, i64, l.DelayPs, nil)
	default:
		return nil, fmt.Errorf("trace: no table %q", table)
	}
	return b.record(table)
}

// flowColumns fills the flows table's columns in one pass over its rows,
// which are stored as structs rather than columns.
func (r *Recorder) flowColumns(b *batch, flows []bool) {
	rows := r.FlowsT.Rows
	if flows != nil {
		kept := make([]FlowRow, 0, len(rows))
		for i := range rows {
			if flows[rows[i].Flow] {
				kept = append(kept, rows[i])
			}
		}
		rows = kept
	}
	// Reslicing every column to n lets the compiler prove the loop's
	// indices in range and drop its bounds checks.
	n := len(rows)
	t := newFixed[int64](b, i64, n)[:n]
	flowCol, flow := b.reserve(), make([]int32, n)[:n]
	cwnd := newFixed[uint32](b, u32, n)[:n]
	ssthresh := newFixed[uint32](b, u32, n)[:n]
	inflightBytes := newFixed[int64](b, i64, n)[:n]
	inflightPkts := newFixed[uint32](b, u32, n)[:n]
	srtt := newFixed[int64](b, i64, n)[:n]
	rttvar := newFixed[int64](b, i64, n)[:n]
	minRTT := newFixed[int64](b, i64, n)[:n]
	pacing := newFixed[int64](b, i64, n)[:n]
	rate := newFixed[int64](b, i64, n)[:n]
	delivered := newFixed[uint64](b, u64, n)[:n]
	lost := newFixed[uint64](b, u64, n)[:n]
	retrans := newFixed[uint64](b, u64, n)[:n]
	ca := make([]uint8, n)[:n]
	for i := range rows {
		row := &rows[i]
		t[i] = int64(row.T)
		flow[i] = row.Flow
		cwnd[i] = row.CwndPkts
		ssthresh[i] = row.SSThreshPkts
		inflightBytes[i] = row.InflightBytes
		inflightPkts[i] = row.InflightPkts
		srtt[i] = int64(row.SRTT)
		rttvar[i] = int64(row.RTTVar)
		minRTT[i] = int64(row.MinRTT)
		pacing[i] = row.PacingRateBps
		rate[i] = row.DeliveryRateBps
		delivered[i] = row.Delivered
		lost[i] = row.Lost
		retrans[i] = row.Retrans
		ca[i] = row.CAState
	}
	utf8Into(b, flowCol, r.Flows, flow, nil)
	utf8Col(b, caNames[:], ca, nil)
}

var (
	dirNames  = [2]string{"ba", "ab"} // indexed by dirIndex
	caNames   = byteNames(func(i int) string { return cc.CAState(i).String() })
	kindNames = byteNames(func(i int) string {
		if i < len(EventKindNames) {
			return EventKindNames[i]
		}
		return fmt.Sprintf("EventKind(%d)", i)
	})
)

// dirIndex indexes dirNames by the DirAB column of the queue or link table.
func dirIndex(ab []bool) []uint8 {
	dir := make([]uint8, len(ab))
	for i, x := range ab {
		if x {
			dir[i] = 1
		}
	}
	return dir
}

// byteNames tabulates the names of all 256 values of a uint8 enum, so an
// out-of-range value still gets a readable name rather than a panic.
func byteNames(name func(int) string) (names [256]string) {
	for i := range names {
		names[i] = name(i)
	}
	return names
}

// mask marks the interned names (indices into names) that want lists; nil
// when want is empty, meaning "all".
func mask(names, want []string) []bool {
	if len(want) == 0 {
		return nil
	}
	m := make([]bool, len(names))
	for i, n := range names {
		for _, w := range want {
			if n == w {
				m[i] = true
				break
			}
		}
	}
	return m
}

// selectRows lists the rows whose flow (and signal, if given) pass the
// masks; nil when no mask is set, meaning every row.
func selectRows(flow []int32, flows []bool, signal []int32, signals []bool) []int32 {
	if flows == nil && signals == nil {
		return nil
	}
	sel := make([]int32, 0, len(flow))
	for i, f := range flow {
		if (flows == nil || flows[f]) && (signals == nil || signals[signal[i]]) {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

// batch collects a record's columns as they are built, with a sticky first
// error.
type batch struct {
	mem  memory.Allocator
	dict bool // string columns as dictionary arrays, borrowed columns
	cols []arrow.Array
	bufs []pending
	err  error
}

// pending is a fixed-width column whose buffer is still being filled.
type pending struct {
	col int
	dt  arrow.DataType
	n   int
	buf *memory.Buffer
}

// reserve appends an empty column slot and returns its index.
func (b *batch) reserve() int {
	b.cols = append(b.cols, nil)
	return len(b.cols) - 1
}

// newFixed reserves the next column: n values of T in a buffer from b.mem,
// returned for the caller to fill before b.record.
func newFixed[T arrow.FixedWidthType](b *batch, dt arrow.DataType, n int) []T {
	buf := memory.NewResizableBuffer(b.mem)
	buf.Resize(n * int(unsafe.Sizeof(*new(T))))
	b.bufs = append(b.bufs, pending{col: b.reserve(), dt: dt, n: n, buf: buf})
	return arrow.GetData[T](buf.Bytes())
}

// fixedCol appends a fixed-width column holding src's rows sel (all if nil).
func fixedCol[T arrow.FixedWidthType](b *batch, dt arrow.DataType, src []T, sel []int32) {
	if sel == nil && b.dict {
		b.cols[b.reserve()] = borrowed(dt, src)
		return
	}
	if sel == nil {
		copy(newFixed[T](b, dt, len(src)), src)
		return
	}
	dst := newFixed[T](b, dt, len(sel))
	for k, i := range sel {
		dst[k] = src[i]
	}
}

// utf8Col appends a utf8 column holding names[idx[i]] for the rows sel
// (all if nil).
func utf8Col[I ~int32 | ~uint8](b *batch, names []string, idx []I, sel []int32) {
	utf8Into(b, b.reserve(), names, idx, sel)
}

// utf8Into builds utf8Col's column into the reserved slot col.
func utf8Into[I ~int32 | ~uint8](b *batch, col int, names []string, idx []I, sel []int32) {
	if sel != nil {
		g := make([]I, len(sel))
		for k, i := range sel {
			g[k] = idx[i]
		}
		idx = g
	}
	if b.dict {
		dictInto(b, col, names, idx)
		return
	}
	// Count each name's rows first: the data size is then exact and one
	// pass writes offsets and bytes together.
	counts := make([]int64, len(names))
	for _, x := range idx {
		counts[x]++
	}
	var total int64
	for i, c := range counts {
		total += c * int64(len(names[i]))
	}
	n := len(idx)
	if total > math.MaxInt32 {
		if b.err == nil {
			b.err = fmt.Errorf("trace: column %d: %d rows of strings exceed utf8's 2 GiB limit", col, n)
		}
		return
	}
	offBuf := memory.NewResizableBuffer(b.mem)
	offBuf.Resize((n + 1) * arrow.Int32SizeBytes)
	off := arrow.GetData[int32](offBuf.Bytes())[:n+1]
	data := memory.NewResizableBuffer(b.mem)
	data.Resize(int(total))
	bytes := data.Bytes()
	var o int32
	for i, x := range idx {
		off[i] = o
		o += int32(copy(bytes[o:], names[x]))
	}
	off[n] = o
	d := array.NewData(utf8, n, []*memory.Buffer{nil, offBuf, data}, nil, 0, 0)
	offBuf.Release()
	data.Release()
	b.cols[col] = array.MakeFromData(d)
	d.Release()
}

// record wraps the pending buffers as arrays and assembles the record; on
// error it releases everything.
func (b *batch) record(table string) (arrow.Record, error) {
	for _, p := range b.bufs {
		d := array.NewData(p.dt, p.n, []*memory.Buffer{nil, p.buf}, nil, 0, 0)
		p.buf.Release()
		b.cols[p.col] = array.MakeFromData(d)
		d.Release()
	}
	defer func() {
		for _, c := range b.cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	if b.err != nil {
		return nil, fmt.Errorf("trace: table %s: %w", table, b.err)
	}
	n := int64(0)
	if len(b.cols) > 0 {
		n = int64(b.cols[0].Len())
	}
	schema := schemas[table]
	if b.dict {
		// The string columns' types are now dictionary types.
		fields := slices.Clone(schema.Fields())
		for i := range fields {
			fields[i].Type = b.cols[i].DataType()
		}
		md := schema.Metadata()
		schema = arrow.NewSchema(fields, &md)
	}
	return array.NewRecord(schema, b.cols, n), nil
}

// dictInto builds utf8Into's column as a dictionary array whose indices
// are idx itself, borrowed, and whose dictionary is names up to the largest
// index used. Names are interned, so the dictionary has no duplicates; it
// may hold names no row uses, which costs a reader nothing.
func dictInto[I ~int32 | ~uint8](b *batch, col int, names []string, idx []I) {
	var top I
	for _, x := range idx {
		top = max(top, x)
	}
	used := names[:0]
	if len(idx) > 0 {
		used = names[:top+1]
	}
	vb := array.NewStringBuilder(b.mem)
	vb.AppendValues(used, nil)
	values := vb.NewArray()
	vb.Release()
	it := arrow.DataType(i32)
	if unsafe.Sizeof(top) == 1 {
		it = u8
	}
	indices := borrowed(it, idx)
	b.cols[col] = array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: utf8}, indices, values)
	indices.Release()
	values.Release()
}

// borrowed is an array of type dt over src's memory, without a copy.
func borrowed[T arrow.FixedWidthType | ~uint8](dt arrow.DataType, src []T) arrow.Array {
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), len(src)*int(unsafe.Sizeof(*new(T))))
	d := array.NewData(dt, len(src), []*memory.Buffer{nil, memory.NewBufferBytes(bytes)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// WriteIPCStream writes a complete Arrow IPC stream — schema, the records,
// end-of-stream marker — that pyarrow.ipc.open_stream reads as is. The
// schema is explicit so that a stream without records is still readable.
func WriteIPCStream(w io.Writer, schema *arrow.Schema, recs ...arrow.Record) error {
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	for _, rec := range recs {
		if err := iw.Write(rec); err != nil {
			iw.Close()
			return fmt.Errorf("trace: ipc stream: %w", err)
		}
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("trace: ipc stream: %w", err)
	}
	return nil
}
