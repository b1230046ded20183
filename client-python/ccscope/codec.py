"""The wire codec, with no I/O: requests to bytes, bytes to frames.

The protocol (``proto/README.md``, version 1.4) puts exactly one msgpack map
in every binary websocket message. A request has an ``op``, a response an
``ok``, a push a ``stream``. Data pushes and the ``signals`` result carry a
complete Arrow IPC stream as msgpack ``bin``.

This module knows the framing and nothing about sockets, so it is tested on
bytes alone (``proto/vectors``) and the transport can be swapped for a fake.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack
import pyarrow as pa

from .errors import ProtocolError, ServerError, error_from_frame

__all__ = [
    "PROTOCOL_VERSION",
    "Response",
    "DataPush",
    "ProgressPush",
    "Frame",
    "encode",
    "encode_request",
    "Template",
    "IntTemplate",
    "pack",
    "packer",
    "array_header",
    "decode",
    "decode_frame",
    "frame_from_map",
    "read_arrow",
    "canonical",
    "plain",
]

#: The protocol version this client speaks ("MAJOR.MINOR").
PROTOCOL_VERSION = "1.4"


@dataclass(frozen=True)
class Response:
    """A response to the request with the same ``id``.

    Attributes:
        id: The request's id (None if the server could not read one).
        ok: Whether the request succeeded.
        result: The op's result map when ``ok``.
        error: The error map (``code``, ``message``, ``path``, ...) otherwise.
    """

    id: int | None
    ok: bool
    result: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] = field(default_factory=dict)

    def raise_for_error(self) -> dict[str, Any]:
        """Return the result, or raise the error the response carries.

        Returns:
            The result map.

        Raises:
            ServerError: The subclass matching the error code.
        """
        if self.ok:
            return self.result
        raise self.exception()

    def exception(self) -> ServerError:
        """The :class:`ServerError` this (failed) response stands for."""
        err = dict(self.error)
        code = str(err.pop("code", "internal"))
        message = str(err.pop("message", ""))
        path = str(err.pop("path", "") or "")
        return error_from_frame(code, message, path, err)


@dataclass(frozen=True)
class DataPush:
    """Rows of one trace table, pushed while a session steps.

    Attributes:
        stream: The table name (``flows``, ``queue``, ...).
        session: The session id.
        seq: The session's push counter (gapless from 0).
        arrow: A complete Arrow IPC stream (use :func:`read_arrow`).
    """

    stream: str
    session: str
    seq: int
    arrow: bytes


@dataclass(frozen=True)
class ProgressPush:
    """Progress of a long ``run``.

    Attributes:
        session: The session id.
        seq: The session's push counter.
        request: The id of the ``run`` request.
        sim_time_ps: The simulated clock now.
        events: Events dispatched so far.
        fraction: Sim time done / sim time asked for, in [0, 1].
    """

    session: str
    seq: int
    request: int
    sim_time_ps: int
    events: int
    fraction: float


Frame = Response | DataPush | ProgressPush


def canonical(value: Any) -> Any:
    """Return ``value`` with every map's keys sorted, for canonical encoding.

    Args:
        value: A msgpack-able value (maps, lists, scalars, bytes), or numpy
            values (:func:`plain`).

    Returns:
        The same value with maps rebuilt as dicts in sorted key order
        (msgpack-python writes dicts in insertion order) and numpy values
        as plain ones.
    """
    t = type(value)
    if t in _SCALARS:
        return value
    if isinstance(value, Mapping):
        # str keys sort by code point as their UTF-8 bytes do; others (ints,
        # bytes, mixed) go through their byte form.
        try:
            keys = sorted(value) if all(type(k) is str for k in value) else sorted(value, key=_key_bytes)
        except TypeError:
            keys = sorted(value, key=_key_bytes)
        return {k: v if type(v) in _SCALARS else canonical(v) for k, v in ((k, value[k]) for k in keys)}
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _SCALARS else canonical(v) for v in value]
    p = plain(value)
    return value if p is value else canonical(p)


def plain(value: Any) -> Any:
    """A numpy value as the Python value it holds; any other value as it is.

    A numpy scalar (``np.int64(3)``, ``np.float32``, ``np.bool_``) or 0-d
    array becomes its ``item()``, an array its ``tolist()``: what a sweep's
    grid or a seed taken from an array holds, which msgpack and json do not
    encode. numpy is not imported.

    Args:
        value: Any value.

    Returns:
        The plain value, or ``value`` itself.
    """
    if type(value).__module__ != "numpy":
        return value
    if getattr(value, "ndim", 0) and hasattr(value, "tolist"):
        return value.tolist()
    item = getattr(value, "item", None)
    return item() if callable(item) else value


_SCALARS = frozenset((str, int, float, bool, bytes, type(None)))


def _key_bytes(k: Any) -> bytes:
    return k.encode() if isinstance(k, str) else bytes(k) if isinstance(k, (bytes, bytearray)) else str(k).encode()


def encode(value: Any) -> bytes:
    """Encode a value canonically: keys sorted, smallest ints, float64, str, bin.

    Args:
        value: A msgpack-able value.

    Returns:
        The msgpack bytes.
    """
    return msgpack.packb(canonical(value), use_bin_type=True, use_single_float=False)


def encode_request(request_id: int, op: str, args: dict[str, Any] | None = None) -> bytes:
    """Encode one request.

    Arguments whose value is None are left out, so optional arguments can be
    passed through unset.

    Args:
        request_id: A non-negative integer echoed in the response.
        op: The operation name (``"open"``, ``"step"``, ...).
        args: The operation's arguments.

    Returns:
        One websocket message.

    Raises:
        ValueError: ``request_id`` is negative or ``args`` uses a reserved key.
        TypeError: An argument holds a value msgpack cannot encode (the
            message names the argument).
    """
    if request_id < 0:
        raise ValueError(f"ccscope.codec: request id must be non-negative, got {request_id}")
    msg: dict[str, Any] = {"id": request_id, "op": op}
    flat = True
    if args:
        if "id" in args or "op" in args:
            raise ValueError(f"ccscope.codec: argument name {'id' if 'id' in args else 'op'!r} is reserved")
        for k, v in args.items():
            if v is not None:
                msg[k] = v
                if type(v) not in _SCALARS or type(k) is not str:
                    flat = False
    if flat:
        # Scalars under string keys (a step's arguments): sorting the keys
        # is all canonical() would do. One msgpack cannot hold (an integer
        # beyond 64 bits) fails below too, naming its argument.
        try:
            return _packb(dict(sorted(msg.items())), use_bin_type=True, use_single_float=False)
        except (TypeError, ValueError, OverflowError):
            pass
    try:
        return encode(msg)
    except (TypeError, ValueError, OverflowError) as e:
        for k, v in msg.items():
            try:
                encode(v)
            except (TypeError, ValueError, OverflowError):
                raise type(e)(f"ccscope.codec: {op} argument {k!r}: {e}") from e
        raise


#: The string a :class:`Template` hole stands in for while it is encoded:
#: private-use code points no protocol value contains.
_HOLE = "\ue000ccscope-hole-{}\ue000"


class Template:
    """A message encoded once, canonically, with holes for values that change.

    A learning loop sends the same request every step but for a few values
    (the request id, an action): a template encodes the rest once, and
    :meth:`fill` splices the changing values in, already encoded, so a
    request costs a few byte joins instead of a canonical encoding.

    Args:
        value: The message, with :meth:`hole` ``(i)`` in place of each value
            that changes (``0 <= i < holes``, each exactly once).
        holes: The number of holes.

    Raises:
        ValueError: A hole is missing or appears twice.

    Example::

        t = Template({"id": Template.hole(0), "op": "step", "session": "s1",
                      "time": "10ms", "action": {"flow": "f0", "cwnd": Template.hole(1)}}, 2)
        data = t.fill(pack(7), pack(120))   # == encode_request(7, "step", {...})
    """

    __slots__ = ("_segments", "_order")

    def __init__(self, value: Any, holes: int) -> None:
        data = encode(value)
        found = []
        for i in range(holes):
            mark = encode(_HOLE.format(i))
            at = data.find(mark)
            if at < 0 or data.find(mark, at + 1) >= 0:
                raise ValueError(f"ccscope.codec: template hole {i} appears {'never' if at < 0 else 'twice'}")
            found.append((at, len(mark), i))
        found.sort()
        segments, order, pos = [], [], 0
        for at, n, i in found:
            segments.append(data[pos:at])
            order.append(i)
            pos = at + n
        segments.append(data[pos:])
        self._segments: tuple[bytes, ...] = tuple(segments)
        self._order: tuple[int, ...] = tuple(order)

    @staticmethod
    def hole(i: int) -> str:
        """The placeholder for hole ``i`` in a template's value."""
        return _HOLE.format(i)

    def fill(self, *parts: bytes) -> bytes:
        """The message with hole ``i`` replaced by ``parts[i]``.

        Args:
            parts: Each hole's value, msgpack-encoded (:func:`pack`, or
                bytes built from several encodings).

        Returns:
            The encoded message.
        """
        seg = self._segments
        if len(seg) == 2:
            return seg[0] + parts[0] + seg[1]
        out = [seg[0]]
        for k, i in enumerate(self._order):
            out.append(parts[i])
            out.append(seg[k + 1])
        return b"".join(out)


