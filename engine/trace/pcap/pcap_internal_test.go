package pcap

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ccscope/ccscope/engine/packet"
)

// RFC 1071 §3's worked example: the words 0001 f203 f4f5 f6f7 sum to
// 0x2ddf0, which folds to 0xddf2.
func TestChecksumRFC1071Example(t *testing.T) {
	if got := fold(sum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, 0)); got != 0xddf2 {
		t.Errorf("fold(sum(RFC 1071 example)) = %#x, want 0xddf2", got)
	}
}

// A record's header: nanosecond timestamp split into seconds and
// nanoseconds, the captured length (headers only) and the packet's full
// length on the wire (its Ethernet header plus the simulator's size).
func TestRecordHeader(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, []Flow{{Src: 0, TCP: true, MSS: 1448, SndWScale: 7, RcvWScale: 7}})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(3_000_000_000_000+1_234_567_000, &packet.Packet{Flow: 0, Src: 0, Dst: 1, Size: 1500, Flags: packet.ACK, Seq: 1, Len: 1448})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if magic := binary.LittleEndian.Uint32(b); magic != 0xa1b23c4d {
		t.Errorf("magic %#x, want 0xa1b23c4d (nanosecond pcap)", magic)
	}
	rec := b[24:]
	got := [4]uint32{binary.LittleEndian.Uint32(rec), binary.LittleEndian.Uint32(rec[4:]), binary.LittleEndian.Uint32(rec[8:]), binary.LittleEndian.Uint32(rec[12:])}
	// 14 Ethernet + 20 IPv4 + 32 TCP with timestamps = 66 captured; 14 + 1500 on the wire.
	if want := [4]uint32{3, 1_234_567, 66, 1514}; got != want {
		t.Errorf("record header = %v, want %v", got, want)
	}
	if len(rec) != 16+66 {
		t.Errorf("record is %d bytes, want 16 + 66", len(rec))
	}
}
