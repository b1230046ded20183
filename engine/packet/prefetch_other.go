//go:build !amd64 && !arm64

package packet

import "unsafe"

func prefetch(unsafe.Pointer) {}

func prefetch2(unsafe.Pointer) {}
