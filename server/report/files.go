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
	path, err := ResolveTrace(prefix)
	if err != nil {
		return nil, err
	}
	meta := Meta{Source: "trace files " + path}
	if raw, err := os.ReadFile(RunInfoPath(path)); err == nil {
		var info RunInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("report: %s: %w", RunInfoPath(path), err)
		}
		m := MetaFromSummary(&info.Summary)
		m.Config, m.Detail, m.Source = info.Config, info.Detail, meta.Source
		meta = m
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("report: %w", err)
	}
	if meta.HorizonPs <= 0 {
		// No summary: one pass over the time columns finds the span.
		for _, t := range trace.Tables {
			err := eachRecord(trace.TablePath(path, t), []string{"t_ps"}, func(rec arrow.Record) error {
				ts := rec.Column(0).(*array.Int64).Int64Values()
				if len(ts) > 0 {
					meta.HorizonPs = max(meta.HorizonPs, ts[len(ts)-1]+1)
				}
				return nil
			})
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
	}
	b, err := New(meta, opt)
	if err != nil {
		return nil, err
	}
	for _, t := range trace.Tables {
		tp := trace.TablePath(path, t)
		err := b.readTable(tp, t)
		switch {
		case errors.Is(err, os.ErrNotExist):
			b.notes = append(b.notes, fmt.Sprintf("no %s table (%s): its panels are missing (written with --trace-select?)", t, filepath.Base(tp)))
		case errors.Is(err, errNoColumn):
			b.notes = append(b.notes, fmt.Sprintf("the %s table lacks columns the report draws (%v), so its panels are missing (written with --trace-select?)", t, err))
		case err != nil:
			return nil, err
		}
	}
	return b, nil
}

// errNoColumn: a table file lacks a column the report needs.
var errNoColumn = errors.New("no column")

var tableCols = map[string][]string{
	trace.TableFlows: {"t_ps", "flow", "cwnd_pkts", "ssthresh_pkts", "inflight_pkts", "srtt_ps", "min_rtt_ps",
		"pacing_rate_bps", "delivery_rate_bps", "delivered_pkts", "lost_pkts", "ca_state"},
	trace.TableSignals:  {"t_ps", "flow", "signal", "value"},
	trace.TableEvents:   {"t_ps", "flow", "kind"},
	trace.TableDelivery: {"t_ps", "flow", "bytes_delivered"},
	trace.TableQueue:    {"t_ps", "link", "dir", "backlog_bytes", "backlog_pkts", "sojourn_ps", "drops", "marks"},
	trace.TableLink:     {"t_ps", "link", "dir", "rate_bps", "delay_ps"},
}

// readTable feeds one table file to b.
func (b *Builder) readTable(path, table string) error {
	caIdx := map[string]uint8{}
	for i, n := range caNames {
		caIdx[n] = uint8(i)
	}
	kindIdx := map[string]trace.EventKind{}
	for i, n := range trace.EventKindNames {
		kindIdx[n] = trace.EventKind(i)
	}
	return eachRecord(path, tableCols[table], func(rec arrow.Record) error {
		c := rec.Columns()
		ts := c[0].(*array.Int64).Int64Values()
		b.rows += int64(len(ts))
		switch table {
		case trace.TableFlows:
			flow := c[1].(*array.String)
			cwnd, ss, infl := c[2].(*array.Uint32), c[3].(*array.Uint32), c[4].(*array.Uint32)
			srtt, minRTT := c[5].(*array.Int64), c[6].(*array.Int64)
			pacing, rate := c[7].(*array.Int64), c[8].(*array.Int64)
			deliv, lost, ca := c[9].(*array.Uint64), c[10].(*array.Uint64), c[11].(*array.String)
			for i, t := range ts {
				row := trace.FlowRow{T: sim.Time(t), CwndPkts: cwnd.Value(i), SSThreshPkts: ss.Value(i),
					InflightPkts: infl.Value(i), SRTT: sim.Duration(srtt.Value(i)), MinRTT: sim.Duration(minRTT.Value(i)),
					PacingRateBps: pacing.Value(i), DeliveryRateBps: rate.Value(i), Delivered: deliv.Value(i),
					Lost: lost.Value(i), CAState: caIdx[ca.Value(i)]}
				b.flow(flow.Value(i)).addRow(&row)
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
			bytes, pkts, soj := c[3].(*array.Int64), c[4].(*array.Int64), c[5].(*array.Int64)
			drops, marks := c[6].(*array.Uint64), c[7].(*array.Uint64)
			for i, t := range ts {
				b.queue(link.Value(i)+"/"+dir.Value(i)).add(t, bytes.Value(i), pkts.Value(i), soj.Value(i), drops.Value(i), marks.Value(i))
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
// table file, holding only the named columns in that order.
func eachRecord(path string, cols []string, fn func(arrow.Record) error) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	wrap := func(err error) error { return fmt.Errorf("report: %s: %w", path, err) }
	pick := func(sc *arrow.Schema) ([]int, error) {
		idx := make([]int, len(cols))
		for i, c := range cols {
			is := sc.FieldIndices(c)
			if len(is) != 1 {
				return nil, fmt.Errorf("%w %q", errNoColumn, c)
			}
			idx[i] = is[0]
		}
		return idx, nil
	}
	mem := memory.DefaultAllocator
	if filepath.Ext(path) == ".arrow" {
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			return wrap(err)
		}
		defer r.Close()
		idx, err := pick(r.Schema())
		if err != nil {
			return wrap(err)
		}
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				return wrap(err)
			}
			if err := call(fn, project(rec, idx)); err != nil {
				return err
			}
		}
		return nil
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return wrap(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, mem)
	if err != nil {
		return wrap(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return wrap(err)
	}
	idx, err := pick(sc)
	if err != nil {
		return wrap(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), idx, nil)
	if err != nil {
		return wrap(err)
	}
	defer rr.Release()
	for rr.Next() {
		// GetRecordReader returns the columns in schema order; put them
		// in the order asked for.
		rec := rr.Record()
		got := rec.Schema()
		order := make([]int, len(cols))
		for i, c := range cols {
			order[i] = got.FieldIndices(c)[0]
		}
		if err := call(fn, project(rec, order)); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return wrap(err)
	}
	return nil
}

// call runs fn on rec and releases it.
func call(fn func(arrow.Record) error, rec arrow.Record) error {
	defer rec.Release()
	return fn(rec)
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
