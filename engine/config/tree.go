package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// decodeTree parses JSON into a generic tree of map[string]any, []any,
// json.Number, string, bool and nil. Numbers stay json.Number so that large
// integers (seeds, picoseconds) are exact. Unlike json.Unmarshal it rejects
// duplicate keys, which would otherwise silently keep the last value.
func decodeTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return v, nil
}

// maxDepth bounds nesting far above what the format needs (about 6), so
// hostile input cannot drive the recursion deep.
const maxDepth = 64

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels at byte %d", maxDepth, dec.InputOffset())
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
					return nil, fmt.Errorf("duplicate key %q at byte %d", k, dec.InputOffset())
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
		return nil, fmt.Errorf("unexpected %q at byte %d", t, dec.InputOffset())
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
