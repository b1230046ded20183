package packet

import "unsafe"

// Prefetch asks the CPU to bring packet id into its caches ahead of use,
// without waiting for it. A packet spends milliseconds on a wire or in a
// queue, long enough to leave the caches, and the next one a link or queue
// will hand over is known well before its event: fetching it then hides
// the miss (on amd64 and arm64; elsewhere it does nothing). It changes
// nothing a run computes.
//
// It fetches the packet's first two lines: the network fields, and the
// transport fields (timestamps, the transmission's record, the first SACK
// block) that the endpoint a packet reaches reads at once. Both usually
// lie in one page, so the second costs no second page walk.
func (p *Pool) Prefetch(id ID) { prefetch2(p.addr(id)) }

// PrefetchAddr asks the CPU to bring the cache line at addr into its caches.
func PrefetchAddr(addr unsafe.Pointer) { prefetch(addr) }
