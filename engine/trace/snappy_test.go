package trace

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow/go/v17/parquet/compress"
)

// The registered Snappy codec produces the stock codec's bytes, decodes
// back to the input, and with a destination of length 0 but capacity
// CompressBound (how the Parquet page writer calls it) compresses in place
// without allocating.
func TestSnappyInPlace(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	inPlace, ok := c.(snappyInPlace)
	if !ok {
		t.Fatalf("registered Snappy codec is %T, want snappyInPlace", c)
	}
	stock := inPlace.Codec
	// A page of int64 times 1 µs apart: compressible, like trace columns.
	src := make([]byte, 64<<10)
	for i := 0; i < len(src); i += 8 {
		binary.LittleEndian.PutUint64(src[i:], uint64(i)*1e6)
	}
	dst := make([]byte, 0, c.CompressBound(int64(len(src))))
	got := c.EncodeLevel(dst, src, 0)
	if want := stock.Encode(nil, src); !bytes.Equal(got, want) {
		t.Fatalf("EncodeLevel = %d bytes, want the stock codec's %d bytes", len(got), len(want))
	}
	if &got[0] != &dst[:1][0] {
		t.Errorf("EncodeLevel did not compress into dst's capacity")
	}
	if dec := stock.Decode(nil, got); !bytes.Equal(dec, src) {
		t.Errorf("Decode(EncodeLevel(src)) differs from src")
	}
	if n := testing.AllocsPerRun(10, func() { c.EncodeLevel(dst, src, 0) }); n != 0 {
		t.Errorf("EncodeLevel allocations = %v, want 0", n)
	}
}
