package tcp

// Cwnd reduction: tcp_init_cwnd_reduction, PRR (RFC 6937, cc.PRR) and
// tcp_end_cwnd_reduction, entered by Recovery and by ECN's CWR state.

import "github.com/ccscope/ccscope/engine/cc"

// initCwndReduction follows tcp_init_cwnd_reduction (PRR's start).
func (d *DataSender) initCwndReduction() {
	d.highSeq = d.sndNxt
	d.tlp.highSeq = 0
	d.st.CwndCnt = 0
	d.st.PriorCwndPkts = d.st.CwndPkts
	d.prr.Start()
	d.st.SSThreshPkts = d.ssthresh()
	d.queueECNCWR()
}

// queueECNCWR is tcp_ecn_queue_cwr: the next new segment carries CWR.
func (d *DataSender) queueECNCWR() {
	if d.ecnOK {
		d.queueCWR = true
	}
}

// cwndReduction runs tcp_cwnd_reduction (cc.PRR.CwndReduction, RFC 6937).
// Without PRR the window drops to ssthresh at once (the pre-PRR
// rate-halving-free behaviour).
func (d *DataSender) cwndReduction(newlyAckedSacked, newlyLost int32, flag int) {
	if newlyAckedSacked <= 0 || d.st.PriorCwndPkts == 0 {
		return
	}
	if !d.cfg.Opts.PRR {
		d.st.CwndPkts = max(d.st.SSThreshPkts, 1)
		return
	}
	d.prr.CwndReduction(&d.st, d.sb.inFlight(), cc.PRRAck{
		NewlyAckedSacked: newlyAckedSacked,
		NewlyLost:        newlyLost,
		UnaAdvanced:      flag&flagSndUnaAdvanced != 0,
	})
}

// endCwndReduction runs tcp_end_cwnd_reduction (cc.EndCwndReduction).
func (d *DataSender) endCwndReduction() {
	if cc.EndCwndReduction(&d.st, &d.hooks, d.undo.marker != 0, d.caEvent) {
		d.cwndStamp = d.st.Now
	}
}

// enterCWR follows tcp_enter_cwr: an ECN-echo, or a CC's call (CDG's
// delay backoff), reduces cwnd once per window, with no undo.
func (d *DataSender) enterCWR() {
	d.undo.priorSSThresh = 0
	if d.st.CA < cc.CACWR {
		d.undo.marker = 0
		d.initCwndReduction()
		d.setCAState(cc.CACWR)
	}
}
