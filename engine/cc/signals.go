package cc

import (
	"math"

	"github.com/ccscope/ccscope/engine/sim"
)

// SignalID names one signal an algorithm defined.
type SignalID int

// SignalDef describes an algorithm's internal variable.
type SignalDef struct {
	Name string // snake_case, e.g. "last_max_cwnd"
	Unit string // e.g. "pkts", "us", "bps", "ratio", "enum"
	Help string
}

// SignalSink receives each change of a signal's value. The trace implements it.
type SignalSink interface {
	RecordSignal(t sim.Time, id SignalID, v float64)
}

// Signals is a flow's registry of its algorithm's signals. Set records a
// value only when it changed, so a CC may call Set on every ACK.
type Signals struct {
	defs []SignalDef
	last []float64
	sink SignalSink
	now  *sim.Time
}

// NewSignals returns a registry that sends changes to sink (nil: off), stamped
// with the time *now holds when Set is called.
func NewSignals(sink SignalSink, now *sim.Time) *Signals {
	return &Signals{sink: sink, now: now}
}

// Define registers a signal and returns its id. Call it from Init.
func (s *Signals) Define(name, unit, help string) SignalID {
	s.defs = append(s.defs, SignalDef{Name: name, Unit: unit, Help: help})
	s.last = append(s.last, nan)
	return SignalID(len(s.defs) - 1)
}

// Defs returns the signals defined so far, indexed by SignalID.
func (s *Signals) Defs() []SignalDef { return s.defs }

// Value returns the last value set for id.
func (s *Signals) Value(id SignalID) float64 { return s.last[id] }

// FinalValues maps each signal's name to its value, leaving out the
// never-set (NaN) and the unbounded (±Inf, e.g. BBR's inflight_hi before
// its first cut), which have no final value JSON can carry; nil when no
// signal is defined.
func FinalValues(names []string, vals []float64) map[string]float64 {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]float64, len(names))
	for i, n := range names {
		if v := vals[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
			m[n] = v
		}
	}
	return m
}

// Set records v for id if it differs from the last value. A CC sets each
// of its signals on every ACK and most calls change nothing, so Set is
// small enough to be inlined: the comparison, and a call only for a
// change.
func (s *Signals) Set(id SignalID, v float64) {
	if s.last[id] != v { // a NaN is never equal: recorded, as before
		s.set(id, v)
	}
}

// set records a changed value. It stays out of line, which keeps Set
// within the inliner's budget.
//
//go:noinline
func (s *Signals) set(id SignalID, v float64) {
	s.last[id] = v
	if s.sink != nil {
		s.sink.RecordSignal(*s.now, id, v)
	}
}

var nan = math.NaN()
