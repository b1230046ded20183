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

	def  *opDef // the op's definition
	cost int64  // decodeCost of Args, held in the server's decode pool
	// step holds a step's arguments, read and checked, when the hot
	// reader (hotstep.go) read the request; Args is then nil.
	step *stepArgs
}

// maxDepth bounds nesting in a decoded frame: scenarios nest about six deep,
// and a bound keeps a hostile frame from recursing without end.
const maxDepth = 32

// The decoder charges every value it builds an estimate of the Go heap it
// occupies, and stops at a budget, so that a frame cannot make the server
// hold much more memory than the budget. The figures follow the runtime's
// structures on 64-bit platforms (Go 1.24+ maps: a header and groups of 8
// slots, each slot a string key and an interface value, with a control
// word per group; tables grow by powers of two at 7/8 load), rounded up.
// TestDecodeCostBoundsHeap checks them against runtime.MemStats.
const (
	costSlot   = 16       // an interface value in a slice
	costScalar = 16       // a boxed number (bools and nil are not boxed)
	costString = 24       // a boxed string header and slack, plus its bytes rounded to 8
	costArray  = 32       // a boxed slice header, plus a slot per element
	costMap    = 64       // a map header
	costGroup  = 8*32 + 8 // a group: 8 slots of key and value, and control
)

// roundUp8 is n rounded up to a multiple of 8: the smallest size classes.
func roundUp8(n int) int64 { return int64(n+7) &^ 7 }

// mapCost is the cost of a map of n entries, without its keys' bytes and
// values.
func mapCost(n int) int64 {
	if n == 0 {
		return costMap
	}
	if n <= 8 {
		return costMap + costGroup
	}
	slots := 8
	for slots*7/8 < n {
		slots *= 2
	}
	return 2*costMap + int64(slots/8)*costGroup
}

// maxCostPerByte bounds the cost one frame byte can add: a map of one
// entry with an empty key and a fixint value is 3 bytes and costs a slot,
// a map header, a group and a boxed scalar, 360.
const maxCostPerByte = 128

// decodeBound is the most decoding frame can cost under budget: what the
// server reserves before decoding it.
func decodeBound(frame []byte, budget int64) int64 {
	if n := int64(len(frame)); n < budget/maxCostPerByte {
		return max(n*maxCostPerByte, 1)
	}
	return budget
}

// DecodeRequest decodes one request frame with no cost budget (tests and
// tools; the server decodes with decodeRequest). Values come back as nil,
// bool, int64, uint64, float64, string, []byte, []any and map[string]any.
// On failure the returned Request still carries the id when one could be
// read, so the error response can echo it.
func DecodeRequest(frame []byte) (Request, *Error) {
	return decodeRequest(frame, math.MaxInt64)
}

// decodeRequest decodes a request in two passes. The first reads id and op
// and only steps over the other values; the op's definition then says which
// argument keys exist, and an unknown key is refused before its value is
// built. The second builds the arguments, charging each value's heap
// estimate against budget: beyond it the frame is refused as too_large.
func decodeRequest(frame []byte, budget int64) (Request, *Error) {
	var req Request
	d := newDecoder(frame, math.MaxInt64)
	keys, err := d.topKeys()
	if err != nil {
		// The id, when read before what broke the frame, goes back with
		// the error, so a client that pipelines can tell which failed.
		for _, k := range keys {
			if k.name == "id" {
				d.reset(frame[k.at:k.end])
				switch id, _ := d.value(1, false); id := id.(type) {
				case int64:
					if id >= 0 {
						req.ID = uint64(id)
					}
				case uint64:
					req.ID = id
				}
			}
		}
		return req, errorf(CodeBadRequest, "", "frame is not one msgpack map: %v", err)
	}
	var idV, opV any
	for _, k := range keys {
		if k.name == "id" || k.name == "op" {
			d.reset(frame[k.at:k.end])
			v, _ := d.value(1, false)
			if k.name == "id" {
				idV = v
			} else {
				opV = v
			}
		}
	}
	switch id := idV.(type) {
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
		return req, errorf(CodeBadRequest, "id", "id is %s, want a non-negative integer", typeName(id))
	}
	op, ok := opV.(string)
	if !ok {
		if opV == nil {
			return req, errorf(CodeBadRequest, "op", "request has no op")
		}
		return req, errorf(CodeBadRequest, "op", "op is %s, want a string", typeName(opV))
	}
	req.Op = op
	if req.def = lookupOp(op); req.def == nil {
		return req, errorf(CodeUnknownOp, "op", "unknown op %q", op)
	}
	for _, k := range keys {
		if k.name != "id" && k.name != "op" && !req.def.takes(k.name) {
			return req, errorf(CodeBadArgs, k.name, "unknown argument %s for %s (known: %s)", k.name, op, req.def.argNames())
		}
	}
	req.Args = make(map[string]any, len(keys))
	d.budget, d.cost = budget, mapCost(len(keys))
	for _, k := range keys {
		if k.name == "id" || k.name == "op" {
			continue
		}
		d.reset(frame[k.at:k.end])
		v, err := d.value(1, false)
		if err == errBudget {
			return req, errorf(CodeTooLarge, k.name, "%s decodes to more than the server's budget of %d bytes per message", k.name, budget)
		}
		if err != nil {
			return req, errorf(CodeBadRequest, k.name, "%s: %v", k.name, err)
		}
		d.cost += roundUp8(len(k.name))
		req.Args[k.name] = v
	}
	req.cost = d.cost
	return req, nil
}

