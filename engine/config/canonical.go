package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Canonical returns the scenario's canonical JSON: every default filled in,
// each link's shared values resolved into both "ab" and "ba", values written
// exactly in their largest whole unit ("19ms", "100Mbps", "1500B", "1000p"),
// object keys sorted, no whitespace. Array order is kept: nodes, links, flows
// and changes stay in the order the scenario gives them. Parse(Canonical())
// yields the same Scenario, which is how a checkpoint rebuilds its run.
func (s *Scenario) Canonical() []byte {
	return encodeTree(s.tree())
}

// Hash returns the hex SHA-256 of Canonical. Two scenarios hash equal exactly
// when they mean the same run (including name and description): key order,
// whitespace, unit spelling ("1000ms" or "1s") and spelled-out defaults do
// not change it.
func (s *Scenario) Hash() string {
	sum := sha256.Sum256(s.Canonical())
	return hex.EncodeToString(sum[:])
}

// Canonical parses raw scenario JSON and returns its canonical form; see
// Scenario.Canonical.
func Canonical(raw []byte, opts ...Option) ([]byte, error) {
	s, err := Parse(raw, opts...)
	if err != nil {
		return nil, err
	}
	return s.Canonical(), nil
}

// Hash parses raw scenario JSON and returns the hash of its canonical form;
// see Scenario.Hash.
func Hash(raw []byte, opts ...Option) (string, error) {
	s, err := Parse(raw, opts...)
	if err != nil {
		return "", err
	}
	return s.Hash(), nil
}

type tree = map[string]any

func (s *Scenario) tree() tree {
	nodes := make([]any, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		if n.Group == "" { // a group's own hosts come from the group
			t := tree{"id": n.ID, "kind": nameOf(nodeKinds, n.Kind)}
			if n.Routing != RouteFirst { // absent keeps older scenarios' hashes
				t["routing"] = nameOf(routingModes, n.Routing)
			}
			if n.Kind == Proxy {
				t["buffer"] = formatSize(n.Buffer)
			}
			nodes = append(nodes, t)
		}
	}
	links := make([]any, 0, len(s.Links))
	for _, l := range s.Links {
		if l.Group == "" {
			links = append(links, tree{"id": l.ID, "a": l.A, "b": l.B, "ab": l.AB.tree(), "ba": l.BA.tree()})
		}
	}
	flows := make([]any, 0, len(s.Flows))
	for _, f := range s.Flows {
		switch {
		case f.Group == "":
			flows = append(flows, f.tree())
		case f.ID == f.Group+"/0":
			flows = append(flows, s.group(f.Group).tree())
		}
	}
	changes := make([]any, len(s.Changes))
	for i, ch := range s.Changes {
		t := tree{"at": ch.At.String(), "link": ch.Link, "dir": ch.Dir}
		if ch.Rate != nil {
			t["rate"] = ch.Rate.String()
		}
		if ch.Delay != nil {
			t["delay"] = ch.Delay.String()
		}
		if ch.Loss != nil {
			t["loss"] = ch.Loss.tree()
		}
		if ch.Jitter != nil {
			t["jitter"] = ch.Jitter.tree()
		}
		if ch.Capacity != nil {
			t["capacity"] = ch.Capacity.tree()
		}
		if ch.Outage != nil {
			t["outage"] = ch.Outage.String()
		}
		if ch.Duplicate != nil {
			t["duplicate"] = float(*ch.Duplicate)
		}
		if ch.Announce != nil {
			t["announce"] = ch.Announce.String()
		}
		changes[i] = t
	}
	tr := tree{"detail": nameOf(traceDetails, s.Trace.Detail)}
	if s.Trace.Detail == TraceSampled {
		tr["interval"] = s.Trace.Interval.String()
	}
	out := tree{
		"name": s.Name, "description": s.Description,
		"runtime": s.runtimeTree(),
		"nodes":   nodes, "links": links, "flows": flows, "changes": changes, "trace": tr,
	}
	// Trace files travel inside the canonical config, by the SHA-256 of
	// their text, so a checkpoint replays where the files are not.
	texts := tree{}
	for _, l := range s.Links {
		for _, d := range []Direction{l.AB, l.BA} {
			if d.Trace != nil {
				texts[d.Trace.SHA256] = d.Trace.Text()
			}
		}
	}
	if len(texts) > 0 {
		out["traces"] = texts
	}
	return out
}

