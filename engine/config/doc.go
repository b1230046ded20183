// Package config turns scenario JSON into a validated, typed Scenario: units
// parsed exactly, defaults filled, every error reported with its JSON path.
// This comment is the reference for the scenario format;
// proto/scenario.schema.json is the same format as a JSON Schema for editors.
//
// # A scenario
//
//	{
//	  "name": "pump", "description": "what the run shows",
//	  "runtime": {"seed": 1, "duration": "10s"},
//	  "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"},
//	            {"id": "h2", "kind": "endpoint"}],
//	  "links": [
//	    {"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
//	    {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "100Mbps", "delay": "19ms",
//	     "ab": {"qdisc": {"kind": "fifo", "limit": "1BDP"},
//	            "loss": {"kind": "bernoulli", "p": 0.01},
//	            "jitter": {"kind": "gaussian", "sigma": "1ms"}},
//	     "ba": {"rate": "100Mbps"}}
//	  ],
//	  "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "pump", "rate": "120Mbps"}],
//	  "changes": [{"at": "5s", "link": "bottleneck", "dir": "ab", "rate": "50Mbps"}],
//	  "trace": {"detail": "sampled", "interval": "10ms"}
//	}
//
// Unknown keys are errors at any depth, as are duplicate keys.
//
// # Values
//
//   - Durations: a decimal number and a unit, ps, ns, us (or µs), ms or s:
//     "40ms", "0.5us" (exactly 500000 ps). Never negative.
//   - Rates: bps, Kbps, Mbps, Gbps or Tbps, decimal prefixes: "100Mbps",
//     "1.2Tbps". Always positive.
//   - Sizes: B, KB, MB, GB (decimal) or KiB, MiB, GiB (binary): "1500B",
//     "1.5MB" (1500000 bytes), "4MiB".
//   - A plain JSON integer counts the base unit: picoseconds, bits per second
//     or bytes. A non-integer plain number is an error; write a unit instead.
//   - Everything is exact: "0.1ps" or "0.5B" is an error, not a rounding.
//   - Queue limits: a size ("150KB", or an integer of bytes), a packet count
//     written "100p", or a multiple of the bandwidth-delay product "1BDP",
//     "0.5BDP" (thousandths at most). The BDP is the direction's rate times the
//     base RTT of the path through it, resolved when the topology is built.
//   - Probabilities: JSON numbers in [0, 1].
//   - Ids: letters, digits, '_' and '-', unique among the nodes, among the
//     links and among the flows.
//
// # Fields and defaults
//
// runtime: seed (an integer in [0, 2^64), default 0, and 0 is a seed like any
// other), duration (required, positive), kernel_clock: "random" (default)
// starts the kernel clock the hosts share (jiffies and the millisecond
// timestamp clock) at a whole number of microseconds drawn from the stream
// runtime/clock, "aligned" at zero.
//
// nodes: id, kind (required): "endpoint" hosts flows and forwards nothing;
// "router" forwards on shortest paths by propagation delay (then fewer hops,
// then the lower node index, then the link listed first), from a next-hop
// table computed once; "switch" forwards at layer 2, learning each source's
// port and flooding frames for a destination not yet learned (a loop of
// switches is an error: they run no spanning tree). A router takes routing:
// "first" (default) uses the first of several equal-cost next hops, "ecmp"
// hashes the flow's 5-tuple with a key from the stream node/<id>/ecmp, and
// "spray" draws a next hop per packet from the stream node/<id>/spray,
// which reorders packets where the paths' queues differ. "proxy" forwards
// as a router and splits every TCP flow routed through it into legs
// "<id>.0" (to the proxy) and "<id>.1" (from it), joined by a relay buffer
// of buffer bytes (default "4MiB"); a flow's legs, [{cc, tcp}, {cc, tcp}],
// set each leg's CC and TCP options (default: the flow's).
//
// links: id, a, b (node ids; a link is bidirectional: "ab" is the direction
// from a to b, "ba" the reverse), then the direction fields rate, delay,
// qdisc, loss, jitter, capacity, trace, outages. Values on the link apply to
// both directions; "ab" and "ba" override them field by field, and inside
// qdisc, loss and jitter key by key, except that naming a different kind
// there starts that object afresh; capacity, trace and outages are replaced
// whole. Every direction needs a delay, and a rate, a capacity process or a
// trace, from one place or the other.
//   - qdisc: kind "fifo" (default) with limit (default "1000p", Linux's
//     txqueuelen, or "unlimited", mm-link's default) and optional ecn_threshold (a limit: CE-mark ECT packets
//     arriving to a queue at least that long, a DCTCP-style step marker);
//     "codel" with limit (default "1000p"), target (default 5ms), interval
//     (default 100ms), ecn (default false) and optional ce_threshold, the
//     defaults of the kernel's sch_codel; "fq_codel" with the same plus
//     flows (default 1024) and quantum (default 1500B), limit default
//     "10240p" and ecn default true (fq_codel_init); "dualpi2" with limit
//     (default "10000p"), target (15ms), tupdate (16ms), step_threshold
//     (1ms), coupling (2) and c_protection (10, percent), the defaults of
//     dualpi2_reset_default; "pie" with limit (default "1000p"), target
//     (15ms), tupdate (15ms), alpha (2) and beta (20, in 1/16 Hz, 0..32),
//     ecn, bytemode and dq_rate_estimator (all false), pie_params_init's;
//     "fq_pie" with the same, limit default "10240p", plus flows (1024),
//     quantum (1500B) and ecn_prob (10, percent), fq_pie_init's;
//     "fq" (a host's pacing qdisc) with limit
//     (default "10000p"), flow_limit (100), quantum (3000B), initial_quantum
//     (15000B) and horizon (10s), fq_init's defaults. Only fifo takes byte
//     or BDP limits; the others count packets as the kernel's sch->limit.
//   - loss: kind "none" (default); "bernoulli" with p; "gilbert_elliott" with
//     p_gb, p_bg, loss_good (default 0), loss_bad (default 1); "periodic"
//     with every; "bernoulli_train" with p (a train starts) and train_length
//     (mean, ≥ 1). Every kind takes position "pre" (default: before the
//     qdisc) or "post" (after serialisation).
//   - overhead: bytes each packet takes of the rate beyond its IP bytes
//     (default 0, at most 256; not with a trace).
//   - duplicate: the fraction of packets sent twice, as netem's duplicate
//     (default 0).
//   - jitter: kind "none" (default); "gaussian" with sigma and clamp
//     ("redraw" default, "zero" or "total"); "uniform" with min (default 0)
//     and max;
//     "pareto" with scale, shape and optional cap; "burst" with period,
//     length, extra; "wifi_txop" with interval, burst_size, sigma (default
//     0); "lte_subframe" and "5g_nr" with period (default 1ms, 500us);
//     "reorder" with p and delay. Every kind takes order "fifo" (default:
//     the link keeps its order) or "reorder" (each packet keeps its own
//     delivery time; "reorder" always reorders).
//   - capacity (replaces rate): states, an array of {rate, dwell} (mean
//     dwell), transitions (a row-stochastic matrix, optional with one
//     state), optional dips {every, depth, scale, shape, cap} and grant
//     {start, ramp}. The direction's nominal rate (for BDP limits) is that
//     of state 0.
//   - trace (replaces rate): file (a Mahimahi trace: one sent with the
//     scenario, WithFiles; else relative to the scenario file, WithDir;
//     else one of the shipped "traces/..."), loop (default true), or
//     sha256 naming a text in the top-level "traces", as the canonical
//     form writes it. The nominal rate is the trace's mean.
//   - outages: windows [{at, duration}], periodic start, every, duration,
//     and drop_on_outage (default false).
//
// flows: id, src, dst (two different endpoints with a route between them,
// through routers and switches), cc (default "cubic"; "pump" is a
// constant-rate sender, "ping" a latency probe), start (default 0), size
// (payload bytes, default 0 = unbounded).
//   - A ping flow sends an echo request of packet_size (default "84B", at
//     least "28B", its IP and ICMP headers) every interval (default
//     "200ms", at least "10us") from start to the end of the run; the
//     destination answers at once and the summary gives the RTT quantiles
//     over every probe. It takes no size, rate, ecn, app or tcp.
//   - A pump flow needs rate and takes packet_size (default "1500B", at most
//     "65535B", wire bytes) and ecn ("not-ect" default, "ect0" or "ect1": the
//     codepoint of every packet); it takes no app or tcp.
//   - A TCP flow takes no rate, packet_size or ecn; instead app: kind "greedy"
//     (default, always has data; write, from one MSS to "16MiB", is what it
//     writes per call, default "1MiB": the kernel checks for an app-limited
//     gap once per call), "rate" with rate (writes at that rate), or
//     "onoff" with on and off (greedy for on, silent for off, repeating).
//   - tcp: switches sack, rack, tlp, prr, frto, tso, gro, delayed_ack
//     (all default true); pacing (default "auto": paced when the CC needs
//     it, as bbr, bbr3, bbrb, leocc and prague do, or when the sending node's
//     egress qdisc is fq, as tcp_needs_internal_pacing and sch_fq decide
//     on Linux; true always paces, false paces only a CC that needs it);
//     ecn (default false) and ecn_low (default false:
//     the route feature ecn_low of the google/bbr v3 branch, declaring
//     shallow-threshold CE marking and precise per-segment CE echo; with
//     ECN negotiated, bbr3 and bbrb then respond to CE and their receiver
//     echoes CE as DCTCP does); mss (default "1448B", from TCP_MIN_MSS = 88 B
//     to MAX_TCP_WINDOW = 32767 B), init_cwnd (packets, default 10), sndbuf
//     (default "4MiB", Linux's tcp_wmem[2], or "unlimited"), rcvbuf_init (default "128KiB", the
//     131072 bytes of tcp_rmem[1]; at least twice the MSS, so that the
//     handshake's window holds a segment), rcvbuf_max (default "32MiB",
//     tcp_rmem[2]),
//     gro_interval (default 0: only back-to-back segments coalesce), hz
//     (the kernel's CONFIG_HZ, 100, 250, 300 or 1000, default 1000: the tick
//     TCP's timers and the CCs' jiffies clocks count).
//
// A flows entry with "group" instead of "id" is a flow group:
//
//	{"group": "web", "count": 1000, "src": ["h1", "h2"], "dst": "h9", "cc": "cubic",
//	 "start": {"kind": "poisson", "rate": "200/s"},
//	 "size": {"kind": "lognormal", "median": "20KB", "sigma": 1.5}}
//
// expands, at its place in the array, to count flows "web/0" … "web/999"
// sharing cc, app and tcp (or a pump's or ping's settings). src and dst are
// a node id, a list of ids (flow i takes entry i mod n), or a host per flow:
// {"attach": "r1", "rate": …, "delay": …} gives flow i its own endpoint
// "web/i/src" (or "/dst") on a link of the same name to attach, whose two
// directions take the object's other values as a link's do (qdisc, loss,
// jitter, and a capacity process or trace in place of rate, outages). start is a duration, or {"kind": "at"|"poisson"|"uniform"|
// "periodic", "at": start of the arrivals, "rate": "200/s" (poisson; a string needs its "/s", a JSON number is per
// second too), "span"
// (uniform: [at, at+span)), "every" and "batch" (periodic: flow i at
// at + (i / batch) × every), "jitter" (at, periodic: each start a uniform
// draw in [0, jitter) later)}. size is a size, or {"kind": "fixed" (value),
// "uniform" (min, max, inclusive), "lognormal" (median, sigma; max caps it),
// "pareto" (min, alpha; max caps it), "empirical" ("file": "websearch", the
// DCTCP paper's web-search distribution, "datamining", VL2's data-mining
// one, or a CDF file, found as a trace file is, in the forms traffic
// generators ship (ParseCDF), or "cdf": [[size, probability], …]; the
// points are interpolated linearly)}. Starts and sizes are drawn from the
// streams group/<name>/start and group/<name>/size, so a group's flows
// depend only on the seed and its own fields. --set addresses a group by its name
// ("flows.web.count=10000"), and the canonical form keeps the group, not its
// expansion.
//
// changes: at (no later than runtime.duration), link (a link id), dir ("ab"
// or "ba"), and at least one of rate, delay, loss, jitter, capacity, outage.
// A change's loss, jitter or capacity replaces the direction's model whole;
// a rate ends a capacity process or trace; outage (a duration) takes the
// direction down from at. Optional announce (a duration, at most at) is the
// lead with which the link layer predicts the change: at at − announce
// every flow whose route crosses the link gets the CC event
// cc.EventHandover (SaTCP acts on it; other CCs ignore it). Changes have no
// ids and are addressed by index: "changes[0]".
//
// traces: trace texts by the hex SHA-256 of the text, written by the
// canonical form so that it replays without the files.
//
// trace: detail "summary" (default), "sampled" with interval (default 10ms),
// or "change".
//
// # Errors
//
// Parse reports every problem at once as *Errors, one FieldError per problem
// with its JSON path; arrays of objects are addressed by id:
//
//	config: links[bottleneck].ab.rate: "100Mbs" is not a rate; expected e.g. "100Mbps" (units: bps, Kbps, Mbps, Gbps, Tbps)
//	config: flows[f0].dst: no node with id "h3"
//
// An element whose id is missing or malformed is addressed by its index,
// "links[#2]".
//
// # Overrides
//
// Apply takes --set overrides "path=value" before parsing. A dotted path
// walks object keys and id-addressed arrays by id, changes by index:
//
//	links.bottleneck.ab.loss.p=0.01
//	flows.f0.cc=bbr
//	runtime.seed=7
//	changes.0.at=12s
//
// The value is JSON if it parses as JSON, else a string; null anywhere in a
// scenario means the key is absent, so "--set flows.f0.tcp=null" restores the
// defaults. Objects the format
// allows but the file leaves out are created on the way, so
// links.bottleneck.ab.qdisc.limit=2BDP works on a link without "ab". Override
// and OverrideAll do the same for values already decoded (the server's
// overrides map).
//
// # Canonical form and hash
//
// Scenario.Canonical is the fully defaulted scenario as JSON: shared link
// values resolved into both directions, every default spelt out, values in
// their largest exact unit, keys sorted, no whitespace. Scenario.Hash is the
// hex SHA-256 of it. The hash is therefore semantic: key order, whitespace,
// unit spelling ("1000ms" or "1s") and writing out a default do not change
// it; any change to what the run does, and to name or description, does.
// Array order is part of the scenario and does change it. Parse of Canonical
// gives back the same Scenario, so a checkpoint can store the canonical JSON
// and its hash and rebuild the run from them.
//
// # Built-in scenarios
//
// Builtins lists the scenarios embedded from scenarios/*.json and Builtin
// returns one's JSON. Each names its bottleneck link "bottleneck", with data
// flowing in its "ab" direction, and its flows f0, f1, ….
package config
