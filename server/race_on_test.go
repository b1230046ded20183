//go:build race

package server

// raceEnabled: the race detector multiplies memory use (its shadow memory
// is several times the heap), so RSS bounds in tests scale with it.
const raceEnabled = true
