"""The sans-I/O codec, checked against the msgpack spec and the protocol text."""

from __future__ import annotations

import io

import msgpack
import pyarrow as pa
import pytest
from ccscope import codec, errors


def test_encode_request_bytes_follow_the_msgpack_spec():
    # {"id": 7, "op": "step", "session": "s1", "time": "100ms"}, keys sorted:
    # fixmap of 4 (0x84); fixstr "id" (0xa2 69 64) + positive fixint 7;
    # "op" + fixstr(4) "step"; "session" (0xa7) + "s1" (0xa2); "time" + "100ms" (0xa5).
    want = b"\x84\xa2id\x07\xa2op\xa4step\xa7session\xa2s1\xa4time\xa5100ms"
    got = codec.encode_request(7, "step", {"time": "100ms", "session": "s1"})
    assert got == want, f"encode_request(7, step) = {got!r}, want {want!r}"


def test_encode_request_drops_unset_arguments():
    got = codec.decode(codec.encode_request(1, "signals", {"session": "s1", "table": "flows", "flows": None}))
    assert got == {"id": 1, "op": "signals", "session": "s1", "table": "flows"}


@pytest.mark.parametrize(
    "value, want",
    [
        (1.0, b"\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00"),  # float64 1.0, never float32 nor int
        (255, b"\xcc\xff"),  # uint8
        (-33, b"\xd0\xdf"),  # int8 (below the negative fixint range)
        (2**40, b"\xcf\x00\x00\x01\x00\x00\x00\x00\x00"),  # uint64: msgpack-python picks it over int64
        (b"\x00\x01", b"\xc4\x02\x00\x01"),  # bin8, not str
        ({"b": 1, "a": 2}, b"\x82\xa1a\x02\xa1b\x01"),  # keys sorted bytewise
    ],
)
def test_encode_is_canonical(value, want):
    got = codec.encode(value)
    assert got == want, f"encode({value!r}) = {got.hex()}, want {want.hex()}"


def test_encode_request_rejects_negative_id_and_reserved_keys():
    with pytest.raises(ValueError):
        codec.encode_request(-1, "hello")
    with pytest.raises(ValueError):
        codec.encode_request(1, "open", {"op": "x"})


def test_decode_ok_response():
    f = codec.decode_frame(codec.encode({"id": 3, "ok": True, "result": {"session": "s1"}}))
    assert f == codec.Response(3, True, result={"session": "s1"})
    assert f.raise_for_error() == {"session": "s1"}


@pytest.mark.parametrize(
    "code, cls",
    [
        ("bad_request", errors.InvalidRequest),
        ("unknown_op", errors.UnknownOp),
        ("bad_args", errors.BadArguments),
        ("invalid_config", errors.InvalidConfig),
        ("not_found", errors.NotFound),
        ("limit", errors.LimitExceeded),
        ("too_large", errors.TooLarge),
        ("busy", errors.Busy),
        ("replay_mismatch", errors.ReplayMismatch),
        ("version", errors.ProtocolVersionError),
        ("internal", errors.InternalError),
        ("a_code_from_the_future", errors.ServerError),
    ],
)
def test_error_codes_map_to_the_exception_tree(code, cls):
    frame = {"id": 9, "ok": False, "error": {"code": code, "message": "m", "path": "time", "details": [1]}}
    f = codec.decode_frame(codec.encode(frame))
    with pytest.raises(cls) as info:
        f.raise_for_error()
    e = info.value
    assert type(e) is cls, f"code {code!r} raised {type(e).__name__}, want {cls.__name__}"
    assert (e.code, e.message, e.path, e.details) == (code, "m", "time", {"details": [1]})
    assert isinstance(e, errors.CcscopeError)


def test_limit_family():
    assert issubclass(errors.TooLarge, errors.LimitExceeded)
    assert issubclass(errors.Busy, errors.LimitExceeded)
    assert issubclass(errors.BadArguments, errors.InvalidRequest)


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def test_decode_data_push_reads_arrow():
    t = pa.table({"t_ps": pa.array([0, 10**9], pa.int64()), "flow": ["f0", "f0"]})
    f = codec.decode_frame(codec.encode({"stream": "flows", "session": "s1", "seq": 12, "arrow": _ipc(t)}))
    assert isinstance(f, codec.DataPush)
    assert (f.stream, f.session, f.seq) == ("flows", "s1", 12)
    assert codec.read_arrow(f.arrow).equals(t)


def test_decode_progress_push():
    msg = {"stream": "progress", "session": "s1", "seq": 13, "request": 9, "sim_time_ps": 5 * 10**12,
           "events": 123456, "fraction": 0.25}  # fmt: skip
    f = codec.decode_frame(codec.encode(msg))
    assert f == codec.ProgressPush("s1", 13, 9, 5 * 10**12, 123456, 0.25)


@pytest.mark.parametrize(
    "data",
    [
        b"\xc1",  # never used in msgpack
        codec.encode([1, 2]),  # not a map
        codec.encode({"id": 1}),  # neither ok nor stream
        codec.encode({"id": "x", "ok": True}),  # id not an integer
        codec.encode({"id": 1, "ok": False, "error": "boom"}),  # error not a map
        codec.encode({"stream": "flows", "session": "s1", "seq": 1, "arrow": "text"}),  # arrow not bin
        codec.encode({"stream": "progress", "session": "s1", "seq": 1}),  # progress fields missing
    ],
)
def test_malformed_frames_raise_protocol_error(data):
    with pytest.raises(errors.ProtocolError):
        codec.decode_frame(data)


