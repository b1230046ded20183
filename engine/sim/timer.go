package sim

// Timer is a re-armable deadline for one handler, like a kernel sk_reset_timer.
// Re-arming to a later time does not touch the queue: the pending entry fires
// early, sees the later deadline and re-queues itself. Re-arming earlier
// queues a new entry and the old one goes stale (its generation no longer
// matches). So a flow's timers hold at most a few queue entries however often
// they are re-armed.
type Timer struct {
	s        *Sim
	idx      int32
	target   int32
	kind     Kind
	deadline Time   // when the timer should fire; Never when disarmed
	pending  Time   // time of the live queue entry; Never when none
	gen      uint32 // generation of the live queue entry
}

// NewTimer returns a disarmed timer that delivers an event of kind to target.
func (s *Sim) NewTimer(target int32, kind Kind) *Timer {
	t := &Timer{s: s, idx: int32(len(s.timers)), target: target, kind: kind, deadline: Never, pending: Never}
	if s.owner != nil {
		s.ownTimer(t)
		return t
	}
	s.timers = append(s.timers, t)
	return t
}

// Arm sets the timer to fire at at, replacing any earlier setting.
func (t *Timer) Arm(at Time) {
	if at < t.s.now {
		panic("sim: timer for " + t.s.names[t.target] + " armed in the past")
	}
	t.deadline = at
	if t.pending <= at {
		return // the live entry fires first and defers itself to at
	}
	t.pending = at
	t.push(at)
}

// push queues a new live entry at at; earlier entries go stale.
func (t *Timer) push(at Time) {
	t.gen++
	t.s.seq++
	t.s.q.push(Event{At: at, seq: t.s.seq<<1 | 1, Arg: uint64(uint32(t.idx)) | uint64(t.gen)<<32, addr: addr{t.target, t.kind}}, t.s.now)
}

// Stop disarms the timer. Its queue entry, if any, will be skipped.
func (t *Timer) Stop() { t.deadline = Never }

// Armed reports whether the timer will fire.
func (t *Timer) Armed() bool { return t.deadline != Never }

// Deadline is when the timer fires, or Never.
func (t *Timer) Deadline() Time { return t.deadline }

// due is called when one of the timer's entries is popped; it reports whether
// the timer fires now, deferring or dropping the entry otherwise.
func (t *Timer) due(ev Event) bool {
	if uint32(ev.Arg>>32) != t.gen {
		return false // stale: superseded by an earlier re-arm
	}
	t.pending = Never
	switch {
	case t.deadline == Never:
		return false
	case t.deadline > ev.At:
		t.pending = t.deadline
		t.push(t.deadline)
		return false
	}
	t.deadline = Never
	return true
}
