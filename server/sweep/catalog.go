package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/ccscope/ccscope/engine"
)

// Row is one catalog row: one flow of one run. Pointers are null where a
// value does not apply or was not reached (as in engine.Summary).
type Row struct {
	Run    string // the run's id: the first 16 hex digits of its config hash
	Axis   string // the impairment axis the run varies ("" without axes)
	Params map[string]json.RawMessage

	Seed       uint64
	Scenario   string
	ConfigHash string
	Digest     string
	Events     uint64
	SimTimePs  int64
	WallS      float64

	Flow           string
	Kind           string
	CC             string
	BytesSent      int64
	BytesDelivered int64
	GoodputBps     *int64
	Retransmits    *int64
	T10MBPs        *int64
	RTTP50Ps       *int64
	RTTP99Ps       *int64

	// The first queue on the flows' way that saw traffic on link
	// "bottleneck", direction "ab" (the built-ins' data direction); null
	// when the scenario has no such link.
	BottleneckDrops      *int64
	BottleneckMarks      *int64
	BottleneckWireLosses *int64
	BottleneckMaxBacklog *int64
	BottleneckSojournP50 *int64
	BottleneckSojournP99 *int64

	Trace  *string // the run's trace file prefix, if kept
	Report *string // the run's page under --report-dir, if written
}

// rowsOf flattens a run's summary into catalog rows, one per flow.
func rowsOf(p Point, sum engine.Summary, trace, report *string) []Row {
	params := map[string]json.RawMessage{}
	for _, q := range p.Params {
		params[q.Path] = q.Values[0]
	}
	base := Row{Run: runID(sum.ConfigHash), Axis: p.Axis, Params: params, Seed: sum.Seed, Scenario: sum.Scenario,
		ConfigHash: sum.ConfigHash, Digest: sum.Digest, Events: sum.Events, SimTimePs: sum.SimTimePs, WallS: sum.WallS,
		Trace: trace, Report: report}
	for _, q := range sum.Queues {
		if q.Link == "bottleneck" && q.Dir == "ab" {
			base.BottleneckDrops = u64p(q.Drops)
			base.BottleneckMarks = u64p(q.Marks)
			base.BottleneckWireLosses = u64p(q.WireLosses)
			mb := q.MaxBacklogBytes
			base.BottleneckMaxBacklog = &mb
			base.BottleneckSojournP50 = q.SojournP50Ps
			base.BottleneckSojournP99 = q.SojournP99Ps
			break
		}
	}
	out := make([]Row, 0, len(sum.Flows))
	for _, f := range sum.Flows {
		r := base
		r.Flow, r.Kind, r.CC = f.ID, f.Kind, f.CC
		r.BytesSent, r.BytesDelivered = f.BytesSent, f.BytesDelivered
		r.GoodputBps, r.Retransmits, r.T10MBPs = f.GoodputBps, f.Retransmits, f.T10MBPs
		r.RTTP50Ps, r.RTTP99Ps = f.RTTP50Ps, f.RTTP99Ps
		out = append(out, r)
	}
	return out
}

func runID(hash string) string {
	if len(hash) > 16 {
		return hash[:16]
	}
	return hash
}

func u64p(v uint64) *int64 { x := int64(v); return &x }

type colKind int

const (
	kString colKind = iota
	kInt
	kUint // a seed: any uint64, as the scenario takes
	kFloat
)

// column is one fixed catalog column: its name, Arrow type, and how to read
// and write it on a Row (nil is null).
type column struct {
	name string
	kind colKind
	get  func(*Row) any
	set  func(*Row, any)
}

