package server

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/ccscope/ccscope/engine/sim"
)

// hotView is what a step's arguments mean, for comparing the hot reader
// with the general decoder.
type hotView struct {
	Session              string
	ByTime               bool
	Time                 sim.Duration
	Events               uint64
	Observe              string
	ObsBin               bool
	Flow                 string
	Cwnd                 uint32
	PacingBps            int64
	HasAction, HasCwnd   bool
	HasPacing            bool
	OtherActionSetsThing bool
}

func viewOf(session string, p stepArgs) hotView {
	v := hotView{Session: session, ByTime: p.byTime, Time: p.time, Events: p.events, Observe: p.observe, ObsBin: p.obsBin}
	if a := p.action; a != nil {
		v.HasAction, v.Flow = true, a.Flow
		if a.CwndPkts != nil {
			v.HasCwnd, v.Cwnd = true, *a.CwndPkts
		}
		if a.PacingRate != nil {
			v.HasPacing, v.PacingBps = true, int64(*a.PacingRate)
		}
		v.OtherActionSetsThing = a.Link != "" || a.Rate != nil || a.Delay != nil || a.LossP != nil || a.QueueLimit != nil ||
			a.LossModel != nil || a.JitterModel != nil || a.Capacity != nil || a.Outage != nil
	}
	return v
}

// generalViews decodes frame as the general path does (DecodeRequest, then
// parseStep on the request or on each steps entry); ok is false when it
// refuses the frame.
func generalViews(frame []byte) (op string, views []hotView, ok bool) {
	req, e := DecodeRequest(frame)
	if e != nil {
		return "", nil, false
	}
	entry := func(m map[string]any, prefix string) (hotView, bool) {
		a := newArgs(m, prefix, stepOp.argKeys())
		id, e := a.str("session")
		if e != nil {
			return hotView{}, false
		}
		p, e := parseStep(a, nil)
		return viewOf(id, p), e == nil
	}
	switch req.Op {
	case "step":
		v, ok := entry(req.Args, "")
		return req.Op, []hotView{v}, ok
	case "steps":
		list, ok := req.Args["steps"].([]any)
		if !ok || len(req.Args) != 1 {
			return req.Op, nil, false
		}
		for i, x := range list {
			m, ok := x.(map[string]any)
			if !ok {
				return req.Op, nil, false
			}
			v, ok := entry(m, "steps["+string(rune('0'+i))+"].")
			if !ok {
				return req.Op, nil, false
			}
			views = append(views, v)
		}
		return req.Op, views, len(views) > 0
	}
	return req.Op, nil, false
}

// hotViews reads frame with the hot reader; ok is false when it leaves the
// frame to the general path.
func hotViews(frame []byte) (op string, views []hotView, ok bool) {
	h, ok := readHot(frame, 1000)
	if !ok {
		return "", nil, false
	}
	var dc durCache
	entries, op := []hotEntry{h.top}, "step"
	if h.steps != nil {
		entries, op = h.steps, "steps"
	}
	for i := range entries {
		p, ok := entries[i].args(&dc)
		if !ok || entries[i].has&hkSession == 0 {
			return op, nil, false
		}
		views = append(views, viewOf(string(entries[i].session), p))
	}
	return op, views, true
}

// checkHotAgrees fails t if the hot reader accepts frame with another
// meaning than the general path gives it, or accepts a frame the general
// path refuses.
func checkHotAgrees(t *testing.T, frame []byte) (hot bool) {
	t.Helper()
	hop, hv, hok := hotViews(frame)
	if !hok {
		return false
	}
	gop, gv, gok := generalViews(frame)
	if !gok {
		t.Fatalf("hot reader accepts % x, which the general path refuses", frame)
	}
	if hop != gop {
		t.Fatalf("op: hot %q, general %q", hop, gop)
	}
	if diff := cmp.Diff(gv, hv); diff != "" {
		t.Fatalf("hot reader disagrees with the general path on % x (-general +hot):\n%s", frame, diff)
	}
	return true
}

