package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/ccscope/ccscope/engine/trace"
)

// This file encodes the frames the server sends: responses, pushes and the
// Arrow-carrying frames, which are written straight into pooled buffers.

// response is a response frame.
type response struct {
	ID     any    `msgpack:"id"`
	OK     bool   `msgpack:"ok"`
	Result any    `msgpack:"result,omitempty"`
	Error  *Error `msgpack:"error,omitempty"`
}

// marshalResponse encodes a response as marshal does. A step's (the frame a
// learning loop gets every environment step) is appended to one buffer
// (hotstep.go), without an encoder or reflection; its result is never
// empty, so never left out.
func marshalResponse(r *response) ([]byte, error) {
	if r.OK && r.Error == nil {
		if b, ok := appendResponseHead(make([]byte, 0, stepResponseSize), r.ID); ok {
			if b, ok := appendStepResult(b, r.Result); ok {
				return b, nil
			}
		}
	}
	return marshal(r)
}

// marshal encodes a frame with the smallest integer encodings.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// framePool recycles push frame buffers: a push is megabytes, and a fresh
// buffer each time costs more in zeroing than the encoding itself.
var framePool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 32 << 20

func recycle(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooled {
		framePool.Put(b)
	}
}

// outFrame is a frame for the writer, or (closeCode set) the instruction
// to close the connection once the frames before it are written.
type outFrame struct {
	data      []byte
	pooled    *bytes.Buffer // holds data; recycled after the write
	closeCode int
	reason    string
}

// signalsFrame encodes the signals response, {id, ok, result: {rows,
// dropped_rows, arrow}}, as marshal would with the result's keys in that
// order (msgpack maps have none), writing the IPC stream straight into
// the frame. data is the frame's bytes within the pooled buffer.
func signalsFrame(id any, table string, recs []arrow.Record, rows, dropped int64) (frame *bytes.Buffer, data []byte, err error) {
	b := framePool.Get().(*bytes.Buffer)
	b.Reset()
	b.Grow(1<<10 + ipcBound(recs))
	enc := msgpack.NewEncoder(b)
	enc.UseCompactInts(true)
	for _, err := range []error{enc.EncodeMapLen(3), enc.EncodeString("id"), enc.Encode(id),
		enc.EncodeString("ok"), enc.EncodeBool(true), enc.EncodeString("result"), enc.EncodeMapLen(3),
		enc.EncodeString("rows"), enc.EncodeInt(rows), enc.EncodeString("dropped_rows"), enc.EncodeInt(dropped),
		enc.EncodeString("arrow")} {
		if err != nil {
			recycle(b)
			return nil, nil, err
		}
	}
	head := b.Len()
	if err := writeArrowBin(b, table, recs); err != nil {
		recycle(b)
		return nil, nil, err
	}
	return b, shrinkBin32(b.Bytes(), head), nil
}

// shrinkBin32 rewrites the bin32 header at frame[head:] in msgpack's
// smallest bin encoding, as EncodeBytes would write it, by moving the
// (short) bytes before it rather than the payload after it.
func shrinkBin32(frame []byte, head int) []byte {
	n := binary.BigEndian.Uint32(frame[head+1 : head+5])
	var hdr []byte
	switch {
	case n <= math.MaxUint8:
		hdr = []byte{msgpcode.Bin8, byte(n)}
	case n <= math.MaxUint16:
		hdr = []byte{msgpcode.Bin16, byte(n >> 8), byte(n)}
	default:
		return frame
	}
	shift := 5 - len(hdr)
	copy(frame[shift:head+shift], frame[:head])
	copy(frame[head+shift:head+5], hdr)
	return frame[shift:]
}

// arrowFrame encodes a data push, {stream, session, seq, arrow}, writing
// the Arrow IPC stream straight into the frame behind a bin32 header whose
// length is patched in afterwards: the payload is written once, not copied.
func (s *session) arrowFrame(table string, recs []arrow.Record) (*bytes.Buffer, error) {
	b := framePool.Get().(*bytes.Buffer)
	b.Reset()
	enc := msgpack.NewEncoder(b)
	enc.UseCompactInts(true)
	for _, err := range []error{enc.EncodeMapLen(4), enc.EncodeString("stream"), enc.EncodeString(table),
		enc.EncodeString("session"), enc.EncodeString(s.id), enc.EncodeString("seq"), enc.EncodeUint(s.seq),
		enc.EncodeString("arrow")} {
		if err != nil {
			recycle(b)
			return nil, err
		}
	}
	b.Grow(ipcBound(recs))
	if err := writeArrowBin(b, table, recs); err != nil {
		recycle(b)
		return nil, err
	}
	s.seq++
	return b, nil
}

// writeArrowBin writes the IPC stream of recs to b as a msgpack bin32:
// straight into b behind a header whose length is patched in afterwards,
// so the payload is written once, not copied.
func writeArrowBin(b *bytes.Buffer, table string, recs []arrow.Record) error {
	b.Write([]byte{msgpcode.Bin32, 0, 0, 0, 0})
	start := b.Len()
	if err := trace.WriteIPCStream(b, trace.Schema(table), recs...); err != nil {
		return err
	}
	n := b.Len() - start
	if uint64(n) > math.MaxUint32 {
		return fmt.Errorf("server: Arrow stream of %d bytes exceeds a msgpack bin", n)
	}
	binary.BigEndian.PutUint32(b.Bytes()[start-4:start], uint32(n))
	return nil
}

// push sends a push frame: fields plus session and seq.
func (s *session) push(fields map[string]any) bool {
	fields["session"] = s.id
	fields["seq"] = s.seq
	s.seq++
	b, err := marshal(fields)
	if err != nil {
		s.log.Error().Err(err).Msg("encoding a push")
		return false
	}
	return s.conn.send(b)
}
