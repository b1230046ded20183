package server

import (
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

var errShort = fmt.Errorf("frame ends inside a value")

// skipValue steps over the msgpack value at b[i:] without building it and
// returns the index after it. It reads the bytes directly: the first pass
// over a frame steps over megabytes of values nobody asked for, and must
// cost little more than reading them. Lengths are checked against the
// bytes left and nesting against maxDepth, as decoder.value does; repeated
// map keys are left to it, as every value a request keeps is decoded.
func skipValue(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if i >= len(b) {
		return 0, errShort
	}
	c := b[i]
	i++
	var (
		n       int  // payload bytes, or elements
		lenSize int  // bytes of an explicit length before the payload
		elems   bool // n counts values (arrays), or entries (maps)
		isMap   bool
	)
	switch {
	case msgpcode.IsFixedNum(c), c == msgpcode.Nil, c == msgpcode.True, c == msgpcode.False:
	case c == msgpcode.Uint8 || c == msgpcode.Int8:
		n = 1
	case c == msgpcode.Uint16 || c == msgpcode.Int16:
		n = 2
	case c == msgpcode.Uint32 || c == msgpcode.Int32 || c == msgpcode.Float:
		n = 4
	case c == msgpcode.Uint64 || c == msgpcode.Int64 || c == msgpcode.Double:
		n = 8
	case msgpcode.IsFixedString(c):
		n = int(c & msgpcode.FixedStrMask)
	case c == msgpcode.Str8 || c == msgpcode.Bin8:
		lenSize = 1
	case c == msgpcode.Str16 || c == msgpcode.Bin16:
		lenSize = 2
	case c == msgpcode.Str32 || c == msgpcode.Bin32:
		lenSize = 4
	case msgpcode.IsFixedArray(c):
		n, elems = int(c&msgpcode.FixedArrayMask), true
	case c == msgpcode.Array16:
		lenSize, elems = 2, true
	case c == msgpcode.Array32:
		lenSize, elems = 4, true
	case msgpcode.IsFixedMap(c):
		n, elems, isMap = int(c&msgpcode.FixedMapMask), true, true
	case c == msgpcode.Map16:
		lenSize, elems, isMap = 2, true, true
	case c == msgpcode.Map32:
		lenSize, elems, isMap = 4, true, true
	default:
		return 0, fmt.Errorf("unsupported msgpack code 0x%02x (extension types are not used)", c)
	}
	if lenSize > 0 {
		if len(b)-i < lenSize {
			return 0, errShort
		}
		switch lenSize {
		case 1:
			n = int(b[i])
		case 2:
			n = int(binary.BigEndian.Uint16(b[i:]))
		case 4:
			n = int(binary.BigEndian.Uint32(b[i:]))
		}
		i += lenSize
	}
	left := len(b) - i
	if !elems {
		if n > left {
			return 0, fmt.Errorf("%d-byte value in %d bytes", n, left)
		}
		return i + n, nil
	}
	values := n
	if isMap {
		values = 2 * n
	}
	if values > left {
		return 0, fmt.Errorf("%d elements in %d bytes", values, left)
	}
	var err error
	for k := range values {
		if i >= len(b) {
			return 0, errShort
		}
		if isMap && k%2 == 0 && !msgpcode.IsString(b[i]) {
			return 0, fmt.Errorf("map key is not a string (msgpack code 0x%02x)", b[i])
		}
		if oneByte[b[i]] {
			i++
			continue
		}
		if i, err = skipValue(b, i, depth+1); err != nil {
			return 0, err
		}
	}
	return i, nil
}

// oneByte marks the codes that are a whole value by themselves: fixints,
// nil, booleans, and empty fixstr, fixarray and fixmap.
var oneByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c <= 0x7f || c >= 0xe0
	}
	for _, c := range []byte{msgpcode.Nil, msgpcode.True, msgpcode.False, msgpcode.FixedStrLow, msgpcode.FixedArrayLow, msgpcode.FixedMapLow} {
		t[c] = true
	}
	return t
}()
