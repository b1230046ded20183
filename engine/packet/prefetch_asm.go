//go:build amd64 || arm64

package packet

import "unsafe"

//go:noescape
func prefetch(addr unsafe.Pointer)

//go:noescape
func prefetch2(addr unsafe.Pointer)
