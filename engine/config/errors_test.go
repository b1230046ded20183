package config

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		opts   []Option
		want   want
	}{
		{"unknown top-level field", func(m map[string]any) { m["bogus"] = 1 },
			nil, want{"bogus", "unknown field"}},
		{"unknown field deep in a qdisc", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["foo"] = 1 },
			nil, want{"links[bottleneck].ab.qdisc.foo", "unknown field"}},
		{"unknown tcp switch", func(m map[string]any) { at(m, "flows", "f0", "tcp")["sak"] = true },
			nil, want{"flows[f0].tcp.sak", "unknown field; expected one of delayed_ack, ecn"}},
		{"pacing neither bool nor auto", func(m map[string]any) { at(m, "flows", "f0", "tcp")["pacing"] = "on" },
			nil, want{"flows[f0].tcp.pacing", `must be true, false or "auto", not`}},
		{"duplicate beyond a probability", func(m map[string]any) { at(m, "links", "bottleneck", "ab")["duplicate"] = json.Number("1.5") },
			nil, want{"links[bottleneck].ab.duplicate", "1.5 is not a probability in [0, 1]"}},
		{"overhead past any link header", func(m map[string]any) { at(m, "links", "bottleneck", "ab")["overhead"] = "1500B" },
			nil, want{"links[bottleneck].ab.overhead", "more than any link header (at most 256B)"}},
		{"overhead beside a trace", func(m map[string]any) {
			d := at(m, "links", "bottleneck", "ab")
			d["overhead"], d["trace"] = "14B", map[string]any{"file": "cellular.trace"}
			delete(d, "rate")
		}, []Option{WithFiles(map[string][]byte{"cellular.trace": []byte("1\n2\n")})}, want{"links[bottleneck].ab.overhead", "a trace link counts mm-link's own 4-byte TUN header"}},
		{"unknown runtime field", func(m map[string]any) { at(m, "runtime")["sed"] = 1 },
			nil, want{"runtime.sed", "unknown field"}},
		{"dangling link end", func(m map[string]any) { at(m, "links", "access")["a"] = "h9" },
			nil, want{"links[access].a", `no node with id "h9"`}},
		{"dangling flow dst", func(m map[string]any) { at(m, "flows", "f0")["dst"] = "h9" },
			nil, want{"flows[f0].dst", `no node with id "h9"`}},
		{"dangling change link", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["link"] = "nope" },
			nil, want{"changes[0].link", `no link with id "nope"`}},
		{"duplicate node id", func(m map[string]any) {
			m["nodes"] = append(list(m, "nodes"), map[string]any{"id": "h1", "kind": "endpoint"})
		}, nil, want{"nodes[h1].id", `duplicate id "h1"`}},
		{"duplicate link id", func(m map[string]any) {
			m["links"] = append(list(m, "links"), map[string]any{"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"})
		}, nil, want{"links[access].id", `duplicate id "access"`}},
		{"duplicate flow id", func(m map[string]any) {
			m["flows"] = append(list(m, "flows"), map[string]any{"id": "f0", "src": "h1", "dst": "h2"})
		}, nil, want{"flows[f0].id", `duplicate id "f0"`}},
		{"missing id", func(m map[string]any) { delete(at(m, "flows", "p0"), "id") },
			nil, want{"flows[#1].id", "missing"}},
		{"id with a dot", func(m map[string]any) { at(m, "flows", "p0")["id"] = "p.0" },
			nil, want{"flows[#1].id", "is not an id"}},
		{"flow from a router", func(m map[string]any) { at(m, "flows", "f0")["src"] = "r1" },
			nil, want{"flows[f0].src", `node "r1" is a router`}},
		{"flow to itself", func(m map[string]any) { at(m, "flows", "f0")["dst"] = "h1" },
			nil, want{"flows[f0].dst", "two different endpoints"}},
		{"link to itself", func(m map[string]any) { at(m, "links", "access")["b"] = "h1" },
			nil, want{"links[access].b", "two different nodes"}},
		{"probability that underflows to 0", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "loss")["p"] = json.Number("1e-400") },
			nil, want{"links[bottleneck].ab.loss.p", "1e-400 is below the smallest float64 and would read as 0"}},
		{"zero rate", func(m map[string]any) { at(m, "links", "access")["rate"] = "0Mbps" },
			nil, want{"links[access].rate", "rate must be positive"}},
		{"zero plain rate", func(m map[string]any) { at(m, "links", "bottleneck", "ab")["rate"] = 0 },
			nil, want{"links[bottleneck].ab.rate", "rate must be positive"}},
		{"negative plain delay", func(m map[string]any) { at(m, "links", "access")["delay"] = -5 },
			nil, want{"links[access].delay", "-5 is negative"}},
		{"misspelt rate unit", func(m map[string]any) { at(m, "links", "bottleneck", "ab")["rate"] = "100Mbs" },
			nil, want{"links[bottleneck].ab.rate", `"100Mbs" is not a rate; expected e.g. "100Mbps"`}},
		{"duration without unit", func(m map[string]any) { at(m, "flows", "f0")["start"] = "5" },
			nil, want{"flows[f0].start", `"5" has no unit`}},
		{"duration finer than a picosecond", func(m map[string]any) { at(m, "flows", "f0")["start"] = "0.1ps" },
			nil, want{"flows[f0].start", "finer than the unit allows"}},
		{"bad size", func(m map[string]any) { at(m, "flows", "f0")["size"] = "10MBytes" },
			nil, want{"flows[f0].size", "is not a size"}},
		{"fractional plain duration", func(m map[string]any) { at(m, "links", "access")["delay"] = 1.5 },
			nil, want{"links[access].delay", `1.5 is not a whole number of picoseconds; give a unit, e.g. "40ms"`}},
		{"fractional plain rate", func(m map[string]any) { at(m, "links", "access")["rate"] = 1e9 + 0.5 },
			nil, want{"links[access].rate", "is not a whole number of bits per second"}},
		{"string where a rate belongs is a type error", func(m map[string]any) { at(m, "links", "access")["rate"] = true },
			nil, want{"links[access].rate", "must be a rate"}},
		{"unknown qdisc kind", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["kind"] = "red" },
			nil, want{"links[bottleneck].ab.qdisc.kind", `unknown value "red"; expected one of "codel", "dualpi2", "fifo", "fq", "fq_codel"`}},
		{"unknown loss kind", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "loss")["kind"] = "gilbert" },
			nil, want{"links[bottleneck].ab.loss.kind", `unknown value "gilbert"`}},
		{"unknown jitter kind", func(m map[string]any) { at(m, "links", "access")["jitter"] = map[string]any{"kind": "lognormal"} },
			nil, want{"links[access].jitter.kind", `unknown value "lognormal"`}},
		{"unknown app kind", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"kind": "video"} },
			nil, want{"flows[f0].app.kind", `unknown value "video"`}},
		{"unknown trace detail", func(m map[string]any) { m["trace"] = map[string]any{"detail": "all"} },
			nil, want{"trace.detail", `unknown value "all"`}},
		{"unknown node kind", func(m map[string]any) { at(m, "nodes", "r1")["kind"] = "hub" },
			nil, want{"nodes[r1].kind", `unknown value "hub"`}},
		{"probability above 1", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "loss")["p"] = 1.5 },
			nil, want{"links[bottleneck].ab.loss.p", "1.5 is not a probability in [0, 1]"}},
		{"negative probability", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "loss")["p"] = -0.1 },
			nil, want{"links[bottleneck].ab.loss.p", "-0.1 is not a probability"}},
		{"bernoulli without p", func(m map[string]any) { delete(at(m, "links", "bottleneck", "ab", "loss"), "p") },
			nil, want{"links[bottleneck].ab.loss.p", "missing"}},
		{"p without bernoulli", func(m map[string]any) { at(m, "links", "access")["loss"] = map[string]any{"p": 0.1} },
			nil, want{"links[access].loss.kind", `missing; "p" is a parameter of loss kind "bernoulli", "bernoulli_train"; name the kind`}},
		{"sigma without gaussian", func(m map[string]any) { at(m, "links", "access")["jitter"] = map[string]any{"sigma": "1ms"} },
			nil, want{"links[access].jitter.kind", `missing; "sigma" is a parameter of jitter kind "gaussian", "wifi_txop"`}},
		{"gaussian without sigma", func(m map[string]any) { at(m, "links", "access")["jitter"] = map[string]any{"kind": "gaussian"} },
			nil, want{"links[access].jitter.sigma", "missing"}},
		{"pump without rate", func(m map[string]any) { delete(at(m, "flows", "p0"), "rate") },
			nil, want{"flows[p0].rate", "missing; a pump flow sends at a fixed rate"}},
		{"tcp options on a pump", func(m map[string]any) { at(m, "flows", "p0")["tcp"] = map[string]any{"sack": false} },
			nil, want{"flows[p0].tcp", "only for TCP flows"}},
		{"pump rate on a TCP flow", func(m map[string]any) { at(m, "flows", "f0")["rate"] = "1Mbps" },
			nil, want{"flows[f0].rate", "only for pump flows"}},
		{"pump ecn on a TCP flow", func(m map[string]any) { at(m, "flows", "f0")["ecn"] = true },
			nil, want{"flows[f0].ecn", `only for pump flows (cc "pump"); a TCP flow's is tcp.ecn`}},
		{"init_cwnd as a string", func(m map[string]any) { at(m, "flows", "f0", "tcp")["init_cwnd"] = "10" },
			nil, want{"flows[f0].tcp.init_cwnd", `must be an integer in [1, 4294967295], not "10"`}},
		{"app rate missing", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"kind": "rate"} },
			nil, want{"flows[f0].app.rate", "missing"}},
		{"onoff without off", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"kind": "onoff", "on": "1s"} },
			nil, want{"flows[f0].app.off", "missing"}},
		{"on for a greedy app", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"on": "1s"} },
			nil, want{"flows[f0].app.on", `only for app kind "onoff"`}},
		{"write for a rate app", func(m map[string]any) {
			at(m, "flows", "f0")["app"] = map[string]any{"kind": "rate", "rate": "1Mbps", "write": "128KiB"}
		}, nil, want{"flows[f0].app.write", `only for app kind "greedy"`}},
		{"zero write", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"write": "0B"} },
			nil, want{"flows[f0].app.write", "must be positive"}},
		{"write above its maximum", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"write": "17MiB"} },
			nil, want{"flows[f0].app.write", "17825792B is above 16777216B"}},
		{"write below the MSS", func(m map[string]any) { at(m, "flows", "f0")["app"] = map[string]any{"write": "1000B"} },
			nil, want{"flows[f0].app.write", "1000B is below the flow's MSS of 1448B"}},
		{"mss below TCP_MIN_MSS", func(m map[string]any) { at(m, "flows", "f0", "tcp")["mss"] = "87B" },
			nil, want{"flows[f0].tcp.mss", "below the kernel's minimum MSS of 88B"}},
		{"zero init_cwnd", func(m map[string]any) { at(m, "flows", "f0", "tcp")["init_cwnd"] = 0 },
			nil, want{"flows[f0].tcp.init_cwnd", "0 is not an integer in [1, 4294967295]"}},
		{"init_cwnd beyond u32", func(m map[string]any) { at(m, "flows", "f0", "tcp")["init_cwnd"] = 1 << 32 },
			nil, want{"flows[f0].tcp.init_cwnd", "4294967296 is not an integer in [1, 4294967295]"}},
		{"zero sndbuf", func(m map[string]any) { at(m, "flows", "f0", "tcp")["sndbuf"] = "0B" },
			nil, want{"flows[f0].tcp.sndbuf", `write "unlimited"`}},
		{"rcvbuf_max below rcvbuf_init", func(m map[string]any) { at(m, "flows", "f0", "tcp")["rcvbuf_init"] = "64MiB" },
			nil, want{"flows[f0].tcp.rcvbuf_max", "33554432B is below rcvbuf_init 67108864B"}},
		{"change direction", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["dir"] = "up" },
			nil, want{"changes[0].dir", `"up" is not a direction`}},
		{"change after the run", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["at"] = "10.5s" },
			nil, want{"changes[0].at", "10.5s is after the run ends at 10s"}},
		{"change duplicate beyond a probability", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["duplicate"] = json.Number("-0.1") },
			nil, want{"changes[0].duplicate", "-0.1 is not a probability in [0, 1]"}},
		{"change of nothing", func(m map[string]any) { delete(list(m, "changes")[0].(map[string]any), "rate") },
			nil, want{"changes[0]", "changes nothing"}},
		{"announce before the run", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["announce"] = "1000s" },
			nil, want{"changes[0].announce", "a lead of 1000s puts the announcement before the run starts"}},
		{"announce not a duration", func(m map[string]any) { list(m, "changes")[0].(map[string]any)["announce"] = "soon" },
			nil, want{"changes[0].announce", `"soon"`}},
		{"ping below its headers", func(m map[string]any) {
			f := at(m, "flows", "f0")
			f["cc"], f["packet_size"] = "ping", "27B"
		}, nil, want{"flows[f0].packet_size", "27B is below an echo request's 28B of IP and ICMP headers"}},
		{"pump packet larger than IPv4 allows", func(m map[string]any) { at(m, "flows", "p0")["packet_size"] = "65536B" },
			nil, want{"flows[p0].packet_size", "65536B is above 65535B, the largest IPv4 packet"}},
		{"plain rate with an exponent", func(m map[string]any) { at(m, "links", "access")["rate"] = json.Number("1e8") },
			nil, want{"links[access].rate", "1e8 has an exponent; a plain number is a count of bits per second written out"}},
		{"plain delay too large", func(m map[string]any) { at(m, "links", "access")["delay"] = json.Number("99999999999999999999") },
			nil, want{"links[access].delay", "99999999999999999999 is too large for a count of picoseconds"}},
		{"ping faster than a probe", func(m map[string]any) {
			f := at(m, "flows", "f0")
			f["cc"], f["interval"] = "ping", "1ps"
		}, nil, want{"flows[f0].interval", "1ps is below 10us"}},
		{"tcp options on a ping", func(m map[string]any) {
			f := at(m, "flows", "f0")
			f["cc"], f["tcp"] = "ping", map[string]any{"sack": false}
		},
			nil, want{"flows[f0].tcp", "a probe is an echo request and its reply, not a TCP flow"}},
		{"mss above MAX_TCP_WINDOW", func(m map[string]any) { at(m, "flows", "f0", "tcp")["mss"] = "32768B" },
			nil, want{"flows[f0].tcp.mss", "32768B is above the largest MSS the kernel takes, 32767B"}},
		{"rcvbuf_init holding no segment", func(m map[string]any) { at(m, "flows", "f0", "tcp")["rcvbuf_init"] = "2895B" },
			nil, want{"flows[f0].tcp.rcvbuf_init", "2895B is below twice the MSS (2896B)"}},
		{"duration past the longest run", func(m map[string]any) { at(m, "runtime")["duration"] = "1000000.000000000001s" },
			nil, want{"runtime.duration", `"1000000.000000000001s" is longer than 1000000s`}},
		{"plain duration past the longest run", func(m map[string]any) { at(m, "links", "access")["delay"] = 1000000000000000001 },
			nil, want{"links[access].delay", "1000000000000000001 is longer than 1000000s"}},
		{"flow starting after the run", func(m map[string]any) { at(m, "flows", "f0")["start"] = "11s" },
			nil, want{"flows[f0].start", "after the run ends"}},
		{"no route", func(m map[string]any) {
			m["nodes"] = append(list(m, "nodes"), map[string]any{"id": "h3", "kind": "endpoint"})
			at(m, "flows", "f0")["dst"] = "h3"
		}, nil, want{"flows[f0]", `no route from "h1" to "h3"`}},
		{"endpoints do not forward", func(m map[string]any) {
			m["nodes"] = append(list(m, "nodes"), map[string]any{"id": "h3", "kind": "endpoint"})
			m["links"] = append(list(m, "links"), map[string]any{"id": "x", "a": "h2", "b": "h3", "rate": "1Gbps", "delay": "1ms"})
			at(m, "flows", "f0")["dst"] = "h3"
		}, nil, want{"flows[f0]", `no route from "h1" to "h3"`}},
		{"unknown cc", func(m map[string]any) { at(m, "flows", "f0")["cc"] = "vegas" },
			[]Option{WithCCs([]string{"cubic", "reno"})}, want{"flows[f0].cc", `unknown congestion control "vegas"; known: pump, cubic, reno`}},
		{"missing duration", func(m map[string]any) { delete(at(m, "runtime"), "duration") },
			nil, want{"runtime.duration", "missing"}},
		{"zero duration", func(m map[string]any) { at(m, "runtime")["duration"] = "0s" },
			nil, want{"runtime.duration", "must be positive"}},
		{"negative seed", func(m map[string]any) { at(m, "runtime")["seed"] = -1 },
			nil, want{"runtime.seed", "-1 is not an integer"}},
		{"a kernel clock that is neither", func(m map[string]any) { at(m, "runtime")["kernel_clock"] = "zero" },
			nil, want{"runtime.kernel_clock", `unknown value "zero"; expected one of "aligned", "random"`}},
		{"direction without a rate", func(m map[string]any) {
			l := at(m, "links", "access")
			delete(l, "rate")
			l["ab"] = map[string]any{"rate": "1Gbps"}
		}, nil, want{"links[access].ba.rate", `missing; give "rate" on the link or in "ba"`}},
		{"codel parameter on a fifo", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["target"] = "5ms" },
			nil, want{"links[bottleneck].ab.qdisc.target", `only for qdisc kind "codel"`}},
		{"fq parameter on fq_codel", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": "fq_codel", "horizon": "1s"}
		}, nil, want{"links[bottleneck].ab.qdisc.horizon", `only for qdisc kind "fq"`}},
		{"ecn_threshold on codel", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": "codel", "ecn_threshold": "65p"}
		}, nil, want{"links[bottleneck].ab.qdisc.ecn_threshold", `only for qdisc kind "fifo"`}},
		{"too many fq_codel flows", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": "fq_codel", "flows": 65537}
		}, nil, want{"links[bottleneck].ab.qdisc.flows", "65537 is not an integer in [1, 65536]"}},
		{"byte limit on fq", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "fq", "limit": "1BDP"}
		}, nil, want{"links[access].qdisc.limit", `qdisc kind "fq" limits packets (sch->limit)`}},
		{"zero fq_codel flows", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": "fq_codel", "flows": 0}
		}, nil, want{"links[bottleneck].ab.qdisc.flows", "0 is not an integer in [1, 65536]"}},
		{"c_protection above 100", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab")["qdisc"] = map[string]any{"kind": "dualpi2", "c_protection": 101}
		}, nil, want{"links[bottleneck].ab.qdisc.c_protection", "101 is not an integer in [0, 100]"}},
		{"ecn on a tcp flow", func(m map[string]any) { at(m, "flows", "f0")["ecn"] = "ect1" },
			nil, want{"flows[f0].ecn", "only for pump flows"}},
		{"unknown pump ecn", func(m map[string]any) { at(m, "flows", "p0")["ecn"] = "ce" },
			nil, want{"flows[p0].ecn", `unknown value "ce"`}},
		{"zero codel interval", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "codel", "interval": "0ms"}
		}, nil, want{"links[access].qdisc.interval", "must be positive"}},
		{"fractional packets", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "1.5p" },
			nil, want{"links[bottleneck].ab.qdisc.limit", `"1.5p" is not a whole number of packets`}},
		{"BDP finer than thousandths", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "0.0005BDP" },
			nil, want{"links[bottleneck].ab.qdisc.limit", "not a BDP multiple"}},
		{"zero limit", func(m map[string]any) { at(m, "links", "bottleneck", "ab", "qdisc")["limit"] = "0p" },
			nil, want{"links[bottleneck].ab.qdisc.limit", "must be positive"}},
		{"pie gain on codel", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "codel", "alpha": 4}
		}, nil, want{"links[access].qdisc.alpha", `only for qdisc kind "pie"`}},
		{"pie gain beyond tc's range", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "pie", "beta": 33}
		}, nil, want{"links[access].qdisc.beta", "33 is not an integer in [0, 32]"}},
		{"fq_pie's ecn_prob on pie", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "pie", "ecn_prob": 20}
		}, nil, want{"links[access].qdisc.ecn_prob", `only for qdisc kind "fq_pie"`}},
		{"pie byte limit", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "pie", "limit": "100KB"}
		}, nil, want{"links[access].qdisc.limit", `qdisc kind "pie" limits packets (sch->limit)`}},
		{"unlimited codel", func(m map[string]any) {
			at(m, "links", "access")["qdisc"] = map[string]any{"kind": "codel", "limit": "unlimited"}
		}, nil, want{"links[access].qdisc.limit", `"unlimited" is for qdisc kind "fifo"; "codel" holds at most a limit`}},
		{"unlimited marking threshold", func(m map[string]any) {
			at(m, "links", "bottleneck", "ab", "qdisc")["ecn_threshold"] = "unlimited"
		}, nil, want{"links[bottleneck].ab.qdisc.ecn_threshold", `"unlimited" is for limit; leave ecn_threshold out`}},
		{"an HZ no kernel runs", func(m map[string]any) { at(m, "flows", "f0")["tcp"] = map[string]any{"hz": 123} },
			nil, want{"flows[f0].tcp.hz", "123 is not a CONFIG_HZ the kernel offers; expected 100, 250, 300 or 1000"}},
		{"no timestamps", func(m map[string]any) { at(m, "flows", "f0")["tcp"] = map[string]any{"timestamps": 0} },
			nil, want{"flows[f0].tcp.timestamps", "0 (no timestamps) is not simulated: the endpoint always negotiates them"}},
		{"a tcp_timestamps Linux has not", func(m map[string]any) { at(m, "flows", "f0")["tcp"] = map[string]any{"timestamps": 4} },
			nil, want{"flows[f0].tcp.timestamps", "4 is not a value of sysctl tcp_timestamps; expected 1 (random offsets, Linux's default) or 2 (none)"}},
		{"sampling interval without sampling", func(m map[string]any) { m["trace"] = map[string]any{"interval": "1ms"} },
			nil, want{"trace.interval", `only for detail "sampled"`}},
		{"no flows", func(m map[string]any) { m["flows"] = []any{} },
			nil, want{"flows", "at least one entry"}},
		{"links not an array", func(m map[string]any) { m["links"] = map[string]any{} },
			nil, want{"links", "must be an array, not an object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := mutate(t, tc.mutate)
			_, err := Parse(raw, tc.opts...)
			if err == nil {
				t.Fatalf("Parse = nil error, want %s: %s", tc.want.path, tc.want.reason)
			}
			list := fieldErrors(t, err)
			for _, fe := range list {
				if matches(fe, tc.want) {
					return
				}
			}
			t.Errorf("Parse errors =\n%v\nwant one at %s containing %q", err, tc.want.path, tc.want.reason)
		})
	}
}

