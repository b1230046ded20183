package link

import (
	"math/rand/v2"

	"github.com/ccscope/ccscope/engine/config"
)

// lossModel decides, packet by packet, whether a direction loses it. It
// draws from the direction's own stream ("link/<id>/<dir>/loss") and knows
// nothing of what the packet carries.
type lossModel struct {
	c    config.Loss
	rng  *rand.Rand
	bad  bool      // gilbert_elliott: in the bad state; bernoulli_train: in a train
	n    int64     // periodic: packets seen
	cont float64   // bernoulli_train: P(the train goes on after a lost packet) = 1 − 1/TrainLength
	dup  *dupModel // the direction's duplicate model, on the pre-queue slot (Dir.SetLoss)
}

func newLossModel(c config.Loss, rng *rand.Rand) *lossModel {
	if c.Kind == config.NoLoss {
		return nil
	}
	m := &lossModel{c: c, rng: rng}
	if c.Kind == config.BernoulliTrain {
		m.cont = 1 - 1/c.TrainLength
	}
	return m
}

// lose steps the model by one packet and reports whether it is lost.
func (m *lossModel) lose() bool {
	switch m.c.Kind {
	case config.Bernoulli:
		// The draw is skipped at p = 0, as the direction always did.
		return m.c.P > 0 && m.rng.Float64() < m.c.P
	case config.GilbertElliott:
		// Gilbert-Elliott: the packet is lost with the current state's
		// probability, then the chain takes one step.
		p := m.c.LossGood
		if m.bad {
			p = m.c.LossBad
		}
		lost := m.rng.Float64() < p
		if m.bad {
			m.bad = m.rng.Float64() >= m.c.PBG
		} else {
			m.bad = m.rng.Float64() < m.c.PGB
		}
		return lost
	case config.Periodic:
		m.n++
		if m.n == m.c.Every {
			m.n = 0
			return true
		}
		return false
	case config.BernoulliTrain:
		// A packet outside a train starts one with probability P and is its
		// first loss; each lost packet is followed by another with
		// probability 1 − 1/TrainLength, so trains are geometric with mean
		// TrainLength.
		if !m.bad {
			if m.rng.Float64() >= m.c.P {
				return false
			}
		}
		m.bad = m.rng.Float64() < m.cont
		return true
	}
	return false
}