class IntTemplate:
    """A message encoded once, with integer holes of fixed width, filled by one ``struct`` call.

    Like :class:`Template`, for a request sent every step of a learning
    loop, but each hole is a signed 64-bit integer written in msgpack's
    fixed-width int64 form (``0xd3`` and 8 bytes, big-endian) rather than
    the smallest form: every fill has the same length and layout, and
    :meth:`fill` is a single :meth:`struct.Struct.pack` of the encoded
    segments and the values. Any msgpack reader (the server's too) reads
    an int64 as the same integer.

    Args:
        value: The message, with :meth:`Template.hole` ``(i)`` in place of
            each integer that changes (``0 <= i < holes``, each exactly once,
            in any order).
        holes: The number of holes.

    Raises:
        ValueError: A hole is missing or appears twice.
    """

    __slots__ = ("_struct", "_args", "_slots")

    def __init__(self, value: Any, holes: int) -> None:
        t = Template(value, holes)
        segs = [s + b"\xd3" for s in t._segments[:-1]] + [t._segments[-1]]
        self._struct = struct.Struct(">" + "".join(f"{len(s)}sq" for s in segs[:-1]) + f"{len(segs[-1])}s")
        self._args: list[Any] = [None] * (2 * len(segs) - 1)
        self._args[0::2] = segs
        # _slots[i]: where hole i's value goes in _args.
        self._slots = [0] * holes
        for k, i in enumerate(t._order):
            self._slots[i] = 2 * k + 1

    def fill(self, values: Sequence[int]) -> bytes:
        """The message with hole ``i`` replaced by ``values[i]``.

        Args:
            values: Each hole's integer, in ``[-2**63, 2**63)``.

        Returns:
            The encoded message.

        Raises:
            struct.error: A value is not an integer in that range.
        """
        args = self._args
        for i, k in enumerate(self._slots):
            args[k] = values[i]
        return self._struct.pack(*args)


