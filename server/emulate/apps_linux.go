//go:build linux

package emulate

// The flows' applications on the kernel's side: each end runs in its
// namespace on a real-time OS thread of its own, writing and reading as the
// simulated application does, and the sampler reads TCP_INFO.

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/tcp"
	"github.com/ccscope/ccscope/engine/trace"
	"github.com/ccscope/ccscope/engine/units"
	"github.com/ccscope/ccscope/server/calibrate"
)

// appThread gives a flow's application goroutine an OS thread of its own in
// SCHED_FIFO, below the relay's priority: on a loaded machine a normal
// thread waits for CPU for tens of ms, and a starved writer makes the flow
// application-limited while a starved reader delays the receiver-side
// milestones. Both block in the kernel whenever they have nothing to do.
// The goroutine ends locked, so the runtime retires the thread with it
// rather than handing a real-time thread to other goroutines.
func appThread() {
	runtime.LockOSThread()
	setRealtimePrio(5)
}

// send connects at the flow's start and writes as the flow's application
// does (app): bulk or size bytes, at a rate, or on and off.
func (f *eflow) send(r *relay, stop <-chan struct{}) {
	appThread()
	if !f.connect(r, stop) {
		return
	}
	est := r.now()
	f.mu.Lock()
	f.firstSend = est
	f.mu.Unlock()
	w := &writer{fd: f.sfd, sized: f.cfg.Size > 0, left: int64(f.cfg.Size), buf: f.payload}
	// A sized transfer's application closes its end once it has written
	// the last byte, as iperf3 -n or an HTTP/1.0 server does: tcp_send_fin
	// puts the FIN on the unsent tail and pushes it, and tcp_nagle_test
	// never holds a FIN. Left open, the last sub-MSS segment waited under
	// Nagle (tcp_nagle_check's Minshall test) until the small segment a
	// 1 MB write had left mid-stream was acknowledged: up to a round trip
	// added to the flow's completion, which the simulator's application,
	// writing whole segments but the last, never waits.
	defer func() {
		if w.sized && w.left == 0 {
			syscall.Shutdown(f.sfd, syscall.SHUT_WR)
		}
	}()
	mss := int(f.cfg.TCP.MSS)
	switch app := f.cfg.App; app.Kind {
	case config.AppRate:
		// As the simulator's rate application: a segment's bytes at the
		// handshake's end and one more every segment time at the rate.
		gap := units.TxTime(units.Bytes(mss), app.Rate)
		for at := est; w.write(mss); {
			at = at.Add(gap)
			if !sleepUntil(r, at, stop) {
				return
			}
		}
	case config.OnOff:
		// On for app.on from the handshake's end, off for app.off, in
		// turn. While on, the application keeps up with the socket rather
		// than filling its buffer, as the simulator's does: writes block
		// while more than onOffUnsent bytes wait unsent, so what is
		// written before an off period starts drains within about a
		// round trip.
		if err := syscall.SetsockoptInt(f.sfd, syscall.IPPROTO_TCP, tcpNotsentLowat, onOffUnsent); err != nil {
			f.fail(fmt.Errorf("setsockopt TCP_NOTSENT_LOWAT: %w", err))
			return
		}
		for on := est; ; {
			off := on.Add(app.On)
			for r.now() < off {
				if !w.write(mss) {
					return
				}
			}
			on = off.Add(app.Off)
			if !sleepUntil(r, on, stop) {
				return
			}
		}
	default:
		for n := int(app.WriteSize()); w.write(n); {
		}
	}
}

// connect waits for the flow's start and connects its sender; false if the
// run ended first or the connection failed (then f.err says why).
func (f *eflow) connect(r *relay, stop <-chan struct{}) bool {
	if !sleepUntil(r, sim.Time(f.cfg.Start), stop) {
		return false
	}
	if err := syscall.Connect(f.sfd, &syscall.SockaddrInet4{Port: f.port, Addr: f.dst.addr}); err != nil {
		switch {
		case r.stop.Load():
		case err == syscall.ETIMEDOUT: // the kernel gave up on its SYNs, as a simulated sender may
			f.gaveUp(r.now(), tcp.AbortSYNRetries.String())
		default:
			f.fail(fmt.Errorf("connect: %w", err))
		}
		return false
	}
	f.mu.Lock()
	f.connected = true
	f.mu.Unlock()
	return true
}