// tree writes a direction. A trace or capacity process replaces the rate;
// keys of models a direction does not have are left out, so scenarios
// written before the models existed keep their hashes.
func (d Direction) tree() tree {
	t := tree{"delay": d.Delay.String(), "qdisc": d.Qdisc.tree(), "loss": d.Loss.tree(), "jitter": d.Jitter.tree()}
	if d.Overhead != 0 {
		t["overhead"] = int64(d.Overhead)
	}
	if d.Duplicate != 0 {
		t["duplicate"] = float(d.Duplicate)
	}
	switch {
	case d.Trace != nil:
		t["trace"] = tree{"sha256": d.Trace.SHA256, "loop": d.Trace.Loop}
	case d.Capacity != nil:
		t["capacity"] = d.Capacity.tree()
	default:
		t["rate"] = d.Rate.String()
	}
	if o := d.Outages; o != nil {
		ot := tree{"drop_on_outage": o.DropOnOutage}
		if len(o.Windows) > 0 {
			ws := make([]any, len(o.Windows))
			for i, w := range o.Windows {
				ws[i] = tree{"at": w.At.String(), "duration": w.Duration.String()}
			}
			ot["windows"] = ws
		}
		if o.Every > 0 {
			ot["start"], ot["every"], ot["duration"] = o.Start.String(), o.Every.String(), o.Duration.String()
		}
		t["outages"] = ot
	}
	return t
}

func (j Jitter) tree() tree {
	t := tree{"kind": nameOf(jitterKinds, j.Kind)}
	switch j.Kind {
	case Gaussian:
		t["sigma"] = j.Sigma.String()
		if j.Clamp != ClampRedraw {
			t["clamp"] = nameOf(jitterClamps, j.Clamp)
		}
	case Uniform:
		t["min"], t["max"] = j.Min.String(), j.Max.String()
	case Pareto:
		t["scale"], t["shape"] = j.Scale.String(), float(j.Shape)
		if j.Cap > 0 {
			t["cap"] = j.Cap.String()
		}
	case Burst:
		t["period"], t["length"], t["extra"] = j.Period.String(), j.Length.String(), j.Extra.String()
	case WiFiTXOP:
		t["interval"], t["burst_size"], t["sigma"] = j.Interval.String(), count(j.BurstSize), j.Sigma.String()
	case LTESubframe, NR5G:
		t["period"] = j.Period.String()
	case Reorder:
		t["p"], t["delay"] = float(j.P), j.Delay.String()
	}
	if j.Order == OrderReorder && j.Kind != Reorder {
		t["order"] = nameOf(jitterOrders, j.Order)
	}
	return t
}

func (c *Capacity) tree() tree {
	states := make([]any, len(c.States))
	for i, s := range c.States {
		states[i] = tree{"rate": s.Rate.String(), "dwell": s.Dwell.String()}
	}
	rows := make([]any, len(c.Transitions))
	for i, r := range c.Transitions {
		row := make([]any, len(r))
		for j, p := range r {
			row[j] = float(p)
		}
		rows[i] = row
	}
	t := tree{"states": states, "transitions": rows}
	if d := c.Dips; d != nil {
		t["dips"] = tree{"every": d.Every.String(), "depth": float(d.Depth), "scale": d.Scale.String(),
			"shape": float(d.Shape), "cap": d.Cap.String()}
	}
	if g := c.Grant; g != nil {
		t["grant"] = tree{"start": float(g.Start), "ramp": g.Ramp.String()}
	}
	return t
}

// float writes a float64 in strconv's shortest form, which parses back to
// the same value.
func float(x float64) json.Number { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }

func count(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// tree writes every parameter of the kind, defaults included; the optional
// thresholds only when on.
func (q Qdisc) tree() tree {
	t := tree{"kind": nameOf(qdiscKinds, q.Kind), "limit": formatLimit(q.Limit)}
	switch q.Kind {
	case FIFO:
		if q.ECNThreshold != (QueueLimit{}) {
			t["ecn_threshold"] = formatLimit(q.ECNThreshold)
		}
	case CoDel, FQCoDel:
		t["target"], t["interval"], t["ecn"] = q.Target.String(), q.Interval.String(), q.ECN
		if q.CEThreshold != 0 {
			t["ce_threshold"] = q.CEThreshold.String()
		}
		if q.Kind == FQCoDel {
			t["flows"], t["quantum"] = count(q.Flows), formatSize(q.Quantum)
		}
	case DualPI2:
		t["target"], t["tupdate"], t["step_threshold"] = q.Target.String(), q.TUpdate.String(), q.StepThreshold.String()
		t["coupling"], t["c_protection"] = count(q.Coupling), count(q.CProtection)
	case PIE, FQPIE:
		t["target"], t["tupdate"], t["alpha"], t["beta"] = q.Target.String(), q.TUpdate.String(), count(q.Alpha), count(q.Beta)
		t["ecn"], t["bytemode"], t["dq_rate_estimator"] = q.ECN, q.ByteMode, q.DQRateEstimator
		if q.Kind == FQPIE {
			t["flows"], t["quantum"], t["ecn_prob"] = count(q.Flows), formatSize(q.Quantum), count(q.ECNProb)
		}
	case FQ:
		t["quantum"], t["initial_quantum"] = formatSize(q.Quantum), formatSize(q.InitialQuantum)
		t["flow_limit"], t["horizon"] = count(q.FlowLimit), q.Horizon.String()
	}
	return t
}

func (l Loss) tree() tree {
	t := tree{"kind": nameOf(lossKinds, l.Kind)}
	switch l.Kind {
	case Bernoulli:
		t["p"] = float(l.P)
	case GilbertElliott:
		t["p_gb"], t["p_bg"], t["loss_good"], t["loss_bad"] = float(l.PGB), float(l.PBG), float(l.LossGood), float(l.LossBad)
	case Periodic:
		t["every"] = count(l.Every)
	case BernoulliTrain:
		t["p"], t["train_length"] = float(l.P), float(l.TrainLength)
	}
	if l.Position != LossPre {
		t["position"] = nameOf(lossPositions, l.Position)
	}
	return t
}

func (f Flow) tree() tree {
	t := tree{"id": f.ID, "src": f.Src, "dst": f.Dst, "cc": f.CC, "start": f.Start.String(), "size": formatSize(f.Size)}
	if f.CC == Ping {
		t["interval"], t["packet_size"] = f.Interval.String(), formatSize(f.PacketSize)
		delete(t, "size")
		return t
	}
	if f.CC == Pump {
		t["rate"] = f.Rate.String()
		t["packet_size"] = formatSize(f.PacketSize)
		if f.ECN != NotECT { // absent keeps older scenarios' hashes
			t["ecn"] = nameOf(ecnMarkings, f.ECN)
		}
		return t
	}
	a := tree{"kind": nameOf(appKinds, f.App.Kind)}
	switch f.App.Kind {
	case AppRate:
		a["rate"] = f.App.Rate.String()
	case OnOff:
		a["on"], a["off"] = f.App.On.String(), f.App.Off.String()
	}
	if w := f.App.WriteSize(); w != DefaultAppWrite { // absent keeps older scenarios' hashes
		a["write"] = formatSize(w)
	}
	o := f.TCP
	sndbuf := any(unlimited)
	if o.SndBuf != 0 {
		sndbuf = formatSize(o.SndBuf)
	}
	t["app"] = a
	tcp := tree{
		"sack": o.SACK, "rack": o.RACK, "tlp": o.TLP, "prr": o.PRR, "frto": o.FRTO,
		"pacing": pacingValue(o.Pacing), "tso": o.TSO, "gro": o.GRO, "delayed_ack": o.DelayedAck, "ecn": o.ECN,
		"mss": formatSize(o.MSS), "init_cwnd": json.Number(strconv.FormatUint(uint64(o.InitCwnd), 10)),
		"sndbuf": sndbuf, "rcvbuf_init": formatSize(o.RcvBufInit), "rcvbuf_max": formatSize(o.RcvBufMax),
		"gro_interval": o.GROInterval.String(),
	}
	if o.ECNLow { // absent keeps older scenarios' hashes
		tcp["ecn_low"] = true
	}
	if o.HZ != DefaultHZ { // absent keeps older scenarios' hashes
		tcp["hz"] = json.Number(strconv.Itoa(o.HZ))
	}
	if o.Timestamps != DefaultTimestamps { // absent keeps older scenarios' hashes
		tcp["timestamps"] = json.Number(strconv.Itoa(o.Timestamps))
	}
	t["tcp"] = tcp
	addCCParams(t, f.CCParams)
	f.Rcv.addTo(t)
	if f.Legs != nil { // absent keeps older scenarios' hashes
		legs := make([]any, 2)
		for i, l := range f.Legs {
			lt := tree{"cc": l.CC, "tcp": Flow{Params: &Params{CC: l.CC, TCP: l.TCP}}.tree()["tcp"]}
			addCCParams(lt, l.CCParams)
			legs[i] = lt
		}
		t["legs"] = legs
	}
	return t
}

// addCCParams writes a flow's or leg's module parameters as integers;
// absent when there are none, which keeps older scenarios' hashes.
func addCCParams(t tree, p map[string]int64) {
	if len(p) == 0 {
		return
	}
	m := tree{}
	for k, v := range p {
		m[k] = json.Number(strconv.FormatInt(v, 10))
	}
	t["cc_params"] = m
}

// pacingValue is a pacing switch as the scenario format writes it.
func pacingValue(p Pacing) any {
	switch p {
	case PacingOn:
		return true
	case PacingOff:
		return false
	}
	return pacingAuto
}

// addTo writes the receive-path models a flow has; absent ones stay out, so
// flows without them keep their hashes. A grant writes every field beside
// its profile, which Parse lays over the profile's values.
func (r RcvPath) addTo(t tree) {
	durs := func(ds []sim.Duration) []any {
		out := make([]any, len(ds))
		for i, d := range ds {
			out[i] = d.String()
		}
		return out
	}
	if r.Hold > 0 {
		t["rcv_hold"] = r.Hold.String()
	}
	if h := r.AckHold; h != nil {
		t["ack_hold"] = tree{"quantiles": durs(h.Quantiles), "saturation": float(h.Saturation), "window": h.Window.String()}
	}
	if g := r.Grant; g != nil {
		gt := tree{"gap": durs(g.Gap), "per_grant": count(int64(g.PerGrant)), "loss": float(g.Loss), "filter": g.Filter, "slot": g.Slot.String()}
		if g.Profile != "" {
			gt["profile"] = g.Profile
		}
		t["ack_grant"] = gt
	}
}

// formatSize writes n exactly in the largest unit that divides it
// ("4MB", "128KiB", "1500B"), decimal before binary at equal magnitude.
func formatSize(n units.Bytes) string {
	for _, u := range []struct {
		name  string
		scale units.Bytes
	}{{"GB", units.GB}, {"GiB", units.GiB}, {"MB", units.MB}, {"MiB", units.MiB}, {"KB", units.KB}, {"KiB", units.KiB}} {
		if n != 0 && n%u.scale == 0 {
			return strconv.FormatInt(int64(n/u.scale), 10) + u.name
		}
	}
	return n.String()
}

// nameOf finds the JSON name of an enum value.
func nameOf[T comparable](m map[string]T, v T) string {
	for k, x := range m {
		if x == v {
			return k
		}
	}
	panic("config: enum value without a name")
}

// runtimeTree is the runtime section; kernel_clock only when aligned, so
// that scenarios written before it keep their hashes.
func (s *Scenario) runtimeTree() tree {
	t := tree{"seed": json.Number(strconv.FormatUint(s.Runtime.Seed, 10)), "duration": s.Runtime.Duration.String()}
	if s.Runtime.KernelClock == ClockAligned {
		t["kernel_clock"] = "aligned"
	}
	return t
}
