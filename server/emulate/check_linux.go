//go:build linux

package emulate

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/jiffy"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/units"
)

// checkCCs refuses a scenario whose TCP flows, or split flows' legs, name a
// congestion control this kernel lacks, before anything runs: compare calls
// it ahead of its simulations. Each CC is set on a throwaway socket, as a
// run's sockets are, so one built as a module is loaded as the run would
// load it.
func checkCCs(scn *config.Scenario) error {
	pl, err := planFlows(scn)
	if err != nil {
		return fmt.Errorf("emulate: %w", err)
	}
	var errs []string
	tried := map[string]bool{}
	for _, f := range pl.flows {
		if f.CC == "pump" || f.CC == config.Ping || tried[f.CC] {
			continue
		}
		tried[f.CC] = true
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("emulate: %w", err)
		}
		if err := setCongestion(fd, f.CC); err != nil {
			errs = append(errs, "flows["+f.ID+"].cc: "+err.Error())
		}
		syscall.Close(fd)
	}
	if len(errs) > 0 {
		return errors.New("emulate: " + strings.Join(errs, "; "))
	}
	return nil
}

// check refuses what emulation cannot do faithfully, naming the field, and
// plans the connections of the run.
func check(scn *config.Scenario, opt Options) (*plan, error) {
	pl, err := planFlows(scn)
	if err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}
	var errs []string
	eps := 0
	for _, n := range scn.Nodes {
		if hasNamespace(n.Kind) {
			eps++
		}
	}
	if eps > 250 {
		errs = append(errs, fmt.Sprintf("nodes: %d endpoints and proxies; emulation gives each an address in one /24 and handles at most 250", eps))
	}
	def := config.TCPOptions{SACK: true, RACK: true, TLP: true, PRR: true, FRTO: true, TSO: true, GRO: true, DelayedAck: true}
	for _, f := range pl.flows {
		p := "flows[" + f.ID + "]"
		if f.CC == "pump" {
			errs = append(errs, p+".cc: a constant-rate pump has no kernel counterpart; emulation runs TCP and ping flows only")
			continue
		}
		if f.CC == config.Ping {
			continue // the relay runs the engine's probe (Run)
		}
		o := f.TCP
		for _, sw := range []struct {
			name      string
			got, want bool
		}{{"prr", o.PRR, def.PRR}, {"tso", o.TSO, def.TSO}, {"gro", o.GRO, def.GRO}, {"delayed_ack", o.DelayedAck, def.DelayedAck}} {
			if sw.got != sw.want {
				errs = append(errs, fmt.Sprintf("%s.tcp.%s: %v has no Linux switch; emulation runs the kernel's default (%v)", p, sw.name, sw.got, sw.want))
			}
		}
		if o.ECNLow {
			errs = append(errs, p+".tcp.ecn_low: the mainline kernel has no ecn_low route feature")
		}
	}
	_, conflicts := nodeSysctls(pl.flows)
	errs = append(errs, conflicts...)
	_, conflicts = cubicParams(pl.flows)
	errs = append(errs, conflicts...)
	limit := opt.MaxRateBps
	if limit == 0 {
		limit = DefaultMaxRateBps
	}
	if total := offeredRate(pl); total > limit {
		errs = append(errs, fmt.Sprintf("links: the flows can offer %.0f Mbps (their paths' slowest directions), beyond the relay's real-time ceiling of %.0f Mbps on this machine (README, \"The real kernel beside the simulator\"); lower the rates or raise --max-rate knowingly",
			float64(total)/1e6, float64(limit)/1e6))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("emulate: cannot emulate this scenario:\n  %s", strings.Join(errs, "\n  "))
	}
	return pl, nil
}

// hasNamespace says whether a node of kind k runs a kernel of its own (a
// namespace): endpoints, and proxies, whose relay application terminates
// the legs of the flows they split. Routers and switches live in the relay.
func hasNamespace(k config.NodeKind) bool { return k == config.Endpoint || k == config.Proxy }

