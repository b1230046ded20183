//go:build linux

package emulate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/ping"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/rcvpath"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/topo"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/ccscope/ccscope/server/calibrate"
)

// Available reports why emulation cannot run here: it needs root (for
// namespaces), /dev/net/tun and the ip command.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("emulate: needs root (network namespaces, TUN devices)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("emulate: no TUN support: %w", err)
	}
	if err := ipCmd("-V"); err != nil {
		return fmt.Errorf("emulate: needs iproute2's ip command: %w", err)
	}
	return nil
}

// eflow is one flow's pair of sockets and what its goroutines observed.
type eflow struct {
	cfg       config.Flow
	idx       int
	src, dst  *node
	port      int
	lfd, sfd  int // listening socket (dst namespace), sending socket (src)
	mu        sync.Mutex
	rfd       int      // accepted socket, -1 until then
	connected bool     // sfd is connected: TCP_INFO is meaningful
	firstSend sim.Time // when the first byte was handed to the socket
	received  int64
	firstByte sim.Time    // first payload byte read by the receiver; 0: none
	crossed   [3]sim.Time // 1 MB, 10 MB, 100 MB delivered; 0: not yet
	done      sim.Time    // all of a sized flow delivered
	err       error
	abortedAt sim.Time       // when its kernel timed the connection out (ETIMEDOUT)
	abortWhy  string         // engine.FlowSummary.AbortReason's word for it; "" while it stands
	rcvPath   *rcvpath.Stats // the receive-path models' counts; nil: none configured
	flowSmp   trace.FlowSampler
	delivSmp  trace.DeliverySampler
	sigSmp    [4]trace.SignalSampler // TCP_CC_INFO's, when no tracer reads the CC
	ti        tcpInfo
	capture   []calibrate.Sample // nil unless Options.Capture
	bbr       bbrInfo
	hasBBR    bool
	ccTraced  bool   // its CC state comes from the ccTracer
	payload   []byte // what its writer sends (setupFlows)
	// A split flow's leg 0 is read by its proxy's relay (pumpLeg), which
	// writes to relayTo, its leg 1, through a buffer of relayBuf bytes;
	// ready is closed once a leg 1 has connected or given up.
	relayTo  *eflow
	relayBuf int64
	ready    chan struct{}
}

// node is an emulated endpoint or proxy: a namespace (hasNamespace).
type node struct {
	id    string
	index int32
	ns    *netns
	tun   int
	addr  [4]byte
}

// run is one emulation's state and its cleanup stack.
type run struct {
	scn     *config.Scenario
	plan    *plan
	pid     int
	nodes   map[int32]*node
	flows   []*eflow
	undo    []func() error
	sysctls map[string]map[string]string
	mtu     int // every TUN device's (tunMTU); a flow whose mss it does not give sets TCP_MAXSEG
}

// tunMTU is the MTU of the emulated hosts' TUN devices: 1500, or more for
// a flow whose mss with its headers needs more (a jumbo frame), so that
// every flow's kernel segments are its mss long.
func tunMTU(flows []config.Flow) int {
	mtu := 1500
	for _, f := range flows {
		mtu = max(mtu, int(f.TCP.MSS)+tcp.HeaderBytes)
	}
	return mtu
}

func (e *run) push(f func() error) { e.undo = append(e.undo, f) }

// cleanup undoes everything in reverse order and reports the first failure.
func (e *run) cleanup() error {
	var first error
	for i := len(e.undo) - 1; i >= 0; i-- {
		if err := e.undo[i](); err != nil && first == nil {
			first = err
		}
	}
	e.undo = nil
	return first
}

