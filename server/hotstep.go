package server

import (
	"encoding/binary"
	"math"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/ccscope/ccscope/engine"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// This file is the hot path of a learning loop's requests: a step or steps
// request of the shape a gym environment sends every environment step —
// a session, a time or an event count, at most a flow's cwnd or pacing
// rate (an integer), an observed flow and its format — is read straight
// from the frame into stepArgs, without building the request's maps. The
// general decoder (decode.go) and argument checks build a map per request
// and per entry and box every value: ~50 allocations and several
// microseconds for a step, ~330 for a steps request of 8, on the
// connection's reader before any session runs.
//
// The hot reader only accepts: anything it does not recognise, and
// anything invalid, goes to the general path, which answers exactly as
// before (the same errors, naming the same fields). So it never answers
// an error itself, and a frame it accepts is one the general path accepts
// with the same meaning: the same keys (no other, none twice, none nil),
// the same value checks (parseStep's and parseAction's), the same session
// lookups.

// hotEntry is one step's arguments as the hot reader found them, still
// pointing into the frame.
type hotEntry struct {
	has                       uint16 // hk* bits
	session, time, observe    []byte
	obsFormat, flow           []byte
	events, cwnd, pacingRate  uint64
	actionKeys, actionSetters int
}

// Keys a hot entry may hold (hk*), and the top-level ones (hkID...).
const (
	hkSession uint16 = 1 << iota
	hkTime
	hkEvents
	hkAction
	hkObserve
	hkObsFormat
	hkID
	hkOp
	hkSteps
)

// hotCostStep and hotCostEntry are what a hot request holds in the
// server's decode pool: its
// stepArgs and, for steps, the parsed entries (the general decoder's
// estimate of the same request's maps is several times more).
const (
	hotCostStep  = 256
	hotCostEntry = 256
)

// routeHot routes a step or steps request read by the hot reader, and
// reports whether it did; false leaves the frame to the general path,
// nothing done.
func (c *conn) routeHot(frame []byte) bool {
	h, ok := readHot(frame, c.srv.opts.MaxSessionsPerConn)
	switch {
	case !ok:
		return false
	case h.steps == nil:
		return c.routeHotStep(h.id, &h.top)
	}
	return c.routeHotSteps(h.id, h.steps)
}

// hotFrame is a step request (steps nil) or a steps request as the hot
// reader found it.
type hotFrame struct {
	id    uint64
	top   hotEntry   // a step's arguments
	steps []hotEntry // a steps request's entries
}

// readHot reads a step or steps request of at most maxSteps entries; false
// for any other frame.
func readHot(frame []byte, maxSteps int) (hotFrame, bool) {
	r := mpReader{b: frame}
	var h hotFrame
	top := &h.top
	var id uint64
	var op []byte
	var list []hotEntry
	n, ok := r.mapLen()
	if !ok || n > 9 {
		return h, false
	}
	for range n {
		k, ok := r.str()
		if !ok {
			return h, false
		}
		switch string(k) {
		case "id":
			if top.has&hkID != 0 {
				return h, false
			}
			top.has |= hkID
			if id, ok = r.uint(); !ok {
				return h, false
			}
		case "op":
			if top.has&hkOp != 0 {
				return h, false
			}
			top.has |= hkOp
			if op, ok = r.str(); !ok {
				return h, false
			}
		case "steps":
			if top.has&hkSteps != 0 {
				return h, false
			}
			top.has |= hkSteps
			m, ok := r.arrayLen()
			if !ok || m == 0 || m > maxSteps {
				return h, false
			}
			list = make([]hotEntry, m)
			for i := range list {
				if !r.entry(&list[i]) {
					return h, false
				}
			}
		default:
			if !r.entryKey(k, top) {
				return h, false
			}
		}
	}
	if r.i != len(r.b) || top.has&hkID == 0 {
		return h, false
	}
	h.id = id
	switch string(op) {
	case "step":
		return h, top.has&hkSteps == 0
	case "steps":
		h.steps = list
		return h, top.has == hkID|hkOp|hkSteps
	}
	return h, false
}

// routeHotStep routes a step as route does (runInline, else the session's
// queue).
func (c *conn) routeHotStep(id uint64, e *hotEntry) bool {
	p, ok := e.args(&durCache{})
	if !ok || e.has&hkSession == 0 {
		return false
	}
	sess := c.session(string(e.session))
	if sess == nil {
		return false
	}
	if !c.srv.decoded.tryAcquire(hotCostStep) {
		return false
	}
	c.touch()
	req := Request{ID: id, Op: "step", def: stepOp, cost: hotCostStep, step: &p}
	if sess.runInline(req) {
		return true
	}
	if e := sess.enqueue(sessionReq{req: req}); e != nil {
		c.finishReq(req)
		c.reply(req.ID, nil, e)
	}
	return true
}

// routeHotSteps runs a steps request as opSteps does.
func (c *conn) routeHotSteps(id uint64, list []hotEntry) bool {
	steps := make([]parsedStep, len(list))
	var dc durCache
	for i := range list {
		e := &list[i]
		p, ok := e.args(&dc)
		if !ok || e.has&hkSession == 0 {
			return false
		}
		sess := c.session(string(e.session))
		if sess == nil {
			return false
		}
		for j := range i {
			if steps[j].sess == sess {
				return false
			}
		}
		steps[i] = parsedStep{batchStep: batchStep{slot: i, args: p}, sess: sess}
	}
	cost := int64(hotCostStep + hotCostEntry*len(list))
	if !c.srv.decoded.tryAcquire(cost) {
		return false
	}
	c.touch()
	c.runSteps(Request{ID: id, Op: "steps", def: stepsOp, cost: cost}, steps)
	return true
}

var (
	stepOp  = lookupOp("step")
	stepsOp = lookupOp("steps")
)

// args checks e as parseStep and parseAction would and returns its
// stepArgs; false for anything they would refuse or the hot reader does
// not handle.
func (e *hotEntry) args(dc *durCache) (stepArgs, bool) {
	var p stepArgs
	if e.has&hkAction != 0 {
		// A flow's cwnd (1..2^32-1 packets) or pacing rate (positive bps).
		if len(e.flow) == 0 || e.actionSetters != 1 || e.actionKeys != 2 {
			return p, false
		}
		a := engine.Action{Flow: string(e.flow)}
		switch {
		case e.cwnd != 0:
			if e.cwnd > math.MaxUint32 {
				return p, false
			}
			c := uint32(e.cwnd)
			a.CwndPkts = &c
		case e.pacingRate != 0:
			if e.pacingRate > math.MaxInt64 {
				return p, false
			}
			r := units.BitRate(e.pacingRate)
			a.PacingRate = &r
		default:
			return p, false
		}
		p.action = &a
	}
	if e.has&hkObserve != 0 {
		p.observe = string(e.observe)
	}
	if e.has&hkObsFormat != 0 {
		switch {
		case e.has&hkObserve == 0:
			return p, false
		case string(e.obsFormat) == "int64le":
			p.obsBin = true
		case string(e.obsFormat) != "array":
			return p, false
		}
	}
	switch e.has & (hkTime | hkEvents) {
	case hkTime:
		d, ok := dc.parse(e.time)
		if !ok {
			return p, false
		}
		p.byTime, p.time = true, d
	case hkEvents:
		if e.events == 0 {
			return p, false
		}
		p.events = e.events
	default:
		return p, false
	}
	return p, true
}

// durCache remembers the last step time parsed: the entries of a steps
// request (and a learning loop's steps) all give the same.
type durCache struct {
	s []byte
	d sim.Duration
}

// parse reads a step's time as parseStep does: a duration, not negative.
func (dc *durCache) parse(s []byte) (sim.Duration, bool) {
	if dc.s != nil && string(dc.s) == string(s) {
		return dc.d, true
	}
	d, err := sim.ParseDuration(string(s))
	if err != nil || d < 0 || d > sim.MaxDuration {
		return 0, false
	}
	dc.s, dc.d = s, d
	return d, true
}

// entry reads one step's argument map (a steps entry).
func (r *mpReader) entry(e *hotEntry) bool {
	n, ok := r.mapLen()
	if !ok || n > 6 {
		return false
	}
	for range n {
		k, ok := r.str()
		if !ok || !r.entryKey(k, e) {
			return false
		}
	}
	return true
}

// entryKey reads the value of a step argument k into e; false for a key
// step does not take, one given twice, or a value of another shape than
// the hot path handles.
func (r *mpReader) entryKey(k []byte, e *hotEntry) bool {
	var bit uint16
	var ok bool
	switch string(k) {
	case "session":
		bit = hkSession
		e.session, ok = r.str()
	case "time":
		bit = hkTime
		e.time, ok = r.str()
	case "events":
		bit = hkEvents
		e.events, ok = r.uint()
	case "observe":
		bit = hkObserve
		e.observe, ok = r.str()
	case "obs_format":
		bit = hkObsFormat
		e.obsFormat, ok = r.str()
	case "action":
		bit = hkAction
		ok = r.action(e)
	default:
		return false
	}
	if !ok || e.has&bit != 0 {
		return false
	}
	e.has |= bit
	return true
}

// action reads an action map of a flow and its cwnd or pacing rate, as
// integers.
func (r *mpReader) action(e *hotEntry) bool {
	n, ok := r.mapLen()
	if !ok || n > 2 {
		return false
	}
	e.actionKeys = n
	seen := 0
	for range n {
		k, ok := r.str()
		if !ok {
			return false
		}
		switch string(k) {
		case "flow":
			if seen&1 != 0 {
				return false
			}
			seen |= 1
			if e.flow, ok = r.str(); !ok {
				return false
			}
		case "cwnd":
			if seen&2 != 0 {
				return false
			}
			seen |= 2
			e.actionSetters++
			if e.cwnd, ok = r.uint(); !ok || e.cwnd == 0 {
				return false
			}
		case "pacing_rate":
			if seen&4 != 0 {
				return false
			}
			seen |= 4
			e.actionSetters++
			if e.pacingRate, ok = r.uint(); !ok || e.pacingRate == 0 {
				return false
			}
		default:
			return false
		}
	}
	return seen&1 != 0
}

// mpReader reads msgpack values from a byte slice; every method reports
// false (and reads nothing more) on a value of another kind or a short
// frame.
type mpReader struct {
	b []byte
	i int
}

// need reports whether n more bytes are there.
func (r *mpReader) need(n int) bool { return n >= 0 && len(r.b)-r.i >= n }

func (r *mpReader) be(n int) (uint64, bool) {
	if !r.need(n) {
		return 0, false
	}
	var v uint64
	for _, c := range r.b[r.i : r.i+n] {
		v = v<<8 | uint64(c)
	}
	r.i += n
	return v, true
}

func (r *mpReader) code() (byte, bool) {
	if !r.need(1) {
		return 0, false
	}
	c := r.b[r.i]
	r.i++
	return c, true
}

// length reads a container's length: a fix code (fixLo..fixHi, the length
// in its low bits), or c16 or c32 and a 16- or 32-bit length.
func (r *mpReader) length(fixLo, fixHi, c16, c32 byte) (int, bool) {
	c, ok := r.code()
	switch {
	case !ok:
		return 0, false
	case c >= fixLo && c <= fixHi:
		return int(c - fixLo), true
	case c == c16:
		n, ok := r.be(2)
		return int(n), ok
	case c == c32:
		n, ok := r.be(4)
		return int(n), ok
	}
	return 0, false
}

func (r *mpReader) mapLen() (int, bool) {
	return r.length(msgpcode.FixedMapLow, msgpcode.FixedMapHigh, msgpcode.Map16, msgpcode.Map32)
}

func (r *mpReader) arrayLen() (int, bool) {
	return r.length(msgpcode.FixedArrayLow, msgpcode.FixedArrayHigh, msgpcode.Array16, msgpcode.Array32)
}

// str reads a string, as a slice of the frame.
func (r *mpReader) str() ([]byte, bool) {
	c, ok := r.code()
	if !ok {
		return nil, false
	}
	var n uint64
	switch {
	case c >= msgpcode.FixedStrLow && c <= msgpcode.FixedStrHigh:
		n = uint64(c - msgpcode.FixedStrLow)
	case c == msgpcode.Str8:
		n, ok = r.be(1)
	case c == msgpcode.Str16:
		n, ok = r.be(2)
	case c == msgpcode.Str32:
		n, ok = r.be(4)
	default:
		return nil, false
	}
	if !ok || !r.need(int(n)) {
		return nil, false
	}
	s := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return s, true
}

// uint reads a non-negative integer in any of msgpack's integer
// encodings.
func (r *mpReader) uint() (uint64, bool) {
	c, ok := r.code()
	if !ok {
		return 0, false
	}
	if c <= msgpcode.PosFixedNumHigh {
		return uint64(c), true
	}
	var n int
	switch c {
	case msgpcode.Uint8, msgpcode.Int8:
		n = 1
	case msgpcode.Uint16, msgpcode.Int16:
		n = 2
	case msgpcode.Uint32, msgpcode.Int32:
		n = 4
	case msgpcode.Uint64, msgpcode.Int64:
		n = 8
	default:
		return 0, false
	}
	v, ok := r.be(n)
	if !ok {
		return 0, false
	}
	if c == msgpcode.Int8 || c == msgpcode.Int16 || c == msgpcode.Int32 || c == msgpcode.Int64 {
		if v>>(8*n-1) != 0 { // negative
			return 0, false
		}
	}
	return v, true
}

// The appenders below write msgpack as the server's encoder does
// (UseCompactInts: the smallest encoding of each integer), into a byte
// slice, for the step and steps responses.

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v <= math.MaxInt8:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, msgpcode.Uint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgpcode.Uint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, msgpcode.Uint32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, msgpcode.Uint64), v)
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, msgpcode.Int8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, msgpcode.Int16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, msgpcode.Int32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, msgpcode.Int64), uint64(v))
}

