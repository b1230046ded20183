package engine

import (
	"testing"

	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// linuxOpts are the TCP options of a default Linux host, as the config
// package fills them in.
func linuxOpts() config.TCPOptions {
	return config.TCPOptions{SACK: true, RACK: true, TLP: true, PRR: true, FRTO: true, Pacing: true,
		TSO: true, GRO: true, DelayedAck: true, MSS: 1448, InitCwnd: 10, SndBuf: 4 * units.MB,
		RcvBufInit: 128 * units.KiB, RcvBufMax: 6 * units.MiB}
}

// tcpScenario is h1 —access— r1 —bottleneck— h2 with one TCP flow f0.
func tcpScenario(ccName string, access, bn config.Direction, size units.Bytes, dur sim.Duration, opts config.TCPOptions) *config.Scenario {
	return &config.Scenario{
		Name:    "test-tcp",
		Runtime: config.Runtime{Seed: 1, Duration: dur},
		Nodes:   []config.Node{{ID: "h1"}, {ID: "r1", Kind: config.Router}, {ID: "h2"}},
		Links: []config.Link{
			{ID: "access", A: "h1", B: "r1", AB: access, BA: access},
			{ID: "bottleneck", A: "r1", B: "h2", AB: bn, BA: bn},
		},
		Flows: []config.Flow{{ID: "f0", Src: "h1", Dst: "h2", CC: ccName, Size: size, TCP: opts}},
	}
}

func fifo(pkts int64) config.Qdisc {
	return config.Qdisc{Kind: config.FIFO, Limit: config.QueueLimit{Packets: pkts}}
}

func TestTCPSmoke(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(10000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: bdpFIFO()}
	r := run(t, tcpScenario("reno", access, bn, 10*units.MB, 10*sim.Second, linuxOpts()))
	s := r.Summary("")
	f := s.Flows[0]
	t.Logf("%+v goodput=%v t10=%v retx=%v p50=%v", f, *f.GoodputBps, f.T10MBPs, *f.Retransmits, *f.RTTP50Ps)
}

func TestTCPSmokeClean(t *testing.T) {
	access := config.Direction{Rate: 10 * units.Gbps, Delay: sim.Millisecond, Qdisc: fifo(100000)}
	bn := config.Direction{Rate: 100 * units.Mbps, Delay: 19 * sim.Millisecond, Qdisc: fifo(100000)}
	scn := tcpScenario("reno", access, bn, 10*units.MB, 10*sim.Second, linuxOpts())
	scn.Trace.Detail = config.TraceChange
	r, _ := New(scn, nil)
	r.RunUntil(r.Horizon())
	s := r.Summary("")
	f := s.Flows[0]
	t.Logf("goodput=%v t10=%v retx=%v p50=%v", *f.GoodputBps, *f.T10MBPs, *f.Retransmits, *f.RTTP50Ps)
	rows := r.Trace.FlowsT.Rows
	for i := 0; i < len(rows); i += len(rows) / 40 {
		x := rows[i]
		t.Logf("t=%v cwnd=%d ss=%d infl=%d srtt=%v pace=%d ca=%d", sim.Duration(x.T), x.CwndPkts, x.SSThreshPkts, x.InflightPkts, x.SRTT, x.PacingRateBps, x.CAState)
	}
}
