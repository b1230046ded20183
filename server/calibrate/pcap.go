package calibrate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// A pcap (libpcap's file format, pcap-savefile(5)) of the sender's side is
// reduced to the samples TCP_INFO would have given, as tcp_input.c would
// compute them from the same segments: an RTT sample per ACK that newly
// acknowledges data sent once (Karn's rule, RFC 6298 §3) folded into srtt
// with gain 1/8 as tcp_rtt_estimator does, min_rtt as their minimum, the
// delivery rate as the bytes newly acknowledged over the last smoothed RTT,
// bytes_acked from the cumulative ACK, retransmissions as data segments
// that start below the highest sequence sent, the advertised window scaled
// by the shift of the receiver's SYN-ACK. The initial window is the number
// of data segments sent before the first ACK of data.

// Link types of the files accepted: raw IPv4 (DLT_RAW is 12 on some
// systems and 101 as LINKTYPE_RAW; 228 is LINKTYPE_IPV4) and Ethernet.
const (
	linkEthernet = 1
	linkRaw12    = 12
	linkRaw      = 101
	linkIPv4     = 228
)

func isPcap(raw []byte) bool {
	if len(raw) < 24 {
		return false
	}
	m := binary.LittleEndian.Uint32(raw)
	return m == 0xa1b2c3d4 || m == 0xd4c3b2a1 || m == 0xa1b23c4d || m == 0x4d3cb2a1
}

// pcapPacket is one captured IPv4 TCP segment.
type pcapPacket struct {
	tUs          int64
	src, dst     [4]byte
	sport, dport uint16
	seq, ack     uint32
	flags        uint8
	wnd          uint16
	wscale       int8 // -1: no window-scale option
	payload      uint32
}

func readPcap(raw []byte, flow string) ([]Sample, error) {
	var bo binary.ByteOrder = binary.LittleEndian
	m := bo.Uint32(raw)
	if m == 0xd4c3b2a1 || m == 0x4d3cb2a1 {
		bo = binary.BigEndian
	}
	nano := m == 0xa1b23c4d || m == 0x4d3cb2a1
	link := bo.Uint32(raw[20:])
	switch link {
	case linkEthernet, linkRaw12, linkRaw, linkIPv4:
	default:
		return nil, fmt.Errorf("link type %d; want raw IPv4 (101, 228) or Ethernet (1)", link)
	}
	var pkts []pcapPacket
	for off := 24; off+16 <= len(raw); {
		sec, sub := int64(bo.Uint32(raw[off:])), int64(bo.Uint32(raw[off+4:]))
		incl := int(bo.Uint32(raw[off+8:]))
		off += 16
		if off+incl > len(raw) {
			return nil, errors.New("truncated record")
		}
		b := raw[off : off+incl]
		off += incl
		if link == linkEthernet {
			if len(b) < 14 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
				continue
			}
			b = b[14:]
		}
		us := sec*1e6 + sub
		if nano {
			us = sec*1e6 + sub/1000
		}
		if p, ok := parseSegment(b, us); ok {
			pkts = append(pkts, p)
		}
	}
	return reducePcap(pkts, flow)
}

// parseSegment reads an IPv4 TCP segment's header (captures may be cut at
// the snap length: only headers are needed; the IP total length gives the
// payload).
func parseSegment(b []byte, us int64) (pcapPacket, bool) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != 6 {
		return pcapPacket{}, false
	}
	ihl := int(b[0]&15) * 4
	if len(b) < ihl+20 {
		return pcapPacket{}, false
	}
	t := b[ihl:]
	doff := int(t[12]>>4) * 4
	tot := int(binary.BigEndian.Uint16(b[2:]))
	p := pcapPacket{tUs: us, sport: binary.BigEndian.Uint16(t), dport: binary.BigEndian.Uint16(t[2:]),
		seq: binary.BigEndian.Uint32(t[4:]), ack: binary.BigEndian.Uint32(t[8:]), flags: t[13],
		wnd: binary.BigEndian.Uint16(t[14:]), wscale: -1}
	copy(p.src[:], b[12:16])
	copy(p.dst[:], b[16:20])
	if tot >= ihl+doff {
		p.payload = uint32(tot - ihl - doff)
	}
	if p.flags&0x02 != 0 && len(t) >= doff { // SYN: look for the window-scale option
		opts := t[20:doff]
		for i := 0; i < len(opts); {
			switch opts[i] {
			case 0:
				i = len(opts)
				continue
			case 1:
				i++
				continue
			}
			if i+1 >= len(opts) || opts[i+1] < 2 {
				break
			}
			if opts[i] == 3 && opts[i+1] == 3 && i+2 < len(opts) {
				p.wscale = int8(opts[i+2])
			}
			i += int(opts[i+1])
		}
	}
	return p, true
}

func addrPort(a [4]byte, port uint16) string {
	return fmt.Sprintf("%d.%d.%d.%d:%s", a[0], a[1], a[2], a[3], strconv.Itoa(int(port)))
}

