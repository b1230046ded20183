// Package pcap writes the packets crossing a link direction as a pcap file
// (the libpcap format with nanosecond timestamps, magic 0xa1b23c4d) that
// Wireshark, tshark, tcpdump and tcptrace read as a real capture.
//
// Each simulated packet becomes an Ethernet frame carrying an IPv4 header
// and a TCP header (a pump's packets: UDP) built from the packet's fields:
// addresses from the node indices (node i is 10.0.(i+1)/256.(i+1)%256),
// ports per flow (the data sender's port 32768+flow, the receiver's 5201),
// sequence and ACK numbers (the simulator's unwrapped byte sequence, whose
// ISN is 0, wrapped to 32 bits), the advertised window (scaled by the
// window-scale shift the SYN announced), the timestamp option (TSval and
// TSecr in the sender's 1 ms clock), SACK blocks, and the ECN codepoint and
// ECE/CWR/AE flags. Header lengths match the simulator's wire sizes: IPv4 20
// B + TCP 20 B + timestamps 12 B, plus 4 + 8 B per SACK block. SYN and
// SYN-ACK also carry the options the simulator implies but does not size
// (MSS, SACK-permitted, window scale), so their IPv4 length is 60 B rather
// than the simulator's 52 B.
//
// Payloads are not stored: each record holds the headers only (caplen <
// len, as a capture with a small snap length), so a 60 s run at 1 Gbps is
// megabytes, not gigabytes. The IPv4 checksum is correct; the TCP/UDP
// checksum is the one of an all-zero payload of the packet's length.
package pcap

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
)

// Link-layer type and magic of the file header.
const (
	magicNanos       = 0xa1b23c4d
	linkTypeEthernet = 1
	snapLen          = 65535
	ethHeader        = 14
	ipHeader         = 20
	tcpHeader        = 20
	udpHeader        = 8
	tsOption         = 12 // NOP, NOP, kind 8 len 10
	synOptions       = 20 // MSS (4), SACK-permitted (2), timestamps (10), NOP + window scale (4)

	// ReceiverPort is the data receiver's TCP/UDP port.
	ReceiverPort = 5201
	// SenderPortBase plus the flow index is the data sender's port.
	SenderPortBase = 32768
)

// Flow describes one flow for the header fields: which node sends its data,
// whether it is TCP, and the window-scale shifts each side announces.
type Flow struct {
	Src       int32 // the data sender's node index
	TCP       bool  // false: a pump (UDP)
	MSS       uint16
	SndWScale uint8 // the data sender's (in its SYN)
	RcvWScale uint8 // the receiver's (in its SYN-ACK)
}

// Writer writes pcap records. It keeps a sticky first error.
type Writer struct {
	w       *bufio.Writer
	flows   []Flow
	ipID    []uint16 // per flow and side: [2*flow] data sender, [2*flow+1] receiver
	buf     [ethHeader + ipHeader + tcpHeader + 40]byte
	err     error
	Packets uint64 // records written
}

// NewWriter writes the file header to w and returns a Writer for flows
// (indexed by packet.Packet.Flow).
func NewWriter(w io.Writer, flows []Flow) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 1<<16), flows: flows, ipID: make([]uint16, 2*len(flows))}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], magicNanos)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], snapLen)
	binary.LittleEndian.PutUint32(h[20:], linkTypeEthernet)
	if _, err := pw.w.Write(h[:]); err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	return pw, nil
}

// addr is node i's IPv4 address.
func addr(node int32) [4]byte {
	n := uint32(node) + 1
	return [4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)}
}

