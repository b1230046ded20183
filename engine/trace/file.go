package trace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// FileSink is a Sink that writes every table to its own file, because an
// Arrow or Parquet file holds one schema. Given "out/run.parquet" it writes
//
//	out/run.queue.parquet out/run.delivery.parquet out/run.flows.parquet
//	out/run.signals.parquet out/run.events.parquet
//
// and likewise for ".arrow" (Arrow IPC files, which are Feather v2:
// pyarrow.ipc.open_file, pandas.read_feather, polars.read_ipc). Sibling files
// rather than a directory: each is an ordinary file any reader opens by
// name, where a directory named like a file would look to pandas and polars
// like one dataset with one schema. All six files are created up front and
// always exist after Close, a table that got no rows holding just its
// schema, so notebooks need not test for them. Each flush becomes one Arrow
// record batch or one Parquet row group.
//
// Encoding and writing run on one goroutine of the sink's own, beside the
// simulation: Flush builds the record batch over the table's columns as
// they are, takes those columns from the recorder (giving it spare ones the
// writer has finished with) and queues the batch. The run itself stays
// single-threaded and its digest unchanged; on two cores a traced run then
// costs little more wall time than an untraced one. At most writeQueue
// flushes wait, so memory stays bounded by a few flushes per sink.
type FileSink struct {
	paths   [len(Tables)]string
	writers [len(Tables)]tableWriter
	mem     memory.Allocator
	sel     Selection
	dict    bool // writers take string columns as dictionary arrays

	jobs   chan writeJob               // flushes queued for the writer
	spares [len(Tables)]chan *tableSet // column storage the writer is done with
	done   chan struct{}               // closed when the writer has ended

	mu     sync.Mutex
	err    error // sticky first error, from either goroutine
	closed bool
}

// writeQueue is how many flushes may wait for the writer before Flush
// blocks: enough to ride out a slow write, few enough to bound memory.
const writeQueue = 2

// writeJob is one flush on its way to the writer: the batch and the column
// storage it borrows, returned to the spares once written.
type writeJob struct {
	table int
	rec   arrow.Record
	cols  *tableSet
}

// tableWriter appends record batches to one table's file.
type tableWriter interface {
	write(rec arrow.Record) error
	close() error
}

// FileOption configures a FileSink.
type FileOption func(*FileSink)

// WithAllocator sets the allocator for record batches and writer buffers
// (default memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) FileOption {
	return func(s *FileSink) { s.mem = mem }
}

// TablePath is the file a FileSink given path writes table to: the table
// name inserted before the extension.
func TablePath(path, table string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + table + ext
}

// WithSelection writes only the tables and columns sel picks (default:
// everything). The recorder of a run does not record a table left out.
func WithSelection(sel Selection) FileOption {
	return func(s *FileSink) { s.sel = sel }
}

// NewFileSink creates the six table files for path, whose extension
// chooses the format: ".arrow" (Arrow IPC file) or ".parquet" (Parquet,
// Snappy-compressed).
func NewFileSink(path string, opts ...FileOption) (*FileSink, error) {
	s := &FileSink{mem: memory.DefaultAllocator, jobs: make(chan writeJob, writeQueue), done: make(chan struct{})}
	for i := range s.spares {
		s.spares[i] = make(chan *tableSet, writeQueue+1)
	}
	for _, o := range opts {
		o(s)
	}
	var open func(f *os.File, schema *arrow.Schema) (tableWriter, error)
	switch ext := filepath.Ext(path); ext {
	case ".arrow":
		open = s.openIPC
	case ".parquet":
		open, s.dict = s.openParquet, true
	default:
		return nil, fmt.Errorf("trace: file sink %q: extension %q is neither .arrow nor .parquet", path, ext)
	}
	for i, table := range Tables {
		if !s.sel.wants(i) {
			continue
		}
		s.paths[i] = TablePath(path, table)
		f, err := os.Create(s.paths[i])
		if err == nil {
			s.writers[i], err = open(f, s.sel.schema(i))
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			s.closed = true
			return nil, errors.Join(fmt.Errorf("trace: file sink: %w", err), s.closeWriters())
		}
	}
	go s.write()
	return s, nil
}

