package emulate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
)

// ccTracer reads the private state of each sender's kernel CC (struct bbr,
// struct bictcp) with bpftrace, through BTF, on tcp:tcp_probe: the
// tracepoint fires as each segment reaches an established socket, before
// the kernel processes it, so a row holds the state the previous ACK left,
// stamped as the next one arrives. A flow's state is printed at its first
// ACK of data and when its rounds, mode or counts change, not on every
// ACK, so that the tracer's output stays a few lines per round trip.
type ccTracer struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the output reader has finished
	stopped sync.Once
	mu      sync.Mutex
	rows    []ccRow
	bad     string // the first line that did not parse
}

// ccRow is one printed state: the flow, CLOCK_MONOTONIC ns, and values in
// the order of its CC's ccProgram.fields.
type ccRow struct {
	flow int32
	ns   int64
	v    []uint64
}

// ccProgram is what the tracer reads of one CC: the values it prints
// (bpftrace expressions: $b is the CC's private area, $tp the tcp_sock), the
// change key that triggers a print, and how the printed values become
// signals, named and scaled as the simulator's CC names and scales them.
type ccProgram struct {
	typ    string // the private area's struct
	key    string
	fields []string
	conv   func(v []uint64, emit func(name string, x float64))
}

// bbrBW converts BBR's bandwidth unit (packets per µs << BW_SCALE 24) to
// payload bits per second with the flow's MSS.
func bbrBW(v, mss uint64) float64 { return float64(v) * float64(mss) * 8 * 1e6 / (1 << 24) }

var ccPrograms = map[string]ccProgram{
	"bbr": {
		typ: "bbr",
		key: "(((($b->rtt_cnt * 8 + $b->mode) * 4 + $b->full_bw_cnt) * 8 + $b->cycle_idx) * 2 + $b->packet_conservation) * 2 + $b->lt_use_bw",
		fields: []string{"$tp->mss_cache", "$b->rtt_cnt", "$b->mode",
			"$b->full_bw_cnt", "$b->cycle_idx",
			"$b->packet_conservation", "$b->lt_use_bw",
			"$b->bw.s[0].v", "$b->full_bw", "$b->lt_bw",
			"$b->min_rtt_us", "$b->pacing_gain", "$b->cwnd_gain"},
		conv: func(v []uint64, emit func(string, float64)) {
			mss := v[0]
			for i, name := range []string{"rtt_cnt", "mode", "full_bw_cnt", "cycle_idx", "packet_conservation", "lt_use_bw"} {
				emit(name, float64(v[1+i]))
			}
			bw := v[7]
			if v[6] != 0 { // bbr_bw: lt_bw while a policer is detected
				bw = v[9]
			}
			emit("bw", bbrBW(bw, mss))
			emit("full_bw", bbrBW(v[8], mss))
			emit("lt_bw", bbrBW(v[9], mss))
			emit("min_rtt", float64(v[10]))
			emit("pacing_gain", float64(v[11])/256) // BBR_UNIT
			emit("cwnd_gain", float64(v[12])/256)
		},
	},
	"cubic": {
		typ: "bictcp",
		key: "$b->cnt + $b->last_max_cwnd * 65536 + $b->bic_K * 4294967296 + $b->found * 1099511627776",
		fields: []string{"$b->cnt", "$b->last_max_cwnd",
			"$b->bic_origin_point", "$b->bic_K", "$b->delay_min",
			"$b->ack_cnt", "$b->tcp_cwnd", "$b->found",
			"$b->curr_rtt"},
		conv: func(v []uint64, emit func(string, float64)) {
			for i, name := range []string{"cnt", "last_max_cwnd", "origin_point"} {
				emit(name, float64(v[i]))
			}
			emit("k", float64(v[3])*1000/1024) // bic_K is in 1/1024 s
			for i, name := range []string{"delay_min", "ack_cnt", "tcp_cwnd", "hystart_found", "hystart_curr_rtt"} {
				emit(name, float64(v[4+i]))
			}
		},
	},
}