// appendStr appends a string shorter than 256 bytes (the keys and values
// of a step result).
func appendStr(b []byte, s string) []byte {
	if len(s) < 32 {
		b = append(b, msgpcode.FixedStrLow|byte(len(s)))
	} else {
		b = append(b, msgpcode.Str8, byte(len(s)))
	}
	return append(b, s...)
}

// appendMapLen appends the header of a map of fewer than 16 entries.
func appendMapLen(b []byte, n int) []byte { return append(b, msgpcode.FixedMapLow|byte(n)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, msgpcode.True)
	}
	return append(b, msgpcode.False)
}

// appendResponseHead appends {id, ok: true, result: — the envelope of a
// successful response, its result to follow.
func appendResponseHead(b []byte, id any) ([]byte, bool) {
	b = appendMapLen(b, 3)
	b = appendStr(b, "id")
	switch v := id.(type) {
	case uint64:
		b = appendUint(b, v)
	case nil:
		b = append(b, msgpcode.Nil)
	default:
		return b, false
	}
	b = appendStr(b, "ok")
	b = appendBool(b, true)
	return appendStr(b, "result"), true
}

// append appends r as the map EncodeMsgpack writes, with extra more
// entries to follow.
func (r stepResult) append(b []byte, extra int) []byte {
	b = appendMapLen(b, r.fields()+extra)
	b = appendInt(appendStr(b, "sim_time_ps"), r.SimTimePs)
	b = appendUint(appendStr(b, "events"), r.Events)
	b = appendBool(appendStr(b, "done"), r.Done)
	if r.Digest != "" {
		b = appendStr(appendStr(b, "digest"), r.Digest)
	}
	if r.Cancelled {
		b = appendBool(appendStr(b, "cancelled"), true)
	}
	return b
}