// notes are what the kernel run takes differently from the scenario, by
// field: a receiver's gro_interval, which the TUN path has no GRO to
// configure. It is not refused, and the kernel's receiver ACKs as one
// without GRO does, every second segment, or a few more when its
// application reads late: on the wifi built-in (sender-side pcaps,
// 2026-12-05) one ACK per 2.7–2.8 data packets, against one per 18
// simulated with the built-in's 200 µs and one per 2.0 with gro_interval 0.
func notes(flows []config.Flow) []string {
	var out []string
	hz := kernelHZ()
	for _, f := range flows {
		if d := f.TCP.GROInterval; d != 0 {
			out = append(out, fmt.Sprintf("flows[%s].tcp.gro_interval: %v not applied: the TUN path has no GRO, so the kernel's receiver ACKs as one without it: every second segment, a few more when its application reads late (gro_interval=0s: every second)", f.ID, d))
		}
		if f.CC != config.Ping && f.CC != "pump" && hz != 0 && f.TCP.HZ != hz {
			out = append(out, fmt.Sprintf("flows[%s].tcp.hz: %d, but this kernel runs at CONFIG_HZ=%d: its delayed-ACK, loss-probe and RTO timers tick %v apart; set tcp.hz=%d to simulate it",
				f.ID, f.TCP.HZ, hz, jiffy.Tick(uint32(hz)), hz))
		}
	}
	return out
}

// clockNotes says that an aligned kernel clock (runtime.kernel_clock) is
// the simulator's alone: a kernel's stands wherever its uptime puts it.
func clockNotes(rt config.Runtime) []string {
	if rt.KernelClock != config.ClockAligned {
		return nil
	}
	return []string{"runtime.kernel_clock: aligned is not applied: this kernel's clock stands where its uptime puts it, as the default, random, draws it in the simulator"}
}

// kernelHZ is the running kernel's CONFIG_HZ, from /proc/config.gz or
// /boot/config-<release>; 0 when neither says.
func kernelHZ() int {
	read := func() ([]byte, error) {
		if f, err := os.Open("/proc/config.gz"); err == nil {
			defer f.Close()
			z, err := gzip.NewReader(f)
			if err != nil {
				return nil, err
			}
			return io.ReadAll(z)
		}
		return os.ReadFile("/boot/config-" + kernelRelease())
	}
	b, err := read()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CONFIG_HZ="); ok {
			hz, _ := strconv.Atoi(v)
			return hz
		}
	}
	return 0
}

// offeredRate sums the fastest rate the flows can push through the relay:
// on each connection's path the slowest direction, which carries at most
// its rate and at most what its flows offer (a rate application its rate on
// the wire; any other TCP flow as much as it can). The two legs of a split
// flow each carry what the slower of them can: the relay moves its bytes
// twice. Ping probes, which the relay answers itself, add next to nothing.
func offeredRate(pl *plan) int64 {
	nw := pl.nw
	slow := make([]string, len(pl.flows))
	want := make([]units.BitRate, len(pl.flows))
	rate := map[string]units.BitRate{}
	for i, f := range pl.flows {
		if f.CC == config.Ping {
			continue
		}
		for _, d := range nw.Path(nw.Node(f.Src).Index, nw.Node(f.Dst).Index) {
			if want[i] == 0 || d.Rate() < want[i] {
				want[i], slow[i] = d.Rate(), d.Name
			}
		}
		rate[slow[i]] = want[i]
		if f.App.Kind == config.AppRate {
			mss := f.TCP.MSS
			want[i] = units.BitRate(int64(f.App.Rate) * int64(mss+tcp.HeaderBytes) / int64(mss))
		}
	}
	for i, j := range pl.leg1 {
		want[i] = min(want[i], want[j])
		want[j] = want[i]
	}
	var slowest []string
	offered := map[string]units.BitRate{}
	for i, name := range slow {
		if name == "" {
			continue
		}
		if _, ok := offered[name]; !ok {
			slowest = append(slowest, name)
		}
		offered[name] += want[i]
	}
	var total int64
	for _, name := range slowest {
		total += int64(min(rate[name], offered[name]))
	}
	return total
}