func enc(t testing.TB, v any) []byte {
	t.Helper()
	b, err := canonicalMsgpack(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gymStep is the step request the Python gym environment sends.
func gymStep(extra map[string]any) map[string]any {
	m := map[string]any{"id": 7, "op": "step", "session": "s1", "time": "10ms", "observe": "f0",
		"obs_format": "int64le", "action": map[string]any{"flow": "f0", "cwnd": 200}}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// The hot reader takes the learning loop's requests, and what it takes
// means what the general decoder and argument checks make of it; every
// other frame (unknown or repeated keys, nil values, other value types,
// out-of-range numbers, bad durations) it leaves to the general path, so
// that the errors stay the general path's.
func TestHotReaderAgreesWithGeneralPath(t *testing.T) {
	t.Parallel()
	entry := func(s string, extra map[string]any) map[string]any {
		m := gymStep(extra)
		m["session"] = s
		delete(m, "id")
		delete(m, "op")
		return m
	}
	// int64 encodes v as msgpack int64 (0xd3): a fixed-width encoding a
	// client may patch in place.
	int64Frame := func(v int64) []byte {
		f := enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "cwnd": 201}}))
		at := bytes.Index(f, []byte{0xcc, 201})
		if at < 0 {
			t.Fatal("no cwnd in frame")
		}
		b := append([]byte{}, f[:at]...)
		b = append(b, msgpcode.Int64, 0, 0, 0, 0, 0, 0, 0, 0)
		for i := range 8 {
			b[len(b)-1-i] = byte(uint64(v) >> (8 * i))
		}
		return append(b, f[at+2:]...)
	}
	cases := []struct {
		name  string
		frame []byte
		hot   bool // the hot reader must take it
	}{
		{"gym step", enc(t, gymStep(nil)), true},
		{"pacing rate", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "pacing_rate": 12_000_000}})), true},
		{"no action", enc(t, gymStep(map[string]any{"action": nil})), true},
		{"bare time step", enc(t, map[string]any{"id": 1, "op": "step", "session": "s1", "time": "1ms"}), true},
		{"events", enc(t, gymStep(map[string]any{"time": nil, "events": 100})), true},
		{"array format", enc(t, gymStep(map[string]any{"obs_format": "array"})), true},
		{"no format", enc(t, gymStep(map[string]any{"obs_format": nil})), true},
		{"cwnd as int64", int64Frame(200), true},
		{"id as uint64", bytes.Replace(enc(t, gymStep(nil)), []byte{0xa2, 'i', 'd', 7},
			[]byte{0xa2, 'i', 'd', msgpcode.Uint64, 0, 0, 0, 0, 0, 0, 0, 9}, 1), true},
		{"steps", enc(t, map[string]any{"id": 3, "op": "steps", "steps": []any{entry("s1", nil), entry("s2", nil),
			entry("s3", map[string]any{"action": nil}), entry("s4", map[string]any{"time": "20ms"})}}), true},
		// Left to the general path.
		{"cwnd 0", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "cwnd": 0}})), false},
		{"cwnd 2^32", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "cwnd": int64(1) << 32}})), false},
		{"cwnd negative int64", int64Frame(-5), false},
		{"cwnd float", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "cwnd": 200.0}})), false},
		{"cwnd and pacing", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "cwnd": 2, "pacing_rate": 5}})), false},
		{"pacing string", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0", "pacing_rate": "5Mbps"}})), false},
		{"action on a link", enc(t, gymStep(map[string]any{"action": map[string]any{"link": "b", "dir": "ab", "rate": 5}})), false},
		{"action without flow", enc(t, gymStep(map[string]any{"action": map[string]any{"cwnd": 5}})), false},
		{"empty flow", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "", "cwnd": 5}})), false},
		{"action sets nothing", enc(t, gymStep(map[string]any{"action": map[string]any{"flow": "f0"}})), false},
		{"time and events", enc(t, gymStep(map[string]any{"events": 5})), false},
		{"neither time nor events", enc(t, gymStep(map[string]any{"time": nil})), false},
		{"bad time", enc(t, gymStep(map[string]any{"time": "10 parsecs"})), false},
		{"negative time", enc(t, gymStep(map[string]any{"time": "-1ms"})), false},
		{"zero events", enc(t, gymStep(map[string]any{"time": nil, "events": 0})), false},
		{"format without observe", enc(t, gymStep(map[string]any{"observe": nil})), false},
		{"unknown format", enc(t, gymStep(map[string]any{"obs_format": "float32"})), false},
		{"unknown key", enc(t, gymStep(map[string]any{"colour": "red"})), false},
		{"nil session", enc(t, gymStep(map[string]any{"session": nil})), false},
		{"session int", enc(t, gymStep(map[string]any{"session": 5})), false},
		{"negative id", enc(t, gymStep(map[string]any{"id": -1})), false},
		{"other op", enc(t, gymStep(map[string]any{"op": "run"})), false},
		{"steps empty", enc(t, map[string]any{"id": 3, "op": "steps", "steps": []any{}}), false},
		{"steps with session", enc(t, map[string]any{"id": 3, "op": "steps", "session": "s1", "steps": []any{entry("s1", nil)}}), false},
		{"step with steps", enc(t, gymStep(map[string]any{"steps": []any{entry("s1", nil)}})), false},
		{"steps entry bad", enc(t, map[string]any{"id": 3, "op": "steps", "steps": []any{entry("s1", nil),
			entry("s2", map[string]any{"time": "soon"})}}), false},
		{"steps entry not a map", enc(t, map[string]any{"id": 3, "op": "steps", "steps": []any{"s1"}}), false},
		{"trailing byte", append(enc(t, gymStep(nil)), 0xc0), false},
		{"truncated", enc(t, gymStep(nil))[:20], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkHotAgrees(t, c.frame); got != c.hot {
				t.Errorf("hot reader takes it = %v, want %v", got, c.hot)
			}
		})
	}
}

