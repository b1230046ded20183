package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// RunInfo is the file `ccscope run --trace X.parquet` writes beside the
// tables as X.run.json: what the tables alone do not say.
type RunInfo struct {
	Summary engine.Summary `json:"summary"`
	Config  string         `json:"config"` // canonical scenario JSON
	Detail  string         `json:"detail"`
}

// RunInfoPath is the run-info file beside the trace files of path
// ("out/x.parquet" → "out/x.run.json").
func RunInfoPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".run.json"
}

// WriteRunInfo writes info as JSON to RunInfoPath(path).
func WriteRunInfo(path string, info RunInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(RunInfoPath(path), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// ResolveTrace finds the trace files of prefix: "out" (then out.<table>.parquet
// or out.<table>.arrow, for any table), "out.parquet" or "out.arrow" as given
// to --trace, or one of the table files itself ("out.flows.parquet"). It
// returns the path as --trace took it.
func ResolveTrace(prefix string) (string, error) {
	cands := []string{prefix + ".parquet", prefix + ".arrow"}
	if ext := filepath.Ext(prefix); ext == ".parquet" || ext == ".arrow" {
		cands = []string{prefix}
		base := strings.TrimSuffix(prefix, ext)
		for _, t := range trace.Tables {
			if strings.HasSuffix(base, "."+t) {
				cands = append(cands, strings.TrimSuffix(base, "."+t)+ext)
			}
		}
	}
	for _, c := range cands {
		for _, t := range trace.Tables { // any table: --trace-select may have left some out
			if _, err := os.Stat(trace.TablePath(c, t)); err == nil {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("report: no trace files for %q: looked for %s and the other tables beside it", prefix, trace.TablePath(cands[0], trace.TableFlows))
}

// ReadTrace builds a report from trace files (see ResolveTrace). The run
// summary, scenario and detail come from the .run.json beside them if it
// exists; without it the time axis spans the last row in the tables.
func ReadTrace(prefix string, opt Options) (*Builder, error) {
	path, meta, err := readMeta(prefix)
	if err != nil {
		return nil, err
	}
	return readTables(path, meta, opt)
}

// readMeta resolves prefix and reads what the report says of its run: the
// .run.json beside the tables if there is one, and the span, from the
// tables' last rows when the run info does not give it.
func readMeta(prefix string) (string, Meta, error) {
	path, err := ResolveTrace(prefix)
	if err != nil {
		return "", Meta{}, err
	}
	meta := Meta{Source: "trace files " + path}
	if raw, err := os.ReadFile(RunInfoPath(path)); err == nil {
		var info RunInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return "", Meta{}, fmt.Errorf("report: %s: %w", RunInfoPath(path), err)
		}
		m := MetaFromSummary(&info.Summary)
		m.Config, m.Detail, m.Source = info.Config, info.Detail, meta.Source
		meta = m
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", Meta{}, fmt.Errorf("report: %w", err)
	}
	if meta.HorizonPs <= 0 {
		// No summary: one pass over the time columns finds the span.
		for _, t := range trace.Tables {
			_, err := eachRecord(trace.TablePath(path, t), colSpec{need: []string{"t_ps"}}, func(rec arrow.Record, _ map[string]int) error {
				ts := rec.Column(0).(*array.Int64).Int64Values()
				if len(ts) > 0 {
					meta.HorizonPs = max(meta.HorizonPs, ts[len(ts)-1]+1)
				}
				return nil
			})
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", Meta{}, err
			}
		}
	}
	return path, meta, nil
}

// readTables builds the report of meta's run from its table files at path.
func readTables(path string, meta Meta, opt Options) (*Builder, error) {
	b, err := New(meta, opt)
	if err != nil {
		return nil, err
	}
	for _, t := range trace.Tables {
		tp := trace.TablePath(path, t)
		missing, err := b.readTable(tp, t)
		switch {
		case errors.Is(err, os.ErrNotExist):
			b.notes = append(b.notes, fmt.Sprintf("no %s table (%s): its panels are missing (written with --trace-select?)", t, filepath.Base(tp)))
			b.partial = true
		case errors.Is(err, errNoColumn):
			b.notes = append(b.notes, fmt.Sprintf("the %s table lacks columns its panels need (%v), so they are missing (written with --trace-select?)", t, err))
			b.partial = true
		case err != nil:
			return nil, err
		case len(missing) > 0:
			b.notes = append(b.notes, fmt.Sprintf("the %s table lacks the columns %s, so their series are missing (written with --trace-select?)", t, strings.Join(missing, ", ")))
			b.partial = true
		}
	}
	if err := b.missingFlows(); err != nil {
		return nil, err
	}
	return b, nil
}

// errNoColumn: a table file lacks a column the report needs.
var errNoColumn = errors.New("no column")

// colSpec names the columns read from a table: those without which it
// draws nothing, and those that feed one series each, which a
// --trace-select subset may leave out.
type colSpec struct{ need, opt []string }

var tableCols = map[string]colSpec{
	trace.TableFlows: {need: []string{"t_ps", "flow"}, opt: []string{"cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "srtt_ps",
		"min_rtt_ps", "pacing_rate_bps", "delivery_rate_bps", "delivered_pkts", "lost_pkts", "ca_state"}},
	trace.TableSignals:  {need: []string{"t_ps", "flow", "signal", "value"}},
	trace.TableEvents:   {need: []string{"t_ps", "flow", "kind"}},
	trace.TableDelivery: {need: []string{"t_ps", "flow", "bytes_delivered"}},
	trace.TableQueue: {need: []string{"t_ps", "link", "dir"},
		opt: []string{"backlog_bytes", "backlog_pkts", "sojourn_ps", "drops", "marks"}},
	trace.TableLink: {need: []string{"t_ps", "link", "dir", "rate_bps", "delay_ps"}},
}

// flowColHas maps the flows table's optional columns to the series they feed.
var flowColHas = map[string]rowHas{"cwnd_pkts": hasCwnd, "ssthresh_pkts": hasSSThresh, "inflight_pkts": hasInflight,
	"srtt_ps": hasSRTT, "min_rtt_ps": hasMinRTT, "pacing_rate_bps": hasPacing, "delivery_rate_bps": hasRate,
	"delivered_pkts": hasDelivered, "lost_pkts": hasLost, "ca_state": hasCA}

// queueColHas maps the queue table's optional columns to the series they feed.
var queueColHas = map[string]rowHas{"backlog_bytes": hasBytes, "backlog_pkts": hasPkts, "sojourn_ps": hasSojourn,
	"drops": hasDrops, "marks": hasMarks}

// column is the named optional column's value by row, or always zero when
// the file lacks it (the series it feeds is then left out).
func column[T any](get func(string) arrow.Array, name string) func(int) T {
	if a, ok := get(name).(interface{ Value(int) T }); ok {
		return a.Value
	}
	return func(int) T { var zero T; return zero }
}

// readTable feeds one table file to b and returns the optional columns it
// lacks.
func (b *Builder) readTable(path, table string) ([]string, error) {
	caIdx := map[string]uint8{}
	for i, n := range caNames {
		caIdx[n] = uint8(i)
	}
	kindIdx := map[string]trace.EventKind{}
	for i, n := range trace.EventKindNames {
		kindIdx[n] = trace.EventKind(i)
	}
	return eachRecord(path, tableCols[table], func(rec arrow.Record, at map[string]int) error {
		c := rec.Columns()
		ts := c[0].(*array.Int64).Int64Values()
		b.rows += int64(len(ts))
		var has rowHas
		col := func(name string, m map[string]rowHas) arrow.Array {
			if i, ok := at[name]; ok {
				has |= m[name]
				return c[i]
			}
			return nil
		}
		switch table {
		case trace.TableFlows:
			flow := c[1].(*array.String)
			opt := func(name string) arrow.Array { return col(name, flowColHas) }
			cwnd, ss, infl := column[uint32](opt, "cwnd_pkts"), column[uint32](opt, "ssthresh_pkts"), column[uint32](opt, "inflight_pkts")
			srtt, minRTT := column[int64](opt, "srtt_ps"), column[int64](opt, "min_rtt_ps")
			pacing, rate := column[int64](opt, "pacing_rate_bps"), column[int64](opt, "delivery_rate_bps")
			deliv, lost := column[uint64](opt, "delivered_pkts"), column[uint64](opt, "lost_pkts")
			ca := column[string](opt, "ca_state")
			for i, t := range ts {
				row := trace.FlowRow{T: sim.Time(t), CwndPkts: cwnd(i), SSThreshPkts: ss(i), InflightPkts: infl(i),
					SRTT: sim.Duration(srtt(i)), MinRTT: sim.Duration(minRTT(i)), PacingRateBps: pacing(i),
					DeliveryRateBps: rate(i), Delivered: deliv(i), Lost: lost(i), CAState: caIdx[ca(i)]}
				b.flow(flow.Value(i)).addRow(&row, has)
			}
		case trace.TableSignals:
			flow, sig, val := c[1].(*array.String), c[2].(*array.String), c[3].(*array.Float64)
			for i, t := range ts {
				b.flow(flow.Value(i)).addSignal(t, sig.Value(i), val.Value(i))
			}
		case trace.TableEvents:
			flow, kind := c[1].(*array.String), c[2].(*array.String)
			for i, t := range ts {
				if k, ok := kindIdx[kind.Value(i)]; ok {
					b.flow(flow.Value(i)).addEvent(t, k)
				}
			}
		case trace.TableDelivery:
			flow, d := c[1].(*array.String), c[2].(*array.Int64)
			for i, t := range ts {
				b.flow(flow.Value(i)).addDelivery(t, d.Value(i))
			}
		case trace.TableQueue:
			link, dir := c[1].(*array.String), c[2].(*array.String)
			opt := func(name string) arrow.Array { return col(name, queueColHas) }
			bytes, pkts, soj := column[int64](opt, "backlog_bytes"), column[int64](opt, "backlog_pkts"), column[int64](opt, "sojourn_ps")
			drops, marks := column[uint64](opt, "drops"), column[uint64](opt, "marks")
			for i, t := range ts {
				r := queueRow{bytes: bytes(i), pkts: pkts(i), sojournPs: soj(i), drops: drops(i), marks: marks(i)}
				b.queue(link.Value(i)+"/"+dir.Value(i)).add(t, r, has)
			}
		case trace.TableLink:
			link, dir := c[1].(*array.String), c[2].(*array.String)
			rate, delay := c[3].(*array.Int64), c[4].(*array.Int64)
			for i, t := range ts {
				b.queue(link.Value(i)+"/"+dir.Value(i)).addLink(t, rate.Value(i), delay.Value(i))
			}
		}
		return nil
	})
}

// eachRecord calls fn with every record batch of an Arrow IPC or Parquet
// table file, holding cols.need in that order and then those of cols.opt
// the file has; at gives each column's index in the batch by name. It
// returns the optional columns the file lacks; a needed one missing is an
// errNoColumn.
func eachRecord(path string, cols colSpec, fn func(rec arrow.Record, at map[string]int) error) (missing []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	wrap := func(err error) error { return fmt.Errorf("report: %s: %w", path, err) }
	var names []string // the columns read, in order
	at := map[string]int{}
	pick := func(sc *arrow.Schema) ([]int, error) {
		var idx []int
		for _, c := range cols.need {
			is := sc.FieldIndices(c)
			if len(is) != 1 {
				return nil, fmt.Errorf("%w %q", errNoColumn, c)
			}
			idx, names = append(idx, is[0]), append(names, c)
		}
		for _, c := range cols.opt {
			if is := sc.FieldIndices(c); len(is) == 1 {
				idx, names = append(idx, is[0]), append(names, c)
			} else {
				missing = append(missing, c)
			}
		}
		for i, n := range names {
			at[n] = i
		}
		return idx, nil
	}
	mem := memory.DefaultAllocator
	if filepath.Ext(path) == ".arrow" {
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			return nil, wrap(err)
		}
		defer r.Close()
		idx, err := pick(r.Schema())
		if err != nil {
			return nil, wrap(err)
		}
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				return nil, wrap(err)
			}
			if err := call(fn, project(rec, idx), at); err != nil {
				return nil, err
			}
		}
		return missing, nil
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, wrap(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, mem)
	if err != nil {
		return nil, wrap(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, wrap(err)
	}
	idx, err := pick(sc)
	if err != nil {
		return nil, wrap(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), idx, nil)
	if err != nil {
		return nil, wrap(err)
	}
	defer rr.Release()
	for rr.Next() {
		// GetRecordReader returns the columns in schema order; put them
		// in the order asked for.
		rec := rr.Record()
		got := rec.Schema()
		order := make([]int, len(names))
		for i, c := range names {
			order[i] = got.FieldIndices(c)[0]
		}
		if err := call(fn, project(rec, order), at); err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, wrap(err)
	}
	return missing, nil
}

// call runs fn on rec and releases it.
func call(fn func(arrow.Record, map[string]int) error, rec arrow.Record, at map[string]int) error {
	defer rec.Release()
	return fn(rec, at)
}

// project returns rec's columns idx as a record (sharing the arrays).
func project(rec arrow.Record, idx []int) arrow.Record {
	cols := make([]arrow.Array, len(idx))
	fields := make([]arrow.Field, len(idx))
	for i, j := range idx {
		cols[i], fields[i] = rec.Column(j), rec.Schema().Field(j)
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}
