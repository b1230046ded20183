package cc

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// TestBBRConstants checks the fixed-point constants against the values the
// formulas in mainline net/ipv4/tcp_bbr.c evaluate to in C integer
// arithmetic (BBR_UNIT = 1 << 8 = 256).
func TestBBRConstants(t *testing.T) {
	cases := []struct {
		name      string
		got, want int64
	}{
		{"BW_UNIT = 1<<24", bwUnit, 16777216},
		{"bbr_high_gain = 256*2885/1000+1 = 738+1", bbrHighGain, 739},
		{"bbr_drain_gain = 256*1000/2885 = 88", bbrDrainGain, 88},
		{"bbr_cwnd_gain = 256*2", bbrCwndGain, 512},
		{"bbr_pacing_gain[0] = 256*5/4", int64(bbrPacingGain[0]), 320},
		{"bbr_pacing_gain[1] = 256*3/4", int64(bbrPacingGain[1]), 192},
		{"bbr_pacing_gain[7] = 256", int64(bbrPacingGain[7]), 256},
		{"bbr_bw_rtts = CYCLE_LEN+2", bbrBWRTTs, 10},
		{"bbr_cycle_rand", bbrCycleRand, 7},
		{"bbr_min_rtt_win_sec", bbrMinRTTWinSec, 10},
		{"bbr_probe_rtt_mode_ms", bbrProbeRTTModeMs, 200},
		{"bbr_min_tso_rate", bbrMinTSORate, 1200000},
		{"bbr_pacing_margin_percent", bbrPacingMarginPct, 1},
		{"bbr_cwnd_min_target", bbrCwndMinTarget, 4},
		{"bbr_full_bw_thresh = 256*5/4", bbrFullBWThresh, 320},
		{"bbr_full_bw_cnt", bbrFullBWCnt, 3},
		{"bbr_lt_intvl_min_rtts", bbrLTIntvlMinRTTs, 4},
		{"bbr_lt_loss_thresh (50/256 ≈ 20%)", bbrLTLossThresh, 50},
		{"bbr_lt_bw_ratio = 256/8", bbrLTBWRatio, 32},
		{"bbr_lt_bw_diff = 4000/8 bytes/s", bbrLTBWDiff, 500},
		{"bbr_lt_bw_max_rtts", bbrLTBWMaxRTTs, 48},
		{"bbr_extra_acked_gain", bbrExtraAckedGain, 256},
		{"bbr_extra_acked_win_rtts", bbrExtraAckedWinRTTs, 5},
		{"bbr_ack_epoch_acked_reset_thresh = 1<<20", bbrAckEpochAckedResetThr, 1048576},
		{"bbr_extra_acked_max_us", bbrExtraAckedMaxUs, 100000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
			}
		})
	}
}

// TestBBRRateBytesPerSec checks bbr_rate_bytes_per_sec against a hand
// computation: 100 Mbit/s of 1500-byte packets is 8333.33 pkts/s =
// 0.00833 pkts/us, i.e. bw = floor(0.0083333 * 2^24) = 139810 units.
// rate = 139810 * 1500 * 256 >> 8 = 209715000; * (1e6/100*99 = 990000) =
// 207617850000000; >> 24 = floor(12374988.2) = 12374988 bytes/s (99% of
// 12.5 MB/s, less the truncation of bw).
func TestBBRRateBytesPerSec(t *testing.T) {
	st := &State{MSS: 1500}
	if got, want := bbrRateBytesPerSec(st, 139810, bbrUnit, 1), uint64(12374988); got != want {
		t.Errorf("bbrRateBytesPerSec(139810, 1.0, 1%%) = %d, want %d", got, want)
	}
	// The same with gain 5/4: 139810*1500*320>>8 = 262143750; *990000 >> 24.
	if got, want := bbrRateBytesPerSec(st, 139810, 320, 1), uint64(262143750*990000>>24); got != want {
		t.Errorf("bbrRateBytesPerSec(139810, 1.25, 1%%) = %d, want %d", got, want)
	}
}