// Run emulates scn until its runtime.duration, or until ctx is cancelled,
// and removes every namespace, device, socket and goroutine it created
// before it returns, whatever happened.
func Run(ctx context.Context, scn *config.Scenario, hash string, opt Options) (res *Result, err error) {
	if err := Available(); err != nil {
		return nil, err
	}
	pl, err := check(scn, opt)
	if err != nil {
		return nil, err
	}
	removeStale()
	e := &run{scn: scn, plan: pl, pid: os.Getpid(), nodes: map[int32]*node{}, sysctls: map[string]map[string]string{}, mtu: tunMTU(pl.flows)}
	defer func() {
		if cerr := e.cleanup(); cerr != nil && err == nil {
			err = fmt.Errorf("emulate: cleanup: %w", cerr)
		}
	}()
	s, pool := sim.New(), &packet.Pool{}
	nw, err := topo.Build(s, pool, scn)
	if err != nil {
		return nil, err
	}
	if err := e.setupNodes(); err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	if want, _ := cubicParams(pl.flows); want != nil { // check refused any conflict
		if err := e.setCubicParams(want, pl.flows); err != nil {
			return nil, fmt.Errorf("emulate: %w", err)
		}
	}
	if err := e.setupFlows(nw); err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	var cct *ccTracer
	if opt.CCState {
		if cct, err = startCCTracer(ctx, e.flows); err != nil {
			return nil, fmt.Errorf("emulate: %w", err)
		}
		if cct != nil {
			e.push(func() error { cct.stop(); return nil })
			for _, f := range e.flows {
				f.ccTraced = cct.traces(f)
			}
		}
	}
	interval := sampleInterval(opt.SampleInterval, scn.Trace)
	r, probes, fds := e.newRelay(s, pool, nw, interval, opt)
	ep, err := newEpoll(fds)
	if err != nil {
		return nil, fmt.Errorf("emulate: epoll: %w", err)
	}
	e.push(func() error { return syscall.Close(ep) })

	// The changes of the scenario, applied by the loop's tick.
	changes := append([]config.Change(nil), scn.Changes...)

	r.warm()
	// Each flow's writer and reader block in system calls (connect,
	// accept, read, write, sleep), and a goroutine blocked in one keeps its
	// P until sysmon takes it back, up to 10 ms later when the process has
	// been quiet. The runtime preempts the relay's loop every 10 ms or so
	// (it never yields: its system calls are raw), and the loop then needs
	// a P again at once: with one P per blocked application and one to
	// spare, a free one is always there. (With GOMAXPROCS at the 2 cores,
	// runs whose flows start and stop, as incast's, waited 10-20 ms for a
	// P, 1 % of their packets late by that much.)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU() + 2*len(e.flows) + 1))
	var wg sync.WaitGroup
	stopFlows := make(chan struct{})
	r.t0 = time.Now()
	mono0 := monotonicNs()
	for _, f := range e.flows {
		wg.Add(2)
		switch {
		case f.relayTo != nil:
			go func() { defer wg.Done(); f.pumpLeg(r, f.relayTo, f.relayBuf, stopFlows) }()
		default:
			go func() { defer wg.Done(); f.receive(r) }()
		}
		switch {
		case f.ready != nil:
			go func() { defer wg.Done(); f.connectLeg(r, stopFlows) }()
		default:
			go func() { defer wg.Done(); f.send(r, stopFlows) }()
		}
	}
	ctxDone := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stop.Store(true)
		case <-ctxDone:
		}
	}()
	scratch := make([]byte, 512)
	tick := func(now sim.Time) {
		for len(changes) > 0 && sim.Time(changes[0].At) <= now {
			applyChange(nw, changes[0])
			changes = changes[1:]
		}
		for _, f := range e.flows {
			f.sample(r, now, scratch)
		}
	}
	lerr := r.loop(ep, sim.Time(scn.Runtime.Duration), interval, tick)
	close(ctxDone)
	end := r.now()
	for _, f := range e.flows {
		f.sample(r, end, scratch)
	}
	close(stopFlows)
	for _, f := range e.flows {
		f.shutdown()
	}
	wg.Wait()
	for _, f := range e.flows {
		f.closeAccepted()
	}
	if lerr != nil {
		return nil, fmt.Errorf("emulate: relay: %w", lerr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("emulate: interrupted: %w", err)
	}
	for _, f := range e.flows {
		if f.err != nil {
			return nil, fmt.Errorf("emulate: flows[%s]: %w", f.cfg.ID, f.err)
		}
	}
	return e.result(r, nw, probes, cct, mono0, end, hash, opt)
}