// The fixed columns, after "run", "axis" and the swept parameters. Names and
// units follow `ccscope run --json`.
var fixedColumns = []column{
	{"seed", kUint, func(r *Row) any { return r.Seed }, func(r *Row, v any) { r.Seed = v.(uint64) }},
	{"scenario", kString, func(r *Row) any { return r.Scenario }, func(r *Row, v any) { r.Scenario = v.(string) }},
	{"flow", kString, func(r *Row) any { return r.Flow }, func(r *Row, v any) { r.Flow = v.(string) }},
	{"kind", kString, func(r *Row) any { return r.Kind }, func(r *Row, v any) { r.Kind = v.(string) }},
	{"cc", kString, func(r *Row) any { return r.CC }, func(r *Row, v any) { r.CC = v.(string) }},
	{"goodput_bps", kInt, optGet(func(r *Row) **int64 { return &r.GoodputBps }), optSet(func(r *Row) **int64 { return &r.GoodputBps })},
	{"bytes_sent", kInt, func(r *Row) any { return r.BytesSent }, func(r *Row, v any) { r.BytesSent = v.(int64) }},
	{"bytes_delivered", kInt, func(r *Row) any { return r.BytesDelivered }, func(r *Row, v any) { r.BytesDelivered = v.(int64) }},
	{"retransmits", kInt, optGet(func(r *Row) **int64 { return &r.Retransmits }), optSet(func(r *Row) **int64 { return &r.Retransmits })},
	{"t_10MB_ps", kInt, optGet(func(r *Row) **int64 { return &r.T10MBPs }), optSet(func(r *Row) **int64 { return &r.T10MBPs })},
	{"rtt_p50_ps", kInt, optGet(func(r *Row) **int64 { return &r.RTTP50Ps }), optSet(func(r *Row) **int64 { return &r.RTTP50Ps })},
	{"rtt_p99_ps", kInt, optGet(func(r *Row) **int64 { return &r.RTTP99Ps }), optSet(func(r *Row) **int64 { return &r.RTTP99Ps })},
	{"bottleneck_drops", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckDrops }), optSet(func(r *Row) **int64 { return &r.BottleneckDrops })},
	{"bottleneck_marks", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckMarks }), optSet(func(r *Row) **int64 { return &r.BottleneckMarks })},
	{"bottleneck_wire_losses", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckWireLosses }), optSet(func(r *Row) **int64 { return &r.BottleneckWireLosses })},
	{"bottleneck_max_backlog_bytes", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckMaxBacklog }), optSet(func(r *Row) **int64 { return &r.BottleneckMaxBacklog })},
	{"bottleneck_sojourn_p50_ps", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckSojournP50 }), optSet(func(r *Row) **int64 { return &r.BottleneckSojournP50 })},
	{"bottleneck_sojourn_p99_ps", kInt, optGet(func(r *Row) **int64 { return &r.BottleneckSojournP99 }), optSet(func(r *Row) **int64 { return &r.BottleneckSojournP99 })},
	{"config_hash", kString, func(r *Row) any { return r.ConfigHash }, func(r *Row, v any) { r.ConfigHash = v.(string) }},
	{"digest", kString, func(r *Row) any { return r.Digest }, func(r *Row, v any) { r.Digest = v.(string) }},
	{"events", kInt, func(r *Row) any { return int64(r.Events) }, func(r *Row, v any) { r.Events = uint64(v.(int64)) }},
	{"sim_time_ps", kInt, func(r *Row) any { return r.SimTimePs }, func(r *Row, v any) { r.SimTimePs = v.(int64) }},
	{"wall_s", kFloat, func(r *Row) any { return r.WallS }, func(r *Row, v any) { r.WallS = v.(float64) }},
	{"trace", kString, optStrGet(func(r *Row) **string { return &r.Trace }), optStrSet(func(r *Row) **string { return &r.Trace })},
	{"report", kString, optStrGet(func(r *Row) **string { return &r.Report }), optStrSet(func(r *Row) **string { return &r.Report })},
}

func optGet(f func(*Row) **int64) func(*Row) any {
	return func(r *Row) any {
		if p := *f(r); p != nil {
			return *p
		}
		return nil
	}
}

func optSet(f func(*Row) **int64) func(*Row, any) {
	return func(r *Row, v any) {
		if v != nil {
			x := v.(int64)
			*f(r) = &x
		}
	}
}

func optStrGet(f func(*Row) **string) func(*Row) any {
	return func(r *Row) any {
		if p := *f(r); p != nil {
			return *p
		}
		return nil
	}
}

func optStrSet(f func(*Row) **string) func(*Row, any) {
	return func(r *Row, v any) {
		if v != nil {
			x := v.(string)
			*f(r) = &x
		}
	}
}

// paramColumns returns the swept parameters' columns: the spec's first,
// then any others the rows carry (from an earlier sweep into the same
// catalog), each float64 when every value is a JSON number, else a string.
func paramColumns(order []string, rows []Row) []column {
	vals := map[string][]json.RawMessage{}
	for i := range rows {
		for k, v := range rows[i].Params {
			vals[k] = append(vals[k], v)
		}
	}
	names := append([]string(nil), order...)
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	for _, k := range sortedKeys(vals) {
		if !seen[k] {
			names = append(names, k)
		}
	}
	var cols []column
	for _, name := range names {
		name := name
		if numeric(vals[name]) {
			cols = append(cols, column{name, kFloat, func(r *Row) any {
				v, ok := r.Params[name]
				if !ok {
					return nil
				}
				f, _ := strconv.ParseFloat(string(v), 64)
				return f
			}, nil})
			continue
		}
		cols = append(cols, column{name, kString, func(r *Row) any {
			v, ok := r.Params[name]
			if !ok {
				return nil
			}
			return display(v)
		}, nil})
	}
	return cols
}

var (
	runCol  = column{"run", kString, func(r *Row) any { return r.Run }, func(r *Row, v any) { r.Run = v.(string) }}
	axisCol = column{"axis", kString, func(r *Row) any { return r.Axis }, func(r *Row, v any) { r.Axis = v.(string) }}
)