// TestMinmaxRunningMax checks the windowed max against lib/win_minmax.c's
// documented behaviour: a new max replaces everything; an old max expires
// once the window passes and the best later sample takes over.
func TestMinmaxRunningMax(t *testing.T) {
	var m Minmax[uint32]
	m.Reset(0, 0)
	steps := []struct {
		t, v, want uint32
	}{
		{1, 100, 100}, // new max
		{2, 50, 100},
		{5, 80, 100},
		{8, 60, 100},
		{12, 70, 80}, // t=12: 100 (t=1) is out of the 10-round window
		{16, 10, 70}, // 80 (t=5) expired too; 70 (t=12) remains
	}
	for _, s := range steps {
		if got := m.RunningMax(10, s.t, s.v); got != s.want {
			t.Errorf("runningMax(win 10, t %d, %d) = %d, want %d", s.t, s.v, got, s.want)
		}
	}
}

// cleanPath is the 100 Mbit/s, 40 ms path of the BBR paper's examples with
// a buffer (1000 packets, 3 BDP) deep enough that STARTUP causes no loss.
func cleanPath() pathConfig {
	return pathConfig{
		rate: 100 * units.Mbps, baseRTT: 40 * sim.Millisecond,
		bufferPkts: 1000, mss: 1500, seed: 1,
	}
}

