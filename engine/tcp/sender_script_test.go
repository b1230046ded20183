package tcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
)

// TestSenderScripts runs the scripts in testdata/sender. The script plays
// the receiver and the network: it answers the SYN and hands the sender
// ACKs at chosen instants; the log is every packet the sender sent, and
// its state where asked. A script is a list of commands, a line "----",
// and the exact log expected. Segment numbers count MSS-sized segments
// from sequence 1 (segment n is [1+n·1448, 1+(n+1)·1448)).
//
//	opts cc=reno sack=on rack=on tlp=on pacing=off tso=on frto=on iw=10 hz=1000 size=N (segments)
//	synack at=100ms [win=65160]   the SYN (sent at 0) is answered at 100ms
//	at 250ms                      run the clock (timers fire) to an absolute time
//	ack N [sack=a-b,c-d] [win=W]  an ACK of segments below N, SACKing [a,b) …
//	state                         print the sender's state
//
// Lines starting with # are comments; run with -rewrite to regenerate the
// expected output after a deliberate change (commit only what you have
// checked against the hand computation in the script's comments).
func TestSenderScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/sender/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			script, want, ok := strings.Cut(string(raw), "----\n")
			if !ok {
				t.Fatalf("%s: no ---- line", f)
			}
			got, err := runSenderScript(script)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(script+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: log differs\n--- got\n%s--- want\n%s", f, got, want)
			}
		})
	}
}

// scriptWire records what the sender puts on the network.
type scriptWire struct {
	s     *sim.Sim
	pool  *packet.Pool
	log   *strings.Builder
	sends map[uint64]int
}

// Send implements Sender.
func (w *scriptWire) Send(id packet.ID) {
	p := w.pool.Get(id)
	now := w.s.Now()
	switch {
	case p.Flags&packet.SYN != 0:
		fmt.Fprintf(w.log, "%v SYN\n", now)
	case p.Len == 0 && p.Seq == 1:
		fmt.Fprintf(w.log, "%v ACK\n", now) // the handshake's last
	case p.Len == 0:
		fmt.Fprintf(w.log, "%v probe seq=%d\n", now, p.Seq)
	default:
		n := (p.Seq - 1) / 1448
		w.sends[n]++
		rtx := ""
		if w.sends[n] > 1 {
			rtx = " rtx"
		}
		fmt.Fprintf(w.log, "%v seg=%d%s\n", now, n, rtx)
	}
	w.pool.Free(id)
}

// senderScript is the state of one script run.
type senderScript struct {
	s    *sim.Sim
	pool *packet.Pool
	d    *DataSender
	wire *scriptWire
	log  strings.Builder
	opts config.TCPOptions
	cc   string
	alg  cc.Algorithm // if set, the algorithm instead of cc's
	size units.Bytes
}

func onOff(v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", v)
}

func (sc *senderScript) setOpt(k, v string) error {
	o := &sc.opts
	sw := map[string]*bool{"sack": &o.SACK, "rack": &o.RACK, "tlp": &o.TLP,
		"tso": &o.TSO, "frto": &o.FRTO, "prr": &o.PRR}
	if p, ok := sw[k]; ok {
		b, err := onOff(v)
		*p = b
		return err
	}
	if k == "pacing" {
		b, err := onOff(v)
		o.Pacing = config.PacingOff
		if b {
			o.Pacing = config.PacingOn
		}
		return err
	}
	switch k {
	case "cc":
		sc.cc = v
	case "hz":
		n, err := strconv.ParseUint(v, 10, 32)
		o.HZ = int(n)
		return err
	case "iw":
		n, err := strconv.ParseUint(v, 10, 32)
		o.InitCwnd = uint32(n)
		return err
	case "size":
		n, err := strconv.ParseUint(v, 10, 32)
		sc.size = units.Bytes(n * 1448)
		return err
	default:
		return fmt.Errorf("unknown option %q", k)
	}
	return nil
}

// start creates the sender; its SYN leaves at time 0.
func (sc *senderScript) start() error {
	alg := sc.alg
	if alg == nil {
		var err error
		if alg, err = cc.New(sc.cc); err != nil {
			return err
		}
	}
	sc.s = sim.New()
	sc.pool = &packet.Pool{}
	sc.wire = &scriptWire{s: sc.s, pool: sc.pool, log: &sc.log, sends: map[uint64]int{}}
	rec := trace.NewRecorder(config.TraceSummary, 0, nil)
	rec.Flows = []string{"f0"}
	sc.d = NewSender(sc.s, sc.pool, sc.wire, rec, SenderConfig{Opts: sc.opts, CC: alg, Peer: 1, Size: sc.size})
	sc.s.RunUntil(0)
	return nil
}

