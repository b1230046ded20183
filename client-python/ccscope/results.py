"""Values the server hands back: step positions, summaries, checkpoints."""

from __future__ import annotations

import difflib
import html
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import codec
from .errors import CcscopeError

__all__ = ["Position", "Summary", "Checkpoint", "format_ps"]

PS_PER_S = 10**12


def format_ps(ps: int | None) -> str:
    """Format picoseconds for people (``"1.5 s"``, ``"40 ms"``, ``"—"`` for None).

    Args:
        ps: A duration in picoseconds, or None.

    Returns:
        The duration with a unit chosen so the number is at least 1.
    """
    if ps is None:
        return "—"
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("µs", 10**6), ("ns", 10**3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.4g} {unit}"
    return f"{ps} ps"


@dataclass(frozen=True)
class Position:
    """Where a session stands after a step or run.

    Attributes:
        sim_time_ps: The simulated clock, in picoseconds.
        events: Events dispatched since the start.
        done: Whether the horizon was reached.
        digest: The run digest at this point (``run`` results only).
    """

    sim_time_ps: int
    events: int
    done: bool
    digest: str | None = None

    @property
    def sim_time_s(self) -> float:
        """The simulated clock in seconds."""
        return self.sim_time_ps / PS_PER_S

    @classmethod
    def from_result(cls, r: Mapping[str, Any]) -> Position:
        """Build from a ``step``/``run`` result map."""
        return cls(int(r["sim_time_ps"]), int(r["events"]), bool(r.get("done", False)), r.get("digest"))