// TestBBRCleanPathStateMachine runs BBRv1 on a clean path and checks the
// phases against the algorithm's definition: STARTUP ends after three
// rounds with < 25% bw growth; the bw estimate is the link rate; DRAIN
// ends once inflight falls to the BDP; PROBE_BW phases last one min_rtt
// each (the probe phase until inflight reaches 1.25 BDP) and cycle through
// the 8 gains; PROBE_RTT starts 10 s after the last min_rtt update and
// holds cwnd at 4 packets for at least 200 ms.
func TestBBRCleanPathStateMachine(t *testing.T) {
	cfg := cleanPath()
	p := newPathSim(t, "bbr", cfg)
	b := p.alg.Algorithm.(*bbr1)

	var (
		lastMode          = bbrStartup
		drainExitInflight uint32
		drainExitTarget   uint32
		minRTTUpdated     sim.Time
		lastStamp         = b.minRTTStamp
		probeRTTEnter     sim.Time
		probeRTTExit      sim.Time
		maxCwndInProbeRTT uint32
		rounds            fullBWRounds
	)
	p.onAck = func(rs *RateSample) {
		rounds.observe(rs, p.st.Delivered, p.st.Now)
		if b.minRTTStamp != lastStamp && probeRTTEnter == 0 && b.mode != bbrProbeRTT {
			lastStamp, minRTTUpdated = b.minRTTStamp, p.st.Now
		}
		if lastMode == bbrDrain && b.mode == bbrProbeBW {
			drainExitInflight = p.st.InFlightPkts
			drainExitTarget = b.inflight(&p.st, b.maxBW(), bbrUnit)
		}
		if b.mode == bbrProbeRTT {
			if lastMode != bbrProbeRTT {
				probeRTTEnter = p.st.Now
			}
			maxCwndInProbeRTT = max(maxCwndInProbeRTT, p.st.CwndPkts)
		}
		if lastMode == bbrProbeRTT && b.mode != bbrProbeRTT && probeRTTExit == 0 {
			probeRTTExit = p.st.Now
		}
		lastMode = b.mode
	}
	p.run(startTime + 10700*sim.Time(sim.Millisecond))
	t.Logf("drain exit inflight %d (target %d); max bw %.2f Mbps; "+
		"PROBE_RTT %v after the last min_rtt update, for %v, max cwnd %d",
		drainExitInflight, drainExitTarget, bwToBps(&p.st, b.maxBW())/1e6,
		probeRTTEnter.Sub(minRTTUpdated), probeRTTExit.Sub(probeRTTEnter), maxCwndInProbeRTT)

	t.Run("startup exits after 3 rounds without 25% growth", func(t *testing.T) {
		modes := p.signal(t, "mode")
		drainAt := firstTimeAt(modes, bbrDrain)
		if drainAt == 0 {
			t.Fatalf("mode never became drain; modes %v", modes)
		}
		exit, log := rounds.fullPipe(cfg.mss)
		t.Logf("STARTUP's rounds:\n%s", log)
		if exit == nil {
			t.Fatalf("no three consecutive rounds without 25%% growth in the delivery rates; mode drain at %v", drainAt)
		}
		if exit.at != drainAt {
			t.Errorf("third consecutive round without 25%% growth began (round %d) at %v, drain started at %v; want the same ACK", exit.round, exit.at, drainAt)
		}
		// Startup doubles the rate each round from 10 packets: the pipe
		// (333 packets per round) fills after log2(33) ≈ 5 rounds, then
		// come the 3 plateau rounds.
		if exit.round < 7 || exit.round > 12 {
			t.Errorf("drain started in round %d, want 7..12", exit.round)
		}
	})
	t.Run("bw estimate is the link rate", func(t *testing.T) {
		got := bwToBps(&p.st, b.maxBW())
		if rel := math.Abs(got/float64(cfg.rate) - 1); rel > 0.02 {
			t.Errorf("max bw = %.0f bps, want 100e6 ± 2%%", got)
		}
	})
	t.Run("drain ends when inflight falls to the BDP", func(t *testing.T) {
		if drainExitInflight == 0 {
			t.Fatal("never left drain")
		}
		if drainExitInflight > drainExitTarget {
			t.Errorf("inflight at drain exit = %d, want ≤ bbr_inflight(bw, 1.0) = %d", drainExitInflight, drainExitTarget)
		}
		// The target is the BDP at min_rtt (40 ms + 0.12 ms serialisation:
		// 334.3 packets) plus the quantization budget, three TSO bursts of
		// sk_pacing_rate >> 10 (≈ 1 ms) each: at most 1.25·R (the PROBE_BW
		// gain), 11 packets, so ≤ 335 + 33 + 2 (even rounding, probe bump).
		minRTT := cfg.baseRTT + p.txTime()
		bdpMin := float64(cfg.rate) * minRTT.Seconds() / 8 / float64(cfg.mss)
		burst := math.Ceil(1.25 * float64(cfg.rate) / 8 / 1024 / float64(cfg.mss))
		hi := math.Ceil(bdpMin) + 3*burst + 2
		if float64(drainExitTarget) > hi || float64(drainExitTarget) < bdpMin {
			t.Errorf("bbr_inflight(bw, 1.0) = %d, want within [BDP, BDP + 3 bursts + 2] = [%.1f, %.0f]", drainExitTarget, bdpMin, hi)
		}
	})
	t.Run("probe_bw cycles through 8 gains, one min_rtt each", func(t *testing.T) {
		checkGainCycle(t, p, cfg)
	})
	t.Run("probe_rtt 10 s after the last min_rtt update, cwnd 4 for ≥ 200 ms", func(t *testing.T) {
		if probeRTTEnter == 0 {
			t.Fatalf("never entered PROBE_RTT (last min_rtt update %v)", minRTTUpdated)
		}
		// filter_expired = after(jiffies, stamp + 10*HZ): the first ACK
		// in jiffy stamp + 10001, where stamp is the update time truncated
		// to the ms, so 10.000 s to 10.001 s plus one inter-ACK gap later.
		wait := probeRTTEnter.Sub(minRTTUpdated)
		if wait < 10000*sim.Millisecond || wait > 10002*sim.Millisecond {
			t.Errorf("PROBE_RTT entered %v after the last min_rtt update, want 10.000 s..10.002 s", wait)
		}
		if maxCwndInProbeRTT > bbrCwndMinTarget {
			t.Errorf("max cwnd in PROBE_RTT = %d, want ≤ %d", maxCwndInProbeRTT, bbrCwndMinTarget)
		}
		if probeRTTExit == 0 {
			t.Fatal("never left PROBE_RTT")
		}
		// It takes about one RTT for inflight to fall to 4, then 200 ms
		// plus one round at 4 packets.
		dur := probeRTTExit.Sub(probeRTTEnter)
		if dur < 200*sim.Millisecond || dur > 300*sim.Millisecond {
			t.Errorf("PROBE_RTT lasted %v, want 200 ms..300 ms", dur)
		}
	})
}