// append appends r as the map EncodeMsgpack writes.
func (r stepResultObs) append(b []byte) []byte {
	extra := 0
	if r.ActionIndex != nil {
		extra++
	}
	if r.observed {
		extra++
	}
	b = r.stepResult.append(b, extra)
	if r.ActionIndex != nil {
		b = appendInt(appendStr(b, "action_index"), int64(*r.ActionIndex))
	}
	switch {
	case r.observed && r.obsBin:
		b = append(appendStr(b, "obs"), msgpcode.Bin8, byte(8*len(r.Obs)))
		for _, v := range r.Obs {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	case r.observed:
		b = append(appendStr(b, "obs"), msgpcode.FixedArrayLow|byte(len(r.Obs)))
		for _, v := range r.Obs {
			b = appendInt(b, v)
		}
	}
	return b
}

// appendStepResult appends a step's result (stepResult or stepResultObs);
// false for any other value.
func appendStepResult(b []byte, res any) ([]byte, bool) {
	switch r := res.(type) {
	case stepResult:
		return r.append(b, 0), true
	case stepResultObs:
		return r.append(b), true
	}
	return b, false
}

// stepResponseSize is room for a step response with an observation.
const stepResponseSize = 256

// appendArrayLen appends the header of an array of n elements.
func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, msgpcode.FixedArrayLow|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgpcode.Array16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, msgpcode.Array32), uint32(n))
}
