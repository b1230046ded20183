"""proto/vectors: every frame decoded and re-encoded byte for byte (the Go tests do the same).

NAME.json is NAME.msgpack written as JSON, with {"$bin": base64} for msgpack
bin and {"$float": x} for an integral float (proto/README.md, *Vectors*).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import ccscope
import pyarrow as pa
import pytest
from ccscope import codec, errors

VECTORS = Path(__file__).resolve().parents[2] / "proto" / "vectors"
NAMES = sorted(p.stem for p in VECTORS.glob("*.msgpack"))


def from_json(v):
    """The Python value a JSON twin stands for."""
    if isinstance(v, dict):
        if set(v) == {"$bin"}:
            return base64.b64decode(v["$bin"])
        if set(v) == {"$float"}:
            return float(v["$float"])
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


def same(a, b, path="$"):
    """Equal values of equal types (1 and 1.0 differ on the wire)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} {a!r}, want {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), f"{path}: keys {sorted(a)}, want {sorted(b)}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} items, want {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r}, want {b!r}"


def load(name):
    raw = (VECTORS / f"{name}.msgpack").read_bytes()
    want = from_json(json.loads((VECTORS / f"{name}.json").read_text()))
    return raw, want


def test_there_are_vectors():
    assert len(NAMES) >= 20, f"found {len(NAMES)} vectors in {VECTORS}"
    kinds = {n.split("_")[0] for n in NAMES}
    assert {"request", "response", "push", "checkpoint"} <= kinds


@pytest.mark.parametrize("name", NAMES)
def test_decode_matches_json_twin(name):
    raw, want = load(name)
    same(codec.decode(raw), want)


@pytest.mark.parametrize("name", NAMES)
def test_canonical_encoding_is_byte_identical(name):
    raw, want = load(name)
    got = codec.encode(want)
    assert got == raw, (
        f"encode({name}) differs at byte {next(i for i, (x, y) in enumerate(zip(got + b'?', raw + b'!')) if x != y)}"
    )


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("request_")])
def test_requests_encode_like_the_client_sends_them(name):
    raw, want = load(name)
    args = {k: v for k, v in want.items() if k not in ("id", "op")}
    assert codec.encode_request(want["id"], want["op"], args) == raw


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith(("response_", "push_"))])
def test_server_frames_decode_to_frames(name):
    raw, want = load(name)
    frame = codec.decode_frame(raw)
    if name.startswith("push_progress"):
        assert isinstance(frame, codec.ProgressPush)
        assert 0.0 <= frame.fraction <= 1.0
    elif name.startswith("push_"):
        assert isinstance(frame, codec.DataPush)
        table = codec.read_arrow(frame.arrow)
        assert table.schema.field("t_ps").type == pa.int64()
        assert table.schema.metadata[b"ccscope.table"].decode() == frame.stream
    elif not want["ok"]:
        assert isinstance(frame, codec.Response) and not frame.ok
        with pytest.raises(errors.ServerError) as e:
            frame.raise_for_error()
        cls = errors._BY_CODE.get(want["error"]["code"], errors.ServerError)
        assert type(e.value) is cls, f"{name}: {type(e.value).__name__}, want {cls.__name__}"
        assert e.value.message == want["error"]["message"]
    else:
        assert isinstance(frame, codec.Response) and frame.ok and frame.id == want["id"]


def test_checkpoint_file_loads_and_round_trips(tmp_path):
    raw, want = load("checkpoint")
    p = tmp_path / "cp"
    p.write_bytes(raw)
    cp = ccscope.Checkpoint.load(p)
    assert cp.data == want
    assert cp.events == want["at"]["events"] and cp.digest == want["digest"]
    cp.save(tmp_path / "again")
    assert (tmp_path / "again").read_bytes() == raw