// fullBWRounds re-derives bbr_check_full_bw_reached from the rate samples
// the driver hands BBR, not from BBR's own state. A packet-timed round
// starts on the ACK of a packet sent after the previous round's start was
// acked (prior_delivered ≥ the delivered count then, bbr_update_bw); the
// delivery rate is delivered/interval_us, and an app-limited sample counts
// only if it raises the max. At each round start the max over the last
// bbr_bw_rtts = 10 rounds, this one included, is compared with full_bw:
// 5/4 of it or more (bbr_full_bw_thresh) resets full_bw to it and the
// count to 0; less counts a round; the third (bbr_full_bw_cnt) ends
// STARTUP on that ACK.
type fullBWRounds struct {
	nextRoundDelivered uint32
	maxRate            []float64 // per round, packets/µs; [0] before the first round
	fullBW             float64
	cnt                int
	checks             []fullBWCheck
}

type fullBWCheck struct {
	round      int
	at         sim.Time
	bw, fullBW float64 // packets/µs; fullBW as it was before the check
	grew       bool
}

func (f *fullBWRounds) observe(rs *RateSample, delivered uint32, now sim.Time) {
	intervalUs := rs.Interval / sim.Microsecond
	if rs.Delivered < 0 || intervalUs <= 0 {
		return
	}
	if len(f.maxRate) == 0 {
		f.maxRate = []float64{0}
	}
	roundStart := int32(rs.PriorDelivered-f.nextRoundDelivered) >= 0
	if roundStart {
		f.nextRoundDelivered = delivered
		f.maxRate = append(f.maxRate, 0)
	}
	round := len(f.maxRate) - 1
	rate := float64(rs.Delivered) / float64(intervalUs)
	bw := slices.Max(f.maxRate[max(0, round-bbrBWRTTs+1):])
	if !rs.IsAppLimited || rate >= bw {
		f.maxRate[round] = max(f.maxRate[round], rate)
		bw = max(bw, rate)
	}
	if !roundStart || rs.IsAppLimited || f.cnt >= 3 {
		return
	}
	c := fullBWCheck{round: round, at: now, bw: bw, fullBW: f.fullBW, grew: bw >= 1.25*f.fullBW}
	if c.grew {
		f.fullBW, f.cnt = bw, 0
	} else {
		f.cnt++
	}
	f.checks = append(f.checks, c)
}

// fullPipe returns the check that saw the third consecutive round without
// 25 % growth (nil if none) and a table of the rounds for the log.
func (f *fullBWRounds) fullPipe(mss units.Bytes) (*fullBWCheck, string) {
	var b strings.Builder
	mbps := float64(mss) * 8 // packets/µs to Mbit/s
	for _, c := range f.checks {
		fmt.Fprintf(&b, "  round %2d: max delivery rate %6.2f Mbps, bw %6.2f, full_bw %6.2f, grew ≥ 25%%: %v\n",
			c.round, f.maxRate[c.round]*mbps, c.bw*mbps, c.fullBW*mbps, c.grew)
	}
	if f.cnt < 3 {
		return nil, b.String()
	}
	return &f.checks[len(f.checks)-1], b.String()
}

