package link

import (
	"math"
	"math/rand/v2"
)

// dupModel sends a fraction p of a direction's packets twice, as netem's
// duplicate does, drawing from the direction's own stream
// ("link/<id>/<dir>/duplicate"): the copy enters the direction just before
// the packet (netem enqueues its clone first) and meets the loss model,
// queue, serialisation and jitter as any packet does; it is not copied
// again.
type dupModel struct {
	p, logKeep float64
	rng        *rand.Rand
	toNext     int64 // packets until the next one sent twice
	copying    bool  // the copy is being sent
}

func newDupModel(p float64, rng *rand.Rand) *dupModel {
	if p <= 0 {
		return nil
	}
	m := &dupModel{p: p, logKeep: math.Log1p(-p), rng: rng}
	m.toNext = geometricGap(rng, p, m.logKeep)
	return m
}

// next steps the model by one packet and reports whether it is sent twice.
func (m *dupModel) next() bool {
	if m.copying {
		return false
	}
	m.toNext--
	if m.toNext > 0 {
		return false
	}
	m.toNext = geometricGap(m.rng, m.p, m.logKeep)
	return true
}
