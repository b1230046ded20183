// Package rng derives the independent random streams of a run.
//
// A run has one master seed (a uint64; 0 is a seed like any other). Every
// consumer — a link direction's loss or jitter model, a flow's CC — owns a
// stream named by a stable path such as "link/bottleneck/ab/loss". The stream
// is math/rand/v2's PCG (128-bit state, DXSM output) seeded with
//
//	PCG(splitmix64(seed ^ fnv1a64(name)), splitmix64(fnv1a64(name) + seed))
//
// where fnv1a64 is the 64-bit FNV-1a hash of the name's bytes and splitmix64
// is Steele, Lea and Flood's finaliser. A stream depends only on the seed and
// its own name, never on creation order, so adding a consumer does not shift
// the others. This derivation is part of what a seed means to users: changing
// it changes every run's results and must be a deliberate, announced change.
package rng

import "math/rand/v2"

// Stream returns the random stream named name under master seed seed.
func Stream(seed uint64, name string) *rand.Rand { return rand.New(PCG(seed, name)) }

// PCG returns the generator of the stream named name under seed: Stream's
// source, for a consumer that draws through it directly (Normal).
func PCG(seed uint64, name string) *rand.PCG {
	h := fnv1a64(name)
	return rand.NewPCG(splitmix64(seed^h), splitmix64(h+seed))
}

func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
