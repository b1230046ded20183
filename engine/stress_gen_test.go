package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// stressCase is one random scenario of the stress sweep, with what its
// checks need to know of it.
type stressCase struct {
	raw     []byte         // the scenario's JSON
	actions []stressAction // applied at their event counts
	proxy   bool           // the right-hand hosts sit behind a split-TCP proxy
	tail    bool           // the run lasts 5 s past its flows' starts and changes
	// negJitter: a jitter model may draw below zero, or a delay falls
	// (change or action): a ping may beat the base RTT.
	negJitter bool
	// deadLink: a trace that ends, or Pareto jitter without a cap, may
	// hold a packet until the run ends.
	deadLink bool
	// maxRate is each direction's ("<link>/<dir>") highest rate, in bps,
	// over its capacity states and scheduled rate changes; unbounded marks
	// those that a trace drives, traceOps the text of their trace while
	// no change replaces it, actedOn those an action touches.
	maxRate   map[string]int64
	unbounded map[string]bool
	traceOps  map[string]string
	actedOn   map[string]bool
}

// stressAction is an action applied once the run has dispatched events
// events.
type stressAction struct {
	events uint64
	a      Action
}

// drawStressCase draws a scenario of 0.3–3 s (plus, half the time, a quiet
// 5 s tail): hosts on either side of two routers (ECMP, spray or first
// routing), joined directly or through 1–3 parallel middle routers; the
// left hosts sometimes behind one or two learning switches, the right ones
// behind a split-TCP proxy, a switch or both. Every link direction takes a
// random qdisc (fifo with packet or BDP limits and step marking, codel,
// fq_codel, dualpi2, fq); the bottleneck directions, and some others, a
// capacity process (dips, grant ramp) or an inline Mahimahi trace (looping
// or not), loss of every kind before or after the queue, jitter of every
// kind in either order, and outage windows or periods that queue or drop;
// a quarter of the directions without a trace, a link overhead; an eighth
// of them, duplicates.
// Up to four flows: TCP of any CC with switched mechanisms, ECN, small
// MSS, buffers and windows, app patterns, receive-path models and proxy
// legs; groups with every start and size kind (and groups of pumps);
// pings; pumps of any ECN codepoint. Up to five scheduled changes of every
// parameter (some at 0 and at the end, some announced) on any direction,
// and up to three actions (loss, delay, outage, queue limit, cwnd, pacing
// rate). A third of the cases are extreme (loss to 30 %, black holes,
// uncapped Pareto jitter, 88 B segments), a quarter big (bottlenecks to
// 500 Mbps, groups of up to 200 flows, short runs).
func drawStressCase(r *rand.Rand, ccs []string) stressCase {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	c := stressCase{maxRate: map[string]int64{}, unbounded: map[string]bool{}, traceOps: map[string]string{}, actedOn: map[string]bool{}}
	durMs := 500 + r.IntN(2500)
	extreme := r.IntN(3) == 0
	// big: fast bottlenecks and large groups over a short run.
	big := r.IntN(4) == 0
	bnRate := func() int {
		if big {
			return 50 + r.IntN(450)
		}
		return 1 + r.IntN(30)
	}
	if big {
		durMs = 300 + r.IntN(500)
	}
	maxLoss := 0.05
	if extreme {
		maxLoss = 0.3
	}
	var nodes, links []string
	traces := map[string]string{}
	node := func(id, kind, extra string) {
		nodes = append(nodes, fmt.Sprintf(`{"id": %q, "kind": %q%s}`, id, kind, extra))
	}
	// qdisc draws a direction's qdisc; a BDP limit only where the link's
	// own round trip is not the BDP's (one no flow crosses would resolve
	// to 0 B on a link of no delay, which New refuses).
	qdisc := func(bdpOK bool) string {
		switch r.IntN(7) {
		case 0:
			return fmt.Sprintf(`{"kind": "codel", "limit": "%dp", "ecn": %v}`, 5+r.IntN(500), r.IntN(2) == 0)
		case 1:
			return fmt.Sprintf(`{"kind": "fq_codel", "limit": "%dp", "ecn": %v}`, 5+r.IntN(1000), r.IntN(2) == 0)
		case 2:
			return fmt.Sprintf(`{"kind": "dualpi2", "limit": "%dp"}`, 5+r.IntN(1000))
		case 3:
			return fmt.Sprintf(`{"kind": "fq", "limit": "%dp", "flow_limit": %d}`, 10+r.IntN(1000), 5+r.IntN(100))
		case 4:
			return fmt.Sprintf(`{"kind": "fifo", "limit": "%dp", "ecn_threshold": "%dp"}`, 10+r.IntN(300), 1+r.IntN(30))
		case 5:
			if bdpOK {
				return fmt.Sprintf(`{"kind": "fifo", "limit": "%d.%dBDP"}`, 1+r.IntN(2), r.IntN(10))
			}
		case 6:
			kind := []string{"pie", "fq_pie"}[r.IntN(2)]
			return fmt.Sprintf(`{"kind": %q, "limit": "%dp", "ecn": %v, "dq_rate_estimator": %v}`, kind, 5+r.IntN(1000), r.IntN(2) == 0, r.IntN(2) == 0)
		}
		return fmt.Sprintf(`{"kind": "fifo", "limit": "%dp"}`, 2+r.IntN(300))
	}
	lossModel := func() string {
		var m string
		switch r.IntN(4) {
		case 0:
			m = fmt.Sprintf(`"kind": "bernoulli", "p": %.4f`, maxLoss*r.Float64())
			if extreme && r.IntN(4) == 0 {
				m = `"kind": "bernoulli", "p": 1`
			}
		case 1:
			m = fmt.Sprintf(`"kind": "gilbert_elliott", "p_gb": %.4f, "p_bg": %.3f, "loss_bad": %.2f`, 0.02*r.Float64(), 0.2+0.7*r.Float64(), 0.2+0.8*r.Float64())
		case 2:
			m = fmt.Sprintf(`"kind": "periodic", "every": %d`, 2+r.IntN(300))
		default:
			m = fmt.Sprintf(`"kind": "bernoulli_train", "p": %.4f, "train_length": %.1f`, 0.01*r.Float64(), 1+5*r.Float64())
		}
		return fmt.Sprintf(`{%s, "position": %q}`, m, pick("pre", "post"))
	}
	jitterModel := func() string {
		var m string
		switch r.IntN(9) {
		case 0:
			m = fmt.Sprintf(`"kind": "gaussian", "sigma": "%dus", "clamp": %q`, 1+r.IntN(5000), pick("redraw", "zero", "total"))
			c.negJitter = true
		case 1:
			m = fmt.Sprintf(`"kind": "uniform", "max": "%dus"`, 1+r.IntN(5000))
		case 2:
			m = fmt.Sprintf(`"kind": "pareto", "scale": "%dus", "shape": %.2f, "cap": "%dms"`, 1+r.IntN(2000), 1.1+2*r.Float64(), 1+r.IntN(50))
			if extreme && r.IntN(2) == 0 {
				m = fmt.Sprintf(`"kind": "pareto", "scale": "%dus", "shape": %.2f`, 1+r.IntN(2000), 0.5+2*r.Float64())
				c.deadLink = true // a packet may be held for ever
			}
		case 3:
			period := 2 + r.IntN(200)
			m = fmt.Sprintf(`"kind": "burst", "period": "%dms", "length": "%dms", "extra": "%dms"`, period, 1+r.IntN(period-1), 1+r.IntN(30))
		case 4:
			m = fmt.Sprintf(`"kind": "wifi_txop", "interval": "%dms", "burst_size": %d, "sigma": "%dus"`, 1+r.IntN(4), 8+r.IntN(64), r.IntN(300))
		case 5:
			m = `"kind": "lte_subframe"`
		case 6:
			m = fmt.Sprintf(`"kind": "5g_nr", "period": "%dus"`, 100+r.IntN(900))
		case 7:
			return fmt.Sprintf(`{"kind": "reorder", "p": %.3f, "delay": "%dus"}`, 0.2*r.Float64(), 1+r.IntN(5000))
		default:
			return `{"kind": "none"}`
		}
		return fmt.Sprintf(`{%s, "order": %q}`, m, pick("fifo", "reorder"))
	}
	capacity := func() (string, int64) {
		n := 1 + r.IntN(3)
		var states []string
		var rows []string
		top := int64(0)
		for i := range n {
			rate := int64(1+r.IntN(30)) * 1_000_000
			top = max(top, rate)
			states = append(states, fmt.Sprintf(`{"rate": "%dbps", "dwell": "%dms"}`, rate, 1+r.IntN(500)))
			row := make([]string, n)
			for j := range n {
				row[j] = "0"
			}
			row[(i+1)%n] = "1"
			if n == 1 {
				row[0] = "1"
			}
			rows = append(rows, "["+strings.Join(row, ", ")+"]")
		}
		s := fmt.Sprintf(`{"states": [%s], "transitions": [%s]`, strings.Join(states, ", "), strings.Join(rows, ", "))
		if r.IntN(2) == 0 {
			s += fmt.Sprintf(`, "dips": {"every": "%dms", "depth": %.2f, "scale": "%dms", "shape": %.2f, "cap": "%dms"}`,
				10+r.IntN(1000), float64(r.IntN(80))/100, 1+r.IntN(30), 1.1+2*r.Float64(), 5+r.IntN(300))
		}
		if r.IntN(2) == 0 {
			s += fmt.Sprintf(`, "grant": {"start": %.2f, "ramp": "%dms"}`, float64(r.IntN(100))/100, 1+r.IntN(100))
		}
		return s + "}", top
	}
	// traceText adds a trace of phases of 0–3 opportunities per ms to
	// traces and returns its hash.
	traceText := func() string {
		var b strings.Builder
		end := 20 + r.IntN(1500)
		for t := 1; t <= end; {
			phase := 1 + r.IntN(300)
			per := r.IntN(4)
			for u := t; u < t+phase && u <= end; u++ {
				for range per {
					fmt.Fprintf(&b, "%d\n", u)
				}
			}
			t += phase
		}
		fmt.Fprintf(&b, "%d\n", end)
		txt := b.String()
		sum := sha256.Sum256([]byte(txt))
		h := hex.EncodeToString(sum[:])
		traces[h] = txt
		return h
	}
	outages := func() string {
		if r.IntN(2) == 0 {
			return fmt.Sprintf(`{"windows": [{"at": "%dms", "duration": "%dms"}, {"at": "%dms", "duration": "%dms"}], "drop_on_outage": %v}`,
				r.IntN(durMs), 1+r.IntN(300), r.IntN(durMs), 1+r.IntN(300), r.IntN(2) == 0)
		}
		return fmt.Sprintf(`{"start": "%dms", "every": "%dms", "duration": "%dms", "drop_on_outage": %v}`,
			r.IntN(durMs), 100+r.IntN(1000), 1+r.IntN(99), r.IntN(2) == 0)
	}
	type dirInfo struct {
		link string
		ab   bool
	}
	var dirs []dirInfo
	// dirBody draws a direction: its qdisc and rate and, if impair, its
	// path models.
	dirBody := func(link, dir string, rateMbps int, bdpOK, impair bool) string {
		key := link + "/" + dir
		parts := []string{fmt.Sprintf(`"qdisc": %s`, qdisc(bdpOK))}
		rate := int64(rateMbps) * 1_000_000
		c.maxRate[key] = rate
		hasRate := true
		if impair {
			switch r.IntN(6) {
			case 0:
				s, top := capacity()
				parts = append(parts, `"capacity": `+s)
				c.maxRate[key] = top
				hasRate = false
			case 1:
				h := traceText()
				loop := r.IntN(4) != 0
				c.deadLink = c.deadLink || !loop
				parts = append(parts, fmt.Sprintf(`"trace": {"sha256": %q, "loop": %v}`, h, loop))
				c.unbounded[key] = true
				hasRate = false
			}
			if r.IntN(2) == 0 {
				parts = append(parts, `"loss": `+lossModel())
			}
			if r.IntN(2) == 0 {
				parts = append(parts, `"jitter": `+jitterModel())
			}
			if r.IntN(4) == 0 {
				parts = append(parts, `"outages": `+outages())
			}
		}
		if hasRate {
			parts = append(parts, fmt.Sprintf(`"rate": "%dMbps"`, rateMbps))
		}
		if !c.unbounded[key] && r.IntN(4) == 0 {
			parts = append(parts, fmt.Sprintf(`"overhead": "%dB"`, r.IntN(65)))
		}
		if r.IntN(8) == 0 {
			parts = append(parts, fmt.Sprintf(`"duplicate": %g`, []float64{0.001, 0.01, 0.1, 1}[r.IntN(4)]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	link := func(id, a, b string, rateMbps, backMbps int, delay string, impairAB, impairBA bool) {
		bdpOK := delay != "0ms" && delay != "1ps"
		links = append(links, fmt.Sprintf(`{"id": %q, "a": %q, "b": %q, "delay": %q, "ab": %s, "ba": %s}`,
			id, a, b, delay, dirBody(id, "ab", rateMbps, bdpOK, impairAB), dirBody(id, "ba", backMbps, bdpOK, impairBA)))
		dirs = append(dirs, dirInfo{id, true}, dirInfo{id, false})
	}
	nl, nr := 1+r.IntN(3), 1+r.IntN(3)
	routing := func() string { return fmt.Sprintf(`, "routing": %q`, pick("first", "ecmp", "spray")) }
	node("ra", "router", routing())
	node("rb", "router", routing())
	// Left side: hosts on ra, or on a switch (or two) on ra.
	leftUp := "ra"
	if r.IntN(3) == 0 {
		node("swa", "switch", "")
		link("swa-ra", "swa", "ra", 1000, 1000, "10us", false, false)
		leftUp = "swa"
		if r.IntN(2) == 0 {
			node("swa2", "switch", "")
			link("swa2-swa", "swa2", "swa", 1000, 1000, "10us", false, false)
			leftUp = "swa2"
		}
	}
	var left, right []string
	for i := range nl {
		h := fmt.Sprintf("l%d", i)
		node(h, "endpoint", "")
		left = append(left, h)
		link(h+"-up", h, leftUp, 100+r.IntN(900), 100+r.IntN(900), pick("0ms", "1ps", "10us", "100us", "1ms"), r.IntN(8) == 0, r.IntN(8) == 0)
	}
	// Middle: one direct link, or 1-3 parallel middle routers.
	mids := r.IntN(4)
	midDelay := 1 + r.IntN(30)
	if mids == 0 {
		link("bottleneck", "ra", "rb", bnRate(), bnRate(), fmt.Sprintf("%dms", midDelay), true, r.IntN(3) == 0)
	}
	for m := range mids {
		id := fmt.Sprintf("m%d", m)
		node(id, "router", routing())
		d := midDelay
		if r.IntN(3) == 0 {
			d += r.IntN(5)
		}
		link("ra-"+id, "ra", id, bnRate(), bnRate(), fmt.Sprintf("%dms", d), true, r.IntN(3) == 0)
		link(id+"-rb", id, "rb", 1+r.IntN(100), 1+r.IntN(100), "1ms", r.IntN(3) == 0, r.IntN(4) == 0)
	}
	// Right side: hosts on rb, through a proxy, a switch, or both.
	rightUp := "rb"
	switch r.IntN(4) {
	case 1:
		node("px", "proxy", fmt.Sprintf(`, "buffer": "%dKB"`, 8+r.IntN(4000)))
		link("rb-px", "rb", "px", 10+r.IntN(1000), 10+r.IntN(1000), pick("10us", "1ms", "10ms"), r.IntN(3) == 0, false)
		rightUp = "px"
		c.proxy = true
	case 2:
		node("swb", "switch", "")
		link("swb-rb", "swb", "rb", 1000, 1000, "10us", false, false)
		rightUp = "swb"
	case 3:
		node("px", "proxy", fmt.Sprintf(`, "buffer": "%dKB"`, 8+r.IntN(4000)))
		link("rb-px", "rb", "px", 10+r.IntN(1000), 10+r.IntN(1000), pick("10us", "1ms", "10ms"), r.IntN(3) == 0, false)
		node("swb", "switch", "")
		link("swb-px", "swb", "px", 1000, 1000, "10us", false, false)
		rightUp = "swb"
		c.proxy = true
	}
	for i := range nr {
		h := fmt.Sprintf("r%d", i)
		node(h, "endpoint", "")
		right = append(right, h)
		link(h+"-up", h, rightUp, 100+r.IntN(900), 100+r.IntN(900), pick("0ms", "1ps", "10us", "100us", "1ms"), r.IntN(8) == 0, r.IntN(8) == 0)
	}
	ends := func() (string, string) {
		a, b := left[r.IntN(len(left))], right[r.IntN(len(right))]
		if r.IntN(4) == 0 {
			return b, a
		}
		return a, b
	}
	tcpOpts := func() string {
		var o []string
		for _, sw := range []string{"sack", "rack", "tlp", "prr", "frto", "tso", "gro", "delayed_ack"} {
			if r.IntN(8) == 0 {
				o = append(o, fmt.Sprintf(`%q: false`, sw))
			}
		}
		if r.IntN(2) == 0 {
			o = append(o, `"ecn": true`)
			if r.IntN(2) == 0 {
				o = append(o, `"ecn_low": true`)
			}
		}
		if r.IntN(4) == 0 {
			o = append(o, fmt.Sprintf(`"pacing": %s`, pick(`"auto"`, "true", "false")))
		}
		if r.IntN(5) == 0 {
			o = append(o, fmt.Sprintf(`"rcvbuf_init": "%dB"`, 3000+r.IntN(120000)))
		}
		if r.IntN(5) == 0 {
			o = append(o, fmt.Sprintf(`"sndbuf": "%dKiB"`, 16+r.IntN(256)))
		}
		if r.IntN(6) == 0 {
			o = append(o, fmt.Sprintf(`"mss": "%dB"`, 88+r.IntN(1400)))
		} else if extreme && r.IntN(3) == 0 {
			o = append(o, fmt.Sprintf(`"mss": "%dB"`, 88+r.IntN(20)))
		}
		if r.IntN(6) == 0 {
			o = append(o, fmt.Sprintf(`"init_cwnd": %d`, 1+r.IntN(40)))
		}
		if r.IntN(6) == 0 {
			o = append(o, fmt.Sprintf(`"gro_interval": "%dus"`, 1+r.IntN(500)))
		}
		if r.IntN(4) == 0 {
			o = append(o, fmt.Sprintf(`"hz": %s`, pick("100", "250", "300", "1000")))
		}
		if r.IntN(4) == 0 {
			o = append(o, `"timestamps": 2`)
		}
		return "{" + strings.Join(o, ", ") + "}"
	}
	rcv := func() string {
		var s string
		if r.IntN(6) == 0 {
			s += fmt.Sprintf(`, "rcv_hold": "%dus"`, 1+r.IntN(3000))
		}
		if r.IntN(6) == 0 {
			s += fmt.Sprintf(`, "ack_hold": {"quantiles": ["0ms", "%dus", "%dms"], "saturation": %.2f}`, 1+r.IntN(1000), 2+r.IntN(20), 0.1+0.8*r.Float64())
		}
		if r.IntN(5) == 0 {
			s += fmt.Sprintf(`, "ack_grant": {"profile": %q}`, pick("lte", "5g", "wifi", "leo"))
			if r.IntN(3) == 0 {
				s = s[:len(s)-1] + fmt.Sprintf(`, "per_grant": %d, "loss": %.3f, "filter": %v}`, 1+r.IntN(64), 0.05*r.Float64(), r.IntN(2) == 0)
			}
		}
		return s
	}
	app := func() string {
		switch r.IntN(6) {
		case 0:
			return fmt.Sprintf(`, "app": {"kind": "rate", "rate": "%dKbps"}`, 100+r.IntN(20000))
		case 1:
			return fmt.Sprintf(`, "app": {"kind": "onoff", "on": "%dms", "off": "%dms"}`, 1+r.IntN(300), 1+r.IntN(300))
		case 2:
			return fmt.Sprintf(`, "app": {"kind": "greedy", "write": "%dB"}`, 1448+r.IntN(200000))
		}
		return ""
	}
	legs := func() string {
		if !c.proxy || r.IntN(2) == 0 {
			return ""
		}
		return fmt.Sprintf(`, "legs": [{"cc": %q, "tcp": %s}, {"cc": %q, "tcp": %s}]`, ccs[r.IntN(len(ccs))], tcpOpts(), ccs[r.IntN(len(ccs))], tcpOpts())
	}
	var flows []string
	nf := 1 + r.IntN(4)
	for i := range nf {
		src, dst := ends()
		start := fmt.Sprintf("%dms", r.IntN(durMs/2))
		switch k := r.IntN(10); {
		case k < 5:
			size := ""
			if r.IntN(2) == 0 {
				size = fmt.Sprintf(`, "size": "%dB"`, 1+r.IntN(400000))
			}
			l := legs()
			flows = append(flows, fmt.Sprintf(`{"id": "f%d", "src": %q, "dst": %q, "cc": %q, "start": %q%s, "tcp": %s%s%s%s}`,
				i, src, dst, ccs[r.IntN(len(ccs))], start, size, tcpOpts(), app(), rcv(), l))
		case k < 7:
			var st string
			switch r.IntN(4) {
			case 0:
				st = fmt.Sprintf(`{"kind": "poisson", "rate": "%d/s", "at": "%dms"}`, 5+r.IntN(200), r.IntN(durMs/2))
			case 1:
				st = fmt.Sprintf(`{"kind": "uniform", "at": "%dms", "span": "%dms"}`, r.IntN(durMs/2), 1+r.IntN(durMs/2))
			case 2:
				st = fmt.Sprintf(`{"kind": "periodic", "every": "%dms", "batch": %d, "jitter": "%dus"}`, 10+r.IntN(200), 1+r.IntN(6), r.IntN(300))
			default:
				st = fmt.Sprintf(`{"kind": "at", "at": "%dms", "jitter": "%dus"}`, r.IntN(durMs/2), r.IntN(300))
			}
			var size string
			switch r.IntN(6) {
			case 0:
				size = fmt.Sprintf(`"%dB"`, 1+r.IntN(100000))
			case 1:
				size = fmt.Sprintf(`{"kind": "uniform", "min": "%dB", "max": "%dKB"}`, 1+r.IntN(1000), 2+r.IntN(200))
			case 2:
				size = fmt.Sprintf(`{"kind": "lognormal", "median": "%dKB", "sigma": %.2f, "max": "1MB"}`, 1+r.IntN(50), 0.3+1.7*r.Float64())
			case 3:
				size = fmt.Sprintf(`{"kind": "pareto", "min": "%dB", "alpha": %.2f, "max": "1MB"}`, 100+r.IntN(5000), 1.05+r.Float64())
			case 4:
				size = fmt.Sprintf(`{"kind": "empirical", "file": %q}`, pick("websearch", "datamining"))
			default:
				size = fmt.Sprintf(`{"kind": "empirical", "cdf": [["%dB", 0], ["%dKB", 0.5], ["%dKB", 1]]}`, 1+r.IntN(100), 1+r.IntN(10), 11+r.IntN(100))
			}
			srcs := []string{}
			for _, h := range left {
				if r.IntN(2) == 0 || len(srcs) == 0 {
					srcs = append(srcs, fmt.Sprintf("%q", h))
				}
			}
			gcc := ccs[r.IntN(len(ccs))]
			if r.IntN(8) == 0 {
				gcc = "pump"
			}
			extra := ""
			if gcc == "pump" {
				extra = fmt.Sprintf(`, "rate": "%dKbps"`, 100+r.IntN(5000))
			} else {
				extra = `, "tcp": ` + tcpOpts() + rcv()
				extra += legs()
			}
			flows = append(flows, fmt.Sprintf(`{"group": "g%d", "count": %d, "src": [%s], "dst": %q, "cc": %q, "start": %s, "size": %s%s}`,
				i, groupCount(r, big), strings.Join(srcs, ", "), right[r.IntN(len(right))], gcc, st, size, extra))
		case k < 9:
			flows = append(flows, fmt.Sprintf(`{"id": "f%d", "src": %q, "dst": %q, "cc": "ping", "start": %q, "interval": "%dus", "packet_size": "%dB"}`,
				i, src, dst, start, 10+r.IntN(200000), 28+r.IntN(1500)))
		default:
			flows = append(flows, fmt.Sprintf(`{"id": "f%d", "src": %q, "dst": %q, "cc": "pump", "start": %q, "rate": "%dKbps", "packet_size": "%dB", "ecn": %q}`,
				i, src, dst, start, 10+r.IntN(20000), 40+r.IntN(1460), pick("not-ect", "ect0", "ect1")))
		}
	}
	// Scheduled changes of every parameter, on any direction.
	var changes []string
	for range r.IntN(6) {
		d := dirs[r.IntN(len(dirs))]
		dir := "ba"
		if d.ab {
			dir = "ab"
		}
		key := d.link + "/" + dir
		at := r.IntN(durMs)
		switch r.IntN(10) {
		case 0:
			at = 0
		case 1:
			at = durMs
		}
		var parts []string
		for len(parts) == 0 {
			if r.IntN(3) == 0 {
				v := 1 + r.IntN(50)
				delete(c.traceOps, key)
				parts = append(parts, fmt.Sprintf(`"rate": "%dMbps"`, v))
				c.maxRate[key] = max(c.maxRate[key], int64(v)*1_000_000)
			}
			if r.IntN(4) == 0 {
				parts = append(parts, fmt.Sprintf(`"delay": "%dus"`, r.IntN(50000)))
				c.negJitter = true
			}
			if r.IntN(4) == 0 {
				parts = append(parts, `"loss": `+lossModel())
			}
			if r.IntN(4) == 0 {
				parts = append(parts, `"jitter": `+jitterModel())
			}
			if r.IntN(5) == 0 {
				s, top := capacity()
				delete(c.traceOps, key)
				parts = append(parts, `"capacity": `+s)
				c.maxRate[key] = max(c.maxRate[key], top)
			}
			if r.IntN(4) == 0 {
				parts = append(parts, fmt.Sprintf(`"outage": "%dms"`, 1+r.IntN(400)))
			}
		}
		if r.IntN(5) == 0 {
			parts = append(parts, fmt.Sprintf(`"announce": "%dms"`, r.IntN(at+1)))
		}
		changes = append(changes, fmt.Sprintf(`{"at": "%dms", "link": %q, "dir": %q, %s}`, at, d.link, dir, strings.Join(parts, ", ")))
	}
	var tr []string
	keys := make([]string, 0, len(traces))
	for k := range traces {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, _ := json.Marshal(traces[k])
		tr = append(tr, fmt.Sprintf("%q: %s", k, b))
	}
	traceSec := ""
	if len(tr) > 0 {
		traceSec = fmt.Sprintf(`, "traces": {%s}`, strings.Join(tr, ", "))
	}
	detail := pick(`"summary"`, `"summary"`, `"change"`, `"sampled", "interval": "5ms"`)
	tail := 0
	if r.IntN(2) == 0 {
		tail = 5000
		c.tail = true
	}
	clock := pick("random", "random", "aligned")
	c.raw = fmt.Appendf(nil, `{"name": "stress", "runtime": {"seed": %d, "duration": "%dms", "kernel_clock": %q},
 "nodes": [%s],
 "links": [%s],
 "flows": [%s],
 "changes": [%s],
 "trace": {"detail": %s}%s}`, r.Uint64()>>1, durMs+tail, clock, strings.Join(nodes, ",\n  "), strings.Join(links, ",\n  "),
		strings.Join(flows, ",\n  "), strings.Join(changes, ",\n  "), detail, traceSec)
	// Actions at event positions.
	for range r.IntN(4) {
		a := Action{}
		if r.IntN(2) == 0 {
			d := dirs[r.IntN(len(dirs))]
			a.Link, a.Dir = d.link, "ba"
			if d.ab {
				a.Dir = "ab"
			}
			c.actedOn[a.Link+"/"+a.Dir] = true
			switch r.IntN(4) {
			case 0:
				v := r.Float64() * 0.1
				a.LossP = &v
			case 1:
				v := sim.Duration(r.IntN(30)) * sim.Millisecond
				a.Delay = &v
				c.negJitter = true
			case 2:
				v := sim.Duration(1+r.IntN(300)) * sim.Millisecond
				a.Outage = &v
			default:
				v := config.QueueLimit{Packets: int64(2 + r.IntN(200))}
				a.QueueLimit = &v
			}
		} else {
			a.Flow = fmt.Sprintf("f%d", r.IntN(nf))
			if r.IntN(2) == 0 {
				v := uint32(1 + r.IntN(100))
				a.CwndPkts = &v
			} else {
				v := units.BitRate(int64(1+r.IntN(50)) * 1_000_000)
				a.PacingRate = &v
			}
		}
		c.actions = append(c.actions, stressAction{events: uint64(r.IntN(60000)), a: a})
	}
	sort.Slice(c.actions, func(i, j int) bool { return c.actions[i].events < c.actions[j].events })
	return c
}

// groupCount is a group's flow count: up to 25, or 200 when big.
func groupCount(r *rand.Rand, big bool) int {
	if big {
		return 1 + r.IntN(200)
	}
	return 1 + r.IntN(25)
}
