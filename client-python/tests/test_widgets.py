"""ccscope.widgets.LiveView driven headlessly through its callbacks, against a real server."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from ccscope.widgets import LiveView  # noqa: E402

pytestmark = pytest.mark.server

SET = {"trace.detail": "sampled", "trace.interval": "10ms", "runtime.duration": "3s"}


def _actions(session):
    return [a["action"] for a in session.checkpoint().data["actions"]]


def test_controls_step_and_act_through_the_action_log(client):
    s = client.open("p-rtr-p", seed=2, set=SET)
    view = LiveView(s, tick="100ms")
    try:
        # The sliders start at the scenario's values: 100 Mbps, 19 ms, FIFO.
        assert view.rate.value == pytest.approx(100.0)
        assert view.delay.value == pytest.approx(19.0)
        assert view.qdisc.value == "fifo"
        view.step_button.click()
        assert s.sim_time_ps == 100 * 10**9
        view.play.value += 1  # what the Play widget does on each of its ticks
        assert s.sim_time_ps == 200 * 10**9
        view.speed.value = "500ms"
        view.tick()
        assert s.sim_time_ps == 700 * 10**9
        assert "0.700 s" in view.time.value
        view.rate.value = 10.0
        view.delay.value = 5.0
        view.loss.value = 1.0
        view.queue_limit.value = 50
        view.cwnd.value = 20
        view.cwnd_button.click()
        got = _actions(s)
        assert got == [
            {"link": "bottleneck", "dir": "ab", "rate": "10Mbps"},
            {"link": "bottleneck", "dir": "ab", "delay": "5ms"},
            {"link": "bottleneck", "dir": "ab", "loss": 0.01},
            {"link": "bottleneck", "dir": "ab", "queue_limit": "50p"},
            {"flow": "f0", "cwnd": 20},
        ]
        # After the cut to 10 Mbps the flow's delivery rate follows it down:
        # at most 10 · 1448/1500 Mbps of payload once the queue has drained.
        # And the link, not the 1 % loss, is what limits it: Mathis et al.
        # (1997) give MSS/RTT · sqrt(3/(2p)) = 1448 B / 12 ms · sqrt(150) =
        # 11.8 Mbps at p = 1 % and the new 12 ms base RTT (2 × (1 ms access +
        # 5 ms)), more than the link's 10 Mbps. So the rate is the link's
        # payload rate less the 1 % lost: at least 0.9 of it.
        view.run_for("1s")
        flows = s.signals("flows")
        last = flows.slice(flows.num_rows - 1).to_pylist()[0]
        payload_bps = 10e6 * 1448 / 1500
        assert 0.9 * payload_bps <= last["delivery_rate_bps"] <= payload_bps + 1, (
            f"delivery rate {last['delivery_rate_bps'] / 1e6:.2f} Mbps after the cut; the 10 Mbps link should "
            f"limit it to {0.9 * payload_bps / 1e6:.2f}–{payload_bps / 1e6:.2f} Mbps of payload")
        assert len(view.log) == 5
        # The rate panel draws the link's rate too: 100 Mbps, then the cut.
        link = next(ln for ln in view._axes[0].lines if ln.get_label() == "link rate")
        assert list(link.get_ydata()[[0, -1]]) == [100.0, 10.0]
    finally:
        view.session.close()


def test_checkpoint_then_fork_keeps_the_actions(client):
    s = client.open("p-rtr-p", seed=3, set=SET)
    view = LiveView(s, tick="200ms")
    try:
        view.tick()
        view.rate.value = 20.0
        view.tick()
        cp = view.checkpoint()
        view.tick()
        parent = view.session
        fork = view.fork()
        assert fork is view.session and fork.id != parent.id
        assert fork.sim_time_ps < parent.sim_time_ps and fork.digest == cp.data["digest"]
        assert _actions(fork) == [{"link": "bottleneck", "dir": "ab", "rate": "20Mbps"}]
        # Sliders now act on the fork, not on the parent.
        view.delay.value = 30.0
        assert len(_actions(fork)) == 2 and len(_actions(parent)) == 1
        parent.close()
    finally:
        view.session.close()


def test_qdisc_kind_restarts_the_run_with_that_qdisc(client):
    s = client.open("p-rtr-p", seed=4, set=SET)
    view = LiveView(s)
    try:
        view.tick()
        view.qdisc.value = "codel"
        assert view.session is not s and s.closed
        assert view.session.sim_time_ps == 0 and view.session.seed == 4
        qd = [ln for ln in view.session.config["links"] if ln["id"] == "bottleneck"][0]["ab"]["qdisc"]
        assert qd["kind"] == "codel"
        view.run_for("3s")
        assert view.session.done
        # Over the 3 s run CoDel keeps the median sojourn under its 5 ms
        # target, where the scenario's 1-BDP FIFO lets CUBIC hold a standing
        # queue of tens of milliseconds (24 ms median with this seed).
        q = [x for x in view.session.summary()["queues"] if (x["link"], x["dir"]) == ("bottleneck", "ab")][0]
        assert q["sojourn_p50_ps"] < 5e9
    finally:
        view.session.close()


def test_fork_without_checkpoint_is_refused(client):
    s = client.open("p-rtr-p", set=SET)
    view = LiveView(s)
    try:
        view.fork_button.click()
        assert "take a checkpoint before forking" in view.status.value and view.session is s
        with pytest.raises(RuntimeError, match="checkpoint"):
            view.fork()
    finally:
        s.close()


def test_sojourn_panel_leaves_out_enqueue_rows(client):
    # The queue table's enqueue rows carry no sojourn (0); drawn, they made
    # the line drop to 0 while the queue held a hundred packets and more.
    s = client.open("p-rtr-p", seed=2, set=SET)
    view = LiveView(s, tick="1s")
    try:
        view.run_for("2s")
        line = view._axes[3].lines[0]
        assert line.get_label() == "sojourn" and len(line.get_ydata()) > 10
        assert (line.get_ydata() > 0).all()
    finally:
        s.close()


def test_set_cwnd_refused_is_said_in_the_status_line(client):
    # A flow that takes no cwnd (rrul's ping probe; a group's flow not yet
    # started is refused alike): the button's callback says so rather than
    # raising out of ipywidgets.
    s = client.open("rrul", set={"runtime.duration": "1s"})
    view = LiveView(s, tick="10ms")
    try:
        later = [f for f in view.flows if f != view.flows[0]]
        view.cwnd_flow.value = later[-1]
        view.cwnd_button.click()
        assert "set cwnd:" in view.status.value
    finally:
        s.close()


def test_sliders_take_in_the_paths_own_values(client):
    # A slider is the widget's only readout of the path: dc-incast's 25 Gbps
    # read 10,000 Mbps on a slider that ended there, and a 30 % loss 20 %.
    for name, set_, slider, want in (
        ("dc-incast", {}, "rate", 25_000.0),
        ("rebbr", {"links.bottleneck.ab.loss.p": 0.3}, "loss", 30.0),
    ):
        s = client.open(name, set=set_)
        try:
            assert getattr(LiveView(s, tick="10ms"), slider).value == pytest.approx(want)
        finally:
            s.close()


def test_an_unlimited_fifo_starts_the_limit_slider_at_its_top(client):
    # A FIFO with "limit": "unlimited" has no limit for the server to report;
    # the slider stands at its top for it, says so, and a move sets a limit.
    s = client.open("p-rtr-p", set={**SET, "links.bottleneck.ab.qdisc.limit": "unlimited"})
    try:
        view = LiveView(s, tick="100ms")
        assert view.queue_limit.value == view.queue_limit.max == 20000
        assert "unlimited" in view.status.value
        view.queue_limit.value = 50
        assert {"link": "bottleneck", "dir": "ab", "queue_limit": "50p"}.items() <= _actions(s)[-1].items()
    finally:
        s.close()