// ccScript is the bpftrace program for the flows whose CC it can read.
// The tracepoint sees every socket on the host, and other runs (a second
// emulation, the notebooks beside the tests) use the same ports and
// addresses, so each program also checks that the socket lives in its
// sender's network namespace (netns: the namespace's inode number).
func ccScript(flows []*eflow, netns map[*eflow]uint64) string {
	var b strings.Builder
	for _, f := range flows {
		p, ok := ccPrograms[f.cfg.CC]
		if !ok {
			continue
		}
		// Each probe names its variables after its flow: bpftrace 0.17
		// types a variable by its first probe, so a $b cast to struct
		// bictcp in one probe left struct bbr's fields unknown in the
		// next ("does not contain a field named 'rtt_cnt'").
		vars := strings.NewReplacer("$b->", fmt.Sprintf("$b%d->", f.idx), "$tp->", fmt.Sprintf("$tp%d->", f.idx))
		fmt.Fprintf(&b, "tracepoint:tcp:tcp_probe /args->dport == %d/ {\n", f.port)
		fmt.Fprintf(&b, "  $sk%d = (struct sock *)args->skaddr;\n", f.idx)
		fmt.Fprintf(&b, "  $tp%d = (struct tcp_sock *)args->skaddr;\n", f.idx)
		fmt.Fprintf(&b, "  $b%d = (struct %s *)((struct inet_connection_sock *)args->skaddr)->icsk_ca_priv;\n", f.idx, p.typ)
		fmt.Fprintf(&b, "  $k%d = (%s) + 1;\n", f.idx, vars.Replace(p.key)) // never the map's 0: the first ACK prints
		fmt.Fprintf(&b, "  if ($sk%d->__sk_common.skc_net.net->ns.inum == %d && $k%d != @k[%d]) {\n    @k[%d] = $k%d;\n",
			f.idx, netns[f], f.idx, f.idx, f.idx, f.idx)
		fmt.Fprintf(&b, "    printf(\"%d %%lld%s\\n\", nsecs", f.idx, strings.Repeat(" %u", len(p.fields)))
		for _, e := range p.fields {
			fmt.Fprintf(&b, ", %s", vars.Replace(e))
		}
		b.WriteString(");\n  }\n}\n")
	}
	return b.String()
}

// tracingDir is where bpftrace finds the kernel's tracepoints.
const tracingDir = "/sys/kernel/tracing"

// mountTracefs mounts the tracing file system where bpftrace looks for the
// tracepoints, if nothing has yet: systemd mounts it at boot, but a bare
// machine or container may not have, and bpftrace then finds no
// tcp:tcp_probe. It is left mounted, as systemd leaves it.
func mountTracefs() error {
	if _, err := os.Stat(tracingDir + "/events"); err == nil {
		return nil
	}
	if err := syscall.Mount("nodev", tracingDir, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("cc_state: the kernel's tracepoints are not mounted at %s and mounting tracefs there failed: %w", tracingDir, err)
	}
	return nil
}

// startCCTracer starts bpftrace on the flows' senders and waits until its
// probes are attached. It returns nil, nil when no flow's CC can be read.
func startCCTracer(ctx context.Context, flows []*eflow) (*ccTracer, error) {
	if !slices.ContainsFunc(flows, func(f *eflow) bool { _, ok := ccPrograms[f.cfg.CC]; return ok }) {
		return nil, nil
	}
	bin, err := exec.LookPath("bpftrace")
	if err != nil {
		return nil, errors.New("cc_state: needs bpftrace (Debian: apt-get install bpftrace)")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, errors.New("cc_state: needs a kernel with BTF (/sys/kernel/btf/vmlinux)")
	}
	if err := mountTracefs(); err != nil {
		return nil, err
	}
	netns := map[*eflow]uint64{}
	for _, f := range flows {
		var st syscall.Stat_t
		if err := syscall.Fstat(f.src.ns.fd, &st); err != nil {
			return nil, fmt.Errorf("cc_state: flows[%s]: its sender's namespace: %w", f.cfg.ID, err)
		}
		netns[f] = st.Ino
	}
	script := ccScript(flows, netns)
	t := &ccTracer{done: make(chan struct{})}
	t.cmd = exec.CommandContext(ctx, bin, "-e", script)
	// Its stderr (the attach errors) is kept for the error message.
	var stderr strings.Builder
	t.cmd.Stderr = &stderr
	out, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("cc_state: %w", err)
	}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cc_state: starting bpftrace: %w", err)
	}
	attached := make(chan struct{})
	go t.read(out, attached)
	select {
	case <-attached:
		return t, nil
	case <-t.done:
	case <-time.After(60 * time.Second):
	}
	t.stop()
	return nil, fmt.Errorf("cc_state: bpftrace did not attach its probes: %s", strings.TrimSpace(stderr.String()))
}

