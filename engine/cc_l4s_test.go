package engine

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// signalSeries is the (time, value) history of a CC signal of flow 0.
func signalSeries(r *Run, name string) (ts []sim.Time, vs []float64) {
	id := r.Trace.SignalIndex(name)
	s := &r.Trace.SignalT
	for i := range s.T {
		if s.Signal[i] == id && s.Flow[i] == 0 {
			ts, vs = append(ts, sim.Time(s.T[i])), append(vs, s.Value[i])
		}
	}
	return ts, vs
}

// BBRv1 on a clean 100 Mbps / 40 ms path with a 1-BDP FIFO, observed
// through its trace signals (tcp_bbr.c constants):
//   - STARTUP (mode 0) exits when bw grew < 25 % for 3 rounds
//     (bbr_full_bw_cnt = 3): cwnd doubles per round from IW10, so bw
//     reaches the link in ~log2(333/10) ≈ 5 rounds, +3 plateau rounds,
//     +1 for the first sample — within 12 rounds, each at most 80 ms once
//     the 1-BDP buffer fills, after the 40 ms handshake;
//   - DRAIN (mode 1) ends once inflight ≤ BDP, within a few rounds;
//   - PROBE_BW (mode 2) cycles its 8 gains in order, each phase one
//     min_rtt (40 ms) long — the 5/4 phase may run past it until inflight
//     reaches 5/4·BDP, the 3/4 phase may end early at inflight ≤ BDP;
//   - PROBE_RTT (mode 3) comes every 10 s (bbr_min_rtt_win_sec) and holds
//     cwnd at 4 packets (bbr_cwnd_min_target) for ≥ 200 ms
//     (bbr_probe_rtt_mode_ms).
//
// Measured: STARTUP exits at 683 ms, DRAIN at 741 ms, phases of 37–63 ms,
// PROBE_RTT at 10.04 s (250 ms) and 20.29 s.
func TestBBRv1StateMachine(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(10000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
	scn := tcpScenario("bbr", access, bn, 0, 25*sim.Second, linuxOpts())
	scn.Trace.Detail = config.TraceChange
	r := run(t, scn)
	mt, mv := signalSeries(r, "mode")
	var enter [4][]sim.Time
	var leave [4][]sim.Time
	for i := range mv {
		if i > 0 && mv[i] == mv[i-1] {
			continue
		}
		if i > 0 {
			leave[int(mv[i-1])] = append(leave[int(mv[i-1])], mt[i])
		}
		enter[int(mv[i])] = append(enter[int(mv[i])], mt[i])
	}
	if len(leave[0]) != 1 || leave[0][0] > sim.Time(40*sim.Millisecond+12*80*sim.Millisecond) {
		t.Fatalf("STARTUP exits at %v, want once, by 1 s (handshake + 12 rounds of ≤ 80 ms)", leave[0])
	}
	if ft, fv := signalSeries(r, "full_bw_cnt"); len(fv) == 0 || fv[len(fv)-1] != 3 || ft[len(ft)-1] > leave[0][0] {
		t.Errorf("full_bw_cnt at STARTUP exit = %v, want 3 (the plateau rule ended STARTUP)", fv)
	}
	if len(leave[1]) != 1 || leave[1][0].Sub(leave[0][0]) > 4*40*sim.Millisecond {
		t.Errorf("DRAIN %v → %v, want one DRAIN of ≤ 4 rounds", leave[0], leave[1])
	}
	if len(enter[3]) != 2 {
		t.Fatalf("PROBE_RTT entered at %v, want twice in 25 s", enter[3])
	}
	for i, at := range enter[3] {
		want := sim.Time(sim.Duration(i+1) * 10 * sim.Second)
		if at < want || at > want.Add(sim.Second) {
			t.Errorf("PROBE_RTT %d at %v, want within 1 s after %v", i, at, want)
		}
		if d := leave[3][i].Sub(at); d < 200*sim.Millisecond {
			t.Errorf("PROBE_RTT %d lasts %v, want ≥ 200 ms", i, d)
		}
		minCwnd := uint32(math.MaxUint32)
		for _, row := range r.Trace.FlowsT.Rows {
			if row.T > at.Add(sim.Duration(50*sim.Millisecond)) && row.T < leave[3][i] {
				minCwnd = min(minCwnd, row.CwndPkts)
			}
		}
		if minCwnd != 4 {
			t.Errorf("cwnd in PROBE_RTT %d = %d, want 4 packets", i, minCwnd)
		}
	}
	ct, cv := signalSeries(r, "cycle_idx")
	phases := 0
	for i := 1; i < len(ct); i++ {
		if ct[i-1] < leave[1][0] || ct[i] > sim.Time(9*sim.Second) || cv[i] == cv[i-1] {
			continue
		}
		if want := math.Mod(cv[i-1]+1, 8); cv[i] != want {
			t.Errorf("cycle_idx %v → %v at %v, want → %v", cv[i-1], cv[i], ct[i], want)
		}
		// bbr_is_next_cycle_phase: a phase lasts one min_rtt, but the 5/4
		// phase also waits for inflight to reach 5/4·BDP (or a loss) and the
		// 3/4 phase may end early once inflight is down to the BDP.
		lo, hi := 39*sim.Millisecond, 42*sim.Millisecond
		switch cv[i-1] {
		case 0:
			hi = 80 * sim.Millisecond
		case 1:
			lo = 0
		}
		if d := ct[i].Sub(ct[i-1]); d < lo || d > hi {
			t.Errorf("phase %v lasted %v, want %v–%v", cv[i-1], d, lo, hi)
		}
		phases++
	}
	if phases < 8*20 {
		t.Errorf("%d PROBE_BW phases in 9 s, want ≥ 160 (one per 40 ms)", phases)
	}
	fs := r.Summary("").Flows[0]
	if bw := fs.CCFinal["bw"]; math.Abs(bw-100e6) > 10e6 {
		t.Errorf("cc_final bw = %.4g bps, want the 100 Mbps link ± 10%%", bw)
	}
	if mr := fs.CCFinal["min_rtt"]; mr < 40000 || mr > 40500 {
		t.Errorf("cc_final min_rtt = %v us, want the 40 ms base RTT", mr)
	}
}

// BBRv3 under random loss on the rebbr path (100 Mbps, 100 ms, 1 BDP;
// loss drawn as packets enter the bottleneck), goodput over 10–30 s. v3 treats loss as
// a signal: bbr_adapt_lower_bounds cuts bw_lo and inflight_lo by
// beta = 30 % in every non-probing round that saw a loss (at 1 % and
// ~800 packets a round, nearly every round), and bbr_is_inflight_too_high
// ends a probe when a sample's lost/tx_in_flight exceeds loss_thresh = 2 %,
// which Poisson noise at 1 % mean loss does on some samples. So v3 does
// not reach v1's near-ideal line below the 2 % threshold. Measured at
// p = 1 %, seed 1: 0.798 of the 96.53 Mbps payload rate (whole 30 s runs,
// seeds 1–3: 0.79, 0.86, 0.87); asserted 0.65–0.90.
// Above the threshold (p = 3 %) every probe ends too high and inflight_hi
// falls far below the BDP (833 packets): measured 27 packets (seed 1),
// utilisation 0.04; asserted inflight_hi < BDP/4.
func TestBBRv3RandomLoss(t *testing.T) {
	link := payloadRate(100e6)
	for _, p := range []float64{0.01, 0.03} {
		t.Run(fmt.Sprintf("p=%v", p), func(t *testing.T) {
			r := builtinRun(t, "rebbr", "flows.f0.cc=bbr3", fmt.Sprintf("links.bottleneck.ab.loss.p=%v", p))
			util := deliveredBetween(r, 0, sim.Time(10*sim.Second)) / link
			hi := r.Flows[0].(*tcpFlow).snd.CCFinal()["inflight_hi"]
			t.Logf("utilisation %.3f, inflight_hi %v", util, hi)
			if p < 0.02 && (util < 0.65 || util > 0.9) {
				t.Errorf("utilisation(p=%v) = %.3f, want 0.65–0.90", p, util)
			}
			if p > 0.02 && (hi == 0 || hi > 833/4) {
				t.Errorf("inflight_hi(p=%v) = %v, want set and < BDP/4 = 208 packets", p, hi)
			}
		})
	}
}

// DCTCP on the dctcp-dc built-in (1 Gbps, 100 µs base RTT, fifo marking
// CE at K = 65 packets). The DCTCP paper (§3.3) predicts the link fully
// used with the queue in a sawtooth just under K + 1 (its amplitude
// √(W*/2) ≈ 6 packets for W* = BDP + K ≈ 73), and in steady state the
// fraction of marked packets equals α. The paper's model has packets
// arrive one by one; an unpaced Linux sender defers to send TSO chunks
// (tcp_tso_should_defer) of up to cwnd/tcp_tso_win_divisor = W*/3 ≈ 24
// packets, a train that crosses K up to a chunk early, so the sawtooth
// may sit up to half a chunk lower. Measured over 1–5 s: goodput 965.3
// Mbps (100.0 % of the 965.33 Mbps payload rate), sojourn p50 54.2
// packets (62.6 before the deferral was modelled), α 0.029 against 3.2 %
// of packets marked. Asserted: ≥ 95 % utilisation; queue p50 within
// [K − 10 − W*/6, K + 10] packets; α within ±30 % of the marked fraction.
func TestDCTCPStepMarking(t *testing.T) {
	r := builtinRun(t, "dctcp-dc")
	d, _ := r.Net.Dir("bottleneck", "ab")
	r.RunUntil(sim.Time(sim.Second))
	enq0, marks0 := d.Stats.Enqueued, d.Stats.Marks
	got := deliveredBetween(r, 0, sim.Time(sim.Second))
	util := got / payloadRate(1e9)
	frac := float64(d.Stats.Marks-marks0) / float64(d.Stats.Enqueued-enq0)
	s := r.Summary("")
	alpha := s.Flows[0].CCFinal["alpha"]
	perPkt := units.TxTime(1500, units.Gbps)
	qPkts := float64(*s.Queues[2].SojournP50Ps) / float64(perPkt)
	t.Logf("utilisation %.4f, queue p50 %.1f packets, alpha %.4f, marked %.4f", util, qPkts, alpha, frac)
	if util < 0.95 {
		t.Errorf("utilisation = %.4f, want ≥ 0.95", util)
	}
	const wStar = 1e9*100e-6/(1500*8) + 65
	if qPkts < 65-10-wStar/6 || qPkts > 65+10 {
		t.Errorf("queue p50 = %.1f packets, want [K − 10 − W*/6, K + 10] = [%.1f, 75]", qPkts, 65-10-wStar/6)
	}
	if math.Abs(alpha-frac) > 0.3*frac {
		t.Errorf("alpha = %.4f, want the marked fraction %.4f ± 30%%", alpha, frac)
	}
}

// Prague and CUBIC on the l4s built-in (100 Mbps DualPI2, 40 ms base
// RTT), run to 60 s and measured over 10–60 s so the classic flow has a
// dozen loss events to average over.
//
// RFC 9332's coupling p_C = (p_L/k)², k = 2, makes a Reno-like window
// 1.22/√p_C = 2.44/p_L and a DCTCP fluid window 2/p_L; the tc-dualpi2(8)
// page calls this "maintaining window fairness". Neither the window ratio
// nor that fluid model is what the kernels' mechanisms give on this path;
// the audit of sch_dualpi2.c (mainline) and tcp_prague.c (L4STeam, v0.7)
// found the port faithful (step, coupling, overload, WRR credit, PI2
// update; RTT target, transition, AI scaling, alpha EWMA, Reno fallback,
// pacing) and the ratio made of three kernel-level effects:
//   - rates are windows over RTTs, and the classic RTT carries PI2's
//     ~13 ms of classic queue while the L queue holds ~0.4 ms: ×1.32;
//   - Prague reduces once per CWR episode (tcp_enter_cwr →
//     prague_enter_cwr), which lasts an RTT and ignores the marks inside
//     it, so under the PI marks its window is x/p_L, x ≈ 2.7 (see
//     TestPragueRandomMarking), not 2/p_L;
//   - CUBIC answers loss events, and p' swings with CUBIC's own sawtooth
//     (E[p'²] ≈ 3·E[p']²), so its loss-event rate is not E[p']².
//
// So the test predicts the rate ratio from the measured congestion
// signals and each CC's response function: Prague x/p_L with p_L the
// L-queue's marked fraction; CUBIC max(Reno-friendly 1.22/√e, the CUBIC
// region 1.054·RTT^¾/e^¾ (RFC 9438 §5.1's C = 0.4, β = 0.7)) with e its
// loss events per packet; each over its own mean srtt. Measured (seed 1,
// 10–60 s, 2026-12-07, since RTT samples are taken between µs stamps):
// Prague 68.38 Mbps, CUBIC 28.09 Mbps, ratio 2.43; predicted 2.26; p_L
// 1.28 %, e 9.9e-5 (12 events); W_L 230 packets (model 212), W_C 123
// (model 123); srtt 40.39 and 52.69 ms. Seeds 2 and 3: ratios 1.88 and
// 2.05. CUBIC's share rests on a dozen loss events, so a microsecond moved
// anywhere moves it: before that change seed 1 gave 57.39 and 39.09 Mbps,
// ratio 1.47 against 1.60 predicted. Asserted: Prague's window within
// 15 % of x/p_L, CUBIC's within 25 % of its response, the ratio within
// 20 % of the prediction and in 1.3–3.0; Prague's RTT p99 −
// base ≤ 2 ms (its L-queue delay), CUBIC's p50 − base within the 15 ms
// PI2 target ± 5 ms; the link ≥ 90 % used.
func TestPragueCubicDualPI2(t *testing.T) {
	r := builtinRun(t, "l4s", "runtime.duration=60s")
	fl, fc := r.Flows[0].(*tcpFlow), r.Flows[1].(*tcpFlow)
	bn, _ := r.Net.Dir("bottleneck", "ab")
	dq := bn.Qdisc().(*qdisc.DualPI2)
	from := sim.Time(10 * sim.Second)
	r.RunUntil(from)
	bl, bc := fl.rcv.BytesDelivered(), fc.rcv.BytesDelivered()
	q0 := dq.Stats
	ev0, seg0 := fc.snd.Stats.Recoveries+fc.snd.Stats.RTOs, fc.snd.Stats.SegsSent
	// The queue delays are steady-state properties: drop the RTT samples
	// of slow start (whose overshoot can fill the L queue).
	fl.snd.Stats.RTT, fc.snd.Stats.RTT = trace.Hist{}, trace.Hist{}
	var srttL, srttC float64
	n := 0
	for ts := from; ts < r.Horizon(); ts = ts.Add(10 * sim.Millisecond) {
		r.RunUntil(ts)
		srttL += fl.snd.SRTT().Seconds()
		srttC += fc.snd.SRTT().Seconds()
		n++
	}
	r.RunToEnd()
	srttL, srttC = srttL/float64(n), srttC/float64(n)
	secs := r.Horizon().Sub(from).Seconds()
	rl := float64(fl.rcv.BytesDelivered()-bl) * 8 / secs
	rc := float64(fc.rcv.BytesDelivered()-bc) * 8 / secs
	q := dq.Stats
	pL := float64(q.LMarks-q0.LMarks+q.StepMarks-q0.StepMarks) / float64(q.LSent-q0.LSent)
	events := fc.snd.Stats.Recoveries + fc.snd.Stats.RTOs - ev0
	e := float64(events) / float64(fc.snd.Stats.SegsSent-seg0)
	x := (1 - pL) + math.Sqrt((1-pL)*(1-pL)+2*(1-pL))
	wlModel := x / pL
	wcModel := math.Max(1.22/math.Sqrt(e), 1.0538*math.Pow(srttC, 0.75)/math.Pow(e, 0.75))
	wl, wc := rl*srttL/(1500*8), rc*srttC/(1500*8) // packets of the 1500-byte wire size
	pred := wlModel / wcModel * srttC / srttL
	base := r.Net.BaseRTT(r.Net.Node("h1").Index, r.Net.Node("h2").Index)
	s := r.Summary("")
	lq := sim.Duration(*s.Flows[0].RTTP99Ps) - base
	cq := sim.Duration(*s.Flows[1].RTTP50Ps) - base
	t.Logf("prague %.4g Mbps, cubic %.4g Mbps, ratio %.3f, predicted %.3f; p_L %.4f, e %.3g (%d events); W_L %.0f (model %.0f), W_C %.0f (model %.0f); srtt %.2f / %.2f ms; L queue p99 %v, classic queue p50 %v",
		rl/1e6, rc/1e6, rl/rc, pred, pL, e, events, wl, wlModel, wc, wcModel, srttL*1e3, srttC*1e3, lq, cq)
	if events < 8 {
		t.Fatalf("CUBIC loss events over 10–60 s = %d, want ≥ 8 to estimate its loss-event rate", events)
	}
	if math.Abs(wl/wlModel-1) > 0.15 {
		t.Errorf("Prague window = %.0f packets, want x/p_L = %.0f ± 15%%", wl, wlModel)
	}
	if math.Abs(wc/wcModel-1) > 0.25 {
		t.Errorf("CUBIC window = %.0f packets, want its response at e = %.3g: %.0f ± 25%%", wc, e, wcModel)
	}
	ratio := rl / rc
	if math.Abs(ratio/pred-1) > 0.2 {
		t.Errorf("rate ratio prague/cubic = %.3f, want the response functions' %.3f ± 20%%", ratio, pred)
	}
	// The band only rejects a broken coupling; the prediction above is the
	// check. A paced CUBIC measured 1.62 here, the stock host's unpaced one
	// (pacing auto) 2.40: its bursts see more loss events per window.
	if ratio < 1.3 || ratio > 3.0 {
		t.Errorf("rate ratio prague/cubic = %.3f, want 1.3–3.0", ratio)
	}
	if lq > 2*sim.Millisecond {
		t.Errorf("Prague RTT p99 − base = %v, want ≤ 2 ms", lq)
	}
	if cq < 10*sim.Millisecond || cq > 20*sim.Millisecond {
		t.Errorf("CUBIC RTT p50 − base = %v, want the 15 ms target ± 5 ms", cq)
	}
	if sum := (rl + rc) / payloadRate(100e6); sum < 0.9 {
		t.Errorf("link use = %.3f, want ≥ 0.9", sum)
	}
}

// FQ-CoDel gives each of 8 bulk flows of mixed CCs (2 CUBIC, 2 Reno,
// 2 BBRv1, 2 BBRv3) an equal share of a 100 Mbps, 40 ms bottleneck: DRR
// serves backlogged flows a quantum each per round whatever their CC, and
// CoDel keeps each flow's own queue short. Jain's index of the 10–30 s
// rates: measured 0.996 (12.4, 12.5, 11.1, 11.1, 12.8, 13.0, 11.6,
// 11.5 Mbps); asserted ≥ 0.95.
func TestFQCoDelMixedCCs(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(10000)}
	fqc := config.Qdisc{Kind: config.FQCoDel, Limit: config.QueueLimit{Packets: 10240}, Target: 5 * sim.Millisecond,
		Interval: 100 * sim.Millisecond, ECN: true, Flows: 1024, Quantum: 1514}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: fqc}
	scn := tcpScenario("cubic", access, bn, 0, 30*sim.Second, linuxOpts())
	scn.Flows = nil
	for i, c := range []string{"cubic", "cubic", "reno", "reno", "bbr", "bbr", "bbr3", "bbr3"} {
		scn.Flows = append(scn.Flows, config.Flow{ID: fmt.Sprintf("f%d", i), Src: "h1", Dst: "h2", Params: &config.Params{CC: c, TCP: linuxOpts()}})
	}
	r, err := New(scn, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.RunUntil(sim.Time(10 * sim.Second))
	var b0 []units.Bytes
	for _, f := range r.Flows {
		b0 = append(b0, f.(*tcpFlow).rcv.BytesDelivered())
	}
	r.RunToEnd()
	var x []float64
	for i, f := range r.Flows {
		x = append(x, float64(f.(*tcpFlow).rcv.BytesDelivered()-b0[i])*8/20)
	}
	t.Logf("rates %.4g bit/s, Jain %.4f", x, jain(x))
	if j := jain(x); j < 0.95 {
		t.Errorf("Jain index = %.4f, want ≥ 0.95", j)
	}
}

