"""ccscope.widgets.PlaneView driven headlessly through its controls, against a real server."""

from __future__ import annotations

import subprocess

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("pandas")
mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from ccscope.widgets import PlaneView  # noqa: E402

pytestmark = pytest.mark.server


def test_the_cc_selector_offers_the_servers_ccs(client, server_binary):
    # The server's list is the binary's, as `ccscope scenarios --ccs` prints it.
    out = subprocess.run([str(server_binary), "scenarios", "--ccs"], capture_output=True, text=True, check=True).stdout
    assert client.ccs() == out.split()
    view = PlaneView(client, "p-rtr-p", ccs=("cubic",), seeds=1, duration="1s", run=False)
    assert list(view.ccs.options) == out.split() and view.ccs.value == ("cubic",)


def test_a_fifo_full_at_its_peak_sets_cubics_tail_and_not_bbrs_median(client):
    # p-rtr-p at 20 Mbps: base RTT 40 ms (2 × (1 + 19 ms)). CUBIC fills its
    # drop-tail FIFO before each loss, so its peak RTT is the base RTT plus
    # the full buffer's drain time, B / C = buffer_bdp × 40 ms: 80 ms at 1
    # BDP, 200 ms at 4. BBR paces at its bandwidth estimate and keeps about
    # a BDP in flight, so its median RTT stays near the base RTT, whatever
    # the buffer (within the quarter BDP its 1.25 probing phase queues).
    view = PlaneView(client, "p-rtr-p", ccs=("cubic", "bbr"), seeds=2, duration="6s", run=False)
    assert view.rate.value == pytest.approx(100.0) and view.buffer.value == pytest.approx(1.0, rel=0.01)
    view.rate.value = 20.0
    for setting, bdp in enumerate((1.0, 4.0)):
        view.buffer.value = bdp
        view.run()
        now = view.results[view.results["setting"] == setting]
        assert len(now) == 4 and set(now["seed"]) == {1, 2}
        assert (now["base_rtt_ps"] == 40 * 10**9).all() and (now["bottleneck_bps"] == 20 * 10**6).all()
        cubic, bbr = now[now["cc"] == "cubic"], now[now["cc"] == "bbr"]
        assert cubic["rtt_p99_ps"].mean() / 1e9 == pytest.approx(40 * (1 + bdp), rel=0.05)
        assert bbr["rtt_p50_ps"].mean() / 1e9 < 40 * 1.25
        # Both fill the link: payload at 1448/1500 of 20 Mbps, less slow start.
        assert (now["goodput_bps"] > 0.9 * 20e6 * 1448 / 1500).all()
    assert view.scenario("cubic")["links"][1]["ab"]["qdisc"] == {"kind": "fifo", "limit": f"{round(4 * 20e6 * 0.040 / 8 / 1500)}p"}
    # The plane: this setting's means, the last one's hollow, an arrow each.
    ax = view._ax
    assert ax.get_xscale() == "log" and ax.xaxis_inverted()
    assert len([t for t in ax.texts if t.arrow_patch is not None]) == 2
    assert "setting 1" in view.status.value and "cubic" in view.table.value


def test_loss_moves_cubic_down_and_leaves_bbr(client):
    # 1 % random loss: Mathis et al. put Reno-like flows at MSS/RTT · sqrt(3/(2p))
    # = 1448 B / 40 ms · 12.2 = 3.5 Mbps, far under the link's 20 Mbps; BBR
    # does not read loss as congestion and keeps near the link's rate.
    view = PlaneView(client, "p-rtr-p", ccs=("cubic", "bbr"), seeds=1, duration="10s", run=False)
    view.rate.value = 20.0
    view.loss.value = 1.0
    view.run()
    got = view.results.set_index("cc")["goodput_bps"]
    assert got["cubic"] < 0.5 * 20e6
    assert got["bbr"] > 0.8 * 20e6 * 1448 / 1500
    assert view.scenario("bbr")["links"][1]["ab"]["loss"] == {"kind": "bernoulli", "p": 0.01}


def test_untouched_controls_leave_the_scenario_and_bad_arguments_are_refused(client):
    view = PlaneView(client, "bufferbloat", ccs=("reno",), seeds=1, duration="1s", run=False)
    base = client.open("bufferbloat")
    try:
        want = base.config
    finally:
        base.close()
    got = view.scenario("cubic")
    assert got["links"] == want["links"] and got["runtime"]["duration"] == "1s"
    view.qdisc.value = "fq_codel"
    assert view.scenario("cubic")["links"][1]["ab"]["qdisc"]["kind"] == "fq_codel"
    for kwargs, match in (
        ({"link": "nope"}, "not a link"),
        ({"flow": "f9"}, "neither a flow nor a group"),
        ({"dir": "up"}, "a link direction"),
        ({"seeds": 0}, "1 to 10"),
        ({"quantile": "p95"}, "'p50' or 'p99'"),
        ({"ccs": "cubic"}, "a list"),
    ):
        with pytest.raises(ValueError, match=match):
            PlaneView(client, "p-rtr-p", run=False, **kwargs)
    with pytest.raises(ValueError, match="no fixed rate"):
        PlaneView(client, "cellular", run=False)
    with pytest.raises(ValueError, match="a capacity process"):
        PlaneView(client, "leo-handover", run=False)
    with pytest.raises(ValueError, match=r"neither a flow nor a group .*\(group up, group down, ping\)"):
        PlaneView(client, "rrul", flow="up/0", run=False)


def test_a_refused_run_is_said_in_the_status_line(client):
    # Runs longer than the server allows (max_sim_time_ps, a day by default)
    # are refused when they open: the run button's callback says so rather
    # than losing it in the widget's log.
    view = PlaneView(client, "p-rtr-p", ccs=("reno",), seeds=1, duration="172800s", run=False)
    view.run_button.click()
    assert "run refused" in view.status.value, view.status.value
    assert len(view.results) == 0


def test_a_group_is_drawn_flow_by_flow(client):
    # rrul's four down flows share the 20 Mbps direction: each run gives four
    # dots, each flow delivers, and together they carry at most its payload
    # rate, 20 · 1448/1500. (Their ACKs queue behind the up flows in the
    # 5 Mbps direction's 1000-packet FIFO, 2.4 s of it when full, so in 4 s
    # they are far from filling the link.)
    view = PlaneView(client, "rrul", link="bottleneck", dir="ba", flow="down", ccs=("cubic", "reno"), seeds=1,
                     duration="4s", run=False)
    assert view.rate.value == pytest.approx(20.0)
    view.run()
    r = view.results
    assert sorted(r["flow"].unique()) == [f"down/{i}" for i in range(4)] and len(r) == 8
    for cc, g in r.groupby("cc"):
        assert (g["goodput_bps"] > 0).all() and g["goodput_bps"].sum() <= 20e6 * 1448 / 1500, (cc, g["goodput_bps"].tolist())
    assert {f["cc"] for f in view.scenario("bbr")["flows"] if f.get("group") == "down"} == {"bbr"}
    assert {f["cc"] for f in view.scenario("bbr")["flows"] if f.get("group") == "up"} == {"cubic"}
