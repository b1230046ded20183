//go:build linux

package emulate

import (
	"slices"
	"syscall"
	"unsafe"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/packet"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/topo"
)

// A split-TCP proxy is a namespace of its own, as an endpoint is, and an
// application in it: it accepts leg 0 of each flow the simulator splits
// there, opens leg 1 to the flow's destination when the flow starts, and
// relays the bytes from one socket to the other through a bounded buffer,
// as engine/proxy.go's relay does. Each leg is a kernel TCP connection with
// its own CC and options, so each sees its own RTT and losses.

// plan is the TCP connections a kernel run opens, numbered as the simulator
// numbers its flows: the scenario's flows, a split flow's leg 0 in its
// place, then the legs 1 of the split flows in order.
type plan struct {
	nw    *topo.Network // the scenario's network, as planned on (not run)
	flows []config.Flow
	// leg1 is each split flow's leg 1 (by leg 0's index), buffer its
	// proxy's relay buffer in bytes.
	leg1   map[int]int
	buffer map[int]int64
}

// planFlows splits the flows routed through a proxy into their legs, as the
// engine does (engine.SplitAt, engine.LegFlows).
func planFlows(scn *config.Scenario) (*plan, error) {
	nw, err := topo.Build(sim.New(), &packet.Pool{}, scn)
	if err != nil {
		return nil, err
	}
	p := &plan{nw: nw, flows: slices.Clone(scn.Flows), leg1: map[int]int{}, buffer: map[int]int64{}}
	var legs1 []config.Flow
	for i, f := range scn.Flows {
		px, err := engine.SplitAt(nw, f)
		if err != nil {
			return nil, err
		}
		if px == nil {
			continue
		}
		legs := engine.LegFlows(f, px)
		p.flows[i] = legs[0]
		p.leg1[i] = len(scn.Flows) + len(legs1)
		p.buffer[i] = int64(scn.Nodes[px.Index].Buffer)
		legs1 = append(legs1, legs[1])
	}
	p.flows = append(p.flows, legs1...)
	return p, nil
}

// connectLeg is a leg 1's sender: the proxy connects to the destination
// when the flow starts (the simulator's proxy opens leg 1 on the client's
// SYN) and the relay (pumpLeg) writes what it reads from leg 0, from
// which on the leg counts as started (firstSend).
func (f *eflow) connectLeg(r *relay, stop <-chan struct{}) {
	defer close(f.ready)
	appThread()
	f.connect(r, stop)
}

// pumpLeg is the proxy's application for split flow f (its leg 0) and its
// leg 1, out: it accepts leg 0 and reads from it only while the bytes read
// and not yet acknowledged on leg 1 are under the relay buffer, writing all
// it reads to leg 1 (engine/proxy.go's proxyRelay.pump). Unread bytes stay
// in leg 0's receive queue and close its window, which is the back
// pressure. Leg 1's unacknowledged bytes are its socket's output queue
// (SIOCOUTQ: write_seq − snd_una); while the buffer is full the relay
// looks again every relayPoll, where the simulator's reads at each ACK.
// When leg 0 ends, leg 1 is shut down after the last byte.
func (f *eflow) pumpLeg(r *relay, out *eflow, buffer int64, stop <-chan struct{}) {
	appThread()
	fd, ok := f.accept()
	if !ok {
		return
	}
	select {
	case <-out.ready:
	case <-stop:
		return
	}
	if !out.isConnected() {
		return
	}
	buf := make([]byte, 1<<20)
	var got int64
	for {
		room := buffer - outq(out.sfd)
		if room <= 0 {
			select {
			case <-stop:
				return
			default:
			}
			ts := syscall.NsecToTimespec(int64(relayPoll) / 1000)
			syscall.Nanosleep(&ts, nil)
			continue
		}
		n, err := syscall.Read(fd, buf[:min(room, int64(len(buf)))])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return
		}
		if n == 0 {
			syscall.Shutdown(out.sfd, syscall.SHUT_WR)
			return
		}
		f.delivered(r, got, got+int64(n))
		if got == 0 {
			// Leg 1's first data: its goodput and milestones count from
			// here, as the simulator's count from its first segment.
			out.mu.Lock()
			out.firstSend = r.now()
			out.mu.Unlock()
		}
		got += int64(n)
		for b := buf[:n]; len(b) > 0; {
			k, err := syscall.SendmsgN(out.sfd, b, nil, nil, msgNoSignal)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return // leg 1 shut down at the run's end
			}
			b = b[k:]
		}
	}
}

// relayPoll is how often a proxy whose relay buffer is full looks whether
// leg 1's ACKs have made room: at 1 Gbps, 250 µs is 31 KB, under 1 % of the
// default 4 MB buffer.
const relayPoll = 250 * sim.Microsecond

// outq is a socket's bytes written and not yet acknowledged (SIOCOUTQ).
func outq(fd int) int64 {
	const siocoutq = 0x5411 // TIOCOUTQ
	var v int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), siocoutq, uintptr(unsafe.Pointer(&v))); e != 0 {
		return 0
	}
	return int64(v)
}

func (f *eflow) isConnected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}