// checkGainCycle checks the PROBE_BW gain cycle between the first entry to
// PROBE_BW and PROBE_RTT: indices advance by one modulo 8, the gains are
// 1.25, 0.75, then 1.0 ×6, and each phase lasts about one min_rtt.
func checkGainCycle(t *testing.T, p *pathSim, cfg pathConfig) {
	t.Helper()
	modes := p.signal(t, "mode")
	start, end := firstTimeAt(modes, bbrProbeBW), firstTimeAt(modes, bbrProbeRTT)
	idx := p.signal(t, "cycle_idx")
	gains := p.signal(t, "pacing_gain")
	minRTT := cfg.baseRTT + p.txTime()
	wantGain := [8]float64{1.25, 0.75, 1, 1, 1, 1, 1, 1}
	var phases, seen int
	for i := 1; i < len(idx); i++ {
		at, prevAt := idx[i].t, idx[i-1].t
		if at <= start || at >= end {
			continue
		}
		prev, cur := int(idx[i-1].v), int(idx[i].v)
		if cur != (prev+1)%8 {
			t.Errorf("cycle_idx %d → %d at %v, want +1 mod 8", prev, cur, at)
		}
		if g := valueAt(gains, at); g != wantGain[cur] {
			t.Errorf("pacing_gain in phase %d = %v, want %v", cur, g, wantGain[cur])
		}
		if prevAt < start {
			continue // first phase began with the mode change
		}
		seen |= 1 << prev
		phases++
		d := at.Sub(prevAt)
		lo, hi := minRTT, minRTT+5*sim.Millisecond
		switch prev {
		case 0: // ends once inflight reaches 1.25 BDP, at least min_rtt
			hi = 2 * minRTT
		case 1: // ends early once inflight falls to the BDP
			lo = 0
		}
		if d < lo || d > hi {
			t.Errorf("phase %d lasted %v, want %v..%v", prev, d, lo, hi)
		}
	}
	if seen != 0xFF || phases < 16 {
		t.Errorf("saw %d phases covering set %08b, want ≥ 16 covering all 8", phases, seen)
	}
}

// firstTimeAt returns when the signal first took value v (0 if never).
func firstTimeAt(recs []signalRecord, v float64) sim.Time {
	for _, r := range recs {
		if r.v == v {
			return r.t
		}
	}
	return 0
}

// valueAt returns the signal's value at time t.
func valueAt(recs []signalRecord, t sim.Time) float64 {
	v := math.NaN()
	for _, r := range recs {
		if r.t > t {
			break
		}
		v = r.v
	}
	return v
}

// TestBBRRandomLoss checks BBRv1's loss tolerance (ReBBR, reproducing the
// BBR paper's Figure 8): with random loss p up to 10% and a deep buffer,
// BBR keeps its delivery rate near the available (1-p)·R, since it does not
// treat loss as congestion. The bound is 85% of (1-p)·R.
func TestBBRRandomLoss(t *testing.T) {
	for _, p := range []float64{0.01, 0.05, 0.10} {
		t.Run(fmt.Sprintf("loss=%g%%", 100*p), func(t *testing.T) {
			cfg := cleanPath()
			cfg.lossProb = p
			s := newPathSim(t, "bbr", cfg)
			got := s.rateBetween(startTime+sim.Time(sim.Second), startTime+6*sim.Time(sim.Second))
			avail := (1 - p) * float64(cfg.rate)
			ratio := float64(got) / avail
			t.Logf("loss %.0f%%: delivered %.2f Mbps = %.3f of (1-p)·R", 100*p, float64(got)/1e6, ratio)
			if ratio < 0.85 {
				t.Errorf("delivery at %.0f%% loss = %.3f of (1-p)·R, want ≥ 0.85", 100*p, ratio)
			}
		})
	}
}

