package engine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
)

var topologyRuns = flag.Int("topology.runs", 200, "runs of TestTopologySweep (30 with -short)")

// topologyCase is one randomized fabric of the topology sweep.
type topologyCase struct {
	raw  []byte
	desc string
	// proxied names the hosts behind a split-TCP proxy: the proxy answers
	// their flows' handshakes halfway, so their FCT may beat the
	// end-to-end ideal.
	proxied map[string]bool
	ping    bool // a probe runs to the end, so packets may be in flight
	// jittered: a link's jitter may draw below zero, so a packet may beat
	// the base delay, and a flow its ideal FCT.
	jittered bool
	// impaired: a link reorders, loses or goes down. Prague may then never
	// finish: losses halve its fractional window below one packet, and
	// tcp_prague.c paces such a window at max(frac_cwnd, in flight)
	// packets per srtt, which is its 100 kbps floor whenever its one
	// packet has been acknowledged; paced, it is not cwnd-limited, so
	// prague_update_cwnd never grows the window back. Without CE marks to
	// switch it to its rate mode, it stays at 100 kbps, as the kernel's
	// would.
	impaired bool
}

// drawTopologyCase draws a leaf-spine fabric of 1–3 spines and 2–4 leaves
// with 1–4 hosts each, routed first, by ECMP or by spraying; some leaves
// reach their hosts through a learning switch, and leaf 0's first host may
// sit behind a split-TCP proxy. Queues are FIFOs (some step-marking) or
// fq_codel; some links jitter, reorder, lose a little or go down. 1–3
// groups of 3–42 sized flows of random CCs start by Poisson arrivals,
// uniformly or in periodic rounds, with fixed, uniform, lognormal or
// Pareto sizes, and sometimes a ping probe runs beside them.
func drawTopologyCase(r *rand.Rand, ccs []string) topologyCase {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	spines, leaves, per := 1+r.IntN(3), 2+r.IntN(3), 1+r.IntN(4)
	routing := pick("first", "ecmp", "spray")
	fabricRate, fabricDelay := pick("1Gbps", "10Gbps"), pick("1us", "50us", "1ms", "5ms")
	qdisc := func() string {
		switch r.IntN(4) {
		case 0:
			return `{"kind": "fq_codel"}`
		case 1:
			return fmt.Sprintf(`{"kind": "fifo", "limit": "%dp", "ecn_threshold": "%dp"}`, 128+r.IntN(900), 20+r.IntN(60))
		}
		return fmt.Sprintf(`{"kind": "fifo", "limit": "%dp"}`, 128+r.IntN(900))
	}
	// Five links in twelve get a path model in one direction: jitter in
	// either order, netem's reorder, light random loss, or outages that
	// queue or drop. None loses packets for long, so flows still complete.
	jittered, impaired := false, false
	impair := func() string {
		var m string
		k := r.IntN(12)
		switch k {
		case 0:
			m = fmt.Sprintf(`"jitter": {"kind": "gaussian", "sigma": "%dus", "order": %q}`, 1+r.IntN(500), pick("fifo", "reorder"))
		case 1:
			m = fmt.Sprintf(`"jitter": {"kind": "uniform", "max": "%dus", "order": %q}`, 1+r.IntN(1000), pick("fifo", "reorder"))
		case 2:
			m = fmt.Sprintf(`"jitter": {"kind": "reorder", "p": %.3f, "delay": "%dus"}`, 0.001+0.1*r.Float64(), 1+r.IntN(2000))
		case 3:
			m = fmt.Sprintf(`"loss": {"kind": "bernoulli", "p": %.5f, "position": %q}`, 0.01*r.Float64(), pick("pre", "post"))
		case 4:
			m = fmt.Sprintf(`"outages": {"start": "%dms", "every": "%dms", "duration": "%dms", "drop_on_outage": %v}`,
				r.IntN(500), 1000+r.IntN(2000), 1+r.IntN(100), r.IntN(2) == 0)
		default:
			return ""
		}
		jittered = jittered || k <= 1
		impaired = true
		return fmt.Sprintf(`, %q: {%s}`, pick("ab", "ba"), m)
	}
	var nodes, links, hosts []string
	link := func(a, b, rate, delay string) {
		links = append(links, fmt.Sprintf(`{"id": "%s-%s", "a": %q, "b": %q, "rate": %q, "delay": %q, "qdisc": %s%s}`,
			a, b, a, b, rate, delay, qdisc(), impair()))
	}
	for s := range spines {
		nodes = append(nodes, fmt.Sprintf(`{"id": "spine%d", "kind": "router", "routing": %q}`, s, routing))
	}
	switches := 0
	c := topologyCase{proxied: map[string]bool{}}
	for l := range leaves {
		leaf := fmt.Sprintf("leaf%d", l)
		nodes = append(nodes, fmt.Sprintf(`{"id": %q, "kind": "router", "routing": %q}`, leaf, routing))
		for s := range spines {
			link(leaf, fmt.Sprintf("spine%d", s), fabricRate, fabricDelay)
		}
		up := leaf
		if r.IntN(10) < 3 {
			up = fmt.Sprintf("sw%d", l)
			switches++
			nodes = append(nodes, fmt.Sprintf(`{"id": %q, "kind": "switch"}`, up))
			link(up, leaf, fabricRate, "1us")
		}
		for h := range per {
			host := fmt.Sprintf("h%d_%d", l, h)
			hosts = append(hosts, host)
			nodes = append(nodes, fmt.Sprintf(`{"id": %q, "kind": "endpoint"}`, host))
			to := up
			if l == 0 && h == 0 && r.IntN(10) < 2 {
				to = "pxy"
				c.proxied[host] = true
				nodes = append(nodes, fmt.Sprintf(`{"id": "pxy", "kind": "proxy", "buffer": "%dKB"}`, 64+r.IntN(4000)))
				link(to, up, fabricRate, pick("1us", "1ms"))
			}
			link(host, to, pick("100Mbps", "1Gbps"), pick("1us", "100us", "2ms"))
		}
	}
	var flows []string
	groups := 1 + r.IntN(3)
	for g := range groups {
		dst := hosts[r.IntN(len(hosts))]
		var srcs []string
		for _, h := range hosts {
			if h != dst && r.IntN(3) == 0 {
				srcs = append(srcs, fmt.Sprintf("%q", h))
			}
		}
		if len(srcs) == 0 {
			for _, h := range hosts {
				if h != dst {
					srcs = append(srcs, fmt.Sprintf("%q", h))
					break
				}
			}
		}
		var start string
		switch r.IntN(3) {
		case 0:
			start = fmt.Sprintf(`{"kind": "poisson", "rate": "%d/s", "at": "%dms"}`, 20+r.IntN(2000), r.IntN(200))
		case 1:
			start = fmt.Sprintf(`{"kind": "uniform", "at": "%dms", "span": "%dms"}`, r.IntN(200), 1+r.IntN(1000))
		default:
			start = fmt.Sprintf(`{"kind": "periodic", "every": "%dms", "batch": %d, "jitter": "%dus"}`, 10+r.IntN(90), 1+r.IntN(8), 1+r.IntN(100))
		}
		var size string
		switch r.IntN(4) {
		case 0:
			size = fmt.Sprintf(`"%dB"`, 1+r.IntN(300_000))
		case 1:
			size = fmt.Sprintf(`{"kind": "uniform", "min": "%dB", "max": "%dKB"}`, 1+r.IntN(1000), 2+r.IntN(500))
		case 2:
			size = fmt.Sprintf(`{"kind": "lognormal", "median": "%dKB", "sigma": %.2f, "max": "4MB"}`, 2+r.IntN(200), 0.5+1.5*r.Float64())
		default:
			size = fmt.Sprintf(`{"kind": "pareto", "min": "%dKB", "alpha": %.2f, "max": "4MB"}`, 1+r.IntN(50), 1.1+r.Float64())
		}
		flows = append(flows, fmt.Sprintf(`{"group": "g%d", "count": %d, "src": [%s], "dst": %q, "cc": %q, "start": %s, "size": %s}`,
			g, 3+r.IntN(40), strings.Join(srcs, ", "), dst, ccs[r.IntN(len(ccs))], start, size))
	}
	if r.IntN(10) < 3 {
		c.ping = true
		flows = append(flows, fmt.Sprintf(`{"id": "ping", "src": %q, "dst": %q, "cc": "ping", "interval": "100ms"}`,
			hosts[r.IntN(len(hosts)/2)], hosts[len(hosts)/2+r.IntN(len(hosts)-len(hosts)/2)]))
	}
	c.jittered, c.impaired = jittered, impaired
	c.raw = fmt.Appendf(nil, `{"name": "topology-sweep", "runtime": {"seed": %d, "duration": "60s"},
 "nodes": [%s],
 "links": [%s],
 "flows": [%s]}`, r.Uint64()>>1, strings.Join(nodes, ",\n  "), strings.Join(links, ",\n  "), strings.Join(flows, ",\n  "))
	c.desc = fmt.Sprintf("%d spines, %d leaves × %d hosts, %s routing, %d switches, proxy %v, %d groups, ping %v",
		spines, leaves, per, routing, switches, len(c.proxied) > 0, groups, c.ping)
	return c
}

