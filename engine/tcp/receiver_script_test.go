package tcp

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/receiver scripts (commit only what you understand)")

// TestReceiverScripts runs the scripts in testdata/receiver. A script is a
// list of commands, a line "----", and the exact log expected: every
// packet the receiver sent, in order, with "stats" lines where asked.
//
//	opts sack=on delayed_ack=on gro=off gro_interval=100us ecn=on echo=dctcp mss=1448 rcvbuf=131072 rcvbuf_max=6291456
//	syn [ece] [cwr] [ae] [notect|ect0|ect1|ce]
//	at 10ms                 run the clock to an absolute time
//	advance 40ms            run the clock forward
//	data seq=1 len=1448 [count=N every=100us] [notect|ect0|ect1|ce] [cwr] [psh] [tsecr=N]
//	stats                   print the receiver's counters
//
// Lines starting with # are comments. Run with -rewrite to regenerate the
// expected output after a deliberate behaviour change.
func TestReceiverScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/receiver/*.txt")
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
			got, err := runScript(t, script)
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

// runScript executes script and returns the log.
func runScript(t *testing.T, script string) (string, error) {
	var h *harness
	o := defaultOpts()
	echo := EchoClassic
	var out strings.Builder
	seen := 0
	flush := func() {
		if h == nil {
			return
		}
		for _, a := range h.out.acks[seen:] {
			out.WriteString(a.String() + "\n")
		}
		seen = len(h.out.acks)
	}
	ensure := func() {
		if h == nil {
			h = newHarness(t, o, echo)
		}
	}
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
		switch f[0] {
		case "opts":
			if h != nil {
				return fail(fmt.Errorf("opts after the receiver started"))
			}
			var err error
			if o, echo, err = parseOpts(o, echo, args); err != nil {
				return fail(err)
			}
		case "syn":
			ensure()
			fl, e := parseFlags(args)
			h.syn(fl&(packet.ECE|packet.CWR|packet.AE), e)
		case "at", "advance":
			ensure()
			d, err := sim.ParseDuration(f[1])
			if err != nil {
				return fail(err)
			}
			if f[0] == "advance" {
				d += sim.Duration(h.s.Now())
			}
			h.at(d)
		case "data":
			ensure()
			if err := scriptData(h, args); err != nil {
				return fail(err)
			}
		case "stats":
			ensure()
			flush()
			st := h.r.Stats()
			fmt.Fprintf(&out, "stats acks=%d delayed=%d compressed=%d dsacks=%d ofo=%d gro=%d ce=%d rcvbuf=%d\n",
				st.Acks, st.DelayedAcks, st.CompressedAcks, st.DSacks, st.OfoSegments, st.GROFlushes, st.CEPackets, h.r.RcvBuf())
		default:
			return fail(fmt.Errorf("unknown command"))
		}
		flush()
	}
	return out.String(), nil
}

// scriptData delivers the segments of a data command.
func scriptData(h *harness, args map[string]string) error {
	num := func(k string, def uint64) (uint64, error) {
		v, ok := args[k]
		if !ok {
			return def, nil
		}
		return strconv.ParseUint(v, 10, 64)
	}
	seq, err := num("seq", 0)
	if err != nil {
		return err
	}
	l, err := num("len", 1448)
	if err != nil {
		return err
	}
	count, err := num("count", 1)
	if err != nil {
		return err
	}
	ecr, err := num("tsecr", 0)
	if err != nil {
		return err
	}
	var every sim.Duration
	if v, ok := args["every"]; ok {
		if every, err = sim.ParseDuration(v); err != nil {
			return err
		}
	}
	fl, e := parseFlags(args)
	for i := range count {
		if i > 0 {
			h.at(sim.Duration(h.s.Now()) + every)
		}
		h.segTS(seq+i*l, uint32(l), e, fl&(packet.CWR|packet.PSH), uint32(ecr))
	}
	return nil
}

// parseFlags reads TCP flag and ECN codepoint words.
func parseFlags(args map[string]string) (packet.Flags, packet.ECN) {
	var fl packet.Flags
	e := packet.NotECT
	for k := range args {
		switch k {
		case "ece":
			fl |= packet.ECE
		case "cwr":
			fl |= packet.CWR
		case "ae":
			fl |= packet.AE
		case "psh":
			fl |= packet.PSH
		case "ect0":
			e = packet.ECT0
		case "ect1":
			e = packet.ECT1
		case "ce":
			e = packet.CE
		}
	}
	return fl, e
}

// parseOpts applies an opts command.
func parseOpts(o config.TCPOptions, echo EchoMode, args map[string]string) (config.TCPOptions, EchoMode, error) {
	onOff := func(v string) (bool, error) {
		switch v {
		case "on":
			return true, nil
		case "off":
			return false, nil
		}
		return false, fmt.Errorf("want on or off, got %q", v)
	}
	for k, v := range args {
		var err error
		switch k {
		case "sack":
			o.SACK, err = onOff(v)
		case "delayed_ack":
			o.DelayedAck, err = onOff(v)
		case "gro":
			o.GRO, err = onOff(v)
		case "ecn":
			o.ECN, err = onOff(v)
		case "gro_interval":
			o.GROInterval, err = sim.ParseDuration(v)
		case "echo":
			switch v {
			case "classic":
				echo = EchoClassic
			case "dctcp":
				echo = EchoDCTCP
			case "accecn":
				echo = EchoAccECN
			default:
				err = fmt.Errorf("unknown echo %q", v)
			}
		case "mss", "rcvbuf", "rcvbuf_max":
			var n uint64
			n, err = strconv.ParseUint(v, 10, 64)
			switch k {
			case "mss":
				o.MSS = units.Bytes(n)
			case "rcvbuf":
				o.RcvBufInit = units.Bytes(n)
			default:
				o.RcvBufMax = units.Bytes(n)
			}
		default:
			err = fmt.Errorf("unknown option %q", k)
		}
		if err != nil {
			return o, echo, err
		}
	}
	return o, echo, nil
}
