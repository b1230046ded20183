"""ccscope.plot on hand-made tables (no server): layout, units, and the helpers' arithmetic."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from ccscope import plot  # noqa: E402

PS = 10**12
MS = 10**9


def flows_table():
    # f0 in slow start, then a loss episode from 0.5 s to 0.7 s.
    t = [0, 100 * MS, 200 * MS, 500 * MS, 700 * MS, 1000 * MS]
    ca = ["open", "open", "open", "recovery", "open", "open"]
    n = len(t)
    return pa.table({
        "t_ps": pa.array(t, pa.int64()), "flow": ["f0"] * n,
        "cwnd_pkts": pa.array([10, 20, 40, 28, 28, 30], pa.uint32()),
        "ssthresh_pkts": pa.array([2**31 - 1] * 3 + [28] * 3, pa.uint32()),
        "inflight_bytes": pa.array([0] * n, pa.int64()),
        "inflight_pkts": pa.array([10, 20, 40, 30, 28, 30], pa.uint32()),
        "srtt_ps": pa.array([0, 40 * MS, 41 * MS, 60 * MS, 50 * MS, 45 * MS], pa.int64()),
        "rttvar_ps": pa.array([0] * n, pa.int64()),
        "min_rtt_ps": pa.array([0] + [40 * MS] * 5, pa.int64()),
        "pacing_rate_bps": pa.array([0] * n, pa.int64()),
        "delivery_rate_bps": pa.array([0, 10**6, 5 * 10**6, 8 * 10**6, 7 * 10**6, 7 * 10**6], pa.int64()),
        "delivered_pkts": pa.array([0, 10, 30, 70, 100, 150], pa.uint64()),
        "lost_pkts": pa.array([0, 0, 0, 2, 2, 2], pa.uint64()),
        "retrans_pkts": pa.array([0, 0, 0, 2, 2, 2], pa.uint64()),
        "ca_state": ca,
    })  # fmt: skip


def events_table():
    return pa.table({
        "t_ps": pa.array([450 * MS, 500 * MS, 520 * MS, 600 * MS], pa.int64()), "flow": ["f0"] * 4,
        "kind": ["drop", "sack", "retransmit", "rto"], "seq": pa.array([1, 2, 3, 4], pa.int64()),
        "len": pa.array([1448] * 4, pa.int32()),
    })  # fmt: skip


def signals_table():
    return pa.table({
        "t_ps": pa.array([0, 500 * MS, 0, 300 * MS], pa.int64()), "flow": ["f0"] * 4,
        "signal": ["bic_target", "bic_target", "delay_min", "delay_min"],
        "value": pa.array([10.0, 40.0, 40000.0, 40000.0]),
    })  # fmt: skip


def test_flow_view_has_four_panels_on_one_time_axis_with_units():
    fig = plot.flow(flows_table(), "f0", events=events_table(), signals=signals_table(), bdp_pkts=33)
    axes = fig.axes
    rate, win, ev, ca, rtt = axes[:5]
    assert rate.get_ylabel() == "rate (Mbps)"
    assert win.get_ylabel() == "packets"
    assert rtt.get_ylabel() == "RTT (ms)" and rtt.get_xlabel() == "time (s)"
    for ax in (win, ev, ca, rtt):
        assert ax.get_shared_x_axes().joined(rate, ax), "panels do not share the time axis"
    # the BDP line sits at 33 packets
    assert any(list(line.get_ydata()) == [33, 33] for line in win.get_lines())
    # CUBIC's bic_target, a window in packets, is drawn on the window panel
    assert "bic_target (CC)" in [t.get_text() for t in win.get_legend().get_texts()]
    # one tick row per event kind present
    assert [t.get_text() for t in ev.get_yticklabels()] == ["sack", "rto", "retransmit", "drop"]
    # the CA timeline: open [0, 0.5), recovery [0.5, 0.7), open [0.7, 1.0]
    spans = []
    for coll in ca.collections:
        for path in coll.get_paths():
            xs = path.vertices[:, 0]
            spans.append((round(xs.min(), 6), round(xs.max() - xs.min(), 6)))
    assert sorted(spans) == [(0.0, 0.5), (0.5, 0.2), (0.7, 0.3)], f"CA spans {sorted(spans)}"
    matplotlib.pyplot.close(fig)


def test_flow_view_draws_delay_estimators_in_ms_beside_srtt():
    sig = pa.table({
        "t_ps": pa.array([0, 300 * MS, 0, 300 * MS, 0, 500 * MS], pa.int64()), "flow": ["f0"] * 6,
        "signal": ["delay_min", "delay_min", "hystart_curr_rtt", "hystart_curr_rtt", "bw", "bw"],
        "value": pa.array([40136.0, 40136.0, 2.0**32 - 1, 41000.0, 5e6, 8e6]),
    })  # fmt: skip
    fig = plot.flow(flows_table(), "f0", signals=sig)
    rtt = fig.axes[4]
    lines = {ln.get_label(): ln for ln in rtt.get_lines()}
    # µs to ms on the RTT axis itself; the kernel's "no sample" is not drawn
    assert list(lines["delay_min (CC, ms)"].get_ydata()) == [40.136, 40.136], lines["delay_min (CC, ms)"].get_ydata()
    assert list(lines["hystart_curr_rtt (CC, ms)"].get_ydata()) == [41.0]
    # the rate estimator alone stays on the relative axis
    twin = [ax for ax in fig.axes[5:] if ax.get_ylabel() == "CC estimator / its max"]
    assert len(twin) == 1 and [ln.get_label() for ln in twin[0].get_lines()] == ["bw (÷ 8e+06)"]
    matplotlib.pyplot.close(fig)
    # asked for by name: a delay estimator alone needs no second axis
    fig = plot.flow(flows_table(), "f0", signals=sig, estimators=["delay_min"])
    assert "delay_min (CC, ms)" in [ln.get_label() for ln in fig.axes[4].get_lines()]
    assert not [ax for ax in fig.axes if ax.get_ylabel() == "CC estimator / its max"]
    matplotlib.pyplot.close(fig)


def test_flow_view_leaves_out_placeholders_before_a_sample():
    # Westwood starts rtt_min at TCP_WESTWOOD_INIT_RTT (20 s, which squashed
    # the RTT axis); BBRv3's bw_lo is infinite until a loss bounds it (the
    # legend read "÷ inf", and numpy warned).
    sig = pa.table({
        "t_ps": pa.array([0, 300 * MS, 0, 300 * MS, 500 * MS], pa.int64()), "flow": ["f0"] * 5,
        "signal": ["rtt_min", "rtt_min", "bw_lo", "bw_lo", "bw_lo"],
        "value": pa.array([20000.0, 40.0, np.inf, 6e6, 4e6]),
    })  # fmt: skip
    with np.errstate(all="raise"):
        fig = plot.flow(flows_table(), "f0", signals=sig, estimators=["rtt_min", "bw_lo"])
    lines = {ln.get_label(): ln for ln in fig.axes[4].get_lines()}
    assert list(lines["rtt_min (CC, ms)"].get_ydata()) == [40.0]
    twin = [ax for ax in fig.axes[5:] if ax.get_ylabel() == "CC estimator / its max"]
    assert [ln.get_label() for ln in twin[0].get_lines()] == ["bw_lo (÷ 6e+06)"]
    assert list(twin[0].get_lines()[0].get_ydata()) == [1.0, 4e6 / 6e6]
    matplotlib.pyplot.close(fig)


def test_flow_view_without_rows_says_so():
    with pytest.raises(ValueError, match="no rows"):
        plot.flow(flows_table(), "f9")
    # A split flow's id names its legs, which have the rows.
    legs = flows_table().set_column(1, "flow", pa.array(["f9.0"] * 3 + ["f9.1"] * 3))
    with pytest.raises(ValueError, match="split by a proxy .* plot one: 'f9.0' or 'f9.1'"):
        plot.flow(legs, "f9")


def test_compare_draws_a_line_per_flow_and_a_split_flows_legs():
    two = flows_table().set_column(1, "flow", pa.array(["a/0", "a/1"] * 3))
    fig = plot.compare({"run": two}, flow=None)
    assert sorted(ln.get_label() for ln in fig.axes[0].get_lines()) == ["run · a/0", "run · a/1"]
    matplotlib.pyplot.close(fig)
    legs = flows_table().set_column(1, "flow", pa.array(["f9.0"] * 3 + ["f9.1"] * 3))
    fig = plot.compare({"run": legs}, flow="f9")
    assert sorted(ln.get_label() for ln in fig.axes[0].get_lines()) == ["run · f9.0", "run · f9.1"]
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == [10, 20, 40]
    matplotlib.pyplot.close(fig)
    fig = plot.compare({"run": flows_table()})  # one flow: its label alone
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == ["run"]
    matplotlib.pyplot.close(fig)


def test_queue_view_marks_drops():
    q = pa.table({
        "t_ps": pa.array([0, 10 * MS, 20 * MS, 30 * MS], pa.int64()), "link": ["b"] * 4, "dir": ["ab"] * 4,
        "backlog_bytes": pa.array([0, 1500, 3000, 1500], pa.int64()), "backlog_pkts": pa.array([0, 1, 2, 1], pa.int64()),
        "sojourn_ps": pa.array([0, 0, 0, 120 * 10**6], pa.int64()),
        "drops": pa.array([0, 0, 1, 1], pa.uint64()), "marks": pa.array([0] * 4, pa.uint64()),
    })  # fmt: skip
    fig = plot.queue(q, link="b")
    ax_b, ax_s = fig.axes[0], fig.axes[1]
    assert ax_b.get_ylabel() == "backlog (KB)" and ax_s.get_ylabel() == "sojourn (ms)"
    assert "drops (1)" in [t.get_text() for t in ax_s.get_legend().get_texts()]
    matplotlib.pyplot.close(fig)
    with pytest.raises(ValueError):
        plot.queue(q, link="other")


def test_thin_keeps_the_envelope():
    t = np.arange(100_000, dtype=float)
    y = np.zeros_like(t)
    y[54_321] = 7.0  # a one-sample spike must survive thinning
    y[12_345] = -3.0
    tt, yy = plot._thin(t, y, n=300)
    assert len(tt) <= 302
    assert yy.max() == 7.0 and yy.min() == -3.0
    assert tt[0] == 0 and tt[-1] == 99_999


def test_rate_from_counter():
    # 1,250,000 bytes per 100 ms is 100 Mbps
    t = np.array([0.0, 0.1, 0.2, 0.3])
    b = np.array([0.0, 1.25e6, 2.5e6, 3.75e6])
    x, r = plot._rate_from_counter(t, b, 0.1)
    assert np.allclose(r, 100.0)


def test_path_bdp_reads_the_servers_facts():
    # p-rtr-p as the server reports it: 100 Mbps bottleneck, 2 x 20 ms RTT
    class _S:
        paths = {"f0": {"flow": "f0", "bottleneck": "bottleneck/ab", "bottleneck_bps": 100_000_000,
                        "base_rtt_ps": 40_000_000_000, "bdp_bytes": 500_000}}  # fmt: skip

    rate, rtt = plot.path_bdp(_S(), "f0")
    assert rate == 100e6 and rtt == pytest.approx(0.040)
    assert plot.path_bdp(_S(), "nope") is None
    summary = {"flows": [{"id": "f1", "path_bottleneck_bps": 10_000_000, "path_base_rtt_ps": 20_000_000_000}]}
    assert plot.path_bdp(summary, "f1") == (10e6, pytest.approx(0.020))
    assert plot.path_bdp(summary, "f0") is None


def test_sim_vs_kernel_draws_cc_signals_and_says_which_side_has_none(tmp_path):
    import pyarrow.parquet as pq

    for stem in ("sim", "kernel"):
        pq.write_table(flows_table(), tmp_path / f"{stem}-seed1.flows.parquet")
    # BBR leaves STARTUP at 0.66 s in the simulator, at 0.67 s on the kernel; only the kernel counts rtt_cnt
    pq.write_table(pa.table({
        "t_ps": pa.array([0, 660 * MS], pa.int64()), "flow": ["f0"] * 2, "signal": ["mode"] * 2,
        "value": pa.array([0.0, 1.0]),
    }), tmp_path / "sim-seed1.signals.parquet")  # fmt: skip
    pq.write_table(pa.table({
        "t_ps": pa.array([80 * MS, 80 * MS, 670 * MS], pa.int64()), "flow": ["f0"] * 3,
        "signal": ["mode", "rtt_cnt", "mode"], "value": pa.array([0.0, 1.0, 1.0]),
    }), tmp_path / "kernel-seed1.signals.parquet")  # fmt: skip
    fig = plot.sim_vs_kernel(str(tmp_path), signals=["mode", "rtt_cnt"])
    axes = fig.axes
    assert len(axes) == 5 and [ax.get_ylabel() for ax in axes[3:]] == ["mode", "rtt_cnt"]
    mode = axes[3]
    assert [list(line.get_xdata()) for line in mode.get_lines()] == [[0.0, 0.66], [0.08, 0.67]]
    assert [t.get_text() for t in mode.get_legend().get_texts()] == ["simulator", "Linux kernel"]
    rtt_cnt = axes[4]
    assert len(rtt_cnt.get_lines()) == 1
    assert "no rtt_cnt rows: simulator" in [t.get_text() for t in rtt_cnt.texts]
    assert fig.get_size_inches()[1] == pytest.approx(12)
    matplotlib.pyplot.close(fig)


def test_plane_draws_each_schemes_mean_and_one_sigma_ellipse():
    # Scheme a's four runs sit at the corners of a square, 10 ms and 10 Mbps
    # from (20 ms, 60 Mbps): covariance diag(400/3, 400/3) with n - 1, so
    # its ellipse is a circle of radius sqrt(400/3) = 11.547 about the mean.
    # Scheme b's one run has a mean and no ellipse.
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({
        "cc": ["a"] * 4 + ["b"],
        "rtt_p99_ps": [10 * MS, 30 * MS, 10 * MS, 30 * MS, 80 * MS],
        "goodput_bps": [50e6, 50e6, 70e6, 70e6, 90e6],
    })  # fmt: skip
    ax = plot.plane(df).axes[0]
    assert ax.get_xscale() == "log" and ax.xaxis_inverted()
    assert ax.get_xlabel().startswith("rtt_p99 (ms)") and ax.get_ylabel() == "goodput (Mbps)"
    (ring,) = ax.patches
    v = ring.get_xy()
    r = np.sqrt(400 / 3)
    assert np.allclose([v[:, 0].min(), v[:, 0].max()], [20 - r, 20 + r], atol=0.02)
    assert np.allclose([v[:, 1].min(), v[:, 1].max()], [60 - r, 60 + r], atol=0.02)
    assert np.allclose(np.hypot(v[:, 0] - 20, v[:, 1] - 60), r)
    means = {t.get_text(): None for t in ax.get_legend().get_texts()}
    assert list(means) == ["a", "b"]
    marks = [c.get_offsets()[0].tolist() for c in ax.collections if c.get_offsets().shape[0] == 1 and c.get_sizes()[0] == 60]
    assert marks == [[20.0, 60.0], [80.0, 90.0]]
    with pytest.raises(KeyError, match="no column 'rtt_p95_ps'"):
        plot.plane(df, delay="rtt_p95_ps")
    with pytest.raises(ValueError, match="0 or less"):
        plot.plane(df.assign(rtt_p99_ps=0))
