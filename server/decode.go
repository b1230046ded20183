package server

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Request is a decoded request frame.
type Request struct {
	ID   any // uint64, or nil when the frame had no usable id
	Op   string
	Args map[string]any // every key but id and op
}

// maxDepth bounds nesting in a decoded frame: scenarios nest about six deep,
// and a bound keeps a hostile frame from recursing without end.
const maxDepth = 32

// DecodeRequest decodes one request frame. Values come back as nil, bool,
// int64, uint64, float64, string, []byte, []any and map[string]any. On
// failure the returned Request still carries the id when one could be read,
// so the error response can echo it.
func DecodeRequest(frame []byte) (Request, *Error) {
	v, err := decodeValue(frame)
	if err != nil {
		return Request{}, errorf(CodeBadRequest, "", "frame is not one msgpack value: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Request{}, errorf(CodeBadRequest, "", "frame is a msgpack %s, want a map", typeName(v))
	}
	var req Request
	switch id := m["id"].(type) {
	case int64:
		if id < 0 {
			return req, errorf(CodeBadRequest, "id", "id %d is negative", id)
		}
		req.ID = uint64(id)
	case uint64:
		req.ID = id
	case nil:
		return req, errorf(CodeBadRequest, "id", "request has no id")
	default:
		return req, errorf(CodeBadRequest, "id", "id is a %s, want a non-negative integer", typeName(id))
	}
	op, ok := m["op"].(string)
	if !ok {
		if m["op"] == nil {
			return req, errorf(CodeBadRequest, "op", "request has no op")
		}
		return req, errorf(CodeBadRequest, "op", "op is a %s, want a string", typeName(m["op"]))
	}
	req.Op = op
	delete(m, "id")
	delete(m, "op")
	req.Args = m
	return req, nil
}

// decodeValue decodes exactly one msgpack value filling all of b.
func decodeValue(b []byte) (any, error) {
	rd := bytes.NewReader(b)
	dec := msgpack.NewDecoder(rd)
	v, err := decodeAny(dec, rd, 0)
	if err != nil {
		return nil, err
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("%d bytes after the value", rd.Len())
	}
	return v, nil
}

// decodeAny decodes one value. Lengths are checked against the bytes left
// (every element takes at least one byte) before anything is allocated, so
// a short frame cannot claim a huge map.
func decodeAny(dec *msgpack.Decoder, rd *bytes.Reader, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	c, err := dec.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case c == msgpcode.Nil:
		return nil, dec.DecodeNil()
	case c == msgpcode.True || c == msgpcode.False:
		return dec.DecodeBool()
	case msgpcode.IsFixedNum(c) || c == msgpcode.Int8 || c == msgpcode.Int16 || c == msgpcode.Int32 || c == msgpcode.Int64:
		return dec.DecodeInt64()
	case c == msgpcode.Uint8 || c == msgpcode.Uint16 || c == msgpcode.Uint32 || c == msgpcode.Uint64:
		u, err := dec.DecodeUint64()
		if err != nil {
			return nil, err
		}
		if u <= math.MaxInt64 {
			return int64(u), nil
		}
		return u, nil
	case c == msgpcode.Float || c == msgpcode.Double:
		return dec.DecodeFloat64()
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		// The library allocates a bin's claimed length before reading it;
		// check the claim against the bytes left first.
		n, err := dec.DecodeBytesLen()
		if err != nil {
			return nil, err
		}
		if n > rd.Len() {
			return nil, fmt.Errorf("%d-byte string in %d bytes", n, rd.Len())
		}
		b := make([]byte, max(n, 0))
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		if msgpcode.IsBin(c) {
			return b, nil
		}
		return string(b), nil
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if n > rd.Len() {
			return nil, fmt.Errorf("array of %d elements in %d bytes", n, rd.Len())
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = decodeAny(dec, rd, depth+1); err != nil {
				return nil, err
			}
		}
		return a, nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := dec.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		if 2*n > rd.Len() {
			return nil, fmt.Errorf("map of %d entries in %d bytes", n, rd.Len())
		}
		m := make(map[string]any, n)
		for range n {
			kc, err := dec.PeekCode()
			if err != nil {
				return nil, err
			}
			if !msgpcode.IsString(kc) {
				return nil, fmt.Errorf("map key is not a string (msgpack code 0x%02x)", kc)
			}
			k, err := dec.DecodeString()
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("map key %q repeated", k)
			}
			if m[k], err = decodeAny(dec, rd, depth+1); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("unsupported msgpack code 0x%02x (extension types are not used)", c)
}

// typeName names a decoded value's type as the protocol spec does.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "bool"
	case int64, uint64:
		return "integer"
	case float64:
		return "float"
	case string:
		return "string"
	case []byte:
		return "bin"
	case []any:
		return "array"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