// onOffUnsent is how many bytes an on/off application lets wait unsent in
// its socket (TCP_NOTSENT_LOWAT): about ten segments. The kernel may add
// the rest of the tail skb it is filling (about a millisecond of data at
// the flow's rate).
const onOffUnsent = 16 << 10

// writer hands a flow's bytes to its socket: the left bytes of a sized
// flow, without end otherwise.
type writer struct {
	fd    int
	sized bool
	left  int64
	buf   []byte
}

// write writes up to n bytes, blocking while the socket has no room. It
// reports false when the flow has nothing left to write or its socket was
// shut down at the run's end.
func (w *writer) write(n int) bool {
	if w.sized && w.left == 0 {
		return false
	}
	b := w.buf[:n]
	if w.sized && w.left < int64(n) {
		b = b[:w.left]
	}
	for {
		k, err := syscall.SendmsgN(w.fd, b, nil, nil, msgNoSignal)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		w.left -= int64(k)
		return !w.sized || w.left > 0
	}
}

// sleepUntil waits until the run's clock reaches at; false if stop closed
// first. A Go timer wakes a goroutine locked to its thread through the
// runtime's poller, up to 2 ms late here, which delayed every flow's start
// (its SYN) by that much; so it waits on a timer until timerSlack before
// at, then sleeps the rest in nanosleep on the application's own real-time
// thread (appThread). Polling in nanosleep all the way cost a wakeup per
// few ms per waiting flow, which with a hundred flows waiting to start
// made the relay late.
func sleepUntil(r *relay, at sim.Time, stop <-chan struct{}) bool {
	if d := at.Sub(r.now()) - timerSlack; d > 0 {
		t := time.NewTimer(time.Duration(int64(d) / 1000))
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return false
		}
	}
	for {
		d := at.Sub(r.now())
		if d <= 0 {
			return true
		}
		ts := syscall.NsecToTimespec(int64(d) / 1000)
		syscall.Nanosleep(&ts, nil) // woken early by a signal: the loop sleeps again
	}
}

// timerSlack is how late a Go timer may wake an application here.
const timerSlack = 3 * sim.Millisecond

// receive accepts the flow's connection and reads until it closes,
// recording when the milestones are crossed.
func (f *eflow) receive(r *relay) {
	appThread()
	fd, ok := f.accept()
	if !ok {
		return
	}
	buf := make([]byte, 1<<20)
	var got int64
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		f.delivered(r, got, got+int64(n))
		got += int64(n)
	}
}

// accept takes the flow's connection at its receiving end; false if the
// run ended before the flow connected.
func (f *eflow) accept() (int, bool) {
	fd, _, err := syscall.Accept4(f.lfd, syscall.SOCK_CLOEXEC)
	if err != nil {
		return -1, false
	}
	f.mu.Lock()
	f.rfd = fd
	f.mu.Unlock()
	return fd, true
}

// delivered records that the flow's receiving application has read up to
// got bytes, before of them earlier: the first byte's time, the milestones
// crossed, a sized flow's completion.
func (f *eflow) delivered(r *relay, before, got int64) {
	now := r.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if before == 0 {
		f.firstByte = now
	}
	for i, m := range milestoneBytes {
		if before < m && got >= m {
			f.crossed[i] = now
		}
	}
	if f.cfg.Size > 0 && got >= int64(f.cfg.Size) && f.done == 0 {
		f.done = now
	}
	f.received = got
}

// gaveUp records that the flow's kernel timed its connection out, at the
// first time it is seen.
func (f *eflow) gaveUp(at sim.Time, why string) {
	f.mu.Lock()
	if f.abortWhy == "" {
		f.abortedAt, f.abortWhy = at, why
	}
	f.mu.Unlock()
}