def test_read_arrow_rejects_garbage():
    with pytest.raises(errors.ProtocolError):
        codec.read_arrow(b"not arrow at all")


def test_errors_pickle_with_their_fields():
    import pickle

    e = pickle.loads(pickle.dumps(errors.error_from_frame("bad_args", "no", "time", {"x": 1})))
    assert type(e) is errors.BadArguments and (e.code, e.message, e.path, e.details) == (
        "bad_args",
        "no",
        "time",
        {"x": 1},
    )
    d = pickle.loads(pickle.dumps(errors.ServerDied("gone", returncode=2, stderr_tail="boom")))
    assert (d.message, d.returncode, d.stderr_tail) == ("gone", 2, "boom") and "boom" in str(d)


def _vector(name):
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "proto" / "vectors" / f"{name}.msgpack").read_bytes()


def test_template_fills_to_the_step_vector_byte_for_byte():
    # proto/vectors/request_step_observe: step of s4 by 300ms, cwnd 40 on f0, observing f0, id 40.
    h = codec.Template.hole
    t = codec.Template(
        {"id": h(0), "op": "step", "session": "s4", "time": "300ms", "observe": "f0", "action": {"flow": "f0", "cwnd": h(1)}},
        2,
    )
    assert t.fill(codec.pack(40), codec.pack(40)) == _vector("request_step_observe")
    pack = codec.packer()
    assert t.fill(pack(40), pack(40)) == _vector("request_step_observe")


def test_template_pieces_build_the_steps_vector_byte_for_byte():
    # proto/vectors/request_steps: id 42; s4 with cwnd 20, s5 without an action; both 100ms, observing f0.
    h = codec.Template.hole
    outer = codec.Template({"id": h(0), "op": "steps", "steps": h(1)}, 2)
    first = codec.Template({"session": "s4", "time": "100ms", "observe": "f0", "action": {"flow": "f0", "cwnd": h(0)}}, 1)
    second = codec.encode({"session": "s5", "time": "100ms", "observe": "f0"})
    body = codec.array_header(2) + first.fill(codec.pack(20)) + second
    assert outer.fill(codec.pack(42), body) == _vector("request_steps")


@pytest.mark.parametrize("n, want", [(0, b"\x90"), (15, b"\x9f"), (16, b"\xdc\x00\x10"), (65536, b"\xdd\x00\x01\x00\x00")])
def test_array_header_follows_the_msgpack_spec(n, want):
    # fixarray up to 15 elements, then array 16, then array 32.
    assert codec.array_header(n) == want


def test_template_refuses_a_missing_or_repeated_hole():
    h = codec.Template.hole
    with pytest.raises(ValueError):
        codec.Template({"a": h(0)}, 2)
    with pytest.raises(ValueError):
        codec.Template({"a": h(0), "b": h(0)}, 1)


def test_int_template_writes_fixed_width_int64_holes():
    # Every hole is msgpack int64 (0xd3, then 8 bytes big-endian two's
    # complement, msgpack spec "int 64"), whatever the value: the request
    # keeps one length and layout from step to step.
    h = codec.Template.hole
    value = {"id": h(0), "op": "steps", "steps": [{"session": "s1", "action": {"flow": "f0", "cwnd": h(2)}},
                                                    {"session": "s2", "action": {"flow": "f0", "cwnd": h(1)}}]}
    t = codec.IntTemplate(value, 3)
    for vals in ([0, 1, 2], [7, 200, 127], [2**63 - 1, -1, -(2**63)], [128, 65536, 2**32]):
        data = t.fill(list(vals))
        assert msgpack.unpackb(data) == {"id": vals[0], "op": "steps", "steps": [
            {"session": "s1", "action": {"flow": "f0", "cwnd": vals[2]}},
            {"session": "s2", "action": {"flow": "f0", "cwnd": vals[1]}}]}
        assert b"\xa2id\xd3" + vals[0].to_bytes(8, "big", signed=True) in data
        assert len(data) == len(t.fill([0, 0, 0]))
    # With the holes at their smallest encoding instead, the request is the
    # canonical one (proto/vectors/request_step_observe: id 40, cwnd 40).
    args = {"session": "s4", "time": "300ms", "observe": "f0", "action": {"flow": "f0", "cwnd": h(1)}}
    step = codec.IntTemplate({"id": h(0), "op": "step", **args}, 2).fill([40, 40])
    assert step.replace(b"\xd3" + (40).to_bytes(8, "big"), b"\x28") == _vector("request_step_observe")


def test_encode_request_of_scalars_is_canonical():
    # The scalar-only fast path of encode_request gives what the canonical
    # encoder gives for the same map.
    for args in ({"session": "s1", "time": "1ms"}, {"z": 1.5, "a": b"\x00", "\u00e9": True, "b": None, "c": -7},
                 {"session": "s1", "events": 2**40}):
        want = codec.encode({"id": 3, "op": "step", **{k: v for k, v in args.items() if v is not None}})
        assert codec.encode_request(3, "step", args) == want