// result is the run's Result once the relay's loop has ended at end: the
// queues brought up to date, the trace's held rows released and the CC
// tracer's signals merged (mono0 is the monotonic clock at the run's
// start), the summary with its notes (the relay's lateness among them),
// the trace flushed to Options.Sink, and the captures.
func (e *run) result(r *relay, nw *topo.Network, probes map[int]*ping.Probe, cct *ccTracer, mono0 int64, end sim.Time, hash string, opt Options) (*Result, error) {
	for _, d := range nw.Dirs {
		d.CatchUp() // a FIFO direction serves its queue lazily (engine/link/lazy.go)
	}
	scn, rec := e.scn, r.rec
	rec.ReleaseHeld(min(end, sim.Time(scn.Runtime.Duration)))
	if cct != nil {
		cct.stop()
		sig, err := cct.signals(rec, e.flows, mono0, end)
		if err != nil {
			return nil, fmt.Errorf("emulate: %w", err)
		}
		rec.MergeSignals(sig)
	}
	sum := e.summary(r, nw, probes, hash, min(end, sim.Time(scn.Runtime.Duration)))
	sum.Notes = append(notes(e.plan.flows), clockNotes(scn.Runtime)...)
	if p99 := sum.Lateness.P99Ps; p99 != nil && sim.Duration(*p99) > LateWarn {
		ms := func(ps int64) float64 { return float64(ps) / float64(sim.Millisecond) }
		sum.Notes = append(sum.Notes, fmt.Sprintf("lateness: the relay wrote packets %.2f ms late at the 99th percentile (max %.2f ms), over %v: this machine did not keep up in real time, so the kernel run's timing is disturbed; rerun it on a quieter machine or at lower rates",
			ms(*p99), ms(sum.Lateness.MaxPs), LateWarn))
	}
	sum.WallS = time.Since(r.t0).Seconds()
	if opt.Sink != nil {
		rec.SetSink(opt.Sink)
		rec.FlushAll()
		if err := rec.Err(); err != nil {
			return nil, fmt.Errorf("emulate: trace: %w", err)
		}
	}
	out := &Result{Summary: sum, Trace: rec}
	for _, f := range e.flows {
		out.Capture = append(out.Capture, f.capture...)
	}
	if r.pcap != nil {
		out.Pcap = r.pcap.Bytes()
	}
	return out, nil
}