// Write appends packet p seen at time t.
func (pw *Writer) Write(t sim.Time, p *packet.Packet) {
	if pw.err != nil {
		return
	}
	if int(p.Flow) >= len(pw.flows) {
		pw.err = fmt.Errorf("pcap: packet of flow %d, but %d flows were declared", p.Flow, len(pw.flows))
		return
	}
	f := &pw.flows[p.Flow]
	fromSender := p.Src == f.Src
	side := 2 * int(p.Flow)
	sport, dport := uint16(SenderPortBase+int(p.Flow)%SenderPortBase), uint16(ReceiverPort)
	if !fromSender {
		side++
		sport, dport = dport, sport
	}
	b := pw.buf[:]
	// Ethernet: locally administered MACs derived from the node indices.
	src, dst := addr(p.Src), addr(p.Dst)
	copy(b[0:6], []byte{0x02, 0, dst[0], dst[1], dst[2], dst[3]})
	copy(b[6:12], []byte{0x02, 0, src[0], src[1], src[2], src[3]})
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[ethHeader:]

	var l4 []byte
	var l4Len, ipLen int
	proto := byte(6)
	if f.TCP {
		opts := tsOption
		syn := p.Flags&packet.SYN != 0
		if syn {
			opts = synOptions
		} else if p.NSack > 0 {
			opts += 4 + 8*int(p.NSack)
		}
		hdr := tcpHeader + opts
		l4 = ip[ipHeader : ipHeader+hdr]
		clear(l4)
		binary.BigEndian.PutUint16(l4[0:], sport)
		binary.BigEndian.PutUint16(l4[2:], dport)
		binary.BigEndian.PutUint32(l4[4:], uint32(p.Seq))
		ack := uint32(p.Ack)
		if p.Flags&packet.ACK != 0 && ack == 0 {
			// The data sender leaves Ack unset: it has received only the
			// SYN-ACK (sequence 0), so its cumulative ACK is 1.
			ack = 1
		}
		binary.BigEndian.PutUint32(l4[8:], ack)
		l4[12] = byte(hdr/4)<<4 | byte(p.Flags>>8&1) // data offset; AE in the former NS bit
		l4[13] = byte(p.Flags)                       // FIN SYN RST PSH ACK URG ECE CWR, as on the wire
		wnd := p.Wnd
		shift := f.RcvWScale
		if fromSender {
			shift = f.SndWScale
			if wnd == 0 {
				// The simulated data sender advertises no window (it
				// receives no data); show it as fully open.
				wnd = 65535 << shift
			}
		}
		if !syn {
			wnd >>= shift // RFC 7323 §2.2: only SYNs carry it unscaled
		}
		binary.BigEndian.PutUint16(l4[14:], uint16(min(wnd, 65535)))
		o := l4[tcpHeader:]
		if syn {
			o[0], o[1] = 2, 4 // MSS
			binary.BigEndian.PutUint16(o[2:], f.MSS)
			o[4], o[5] = 4, 2 // SACK permitted
			o[6], o[7] = 8, 10
			binary.BigEndian.PutUint32(o[8:], p.TSVal)
			binary.BigEndian.PutUint32(o[12:], p.TSEcr)
			o[16], o[17], o[18] = 1, 3, 3 // NOP, window scale
			o[19] = f.SndWScale
			if !fromSender {
				o[19] = f.RcvWScale
			}
		} else {
			o[0], o[1], o[2], o[3] = 1, 1, 8, 10 // NOP NOP timestamps
			binary.BigEndian.PutUint32(o[4:], p.TSVal)
			binary.BigEndian.PutUint32(o[8:], p.TSEcr)
			if p.NSack > 0 {
				s := o[tsOption:]
				s[0], s[1], s[2], s[3] = 1, 1, 5, byte(2+8*int(p.NSack))
				for i := 0; i < int(p.NSack); i++ {
					binary.BigEndian.PutUint32(s[4+8*i:], uint32(p.Sack[i].Start))
					binary.BigEndian.PutUint32(s[8+8*i:], uint32(p.Sack[i].End))
				}
			}
		}
		l4Len = hdr + int(p.Len)
		ipLen = ipHeader + l4Len
	} else {
		proto = 17
		payload := max(int(p.Size)-ipHeader-udpHeader, 0)
		l4 = ip[ipHeader : ipHeader+udpHeader]
		clear(l4)
		binary.BigEndian.PutUint16(l4[0:], sport)
		binary.BigEndian.PutUint16(l4[2:], dport)
		l4Len = udpHeader + payload
		binary.BigEndian.PutUint16(l4[4:], uint16(min(l4Len, 65535)))
		ipLen = ipHeader + l4Len
	}

	clear(ip[:ipHeader])
	ip[0] = 0x45
	ip[1] = byte(p.ECN & 3) // DSCP 0, ECN codepoint
	binary.BigEndian.PutUint16(ip[2:], uint16(min(ipLen, 65535)))
	binary.BigEndian.PutUint16(ip[4:], pw.ipID[side])
	pw.ipID[side]++
	ip[6] = 0x40 // don't fragment
	ip[8] = 64   // TTL
	ip[9] = proto
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum(ip[:ipHeader], 0)))

	// Transport checksum over the pseudo-header, the header and an
	// all-zero payload (zeros add nothing to the one's-complement sum).
	c := sum(ip[12:20], uint32(proto)+uint32(l4Len))
	c = sum(l4, c)
	ck := ^fold(c)
	if proto == 17 && ck == 0 {
		ck = 0xffff
	}
	off := 16 // TCP checksum
	if proto == 17 {
		off = 6 // UDP checksum
	}
	binary.BigEndian.PutUint16(l4[off:], ck)

	capLen := ethHeader + ipHeader + len(l4)
	var rec [16]byte
	ns := int64(t) / 1000
	binary.LittleEndian.PutUint32(rec[0:], uint32(ns/1e9))
	binary.LittleEndian.PutUint32(rec[4:], uint32(ns%1e9))
	binary.LittleEndian.PutUint32(rec[8:], uint32(capLen))
	binary.LittleEndian.PutUint32(rec[12:], uint32(ethHeader+ipLen))
	if _, err := pw.w.Write(rec[:]); err != nil {
		pw.err = fmt.Errorf("pcap: %w", err)
		return
	}
	if _, err := pw.w.Write(b[:capLen]); err != nil {
		pw.err = fmt.Errorf("pcap: %w", err)
		return
	}
	pw.Packets++
}

// sum adds b as big-endian 16-bit words to c (RFC 1071).
func sum(b []byte, c uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		c += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		c += uint32(b[len(b)-1]) << 8
	}
	return c
}

func fold(c uint32) uint16 {
	for c > 0xffff {
		c = c&0xffff + c>>16
	}
	return uint16(c)
}

// Close flushes the file and returns the first error.
func (pw *Writer) Close() error {
	if err := pw.w.Flush(); err != nil && pw.err == nil {
		pw.err = fmt.Errorf("pcap: %w", err)
	}
	return pw.err
}

// Err is the first error.
func (pw *Writer) Err() error { return pw.err }

// Tap is a link.Receiver that writes each arriving packet, then passes it
// on to the node it was headed for.
type Tap struct {
	W    *Writer
	Next link.Receiver
	Pool *packet.Pool
	Now  func() sim.Time
}

// Receive writes the packet and hands it on.
func (t *Tap) Receive(id packet.ID) {
	t.W.Write(t.Now(), t.Pool.Get(id))
	t.Next.Receive(id)
}
