"""Plots of a session's traces (needs the ``plot`` extra: matplotlib).

- :func:`flow`: the per-flow view, four panels on one time axis: rates;
  inflight and cwnd against the BDP with event ticks underneath; the CA
  state / CC phase timeline; RTT and the CC's estimator signals.
- :func:`queue`: a link direction's backlog and sojourn time, with drops.
- :func:`compare`: one column of several runs on one axis (e.g. a run and
  its fork).
- :func:`catalog`, :func:`plane`: a sweep catalog's metric against a swept
  parameter; its runs on the throughput–delay plane.

Every function takes a :class:`~ccscope.Session` (tables are fetched) or
``pyarrow`` tables, and returns the matplotlib ``Figure``. Long every-change
traces are thinned for drawing with a min/max envelope per pixel column, so
spikes survive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .tables import flow_names

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .session import Session

__all__ = ["flow", "queue", "compare", "path_bdp", "catalog", "plane"]

_CA_COLOURS = {"open": "#8fd18f", "disorder": "#f2d16b", "cwr": "#7fb2e5", "recovery": "#f29e4c", "loss": "#e05a5a"}
_EVENT_KINDS = ("ack", "sack", "dsack", "tlp", "rto", "retransmit", "loss", "drop", "ecn_mark")
_EVENT_COLOURS = {
    "ack": "#9e9e9e", "sack": "#5c6bc0", "dsack": "#3949ab", "tlp": "#8e24aa", "rto": "#d32f2f",
    "retransmit": "#f57c00", "loss": "#6d4c41", "drop": "#000000", "ecn_mark": "#00897b",
}  # fmt: skip
_PHASE_WORDS = ("mode", "phase", "state")
_WINDOW_WORDS = ("cwnd", "target", "w_max", "inflight")  # CC signals counted in packets
_ESTIMATOR_WORDS = ("rtt", "delay", "bw", "gain")  # rate, RTT and gain estimators
# The CCs' delay signals and each one's divisor to milliseconds (README's table of signal units:
# µs, Westwood's rtt_min in jiffies = ms). They are drawn in ms beside srtt, as the HTML report does.
_DELAY_SIGNALS_MS = {
    "delay_min": 1e3, "hystart_curr_rtt": 1e3, "min_rtt": 1e3, "rtprop": 1e3, "rtt_hat": 1e3,
    "base_rtt": 1e3, "rtt_min_round": 1e3, "rtt_min": 1.0, "max_rtt": 1e3, "rtt": 1e3,
    "avg_delay": 1e3, "max_delay": 1e3,
}  # fmt: skip
_NO_SAMPLE_US = 2**32 - 1  # the kernel's "no RTT sample" (~0U), as a kernel trace records it
_MAX_POINTS = 4000  # per line, after thinning
_MAX_TICKS = 4000  # per event kind


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("ccscope.plot needs matplotlib: pip install 'ccscope[plot]'") from e
    return plt


# -- data helpers -------------------------------------------------------------


def _secs(t: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(t.to_numpy(), dtype=np.int64) / 1e12


def _col(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table[name].to_numpy(), dtype=np.float64)


def _only(table: pa.Table | None, flow_id: str | None, flows: list[str] | None = None) -> pa.Table | None:
    if table is None or table.num_rows == 0:
        return table
    table = flow_names(table, flows)
    if flow_id is not None and "flow" in table.column_names:
        table = table.filter(pc.equal(table["flow"], flow_id))
    return table


def _thin(t: np.ndarray, y: np.ndarray, n: int = _MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Keep each time bin's first, min and max point, so the drawn envelope matches."""
    if len(t) <= n:
        return t, y
    starts = np.unique(np.searchsorted(t, np.linspace(t[0], t[-1], n // 3, endpoint=False)))
    ends = np.r_[starts[1:], len(t)]
    keep = [len(t) - 1]
    for s, e in zip(starts.tolist(), ends.tolist()):
        seg = y[s:e]
        keep += [s, s + int(np.argmin(seg)), s + int(np.argmax(seg))]
    k = np.unique(np.asarray(keep))
    return t[k], y[k]


def _rate_from_counter(t: np.ndarray, total_bytes: np.ndarray, width_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Rate in Mbps of a cumulative byte counter, over windows of width_s."""
    if len(t) < 2:
        return np.array([]), np.array([])
    edges = np.arange(t[0], t[-1] + width_s, width_s)
    at = np.interp(edges, t, total_bytes)
    return edges[1:], np.diff(at) * 8 / width_s / 1e6


def _rate_from_events(t: np.ndarray, length: np.ndarray, width_s: float, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Rate in Mbps of events carrying `length` bytes, over windows of width_s."""
    if len(t) == 0:
        return np.array([]), np.array([])
    edges = np.arange(0.0, t_end + width_s, width_s)
    sums, _ = np.histogram(t, bins=edges, weights=length)
    return edges[1:], sums * 8 / width_s / 1e6


def _segments(t: np.ndarray, values: Sequence[Any], t_end: float) -> list[tuple[Any, float, float]]:
    """(value, start, width) runs of a step signal."""
    out: list[tuple[Any, float, float]] = []
    if len(t) == 0:
        return out
    start, cur = t[0], values[0]
    for ti, v in zip(t[1:], values[1:]):
        if v != cur:
            out.append((cur, start, ti - start))
            start, cur = ti, v
    out.append((cur, start, max(t_end - start, 0.0)))
    return out


def path_bdp(source: Any, flow_id: str) -> tuple[float, float] | None:
    """The bottleneck rate and base RTT of a flow's path, as the server reports them.

    The server measures each flow's path when it builds the run (before any
    scheduled change or action): the lowest rate on the data direction and
    the round-trip propagation delay, data path plus the reverse path of the
    ACKs. Nothing is re-derived from the scenario here.

    Args:
        source: A :class:`~ccscope.Session` (its ``paths``, from ``open``) or
            a summary mapping (``Session.summary()`` or ``ccscope run
            --json``), whose flows carry ``path_bottleneck_bps`` and
            ``path_base_rtt_ps``.
        flow_id: The flow.

    Returns:
        ``(rate_bps, rtt_s)``, or None when the source does not describe the
        flow's path (a server older than the ``paths`` field).
    """
    paths = getattr(source, "paths", None)
    if isinstance(paths, Mapping):
        p = paths.get(flow_id)
        if p is None or not p.get("bottleneck_bps"):
            return None
        return float(p["bottleneck_bps"]), int(p["base_rtt_ps"]) / 1e12
    if isinstance(source, Mapping):
        for f in source.get("flows", []):
            if isinstance(f, Mapping) and f.get("id") == flow_id and f.get("path_bottleneck_bps"):
                return float(f["path_bottleneck_bps"]), int(f["path_base_rtt_ps"]) / 1e12
    return None


def _fetch(session: Session, table: str, flow_id: str | None) -> pa.Table | None:
    from .errors import NotFound

    try:
        return session.signals(table, flows=[flow_id] if flow_id else None)
    except NotFound:
        return None


# -- the per-flow view --------------------------------------------------------


def flow(
    source: Session | pa.Table,
    flow: str = "f0",
    *,
    signals: pa.Table | None = None,
    events: pa.Table | None = None,
    delivery: pa.Table | None = None,
    estimators: Sequence[str] | None = None,
    window_signals: Sequence[str] | None = None,
    bdp_pkts: float | None = None,
    packet_bytes: int = 1500,
    rate_window_s: float | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (11, 10),
) -> Figure:
    """The four-panel view of one flow on a shared time axis (seconds).

    1. Rates (Mbps): send rate (payload, from ``send`` events at
       ``change`` detail; else wire packets of ``packet_bytes`` from the
       delivered + lost + inflight counts, some 4 % more), delivery rate (the rate
       sampler's), goodput (from the delivery counter), pacing rate.
    2. Inflight, cwnd and ssthresh (packets) against the path's BDP, with
       the CC's window-like signals, and ACK, SACK, TLP, RTO, retransmit,
       loss and drop events as ticks underneath.
    3. The CA state timeline (open/disorder/cwr/recovery/loss), and the CC's
       phase (a signal named like ``mode``/``phase``/``state``) if any.
    4. RTT: srtt and min_rtt (ms) with the CC's delay estimators in ms
       (CUBIC's ``delay_min`` and ``hystart_curr_rtt``, BBR's ``min_rtt``, …),
       and the CC's other estimator signals on a second axis.

    Args:
        source: A session (its ``flows``, ``signals``, ``events`` and
            ``delivery`` tables are fetched) or a ``flows`` table.
        flow: The flow id.
        signals: The ``signals`` table, when ``source`` is a table.
        events: The ``events`` table, when ``source`` is a table.
        delivery: The ``delivery`` table, when ``source`` is a table.
        estimators: CC signals to draw in panel 4: the delay estimators
            in ms on the RTT axis, the others on a second axis, each
            relative to its maximum (default: every delay estimator, and
            up to four others named like rtt/delay/bw/gain).
        window_signals: CC signals counted in packets to draw in panel 2
            (default: those named like cwnd/target/w_max/inflight, e.g.
            CUBIC's ``last_max_cwnd`` and ``bic_target``).
        bdp_pkts: The BDP line in packets (default: from the session's
            scenario, bottleneck rate × base RTT / ``packet_bytes``).
        packet_bytes: Wire bytes per packet for the BDP in packets.
        rate_window_s: Averaging window of the send rate and goodput
            (default: about 1/200 of the run, at least 10 ms).
        title: Figure title (default: scenario, seed and flow).
        figsize: Figure size in inches.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: The flow has no rows (is ``trace.detail`` at least
            ``"sampled"``?).
    """
    plt = _plt()
    session = None if isinstance(source, pa.Table) else source
    flows_list = session.flows if session is not None else None
    if session is not None:
        ft = _fetch(session, "flows", flow)
        signals = _fetch(session, "signals", flow)
        events = _fetch(session, "events", flow)
        delivery = _fetch(session, "delivery", flow)
        if bdp_pkts is None:
            pb = path_bdp(session, flow)
            if pb is not None:
                bdp_pkts = pb[0] * pb[1] / 8 / packet_bytes
        if title is None:
            title = f"{session.scenario} · seed {session.seed} · flow {flow}"
    else:
        ft = source
    whole = ft
    ft = _only(ft, flow, flows_list)
    if ft is None or ft.num_rows == 0:
        names = flows_list
        if names is None and whole is not None and whole.num_rows and "flow" in whole.column_names:
            names = flow_names(whole, None)["flow"].unique().to_pylist()
        legs = [n for n in names or [] if isinstance(n, str) and n.startswith(f"{flow}.")]
        if legs:
            raise ValueError(f"ccscope.plot: flow {flow!r} is split by a proxy into legs with their own TCP state; "
                             f"plot one: {' or '.join(map(repr, legs))}")
        raise ValueError(f"ccscope.plot: flow {flow!r} has no rows in the flows table (trace.detail off, or a pump or "
                         "ping flow, which has no TCP state?)")
    signals, events, delivery = (_only(x, flow, flows_list) for x in (signals, events, delivery))

    t = _secs(ft["t_ps"])
    t_end = float(t[-1]) if len(t) else 0.0
    if session is not None:
        t_end = max(t_end, session.sim_time_ps / 1e12)
    width = rate_window_s or max(0.01, t_end / 200)

    fig = plt.figure(figsize=figsize, layout="constrained")
    gs = fig.add_gridspec(5, 1, height_ratios=[3, 3, 1.1, 0.9, 3])
    ax_rate = fig.add_subplot(gs[0])
    ax_win = fig.add_subplot(gs[1], sharex=ax_rate)
    ax_ev = fig.add_subplot(gs[2], sharex=ax_rate)
    ax_ca = fig.add_subplot(gs[3], sharex=ax_rate)
    ax_rtt = fig.add_subplot(gs[4], sharex=ax_rate)

    # (1) rates
    sends = events.filter(pc.equal(events["kind"], "send")) if events is not None and events.num_rows else None
    if sends is not None and sends.num_rows:
        x, y = _rate_from_events(_secs(sends["t_ps"]), _col(sends, "len"), width, t_end)
        ax_rate.step(x, y, where="pre", label=f"send rate (payload, {width * 1e3:.0f} ms avg)", color="#1f77b4")
    else:
        # Without send events: every packet sent is delivered, in flight or
        # lost, so delivered + lost + inflight counts transmissions.
        sent = _col(ft, "delivered_pkts") + _col(ft, "lost_pkts") + _col(ft, "inflight_pkts")
        x, y = _rate_from_counter(t, sent * packet_bytes, width)
        ax_rate.step(x, y, where="pre", label=f"send rate ({width * 1e3:.0f} ms avg, {packet_bytes} B wire pkts)",
                     color="#1f77b4", lw=1)  # fmt: skip
    ax_rate.plot(*_thin(t, _col(ft, "delivery_rate_bps") / 1e6), label="delivery rate (sampler)", color="#2ca02c", lw=1)
    if delivery is not None and delivery.num_rows:
        x, y = _rate_from_counter(_secs(delivery["t_ps"]), _col(delivery, "bytes_delivered"), width)
        ax_rate.step(x, y, where="pre", label=f"goodput ({width * 1e3:.0f} ms avg)", color="#d62728")
    pacing = _col(ft, "pacing_rate_bps") / 1e6
    if np.any(pacing > 0):
        ax_rate.plot(*_thin(t, pacing), label="pacing rate", color="#9467bd", lw=0.8, ls="--")
    ax_rate.set_ylabel("rate (Mbps)")
    ax_rate.legend(loc="upper right", fontsize="small", ncol=2)

    # (2) windows against the BDP
    ax_win.plot(*_thin(t, _col(ft, "cwnd_pkts")), label="cwnd", color="#1f77b4", drawstyle="steps-post", lw=1)
    ax_win.plot(*_thin(t, _col(ft, "inflight_pkts")), label="inflight", color="#ff7f0e", drawstyle="steps-post", lw=0.8)
    ss = _col(ft, "ssthresh_pkts")
    ss_ok = ss < 1e6  # the kernel's "infinite" ssthresh is not drawn
    if np.any(ss_ok):
        ax_win.plot(*_thin(t[ss_ok], ss[ss_ok]), label="ssthresh", color="#7f7f7f", ls=":", lw=1)
    for i, name in enumerate(_pick(signals, window_signals, _WINDOW_WORDS, exclude=None)):
        assert signals is not None  # _pick found names in it
        sg = signals.filter(pc.equal(signals["signal"], name))
        ax_win.plot(*_thin(_secs(sg["t_ps"]), _col(sg, "value")), label=f"{name} (CC)", lw=0.8, ls="-.",
                    color=f"C{i + 4}", drawstyle="steps-post")  # fmt: skip
    if bdp_pkts:
        ax_win.axhline(bdp_pkts, color="#2ca02c", ls="--", lw=1, label=f"BDP ({bdp_pkts:.0f} pkts)")
    ax_win.set_ylabel("packets")
    ax_win.legend(loc="upper right", fontsize="small", ncol=2)

    # event ticks under panel 2
    kinds_drawn: list[str] = []
    if events is not None and events.num_rows:
        for kind in _EVENT_KINDS:
            ev = events.filter(pc.equal(events["kind"], kind))
            if not ev.num_rows:
                continue
            ts = _secs(ev["t_ps"])
            label = kind
            if len(ts) > _MAX_TICKS:
                step = int(np.ceil(len(ts) / _MAX_TICKS))
                ts, label = ts[::step], f"{kind} (1 in {step})"
            ax_ev.eventplot(ts, lineoffsets=len(kinds_drawn), linelengths=0.8, colors=_EVENT_COLOURS[kind], lw=0.6)
            kinds_drawn.append(label)
    if not kinds_drawn:
        ax_ev.text(0.5, 0.5, 'no events recorded (they need trace.detail = "change")', transform=ax_ev.transAxes,
                   ha="center", va="center", fontsize="small", color="#777777")  # fmt: skip
    ax_ev.set_yticks(range(len(kinds_drawn)), kinds_drawn, fontsize="x-small")
    ax_ev.set_ylim(-0.6, max(len(kinds_drawn), 1) - 0.4)
    ax_ev.set_ylabel("events", fontsize="small")

    # (3) CA state / CC phase timeline
    rows: list[tuple[str, list[tuple[Any, float, float]], dict[Any, Any]]] = [
        ("CA state", _segments(t, ft["ca_state"].to_pylist(), t_end), dict(_CA_COLOURS))
    ]
    phase_sig = _phase_signal(signals)
    if phase_sig is not None and signals is not None:
        ph = signals.filter(pc.equal(signals["signal"], phase_sig))
        vals = [int(v) for v in _col(ph, "value")]
        cmap = plt.get_cmap("tab10")
        rows.append((phase_sig, _segments(_secs(ph["t_ps"]), vals, t_end), {v: cmap(v % 10) for v in set(vals)}))
    seen: dict[tuple[int, Any], Any] = {}
    for i, (_, segs, colours) in enumerate(rows):
        by_value: dict[Any, list[tuple[float, float]]] = {}
        for value, start, w in segs:
            by_value.setdefault(value, []).append((start, w))
        for value, spans in by_value.items():
            c = colours.get(value, "#cccccc")
            ax_ca.broken_barh(spans, (i + 0.1, 0.8), facecolors=c)
            seen[(i, value)] = c
    ax_ca.set_yticks([i + 0.5 for i in range(len(rows))], [r[0] for r in rows], fontsize="x-small")
    ax_ca.set_ylim(0, len(rows))
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in seen.values()]
    labels = [f"{v}" if i == 0 else f"{rows[i][0]}={v}" for (i, v) in seen]
    ax_ca.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small", frameon=False)

    # (4) RTT and estimators
    for name, colour in (("srtt_ps", "#1f77b4"), ("min_rtt_ps", "#2ca02c")):
        y = _col(ft, name) / 1e9
        ok = y > 0
        ax_rtt.plot(*_thin(t[ok], y[ok]), label=name.removesuffix("_ps") + " (ms)", color=colour, lw=1)
    ax_rtt.set_ylabel("RTT (ms)")
    ax_rtt.set_xlabel("time (s)")
    if estimators is None:
        present = set(pc.unique(signals["signal"]).to_pylist()) if signals is not None and signals.num_rows else set()
        delays = [n for n in _DELAY_SIGNALS_MS if n in present]
        est = [n for n in _pick(signals, None, _ESTIMATOR_WORDS, exclude=phase_sig) if n not in _DELAY_SIGNALS_MS]
    else:
        picked = _pick(signals, estimators, _ESTIMATOR_WORDS, exclude=phase_sig)
        delays = [n for n in picked if n in _DELAY_SIGNALS_MS]
        est = [n for n in picked if n not in _DELAY_SIGNALS_MS]
    for i, name in enumerate(delays):
        assert signals is not None  # found in it
        sg = signals.filter(pc.equal(signals["signal"], name))
        v = _col(sg, "value")
        # No sample yet: the kernel's ~0U, or Westwood's TCP_WESTWOOD_INIT_RTT (20 s).
        ok = (v > 0) & (v < _NO_SAMPLE_US) & (v / _DELAY_SIGNALS_MS[name] < 20_000)
        ax_rtt.plot(*_thin(_secs(sg["t_ps"])[ok], v[ok] / _DELAY_SIGNALS_MS[name]), label=f"{name} (CC, ms)", lw=0.8,
                    ls="-.", color=f"C{i + 6}", drawstyle="steps-post")  # fmt: skip
    if est:
        # The other estimators have units of their own (bps, gains): each
        # is drawn relative to its largest value, which the legend gives.
        ax2 = ax_rtt.twinx()
        for i, name in enumerate(est):
            assert signals is not None  # _pick found names in it
            sg = signals.filter(pc.equal(signals["signal"], name))
            v = _col(sg, "value")
            fin = np.isfinite(v)  # BBRv3's bw_lo is infinite until a loss bounds it
            top = float(np.max(np.abs(v[fin]))) if fin.any() else 0.0
            ax2.plot(*_thin(_secs(sg["t_ps"])[fin], v[fin] / top if top else v[fin]), label=f"{name} (÷ {top:.4g})",
                     lw=0.8, ls="--", color=f"C{i + 3}", drawstyle="steps-post")  # fmt: skip
        ax2.set_ylabel("CC estimator / its max")
        ax2.legend(loc="upper left", fontsize="small")
    ax_rtt.legend(loc="upper right", fontsize="small")

    for ax in (ax_rate, ax_win, ax_ev, ax_ca):
        ax.tick_params(labelbottom=False)
    ax_rate.set_xlim(0, t_end or None)
    if title:
        fig.suptitle(title)
    return fig


def _phase_signal(signals: pa.Table | None) -> str | None:
    if signals is None or signals.num_rows == 0:
        return None
    for name in pc.unique(signals["signal"]).to_pylist():
        if any(w in name.lower() for w in _PHASE_WORDS):
            return name
    return None


def _pick(
    signals: pa.Table | None, wanted: Sequence[str] | None, words: tuple[str, ...], exclude: str | None
) -> list[str]:
    """The signals to draw: those asked for, else those whose names contain one of words (at most four)."""
    if signals is None or signals.num_rows == 0:
        return []
    names = [n for n in pc.unique(signals["signal"]).to_pylist() if n != exclude]
    if wanted is not None:
        return [n for n in wanted if n in names]
    return [n for n in names if any(w in n.lower() for w in words) and (words is _ESTIMATOR_WORDS or "gain" not in n)][
        :4
    ]


# -- queues -------------------------------------------------------------------


def queue(
    source: Session | pa.Table,
    *,
    link: str = "bottleneck",
    dir: str = "ab",
    title: str | None = None,
    figsize: tuple[float, float] = (11, 6),
) -> Figure:
    """A link direction's queue: backlog and sojourn time, drops and marks as ticks.

    From a session whose direction's rate or delay moves (a capacity process,
    outages, scheduled changes: its ``link`` table), a third panel draws its
    service rate (0 while down) and propagation delay.

    Args:
        source: A session (its ``queue`` and ``link`` tables are fetched) or a
            ``queue`` table.
        link: The link id.
        dir: ``"ab"`` or ``"ba"``.
        title: Figure title.
        figsize: Figure size in inches.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: No rows for that link direction.
    """
    plt = _plt()
    lt = None
    if isinstance(source, pa.Table):
        qt = source
    else:
        qt = source.signals("queue")
        lt = _fetch(source, "link", None)
        title = title or f"{source.scenario} · seed {source.seed} · {link} {dir}"
    qt = qt.filter(pc.and_(pc.equal(qt["link"], link), pc.equal(qt["dir"], dir)))
    if qt.num_rows == 0:
        raise ValueError(f"ccscope.plot: no queue rows for link {link!r} dir {dir!r}")
    if lt is not None:
        lt = lt.filter(pc.and_(pc.equal(lt["link"], link), pc.equal(lt["dir"], dir)))
        if lt.num_rows < 2:
            lt = None  # a constant rate and delay: nothing to draw
    t = _secs(qt["t_ps"])
    axes = plt.subplots(2 if lt is None else 3, 1, sharex=True, figsize=figsize, layout="constrained")[1]
    fig = axes[0].figure
    ax_b, ax_s = axes[0], axes[1]
    ax_b.plot(*_thin(t, _col(qt, "backlog_bytes") / 1e3), drawstyle="steps-post", lw=1, label="backlog")
    ax_b.set_ylabel("backlog (KB)")
    ax_p = ax_b.twinx()
    ax_p.plot(*_thin(t, _col(qt, "backlog_pkts")), drawstyle="steps-post", lw=0.6, color="#ff7f0e", alpha=0.6)
    ax_p.set_ylabel("backlog (packets)", color="#ff7f0e")
    soj = _col(qt, "sojourn_ps") / 1e9
    ok = soj > 0  # enqueue rows carry no sojourn
    ax_s.plot(*_thin(t[ok], soj[ok]), lw=0.8, label="sojourn of dequeued packet")
    ax_s.set_ylabel("sojourn (ms)")
    ax_s.set_xlabel("time (s)")
    for name, colour in (("drops", "#000000"), ("marks", "#00897b")):
        c = _col(qt, name)
        at = t[1:][np.diff(c) > 0]
        if len(at):
            if len(at) > _MAX_TICKS:
                at = at[:: int(np.ceil(len(at) / _MAX_TICKS))]
            ax_s.plot(at, np.zeros_like(at), "|", color=colour, ms=8, label=f"{name} ({int(c[-1] - c[0])})")
    ax_s.legend(loc="upper right", fontsize="small")
    if lt is not None:
        ax_s.set_xlabel("")
        ax_r = axes[2]
        # Each row holds until the next; the last until the queue's last row.
        lt_t = np.append(_secs(lt["t_ps"]), max(t[-1], _secs(lt["t_ps"])[-1]))
        rate = _col(lt, "rate_bps") / 1e6
        ax_r.plot(lt_t, np.append(rate, rate[-1]), drawstyle="steps-post", lw=1, label="service rate")
        ax_r.set_ylabel("service rate (Mbps)")
        ax_r.set_ylim(bottom=0)
        ax_d = ax_r.twinx()
        delay = _col(lt, "delay_ps") / 1e9
        ax_d.plot(lt_t, np.append(delay, delay[-1]), drawstyle="steps-post", lw=0.8, color="#ff7f0e")
        ax_d.set_ylabel("delay (ms)", color="#ff7f0e")
        ax_d.set_ylim(bottom=0)
        ax_r.set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    return fig


# -- comparisons --------------------------------------------------------------


def compare(
    runs: Mapping[str, Session | pa.Table],
    *,
    y: str = "cwnd_pkts",
    flow: str | None = "f0",
    table: str = "flows",
    ylabel: str | None = None,
    scale: float = 1.0,
    ax: Axes | None = None,
    figsize: tuple[float, float] = (11, 4),
) -> Figure:
    """One column of several runs on one time axis.

    Args:
        runs: Label → session or table (e.g. ``{"1 BDP": s, "½ BDP": fork}``).
        y: The column to draw.
        flow: Keep only this flow, or a split flow's legs (None: every
            flow, a line each).
        table: The table to fetch from sessions.
        ylabel: The y label (default: the column name).
        scale: Multiply values by this (e.g. ``1e-9`` for ps → ms).
        ax: Draw into these axes instead of a new figure.
        figsize: Size of a new figure.

    Returns:
        The matplotlib Figure.
    """
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    else:
        fig = ax.figure
    for label, src in runs.items():
        if isinstance(src, pa.Table):
            tb = flow_names(src, None) if src.num_rows else src
            if flow is not None and "flow" in tb.column_names:
                # A split flow's id stands for its legs, as the server reads it.
                names = tb["flow"]
                tb = tb.filter(pc.or_(pc.equal(names, flow), pc.starts_with(names, flow + ".")))
        else:
            tb = src.signals(table, flows=[flow] if flow else None)  # a split flow's id selects its legs
            tb = flow_names(tb, src.flows) if tb.num_rows else tb
        if tb is None or tb.num_rows == 0:
            continue
        # One line per flow: several flows' rows interleaved are no line.
        names = tb["flow"].unique().to_pylist() if "flow" in tb.column_names else [None]
        for name in names:
            part = tb if name is None else tb.filter(pc.equal(tb["flow"], name))
            text = label if len(names) == 1 else f"{label} · {name}"
            ax.plot(*_thin(_secs(part["t_ps"]), _col(part, y) * scale), label=text, lw=1, drawstyle="steps-post")
    spec = ax.get_subplotspec()
    if spec is None or spec.is_last_row():
        ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel or y)
    ax.legend(fontsize="small", loc="upper left")
    return fig


# -- the simulator beside the kernel -------------------------------------------


def sim_vs_kernel(
    trace_dir: str,
    *,
    seed: int = 1,
    flow: str = "f0",
    flows: list[str] | None = None,
    signals: Sequence[str] = (),
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Overlay a simulated and an emulated run of one flow: cwnd, srtt, delivery rate.

    Reads what :func:`ccscope.compare` (``ccscope compare --trace DIR``)
    wrote: ``sim-seedN.flows.parquet`` and ``kernel-seedN.flows.parquet``,
    and for ``signals`` the ``signals`` tables beside them.

    Args:
        trace_dir: The directory passed as ``trace_dir`` to :func:`ccscope.compare`.
        seed: Which seed's pair of runs.
        flow: The flow to draw.
        flows: The scenario's flow ids, if the tables carry flow indices.
        signals: CC signals to draw below, a panel each, e.g. ``["mode",
            "full_bw_cnt"]`` for BBR or ``["last_max_cwnd"]`` for CUBIC. The
            kernel's come from ``compare(..., cc_state=True)``; a panel says
            so when a side has none.
        figsize: Size of the figure (default: 11 wide, 8 high and 2 more per
            signal).

    Returns:
        The matplotlib Figure: a panel per quantity on one time axis (seconds).
    """
    import pyarrow.parquet as pq

    plt = _plt()
    signals = list(signals)
    if figsize is None:
        figsize = (11, 8 + 2 * len(signals))
    fig, axes = plt.subplots(3 + len(signals), 1, figsize=figsize, sharex=True, layout="constrained")
    panels = (("cwnd_pkts", 1.0, "cwnd (packets)"), ("srtt_ps", 1e-9, "srtt (ms)"), ("delivery_rate_bps", 1e-6, "delivery rate (Mbps)"))
    missing: dict[str, list[str]] = {name: [] for name in signals}
    for label, stem, style in (("simulator", "sim", "-"), ("Linux kernel", "kernel", "--")):
        tb = _only(pq.read_table(f"{trace_dir}/{stem}-seed{seed}.flows.parquet"), flow, flows)
        if tb is not None and tb.num_rows > 0:
            t = _secs(tb["t_ps"])
            for ax, (col, scale, _) in zip(axes, panels):
                ax.plot(*_thin(t, _col(tb, col) * scale), style, label=label, lw=1, drawstyle="steps-post")
        if not signals:
            continue
        sig = _only(pq.read_table(f"{trace_dir}/{stem}-seed{seed}.signals.parquet"), flow, flows)
        for ax, name in zip(axes[3:], signals):
            rows = sig.filter(pc.equal(sig["signal"], name)) if sig is not None and sig.num_rows else None
            if rows is None or rows.num_rows == 0:
                missing[name].append(label)
                continue
            ax.plot(*_thin(_secs(rows["t_ps"]), _col(rows, "value")), style, label=label, lw=1, drawstyle="steps-post")
    for ax, (_, _, ylabel) in zip(axes, panels):
        ax.set_ylabel(ylabel)
        ax.legend(fontsize="small", loc="upper right")
    for ax, name in zip(axes[3:], signals):
        ax.set_ylabel(name)
        if missing[name]:
            ax.text(0.01, 0.9, f"no {name} rows: {', '.join(missing[name])}", transform=ax.transAxes, fontsize="small", va="top")
        if ax.lines:
            ax.legend(fontsize="small", loc="upper right")
    axes[-1].set_xlabel("time (s)")
    axes[0].set_title(f"{flow}: simulator against the Linux kernel (seed {seed})")
    return fig


def _display_unit(name: str) -> tuple[float, str]:
    """The divisor and axis label that show a catalog column in readable units."""
    for suffix, div, unit in (("_bps", 1e6, "Mbps"), ("_ps", 1e9, "ms"), ("_mbps", 1.0, "Mbps"), ("_ms", 1.0, "ms")):
        if name.endswith(suffix):
            return div, f"{name[: -len(suffix)]} ({unit})"
    return 1.0, name


def _rows_with(fn: str, df: Any, x: str, y: str, hue: str) -> Any:
    """The rows of df with both x and y; a KeyError naming a column df lacks."""
    for c in (x, y, hue):
        if c not in df.columns:
            raise KeyError(f"ccscope.plot.{fn}: no column {c!r} in the catalog ({', '.join(map(str, df.columns))})")
    return df[df[x].notna() & df[y].notna()]


def catalog(df: Any, *, x: str, y: str = "goodput_bps", hue: str = "cc", ax: Axes | None = None) -> Figure:
    """A sweep catalog's metric against one swept parameter, one series per ``hue``.

    Each x value shows the seeds' spread (a bar from the smallest to the
    largest value, every run a dot) and the series joins the medians; x
    values that are not all numbers are placed evenly in catalog order.
    Rows of other impairment axes (the catalog's ``axis`` column) are left
    out, so ``x`` picks one axis's chart.

    Args:
        df: A :class:`~ccscope.catalog.Catalog` (or any DataFrame with the
            columns named here).
        x: The swept parameter's column, e.g. ``"links.bottleneck.ab.loss.p"``.
        y: The metric column (``*_bps`` drawn in Mbps, ``*_ps`` in ms).
        hue: The column that names the series.
        ax: An axes to draw into; default a new figure.

    Returns:
        The matplotlib Figure.
    """
    plt = _plt()
    rows = _rows_with("catalog", df, x, y, hue)
    if "axis" in rows.columns and (rows["axis"] == x).any():
        rows = rows[rows["axis"] == x]
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 4.2), constrained_layout=True)
    else:
        fig = ax.figure
    div, label = _display_unit(y)
    values = list(dict.fromkeys(rows[x].tolist()))
    try:
        xs_num = [float(v) for v in values]
        order = sorted(range(len(values)), key=lambda i: xs_num[i])
        values = [values[i] for i in order]
        pos = {v: float(v) for v in values}
        numeric = True
    except (TypeError, ValueError):
        pos = {v: float(i) for i, v in enumerate(values)}
        numeric = False
    groups = list(dict.fromkeys(rows[hue].tolist()))
    for i, g in enumerate(groups):
        sub = rows[rows[hue] == g]
        colour = f"C{i}"
        med_x, med_y = [], []
        for v in values:
            ys = sub.loc[sub[x] == v, y].to_numpy(dtype=float) / div
            if ys.size == 0:
                continue
            px = pos[v]
            ax.vlines(px, ys.min(), ys.max(), colors=colour, alpha=0.4, linewidth=3)
            ax.scatter(np.full(ys.size, px), ys, s=9, color=colour, zorder=3)
            med_x.append(px)
            med_y.append(float(np.median(ys)))
        ax.plot(med_x, med_y, color=colour, label=str(g), marker="o", markersize=3)
    if not numeric:
        ax.set_xticks([pos[v] for v in values], [str(v) for v in values], rotation=45, ha="right")
    ax.set_xlabel(x)
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    ax.legend(title=hue, fontsize="small")
    return fig


def _sigma_ellipse(x: np.ndarray, y: np.ndarray, n: int = 100) -> np.ndarray | None:
    """The 1-σ ellipse of points (x, y): the mean plus one standard deviation
    along each eigenvector of their covariance (n vertices), or None for
    fewer than two points."""
    if x.size < 2:
        return None
    vals, vecs = np.linalg.eigh(np.cov(np.vstack([x, y])))
    a = np.linspace(0.0, 2.0 * np.pi, n)
    unit = np.vstack([np.cos(a), np.sin(a)]) * np.sqrt(np.clip(vals, 0.0, None))[:, None]
    return (vecs @ unit).T + np.array([x.mean(), y.mean()])


def plane(
    df: Any,
    *,
    delay: str = "rtt_p99_ps",
    throughput: str = "goodput_bps",
    hue: str = "cc",
    colors: Mapping[Any, str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Runs on the throughput–delay plane, one colour per ``hue``, as Pantheon's summary plots draw schemes.

    Every row (a run's flow) is a dot; each ``hue`` gets a marker at the
    mean of its rows and the shaded 1-σ ellipse of their spread (the
    covariance of throughput and delay, one standard deviation along each
    principal axis). Delay is on a logarithmic axis, inverted, so that
    better — more throughput, less delay — is up and to the right. Pass the
    rows of one path (a sweep point's seeds, filtered by its swept
    columns): runs of different paths on one plane compare nothing.

    Args:
        df: A :class:`~ccscope.catalog.Catalog` (or any DataFrame with the
            columns named here).
        delay: The delay column (``*_ps`` drawn in ms), e.g. ``"rtt_p50_ps"``.
        throughput: The throughput column (``*_bps`` drawn in Mbps).
        hue: The column that names the schemes.
        colors: Each scheme's colour by its ``hue`` value (to keep them
            from one figure to the next); default ``C0``, ``C1``, … in the
            order the schemes first appear.
        ax: An axes to draw into; default a new figure.

    Returns:
        The matplotlib Figure.
    """
    plt = _plt()
    rows = _rows_with("plane", df, delay, throughput, hue)
    if rows.empty:
        raise ValueError(f"ccscope.plot.plane: no row has both {delay} and {throughput}")
    xdiv, xlabel = _display_unit(delay)
    ydiv, ylabel = _display_unit(throughput)
    xs = rows[delay].to_numpy(dtype=float) / xdiv
    if (xs <= 0).any():
        raise ValueError(f"ccscope.plot.plane: {delay} has values of 0 or less, which a logarithmic axis cannot place")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 5), constrained_layout=True)
    else:
        fig = ax.figure
    for i, g in enumerate(dict.fromkeys(rows[hue].tolist())):
        sub = rows[rows[hue] == g]
        x = sub[delay].to_numpy(dtype=float) / xdiv
        y = sub[throughput].to_numpy(dtype=float) / ydiv
        colour = colors[g] if colors is not None and g in colors else f"C{i}"
        ax.scatter(x, y, s=12, color=colour, alpha=0.5, zorder=2)
        ring = _sigma_ellipse(x, y)
        if ring is not None:
            ring[:, 0] = np.maximum(ring[:, 0], xs.min() / 10)  # a wide spread's ring stays on the log axis
            ax.fill(ring[:, 0], ring[:, 1], color=colour, alpha=0.2, linewidth=0, zorder=1)
        ax.scatter([x.mean()], [y.mean()], s=60, color=colour, marker="D", edgecolors="black", zorder=3, label=str(g))
    from matplotlib import ticker

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0, 7.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.invert_xaxis()
    ax.set_xlabel(xlabel + " — better to the right")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
    ax.legend(title=hue, fontsize="small")
    return fig