// newRelay builds the relay between the nodes' TUN devices and the
// simulated network nw: a port per node with a kernel (fds are their TUN
// devices), the flows' ends attached where the kernels' packets leave and
// arrive, the engine's ping probes, the receive-path models, the RTT
// trackers, the capture and pcap buffers Options ask for, and an observer
// on every link direction, all recording into one trace sampled every
// interval.
func (e *run) newRelay(s *sim.Sim, pool *packet.Pool, nw *topo.Network, interval sim.Duration, opt Options) (r *relay, probes map[int]*ping.Probe, fds []int) {
	scn, pl := e.scn, e.plan
	rec := trace.NewRecorder(RecordedDetail(scn.Trace), interval, nil)
	for _, l := range scn.Links {
		rec.Links = append(rec.Links, l.ID)
	}
	for _, f := range pl.flows {
		rec.Flows = append(rec.Flows, f.ID)
	}
	r = &relay{s: s, pool: pool, nw: nw, nflows: len(pl.flows), rec: rec, slot: slotFor(e.mtu)}
	// A switch's flooded copies carry the frame's bytes too: without them
	// the copy that reached the destination carried another packet's.
	pool.OnClone = func(from, to packet.ID) { copy(r.buf(to), r.buf(from)) }
	for i := range r.nodeOf {
		r.nodeOf[i] = -1
	}
	for i := range nw.Nodes {
		n, ok := e.nodes[int32(i)]
		if !ok {
			continue
		}
		r.nodeOf[n.addr[3]] = n.index
		p := &tunPort{r: r, fd: n.tun, node: n.index}
		r.ports = append(r.ports, p)
		fds = append(fds, n.tun)
		nw.Nodes[i].Attach(r.foreignFlow(n.index), p)
	}
	// A flow's packets are addressed to its two ends only, and the network
	// holds a receiver for each flow at two nodes.
	for _, f := range e.flows {
		nw.Nodes[f.src.index].Attach(int32(f.idx), r.port(f.src.index))
		nw.Nodes[f.dst.index].Attach(int32(f.idx), r.port(f.dst.index))
	}
	// A ping flow is the engine's probe, run by the relay at its source
	// node and echoed at its destination node: its packets share the
	// emulated links with the kernels' and never leave the relay.
	probes = map[int]*ping.Probe{}
	for i, fc := range scn.Flows {
		if fc.CC == config.Ping {
			probes[i] = engine.NewPing(s, pool, nw, rec, int32(i), fc)
		}
	}
	r.acks = make([]rcvpath.Sink, len(pl.flows))
	r.ackNum = make([]uint64, len(pl.flows))
	r.rtt = make([]rttTrack, len(pl.flows))
	for _, f := range e.flows {
		if f.cfg.Rcv.On() {
			f.rcvPath = r.receivePath(f, scn.Runtime.Seed)
		}
	}
	for _, f := range e.flows {
		r.rtt[f.idx] = rttTrack{src: f.src.index, ring: make([]rttEntry, 1<<16)}
		if opt.Capture {
			f.capture = make([]calibrate.Sample, 0, int(scn.Runtime.Duration/interval)+16)
		}
	}
	if opt.Pcap && len(e.flows) > 0 {
		const snap = 128
		pkts := int64(scn.Runtime.Duration.Seconds()*float64(offeredRate(pl))/(8*1500)) * 2
		r.pcap = calibrate.NewPcapWriter(snap, int(min(max(pkts, 1024), 4<<20)))
		for _, p := range r.ports {
			if p.node == e.flows[0].src.index {
				p.capture = true
			}
		}
	}
	for i, d := range nw.Dirs {
		q := &queueObs{QueueRecorder: engine.QueueRecorder{Trace: r.rec, Link: int32(i / 2), AB: d.AB}, r: r}
		r.queues = append(r.queues, q)
		d.Observe(q)
		if r.rec.On() {
			d.LogLink(&q.QueueRecorder)
		}
	}
	return r, probes, fds
}

// setMaxSeg sets TCP_MAXSEG so that the kernel's segments carry mss bytes,
// as the simulator's do: the kernel counts the option's value as the
// segment's payload and options together, and takes the 12 bytes of the
// timestamp option from it (tcp_sync_mss, tcp_established_options), so
// TCP_MAXSEG 536 sends 524 bytes a segment. Until 2026-12-06 the emulator
// set mss itself, and a flow with mss 536 ran 2.3 % fewer bytes a packet on
// the kernel than in the simulator.
func setMaxSeg(fd, mss int) error {
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, mss+tcpTimestampOpt); err != nil {
		return fmt.Errorf("TCP_MAXSEG %d: %w", mss+tcpTimestampOpt, err)
	}
	return nil
}

// tcpTimestampOpt is TCPOLEN_TSTAMP_ALIGNED, the timestamp option as every
// segment carries it.
const tcpTimestampOpt = 12

// removeStale deletes namespaces left by an earlier run whose process no
// longer exists (one killed with SIGKILL cannot clean up).
func removeStale() {
	for _, name := range leftoverNamespaces(NamespacePrefix) {
		rest := strings.TrimPrefix(name, NamespacePrefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			_ = ipCmd("netns", "del", name)
		}
	}
}