// TestParseBaseIsValid guards the error table: each case must fail because of
// its own mutation, not because the base is broken.
func TestParseBaseIsValid(t *testing.T) {
	mustParse(t, []byte(baseJSON), WithCCs([]string{"cubic"}))
}

func TestParseReportsEveryError(t *testing.T) {
	raw := mutate(t, func(m map[string]any) {
		m["bogus"] = true
		at(m, "links", "bottleneck", "ab")["rate"] = "100Mbs"
		at(m, "flows", "f0")["dst"] = "h9"
		delete(at(m, "flows", "p0"), "rate")
		list(m, "changes")[0].(map[string]any)["dir"] = "sideways"
	})
	_, err := Parse(raw)
	got := fieldErrors(t, err)
	wants := []want{
		{"bogus", "unknown field"},
		{"links[bottleneck].ab.rate", "is not a rate"},
		{"flows[p0].rate", "missing"},
		{"changes[0].dir", "is not a direction"},
		{"flows[f0].dst", "no node"},
	}
	if len(got) != len(wants) {
		t.Fatalf("Parse reported %d errors:\n%v\nwant %d", len(got), err, len(wants))
	}
	for i, w := range wants {
		if !matches(got[i], w) {
			t.Errorf("error %d = %v, want %s: …%s…", i, got[i], w.path, w.reason)
		}
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(wants) || lines[1] != `config: links[bottleneck].ab.rate: "100Mbs" is not a rate; expected e.g. "100Mbps" (units: bps, Kbps, Mbps, Gbps, Tbps)` {
		t.Errorf("Error() =\n%s\nwant one line per error, prefixed \"config: \"", err)
	}
}

func TestParseInvalidJSON(t *testing.T) {
	cases := []struct{ name, in, reason string }{
		// Places are lines and columns from 1, columns in characters.
		{"syntax", `{"name": }`, "invalid JSON: line 1, column 10: invalid character '}'"},
		{"syntax on a later line", "{\n \"runtime\": {},\n \"nodes\": [1,\n 2,]}", "line 4, column 4: invalid character ']'"},
		{"columns count characters", `{"name": "é", "x": }`, "line 1, column 20: invalid character '}'"},
		{"duplicate key", "{\"name\": \"a\",\n  \"name\": \"b\"}", `duplicate key "name" at line 2, column 3`},
		{"trailing data", `{} {}`, "unexpected data after the top-level value"},
		{"empty", ``, "unexpected end of JSON input"},
		{"unterminated", "{\"name\": \"ab", "the document ends inside a string, array or object (at line 1, column 13)"},
		{"not an object", `[1]`, "must be an object, not an array"},
		{"not UTF-8", "{\"name\": \"a\xffb\"}", "not UTF-8 at line 1, column 12"},
		{"half a surrogate pair", `{"name": "a\ud800b"}`, `\ud800 at line 1, column 12 is half a UTF-16 surrogate pair`},
		{"a low half first", `{"name": "\udc00\ud800"}`, `\udc00 at line 1, column 11 is half a UTF-16 surrogate pair`},
		{"high half at the end", `{"name": "\ud83d"}`, `\ud83d at line 1, column 11 is half`},
		{"hostile nesting", `{"name":` + strings.Repeat("[", 100000), "nested deeper than 64 levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("Parse(%.40q) error = %v, want one containing %q", tc.in, err, tc.reason)
			}
		})
	}
}

