"""Sweep catalogs: one row per run and flow, as ``ccscope sweep`` writes them.

A catalog is a Parquet file (see README, "Sweeps"): the columns ``run`` and
``axis``, every swept parameter, then the summary metrics (``goodput_bps``,
``rtt_p99_ps``, ``bottleneck_drops``, …), ``config_hash``, ``digest`` and
the paths of the run's trace and page when kept. :func:`read_catalog` loads
one as a :class:`Catalog`, a pandas DataFrame with :meth:`Catalog.to_polars`.
Needs the ``pandas`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import pandas as pd
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("ccscope sweep catalogs need pandas: pip install 'ccscope[pandas]'") from e

__all__ = ["Catalog", "read_catalog", "catalog_from_summaries"]

#: The columns after the swept parameters, in the order the Go catalog has them.
METRICS = (
    "seed",
    "scenario",
    "flow",
    "kind",
    "cc",
    "goodput_bps",
    "bytes_sent",
    "bytes_delivered",
    "retransmits",
    "t_10MB_ps",
    "rtt_p50_ps",
    "rtt_p99_ps",
    "bottleneck_drops",
    "bottleneck_marks",
    "bottleneck_wire_losses",
    "bottleneck_max_backlog_bytes",
    "bottleneck_sojourn_p50_ps",
    "bottleneck_sojourn_p99_ps",
    "config_hash",
    "digest",
    "events",
    "sim_time_ps",
    "wall_s",
    "trace",
    "report",
)


class Catalog(pd.DataFrame):
    """A sweep catalog: a pandas DataFrame, one row per run and flow.

    Attributes:
        path: The Parquet file it was read from (None if built in memory).
    """

    _metadata = ["path"]

    @property
    def _constructor(self) -> type:
        return Catalog

    def to_polars(self) -> Any:
        """The catalog as a ``polars.DataFrame`` (needs the ``polars`` extra)."""
        import polars as pl

        return pl.from_pandas(pd.DataFrame(self))

    def runs(self) -> Catalog:
        """One row per run (its first flow's row)."""
        return self.drop_duplicates(["run", "axis"])


def read_catalog(path: str | Path) -> Catalog:
    """Read a catalog Parquet file.

    Args:
        path: The file ``ccscope sweep -o`` wrote.

    Returns:
        The :class:`Catalog`.
    """
    import pyarrow.parquet as pq

    cat = Catalog(pq.read_table(str(path)).to_pandas())
    cat.path = str(path)
    return cat


def catalog_from_summaries(
    points: Sequence[Mapping[str, Any]],
    summaries: Sequence[Mapping[str, Any]],
    axes: Sequence[str] | None = None,
) -> Catalog:
    """Build a catalog in memory from runs' summaries (the Dask path), as
    ``ccscope sweep`` writes its catalog: the rows of a run once per axis it
    is a point of (a point whose run and axis came before adds none), a
    parameter column whose values are all numbers as floats, and in another
    a string as itself and any other value as JSON.

    Args:
        points: Each run's swept parameters (``"seed"`` is not a parameter).
        summaries: Each run's summary, as ``Session.summary()`` returns it.
        axes: Each point's axis (``""`` or None: no axes).

    Returns:
        The :class:`Catalog`, with the columns ``ccscope sweep`` writes (no
        ``trace`` or ``report`` values).
    """
    params: list[str] = []
    for p in points:
        for k in p:
            if k != "seed" and k not in params:
                params.append(k)
    numeric = {
        k for k in params
        if all(isinstance(p[k], (int, float)) and not isinstance(p[k], bool) for p in points if k in p)
    }  # fmt: skip
    axes = axes if axes is not None else [""] * len(points)
    seen: set[tuple[str, str]] = set()
    rows = []
    for p, s, axis in zip(points, summaries, axes):
        if (s["config_hash"], axis or "") in seen:
            continue
        seen.add((s["config_hash"], axis or ""))
        q = next((q for q in s.get("queues", []) if q["link"] == "bottleneck" and q["dir"] == "ab"), None)
        base: dict[str, Any] = {"run": s["config_hash"][:16], "axis": axis or ""}
        base.update({k: _param_value(p[k], k in numeric) for k in params if k in p})
        base.update(seed=s["seed"], scenario=s["scenario"], config_hash=s["config_hash"], digest=s["digest"])
        base.update(events=s["events"], sim_time_ps=s["sim_time_ps"], wall_s=s.get("wall_s"), trace=None, report=None)
        if q is not None:
            base.update(
                bottleneck_drops=q["drops"],
                bottleneck_marks=q["marks"],
                bottleneck_wire_losses=q["wire_losses"],
                bottleneck_max_backlog_bytes=q["max_backlog_bytes"],
                bottleneck_sojourn_p50_ps=q["sojourn_p50_ps"],
                bottleneck_sojourn_p99_ps=q["sojourn_p99_ps"],
            )
        for f in s.get("flows", []):
            r = dict(base)
            r.update(flow=f["id"], kind=f["kind"], cc=f["cc"], goodput_bps=f["goodput_bps"])
            r.update(bytes_sent=f["bytes_sent"], bytes_delivered=f["bytes_delivered"], retransmits=f["retransmits"])
            r.update(t_10MB_ps=f["t_10MB_ps"], rtt_p50_ps=f["rtt_p50_ps"], rtt_p99_ps=f["rtt_p99_ps"])
            rows.append(r)
    cols = ["run", "axis", *params, *METRICS]
    return Catalog(pd.DataFrame(rows, columns=cols))


def _param_value(v: Any, numeric: bool) -> Any:
    """A swept value as the Go catalog holds it (server/sweep, paramColumns)."""
    if numeric:
        return float(v)
    return v if isinstance(v, str) else json.dumps(v)