// setupNodes gives every endpoint and proxy a namespace with its sysctls and a TUN
// device carrying 10.201.0.(i+1)/24; routes to the others go through it.
func (e *run) setupNodes() error {
	vals, _ := nodeSysctls(e.plan.flows) // check refused any conflict
	k := 0
	for i, sn := range e.scn.Nodes {
		if !hasNamespace(sn.Kind) {
			continue
		}
		k++
		name := fmt.Sprintf("%s%d-%d", NamespacePrefix, e.pid, i)
		ns, err := newNetns(name)
		if err != nil {
			return err
		}
		e.push(ns.close)
		n := &node{id: sn.ID, index: int32(i), ns: ns, tun: -1, addr: [4]byte{10, 201, 0, byte(k)}}
		e.nodes[int32(i)] = n
		sysctls := vals[sn.ID]
		if sysctls == nil {
			sysctls = nsSysctls(config.DefaultTCPOptions())
		}
		set := map[string]string{}
		err = ns.do(func() error {
			for _, kv := range sysctls {
				if err := sysctl(kv.key, kv.value); err != nil {
					return err
				}
				set[kv.key] = kv.value
			}
			fd, err := openTUN("tun0")
			n.tun = fd
			return err
		})
		if n.tun >= 0 {
			e.push(func() error { return syscall.Close(n.tun) })
		}
		if err != nil {
			return fmt.Errorf("node %s: %w", sn.ID, err)
		}
		e.sysctls[sn.ID] = set
		addr := fmt.Sprintf("10.201.0.%d", k)
		for _, args := range [][]string{
			{"-n", name, "link", "set", "lo", "up"},
			{"-n", name, "addr", "add", addr + "/32", "dev", "tun0"},
			{"-n", name, "link", "set", "tun0", "mtu", strconv.Itoa(e.mtu), "txqueuelen", "10000", "up"},
		} {
			if err := ipCmd(args...); err != nil {
				return fmt.Errorf("node %s: %w", sn.ID, err)
			}
		}
	}
	// One host route per peer: initcwnd is a route attribute, and each
	// flow's sender gets its own.
	for _, src := range e.nodes {
		for _, dst := range e.nodes {
			if src == dst {
				continue
			}
			args := []string{"-n", src.ns.name, "route", "add", ipString(dst.addr) + "/32", "dev", "tun0", "src", ipString(src.addr)}
			for _, f := range e.plan.flows {
				if f.Src == src.id && f.Dst == dst.id {
					args = append(args, "initcwnd", strconv.Itoa(int(f.TCP.InitCwnd)))
					break
				}
			}
			if err := ipCmd(args...); err != nil {
				return err
			}
		}
	}
	return nil
}

func ipString(a [4]byte) string { return fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3]) }