class Summary(Mapping):
    """A run's summary: a read-only mapping with the server's fields.

    Keys: ``scenario``, ``seed``, ``config_hash``, ``sim_time_ps``, ``events``,
    ``digest``, ``wall_s``, ``flows`` (a list of per-flow maps: ``id``,
    ``cc``, ``bytes_delivered``, ``goodput_bps``, ``retransmits``,
    ``rtt_p50_ps``, ``rtt_p99_ps``, ...) and ``queues`` (per link direction:
    ``link``, ``dir``, ``drops``, ``sojourn_p99_ps``, ...). In a notebook it
    renders as tables.

    Args:
        data: The ``summary`` result map.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Summary({self._data!r})"

    def flow(self, flow_id: str) -> Mapping[str, Any]:
        """One flow's summary.

        Args:
            flow_id: The flow id (``"f0"``).

        Returns:
            The flow's map.

        Raises:
            KeyError: No such flow.
        """
        for f in self._data.get("flows", []):
            if f.get("id") == flow_id:
                return f
        raise KeyError(flow_id)

    def table(self, part: str = "flows") -> pa.Table:
        """One of the summary's lists (``flows``, ``queues``, ``groups``) as an Arrow table.

        Args:
            part: ``"flows"``, ``"queues"``, or ``"groups"`` (a scenario
                with flow groups; an empty table otherwise).

        Returns:
            One row per flow (queue, group), a column per field any row has,
            in the order they first appear; a row without a field has null
            there (a ping flow has no ``retransmits``, only it has
            ``probes_sent``). A map (``cc_final``) is a struct column with
            its fields sorted.

        Raises:
            ValueError: ``part`` is not one of the summary's lists (the
                message names them).
        """
        parts = [k for k in _PARTS if k in self._data or k == "groups"]
        parts += [k for k, v in self._data.items() if k not in parts and _is_rows(v)]
        if part not in parts:
            near = difflib.get_close_matches(str(part), parts, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(
                f"ccscope: Summary.table: no part {part!r}{hint}; the parts are {', '.join(map(repr, parts))}"
            )
        rows = list(self._data.get(part) or [])
        cols: dict[str, None] = {}
        for r in rows:
            cols.update(dict.fromkeys(r))
        return pa.Table.from_pylist([{c: _sorted_maps(r.get(c)) for c in cols} for r in rows])

    def _repr_html_(self) -> str:
        d = self._data
        head = (
            f"<p><b>{html.escape(str(d.get('scenario', '?')))}</b> · seed {d.get('seed')} · "
            f"sim {format_ps(d.get('sim_time_ps'))} · {d.get('events', 0):,} events · "
            f"digest <code>{html.escape(str(d.get('digest', '')))}</code>"
            + (f" · wall {d['wall_s']:.3g} s" if isinstance(d.get("wall_s"), (int, float)) else "")
            + "</p>"
        )
        return head + "".join(_html_table(d.get(part, []), part) for part in _PARTS)


#: The summary's lists of rows, in the order :meth:`Summary.table` names them.
_PARTS = ("flows", "queues", "groups")

#: The rows of each list a notebook shows: a run of 1,024 flows has 4,098
#: queues, which would make an output cell of megabytes.
_HTML_ROWS = 40


def _is_rows(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(r, Mapping) for r in v)


def _sorted_maps(v: Any) -> Any:
    """v with every map's keys sorted: a struct column's fields do not follow
    the order the server happened to write a map in."""
    if isinstance(v, Mapping):
        return {k: _sorted_maps(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted_maps(x) for x in v]
    return v


def _cell(key: str, v: Any) -> str:
    if v is None:
        return "—"
    if key.endswith("_ps") and isinstance(v, int):
        return format_ps(v)
    if key.endswith("_bps") and isinstance(v, (int, float)):
        return f"{v / 1e6:.4g} Mbps"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={_cell(k, x)}" for k, x in v.items())
    return str(v)


def _html_table(rows: list[Mapping[str, Any]], part: str) -> str:
    """The first _HTML_ROWS rows as an HTML table, and a line saying how many more there are."""
    if not rows:
        return ""
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    out = ["<table><thead><tr>"]
    out += [f"<th>{html.escape(c)}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    for r in rows[:_HTML_ROWS]:
        out.append("<tr>" + "".join(f"<td>{html.escape(_cell(c, r.get(c)))}</td>" for c in cols) + "</tr>")
    out.append("</tbody></table>")
    if len(rows) > _HTML_ROWS:
        out.append(
            f"<p>… and {len(rows) - _HTML_ROWS:,} more {part}: <code>summary.table({part!r})</code> has all {len(rows):,}</p>"
        )
    return "".join(out)


class Checkpoint:
    """A session's position, replayable on any server of the same engine version.

    A checkpoint is small: the canonical config, seed, position, action log
    and digest. :meth:`ccscope.Client.restore` replays it;
    :meth:`ccscope.Client.fork` replays it and applies new actions.

    Args:
        data: The map the ``checkpoint`` op returned.
    """

    FORMAT = "ccscope-checkpoint/1"

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    @property
    def sim_time_ps(self) -> int:
        """The simulated time the checkpoint was taken at."""
        return int(self.data["at"]["sim_time_ps"])

    @property
    def events(self) -> int:
        """Events dispatched when the checkpoint was taken."""
        return int(self.data["at"]["events"])

    @property
    def seed(self) -> int:
        """The run's seed."""
        return int(self.data["seed"])

    @property
    def digest(self) -> str:
        """The run digest at the checkpoint."""
        return str(self.data["digest"])

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The action log up to the checkpoint (each ``{"at", "action"}``)."""
        return list(self.data.get("actions", []))

    def save(self, path: str | os.PathLike) -> None:
        """Write the checkpoint to a file (msgpack, canonical encoding).

        Args:
            path: The file to write.
        """
        with open(path, "wb") as f:
            f.write(codec.encode(self.data))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Checkpoint:
        """Read a checkpoint written by :meth:`save`.

        Args:
            path: The file.

        Returns:
            The checkpoint.

        Raises:
            CcscopeError: The file does not hold a ccscope checkpoint.
        """
        with open(path, "rb") as f:
            data = codec.decode(f.read())
        if not isinstance(data, dict) or data.get("format") != cls.FORMAT:
            raise CcscopeError(f"ccscope: {os.fspath(path)} is not a {cls.FORMAT} file")
        return cls(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Checkpoint) and self.data == other.data

    def __repr__(self) -> str:
        return (
            f"Checkpoint(at={format_ps(self.sim_time_ps)}, events={self.events}, seed={self.seed}, "
            f"digest={self.digest!r}, actions={len(self.actions)})"
        )