// A paced flow leaves its host at its pacing rate through the host's fq
// qdisc: the sender stamps each packet's earliest departure time
// (skb->tstamp = tcp_wstamp_ns, advanced by each chunk's length at the
// pacing rate, tcp_update_skb_after_send) and fq holds packets until then.
// The clock counts payload bytes only (tcp_update_skb_after_send is passed
// the header-less original skb), so with the pacing rate pinned at 20 Mbps
// on a 100 Mbps path the access link carries 20 Mbps of payload in
// full-sized segments of 1448 + 52 header bytes: 20·1500/1448 = 20.72 Mbps
// on the wire, within 1 % (a clock counting wire bytes would give 20.00,
// 3.5 % low).
func TestFQHonoursPacing(t *testing.T) {
	fq := config.Qdisc{Kind: config.FQ, Limit: config.QueueLimit{Packets: 10000}, Quantum: 3028, InitialQuantum: 15140,
		FlowLimit: 100, Horizon: 10 * sim.Second}
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fq}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
	r, err := New(tcpScenario("cubic", access, bn, 0, 6*sim.Second, linuxOpts()), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rate := 20 * units.Mbps
	r.RunUntil(sim.Time(sim.Second))
	if err := r.Act(Action{Flow: "f0", PacingRate: &rate}); err != nil {
		t.Fatalf("Act: %v", err)
	}
	a, _ := r.Net.Dir("access", "ab")
	r.RunUntil(sim.Time(3 * sim.Second))
	sent0 := a.Stats.SentBytes
	r.RunToEnd()
	got := float64(a.Stats.SentBytes-sent0) * 8 / 3
	t.Logf("access rate %.4g bit/s under a %v pacing rate", got, rate)
	want := float64(rate) * 1500 / 1448
	if math.Abs(got-want) > 0.01*want {
		t.Errorf("access link rate = %.4g bit/s, want pacing rate·1500/1448 = %.4g ± 1%%", got, want)
	}
}