// baseKey is the catalog's metadata key for the fixed settings of the sweep
// that wrote it (Spec.Base).
const baseKey = "ccscope.sweep_base"

// writeCatalog writes rows to path as Parquet (atomically: a temporary file
// renamed over it), the swept parameters' columns first in paramOrder and
// the fixed settings of the sweep that wrote it (Spec.Base) in the file's
// metadata when base is not "".
func writeCatalog(path, base string, paramOrder []string, rows []Row) error {
	cols := append([]column{runCol, axisCol}, paramColumns(paramOrder, rows)...)
	cols = append(cols, fixedColumns...)
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: arrowType(c.kind), Nullable: true}
	}
	keys, vals := []string{"ccscope.catalog"}, []string{"1"}
	if base != "" {
		keys, vals = append(keys, baseKey), append(vals, base)
	}
	meta := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema(fields, &meta)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, c := range cols {
		fb := b.Field(i)
		for j := range rows {
			v := c.get(&rows[j])
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch c.kind {
			case kString:
				fb.(*array.StringBuilder).Append(v.(string))
			case kInt:
				fb.(*array.Int64Builder).Append(v.(int64))
			case kUint:
				fb.(*array.Uint64Builder).Append(v.(uint64))
			case kFloat:
				fb.(*array.Float64Builder).Append(v.(float64))
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	tmp := path + ".tmp"
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("sweep: catalog: %w", err)
		}
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("sweep: catalog: %w", err)
	}
	if err := w.Write(rec); err != nil {
		return fmt.Errorf("sweep: catalog: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("sweep: catalog: %w", err)
	}
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("sweep: catalog: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("sweep: catalog: %w", err)
	}
	return nil
}

func arrowType(k colKind) arrow.DataType {
	switch k {
	case kInt:
		return arrow.PrimitiveTypes.Int64
	case kUint:
		return arrow.PrimitiveTypes.Uint64
	case kFloat:
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

// ReadCatalog reads a catalog written by writeCatalog; a missing file is an
// empty catalog. Columns other than the fixed ones, "run" and "axis" are
// swept parameters.
func ReadCatalog(path string) ([]Row, error) {
	rows, _, err := readCatalog(path)
	return rows, err
}

// readCatalog is ReadCatalog, with the fixed settings of the sweep that
// wrote the catalog ("" when it does not say).
func readCatalog(path string) ([]Row, string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("sweep: catalog: %w", err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, "", fmt.Errorf("sweep: catalog %s: %w", path, err)
	}
	defer pf.Close()
	var base string
	if v := pf.MetaData().KeyValueMetadata().FindValue(baseKey); v != nil {
		base = *v
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		return nil, "", fmt.Errorf("sweep: catalog %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, "", fmt.Errorf("sweep: catalog %s: %w", path, err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	rows := make([]Row, n)
	for i := range rows {
		rows[i].Params = map[string]json.RawMessage{}
	}
	known := map[string]column{runCol.name: runCol, axisCol.name: axisCol}
	for _, c := range fixedColumns {
		known[c.name] = c
	}
	for ci := 0; ci < int(tbl.NumCols()); ci++ {
		col := tbl.Column(ci)
		name := col.Name()
		c, fixed := known[name]
		j := 0
		for _, chunk := range col.Data().Chunks() {
			for k := 0; k < chunk.Len(); k, j = k+1, j+1 {
				if chunk.IsNull(k) {
					continue
				}
				var v any
				switch a := chunk.(type) {
				case *array.String:
					v = a.Value(k)
				case *array.Int64:
					v = a.Value(k)
					if fixed && c.kind == kUint && a.Value(k) >= 0 {
						v = uint64(a.Value(k)) // a catalog of before seeds were uint64
					}
				case *array.Uint64:
					v = a.Value(k)
				case *array.Float64:
					v = a.Value(k)
				default:
					return nil, "", fmt.Errorf("sweep: catalog %s: column %q has type %s", path, name, chunk.DataType())
				}
				if fixed {
					if _, old := v.(uint64); arrowType(c.kind).ID() != chunk.DataType().ID() && !(c.kind == kUint && old) {
						return nil, "", fmt.Errorf("sweep: catalog %s: column %q has type %s, want %s", path, name, chunk.DataType(), arrowType(c.kind))
					}
					c.set(&rows[j], v)
					continue
				}
				switch x := v.(type) {
				case string:
					rows[j].Params[name] = jsonString(x)
				case float64:
					rows[j].Params[name] = json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64))
				case int64:
					rows[j].Params[name] = json.RawMessage(strconv.FormatInt(x, 10))
				}
			}
		}
	}
	return rows, base, nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
