//go:build amd64 || arm64

package packet

import "unsafe"

//go:noescape
func prefetch(addr unsafe.Pointer)