// The receiver's CE echo follows the CC's tcp_congestion_ops flags: DCTCP
// (TCP_CONG_NEEDS_ECN) echoes per packet, Prague negotiates AccECN, and the
// google/bbr v3 branch's BBR (TCP_CONG_WANTS_CE_EVENTS) echoes per packet
// through dctcp_ece_ack_update only when bbr_can_use_ecn: TCP_ECN_OK and
// TCP_ECN_LOW (the route feature ecn_low) both set. BBRv1 and CUBIC take
// no CE events and echo as RFC 3168.
func TestEchoModeECNLow(t *testing.T) {
	cases := []struct {
		cc          string
		ecn, ecnLow bool
		want        tcp.EchoMode
	}{
		{"bbr3", true, true, tcp.EchoDCTCP},
		{"bbrb", true, true, tcp.EchoDCTCP},
		{"bbr3", true, false, tcp.EchoClassic},
		{"bbr3", false, true, tcp.EchoClassic}, // no ECN, no TCP_ECN_OK
		{"bbr", true, true, tcp.EchoClassic},
		{"cubic", true, true, tcp.EchoClassic},
		{"dctcp", true, false, tcp.EchoDCTCP},
		{"prague", true, true, tcp.EchoAccECN},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/ecn=%v/ecn_low=%v", tc.cc, tc.ecn, tc.ecnLow), func(t *testing.T) {
			f := config.Flow{Params: &config.Params{CC: tc.cc, TCP: config.DefaultTCPOptions()}}
			f.TCP.ECN, f.TCP.ECNLow = tc.ecn, tc.ecnLow
			if got := echoMode(f); got != tc.want {
				t.Errorf("echoMode(%s, ecn=%v, ecn_low=%v) = %v, want %v", tc.cc, tc.ecn, tc.ecnLow, got, tc.want)
			}
		})
	}
}