func (e *run) nodeByID(id string) *node {
	for _, n := range e.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// setupFlows creates each flow's listening socket in its destination's
// namespace and its sending socket, with its congestion control, in its
// source's.
func (e *run) setupFlows(nw *topo.Network) error {
	// What every writer sends, read-only and shared by all flows (a
	// megabyte each made 120 MB for incast's 120 flows): the largest
	// write of a greedy application, a segment for the others.
	var size units.Bytes
	for _, fc := range e.plan.flows {
		size = max(size, fc.TCP.MSS)
		if fc.App.Kind == config.Greedy {
			size = max(size, fc.App.WriteSize())
		}
	}
	payload := make([]byte, size)
	byIdx := map[int]*eflow{}
	for i, fc := range e.plan.flows {
		if fc.CC == config.Ping {
			continue
		}
		paced := internalPacing(nw, fc)
		f := &eflow{cfg: fc, idx: i, src: e.nodeByID(fc.Src), dst: e.nodeByID(fc.Dst), port: basePort + i, lfd: -1, sfd: -1, rfd: -1,
			payload: payload}
		e.flows = append(e.flows, f)
		byIdx[i] = f
		mss := int(fc.TCP.MSS)
		err := f.dst.ns.do(func() error {
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			f.lfd = fd
			if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
				return err
			}
			if engine.ReceiverRunsCC(fc) { // the accepted socket inherits it
				if err := setCongestion(fd, fc.CC); err != nil {
					return err
				}
			}
			if mss+tcp.HeaderBytes != e.mtu { // else the devices' MTU gives it
				if err := setMaxSeg(fd, mss); err != nil {
					return err
				}
			}
			if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: f.port, Addr: f.dst.addr}); err != nil {
				return err
			}
			return syscall.Listen(fd, 1)
		})
		if f.lfd >= 0 {
			e.push(func() error { return syscall.Close(f.lfd) })
		}
		if err != nil {
			return fmt.Errorf("flows[%s]: listening at %s: %w", fc.ID, fc.Dst, err)
		}
		err = f.src.ns.do(func() error {
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			f.sfd = fd
			if err := setCongestion(fd, fc.CC); err != nil {
				return err
			}
			if paced {
				if err := enablePacing(fd); err != nil {
					return err
				}
			}
			if mss+tcp.HeaderBytes != e.mtu { // else the devices' MTU gives it
				if err := setMaxSeg(fd, mss); err != nil {
					return err
				}
			}
			return nil
		})
		if f.sfd >= 0 {
			e.push(func() error { return syscall.Close(f.sfd) })
		}
		if err != nil {
			return fmt.Errorf("flows[%s].cc: %w", fc.ID, err)
		}
	}
	// A split flow's proxy reads leg 0 and writes leg 1 (pumpLeg).
	for i, j := range e.plan.leg1 {
		leg0, leg1 := byIdx[i], byIdx[j]
		leg0.relayTo, leg0.relayBuf, leg1.ready = leg1, e.plan.buffer[i], make(chan struct{})
	}
	return nil
}

// internalPacing says whether a flow's socket gets SO_MAX_PACING_RATE, the
// kernel's switch to internal pacing, following the simulator's pacing
// modes: "on", or "auto" with fq as the sending host's egress qdisc, where
// the simulated sender paces as the kernel does under fq (the relay's fq is
// not the sending kernel's, so the socket must be told). In "auto" without
// fq, and "off", the kernel decides as the simulator does: BBR paces
// (SK_PACING_NEEDED), CUBIC and Reno send unpaced bursts.
func internalPacing(nw *topo.Network, f config.Flow) bool {
	switch f.TCP.Pacing {
	case config.PacingOn:
		return true
	case config.PacingOff:
		return false
	}
	path := nw.Path(nw.Node(f.Src).Index, nw.Node(f.Dst).Index)
	if len(path) == 0 {
		return false
	}
	_, fq := path[0].Qdisc().(*qdisc.FQ)
	return fq
}

// applyChange applies a scheduled change to its direction, as the engine's
// changer does in a simulated run.
func applyChange(nw *topo.Network, c config.Change) {
	d, ok := nw.Dir(c.Link, c.Dir)
	if !ok {
		return
	}
	if c.Rate != nil {
		d.SetRate(*c.Rate)
	}
	if c.Delay != nil {
		d.SetDelay(*c.Delay)
	}
	if c.Loss != nil {
		d.SetLoss(*c.Loss)
	}
	if c.Jitter != nil {
		d.SetJitter(*c.Jitter)
	}
	if c.Capacity != nil {
		d.SetCapacity(c.Capacity)
	}
	if c.Outage != nil {
		d.AddOutage(*c.Outage)
	}
	if c.Duplicate != nil {
		d.SetDuplicate(*c.Duplicate)
	}
}

