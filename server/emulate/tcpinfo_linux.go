//go:build linux

package emulate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// Socket options from linux/tcp.h and asm-generic/socket.h.
const (
	tcpInfoOpt      = 11 // TCP_INFO
	tcpCongestion   = 13 // TCP_CONGESTION
	tcpCCInfo       = 26 // TCP_CC_INFO
	tcpNotsentLowat = 25 // TCP_NOTSENT_LOWAT
	soMaxPacingRate = 47 // SO_MAX_PACING_RATE
	msgNoSignal     = 0x4000
	tcpClose        = 7 // TCP_CLOSE, tcpi_state
)

// tcpInfo is the part of struct tcp_info (include/uapi/linux/tcp.h, Linux
// 6.x) the trace uses. Times are microseconds, rates bytes per second, as
// the kernel reports them.
type tcpInfo struct {
	State, CAState                    uint8
	RTO, SndMSS                       uint32
	Unacked, Sacked, Lost, Retrans    uint32 // packets, at the instant
	RTT, RTTVar, SndSSThresh, SndCwnd uint32
	TotalRetrans                      uint32
	PacingRate, DeliveryRate          uint64
	BytesAcked, BytesReceived         uint64
	MinRTT, Delivered                 uint32
	BytesSent, BytesRetrans           uint64
	SndWnd                            uint32 // 0 where the kernel predates tcpi_snd_wnd
}

// Offsets of struct tcp_info's fields (include/uapi/linux/tcp.h).
const (
	offCAState      = 1
	offRTO          = 8
	offSndMSS       = 16
	offUnacked      = 24
	offSacked       = 28
	offLost         = 32
	offRetrans      = 36
	offRTT          = 68
	offRTTVar       = 72
	offSndSSThresh  = 76
	offSndCwnd      = 80
	offTotalRetrans = 100
	offPacingRate   = 104
	offBytesAcked   = 120
	offBytesRecv    = 128
	offMinRTT       = 148
	offDeliveryRate = 160
	offDelivered    = 192
	offBytesSent    = 200
	offBytesRetrans = 208
	offSndWnd       = 228
	tcpInfoLen      = 216 // through tcpi_bytes_retrans (Linux 4.19+)
)

// readTCPInfo samples TCP_INFO of fd into ti; buf is scratch space of at
// least tcpInfoLen bytes, reused so that sampling allocates nothing.
func readTCPInfo(fd int, buf []byte, ti *tcpInfo) error {
	n := uint32(len(buf))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, tcpInfoOpt,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return e
	}
	if n < tcpInfoLen {
		return fmt.Errorf("TCP_INFO returned %d bytes; this kernel predates tcpi_bytes_retrans (4.19)", n)
	}
	le := binary.LittleEndian // the host's order; every Linux this runs on is little-endian
	u32 := func(o int) uint32 { return le.Uint32(buf[o:]) }
	u64 := func(o int) uint64 { return le.Uint64(buf[o:]) }
	*ti = tcpInfo{State: buf[0], CAState: buf[offCAState], RTO: u32(offRTO), SndMSS: u32(offSndMSS),
		Unacked: u32(offUnacked), Sacked: u32(offSacked), Lost: u32(offLost), Retrans: u32(offRetrans),
		RTT: u32(offRTT), RTTVar: u32(offRTTVar), SndSSThresh: u32(offSndSSThresh), SndCwnd: u32(offSndCwnd),
		TotalRetrans: u32(offTotalRetrans), PacingRate: u64(offPacingRate), DeliveryRate: u64(offDeliveryRate),
		BytesAcked: u64(offBytesAcked), BytesReceived: u64(offBytesRecv), MinRTT: u32(offMinRTT),
		Delivered: u32(offDelivered), BytesSent: u64(offBytesSent), BytesRetrans: u64(offBytesRetrans)}
	if n >= offSndWnd+4 {
		ti.SndWnd = u32(offSndWnd)
	}
	return nil
}

// inflight is tcp_packets_in_flight: packets out, less those SACKed or
// marked lost, plus retransmissions in flight.
func (ti *tcpInfo) inflight() uint32 {
	return ti.Unacked - min(ti.Unacked, ti.Sacked+ti.Lost) + ti.Retrans
}

// lostSoFar is the packets marked lost so far, the simulator's lost_pkts
// (tp->lost, which TCP_INFO does not report), from the counters it does:
// those retransmitted (tcpi_total_retrans) and those marked lost and not
// yet retransmitted (tcpi_lost less tcpi_retrans, the lost ones in flight
// again being counted in both). A retransmission of a packet never marked
// lost (a TLP probe) counts too, so that with tcpi_delivered and inflight
// it sums to every segment sent: delivered + packets_out − sacked_out +
// total_retrans.
func (ti *tcpInfo) lostSoFar() uint64 {
	n := uint64(ti.TotalRetrans) + uint64(ti.Lost)
	return n - min(uint64(ti.Retrans), n)
}

// bbrInfo is struct tcp_bbr_info (include/uapi/linux/inet_diag.h), the
// TCP_CC_INFO of bbr: its bandwidth estimate (bytes/s, split in two u32),
// min_rtt (µs) and gains (<<8 fixed point).
type bbrInfo struct {
	BwBps      uint64
	MinRTTUs   uint32
	PacingGain uint32
	CwndGain   uint32
}

// readBBRInfo samples TCP_CC_INFO; ok is false when the CC exports none
// (cubic and reno do not).
func readBBRInfo(fd int, buf []byte) (bbrInfo, bool) {
	n := uint32(len(buf))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, tcpCCInfo,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 || n < 20 {
		return bbrInfo{}, false
	}
	le := binary.LittleEndian
	bw := uint64(le.Uint32(buf[4:]))<<32 | uint64(le.Uint32(buf[0:]))
	return bbrInfo{BwBps: bw * 8, MinRTTUs: le.Uint32(buf[8:]), PacingGain: le.Uint32(buf[12:]), CwndGain: le.Uint32(buf[16:])}, true
}

// availableCCs is the kernel's tcp_available_congestion_control.
func availableCCs() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return strings.TrimSpace(string(b))
}

// setCongestion sets TCP_CONGESTION; a CC the kernel lacks is an error naming
// the ones it has.
func setCongestion(fd int, cc string) error {
	if err := syscall.SetsockoptString(fd, syscall.IPPROTO_TCP, tcpCongestion, cc); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("the kernel has no congestion control %q (tcp_available_congestion_control: %s)", cc, availableCCs())
		}
		return fmt.Errorf("setsockopt TCP_CONGESTION %q: %w", cc, err)
	}
	return nil
}

// enablePacing makes the kernel pace this socket itself without the fq
// qdisc: setting SO_MAX_PACING_RATE to any value but ~0 moves
// sk_pacing_status from SK_PACING_NONE to SK_PACING_NEEDED (sk_setsockopt,
// net/core/sock.c), which tcp_needs_internal_pacing tests. The rate cap set
// is far above any emulated link, so it never binds.
func enablePacing(fd int) error {
	v := uint64(1) << 60
	_, _, e := syscall.Syscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), syscall.SOL_SOCKET, soMaxPacingRate,
		uintptr(unsafe.Pointer(&v)), 8, 0)
	if e != 0 {
		return fmt.Errorf("setsockopt SO_MAX_PACING_RATE: %w", e)
	}
	return nil
}