// deliver hands the sender an ACK built by fill at the current time.
func (sc *senderScript) deliver(fill func(p *packet.Packet)) {
	id := sc.pool.Alloc()
	p := sc.pool.Get(id)
	p.Src, p.Dst = 1, 0
	p.Flags = packet.ACK
	p.Seq = 1
	p.Size = HeaderBytes
	fill(p)
	sc.d.Receive(id)
}

func parseSegRange(s string) (lo, hi uint64, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want a-b", s)
	}
	if lo, err = strconv.ParseUint(a, 10, 64); err == nil {
		hi, err = strconv.ParseUint(b, 10, 64)
	}
	return lo, hi, err
}

var pendingNames = [...]string{"none", "rto", "reo", "tlp", "probe0"}

func (sc *senderScript) state() {
	d := sc.d
	timer := "none"
	if d.xmitTimer.t.Armed() {
		timer = fmt.Sprintf("%s@%v", pendingNames[d.pending], d.xmitTimer.t.Deadline())
	}
	fmt.Fprintf(&sc.log, "%v state conn=%d ca=%d cwnd=%d in_flight=%d sacked=%d lost=%d retrans=%d snd_wnd=%d rack_rtt=%dus reo_wnd=%dus backoff=%d timer=%s\n",
		sc.s.Now(), d.state, d.st.CA, d.st.CwndPkts, d.sb.inFlight(), d.sb.sackedOut, d.sb.lostOut, d.sb.retransOut,
		d.sndWnd, d.rack.rttUs, d.rackReoWndUs(), d.backoff, timer)
}

// runSenderScript executes script and returns the log.
func runSenderScript(script string) (string, error) {
	sc := &senderScript{opts: shLinuxOpts(), cc: "reno"}
	sc.opts.Pacing = config.PacingOff
	for n, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		args := map[string]string{}
		for _, a := range f[1:] {
			k, v, _ := strings.Cut(a, "=")
			args[k] = v
		}
		fail := func(err error) (string, error) { return "", fmt.Errorf("line %d %q: %w", n+1, line, err) }
		if f[0] != "opts" && sc.d == nil {
			if err := sc.start(); err != nil {
				return fail(err)
			}
		}
		switch f[0] {
		case "opts":
			if sc.d != nil {
				return fail(fmt.Errorf("opts after the start"))
			}
			for k, v := range args {
				if err := sc.setOpt(k, v); err != nil {
					return fail(err)
				}
			}
		case "synack":
			at, err := sim.ParseDuration(args["at"])
			if err != nil {
				return fail(err)
			}
			win := uint64(65160)
			if w, ok := args["win"]; ok {
				if win, err = strconv.ParseUint(w, 10, 32); err != nil {
					return fail(err)
				}
			}
			sc.s.RunUntil(sim.Time(at))
			sc.deliver(func(p *packet.Packet) {
				p.Flags = packet.SYN | packet.ACK
				p.Ack, p.Wnd = 1, uint32(win)
			})
		case "at":
			at, err := sim.ParseDuration(f[1])
			if err != nil {
				return fail(err)
			}
			sc.s.RunUntil(sim.Time(at))
		case "ack":
			segs, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return fail(err)
			}
			win := sc.d.sndWnd
			if w, ok := args["win"]; ok {
				if win, err = strconv.ParseUint(w, 10, 32); err != nil {
					return fail(err)
				}
			}
			var blocks []packet.SackBlock
			if s, ok := args["sack"]; ok {
				for _, r := range strings.Split(s, ",") {
					lo, hi, err := parseSegRange(r)
					if err != nil {
						return fail(err)
					}
					blocks = append(blocks, packet.SackBlock{Start: seqOfSeg(lo), End: seqOfSeg(hi)})
				}
			}
			sc.deliver(func(p *packet.Packet) {
				p.Ack, p.Wnd = seqOfSeg(segs), uint32(win)
				p.NSack = uint8(copy(p.Sack[:], blocks))
			})
		case "state":
			sc.state()
		default:
			return fail(fmt.Errorf("unknown command %q", f[0]))
		}
	}
	return sc.log.String(), nil
}
