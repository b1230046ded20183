"""A simulation session: step it, act on it, read its traces."""

from __future__ import annotations

import html
import json
import numbers
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from . import codec
from .codec import ProgressPush
from .errors import CcscopeError
from .results import PS_PER_S, Checkpoint, Position, Summary, format_ps
from .tables import TABLES, check_filters, format_duration, missing_signals, parse_duration

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import polars

    from .client import Client

__all__ = ["Session"]


class Session:
    """One simulation run on the server, from time 0 to its horizon.

    Sessions come from :meth:`Client.open`, :meth:`Client.restore` and
    :meth:`Client.fork`. A session is a context manager: leaving the block
    closes it on the server. Iterating a session steps it to the end and
    yields the ``flows`` table's record batches (see :meth:`stream`).

    Attributes:
        id: The server's session id (``"s1"``).
        scenario: The scenario's name.
        seed: The run's master seed.
        config: The canonical scenario, as a dict.
        config_hash: SHA-256 of the canonical scenario JSON.
        flows: The flows as the traces name them, in the order they index
            them (a group's ``web/0``, …; a split flow's legs ``f0.0`` and
            ``f0.1`` in place of ``f0``).
        links: The link ids.
        paths: Per flow id, its path as the server built it: ``bottleneck``
            (the slowest data direction, ``"<link>/ab"``), ``bottleneck_bps``,
            ``base_rtt_ps`` (round-trip propagation delay) and ``bdp_bytes``.
        queues: Per link direction (``"<link>/ab"``), its queue limits where
            the session stands: ``limit_bytes`` and ``limit_packets``, each
            present when the qdisc has that limit (a BDP multiple resolved to
            bytes by the engine).
        horizon_ps: The simulated time the run ends at.
        sim_time_ps: The simulated clock now.
        events: Events dispatched so far.
        digest: The run digest, as last reported (restore/fork/run).
        dropped_rows: Per table, the oldest rows the server no longer holds
            (it keeps at most ``client.limits["max_trace_rows"]`` per
            session), as of the last :meth:`signals` call.
    """

    def __init__(self, client: Client, opened: Mapping[str, Any]) -> None:
        self._client = client
        self.id: str = str(opened["session"])
        cfg = opened.get("config", "{}")
        self.config: dict[str, Any] = json.loads(cfg) if isinstance(cfg, str) else dict(cfg)
        self.scenario: str = str(self.config.get("name", ""))
        self.config_hash: str = str(opened.get("config_hash", ""))
        self.seed: int = int(opened.get("seed", 0))
        self.flows: list[str] = list(opened.get("flows", []))
        self.links: list[str] = list(opened.get("links", []))
        self.paths: dict[str, dict[str, Any]] = {
            str(p["flow"]): dict(p) for p in opened.get("paths", []) if isinstance(p, Mapping) and "flow" in p
        }
        self.queues: dict[str, dict[str, int]] = {
            f"{q['link']}/{q['dir']}": {k: int(v) for k, v in q.items() if k.startswith("limit_")}
            for q in opened.get("queues", [])
            if isinstance(q, Mapping) and "link" in q and "dir" in q
        }
        self.horizon_ps: int = int(opened["horizon_ps"])
        self.sim_time_ps: int = int(opened.get("sim_time_ps", 0))
        self.events: int = int(opened.get("events", 0))
        self.digest: str | None = opened.get("digest")
        self.dropped_rows: dict[str, int] = {}
        self._closed = False
        self._batches: dict[str, list[pa.RecordBatch]] = {}

    # -- lifecycle ----------------------------------------------------------

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session on the server (idempotent; quiet if the connection is gone)."""
        if self._closed:
            return
        self._closed = True
        if not self._client.closed:
            try:
                self._client.call("close", {"session": self.id})
            except CcscopeError:
                pass

    @property
    def closed(self) -> bool:
        """Whether the session was closed."""
        return self._closed

    @property
    def done(self) -> bool:
        """Whether the run reached its horizon."""
        return self.sim_time_ps >= self.horizon_ps

    @property
    def sim_time_s(self) -> float:
        """The simulated clock in seconds."""
        return self.sim_time_ps / PS_PER_S

    def __repr__(self) -> str:
        return (
            f"<ccscope.Session {self.id} {self.scenario!r} seed={self.seed} "
            f"t={format_ps(self.sim_time_ps)}/{format_ps(self.horizon_ps)} "
            f"flows={self.flows if len(self.flows) <= 8 else f'[{len(self.flows):,} flows]'}"
            f"{' closed' if self._closed else ''}>"
        )

    def _repr_html_(self) -> str:
        state = "closed" if self._closed else ("done" if self.done else "open")
        frac = min(1.0, self.sim_time_ps / self.horizon_ps) if self.horizon_ps else 1.0
        rows = [
            ("scenario", self.scenario),
            ("session", f"{self.id} ({state})"),
            ("seed", str(self.seed)),
            ("sim time", f"{format_ps(self.sim_time_ps)} of {format_ps(self.horizon_ps)} ({frac:.0%})"),
            ("events", f"{self.events:,}"),
            ("flows", _flows_line(self.config, self.flows)),
            ("links", _few(self.links, "links")),
            ("config hash", self.config_hash[:16]),
        ]
        if self.digest:
            rows.append(("digest", self.digest))
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"

    # -- advancing ----------------------------------------------------------

    def step(self, time: str | None = None, *, events: int | None = None, timeout: float | None = None) -> Position:
        """Advance the simulation by simulated time or by a number of events.

        Stepping is exact: 200 steps of ``"100ms"`` dispatch the same events
        as one step of ``"20s"``.

        Args:
            time: A duration (``"100ms"``): dispatch every event up to the
                clock plus this, capped at the horizon.
            events: Dispatch this many events instead (fewer at the end).
            timeout: Seconds to wait for the server; None waits as long as
                the connection lives.

        Returns:
            The :class:`Position` after the step.

        Raises:
            ValueError: Neither or both of ``time`` and ``events``, or a bad
                duration.
            LimitExceeded: The session hit the server's event or time limit.
            KeyboardInterrupt: Ctrl-C; as for :meth:`run`, the step stops
                on the server and the session is usable where it stopped.
        """
        if (time is None) == (events is None):
            raise ValueError("ccscope: step() takes a duration or events=N, exactly one")
        args: dict[str, Any] = {"session": self.id}
        if time is not None:
            parse_duration(time)  # fail here, with the client's message, on a typo
            args["time"] = time
        else:
            if not isinstance(events, numbers.Integral) or isinstance(events, bool) or events <= 0:
                raise ValueError(f"ccscope: step(events=...) is a positive whole number of events, not {events!r}")
            args["events"] = int(events)
        return self._advance("step", args, timeout)

    def run(self, *, until: str | None = None, progress: bool = True, timeout: float | None = None) -> Position:
        """Run to the horizon (or ``until``), showing a progress bar.

        Args:
            until: Stop at this simulated time from zero (``"5s"``);
                default the horizon.
            progress: Show a tqdm bar in simulated seconds (a widget in
                Jupyter, text in a terminal), fed by the server's progress
                pushes.
            timeout: Seconds to wait; None waits as long as the connection
                lives.

        Returns:
            The :class:`Position` after the run, with the run digest.

        Raises:
            LimitExceeded: The session hit the server's event or time limit.
            KeyboardInterrupt: Ctrl-C: the run stops on the server (the
                ``cancel`` op), the session takes in where it stopped
                (``sim_time_ps``, ``events``, ``digest``) and is usable
                there, as is the client; then the interrupt is raised.
        """
        target = self.horizon_ps if until is None else min(parse_duration(until), self.horizon_ps)
        args = {"session": self.id, "until": until}
        if not progress or target <= self.sim_time_ps:
            return self._advance("run", args, timeout)
        from tqdm.auto import tqdm

        start = self.sim_time_ps
        total_s = (target - start) / PS_PER_S
        bar = tqdm(total=round(total_s, 6), unit="sim s", desc=f"{self.scenario} {self.id}", leave=False)

        def on_progress(p: ProgressPush) -> None:
            bar.n = round(min(total_s, (p.sim_time_ps - start) / PS_PER_S), 6)
            bar.set_postfix(events=f"{p.events:,}", refresh=False)
            bar.refresh()

        try:
            pos = self._advance("run", args, timeout, on_progress=on_progress)
            bar.n = round(total_s, 6)
            bar.refresh()
        finally:
            bar.close()
        return pos

    def _advance(self, op: str, args: dict[str, Any], timeout: float | None, on_progress: Any = None) -> Position:
        # Ctrl-C stops the step or run on the server (the cancel op), which
        # answers with where it stopped: the session takes that in, then
        # the KeyboardInterrupt goes on.
        result, interrupted = self._client.call_cancellable(op, args, timeout=timeout, on_progress=on_progress)
        pos = Position.from_result(result)
        self.sim_time_ps, self.events = pos.sim_time_ps, pos.events
        if pos.digest:
            self.digest = pos.digest
        self._collect()
        if interrupted:
            raise KeyboardInterrupt
        return pos

    # -- acting -------------------------------------------------------------

    def act(
        self,
        *,
        link: str | None = None,
        dir: str | None = None,
        flow: str | None = None,
        rate: str | int | None = None,
        delay: str | None = None,
        loss: float | Mapping[str, Any] | None = None,
        duplicate: float | None = None,
        jitter: Mapping[str, Any] | None = None,
        capacity: Mapping[str, Any] | None = None,
        outage: str | None = None,
        queue_limit: str | int | None = None,
        cwnd: int | None = None,
        pacing_rate: str | int | None = None,
    ) -> dict[str, Any]:
        """Change a link direction or a flow now; the action is logged.

        Args:
            link: The link to change (with ``dir``).
            dir: ``"ab"`` or ``"ba"``; default ``"ab"`` when ``link`` is given.
            flow: The flow to change (instead of a link).
            rate: New link rate (``"50Mbps"`` or bits per second).
            delay: New propagation delay (``"30ms"``).
            loss: New Bernoulli loss probability in [0, 1], or a loss model
                as a scenario writes it (``{"kind": "gilbert_elliott",
                "p_gb": 0.01, "p_bg": 0.3}``).
            duplicate: New fraction of packets the direction sends twice, in
                [0, 1] (netem's duplicate; 0 for none).
            jitter: A jitter model (``{"kind": "pareto", "scale": "1ms",
                "shape": 1.5}``); it replaces the direction's.
            capacity: A capacity process (``{"states": [...],
                "transitions": [...]}``); it replaces the rate.
            outage: Take the direction down from now for this long
                (``"150ms"``).
            queue_limit: New egress queue limit: packets (int or ``"100p"``),
                bytes (``"150KB"``), or ``"unlimited"`` (a fifo's only).
            cwnd: Set the flow's congestion window (packets).
            pacing_rate: Set the flow's pacing rate (``"10Mbps"`` or bits
                per second); it holds until an action with 0 hands pacing
                back to the CC and the sender.

        Returns:
            ``{"index": i, "at": {"events", "sim_time_ps", "drained"}}``: the
            action's place in the log.

        Raises:
            ValueError: Neither a link nor a flow, or no value to set.
            BadArguments: The server refused a value (``path`` names it).
            NotFound: No such link or flow.
        """
        action = make_action(
            link=link, dir=dir, flow=flow, rate=rate, delay=delay, loss=loss,
            duplicate=duplicate, jitter=jitter, capacity=capacity, outage=outage,
            queue_limit=queue_limit, cwnd=cwnd, pacing_rate=pacing_rate,
        )  # fmt: skip
        return self._client.call("act", {"session": self.id, "action": action})

    def checkpoint(self) -> Checkpoint:
        """Capture where the session is (config, seed, position, actions, digest).

        Returns:
            A :class:`Checkpoint`; save it, restore it, fork it.
        """
        cp = Checkpoint(self._client.call("checkpoint", {"session": self.id})["checkpoint"])
        self.digest = cp.digest
        return cp

    def fork(self, actions: Iterable[Mapping[str, Any]]) -> Session:
        """Branch a new session from where this one is, then apply actions.

        Args:
            actions: One or more action maps with the keywords of :meth:`act`
                (``[{"link": "bottleneck", "dir": "ab", "queue_limit": 50}]``),
                sent as given but for act's defaults (``dir`` ``"ab"`` for a
                link). To branch without actions, restore a :meth:`checkpoint`.

        Returns:
            The new session; this one is unchanged.

        Raises:
            BadArguments: An action is invalid (``path`` names it).
            ValueError: No actions.
            TypeError: ``actions`` is not a list of maps.
        """
        acts = fork_actions(actions)
        return type(self)(self._client, self._client.call("fork", {"session": self.id, "actions": acts}))

    def summary(self) -> Summary:
        """The run's summary so far (per flow: goodput, retransmits, RTT p50/p99; per queue: drops, sojourn).

        Returns:
            A :class:`Summary`.
        """
        return Summary(self._client.call("summary", {"session": self.id}))

    def report(
        self, path: str | os.PathLike[str], *, flows: Sequence[str] | None = None, buckets: int | None = None
    ) -> Path:
        """Write the run so far as one self-contained HTML page, the page of ``ccscope run --report``.

        Per flow, panels of rates, inflight against the BDP, events, CA state
        and RTT on one zoomable time axis up to the session's clock; a panel
        per bottleneck queue; the summary so far and the scenario. The page
        embeds its data and charts and fetches nothing. It draws the trace
        rows the session keeps, so open the scenario with
        ``set={"trace.detail": "change"}`` (or ``"sampled"``) for lines to
        draw. Open the file in a browser, or in Jupyter with
        ``IPython.display.IFrame(str(path), width="100%", height=800)``.

        Args:
            path: The file to write; its name must end in ``.html``.
            flows: The flows whose panels the page draws, as
                :meth:`signals` takes them (a split flow's id draws both
                legs, ``"f0.0"`` or ``"f0.1"`` one); default the first 32, and a note on the page says how many it left
                out. The summary tables list every flow.
            buckets: The time buckets every chart shares, 1 to 100000
                (default 4000; fewer beyond four flows).

        Returns:
            The path written, as a :class:`pathlib.Path`.

        Raises:
            ValueError: ``path`` does not end in ``.html``.
            InvalidRequest: The session has not been stepped or run yet.
            NotFound: A flow of ``flows`` is not in the session's trace.
            UnknownOp: The server predates protocol 1.3.
        """
        out = Path(path)
        if out.suffix != ".html":
            raise ValueError(f"Session.report: {os.fspath(path)!r}: the file name must end in .html")
        args: dict[str, Any] = {"session": self.id, "flows": _list(flows)}
        if buckets is not None:
            args["buckets"] = buckets
        res = self._client.call("report", args)
        out.write_bytes(res["html"])
        return out

    # -- traces -------------------------------------------------------------

    def signals(
        self,
        table: str = "flows",
        *,
        flows: Sequence[str] | None = None,
        signals: Sequence[str] | None = None,
    ) -> pa.Table:
        """Everything one trace table recorded so far.

        Tables (time is int64 picoseconds ``t_ps``; add seconds with
        :func:`ccscope.with_seconds`):

        - ``flows``: per-flow sender state (``cwnd_pkts``, ``ssthresh_pkts``,
          ``inflight_bytes``, ``inflight_pkts``, ``srtt_ps``, ``rttvar_ps``,
          ``min_rtt_ps``, ``pacing_rate_bps``, ``delivery_rate_bps``,
          ``delivered_pkts``, ``lost_pkts``, ``retrans_pkts``, ``ca_state``);
        - ``signals``: CC-registered signals, long format (``signal``,
          ``value``);
        - ``events``: ACK, SACK, TLP, RTO, retransmit, drop, ECN mark, ...
          (``kind``, ``seq``, ``len``);
        - ``queue``: per link direction (``backlog_bytes``, ``backlog_pkts``,
          ``sojourn_ps``, ``drops``, ``marks``);
        - ``delivery``: cumulative ``bytes_delivered`` per flow.

        Rows exist only if the scenario records them (``trace.detail``
        ``"sampled"`` or ``"change"``; set it with
        ``open(..., set={"trace.detail": "change"})``).

        Args:
            table: One of the tables above.
            flows: Keep only these flow ids.
            signals: Keep only these signal names (``signals`` table).

        The server keeps a bounded number of rows per session; if it dropped
        the oldest, :attr:`dropped_rows` says how many and the table's schema
        metadata carries ``ccscope.dropped_rows``. :meth:`stream` and
        :meth:`subscribe` see every row.

        Returns:
            A ``pyarrow.Table``.

        Raises:
            NotFound: No such table, flow or signal.
        """
        check_filters(table, flows=flows, signals=signals)
        args = {"session": self.id, "table": table, "flows": _list(flows), "signals": _list(signals)}
        res = self._client.call("signals", args)
        out = codec.read_arrow(res["arrow"])
        if table == "signals" and signals:
            self._warn_missing_signals(out, list(signals), flows)
        dropped = int(res.get("dropped_rows") or 0)
        self.dropped_rows[table] = dropped
        if dropped:
            meta = dict(out.schema.metadata or {})
            meta[b"ccscope.dropped_rows"] = str(dropped).encode()
            out = out.replace_schema_metadata(meta)
        return out

    def _warn_missing_signals(self, got: pa.Table, signals: list[str], flows: Sequence[str] | None) -> None:
        """Warn of asked-for signals with no row, naming those recorded so far.

        The server does not check signal names (a CC registers its signals
        when its flow starts), so a misspelt one silently selects nothing.
        """
        missing = missing_signals(got, signals)
        if not missing:
            return
        every = self._client.call("signals", {"session": self.id, "table": "signals", "flows": _list(flows)})
        known = sorted(set(codec.read_arrow(every["arrow"])["signal"].to_pylist()))
        of = f" of flows {', '.join(_list(flows) or [])}" if flows else ""
        warnings.warn(
            f"ccscope: signals(signals=...): no rows of {', '.join(map(repr, missing))}; the signals recorded "
            f"so far{of} are {', '.join(known) if known else 'none'} (a CC registers its own when its flow starts)",
            UserWarning,
            stacklevel=3,
        )

    def to_arrow(self, table: str = "flows", **filters: Any) -> pa.Table:
        """Same as :meth:`signals`."""
        return self.signals(table, **filters)

    def to_pandas(self, table: str = "flows", **filters: Any) -> pandas.DataFrame:
        """:meth:`signals` as a pandas DataFrame (needs the ``pandas`` extra)."""
        return self.signals(table, **filters).to_pandas()

    def to_polars(self, table: str = "flows", **filters: Any) -> polars.DataFrame:
        """:meth:`signals` as a polars DataFrame (needs the ``polars`` extra)."""
        import polars as pl

        return pl.from_arrow(self.signals(table, **filters))  # type: ignore[return-value]

    def subscribe(
        self,
        tables: Sequence[str],
        *,
        flows: Sequence[str] | None = None,
        signals: Sequence[str] | None = None,
        every_ms: int | None = None,
    ) -> list[str]:
        """Have rows of these tables pushed while the session steps.

        Pushed rows are kept until :meth:`received` takes them.

        Args:
            tables: Table names.
            flows: Only these flows.
            signals: Only these signals.
            every_ms: Push at most this often during a step or run (server
                default 100; 0 pushes once at the end of each step).

        Returns:
            The tables subscribed now.
        """
        check_filters(list(tables), flows=flows, signals=signals)
        args = {
            "session": self.id, "tables": list(tables), "flows": _list(flows),
            "signals": _list(signals), "every_ms": every_ms,
        }  # fmt: skip
        return list(self._client.call("subscribe", args)["tables"])

    def unsubscribe(self, tables: Sequence[str] | None = None) -> list[str]:
        """Stop pushing these tables (default all).

        Returns:
            The tables still subscribed.
        """
        res = self._client.call("unsubscribe", {"session": self.id, "tables": _list(tables)})
        self._collect()
        return list(res["tables"])

    def received(self, table: str) -> pa.Table | None:
        """Take the pushed rows of a subscribed table received so far.

        Args:
            table: The table name.

        Returns:
            The rows as one table, or None if none arrived.
        """
        self._collect()
        batches = self._batches.pop(table, [])
        return pa.Table.from_batches(batches) if batches else None

    def stream(
        self,
        table: str = "flows",
        *,
        step: str = "100ms",
        until: str | None = None,
        flows: Sequence[str] | None = None,
        signals: Sequence[str] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Step the session and yield a table's new rows as they are made.

        Subscribes to ``table``, steps by ``step`` until ``until`` (default
        the horizon), yields each pushed record batch, and unsubscribes at the
        end (also when the loop is left early).

        Args:
            table: The table to stream.
            step: Simulated time per step.
            until: Stop at this simulated time from zero.
            flows: Only these flows.
            signals: Only these signals.

        Raises:
            ValueError: No such table, or ``step`` is not a positive duration
                (a step of zero would never reach ``until``).

        Yields:
            ``pyarrow.RecordBatch`` es of ``table``, batch after batch in time
            order. Within the queue table, rows are in time order per link
            direction (a busy FIFO direction's rows come when it is caught
            up); sort by ``t_ps`` for one order across directions.
        """
        if table not in TABLES:
            raise ValueError(f"ccscope: no table {table!r}; tables are {', '.join(TABLES)}")
        step_ps = positive_duration(step, name="ccscope: stream(step=...)")
        end = self.horizon_ps if until is None else min(_duration(until, "ccscope: stream(until=...)"), self.horizon_ps)
        self.subscribe([table], flows=flows, signals=signals)
        try:
            while self.sim_time_ps < end:
                self.step(format_duration(min(step_ps, end - self.sim_time_ps)))
                self._collect()
                yield from self._batches.pop(table, [])
        finally:
            if not self._closed and not self._client.closed:
                self.unsubscribe([table])
        yield from self._batches.pop(table, [])

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self.stream()

    def _collect(self) -> None:
        for push in self._client.take_pushes(self.id):
            self._batches.setdefault(push.stream, []).extend(codec.read_arrow(push.arrow).to_batches())


