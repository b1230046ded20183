package trace

import "github.com/apache/arrow/go/v17/parquet/compress"

// snappyInPlace is arrow's Parquet Snappy codec, except that Encode and
// EncodeLevel compress into dst's capacity. The Parquet page writer hands
// the codec a buffer grown to CompressBound but of length 0, which the
// stock codec (snappy.Encode checks len, not cap) ignores, allocating a
// fresh bound-sized block for every page: ~3 GB of garbage for the 390 MB
// trace of a 60 s dumbbell-1g run. The compressed bytes are the same.
type snappyInPlace struct{ compress.Codec }

func (c snappyInPlace) Encode(dst, src []byte) []byte {
	return c.Codec.Encode(dst[:cap(dst)], src)
}

func (c snappyInPlace) EncodeLevel(dst, src []byte, level int) []byte {
	return c.Codec.EncodeLevel(dst[:cap(dst)], src, level)
}

// The codec registry is process-wide: replacing its Snappy entry at init,
// before any writer can look it up, is the hook arrow documents for custom
// codecs (compress.RegisterCodec).
func init() {
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		panic("trace: " + err.Error())
	}
	if _, ok := c.(snappyInPlace); !ok {
		compress.RegisterCodec(compress.Codecs.Snappy, snappyInPlace{c})
	}
}