// Paths are the files the sink writes, in the order of Tables: all six,
// or those of the tables its selection picks.
func (s *FileSink) Paths() []string {
	var paths []string
	for _, p := range s.paths {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// wants reports whether the sink writes table Tables[i]; the recorder asks.
func (s *FileSink) wants(i int) bool { return s.sel.wants(i) }

// Flush queues the recorder's table for its file. It returns the sink's
// first error so far: a write that fails is reported by a later Flush, and
// by Close.
func (s *FileSink) Flush(r *Recorder, table string) error {
	if err := s.Err(); err != nil {
		return err
	}
	if s.closed {
		return fmt.Errorf("trace: file sink: flush of %s after Close", table)
	}
	i := tableIndex(table)
	if i < 0 {
		return s.fail(fmt.Errorf("trace: file sink: no table %q", table))
	}
	if !s.wants(i) {
		return nil
	}
	rec, err := r.batch(table, s.mem, Filter{}, s.dict)
	if err != nil {
		return s.fail(fmt.Errorf("trace: file sink: %w", err))
	}
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	var cols *tableSet
	select {
	case cols = <-s.spares[i]:
	default:
		cols = new(tableSet)
	}
	// The batch may borrow the table's columns: the writer owns them now.
	r.swapTable(i, cols)
	out := s.sel.project(i, rec)
	rec.Release()
	s.jobs <- writeJob{table: i, rec: out, cols: cols}
	return nil
}

// write is the writer goroutine: it writes queued batches in order and
// hands their column storage back as spares. After an error it only
// releases what it is sent.
func (s *FileSink) write() {
	defer close(s.done)
	for job := range s.jobs {
		if s.Err() == nil {
			if err := s.writers[job.table].write(job.rec); err != nil {
				s.fail(fmt.Errorf("trace: file sink: %s: %w", s.paths[job.table], err))
			}
		}
		job.rec.Release()
		job.cols.reset(job.table)
		select {
		case s.spares[job.table] <- job.cols:
		default:
		}
	}
}

// Err is the sink's first error so far.
func (s *FileSink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close waits for the queued flushes, finalises every file (footers,
// buffers) and returns the sink's first error, from a flush, a write or
// closing. Calling it again returns that error.
func (s *FileSink) Close() error {
	if !s.closed {
		s.closed = true
		close(s.jobs)
		<-s.done
		if err := s.closeWriters(); err != nil {
			s.fail(fmt.Errorf("trace: file sink: %w", err))
		}
	}
	return s.Err()
}

// closeWriters closes every open writer, even after one fails, and returns
// the first error.
func (s *FileSink) closeWriters() error {
	var first error
	for i, w := range s.writers {
		if w == nil {
			continue
		}
		if err := w.close(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s.paths[i], err)
		}
		s.writers[i] = nil
	}
	return first
}

func (s *FileSink) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	return s.err
}

func tableIndex(table string) int {
	for i, t := range Tables {
		if t == table {
			return i
		}
	}
	return -1
}

// ipcFile writes an Arrow IPC file. The IPC writer issues one large write
// per buffer, so the file is not buffered further.
type ipcFile struct {
	f *os.File
	w *ipc.FileWriter
}

func (s *FileSink) openIPC(f *os.File, schema *arrow.Schema) (tableWriter, error) {
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	if err != nil {
		return nil, err
	}
	return &ipcFile{f: f, w: w}, nil
}

func (p *ipcFile) write(rec arrow.Record) error { return p.w.Write(rec) }

func (p *ipcFile) close() error {
	return errors.Join(p.w.Close(), p.f.Close())
}

// parquetFile writes a Parquet file, one row group per record batch. The
// buffer also catches footer write errors, which pqarrow's Close in arrow
// v17 drops (file.Writer.Close overwrites FlushWithFooter's error): they
// resurface on the buffer's Flush.
type parquetFile struct {
	f  *os.File
	bw *bufio.Writer
	w  *pqarrow.FileWriter
}

func (s *FileSink) openParquet(f *os.File, schema *arrow.Schema) (tableWriter, error) {
	bw := bufio.NewWriterSize(f, 1<<20)
	// Dictionary encoding only for the string columns: it suits their few
	// distinct names, while on numbers (unique times, counters) the Go
	// encoder spends most of the write hashing and boxing values for
	// dictionaries it then abandons. No statistics for the string columns:
	// they would cost a hash of every row's index per page. 64 KiB pages
	// rather than the default 1 MiB: a flush's column then spans several
	// pages and the writer reuses its page buffers, where with one page per
	// column chunk it allocated them afresh for every flush (in a 60 s
	// dumbbell-1g trace, 3.5 GB of garbage instead of 11 GB; 32 KiB gains
	// no more). Timestamps, which only grow, are DELTA_BINARY_PACKED: the
	// 60 s trace's files shrink 321 -> 120 MB. Not the other integers:
	// arrow-go's delta encoder goes through reflection per value, and on
	// every integer column it made the writer the run's largest cost
	// (6.1 of 14.5 CPU-s) for files of 18 MB.
	pp := []parquet.WriterProperty{parquet.WithAllocator(s.mem), parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(64 << 10)}
	for _, fd := range schema.Fields() {
		if fd.Name == "t_ps" {
			pp = append(pp, parquet.WithEncodingFor(fd.Name, parquet.Encodings.DeltaBinaryPacked))
		}
		if fd.Type.ID() == arrow.STRING {
			pp = append(pp, parquet.WithDictionaryFor(fd.Name, true), parquet.WithStatsFor(fd.Name, false))
		}
	}
	props := parquet.NewWriterProperties(pp...)
	// Storing the Arrow schema lets readers restore it exactly, metadata
	// included.
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(s.mem), pqarrow.WithStoreSchema())
	w, err := pqarrow.NewFileWriter(schema, bw, props, aprops)
	if err != nil {
		return nil, err
	}
	return &parquetFile{f: f, bw: bw, w: w}, nil
}

// write stores rec as one row group. Its string columns are dictionary
// arrays (see Recorder.batch): their column chunks are dictionary-encoded
// from the indices as given, while the file's schema — and what readers
// get back — stays plain utf8. (pqarrow's Write would insist on the
// writer's schema; column by column it takes the dictionary arrays.)
func (p *parquetFile) write(rec arrow.Record) error {
	p.w.NewRowGroup()
	for _, col := range rec.Columns() {
		if err := p.w.WriteColumnData(col); err != nil {
			return err
		}
	}
	return nil
}

func (p *parquetFile) close() error {
	return errors.Join(p.w.Close(), p.bw.Flush(), p.f.Close())
}