def make_action(
    *,
    link: str | None = None,
    dir: str | None = None,
    flow: str | None = None,
    rate: str | int | None = None,
    delay: str | None = None,
    loss: float | Mapping[str, Any] | None = None,
    duplicate: float | None = None,
    jitter: Mapping[str, Any] | None = None,
    capacity: Mapping[str, Any] | None = None,
    outage: str | None = None,
    queue_limit: str | int | None = None,
    cwnd: int | None = None,
    pacing_rate: str | int | None = None,
) -> dict[str, Any]:
    """Build an action map for ``act``/``fork`` (see :meth:`Session.act`).

    Raises:
        ValueError: No target, both targets, or no value.
    """
    if (link is None) == (flow is None):
        raise ValueError("ccscope: an action targets a link (with dir) or a flow, exactly one")
    values = {
        "rate": rate, "delay": delay, "loss": loss, "duplicate": duplicate, "jitter": jitter, "capacity": capacity,
        "outage": outage, "queue_limit": queue_limit, "cwnd": cwnd, "pacing_rate": pacing_rate,
    }  # fmt: skip
    values = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in values.items() if v is not None}
    if not values:
        raise ValueError(
            "ccscope: an action needs a value: rate, delay, loss, duplicate, jitter, capacity, outage, queue_limit, cwnd or pacing_rate"
        )
    # A flow's dir is sent as given, for the server to refuse by name.
    target: dict[str, Any] = {"flow": flow} if flow is not None else {"link": link, "dir": dir or "ab"}
    if flow is not None and dir is not None:
        target["dir"] = dir
    return {**target, **values}


