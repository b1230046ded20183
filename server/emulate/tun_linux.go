//go:build linux

package emulate

import (
	"fmt"
	"syscall"
	"unsafe"
)

// From linux/if_tun.h.
const (
	tunSetIff = 0x400454ca // _IOW('T', 202, int)
	iffTun    = 0x0001
	iffNoPI   = 0x1000
)

// ifreq is struct ifreq with the flags member of its union.
type ifreq struct {
	name  [16]byte
	flags uint16
	_     [22]byte
}

// openTUN creates a layer-3 TUN device called name in the calling thread's
// namespace (call it inside netns.do) and returns its non-blocking file
// descriptor. The device lives while the descriptor is open.
func openTUN(name string) (int, error) {
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening /dev/net/tun: %w", err)
	}
	var req ifreq
	copy(req.name[:], name)
	req.flags = iffTun | iffNoPI
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&req))); e != 0 {
		syscall.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	return fd, nil
}
