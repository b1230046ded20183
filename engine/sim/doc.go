// Package sim is the deterministic discrete-event core: picosecond time, a
// typed event queue ordered by (time, insertion sequence), re-armable timers,
// the single-threaded loop and the run digest.
//
// Nothing here reads a clock, starts a goroutine or iterates a map: the same
// handlers fed the same events produce the same sequence, bit for bit.
package sim