// TestBBRPolicer checks BBRv1's long-term (policer) estimator against the
// behaviour bbr_lt_bw_sampling documents: behind a 10 Mbit/s token-bucket
// policer (100 KB bucket) on a 100 Mbit/s path, two consecutive sampling
// intervals of ≥ 4 rounds with loss ≥ 50/256 and consistent rates make BBR
// pace at their average rate (lt_bw ≈ 10 Mbit/s, lt_use_bw = 1) for
// bbr_lt_bw_max_rtts = 48 rounds, during which the drops stop (after the
// first two rounds, which still ACK packets sent at the higher rate).
func TestBBRPolicer(t *testing.T) {
	cfg := cleanPath()
	cfg.policerRate = 10 * units.Mbps
	cfg.policerBurst = 100_000
	p := newPathSim(t, "bbr", cfg)
	b := p.alg.Algorithm.(*bbr1)
	type episode struct {
		startRound, endRound uint32
		ltBW                 float64
		lostDuring           uint32
		start                sim.Time
	}
	var (
		eps     []episode
		using   bool
		lostAt2 uint32
	)
	p.onAck = func(*RateSample) {
		switch {
		case b.ltUseBW && !using:
			eps = append(eps, episode{startRound: b.rttCnt, ltBW: bwToBps(&p.st, b.ltBW), start: p.st.Now})
		case b.ltUseBW && b.rttCnt < eps[len(eps)-1].startRound+2:
			lostAt2 = p.st.Lost
		case !b.ltUseBW && using:
			e := &eps[len(eps)-1]
			e.endRound, e.lostDuring = b.rttCnt, p.st.Lost-lostAt2
		}
		using = b.ltUseBW
	}
	p.run(startTime + 6*sim.Time(sim.Second))
	t.Logf("lt_bw episodes: %+v", eps)
	if len(eps) < 2 || eps[0].endRound == 0 {
		t.Fatalf("saw %d completed lt_use_bw episodes in 6 s, want ≥ 2", len(eps))
	}
	if d := eps[0].start.Sub(startTime); d > sim.Second {
		t.Errorf("policer detected at %v, want within 1 s", d)
	}
	for i, e := range eps {
		if rel := math.Abs(e.ltBW/float64(cfg.policerRate) - 1); rel > 0.05 {
			t.Errorf("episode %d: lt_bw = %.0f bps, want the policed 10e6 ± 5%%", i, e.ltBW)
		}
		if e.endRound == 0 {
			continue
		}
		if n := e.endRound - e.startRound; n != bbrLTBWMaxRTTs {
			t.Errorf("episode %d used lt_bw for %d rounds, want bbr_lt_bw_max_rtts = %d", i, n, bbrLTBWMaxRTTs)
		}
		if e.lostDuring > 0 {
			t.Errorf("episode %d: %d packets lost after 2 rounds at lt_bw, want 0", i, e.lostDuring)
		}
	}
}

// TestBBRInitPacingRateFromRTT traces bbr_init_pacing_rate_from_rtt by hand
// (tcp_bbr.c, 6.18), as a differential run against the kernel's compiled
// file found it: bw = cwnd·BW_UNIT/rtt_us goes to bbr_bw_to_pacing_rate as a
// u32, and "an RTT seen" is tp->srtt_us != 0, which a first sample of 0 µs
// leaves at 1 (an eighth of a µs).
//
//   - cwnd 300 over an srtt of 1 µs: bw = 300·2^24 = 5,033,164,800, which as
//     a u32 is 738,197,504 (44 packets per µs). bbr_rate_bytes_per_sec at
//     high_gain 739, MSS 1448, margin 1 %: 738,197,504·1448·739 >> 8 =
//     3,085,655,958,208 (whole), ·990,000 >> 24 = 182,079,438,750 bytes/s.
//   - cwnd 10 and srtt_us = 1 (SRTT 125 ns): rtt_us = max(1 >> 3, 1) = 1, so
//     bw = 10·2^24 and the rate 41,381,690,625 bytes/s, with has_seen_rtt
//     set; before any sample (srtt_us 0) the nominal 1 ms gives bw =
//     10·2^24/1000 = 167,772 and 41,381,651 bytes/s.
func TestBBRInitPacingRateFromRTT(t *testing.T) {
	cases := []struct {
		name      string
		cwnd      uint32
		srtt      sim.Duration
		wantBytes uint64
		wantSeen  bool
	}{
		{"bw wraps as a u32", 300, sim.Microsecond, 182_079_438_750, true},
		{"srtt_us = 1 is an RTT seen", 10, sim.Microsecond / 8, 41_381_690_625, true},
		{"no sample: nominal 1 ms", 10, 0, 41_381_651, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := &State{MSS: 1448, CwndPkts: tc.cwnd, SRTT: tc.srtt}
			var c bbrCore
			c.initPacingRateFromRTT(st, bbrRateBytesPerSec, bbrHighGain)
			if got := pacingBytesPerSec(st); got != tc.wantBytes || c.hasSeenRTT != tc.wantSeen {
				t.Errorf("pacing rate %d B/s, has_seen_rtt %v; want %d, %v", got, c.hasSeenRTT, tc.wantBytes, tc.wantSeen)
			}
		})
	}
}