// summary builds the run's report in the shape of a simulated run's.
func (e *run) summary(r *relay, nw *topo.Network, probes map[int]*ping.Probe, hash string, end sim.Time) Summary {
	s := Summary{Mode: "emulate", Kernel: kernelRelease(), Sysctls: e.sysctls, Realtime: r.realtime, Foreign: r.foreign,
		Summary: engine.Summary{Scenario: e.scn.Name, Seed: e.scn.Runtime.Seed, ConfigHash: hash,
			SimTimePs: int64(end), Events: r.s.Events(), Flows: []engine.FlowSummary{}, Queues: []engine.QueueSummary{}}}
	s.Lateness = Lateness{Packets: r.late.Count(), P50Ps: quantile(&r.late, 0.5), P99Ps: quantile(&r.late, 0.99), MaxPs: r.lateMax}
	tcp := e.flows
	// The legs of a group's split flow report their FCT, as the
	// simulator's do.
	grouped := map[int]bool{}
	for i, j := range e.plan.leg1 {
		grouped[i] = e.scn.Flows[i].Group != ""
		grouped[j] = grouped[i]
	}
	for i, fc := range e.plan.flows {
		rm := ReceiverMilestones{ID: fc.ID}
		if p := probes[i]; p != nil {
			s.Receivers = append(s.Receivers, rm)
			s.Flows = append(s.Flows, engine.PingSummary(p, fc))
			continue
		}
		f := tcp[0]
		tcp = tcp[1:]
		fs := engine.FlowSummary{ID: f.cfg.ID, Kind: "tcp", CC: f.cfg.CC, CCParams: f.cfg.CCParams, BytesSent: int64(f.ti.BytesSent),
			BytesDelivered: f.received, RTTP50Ps: quantile(&r.rtt[i].hist, 0.5), RTTP99Ps: quantile(&r.rtt[i].hist, 0.99),
			RcvPath: f.rcvPath}
		if f.firstByte != 0 {
			rm.FirstByte = ptr(int64(f.firstByte))
			rx := func(k int) *int64 {
				if f.crossed[k] == 0 {
					return nil
				}
				return ptr(int64(f.crossed[k].Sub(f.firstByte)))
			}
			rm.T1MBPs, rm.T10MBPs, rm.T100MBPs = rx(0), rx(1), rx(2)
		}
		if f.connected {
			fs.Retransmits = ptr(int64(f.ti.TotalRetrans))
			ms := func(k int) *int64 {
				if f.crossed[k] == 0 {
					return nil
				}
				return ptr(int64(f.crossed[k].Sub(f.firstSend)))
			}
			fs.T10MBPs, fs.T100MBPs = ms(1), ms(2)
			fs.GoodputBps = engine.Goodput(units.Bytes(f.received), f.firstSend, f.done, end)
			if f.hasBBR {
				fs.CCFinal = map[string]float64{"bw": float64(f.bbr.BwBps), "min_rtt": float64(f.bbr.MinRTTUs)}
			}
		}
		if (fc.Group != "" || grouped[i]) && f.done != 0 {
			fs.FCTPs = ptr(int64(f.done.Sub(sim.Time(fc.Start)))) // as a simulated group flow's
		}
		if f.abortWhy != "" {
			fs.AbortedPs, fs.AbortReason = ptr(int64(f.abortedAt)), f.abortWhy
		}
		s.Receivers = append(s.Receivers, rm)
		s.Flows = append(s.Flows, fs)
	}
	s.Groups = engine.GroupSummaries(e.scn, nw, engine.EndToEnd(s.Flows, e.plan.leg1))
	for i, d := range nw.Dirs {
		if q, ok := r.queues[i].Row(d); ok {
			s.Queues = append(s.Queues, q)
		}
	}
	return s
}

func quantile(h *trace.Hist, q float64) *int64 {
	v, ok := h.Quantile(q)
	if !ok {
		return nil
	}
	return &v
}

func ptr(v int64) *int64 { return &v }

// kernelRelease is uname -r.
func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
