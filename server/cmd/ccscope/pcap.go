package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/trace/pcap"
)

// pcapOut is an open --pcap capture.
type pcapOut struct {
	f    *os.File
	w    *pcap.Writer
	path string
	at   string // "<link>/<dir>"
}

// openPcap taps the direction spec names — FILE[:link[:dir]], by default
// the first flow's bottleneck direction, dir "ab" when only the link is
// given, "both" for both directions into one file (as a capture on the
// link sees data and ACKs) — and writes every packet arriving across it
// to FILE.
func openPcap(spec string, r *engine.Run) (*pcapOut, error) {
	if spec == "" {
		return nil, nil
	}
	path, rest, _ := strings.Cut(spec, ":")
	linkID, dir, _ := strings.Cut(rest, ":")
	if path == "" {
		return nil, fmt.Errorf("--pcap %q: no file name; want FILE[:link[:dir]]", spec)
	}
	if linkID == "" {
		if len(r.Scenario.Flows) == 0 {
			return nil, fmt.Errorf("--pcap %q: the scenario has no flows, so no bottleneck; name the link: FILE:link:dir", spec)
		}
		linkID, dir, _ = strings.Cut(r.Path(0).Bottleneck, "/")
	}
	if dir == "" {
		dir = "ab"
	}
	dirs := []string{dir}
	switch dir {
	case "ab", "ba":
	case "both":
		dirs = []string{"ab", "ba"}
	default:
		return nil, fmt.Errorf("--pcap %q: direction %q is not ab, ba or both", spec, dir)
	}
	var flows []pcap.Flow
	for i := range r.Flows { // a split flow's legs too
		f := r.FlowConfig(i)
		fl := pcap.Flow{Src: r.Net.Node(f.Src).Index, TCP: f.CC != "pump", MSS: uint16(f.TCP.MSS)}
		if fl.TCP {
			// Both ends are Linux hosts with the same buffers.
			fl.SndWScale, fl.RcvWScale = tcp.WScale(f.TCP.RcvBufMax), tcp.WScale(f.TCP.RcvBufMax)
		}
		flows = append(flows, fl)
	}
	if _, ok := r.Net.Dir(linkID, "ab"); !ok {
		return nil, fmt.Errorf("--pcap %q: the scenario has no link %q", spec, linkID)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--pcap: %w", err)
	}
	w, err := pcap.NewWriter(f, flows)
	if err != nil {
		f.Close()
		return nil, err
	}
	o := &pcapOut{f: f, w: w, path: path, at: linkID + "/" + dir}
	for _, d := range dirs {
		err := r.TapArrivals(linkID, d, func(next link.Receiver) link.Receiver {
			return &pcap.Tap{W: w, Next: next, Pool: r.Pool, Now: r.Now}
		})
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--pcap %q: %w", spec, err)
		}
	}
	return o, nil
}

// close finishes the file and says where it is.
func (o *pcapOut) close() error {
	if o == nil {
		return nil
	}
	err := o.w.Close()
	if cerr := o.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("pcap: %w", cerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ccscope: %d packets crossing %s written to %s\n", o.w.Packets, o.at, o.path)
	return nil
}
