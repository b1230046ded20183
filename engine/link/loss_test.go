package link

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/rng"
)

// lossRun steps a loss model n times in k batches and returns, per batch,
// the losses and the loss bursts (maximal runs of consecutive losses, each
// counted in the batch where it starts).
func lossRun(m *lossModel, n, k int) (losses, bursts []float64) {
	losses, bursts = make([]float64, k), make([]float64, k)
	prev := false
	for i := 0; i < n; i++ {
		b := i * k / n
		lost := m.lose()
		if lost {
			losses[b]++
			if !prev {
				bursts[b]++
			}
		}
		prev = lost
	}
	return losses, bursts
}

// Each loss model's realised loss rate and mean burst length over 10^6
// packets agree with the closed forms within 4 standard errors (batch
// means over 200 batches).
//
//   - bernoulli(p): rate p; bursts are geometric, mean 1/(1−p).
//   - gilbert_elliott: stationary π_B = p_gb/(p_gb+p_bg); rate π_G·l_G +
//     π_B·l_B. A burst starts at a loss after a delivered packet, so the
//     mean burst is P(L_t)/P(N_{t−1} L_t) with P(N_{t−1} L_t) =
//     Σ_s π_s(1−l_s) Σ_s' P(s→s')·l_s' (the loss is decided in the state
//     of its packet, then the chain steps).
//   - bernoulli_train(p, L): delivered runs are geometric with mean
//     (1−p)/p, trains geometric with mean L: rate pL/(pL+1−p); a train is
//     followed at once by another with probability p, so the mean burst
//     is L/(1−p).
//   - periodic(N): exactly one packet in N, bursts of one.
func TestLossModelsMatchClosedForms(t *testing.T) {
	const n, k = 1_000_000, 200
	ge := config.Loss{Kind: config.GilbertElliott, PGB: 0.01, PBG: 0.2, LossGood: 0.002, LossBad: 0.6}
	piB := ge.PGB / (ge.PGB + ge.PBG)
	piG := 1 - piB
	geRate := piG*ge.LossGood + piB*ge.LossBad
	geNL := piG*(1-ge.LossGood)*((1-ge.PGB)*ge.LossGood+ge.PGB*ge.LossBad) +
		piB*(1-ge.LossBad)*(ge.PBG*ge.LossGood+(1-ge.PBG)*ge.LossBad)
	const tp, tl = 0.01, 5.0
	for _, tc := range []struct {
		name            string
		c               config.Loss
		rate, meanBurst float64
	}{
		{"bernoulli", config.Loss{Kind: config.Bernoulli, P: 0.05}, 0.05, 1 / (1 - 0.05)},
		{"gilbert_elliott", ge, geRate, geRate / geNL},
		{"bernoulli_train", config.Loss{Kind: config.BernoulliTrain, P: tp, TrainLength: tl}, tp * tl / (tp*tl + 1 - tp), tl / (1 - tp)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newLossModel(tc.c, rng.Stream(7, "test/loss/"+tc.name))
			losses, bursts := lossRun(m, n, k)
			ones := make([]float64, k)
			for i := range ones {
				ones[i] = float64(n / k)
			}
			rate, rse := ratioSE(losses, ones)
			within(t, "loss rate", rate, tc.rate, rse)
			burst, bse := ratioSE(losses, bursts)
			within(t, "mean burst length", burst, tc.meanBurst, bse)
			t.Logf("rate %.5f (want %.5f, SE %.2g), mean burst %.4f (want %.4f, SE %.2g)", rate, tc.rate, rse, burst, tc.meanBurst, bse)
		})
	}
	t.Run("periodic", func(t *testing.T) {
		for _, every := range []int64{1, 2, 7, 100} {
			m := newLossModel(config.Loss{Kind: config.Periodic, Every: every}, nil)
			losses, bursts := lossRun(m, 700_000, 1)
			wantLoss := float64(700_000 / every)
			wantBursts := wantLoss
			if every == 1 {
				wantBursts = 1
			}
			if losses[0] != wantLoss || bursts[0] != wantBursts {
				t.Errorf("periodic every %d over 700000: %v losses in %v bursts, want %v in %v", every, losses[0], bursts[0], wantLoss, wantBursts)
			}
		}
	})
}

// The same seed gives the same losses; another seed gives others.
func TestLossDeterministicBySeed(t *testing.T) {
	c := config.Loss{Kind: config.GilbertElliott, PGB: 0.05, PBG: 0.3, LossGood: 0.01, LossBad: 0.5}
	draw := func(seed uint64) string {
		m := newLossModel(c, rng.Stream(seed, "link/x/ab/loss"))
		b := make([]byte, 2000)
		for i := range b {
			b[i] = '0'
			if m.lose() {
				b[i] = '1'
			}
		}
		return string(b)
	}
	if a, b := draw(3), draw(3); a != b {
		t.Errorf("seed 3 gives two loss patterns")
	}
	if a, b := draw(3), draw(4); a == b {
		t.Errorf("seeds 3 and 4 give the same loss pattern")
	}
}
