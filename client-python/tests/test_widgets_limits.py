"""The live view's queue-limit slider and qdisc dropdown show and keep the link's real limit."""

from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("ipywidgets")
mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from ccscope.widgets import LiveView  # noqa: E402

pytestmark = pytest.mark.server

SET = {"trace.detail": "change", "runtime.duration": "1s"}


def _qdisc(session):
    return [ln for ln in session.config["links"] if ln["id"] == "bottleneck"][0]["ab"]["qdisc"]


def _actions(session):
    return [a["action"] for a in session.checkpoint().data["actions"]]


@contextlib.contextmanager
def _view(client, seed, extra=None):
    """A LiveView on p-rtr-p; whatever session it drives at the end is closed."""
    view = LiveView(client.open("p-rtr-p", seed=seed, set={**SET, **(extra or {})}))
    try:
        yield view
    finally:
        view.session.close()


@pytest.mark.parametrize(
    "limit, pkts",
    [
        (None, 333),  # p-rtr-p's own: 1BDP, 100 Mbps x 40 ms = 500,000 B
        ("0.5BDP", 166),
        ("150KB", 100),
        ("64p", 64),
        ("40000p", 40000),  # above the slider's usual top
    ],
)
def test_the_limit_slider_starts_at_the_links_limit(client, limit, pkts):
    # Before, a BDP limit showed as 1000 packets.
    extra = None if limit is None else {"links.bottleneck.ab.qdisc.limit": limit}
    with _view(client, 1, extra) as view:
        assert view.queue_limit.value == pkts
        assert _actions(view.session) == [], "showing the limit acted"


def test_a_bdp_limit_off_the_bottleneck_is_the_engines(client):
    # access/ab is no flow's bottleneck. The engine sizes its BDP by the base
    # RTT of the first flow crossing it, f0's 40 ms: 1 Gbps x 40 ms =
    # 5,000,000 B, 3,333 packets. Before, the view took the link's own round
    # trip (2 ms) and showed 166.
    with client.open("p-rtr-p", seed=1, set={**SET, "links.access.ab.qdisc.limit": "1BDP"}) as s:
        assert s.queues["access/ab"] == {"limit_bytes": 5_000_000}
        assert LiveView(s, link="access").queue_limit.value == 3333


def test_a_forked_view_shows_the_limit_after_its_actions(client):
    with _view(client, 2) as view:
        view.session.step("100ms")
        view.queue_limit.value = 70
        view.checkpoint()
        parent = view.session
        view.fork()
        assert view.session.queues["bottleneck/ab"] == {"limit_packets": 70}
        assert view.queue_limit.value == 70
        parent.close()


def test_switching_qdisc_back_restores_the_scenarios_qdisc(client):
    with _view(client, 4) as view:
        view.rate.value = 20.0
        view.qdisc.value = "codel"
        # The other kind gets the limit the slider shows, in packets (CoDel
        # takes no byte limit); the run restarts from the scenario, so the
        # rate slider shows the scenario's rate again, without acting.
        assert _qdisc(view.session)["kind"] == "codel" and _qdisc(view.session)["limit"] == "333p"
        assert view.rate.value == pytest.approx(100.0) and view.queue_limit.value == 333
        assert _actions(view.session) == []
        view.qdisc.value = "fifo"
        # Before, fifo came back as 1000p, three times the scenario's 1BDP.
        assert _qdisc(view.session) == {"kind": "fifo", "limit": "1BDP"}
        assert view.queue_limit.value == 333
        # A limit set with the slider goes with the qdisc, back and forth.
        view.queue_limit.value = 50
        view.qdisc.value = "fq_codel"
        assert _qdisc(view.session)["limit"] == "50p" and view.queue_limit.value == 50
        view.qdisc.value = "fifo"
        assert _qdisc(view.session) == {"kind": "fifo", "limit": "50p"}


def test_a_fork_shows_the_checkpoints_path(client):
    with _view(client, 5) as view:
        view.tick()
        view.rate.value = 20.0
        view.queue_limit.value = 80
        view.checkpoint()
        view.rate.value = 30.0
        view.queue_limit.value = 90
        parent = view.session
        view.fork()
        # The sliders show the fork's path (the actions up to the
        # checkpoint), not the parent's later moves; showing them acted on nothing.
        assert view.rate.value == pytest.approx(20.0) and view.queue_limit.value == 80
        assert _actions(view.session) == [
            {"link": "bottleneck", "dir": "ab", "rate": "20Mbps"},
            {"link": "bottleneck", "dir": "ab", "queue_limit": "80p"},
        ]
        parent.close()


def test_a_bad_link_or_direction_is_refused(client):
    with client.open("p-rtr-p", seed=1, set=SET) as s:
        with pytest.raises(
            ValueError, match=r"link is 'bottelneck', not a link of the scenario \(access, bottleneck\)"
        ):
            LiveView(s, link="bottelneck")
        with pytest.raises(ValueError, match="dir is 'xy'; a link direction is 'ab' or 'ba'"):
            LiveView(s, dir="xy")