// topKey is a key of the frame's top-level map and where its value lies.
type topKey struct {
	name    string
	at, end int
}

// topKeys reads the frame's top-level map, stepping over the values.
func (d *decoder) topKeys() ([]topKey, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if !msgpcode.IsFixedMap(c) && c != msgpcode.Map16 && c != msgpcode.Map32 {
		return nil, fmt.Errorf("a value of msgpack code 0x%02x, want a map", c)
	}
	n, err := d.dec.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	if 2*n > d.rd.Len() {
		return nil, fmt.Errorf("map of %d entries in %d bytes", n, d.rd.Len())
	}
	keys := make([]topKey, 0, n)
	for range n {
		k, err := d.key()
		if err != nil {
			return keys, err
		}
		for _, o := range keys {
			if o.name == k {
				return keys, fmt.Errorf("map key %q repeated", k)
			}
		}
		at := d.offset()
		end, err := skipValue(d.frame, at, 1)
		if err != nil {
			return keys, err
		}
		if _, err := d.rd.Seek(int64(end), io.SeekStart); err != nil {
			return keys, err
		}
		keys = append(keys, topKey{name: k, at: at, end: end})
	}
	if d.rd.Len() != 0 {
		return keys, fmt.Errorf("%d bytes after the value", d.rd.Len())
	}
	return keys, nil
}

// errBudget is a frame's decoded values exceeding the cost budget.
var errBudget = fmt.Errorf("server: decoded value over budget")

// decoder reads msgpack values out of one frame, charging what it builds.
type decoder struct {
	frame  []byte // the whole frame
	cur    []byte // the slice rd reads
	rd     *bytes.Reader
	dec    *msgpack.Decoder
	cost   int64
	budget int64
}

func newDecoder(frame []byte, budget int64) *decoder {
	rd := bytes.NewReader(frame)
	return &decoder{frame: frame, cur: frame, rd: rd, dec: msgpack.NewDecoder(rd), budget: budget}
}

// reset makes d read b, a part of its frame.
func (d *decoder) reset(b []byte) {
	d.cur = b
	d.rd.Reset(b)
}

// offset is the position in the reader's current slice.
func (d *decoder) offset() int { return int(d.rd.Size()) - d.rd.Len() }

func (d *decoder) charge(n int64) error {
	d.cost += n
	if d.cost > d.budget {
		return errBudget
	}
	return nil
}

// decodeValue decodes exactly one msgpack value filling all of b, with no
// cost budget.
func decodeValue(b []byte) (any, error) {
	d := newDecoder(b, math.MaxInt64)
	v, err := d.value(0, false)
	if err != nil {
		return nil, err
	}
	if d.rd.Len() != 0 {
		return nil, fmt.Errorf("%d bytes after the value", d.rd.Len())
	}
	return v, nil
}