def pack(value: Any) -> bytes:
    """Encode one scalar (int, float, str, bytes, bool, None) as :func:`encode` would."""
    return _packb(value, use_bin_type=True, use_single_float=False)


_packb = msgpack.packb


def packer() -> Callable[[Any], bytes]:
    """A :func:`pack` of one's own: faster (it keeps its encoder), for one thread at a time."""
    return msgpack.Packer(use_bin_type=True, use_single_float=False).pack


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` values (its values follow it)."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def decode(data: bytes) -> Any:
    """Decode one msgpack message into Python values (bin stays bytes).

    Args:
        data: The message bytes.

    Returns:
        The decoded value.

    Raises:
        ProtocolError: The bytes are not one well-formed msgpack value.
    """
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError) as e:
        raise ProtocolError(f"ccscope.codec: undecodable frame: {e}") from e


def decode_frame(data: bytes) -> Frame:
    """Decode a server message into a :class:`Response` or a push.

    Args:
        data: One websocket message from the server.

    Returns:
        A :class:`Response`, :class:`DataPush` or :class:`ProgressPush`.

    Raises:
        ProtocolError: The message is not a map, has neither ``ok`` nor
            ``stream``, or a field has the wrong type.
    """
    if isinstance(data, str):
        raise ProtocolError("ccscope.codec: the server sent a text message; the protocol uses binary messages")
    return frame_from_map(decode(data))


def frame_from_map(msg: Any) -> Frame:
    """Interpret a decoded server message (as :func:`decode_frame` does).

    Args:
        msg: The decoded message.

    Returns:
        A :class:`Response`, :class:`DataPush` or :class:`ProgressPush`.

    Raises:
        ProtocolError: As for :func:`decode_frame`.
    """
    if not isinstance(msg, dict):
        raise ProtocolError(f"ccscope.codec: frame is a {type(msg).__name__}, want a map")
    try:
        if "ok" in msg:
            return _response(msg)
        if "stream" in msg:
            return _push(msg)
    except (KeyError, TypeError, ValueError) as e:
        raise ProtocolError(f"ccscope.codec: malformed frame {_brief(msg)}: {e!r}") from e
    raise ProtocolError(f"ccscope.codec: frame has neither 'ok' nor 'stream': {_brief(msg)}")


def _response(msg: dict[str, Any]) -> Response:
    rid = msg.get("id")
    if rid is not None and not isinstance(rid, int):
        raise TypeError(f"id is {type(rid).__name__}")
    ok = msg["ok"]
    if not isinstance(ok, bool):
        raise TypeError(f"ok is {type(ok).__name__}")
    if ok:
        result = msg.get("result") or {}
        if not isinstance(result, dict):
            raise TypeError(f"result is {type(result).__name__}")
        return Response(rid, True, result=result)
    err = msg.get("error")
    if not isinstance(err, dict):
        raise TypeError(f"error is {type(err).__name__}")
    return Response(rid, False, error=err)


def _push(msg: dict[str, Any]) -> DataPush | ProgressPush:
    stream = msg["stream"]
    if stream == "progress":
        return ProgressPush(
            session=str(msg["session"]),
            seq=int(msg["seq"]),
            request=int(msg["request"]),
            sim_time_ps=int(msg["sim_time_ps"]),
            events=int(msg["events"]),
            fraction=float(msg["fraction"]),
        )
    arrow = msg["arrow"]
    if not isinstance(arrow, (bytes, bytearray, memoryview)):
        raise TypeError(f"arrow is {type(arrow).__name__}, want bin")
    return DataPush(stream=str(stream), session=str(msg["session"]), seq=int(msg["seq"]), arrow=bytes(arrow))


def _brief(msg: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k!r}: {type(v).__name__}" for k, v in list(msg.items())[:8]) + "}"


def read_arrow(buf: bytes | bytearray | memoryview) -> pa.Table:
    """Read a complete Arrow IPC stream (as pushed, or a ``signals`` result).

    Args:
        buf: The stream's bytes.

    Returns:
        The stream's rows as one table (zero-copy over ``buf``).

    Raises:
        ProtocolError: The bytes are not an Arrow IPC stream.
    """
    try:
        with pa.ipc.open_stream(pa.py_buffer(buf)) as reader:
            return reader.read_all()
    except pa.ArrowInvalid as e:
        raise ProtocolError(f"ccscope.codec: bad Arrow IPC stream: {e}") from e