def fork_actions(actions: Any) -> list[dict[str, Any]]:
    """fork's actions as the server takes them (proto/README.md, "fork": a
    non-empty list of action maps), each as given but for act's defaults."""
    if isinstance(actions, (Mapping, str, bytes)) or not isinstance(actions, Iterable):
        raise TypeError(
            f"ccscope: fork(actions=...) is a list of action maps, not a {type(actions).__name__}; "
            "put one action in a list"
        )
    out = []
    for i, a in enumerate(actions):
        if not isinstance(a, Mapping):
            raise TypeError(f"ccscope: fork actions[{i}] is a {type(a).__name__}, not an action map")
        a = {k: v for k, v in a.items() if v is not None}
        if "link" in a:
            a.setdefault("dir", "ab")
        out.append(a)
    if not out:
        raise ValueError(
            "ccscope: fork needs actions, a non-empty list of action maps (restore(checkpoint) branches without any)"
        )
    return out


def _duration(value: Any, name: str) -> int:
    """``value`` parsed as a duration, in picoseconds; a ValueError naming ``name`` if it is not one."""
    if not isinstance(value, str):
        raise ValueError(f"{name} is {value!r}, not a duration like '100ms' (a string; units ps ns us ms s)")
    try:
        return parse_duration(value)
    except ValueError as e:
        raise ValueError(f"{name}: {str(e).removeprefix('ccscope: ')}") from e


