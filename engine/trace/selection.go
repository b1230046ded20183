package trace

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Selection picks the tables, and within a table the columns, that a
// FileSink writes. The zero Selection writes everything. A table left out
// is not recorded at all, which saves the run its recording cost as well
// as the encoding; a table cut to some columns keeps its key columns too
// (t_ps, and flow, link and dir, or signal), so every row still says when
// and what it is.
type Selection struct {
	set  bool
	cols [len(Tables)][]int // per table: the columns kept, in schema order; nil: the table is left out
}

// keyColumns are the columns a table keeps under any column selection.
var keyColumns = map[string]bool{"t_ps": true, "flow": true, "link": true, "dir": true, "signal": true}

// ParseSelection reads a selection from items of the form "table" (every
// column of it) or "table.column", as `ccscope run --trace-select` takes
// them. An empty list selects everything. An unknown table or column is an
// error that names it and lists what there is.
func ParseSelection(items []string) (Selection, error) {
	var s Selection
	if len(items) == 0 {
		return s, nil
	}
	s.set = true
	var whole [len(Tables)]bool
	var picked [len(Tables)]map[int]bool
	for _, item := range items {
		item = strings.TrimSpace(item)
		table, col, hasCol := strings.Cut(item, ".")
		i := tableIndex(table)
		if i < 0 {
			return Selection{}, fmt.Errorf("trace: selection %q: no table %q (tables: %s)", item, table, strings.Join(Tables[:], ", "))
		}
		if !hasCol {
			whole[i] = true
			continue
		}
		schema := Schema(table)
		c := schema.FieldIndices(col)
		if len(c) != 1 {
			names := make([]string, 0, schema.NumFields())
			for _, f := range schema.Fields() {
				names = append(names, f.Name)
			}
			return Selection{}, fmt.Errorf("trace: selection %q: table %s has no column %q (columns: %s)", item, table, col, strings.Join(names, ", "))
		}
		if picked[i] == nil {
			picked[i] = map[int]bool{}
		}
		picked[i][c[0]] = true
	}
	for i, table := range Tables {
		if !whole[i] && picked[i] == nil {
			continue
		}
		fields := Schema(table).Fields()
		s.cols[i] = make([]int, 0, len(fields))
		for c, f := range fields {
			if whole[i] || picked[i][c] || keyColumns[f.Name] {
				s.cols[i] = append(s.cols[i], c)
			}
		}
	}
	return s, nil
}

// wants reports whether table Tables[i] is written at all.
func (s *Selection) wants(i int) bool { return !s.set || s.cols[i] != nil }

// schema is the schema of table Tables[i] as written under s.
func (s *Selection) schema(i int) *arrow.Schema {
	full := Schema(Tables[i])
	if !s.set || len(s.cols[i]) == full.NumFields() {
		return full
	}
	fields := make([]arrow.Field, len(s.cols[i]))
	for k, c := range s.cols[i] {
		fields[k] = full.Field(c)
	}
	md := full.Metadata()
	return arrow.NewSchema(fields, &md)
}

// project returns rec cut to the selected columns of table Tables[i]
// (rec itself, retained, when nothing is cut). The caller releases it.
func (s *Selection) project(i int, rec arrow.Record) arrow.Record {
	if !s.set || len(s.cols[i]) == int(rec.NumCols()) {
		rec.Retain()
		return rec
	}
	fields := make([]arrow.Field, len(s.cols[i]))
	cols := make([]arrow.Array, len(s.cols[i]))
	for k, c := range s.cols[i] {
		fields[k], cols[k] = rec.Schema().Field(c), rec.Column(c)
	}
	md := rec.Schema().Metadata()
	return array.NewRecord(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}