// BBRv3 on the dctcp-dc built-in (1 Gbps, 100 µs base RTT, fifo marking CE
// at K = 65 packets) with ECN, with and without the route feature ecn_low.
// BDP = 1 Gbps · 100 µs / 1500 B = 8.3 packets, so marking starts at
// inflight ≈ BDP + K = 73 packets.
//
// With ecn_low, bbr_can_use_ecn holds and min_rtt ≤ 5 ms (bbr_ecn_max_rtt_us)
// makes the flow ECN-eligible: ecn_alpha moves off its initial 1.0
// (bbr_ecn_alpha_init), ecn_in_round is set in marked rounds, and the ECN
// response (inflight_lo cut to (1 − alpha/3)·inflight, inflight_hi set where
// more than bbr_ecn_thresh = 50 % of a round is marked) holds inflight near
// BDP + K, so the queue sits near K instead of the 1000-packet limit.
// Alpha's level: once per round bbr_update_ecn_alpha sets
// a ← ⌊15a/16⌋ + ⌊c/16⌋ in 1/256 units, c the round's CE fraction; for a
// steady c its fixed point satisfies ⌈a/16⌉ = ⌊c/16⌋, i.e. a lies in
// ((k−1)/16, k/16] with k = ⌊16·c⌋ (the floors bias it below c). Rounds
// vary, so the time average is allowed one step either side: [(k−2)/16,
// (k+1)/16].
//
// Without ecn_low the bottleneck still marks (the queue BBRv3 keeps stands
// above K) and the receiver echoes ECE, but BBRv3 ignores it: ecn_alpha
// stays at 1.0 and inflight_hi is never set.
//
// Where the queue settles depends on the bandwidth BBRv3's max filter
// holds. A rate sample can count one packet more than the link serialised
// in its ACK phase (78 packets in 924 µs, where the link takes 12 µs a
// packet): d/(d − 1) of the link's rate, 978 Mbps at d = 78 against the
// 965 Mbps of payload. Both builds below draw such samples; the filter keeps one
// for the two bandwidth-probe cycles it spans (2–3 s each), and whether a
// run's filter holds one moves with every microsecond of its stamps. While
// it holds one, pacing no longer binds and inflight rises to the cruise
// bound, inflight_hi less bbr_inflight_hi_headroom (15 %), so the queue is
// (1 − 0.15)·inflight_hi − BDP rather than K: the test allows either.
//
// Measured over 1–5 s with ecn_low (2026-12-07, rate samples between µs
// stamps): utilisation 1.000, queue p50 75.1 packets, 81.4 % of packets
// marked (k = 13), alpha time average 0.752 (final 0.75), ecn_in_round 1
// for 91 % of the time, inflight_hi 100.0 on average, inflight p50 86
// (0.85 · 100 + 1), the filter holding 978 Mbps from 0.31 s. Before, with
// intervals in picoseconds: queue p50 68.9, inflight p50 80, the filter at
// 966 Mbps. inflight_hi is set from a marked round's rate sample, whose
// tx_in_flight is what was in flight when its skb left plus that whole
// skb: above BDP + K by up to a TSO chunk (bbr_tso_segs at 1 Gbps: 44
// segments). Asserted between −25 % of BDP + K and BDP + K + 44, as the
// value in force over the window (it may have been set before it).
// Without ecn_low: inflight_hi never set, ecn_alpha one record, 1.0.
func TestBBRv3ECNLow(t *testing.T) {
	const bdp = 1e9 * 100e-6 / (1500 * 8)
	const bdpK = bdp + 65
	from := sim.Time(sim.Second)
	t.Run("ecn_low", func(t *testing.T) {
		r := builtinRun(t, "dctcp-dc", "flows.f0.cc=bbr3", "flows.f0.tcp.ecn=true",
			"flows.f0.tcp.ecn_low=true", "trace.detail=change")
		d, _ := r.Net.Dir("bottleneck", "ab")
		r.RunUntil(from)
		enq0, marks0 := d.Stats.Enqueued, d.Stats.Marks
		util := deliveredBetween(r, 0, from) / payloadRate(1e9)
		frac := float64(d.Stats.Marks-marks0) / float64(d.Stats.Enqueued-enq0)
		s := r.Summary("")
		qPkts := float64(*s.Queues[2].SojournP50Ps) / float64(units.TxTime(1500, units.Gbps))
		alphaAvg := timeAverage(r, "ecn_alpha", from)
		ecnRound := timeAverage(r, "ecn_in_round", from)
		hi := timeAverage(r, "inflight_hi", from)
		var inflight []float64
		for _, row := range r.Trace.FlowsT.Rows {
			if row.T >= from && row.Flow == 0 {
				inflight = append(inflight, float64(row.InflightPkts))
			}
		}
		slices.Sort(inflight)
		infl := inflight[len(inflight)/2]
		t.Logf("utilisation %.4f, queue p50 %.1f packets, marked %.4f, alpha avg %.4f (final %v), ecn_in_round avg %.3f, inflight_hi avg %.1f, inflight p50 %v",
			util, qPkts, frac, alphaAvg, s.Flows[0].CCFinal["ecn_alpha"], ecnRound, hi, infl)
		if util < 0.95 {
			t.Errorf("utilisation = %.4f, want ≥ 0.95", util)
		}
		// The cruise bound, and the queue it leaves, when pacing does not bind.
		cruise := 0.85 * hi
		if qPkts < 65-10 || qPkts > max(65+10, cruise-bdp+2) {
			t.Errorf("queue p50 = %.1f packets, want K = 65 ± 10, or up to the cruise bound's 0.85·inflight_hi − BDP = %.1f (+2)",
				qPkts, cruise-bdp)
		}
		k := math.Floor(16 * frac)
		if alphaAvg < (k-2)/16 || alphaAvg > (k+1)/16 {
			t.Errorf("ecn_alpha time average = %.4f, want [(k−2)/16, (k+1)/16] = [%.4f, %.4f] for marked fraction %.4f",
				alphaAvg, (k-2)/16, (k+1)/16, frac)
		}
		if ecnRound <= 0 {
			t.Errorf("ecn_in_round time average = %v, want > 0 (set in marked rounds)", ecnRound)
		}
		if !(hi >= 0.75*bdpK && hi <= bdpK+44) {
			t.Errorf("inflight_hi average = %v packets, want between BDP + K = %.1f −25 %% and BDP + K + a 44-segment TSO chunk", hi, bdpK)
		}
		if infl < 0.85*bdpK || infl > max(1.15*bdpK, cruise+2) {
			t.Errorf("inflight p50 = %v packets, want BDP + K = %.1f ± 15%%, or up to the cruise bound 0.85·inflight_hi = %.1f (+2)",
				infl, bdpK, cruise)
		}
	})
	t.Run("without ecn_low", func(t *testing.T) {
		r := builtinRun(t, "dctcp-dc", "flows.f0.cc=bbr3", "flows.f0.tcp.ecn=true", "trace.detail=change")
		d, _ := r.Net.Dir("bottleneck", "ab")
		r.RunToEnd()
		_, alphas := signalSeries(r, "ecn_alpha")
		_, rounds := signalSeries(r, "ecn_in_round")
		_, his := signalSeries(r, "inflight_hi")
		t.Logf("marked %d packets; ecn_alpha %v, ecn_in_round %v", d.Stats.Marks, alphas, rounds)
		if d.Stats.Marks == 0 {
			t.Fatalf("bottleneck marks = 0, want CE marks for BBRv3 to ignore")
		}
		for _, a := range alphas {
			if a != 1 {
				t.Errorf("ecn_alpha = %v, want its initial 1.0 throughout", a)
			}
		}
		if slices.Contains(rounds, 1) {
			t.Errorf("ecn_in_round took 1, want 0 throughout")
		}
		for _, h := range his {
			if !math.IsInf(h, 1) {
				t.Errorf("inflight_hi = %v, want unset (+Inf) throughout", h)
			}
		}
	})
}

// timeAverage is the time average of flow 0's finite values of signal name
// from time from to the horizon (each value holds until the next change).
func timeAverage(r *Run, name string, from sim.Time) float64 {
	ts, vs := signalSeries(r, name)
	var sum, span float64
	for i := range ts {
		end := r.Horizon()
		if i+1 < len(ts) {
			end = ts[i+1]
		}
		start := max(ts[i], from)
		if end <= start || math.IsInf(vs[i], 0) {
			continue
		}
		sum += vs[i] * float64(end-start)
		span += float64(end - start)
	}
	return sum / span
}