// FuzzHotReader: on any frame, the hot reader either declines or agrees
// with the general path.
func FuzzHotReader(f *testing.F) {
	seedVectors(f)
	f.Add(enc(f, gymStep(nil)))
	f.Add(enc(f, map[string]any{"id": 3, "op": "steps", "steps": []any{map[string]any{"session": "a", "time": "1ms"}}}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkHotAgrees(t, frame)
	})
}

// The step and steps responses, appended by hand, are byte for byte what
// the msgpack encoder writes for the same values (stepResult's and
// stepResultObs's EncodeMsgpack, the response envelope), over integers of
// every encoding width.
func TestStepResponseBytesMatchEncoder(t *testing.T) {
	t.Parallel()
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	idx := 5
	var results []any
	for i, v := range ints {
		r := stepResult{SimTimePs: v, Events: uint64(ints[(i+3)%len(ints)]), Done: i%2 == 0}
		if i%4 == 1 {
			r.Digest = "00112233aabbccdd"
		}
		results = append(results, r)
		o := stepResultObs{stepResult: r, observed: i%3 != 0, obsBin: i%2 == 1}
		if i%3 == 1 {
			o.ActionIndex = &idx
		}
		for j := range o.Obs {
			o.Obs[j] = ints[(i+j)%len(ints)]
		}
		results = append(results, o)
	}
	for i, res := range results {
		for _, id := range []any{uint64(ints[i%len(ints)]) & math.MaxInt64, nil} {
			r := response{ID: id, OK: true, Result: res}
			got, err := marshalResponse(&r)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			e := msgpack.NewEncoder(&want)
			e.UseCompactInts(true)
			if err := e.Encode(&r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("marshalResponse(%+v) = % x, want % x", r, got, want.Bytes())
			}
		}
	}
	// A steps response with a failed entry.
	b := &stepsBatch{req: Request{ID: uint64(70000)}, results: []batchResult{{res: results[1]},
		{err: errorf(CodeNotFound, "steps[1].observe", "no flow %q", "f9")}, {res: results[2]}}}
	got, err := b.encode()
	if err != nil {
		t.Fatal(err)
	}
	entries := []map[string]any{{"ok": true, "result": results[1]}, {"ok": false, "error": b.results[1].err},
		{"ok": true, "result": results[2]}}
	want, err := marshal(map[string]any{"id": uint64(70000), "ok": true, "result": map[string]any{"results": entries}})
	if err != nil {
		t.Fatal(err)
	}
	gv, _ := decodeValue(got)
	wv, _ := decodeValue(want)
	if diff := cmp.Diff(wv, gv); diff != "" {
		t.Errorf("steps response differs from the encoder's (-encoder +appended):\n%s", diff)
	}
}

// BenchmarkReadSteps measures reading a vector environment's steps
// request of 8 entries (each a session, 10 ms, a cwnd action and an int64le
// observation) into its stepArgs, on the connection's reader before any
// session runs: by the hot reader, and by the general decoder and argument
// checks it stands in for.
func BenchmarkReadSteps(b *testing.B) {
	var list []any
	for i := range 8 {
		list = append(list, map[string]any{"session": "s" + string(rune('a'+i)), "time": "10ms", "observe": "f0",
			"obs_format": "int64le", "action": map[string]any{"flow": "f0", "cwnd": 200}})
	}
	frame := enc(b, map[string]any{"id": 12345, "op": "steps", "steps": list})
	b.Run("hot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h, ok := readHot(frame, 64)
			if !ok {
				b.Fatal("readHot declined the gym's steps request")
			}
			var dc durCache
			for i := range h.steps {
				if _, ok := h.steps[i].args(&dc); !ok {
					b.Fatalf("steps[%d] declined", i)
				}
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, e := decodeRequest(frame, 1<<30)
			if e != nil {
				b.Fatal(e)
			}
			for i, v := range req.Args["steps"].([]any) {
				a := newArgs(v.(map[string]any), "steps[0].", stepOp.argKeys())
				if _, e := a.str("session"); e != nil {
					b.Fatal(e)
				}
				if _, e := parseStep(a, nil); e != nil {
					b.Fatalf("steps[%d]: %v", i, e)
				}
			}
		}
	})
}