// read collects the tracer's rows until its output ends.
func (t *ccTracer) read(out io.Reader, attached chan struct{}) {
	defer close(t.done)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Attaching ") {
			close(attached)
			continue
		}
		if line == "" || strings.HasPrefix(line, "@k[") {
			continue // the map's dump at exit
		}
		row, ok := parseCCRow(line)
		t.mu.Lock()
		if ok {
			t.rows = append(t.rows, row)
		} else if t.bad == "" {
			t.bad = line
		}
		t.mu.Unlock()
	}
}

// parseCCRow parses "flow ns v1 v2 ...".
func parseCCRow(line string) (ccRow, bool) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return ccRow{}, false
	}
	flow, err1 := strconv.ParseInt(f[0], 10, 32)
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return ccRow{}, false
	}
	r := ccRow{flow: int32(flow), ns: ns, v: make([]uint64, len(f)-2)}
	for i, s := range f[2:] {
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return ccRow{}, false
		}
		r.v[i] = x
	}
	return r, true
}

// stop ends the tracer and waits for its output; it may be called again.
func (t *ccTracer) stop() {
	t.stopped.Do(func() {
		t.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-t.done:
		case <-time.After(10 * time.Second):
			t.cmd.Process.Kill()
			<-t.done
		}
		t.cmd.Wait()
	})
}

// traces reports whether the tracer reads f's CC.
func (t *ccTracer) traces(f *eflow) bool {
	_, ok := ccPrograms[f.cfg.CC]
	return ok
}

// signals turns the rows into signal rows of the run's clock: mono0 is
// CLOCK_MONOTONIC at the run's time zero. Each value is recorded when it
// changed, as the simulator's Signals record them.
func (t *ccTracer) signals(rec *trace.Recorder, flows []*eflow, mono0 int64, end sim.Time) (*trace.SignalTable, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bad != "" {
		return nil, fmt.Errorf("cc_state: unreadable bpftrace output %q", t.bad)
	}
	ccOf := map[int32]string{}
	for _, f := range flows {
		ccOf[int32(f.idx)] = f.cfg.CC
	}
	// The per-CPU buffers hand lines over out of time order.
	sort.SliceStable(t.rows, func(i, j int) bool { return t.rows[i].ns < t.rows[j].ns })
	var out trace.SignalTable
	last := map[[2]int32]float64{}
	for _, r := range t.rows {
		p, ok := ccPrograms[ccOf[r.flow]]
		if !ok || len(r.v) != len(p.fields) {
			return nil, fmt.Errorf("cc_state: a row for flow %d with %d values", r.flow, len(r.v))
		}
		at := sim.Time((r.ns - mono0) * 1000)
		if at < 0 || at > end {
			continue
		}
		p.conv(r.v, func(name string, x float64) {
			id := rec.SignalIndex(name)
			if v, seen := last[[2]int32{r.flow, id}]; seen && v == x {
				return
			}
			last[[2]int32{r.flow, id}] = x
			out.T = append(out.T, int64(at))
			out.Flow = append(out.Flow, r.flow)
			out.Signal = append(out.Signal, id)
			out.Value = append(out.Value, x)
		})
	}
	return &out, nil
}

// monotonicNs is CLOCK_MONOTONIC in ns, bpftrace's nsecs.
func monotonicNs() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