func (f *eflow) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// shutdown wakes the flow's goroutines from their blocking calls, and
// makes the flow's connected sockets abort when they are closed
// (SO_LINGER 0: a RST, their buffers freed at once). Closed as usual, a
// socket with data still unsent or unacknowledged lives on as an orphan,
// retransmitting to a namespace that is gone and holding its buffers in
// the kernel's TCP memory for minutes after the run.
func (f *eflow) shutdown() {
	abort(f.sfd)
	syscall.Shutdown(f.sfd, syscall.SHUT_RDWR)
	syscall.Shutdown(f.lfd, syscall.SHUT_RDWR)
	f.mu.Lock()
	if f.rfd >= 0 {
		abort(f.rfd)
		syscall.Shutdown(f.rfd, syscall.SHUT_RDWR)
	}
	f.mu.Unlock()
}

// abort sets fd to reset its connection when closed (SO_LINGER, 0 s).
func abort(fd int) {
	syscall.SetsockoptLinger(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
}

// closeAccepted closes the accepted socket once the goroutines are done.
func (f *eflow) closeAccepted() {
	if f.rfd >= 0 {
		syscall.Close(f.rfd)
		f.rfd = -1
	}
}

// sample reads the sender's TCP_INFO (and TCP_CC_INFO) into the flows and
// signals tables, and the receiver's progress into the delivery table.
func (f *eflow) sample(r *relay, now sim.Time, scratch []byte) {
	f.mu.Lock()
	connected, received, done := f.connected, f.received, f.done
	f.mu.Unlock()
	if !connected {
		return
	}
	unacked := f.ti.Unacked
	if err := readTCPInfo(f.sfd, scratch, &f.ti); err != nil {
		return
	}
	ti := &f.ti
	if ti.State == tcpClose && done == 0 {
		// Before the run's end only the kernel's tcp_write_err closes a
		// sender whose flow is not done: its retransmissions timed out
		// (tcp_retries2), or its window probes did, with nothing unacked
		// at the poll before.
		why := tcp.AbortRetries2
		if unacked == 0 {
			why = tcp.AbortWindowProbes
		}
		f.gaveUp(now, why.String())
	}
	mss := int64(max(ti.SndMSS, 1))
	in := ti.inflight()
	r.rec.RecordFlow(&f.flowSmp, &trace.FlowRow{T: now, Flow: int32(f.idx), CwndPkts: ti.SndCwnd,
		SSThreshPkts: ti.SndSSThresh, InflightBytes: int64(in) * mss, InflightPkts: in,
		SRTT: sim.Duration(ti.RTT) * sim.Microsecond, RTTVar: sim.Duration(ti.RTTVar) * sim.Microsecond,
		MinRTT: sim.Duration(ti.MinRTT) * sim.Microsecond, PacingRateBps: int64(ti.PacingRate) * 8,
		DeliveryRateBps: int64(ti.DeliveryRate) * 8, Delivered: uint64(ti.Delivered), Lost: ti.lostSoFar(),
		Retrans: uint64(ti.TotalRetrans), CAState: ti.CAState})
	r.rec.RecordDelivery(&f.delivSmp, now, int32(f.idx), received)
	if f.capture != nil {
		f.capture = append(f.capture, calibrate.Sample{TUs: int64(now / sim.Time(sim.Microsecond)), Flow: f.cfg.ID,
			CAState: ti.CAState, Cwnd: ti.SndCwnd, SSThresh: ti.SndSSThresh, RTTUs: ti.RTT, RTTVarUs: ti.RTTVar,
			MinRTTUs: ti.MinRTT, MSS: ti.SndMSS, PacingRateBps: int64(ti.PacingRate) * 8,
			DeliveryRateBps: int64(ti.DeliveryRate) * 8, Delivered: ti.Delivered, BytesAcked: ti.BytesAcked,
			BytesSent: ti.BytesSent, TotalRetrans: ti.TotalRetrans, SndWnd: ti.SndWnd})
	}
	if b, ok := readBBRInfo(f.sfd, scratch); ok {
		f.bbr, f.hasBBR = b, true
		if f.ccTraced {
			return // the tracer records these, at each change
		}
		for i, sv := range [...]struct {
			name string
			v    float64
		}{{"bw", float64(b.BwBps)}, {"min_rtt", float64(b.MinRTTUs)},
			{"pacing_gain", float64(b.PacingGain) / 256}, {"cwnd_gain", float64(b.CwndGain) / 256}} {
			r.rec.RecordSignal(&f.sigSmp[i], now, int32(f.idx), r.rec.SignalIndex(sv.name), sv.v)
		}
	}
}