def positive_duration(value: Any, *, name: str) -> int:
    """A step length: a duration above zero, in picoseconds.

    Args:
        value: The duration text (``"10ms"``).
        name: The argument as the error names it (``"ccscope: stream(step=...)"``).

    Returns:
        The duration in picoseconds.

    Raises:
        ValueError: Not a duration, or zero (a loop stepping by it would
            never advance the clock).
    """
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ValueError(f"{name} is {value!r}: it must be above zero")
    ps = _duration(value, name)
    if ps <= 0:
        raise ValueError(f"{name} is {value!r}: it must be above zero (a step of zero never advances the clock)")
    return ps


_SIZE_UNITS = {"B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+)\s*$")


def size_bytes(text: Any) -> int | None:
    """A size as the engine parses it (``"300KB"``, ``"4MiB"``, ``"1500B"``;
    ``engine/units.ParseSize``), in whole bytes; None if ``text`` is not one.
    """
    m = _SIZE.match(text) if isinstance(text, str) else None
    if m is None or m.group(2) not in _SIZE_UNITS:
        return None
    n = Decimal(m.group(1)) * _SIZE_UNITS[m.group(2)]
    return int(n) if n == n.to_integral_value() else None


def _list(v: Sequence[str] | None) -> list[str] | None:
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    return list(v)


def _flow_cc(config: Mapping[str, Any], name: str) -> str:
    """The CC of a flow as the traces name it: a scenario flow ("f0"), a
    group's flow ("web/3": its group's), or a leg of a flow a proxy splits
    ("f0.1": its ``legs`` entry's, else the flow's)."""
    base, _, leg = name.partition(".")
    group, slash, _ = base.partition("/")
    for f in config.get("flows", []):
        if f.get("id") == base or (slash and f.get("group") == group):
            legs = f.get("legs")
            if leg in ("0", "1") and isinstance(legs, list) and len(legs) == 2 and isinstance(legs[int(leg)], Mapping):
                return str(legs[int(leg)].get("cc", f.get("cc", "?")))
            return str(f.get("cc", "?"))
    return "?"


def _flows_line(config: Mapping[str, Any], flows: Sequence[str]) -> str:
    """The flows with their CCs, as :func:`_few` lists them (a group has thousands)."""
    return _few([f"{f} ({_flow_cc(config, f)})" for f in flows], "flows")


def _few(names: Sequence[str], what: str, most: int = 8) -> str:
    """names; beyond ``most``, the first few, the last and how many."""
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[: most - 2]) + f", …, {names[-1]} ({len(names):,} {what})"