// key reads a map key, which must be a string.
func (d *decoder) key() (string, error) {
	kc, err := d.dec.PeekCode()
	if err != nil {
		return "", err
	}
	if !msgpcode.IsString(kc) {
		return "", fmt.Errorf("map key is not a string (msgpack code 0x%02x)", kc)
	}
	n, err := d.dec.DecodeBytesLen()
	if err != nil {
		return "", err
	}
	if n > d.rd.Len() {
		return "", fmt.Errorf("%d-byte string in %d bytes", n, d.rd.Len())
	}
	b := make([]byte, max(n, 0))
	if _, err := io.ReadFull(d.rd, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// value decodes one value, or with skip only steps over it (checking its
// shape and depth, building nothing). Lengths are checked against the bytes
// left (every element takes at least one byte) before anything is
// allocated, so a short frame cannot claim a huge map; and every value is
// charged before it is built.
func (d *decoder) value(depth int, skip bool) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	scalar := func(v any, err error) (any, error) {
		if err == nil && !skip {
			err = d.charge(costScalar)
		}
		return v, err
	}
	switch {
	case c == msgpcode.Nil:
		return scalar(nil, d.dec.DecodeNil())
	case c == msgpcode.True || c == msgpcode.False:
		return scalar(d.dec.DecodeBool())
	case msgpcode.IsFixedNum(c) || c == msgpcode.Int8 || c == msgpcode.Int16 || c == msgpcode.Int32 || c == msgpcode.Int64:
		return scalar(d.dec.DecodeInt64())
	case c == msgpcode.Uint8 || c == msgpcode.Uint16 || c == msgpcode.Uint32 || c == msgpcode.Uint64:
		u, err := d.dec.DecodeUint64()
		if err != nil {
			return nil, err
		}
		if u <= math.MaxInt64 {
			return scalar(int64(u), nil)
		}
		return scalar(u, nil)
	case c == msgpcode.Float || c == msgpcode.Double:
		return scalar(d.dec.DecodeFloat64())
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		// The library allocates a bin's claimed length before reading it;
		// check the claim against the bytes left first.
		n, err := d.dec.DecodeBytesLen()
		if err != nil {
			return nil, err
		}
		if n > d.rd.Len() {
			return nil, fmt.Errorf("%d-byte string in %d bytes", n, d.rd.Len())
		}
		n = max(n, 0)
		if skip {
			_, err := d.rd.Seek(int64(n), io.SeekCurrent)
			return nil, err
		}
		if err := d.charge(costString + roundUp8(n)); err != nil {
			return nil, err
		}
		at := d.offset()
		if _, err := d.rd.Seek(int64(n), io.SeekCurrent); err != nil {
			return nil, err
		}
		if msgpcode.IsBin(c) {
			return bytes.Clone(d.cur[at : at+n]), nil
		}
		return string(d.cur[at : at+n]), nil
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := d.dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if n > d.rd.Len() {
			return nil, fmt.Errorf("array of %d elements in %d bytes", n, d.rd.Len())
		}
		n = max(n, 0)
		if skip {
			for range n {
				if _, err := d.value(depth+1, true); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
		if err := d.charge(costArray + costSlot*int64(n)); err != nil {
			return nil, err
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = d.value(depth+1, false); err != nil {
				return nil, err
			}
		}
		return a, nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := d.dec.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		if 2*n > d.rd.Len() {
			return nil, fmt.Errorf("map of %d entries in %d bytes", n, d.rd.Len())
		}
		n = max(n, 0)
		if skip {
			for range n {
				if _, err := d.key(); err != nil {
					return nil, err
				}
				if _, err := d.value(depth+1, true); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
		if err := d.charge(mapCost(n)); err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := d.key()
			if err != nil {
				return nil, err
			}
			if err := d.charge(roundUp8(len(k))); err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("map key %q repeated", k)
			}
			if m[k], err = d.value(depth+1, false); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("unsupported msgpack code 0x%02x (extension types are not used)", c)
}

// typeName names a decoded value's type as the protocol spec does, with
// its article ("an integer").
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "a bool"
	case int64, uint64:
		return "an integer"
	case float64:
		return "a float"
	case string:
		return "a string"
	case []byte:
		return "a bin"
	case []any:
		return "an array"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("a %T", v)
}
