//go:build linux

package emulate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// netnsDir is where `ip netns add` bind-mounts named namespaces.
const netnsDir = "/var/run/netns"

// ipCmd runs iproute2's ip with args; setup only, never on the packet path.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// netns is a named network namespace this process created.
type netns struct {
	name string
	fd   int // open handle on /var/run/netns/name
}

// newNetns creates a named namespace with `ip netns add` and opens it.
func newNetns(name string) (*netns, error) {
	if err := ipCmd("netns", "add", name); err != nil {
		return nil, err
	}
	fd, err := syscall.Open(filepath.Join(netnsDir, name), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = ipCmd("netns", "del", name)
		return nil, fmt.Errorf("opening namespace %s: %w", name, err)
	}
	return &netns{name: name, fd: fd}, nil
}

// close deletes the namespace. Devices and sockets in it must be closed
// first: a namespace lives while anything holds it.
func (n *netns) close() error {
	syscall.Close(n.fd)
	return ipCmd("netns", "del", n.name)
}

// do runs fn on an OS thread that has entered the namespace, then returns
// the thread to the namespace it came from. Sockets and TUN devices belong
// to the namespace they were created in, whichever thread uses them later.
// If the thread cannot go back it is left locked, so the runtime retires
// it rather than reusing a thread in the wrong namespace.
func (n *netns) do(fn func() error) error {
	runtime.LockOSThread()
	orig, err := syscall.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening this thread's namespace: %w", err)
	}
	defer syscall.Close(orig)
	if err := setns(n.fd); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering namespace %s: %w", n.name, err)
	}
	ferr := fn()
	if err := setns(orig); err != nil {
		return fmt.Errorf("leaving namespace %s: %w", n.name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// sysSetns is setns(2)'s number: 308 on amd64, 268 on the generic table
// (arm64, riscv64); the syscall package does not name it.
var sysSetns uintptr = map[string]uintptr{"amd64": 308, "386": 346}[runtime.GOARCH]

func setns(fd int) error {
	nr := sysSetns
	if nr == 0 {
		nr = 268
	}
	_, _, e := syscall.RawSyscall(nr, uintptr(fd), syscall.CLONE_NEWNET, 0)
	if e != 0 {
		return e
	}
	return nil
}

// sysctl writes one value under /proc/sys/net (which resolves to the
// calling thread's namespace); call it inside do.
func sysctl(key, value string) error {
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("sysctl %s=%q: %w", key, value, err)
	}
	return nil
}

// leftoverNamespaces lists namespaces whose names start with prefix.
func leftoverNamespaces(prefix string) []string {
	ents, _ := os.ReadDir(netnsDir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}
