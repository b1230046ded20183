"""Live notebook views (needs the ``widgets`` extra: ipywidgets, matplotlib, pandas).

:func:`plane` compares congestion controls on the throughput–delay plane
and runs them again as the path's sliders move (see :class:`PlaneView`).

:func:`live` shows a session as it steps: per-flow panels (delivery rate,
cwnd, srtt) and the bottleneck queue's sojourn time, redrawn after every
tick, with play / pause / step buttons, a speed control and the simulated
time. Sliders change the path mid-run through :meth:`Session.act` — the
bottleneck's rate, delay, loss and queue limit, and a flow's cwnd — so every
change is in the session's action log: "checkpoint" keeps the position and
"fork" continues from the last checkpoint in a new session, where the
sliders act on the fork.

The qdisc kind is a scenario choice rather than an action (the engine does
not swap a queue discipline mid-run): changing it restarts the session from
time 0 with that qdisc, same seed. Picking the scenario's own kind again
restores its qdisc as written (a ``"1BDP"`` limit stays one) unless the limit
slider was moved; another kind, or a moved slider, gets the slider's limit in
packets.

Every control is an attribute of :class:`LiveView` and every callback a
method, so the view can be driven without a browser (``view.step_button.click()``,
``view.rate.value = 10``) — which is how the tests drive it.

Example::

    import ccscope, ccscope.widgets

    client = ccscope.connect()
    s = client.open("bufferbloat", set={"trace.detail": "sampled"})
    ccscope.widgets.live(s)
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

try:
    import ipywidgets as W
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("ccscope.widgets needs ipywidgets: pip install 'ccscope[widgets]'") from e

import numpy as np
import pyarrow.compute as pc

from .errors import ServerError
from .tables import format_duration, parse_duration

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client
    from .results import Checkpoint
    from .session import Session

__all__ = ["live", "LiveView", "QDISC_KINDS", "plane", "PlaneView"]

#: The qdisc kinds the dropdown offers (a restart of the run with that kind).
QDISC_KINDS = ("fifo", "codel", "fq_codel", "pie", "fq_pie")

_PS_PER_MS = 10**9

#: A full-size data packet on the wire: the default MSS (1448 B) and 52 B of
#: headers. A byte limit shows on the slider as this many packets.
_WIRE_BYTES = 1500
# The queue-limit slider's top, and where it starts for an unlimited FIFO.
_LIMIT_TOP = 20000
_UNLIMITED = "the queue is unlimited: the limit slider's top stands for it until it is moved"


def live(session: Session, **kwargs: Any) -> LiveView:
    """Show ``session`` live in a notebook; see :class:`LiveView` for the arguments.

    Returns:
        The :class:`LiveView` (it renders as its widget box).
    """
    return LiveView(session, **kwargs)


class LiveView:
    """A stepping session with live panels and controls bound to ``act``.

    Args:
        session: The session to drive (its scenario should record the
            ``flows`` and ``queue`` tables: ``trace.detail`` ``"sampled"`` or
            ``"change"``).
        link: The link whose ``dir`` the path sliders act on.
        dir: ``"ab"`` (the built-ins' data direction) or ``"ba"``.
        flows: The flows to draw (default all); the cwnd field acts on the
            one picked in its dropdown.
        tick: Simulated time per tick, e.g. ``"100ms"`` (the speed slider
            changes it).
        window: Simulated time shown, ending now (``None``: from 0).

    Attributes:
        session: The session the view drives now (a fork replaces it).
        checkpoints: Checkpoints taken with the checkpoint button, in order.
        widget: The top-level widget box.
    """

    def __init__(
        self,
        session: Session,
        *,
        link: str = "bottleneck",
        dir: str = "ab",
        flows: Sequence[str] | None = None,
        tick: str = "100ms",
        window: str | None = "10s",
    ) -> None:
        if link not in session.links:
            raise ValueError(
                f"ccscope.widgets: link is {link!r}, not a link of the scenario ({', '.join(session.links)})"
            )
        if dir not in ("ab", "ba"):
            raise ValueError(f"ccscope.widgets: dir is {dir!r}; a link direction is 'ab' or 'ba'")
        self.session = session
        self.link, self.dir = link, dir
        self.flows = list(flows or session.flows)
        self.window_ps = parse_duration(window) if window else None
        self.checkpoints: list[Checkpoint] = []
        self.log: list[str] = []
        d = self._direction()
        # The scenario's own qdisc, restored whole when its kind is picked
        # again (see _on_qdisc); _limit_moved says the limit is the slider's.
        self._qdisc0 = dict(d.get("qdisc") or {})
        self._limit_moved = False
        self._syncing = False
        rate_mbps = _rate_mbps(d.get("rate", "100Mbps"))
        delay_ms = parse_duration(str(d.get("delay", "10ms"))) / _PS_PER_MS
        limit = self._limit_pkts()
        loss = _loss_p(d.get("loss"))

        self.play = W.Play(value=0, min=0, max=10**9, step=1, interval=200, description="play")
        self.step_button = W.Button(description="step", icon="step-forward")
        self.speed = W.SelectionSlider(
            options=["10ms", "20ms", "50ms", "100ms", "200ms", "500ms", "1s"], value=tick, description="sim / tick"
        )
        self.time = W.HTML()
        # Each slider's range takes in the path's own value: a slider is the
        # widget's only readout of it, and a clipped one would misreport it
        # (dc-incast's 25 Gbps read 10,000 Mbps).
        self.rate = W.FloatLogSlider(value=rate_mbps, base=10, min=min(-1, math.floor(math.log10(rate_mbps))),
                                     max=max(4, math.ceil(math.log10(rate_mbps))), description="rate (Mbps)")  # fmt: skip
        self.delay = W.FloatSlider(value=delay_ms, min=0, max=max(500, math.ceil(delay_ms)), step=0.5, description="delay (ms)")
        self.loss = W.FloatSlider(value=100 * loss, min=0, max=max(20, math.ceil(100 * loss)), step=0.1, description="loss (%)")
        top = max(_LIMIT_TOP, limit or 0)
        self.queue_limit = W.IntSlider(value=limit or top, min=1, max=top, description="limit (pkts)")
        kind = str(self._qdisc0.get("kind", "fifo"))
        self.qdisc = W.Dropdown(options=sorted({*QDISC_KINDS, kind}), value=kind, description="qdisc")
        self.cwnd_flow = W.Dropdown(options=self.flows, value=self.flows[0] if self.flows else None, description="flow")
        self.cwnd = W.BoundedIntText(value=10, min=1, max=10**6, description="cwnd (pkts)")
        self.cwnd_button = W.Button(description="set cwnd")
        self.checkpoint_button = W.Button(description="checkpoint", icon="bookmark")
        self.fork_button = W.Button(description="fork from last checkpoint", icon="code-branch")
        self.status = W.HTML()
        self.out = W.Output()
        if limit is None:
            self._say(_UNLIMITED)

        self.play.observe(self._on_play, names="value")
        self.step_button.on_click(lambda _b: self.tick())
        for w, fn in (
            (self.rate, self._on_rate),
            (self.delay, self._on_delay),
            (self.loss, self._on_loss),
            (self.queue_limit, self._on_limit),
            (self.qdisc, self._on_qdisc),
        ):
            w.observe(fn, names="value")
        self.cwnd_button.on_click(self._on_cwnd)
        self.checkpoint_button.on_click(lambda _b: self.checkpoint())
        self.fork_button.on_click(self._on_fork)

        self._fig: Any = None
        self.widget = W.VBox(
            [
                W.HBox([self.play, self.step_button, self.speed, self.time]),
                W.HBox([self.rate, self.delay, self.loss]),
                W.HBox([self.queue_limit, self.qdisc]),
                W.HBox([self.cwnd_flow, self.cwnd, self.cwnd_button, self.checkpoint_button, self.fork_button]),
                self.status,
                self.out,
            ]
        )
        self.draw()

    # -- notebook display ---------------------------------------------------

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a frontend
        from IPython.display import display

        display(self.widget)

    # -- stepping -----------------------------------------------------------

    def _on_play(self, change: dict[str, Any]) -> None:
        if change["new"] != change["old"]:
            self.tick()

    def tick(self) -> None:
        """Step the session by the speed slider's simulated time and redraw."""
        if self.session.done:
            self.play.playing = False
            self._say("the run reached its horizon")
            return
        self.session.step(self.speed.value)
        self.draw()

    def run_for(self, duration: str) -> None:
        """Step ``duration`` of simulated time at once and redraw (for scripts)."""
        parse_duration(duration)
        if not self.session.done:
            self.session.step(duration)
        self.draw()

    # -- actions ------------------------------------------------------------

    def _act(self, **change: Any) -> None:
        self._logged(self.session.act(link=self.link, dir=self.dir, **change), change)

    def _logged(self, res: Any, change: dict[str, Any]) -> None:
        what = ", ".join(f"{k}={v}" for k, v in change.items())
        line = f"t={format_duration(self.session.sim_time_ps)}: {what}"
        if res is not None:
            line += f" (action #{res['index']})"
        self.log.append(line)
        self._say(line)

    def _on_rate(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self._act(rate=f"{round(change['new'] * 1000)}Kbps")

    def _on_delay(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self._act(delay=f"{round(change['new'] * 1000)}us")

    def _on_loss(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self._act(loss=change["new"] / 100)

    def _on_limit(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self._act(queue_limit=int(change["new"]))
            self._limit_moved = True

    def set_cwnd(self) -> None:
        """Set the picked flow's cwnd to the field's value (logged)."""
        res = self.session.act(flow=self.cwnd_flow.value, cwnd=int(self.cwnd.value))
        self._logged(res, {"flow": self.cwnd_flow.value, "cwnd": int(self.cwnd.value)})

    def _on_cwnd(self, _button: Any) -> None:
        # As _on_fork: a refused action (a group's flow not started yet) is
        # said in the status line, not lost in the widget log.
        try:
            self.set_cwnd()
        except ServerError as e:
            self._say(f"set cwnd: {e.message}")

    def _on_qdisc(self, change: dict[str, Any]) -> None:
        kind = change["new"]
        # The scenario's qdisc when its kind comes back (its limit as it
        # wrote it: "1BDP" stays a byte limit), else that kind's defaults;
        # and the slider's limit in packets once it was moved or when the
        # kind changes, so that the run has the limit the slider shows.
        qd: dict[str, Any] = dict(self._qdisc0) if kind == self._qdisc0.get("kind") else {"kind": kind}
        if self._limit_moved or kind != self._qdisc0.get("kind"):
            qd["limit"] = f"{int(self.queue_limit.value)}p"
        old = self.session
        # The scenario with this qdisc in place of the direction's whole
        # (a `set` of the object would warn that it drops the old kind's fields).
        config = copy.deepcopy(old.config)
        for ln in config.get("links", []):
            if ln.get("id") == self.link:
                ln.setdefault(self.dir, {})["qdisc"] = qd
        self.session = old._client.open(config, seed=old.seed)
        old.close()
        self.checkpoints.clear()
        # The new run starts from the scenario: the other sliders show its
        # values, not the old run's actions.
        self._show_direction(self._direction())
        self.log.append(f"restarted from 0 with qdisc {qd}")
        self._say(
            f"restarted from t=0 (seed {self.session.seed}) with qdisc {qd}; the old run's actions are not replayed"
        )
        self.draw()

    def _show_direction(self, d: dict[str, Any], actions: Sequence[dict[str, Any]] = ()) -> None:
        """Set the path sliders to the session's direction ``d`` after
        ``actions`` (a checkpoint's log), without acting."""
        rate, delay, loss = d.get("rate"), d.get("delay"), d.get("loss")
        for a in actions:
            if (a.get("link"), a.get("dir", "ab")) != (self.link, self.dir):
                continue
            rate = a.get("rate", rate)
            delay = a.get("delay", delay)
            loss = a.get("loss", loss)
        limit = self._limit_pkts()
        self._syncing = True
        try:
            if rate is not None:
                self.rate.value = _rate_mbps(rate)
            if delay is not None:
                self.delay.value = parse_duration(str(delay)) / _PS_PER_MS
            self.loss.value = 100 * _loss_p(loss)
            self.queue_limit.max = max(self.queue_limit.max, limit or 0)
            self.queue_limit.value = limit or self.queue_limit.max
        finally:
            self._syncing = False

    def _limit_pkts(self) -> int | None:
        """The direction's queue limit in packets, as the slider shows it:
        the limit the server reports for the session where it stands
        (:attr:`Session.queues`: a BDP multiple resolved by the engine, a
        restored or forked session's after its actions), a byte limit in
        full-size packets; None for a FIFO the scenario leaves unlimited
        (the slider then starts at its top).

        Raises:
            ValueError: The server reports no limit for a direction whose
                queue has one.
        """
        q = self.session.queues.get(f"{self.link}/{self.dir}", {})
        if q.get("limit_packets"):
            return max(1, int(q["limit_packets"]))
        if q.get("limit_bytes"):
            return max(1, int(q["limit_bytes"]) // _WIRE_BYTES)
        if (self._direction().get("qdisc") or {}).get("limit") == "unlimited":
            return None
        raise ValueError(
            f"ccscope.widgets: the server reports no queue limit for {self.link}/{self.dir} "
            "(a server before protocol 1.2 reports none)"
        )

    def checkpoint(self) -> Checkpoint:
        """Checkpoint the session where it is (kept in :attr:`checkpoints`)."""
        cp = self.session.checkpoint()
        self.checkpoints.append(cp)
        self._say(f"checkpoint {len(self.checkpoints)} at t={format_duration(self.session.sim_time_ps)}")
        return cp

    def fork(self) -> Session:
        """Continue from the last checkpoint in a new session; the view drives the fork.

        The parent session stays open (close it yourself if you no longer
        need it).

        Raises:
            RuntimeError: No checkpoint was taken.
        """
        if not self.checkpoints:
            raise RuntimeError("ccscope.widgets: take a checkpoint before forking")
        # A fork without new actions is a restore: replayed from the seed
        # with the checkpoint's action log, digest verified.
        cp = self.checkpoints[-1]
        self.session = self.session._client.restore(cp)
        # The sliders show the fork's path: the scenario's after the
        # checkpoint's actions, not later moves on the parent.
        actions = [a["action"] for a in cp.data.get("actions", [])]
        self._show_direction(self._direction(), actions)
        self._limit_moved = self._limit_moved or any(
            "queue_limit" in a and (a.get("link"), a.get("dir", "ab")) == (self.link, self.dir) for a in actions
        )
        self._say(f"forked at t={format_duration(self.session.sim_time_ps)}: session {self.session.id}")
        self.draw()
        return self.session

    def _on_fork(self, _button: Any) -> None:
        # ipywidgets swallows a callback's exception into the log; say it.
        try:
            self.fork()
        except RuntimeError as e:
            self._say(str(e))

    def _say(self, text: str) -> None:
        import html

        self.status.value = f"<code>{html.escape(text)}</code>"

    # -- drawing ------------------------------------------------------------

    def _direction(self) -> dict[str, Any]:
        for ln in self.session.config.get("links", []):
            if ln.get("id") == self.link:
                return dict(ln.get(self.dir) or ln)
        return {}

    def draw(self) -> None:
        """Redraw the panels from the session's tables."""
        import matplotlib.pyplot as plt

        s = self.session
        self.time.value = f"<b>t = {s.sim_time_s:.3f} s</b> / {s.horizon_ps / 1e12:g} s · session {s.id}"
        lo = 0 if self.window_ps is None else max(0, s.sim_time_ps - self.window_ps)
        if self._fig is None:
            self._fig, self._axes = plt.subplots(4, 1, sharex=True, figsize=(10, 7.5), layout="constrained")
            plt.close(self._fig)  # drawn into the Output below, not by the inline backend
        ax_rate, ax_cwnd, ax_rtt, ax_q = self._axes
        for ax in self._axes:
            ax.clear()
            ax.grid(alpha=0.3)
        flows = s.signals("flows", flows=self.flows) if s.sim_time_ps > 0 else None
        if flows is not None and flows.num_rows:
            flows = flows.filter(pc.greater_equal(flows["t_ps"], lo))
            for i, f in enumerate(self.flows):
                rows = flows.filter(pc.equal(flows["flow"], f))
                if rows.num_rows == 0:
                    continue
                t = rows["t_ps"].to_numpy() / 1e12
                ax_rate.step(t, rows["delivery_rate_bps"].to_numpy() / 1e6, where="post", color=f"C{i}", label=f)
                ax_cwnd.step(t, rows["cwnd_pkts"].to_numpy(), where="post", color=f"C{i}", label=f)
                ax_rtt.plot(t, rows["srtt_ps"].to_numpy() / 1e9, color=f"C{i}", label=f)
        lk = s.signals("link") if s.sim_time_ps > 0 else None
        if lk is not None and lk.num_rows:
            # The link's service rate (the slider's, a capacity process's, 0
            # in an outage), each row holding until the next, the last until now.
            lk = lk.filter(pc.and_(pc.equal(lk["link"], self.link), pc.equal(lk["dir"], self.dir)))
            if lk.num_rows:
                t = np.append(lk["t_ps"].to_numpy(), s.sim_time_ps) / 1e12
                r = lk["rate_bps"].to_numpy() / 1e6
                ax_rate.step(t, np.append(r, r[-1:]), where="post", color="k", ls="--", lw=0.8, label="link rate")
        if ax_rate.lines:
            ax_rate.legend(fontsize="small", loc="upper left")
        q = s.signals("queue") if s.sim_time_ps > 0 else None
        if q is not None and q.num_rows:
            keep = pc.and_(pc.equal(q["link"], self.link), pc.equal(q["dir"], self.dir))
            q = q.filter(pc.and_(keep, pc.greater_equal(q["t_ps"], lo)))
            t = q["t_ps"].to_numpy() / 1e12
            soj = q["sojourn_ps"].to_numpy() / 1e9
            ok = soj > 0  # enqueue rows carry no sojourn, as plot.queue reads them
            ax_q.plot(t[ok], soj[ok], color="C3", lw=0.8, label="sojourn")
            ax_b = ax_q.twinx()
            ax_b.step(t, q["backlog_pkts"].to_numpy(), where="post", color="C7", lw=0.8)
            ax_b.set_ylabel("backlog (pkts)")
        ax_rate.set_ylabel("delivery (Mbps)")
        ax_cwnd.set_ylabel("cwnd (pkts)")
        ax_rtt.set_ylabel("srtt (ms)")
        ax_q.set_ylabel(f"{self.link}/{self.dir} sojourn (ms)")
        ax_q.set_xlabel("simulated time (s)")
        ax_q.set_xlim(lo / 1e12, max(s.sim_time_ps, 1) / 1e12)
        self.out.clear_output(wait=True)
        with self.out:
            from IPython.display import display

            display(self._fig)


def _rate_mbps(v: Any) -> float:
    units = {"tbps": 1e6, "gbps": 1e3, "mbps": 1.0, "kbps": 1e-3, "bps": 1e-6}
    s = str(v).strip().lower()
    for u, m in units.items():
        if s.endswith(u):
            return float(s[: -len(u)]) * m
    return float(s) / 1e6


def _loss_p(loss: Any) -> float:
    """A direction's Bernoulli loss probability (a number, or a model's ``p``; 0 for none)."""
    if isinstance(loss, dict):
        return float(loss.get("p", 0.0) or 0.0)
    return float(loss or 0.0)


# The buffer slider's range, in BDPs of the path as the sliders set it.
_BUFFER_BDP = (0.05, 20.0)
# How many of a plane's runs go to the server at once (its default allows a
# connection 64 sessions).
_PLANE_BATCH = 8


def plane(client: Client, scenario: str | Mapping[str, Any] = "p-rtr-p", **kwargs: Any) -> PlaneView:
    """Compare congestion controls on the throughput–delay plane as the path changes; see :class:`PlaneView`.

    Returns:
        The :class:`PlaneView` (it renders as its widget box).
    """
    return PlaneView(client, scenario, **kwargs)


class PlaneView:
    """Congestion controls on the throughput–delay plane, run again as the path changes.

    Each run of the view opens one session per picked CC and seed on the
    path the controls set, runs it to its end, and draws the flow's goodput
    against its RTT quantile as :func:`ccscope.plot.plane` does: a dot per
    seed, each CC's mean and the 1-σ ellipse of its seeds. The previous
    setting's means stay as hollow markers, with an arrow to where each CC
    moved; the path's base RTT and its bottleneck's rate bound the plane.
    So moving the buffer from 1 to 8 BDP shows CUBIC's delay grow by the
    buffer while BBR's median holds, and 1 % loss shows CUBIC fall and BBR
    stay.

    The sliders set the bottleneck direction ``link``/``dir``: its rate, the
    link's one-way delay, Bernoulli loss, and its queue: the buffer, in BDPs
    of the path as the rate and delay sliders make it (written as a packet
    limit), and the qdisc kind. A control left where it started leaves the
    scenario's setting as written (its loss model, its queue). Runs are
    summary-only and take ``duration`` of simulated time each; the status
    line counts them.

    Args:
        client: A connected :class:`~ccscope.Client`.
        scenario: A built-in's name or a scenario mapping.
        link: The bottleneck link the sliders set.
        dir: Its data direction, ``"ab"`` or ``"ba"``.
        flow: The flow whose CC each run sets and whose goodput and RTT
            are drawn, or a flow group's name: every flow of the group
            takes the CC and is drawn, a dot per flow and run.
        ccs: The CCs compared at first (the selector changes them).
        seeds: Seeds per CC at first, the scenario's seed and those after
            it (1 to 10).
        duration: Simulated time per run, e.g. ``"10s"``.
        quantile: The RTT drawn, ``"p50"`` or ``"p99"``.
        run: Run the first settings at once.

    Attributes:
        results: A pandas DataFrame of every run so far: ``setting`` (0, 1,
            … in run order), the path's settings (``rate_mbps``,
            ``delay_ms``, ``loss_pct``, ``buffer_bdp``, ``qdisc``), ``cc``,
            ``seed``, ``flow``, and the flow's ``goodput_bps``, ``rtt_p50_ps``,
            ``rtt_p99_ps``, ``retransmits``, ``base_rtt_ps`` and
            ``bottleneck_bps``.
        widget: The top-level widget box.
    """

    def __init__(
        self,
        client: Client,
        scenario: str | Mapping[str, Any] = "p-rtr-p",
        *,
        link: str = "bottleneck",
        dir: str = "ab",
        flow: str = "f0",
        ccs: Sequence[str] = ("cubic", "reno", "bbr", "vegas"),
        seeds: int = 3,
        duration: str = "10s",
        quantile: str = "p99",
        run: bool = True,
    ) -> None:
        import pandas as pd

        if dir not in ("ab", "ba"):
            raise ValueError(f"ccscope.widgets.plane: dir is {dir!r}; a link direction is 'ab' or 'ba'")
        if quantile not in ("p50", "p99"):
            raise ValueError(f"ccscope.widgets.plane: quantile is {quantile!r}, want 'p50' or 'p99'")
        if not 1 <= int(seeds) <= 10:
            raise ValueError(f"ccscope.widgets.plane: seeds is {seeds}, want 1 to 10")
        if isinstance(ccs, str) or not ccs:
            raise ValueError(f"ccscope.widgets.plane: ccs is {ccs!r}, want a list of one CC or more")
        parse_duration(duration)
        probe = client.open(scenario)
        try:
            self._config = copy.deepcopy(probe.config)
            self._seed0 = probe.seed
            # A group's flows are named group/0, group/1, ...: its first one's path.
            self._group = any(f.get("group") == flow for f in self._config.get("flows", []))
            path = probe.paths.get(f"{flow}/0" if self._group else flow)
            queue = probe.queues.get(f"{link}/{dir}", {})
            links = probe.links
        finally:
            probe.close()
        if link not in links:
            raise ValueError(f"ccscope.widgets.plane: link is {link!r}, not a link of the scenario ({', '.join(links)})")
        if not self._group and not any(f.get("id") == flow for f in self._config.get("flows", [])):
            ids = ", ".join(f["id"] if "id" in f else f"group {f.get('group')}" for f in self._config.get("flows", []))
            raise ValueError(f"ccscope.widgets.plane: flow is {flow!r}, neither a flow nor a group the scenario lists ({ids}); "
                             "the view sets a flow's or a whole group's cc")  # fmt: skip
        ln, d = self._link(self._config, link, dir)
        if "rate" not in d and "rate" not in ln:
            raise ValueError(f"ccscope.widgets.plane: {link}/{dir} has no fixed rate (a trace or a capacity process "
                             "drives it); the view sets one")  # fmt: skip
        if not path or not path.get("bottleneck_bps"):
            raise ValueError(f"ccscope.widgets.plane: the server reports no path for flow {flow!r}")
        self._client = client
        self.link, self.dir, self.flow, self.duration = link, dir, flow, duration
        self._base_rtt_ps = int(path["base_rtt_ps"])
        rate_mbps = _rate_mbps(d.get("rate", ln.get("rate")))
        delay_ms = parse_duration(str(d.get("delay", ln.get("delay", "0s")))) / _PS_PER_MS
        limit = queue.get("limit_packets") or (queue.get("limit_bytes") or 0) / _WIRE_BYTES
        bdp_pkts = rate_mbps * 1e6 * self._base_rtt_ps / 1e12 / 8 / _WIRE_BYTES
        buffer = min(max(limit / bdp_pkts, _BUFFER_BDP[0]), _BUFFER_BDP[1]) if limit else _BUFFER_BDP[1]
        self._qdisc0 = dict(d.get("qdisc") or {"kind": "fifo"})
        kind = str(self._qdisc0.get("kind", "fifo"))

        self.rate = W.FloatLogSlider(value=rate_mbps, base=10, min=min(-1, math.floor(math.log10(rate_mbps))),
                                     max=max(4, math.ceil(math.log10(rate_mbps))), description="rate (Mbps)")  # fmt: skip
        self.delay = W.FloatSlider(value=delay_ms, min=0, max=max(300, math.ceil(delay_ms)), step=0.5, description="delay (ms)")
        self.loss = W.FloatSlider(value=100 * _loss_p(d.get("loss")), min=0, max=20, step=0.05, description="loss (%)")
        self.buffer = W.FloatLogSlider(value=buffer, base=10, min=math.log10(_BUFFER_BDP[0]),
                                       max=math.log10(_BUFFER_BDP[1]), step=0.05, description="buffer (BDP)")  # fmt: skip
        self.qdisc = W.Dropdown(options=sorted({*QDISC_KINDS, kind}), value=kind, description="qdisc")
        # The server's own list, a CC of one's own compiled into it included.
        self.ccs = W.SelectMultiple(options=sorted({*client.ccs(), *ccs}), value=tuple(ccs), rows=6, description="CCs")
        self.seeds = W.IntSlider(value=int(seeds), min=1, max=10, description="seeds")
        self.quantile = W.ToggleButtons(options=["p50", "p99"], value=quantile, description="RTT")
        self.run_button = W.Button(description="run", icon="play")
        self.status = W.HTML()
        self.table = W.HTML()
        self.out = W.Output()
        self._start = {"rate": self.rate.value, "delay": self.delay.value, "loss": self.loss.value,
                       "buffer": self.buffer.value, "qdisc": kind}  # fmt: skip
        self._colors: dict[str, str] = {}
        self.results = pd.DataFrame()
        self.run_button.on_click(self._on_run)
        self.quantile.observe(lambda _c: self.draw(), names="value")
        self.widget = W.VBox(
            [
                W.HBox([self.rate, self.delay, self.loss]),
                W.HBox([self.buffer, self.qdisc, self.seeds]),
                W.HBox([self.ccs, W.VBox([self.quantile, self.run_button])]),
                self.status,
                self.out,
                self.table,
            ]
        )
        self._fig: Any = None
        if run:
            self.run()

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a frontend
        from IPython.display import display

        display(self.widget)

    @property
    def figure(self) -> Any:
        """The plane's matplotlib Figure as last drawn (None before the first run): to save it, or to show it where widgets do not render."""
        return self._fig

    @staticmethod
    def _link(config: dict[str, Any], link: str, dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The link ``link`` of ``config`` and its direction ``dir`` (made if absent), in place."""
        for ln in config.get("links", []):
            if ln.get("id") == link:
                return ln, ln.setdefault(dir, {})
        raise ValueError(f"ccscope.widgets.plane: the scenario has no link {link!r}")

    def _moved(self, name: str) -> bool:
        return getattr(self, name).value != self._start[name]

    def settings(self) -> dict[str, Any]:
        """The path the controls set now: rate (Mbps), one-way delay (ms), loss (%), buffer (BDP), qdisc kind."""
        return {"rate_mbps": self.rate.value, "delay_ms": self.delay.value, "loss_pct": self.loss.value,
                "buffer_bdp": self.buffer.value, "qdisc": self.qdisc.value}  # fmt: skip

    def scenario(self, cc: str) -> dict[str, Any]:
        """The scenario one run of ``cc`` opens: the view's scenario with the controls' path and CC, summary only."""
        config = copy.deepcopy(self._config)
        config["runtime"] = {**config.get("runtime", {}), "duration": self.duration}
        config["trace"] = {"detail": "summary"}
        ln, d = self._link(config, self.link, self.dir)
        if self._moved("rate"):
            d["rate"] = f"{round(self.rate.value * 1000)}Kbps"
        if self._moved("delay"):
            us = f"{round(self.delay.value * 1000)}us"
            ln["delay"] = us
            for side in ("ab", "ba"):
                if "delay" in (ln.get(side) or {}):
                    ln[side]["delay"] = us
        if self._moved("loss"):
            d["loss"] = {"kind": "bernoulli", "p": self.loss.value / 100}
        if any(self._moved(c) for c in ("rate", "delay", "buffer", "qdisc")):
            kind = self.qdisc.value
            qd = dict(self._qdisc0) if kind == self._qdisc0.get("kind", "fifo") else {"kind": kind}
            qd["limit"] = f"{self._limit_pkts()}p"
            d["qdisc"] = qd
        for f in config["flows"]:
            if f.get("group" if self._group else "id") == self.flow:
                if f.get("cc") != cc:
                    f.pop("cc_params", None)  # another CC's module parameters
                f["cc"] = cc
        return config

    def _limit_pkts(self) -> int:
        """The buffer slider's BDPs in full-size packets, at the rate and base RTT the sliders set."""
        rtt_ps = self._base_rtt_ps + 2 * round((self.delay.value - self._start["delay"]) * _PS_PER_MS)
        bdp_pkts = self.rate.value * 1e6 * max(rtt_ps, 0) / 1e12 / 8 / _WIRE_BYTES
        return max(1, round(self.buffer.value * bdp_pkts))

    def run(self) -> None:
        """Run every picked CC over the seeds on the controls' path, then redraw."""
        import pandas as pd

        ccs, seeds = list(self.ccs.value), range(self._seed0, self._seed0 + int(self.seeds.value))
        if not ccs:
            self._say("pick one CC or more")
            return
        setting = int(self.results["setting"].max()) + 1 if len(self.results) else 0
        here = self.settings()
        for cc in ccs:
            self._colors.setdefault(cc, f"C{len(self._colors) % 10}")
        configs = {cc: self.scenario(cc) for cc in ccs}
        points = [(cc, seed) for cc in ccs for seed in seeds]
        rows, total = [], len(points)
        # A batch of sessions runs at once: the server gives each its own
        # goroutine, so the batch takes about the time of its slowest run
        # per core.
        for at in range(0, total, _PLANE_BATCH):
            batch = points[at : at + _PLANE_BATCH]
            self._say(f"running {at + 1}–{at + len(batch)} of {total} runs")
            sessions = []
            try:
                for cc, seed in batch:
                    sessions.append(self._client.open(configs[cc], seed=seed))
                self._client.call_many([("run", {"session": s.id}) for s in sessions])
                for (cc, seed), s in zip(batch, sessions):
                    for f in s.summary()["flows"]:
                        if not (f["id"].startswith(self.flow + "/") if self._group else f["id"] == self.flow):
                            continue
                        rows.append({"setting": setting, **here, "cc": cc, "seed": seed, "flow": f["id"],
                                     "goodput_bps": f["goodput_bps"], "rtt_p50_ps": f["rtt_p50_ps"],
                                     "rtt_p99_ps": f["rtt_p99_ps"], "retransmits": f["retransmits"],
                                     "base_rtt_ps": f["path_base_rtt_ps"], "bottleneck_bps": f["path_bottleneck_bps"]})  # fmt: skip
            finally:
                for s in sessions:
                    s.close()
        self.results = pd.concat([self.results, pd.DataFrame(rows)], ignore_index=True)
        what = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in here.items())
        ln = next(ln for ln in configs[ccs[0]]["links"] if ln.get("id") == self.link)
        qd = (ln.get(self.dir) or {}).get("qdisc")
        queue = json.dumps(qd) if qd else "the link's default"
        self._say(f"setting {setting}: {total} run{'s' * (total > 1)} of {self.duration} ({what}); queue {queue}")
        self.draw()

    def _on_run(self, _button: Any) -> None:
        # ipywidgets swallows a callback's exception into its log: a run the
        # server refuses (one longer than its limits allow) is said in the
        # status line instead.
        try:
            self.run()
        except ServerError as e:
            self._say(f"run refused: {e.message}")

    def draw(self) -> None:
        """Redraw the plane and the table from :attr:`results`."""
        import matplotlib.pyplot as plt

        from . import plot

        if self._fig is None:
            self._fig, self._ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
            plt.close(self._fig)  # drawn into the Output below, not by the inline backend
        ax = self._ax
        ax.clear()
        if len(self.results) == 0:
            return
        col = f"rtt_{self.quantile.value}_ps"
        last = int(self.results["setting"].max())
        now = self.results[self.results["setting"] == last]
        plot.plane(now, delay=col, colors=self._colors, ax=ax)
        means = now.groupby("cc")[[col, "goodput_bps"]].mean()
        if last > 0:
            before = self.results[self.results["setting"] == last - 1].groupby("cc")[[col, "goodput_bps"]].mean()
            for cc, b in before.iterrows():
                c = self._colors[cc]
                ax.scatter([b[col] / 1e9], [b["goodput_bps"] / 1e6], s=60, marker="D", facecolors="none", edgecolors=c, zorder=3)
                if cc in means.index:
                    m = means.loc[cc]
                    ax.annotate("", xy=(m[col] / 1e9, m["goodput_bps"] / 1e6), xytext=(b[col] / 1e9, b["goodput_bps"] / 1e6),
                                arrowprops={"arrowstyle": "->", "color": c, "lw": 1.2})  # fmt: skip
        ax.axvline(now["base_rtt_ps"].iloc[0] / 1e9, color="0.4", ls=":", lw=1, label="base RTT")
        ax.axhline(now["bottleneck_bps"].iloc[0] / 1e6, color="0.4", ls="--", lw=1, label="bottleneck rate")
        ax.legend(fontsize="small", loc="lower left")
        ax.set_title(f"setting {last}" + (" (hollow: setting before)" if last > 0 else ""))
        self.out.clear_output(wait=True)
        with self.out:
            from IPython.display import display

            display(self._fig)
        agg = now.groupby("cc", sort=False).agg(
            goodput_mbps=("goodput_bps", "mean"), rtt_p50_ms=("rtt_p50_ps", "mean"),
            rtt_p99_ms=("rtt_p99_ps", "mean"), retransmits=("retransmits", "mean"),
        )  # fmt: skip
        agg["goodput_mbps"] /= 1e6
        agg[["rtt_p50_ms", "rtt_p99_ms"]] /= 1e9
        self.table.value = agg.round(2).to_html()

    def _say(self, text: str) -> None:
        import html

        self.status.value = f"<code>{html.escape(text)}</code>"