// The invariants of every flow group over randomized fabrics: every flow
// completes (a minute is ample for the losses of queues, outages and under
// 1 % random loss; Prague excepted, see topologyCase.impaired), delivers
// exactly its size, and takes at least its ideal FCT (base RTT for the
// handshake, one-way delay, every packet serialised at the bottleneck: a
// lower bound unless a proxy answers the handshake halfway or jitter draws
// below zero); the summary's counts agree; a ping probe sees at least the
// base RTT (without jitter) and loses nothing it did not send; no packet is
// left in the network; and every fourth run replays, stepped and read
// between steps, to the same digest and summary. The liveness hook TestMain
// installs checks every sender event on the way.
func TestTopologySweep(t *testing.T) {
	t.Parallel()
	n := *topologyRuns
	if testing.Short() {
		n = 30
	}
	r := rand.New(rand.NewPCG(11, 2026))
	ccs := cc.Names()
	failed := 0
	for i := range n {
		c := drawTopologyCase(r, ccs)
		var replay *rand.Rand
		if i%4 == 0 {
			replay = rand.New(rand.NewPCG(uint64(i), 2026))
		}
		if err := checkTopologyCase(c, replay); err != nil {
			failed++
			if failed <= 5 {
				t.Errorf("case %d (%s): %v\n%s", i, c.desc, err, c.raw)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d fabrics broke an invariant", failed, n)
	}
}

// checkTopologyCase runs c and checks it; with replay, it runs c again in
// steps that replay draws.
func checkTopologyCase(c topologyCase, replay *rand.Rand) error {
	p, err := Prepare(c.raw, nil)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	r, err := New(p.Scenario, nil)
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	if err := runCaught(r); err != nil {
		return err
	}
	sum := r.Summary(p.Hash)
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	e2e := r.endToEnd(sum.Flows)
	excused := map[string]int{} // Prague flows that may not finish (topologyCase.impaired), by group
	for i, f := range p.Scenario.Flows {
		fs := e2e[i]
		switch {
		case f.CC == config.Ping:
			if fs.ProbesSent == nil || fs.ProbesReceived == nil || *fs.ProbesReceived > *fs.ProbesSent || *fs.ProbesSent < 590 {
				fail("%s: probes sent %v, received %v over 60 s at 100 ms", f.ID, fs.ProbesSent, fs.ProbesReceived)
			} else if fs.RTTP50Ps == nil || !c.jittered && *fs.RTTP50Ps < fs.BaseRTTPs {
				fail("%s: RTT p50 %v below the base RTT %d ps", f.ID, fs.RTTP50Ps, fs.BaseRTTPs)
			}
		case f.Group != "":
			if fs.FCTPs == nil {
				if c.impaired && f.CC == "prague" {
					excused[f.Group]++
				} else {
					fail("%s (%s, %d B, start %v): did not complete, %d B delivered", f.ID, f.CC, f.Size, f.Start, fs.BytesDelivered)
				}
				continue
			}
			if fs.BytesDelivered != int64(f.Size) {
				fail("%s: delivered %d B of %d", f.ID, fs.BytesDelivered, f.Size)
			}
			if ideal := IdealFCT(r.Net, f); !c.jittered && !c.proxied[f.Dst] && !c.proxied[f.Src] && sim.Duration(*fs.FCTPs) < ideal {
				fail("%s: FCT %v below the ideal %v", f.ID, sim.Duration(*fs.FCTPs), ideal)
			}
		}
	}
	for _, g := range sum.Groups {
		done := 0
		for _, b := range g.Buckets {
			done += b.Count
		}
		if g.Started != g.Flows || g.Completed+excused[g.Group] != g.Flows || done != g.Completed {
			fail("group %s: %d flows, %d started, %d completed, %d in the buckets", g.Group, g.Flows, g.Started, g.Completed, done)
		}
	}
	if live := r.Pool.Live(); len(excused) == 0 && (live > 0 && !c.ping || live > 2) {
		fail("%d packets left in the network", live)
	}
	if replay != nil {
		// The replay is stepped by random event counts and times, and read
		// between steps as a session does (a summary, a flow observed):
		// where a run stops and is read changes nothing in it.
		again, err := New(p.Scenario, nil)
		if err != nil {
			return fmt.Errorf("new, again: %w", err)
		}
		for !again.Done() {
			if replay.IntN(2) == 0 {
				again.StepEvents(uint64(1 + replay.IntN(20000)))
			} else {
				again.RunUntil(again.Now().Add(sim.Duration(1 + replay.Int64N(int64(200*sim.Millisecond)))))
			}
			again.Summary(p.Hash)
			again.Observe(p.Scenario.Flows[replay.IntN(len(p.Scenario.Flows))].ID)
		}
		again.RunToEnd()
		b := again.Summary(p.Hash)
		sum.WallS, b.WallS = 0, 0
		if !reflect.DeepEqual(sum, b) {
			fail("stepped replay: digest %s (%d events), first run %s (%d events), or their summaries differ", b.Digest, b.Events, sum.Digest, sum.Events)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