// Changes after the end of the run, as a shorter --duration makes of a
// LEO path's schedule, are one error at the first of them that counts the
// rest, not one error per change.
func TestLateChangesSaidOnce(t *testing.T) {
	raw, err := Apply([]byte(baseJSON), []string{"runtime.duration=4s",
		`changes=[{"at": "1s", "link": "bottleneck", "dir": "ab", "rate": "50Mbps"},
		 {"at": "5s", "link": "bottleneck", "dir": "ab", "rate": "40Mbps"},
		 {"at": "6s", "link": "nowhere", "dir": "ab", "rate": "30Mbps"},
		 {"at": "7s", "link": "bottleneck", "dir": "ba", "rate": "20Mbps"}]`})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(raw)
	got := fieldErrors(t, err)
	wants := []want{
		{"changes[2].link", `no link with id "nowhere"`},
		{"changes[1].at", "5s is after the run ends at 4s, and so are 2 more changes (the latest at 7s): run at least until 7s"},
	}
	if len(got) != len(wants) {
		t.Fatalf("Parse errors = %v, want %d", got, len(wants))
	}
	for i, w := range wants {
		if !matches(got[i], w) {
			t.Errorf("error %d = %v, want %v", i, got[i], w)
		}
	}
}

// Outages that begin after the run ends are refused as late changes are:
// said once per direction with their count, or once at the link when it
// gives both directions the same; an outage that begins within the run and
// lasts beyond it is fine.
func TestLateOutages(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want []want
	}{
		{`links.bottleneck.ab.outages=[{"at":"1s","duration":"5s"},{"at":"5s","duration":"1ms"},{"at":"4.5s","duration":"1ms"}]`,
			[]want{{"links[bottleneck].ab.outages", "2 outages, the first at 4.5s, are after the run ends at 4s"}}},
		{`links.bottleneck.ba.outages=[{"at":"5s","duration":"1ms"}]`,
			[]want{{"links[bottleneck].ba.outages", "the outage at 5s is after the run ends at 4s"}}},
		{`links.bottleneck.outages={"start":"6s","every":"1s","duration":"10ms"}`,
			[]want{{"links[bottleneck].outages", "the first outage, at 6s, is after the run ends at 4s"}}},
		{`links.bottleneck.outages={"start":"3s","every":"10s","duration":"10ms"}`, nil},
		{`links.bottleneck.ab.outages=[{"at":"4s","duration":"1s"}]`, nil},
	} {
		raw, err := Apply([]byte(baseJSON), []string{"runtime.duration=4s", "changes=[]", tc.set})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(raw)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want no error", tc.set, err)
			}
			continue
		}
		got := fieldErrors(t, err)
		if len(got) != len(tc.want) {
			t.Errorf("%s: errors %v, want %v", tc.set, got, tc.want)
			continue
		}
		for i, w := range tc.want {
			if !matches(got[i], w) {
				t.Errorf("%s: error %d = %v, want %v", tc.set, i, got[i], w)
			}
		}
	}
}

// Two changes of one field of a direction at one instant are refused at
// the later, naming the earlier; changes of other fields, directions or
// instants are not.
func TestChangesOfOneFieldAtOneInstant(t *testing.T) {
	raw, err := Apply([]byte(baseJSON), []string{"runtime.duration=4s",
		`changes=[{"at": "1s", "link": "bottleneck", "dir": "ab", "rate": "10Mbps"},
		 {"at": "1s", "link": "bottleneck", "dir": "ab", "rate": "20Mbps", "delay": "5ms"},
		 {"at": "1s", "link": "bottleneck", "dir": "ba", "rate": "20Mbps"},
		 {"at": "2s", "link": "bottleneck", "dir": "ab", "rate": "30Mbps"},
		 {"at": "1s", "link": "bottleneck", "dir": "ab", "loss": {"kind": "bernoulli", "p": 0.01}}]`})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(raw)
	got := fieldErrors(t, err)
	w := want{"changes[1].rate", "changes[0] sets bottleneck/ab's rate at 1s too; give one value"}
	if len(got) != 1 || !matches(got[0], w) {
		t.Errorf("Parse errors = %v, want %v", got, w)
	}
}
