"""Helpers for trace tables: time columns, units, flow names.

The server's tables keep time as int64 picoseconds (``t_ps``) so nothing is
rounded; these helpers add float columns for plotting and parse the
protocol's duration strings exactly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "TABLES",
    "FILTERS",
    "CA_STATES",
    "TRACE_BYTES",
    "with_seconds",
    "parse_duration",
    "format_duration",
    "flow_names",
    "check_filters",
    "missing_signals",
    "app_latency",
    "trace_capacity",
]

#: The trace tables a session records (see ``engine/trace``).
TABLES = ("flows", "signals", "events", "queue", "delivery", "link")

#: Per filter of ``signals`` and ``subscribe``, the tables it selects rows
#: of: those with its column (``flow``, ``signal``; engine/trace's schemas).
FILTERS = {"flows": ("flows", "signals", "events", "delivery"), "signals": ("signals",)}

#: Linux ``tcp_ca_state`` names, in the kernel's order, as the ``ca_state``
#: column holds them (``TCP_CA_Open`` ... ``TCP_CA_Loss``, lower case).
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")

#: What one delivery opportunity of a Mahimahi trace carries: mahimahi's
#: PACKET_SIZE, an MTU-sized packet and its 4-byte tun_pi header, as the
#: engine's trace links count it (``engine/link/trace.go``).
TRACE_BYTES = 1504

_PS = {"ps": 1, "ns": 10**3, "us": 10**6, "µs": 10**6, "ms": 10**9, "s": 10**12}
_MS = re.compile(r"^[0-9]+$")
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ps|ns|us|µs|ms|s)\s*$")


def parse_duration(text: str) -> int:
    """Parse a duration string exactly, as the server does.

    Args:
        text: A number and a unit (``"100ms"``, ``"0.5us"``, ``"20s"``;
            units ps ns us ms s).

    Returns:
        The duration in picoseconds.

    Raises:
        TypeError: The text is not a string (a bare number has no unit).
        ValueError: The text is not a duration or is not a whole number of
            picoseconds.
    """
    if not isinstance(text, str):
        raise TypeError(f"ccscope: {text!r} is not a duration; give it with its unit, as a string such as '10s' or '500ms'")
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"ccscope: {text!r} is not a duration like '100ms' (units ps ns us ms s)")
    try:
        ps = Decimal(m.group(1)) * _PS[m.group(2)]
    except InvalidOperation as e:
        raise ValueError(f"ccscope: {text!r} is not a duration") from e
    if ps != ps.to_integral_value():
        raise ValueError(f"ccscope: {text!r} is not a whole number of picoseconds")
    return int(ps)


def format_duration(ps: int) -> str:
    """Write picoseconds as the exact duration string the server parses.

    Args:
        ps: A non-negative duration in picoseconds.

    Returns:
        The shortest exact form among ``"20s"``, ``"1500ms"``, ... ``"7ps"``.
    """
    for unit in ("s", "ms", "us", "ns"):
        if ps % _PS[unit] == 0:
            return f"{ps // _PS[unit]}{unit}"
    return f"{ps}ps"


def with_seconds(table: pa.Table, *, column: str = "t_ps", name: str = "t_s") -> pa.Table:
    """Add a float64 seconds column computed from a picosecond column.

    Args:
        table: A trace table with an int64 ``t_ps`` column.
        column: The picosecond column to convert.
        name: The new column's name; replaced if it exists.

    Returns:
        The table with ``name`` (seconds) added after ``column``.
    """
    secs = pc.divide(pc.cast(table[column], pa.float64()), 1e12)
    if name in table.column_names:
        table = table.drop_columns([name])
    return table.add_column(table.column_names.index(column) + 1, name, secs)


def flow_names(table: pa.Table, flows: list[str] | None = None) -> pa.Table:
    """Make the ``flow`` column hold flow ids as strings.

    Tables may carry the flow as an index into the session's flow list or as
    a dictionary-encoded string; plotting and filtering want plain strings.

    Args:
        table: A trace table with a ``flow`` column.
        flows: The session's flow ids (needed when the column is an index).

    Returns:
        The table with a string ``flow`` column.
    """
    if "flow" not in table.column_names:
        return table
    col = table["flow"]
    t = col.type
    if pa.types.is_dictionary(t):
        col = pc.cast(col, t.value_type)
    elif pa.types.is_integer(t):
        if flows is None:
            raise ValueError("ccscope: the flow column holds indices; pass the session's flow ids")
        col = pc.take(pa.array(flows, pa.string()), col)
    elif not pa.types.is_string(t) and not pa.types.is_large_string(t):
        return table
    i = table.column_names.index("flow")
    return table.set_column(i, "flow", col)


def check_filters(tables: str | Sequence[str], **filters: Sequence[str] | None) -> None:
    """Refuse a filter that selects nothing of the tables it is given for.

    The server applies ``flows`` and ``signals`` to the tables with their
    column and ignores them elsewhere, so ``signals("queue", flows=["f0"])``
    would quietly be every queue row.

    Args:
        tables: The table (``signals``) or tables (``subscribe``) asked for.
        **filters: ``flows=`` and ``signals=`` as given (None: not given).

    Raises:
        ValueError: Every table named is a trace table, none has the
            filter's column; the message names both, and the tables the
            filter applies to.
    """
    names = [tables] if isinstance(tables, str) else list(tables)
    if not names or any(t not in TABLES for t in names):
        return  # the server names an unknown table
    for f, given in filters.items():
        if given is not None and f in FILTERS and not any(t in FILTERS[f] for t in names):
            which = f"the {names[0]} table has" if len(names) == 1 else f"the tables {', '.join(names)} have"
            raise ValueError(
                f"ccscope: {which} no {f[:-1]} column to filter by {f}=; {f}= applies to {', '.join(FILTERS[f])}"
            )


def missing_signals(table: pa.Table, signals: Sequence[str]) -> list[str]:
    """The signal names asked for that have no row in a ``signals`` table.

    The server does not check signal names (a CC registers its signals when
    its flow starts): a misspelt one selects nothing.

    Args:
        table: A ``signals`` table (``signal`` column).
        signals: The names asked for.

    Returns:
        Those without a row, in the order asked.
    """
    seen = set(table["signal"].unique().to_pylist()) if "signal" in table.column_names else set()
    return [s for s in signals if s not in seen]


def app_latency(
    delivery: pa.Table, flow: str, *, first_write_ps: int, write_interval_ps: int, segment_bytes: int = 1448
) -> pa.Table:
    """One-way application latency of a constant-rate flow's messages.

    A flow with ``app: {"kind": "rate"}`` writes one segment every
    ``write_interval_ps`` (the segment's time at the app rate) from the
    moment its handshake completes; segment ``k`` is written at
    ``first_write_ps + k · write_interval_ps``. The ``delivery`` table says
    when the receiving application had how many bytes in order, so segment
    ``k``'s latency is the first delivery time with at least ``(k + 1) ·
    segment_bytes`` bytes minus its write time: one way, application to
    application, with no ACK clock (and no delayed ACK) in it.

    Args:
        delivery: The session's ``delivery`` table (``t_ps, flow,
            bytes_delivered``).
        flow: The flow.
        first_write_ps: When the application wrote its first segment (the
            handshake's completion).
        write_interval_ps: Time between writes.
        segment_bytes: Bytes per write (the MSS).

    Returns:
        A table ``k, written_ps, delivered_ps, latency_ps`` (int64), one row
        per delivered segment.
    """
    rows = delivery.filter(pc.equal(delivery["flow"], flow))
    t = rows["t_ps"].to_pylist()
    b = rows["bytes_delivered"].to_pylist()
    ks: list[int] = []
    written: list[int] = []
    got: list[int] = []
    k = 0
    for ti, bi in zip(t, b):
        while (k + 1) * segment_bytes <= bi:
            w = first_write_ps + k * write_interval_ps
            ks.append(k)
            written.append(w)
            got.append(ti)
            k += 1
    lat = [g - w for g, w in zip(got, written)]
    return pa.table(
        {
            "k": pa.array(ks, pa.int64()),
            "written_ps": pa.array(written, pa.int64()),
            "delivered_ps": pa.array(got, pa.int64()),
            "latency_ps": pa.array(lat, pa.int64()),
        }
    )


def trace_capacity(
    source: Any,
    *,
    link: str | None = None,
    dir: str | None = None,
    window: str = "100ms",
    until: str | int | None = None,
    loop: bool | None = None,
) -> pa.Table:
    """The capacity of a Mahimahi trace over time, as mm-throughput-graph draws it.

    Each line of a trace is the millisecond of one delivery opportunity of
    :data:`TRACE_BYTES`; the trace starts at time 0 and, looping, starts
    again shifted by its last timestamp, as mm-link and the engine's trace
    links do. The capacity of a window is its opportunities' bytes over the
    window's length, so it sits beside a flow's delivery rate: a backlogged
    link delivers 1500 of each 1504 bytes as IP packets.

    Args:
        source: A trace file's path, or a :class:`~ccscope.Session` or a
            scenario's canonical config (``session.config``) with ``link``:
            the trace of that link direction, as the run embedded it
            (built-in traces included).
        link: The link id, for a session or config; without it, the one
            trace-driven direction the scenario has (among those of ``dir``
            if given).
        dir: The direction, ``"ab"`` or ``"ba"``; ``"ab"`` if ``link`` is
            given and ``dir`` is not.
        window: The window length (``"100ms"``; mm-throughput-graph's
            default is 500 ms).
        until: How long to cover (a duration string or picoseconds); a
            session's or config's default is its run's duration.
        loop: Whether the trace repeats; a session's or config's default
            is the direction's ``loop``, a file's is True.

    Returns:
        A table ``t_ps`` (each window's start), ``capacity_bps`` (int64),
        one row per window; the last may be shorter than ``window``.

    Raises:
        ValueError: The direction is not trace-driven, ``link`` is
            missing where the scenario has no trace-driven direction or
            several, a line is not a millisecond count, the timestamps
            decrease or the last is 0, or ``until`` is missing for a file.
    """
    if hasattr(source, "config") and not isinstance(source, Mapping):
        source = source.config
    if isinstance(source, Mapping):
        if link is None:
            link, dir = _only_trace_direction(source, dir)
        text, cfg_loop, duration = _direction_trace(source, link, dir or "ab")
        loop = cfg_loop if loop is None else loop
        until = duration if until is None else until
    else:
        text = Path(os.fspath(source)).read_text()
        loop = True if loop is None else loop
        if until is None:
            raise ValueError("ccscope.trace_capacity: a trace file needs until= (how long to cover)")
    end = parse_duration(until) if isinstance(until, str) else int(until)
    width = parse_duration(window)
    if width <= 0 or end <= 0:
        raise ValueError("ccscope.trace_capacity: window and until must be positive")
    ms = _trace_ms(text)
    period = ms[-1] * _PS["ms"]
    counts = [0] * ((end + width - 1) // width)
    base = 0
    while base < end:
        for t in ms:
            at = base + t * _PS["ms"]
            if at >= end:
                break
            counts[at // width] += 1
        if not loop:
            break
        base += period
    starts = [i * width for i in range(len(counts))]
    bps = [c * TRACE_BYTES * 8 * _PS["s"] // (min(end, s + width) - s) for c, s in zip(counts, starts)]
    return pa.table({"t_ps": pa.array(starts, pa.int64()), "capacity_bps": pa.array(bps, pa.int64())})


def _only_trace_direction(config: Mapping[str, Any], dir: str | None) -> tuple[str, str]:
    """The link id and direction of the scenario's one trace-driven direction
    (of direction dir, if given)."""
    found = [
        (str(lk.get("id")), d)
        for lk in config.get("links") or []
        for d in ("ab", "ba")
        if (dir is None or d == dir) and (lk.get(d) or {}).get("trace")
    ]
    if len(found) != 1:
        which = ", ".join(f"{lk}/{d}" for lk, d in found) or "none"
        raise ValueError(
            f"ccscope.trace_capacity: give link= (and dir=): the scenario's trace-driven directions are {which}"
        )
    return found[0]


def _direction_trace(config: Mapping[str, Any], link: str, dir: str) -> tuple[str, bool, str]:
    """The trace text, loop flag and run duration of a trace-driven link
    direction in a canonical config."""
    links = {lk.get("id"): lk for lk in config.get("links") or []}
    if link not in links:
        raise ValueError(f"ccscope.trace_capacity: no link {link!r} (links: {', '.join(map(str, links))})")
    tr = (links[link].get(dir) or {}).get("trace")
    if not tr:
        raise ValueError(f"ccscope.trace_capacity: links[{link}].{dir} is not driven by a trace")
    text = (config.get("traces") or {}).get(tr.get("sha256"))
    if text is None:
        raise ValueError(
            f"ccscope.trace_capacity: links[{link}].{dir}'s trace is not embedded; "
            "pass the session's config (session.config)"
        )
    return text, bool(tr.get("loop", True)), config["runtime"]["duration"]


def _trace_ms(text: str) -> list[int]:
    """A Mahimahi trace's opportunity times in ms, checked as the engine checks them."""
    ms: list[int] = []
    for n, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        if not _MS.match(line):
            raise ValueError(f"ccscope.trace_capacity: line {n}: {line[:20]!r} is not a millisecond count")
        t = int(line)
        if ms and t < ms[-1]:
            raise ValueError(f"ccscope.trace_capacity: line {n}: {t} ms is before the line above ({ms[-1]} ms)")
        ms.append(t)
    if not ms or ms[-1] == 0:
        raise ValueError("ccscope.trace_capacity: the trace has no opportunity after 0 ms")
    return ms