// reducePcap follows one connection — the first whose SYN is seen, or the
// one whose receiver is flow ("addr:port") — from the sender's side.
func reducePcap(pkts []pcapPacket, flow string) ([]Sample, error) {
	var snd, rcv string
	for _, p := range pkts {
		if p.flags&0x12 == 0x02 && (flow == "" || addrPort(p.dst, p.dport) == flow) {
			snd, rcv = addrPort(p.src, p.sport), addrPort(p.dst, p.dport)
			break
		}
	}
	if snd == "" {
		return nil, errors.New("no SYN of the flow: the capture must include the connection's start")
	}
	var (
		out                 []Sample
		isn                 uint32
		high, highAck       uint32
		started             bool
		wscale              int8 = 0
		srtt, rttvar, minRT int64
		sent, retrans       uint64
		ring                []rttEntry
		acked               []ackPoint
		t0                  int64 = -1
		lastSample          int64 = -1
		retxHigh            uint32
		anyRetx             bool
	)
	mss := uint32(1448)
	for _, p := range pkts {
		from, to := addrPort(p.src, p.sport), addrPort(p.dst, p.dport)
		switch {
		case from == snd && to == rcv:
			if p.flags&0x02 != 0 {
				isn, high, started = p.seq, p.seq+1, true
				if t0 < 0 {
					t0 = p.tUs
				}
				continue
			}
			if !started || p.payload == 0 {
				continue
			}
			mss = max(mss, p.payload)
			end := p.seq + p.payload
			sent += uint64(p.payload)
			if int32(p.seq-high) < 0 {
				retrans++
				anyRetx = true
				if int32(end-retxHigh) > 0 || retxHigh == 0 {
					retxHigh = end
				}
			}
			if int32(end-high) > 0 {
				high = end
				ring = append(ring, rttEntry{end, p.tUs})
			}
		case from == rcv && to == snd:
			if p.flags&0x12 == 0x12 {
				if p.wscale >= 0 {
					wscale = p.wscale
				}
				highAck = p.ack
				continue
			}
			if !started || p.flags&0x10 == 0 || int32(p.ack-highAck) <= 0 {
				continue
			}
			highAck = p.ack
			var last rttEntry
			got := false
			for len(ring) > 0 && int32(ring[0].end-p.ack) <= 0 {
				last, got = ring[0], true
				ring = ring[1:]
			}
			if got && !(anyRetx && int32(last.end-retxHigh) <= 0) {
				m := p.tUs - last.t
				if srtt == 0 {
					srtt, rttvar, minRT = m, m/2, m
				} else {
					d := m - srtt
					srtt += d / 8
					rttvar += (abs(d) - rttvar) / 4
					minRT = min(minRT, m)
				}
			}
			bytesAcked := uint64(p.ack - isn - 1)
			acked = append(acked, ackPoint{p.tUs, bytesAcked})
			if srtt == 0 || p.tUs-lastSample < 1000 {
				continue
			}
			lastSample = p.tUs
			// Delivery rate over the last smoothed RTT.
			var rate int64
			for i := len(acked) - 1; i >= 0; i-- {
				if p.tUs-acked[i].t >= srtt {
					rate = int64(float64(bytesAcked-acked[i].b) * 8 / (float64(p.tUs-acked[i].t) / 1e6))
					break
				}
			}
			out = append(out, Sample{TUs: p.tUs - t0, Flow: rcv, RTTUs: uint32(srtt), RTTVarUs: uint32(rttvar),
				MinRTTUs: uint32(minRT), MinRTTOfData: true, MSS: mss, DeliveryRateBps: rate, BytesAcked: bytesAcked, BytesSent: sent,
				TotalRetrans: uint32(retrans), Delivered: uint32(bytesAcked/uint64(mss)) + 1,
				SndWnd: uint32(p.wnd) << uint(wscale)})
		}
	}
	if len(out) > 0 {
		out[0].Cwnd = initialWindow(pkts, snd, rcv)
	}
	return out, nil
}

type rttEntry struct {
	end uint32
	t   int64
}

type ackPoint struct {
	t int64
	b uint64
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// initialWindow counts the data segments the sender sent before the first
// ACK of data came back.
func initialWindow(pkts []pcapPacket, snd, rcv string) uint32 {
	var n uint32
	var synAck uint32
	seenData := false
	for _, p := range pkts {
		from, to := addrPort(p.src, p.sport), addrPort(p.dst, p.dport)
		if from == rcv && to == snd {
			if p.flags&0x12 == 0x12 {
				synAck = p.ack
				continue
			}
			if seenData && p.flags&0x10 != 0 && int32(p.ack-synAck) > 0 {
				return n
			}
		}
		if from == snd && to == rcv && p.payload > 0 {
			n++
			seenData = true
		}
	}
	return n
}

// PcapWriter accumulates a pcap file (nanosecond timestamps, raw IPv4) in
// memory, keeping at most Snap bytes of each packet, so that recording a
// packet costs a copy and no allocation once the buffer has grown.
type PcapWriter struct {
	Snap int
	buf  []byte
}

// NewPcapWriter returns a writer with room for about n packets.
func NewPcapWriter(snap, n int) *PcapWriter {
	w := &PcapWriter{Snap: snap, buf: make([]byte, 24, 24+n*(16+snap))}
	le := binary.LittleEndian
	le.PutUint32(w.buf[0:], 0xa1b23c4d) // nanosecond resolution
	le.PutUint16(w.buf[4:], 2)
	le.PutUint16(w.buf[6:], 4)
	le.PutUint32(w.buf[16:], uint32(snap))
	le.PutUint32(w.buf[20:], linkRaw)
	return w
}

// Add records packet b seen at tNs nanoseconds.
func (w *PcapWriter) Add(tNs int64, b []byte) {
	n := min(len(b), w.Snap)
	var h [16]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], uint32(tNs/1e9))
	le.PutUint32(h[4:], uint32(tNs%1e9))
	le.PutUint32(h[8:], uint32(n))
	le.PutUint32(h[12:], uint32(len(b)))
	w.buf = append(w.buf, h[:]...)
	w.buf = append(w.buf, b[:n]...)
}

// Bytes is the file's content.
func (w *PcapWriter) Bytes() []byte { return w.buf }
