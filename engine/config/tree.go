package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeTree parses JSON into a generic tree of map[string]any, []any,
// json.Number, string, bool and nil. Numbers stay json.Number so that large
// integers (seeds, picoseconds) are exact. Unlike json.Unmarshal it rejects
// duplicate keys, which would otherwise silently keep the last value, and
// text that is not Unicode (bytes that are not UTF-8, a \u escape of half
// a surrogate pair), which encoding/json would silently read as U+FFFD.
//
// Its errors place the problem by line and column, as a user editing the
// file looks for it.
func decodeTree(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("not UTF-8 at %s", Position(data, int64(notUTF8At(data))))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		var se *json.SyntaxError
		var pe posError
		switch {
		case errors.As(err, &se):
			// A Decoder's Offset is that of the offending byte.
			return nil, fmt.Errorf("%s: %w", Position(data, se.Offset), err)
		case errors.As(err, &pe):
			return nil, fmt.Errorf("%s at %s", pe.msg, Position(data, pe.off))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("the document ends inside a string, array or object (at %s)", Position(data, int64(len(data))))
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the top-level value at %s", Position(data, dec.InputOffset()))
	}
	if at, ok := loneSurrogate(data); ok {
		return nil, fmt.Errorf("%s at %s is half a UTF-16 surrogate pair, not a character", data[at:at+6], Position(data, int64(at)))
	}
	return v, nil
}

// posError is decodeValue's error about the byte at off of the document.
type posError struct {
	msg string
	off int64
}

func (e posError) Error() string { return e.msg + " at byte " + strconv.FormatInt(e.off, 10) }

// Position names byte off of a JSON document as "line L, column C",
// counting from 1, columns in characters (as editors count them).
func Position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return fmt.Sprintf("line %d, column %d", bytes.Count(before, []byte("\n"))+1, utf8.RuneCount(before[start:])+1)
}

// notUTF8At is the offset of the first byte of data that does not begin a
// UTF-8 encoding.
func notUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// loneSurrogate finds the first \u escape in a string of data, valid JSON,
// that is a UTF-16 surrogate but not the high half followed by a low half
// (RFC 8259 section 7 lets JSON text carry such an escape; it names no
// character).
func loneSurrogate(data []byte) (int, bool) {
	hex := func(i int) rune {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return -1
		}
		r, _ := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		return rune(r)
	}
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && data[i+1] == 'u':
			r := hex(i)
			if !utf16.IsSurrogate(r) {
				i += 5
				continue
			}
			if lo := hex(i + 6); r < 0xdc00 && lo >= 0xdc00 && lo <= 0xdfff {
				i += 11
				continue
			}
			return i, true
		case c == '\\':
			i++ // an escaped character: \" does not end the string
		}
	}
	return 0, false
}

// maxDepth bounds nesting far above what the format needs (about 6), so
// hostile input cannot drive the recursion deep.
const maxDepth = 64

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, posError{fmt.Sprintf("nested deeper than %d levels", maxDepth), dec.InputOffset()}
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string) // the decoder only yields string keys inside an object
				if _, dup := m[k]; dup {
					return nil, posError{fmt.Sprintf("duplicate key %q", k), dec.InputOffset() - int64(len(strconv.Quote(k)))}
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return m, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, posError{fmt.Sprintf("unexpected %q", t), dec.InputOffset() - 1}
	default:
		return t, nil
	}
}

// encodeTree writes a tree as compact JSON with sorted object keys.
func encodeTree(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// A tree holds only JSON-encodable values; failing here is a bug.
		panic("config: encoding a JSON tree: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
