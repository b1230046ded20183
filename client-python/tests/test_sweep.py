"""Sweeps on the local process pool against real servers."""

from __future__ import annotations

import json
import os
import subprocess
import warnings

import ccscope
import pytest
from ccscope.sweeps import run_spec

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.server

MBPS = 10**6


def test_grid_is_the_cartesian_product():
    assert ccscope.grid(a=[1, 2], b=("x", "y")) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    # A single value is one value, as in a spec file's grid: a string is
    # not split into characters, nor a map into its keys.
    assert ccscope.grid(cc="cubic", tcp={"hz": 250}, n=3) == [{"cc": "cubic", "tcp": {"hz": 250}, "n": 3}]


def test_spec_sweep_returns_the_catalog(binary_env, tmp_path):
    # A 120 Mbps pump through a bottleneck of rate R delivers min(120, R)
    # Mbps once the first packet has arrived, which takes 20 ms of
    # propagation plus its serialisation at 1 Gbps and at R; goodput counts
    # from the first send to the end of the 2 s run.
    rates = [30, 60, 90, 150]
    spec = {"scenario": "pump", "set": {"runtime.duration": "2s"}}
    path = tmp_path / "cat.parquet"
    cat = ccscope.sweep(
        spec, {"links.bottleneck.rate": [f"{r}Mbps" for r in rates]}, processes=2, progress=False, catalog=path
    )
    assert isinstance(cat, pd.DataFrame) and len(cat) == 4
    by_rate = dict(zip(cat["links.bottleneck.rate"], cat["goodput_bps"] / MBPS))
    got = [by_rate[f"{r}Mbps"] for r in rates]
    want = [min(120, r) * (2 - 0.020 - 12000 / 1e9 - 12000 / (r * 1e6)) / 2 for r in rates]
    assert got == pytest.approx(want, rel=1e-4), f"goodputs {got}, want {want}"
    assert set(cat["cc"]) == {"pump"} and cat["digest"].str.len().eq(16).all()
    pl = pytest.importorskip("polars")
    assert cat.to_polars().shape == cat.shape and isinstance(cat.to_polars(), pl.DataFrame)
    # Resume: a second seed axis reruns only the new runs; the first four
    # rows come back unchanged.
    more = ccscope.sweep(
        spec,
        {"links.bottleneck.rate": [f"{r}Mbps" for r in rates]},
        seeds=[1, 2],
        processes=2,
        progress=False,
        catalog=path,
    )
    assert len(more) == 8
    assert more.iloc[:4]["digest"].tolist() == cat["digest"].tolist()


def test_spec_sweep_reads_a_dicts_files_from_the_working_directory(binary_env, tmp_path, monkeypatch):
    # The pump into a Mahimahi trace of 1 or 2 opportunities a millisecond
    # (12 or 24 Mbps), the trace file named relative to the working
    # directory as ccscope.open reads it, though the spec goes to
    # `ccscope sweep` as a file of its own.
    raw = json.loads(subprocess.run([os.environ["CCSCOPE_BIN"], "scenarios", "--show", "pump"],
                                    capture_output=True, check=True).stdout)
    raw["links"][1]["ab"]["trace"] = {"file": "one.trace"}
    (tmp_path / "one.trace").write_text("1\n")
    (tmp_path / "two.trace").write_text("1\n1\n")
    monkeypatch.chdir(tmp_path)
    spec = {"scenario": raw, "until": "2s"}
    cat = ccscope.sweep(spec, {"links.bottleneck.ab.trace.file": ["one.trace", "two.trace"]}, progress=False)
    got = dict(zip(cat["links.bottleneck.ab.trace.file"], cat["goodput_bps"] / MBPS))
    want = {"one.trace": 12 * (2 - 0.021) / 2, "two.trace": 24 * (2 - 0.021) / 2}
    assert got == pytest.approx(want, rel=0.01)
    # A built-in with the trace in the grid reads it there too.
    cat = ccscope.sweep({"scenario": "pump", "until": "2s", "set": {"links.bottleneck.ab.trace.file": "one.trace"}},
                        {"links.bottleneck.ab.trace.file": ["two.trace"]}, progress=False)
    assert cat["goodput_bps"].iloc[0] / MBPS == pytest.approx(want["two.trace"], rel=0.01)


def test_axes_catalog_plots(binary_env, tmp_path):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import ccscope.plot

    spec = {"scenario": "p-rtr-p", "until": "1s"}
    cat = ccscope.sweep(
        spec,
        {"flows.f0.cc": ["cubic", "reno"]},
        axes={"links.bottleneck.delay": ["5ms", "19ms"], "links.bottleneck.rate": ["50Mbps", "100Mbps"]},
        seeds="1-2",
        progress=True,
        report_dir=tmp_path / "rep",
    )
    # 2 CCs × (2 + 2 axis values) × 2 seeds; the baseline (19 ms, 100 Mbps)
    # is a point of both axes, run once and catalogued under each.
    assert len(cat) == 16
    assert sorted(cat["axis"].unique()) == ["links.bottleneck.delay", "links.bottleneck.rate"]
    assert (tmp_path / "rep" / "index.html").is_file()
    assert all((tmp_path / "rep" / r).is_file() for r in cat["report"])
    fig = ccscope.plot.catalog(cat, x="links.bottleneck.delay", y="goodput_bps", hue="cc")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "goodput (Mbps)" and len(ax.get_lines()) == 2


def _max_backlog(client, *, limit, seed):
    with client.open("pump", seed=seed, set={"runtime.duration": "1s", "links.bottleneck.ab.qdisc.limit": limit}) as s:
        s.run(progress=False)
        q = [x for x in s.summary()["queues"] if x["link"] == "bottleneck" and x["dir"] == "ab"][0]
        return q["max_backlog_bytes"]


def test_function_sweep_with_a_shared_url(client):
    # Workers connect to an existing server; the FIFO's peak backlog is its
    # limit in whole 1500 B packets.
    points = [{"limit": f"{n}p", "seed": 7} for n in (10, 50, 100)]
    res = ccscope.sweep(_max_backlog, points, processes=2, progress=True, url=client._server.url)
    assert res == [15_000, 75_000, 150_000]


def test_a_failing_point_raises(binary_env):
    with pytest.raises(ccscope.errors.InvalidConfig, match="links.bottleneck.rate=lots"):
        ccscope.sweep({"scenario": "pump"}, [{"links.bottleneck.rate": "lots"}], processes=1, progress=False)


def test_an_unknown_scenario_is_not_found(binary_env):
    # As Client.open raises it; it was a plain CcscopeError.
    with pytest.raises(ccscope.errors.NotFound, match='no built-in scenario "nosuch"') as e:
        ccscope.sweep({"scenario": "nosuch"}, [{"links.bottleneck.rate": "10Mbps"}], processes=1, progress=False)
    assert e.value.path == "scenario"


def test_dask_sweep_matches_the_local_pool(client):
    distributed = pytest.importorskip("dask.distributed")
    spec = {"scenario": "pump", "set": {"runtime.duration": "1s"}}
    points = [{"links.bottleneck.rate": r} for r in ("20Mbps", "80Mbps")]
    local = ccscope.sweep(spec, points, processes=2, progress=False)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as dc:
            remote = ccscope.sweep(spec, points, client=dc, progress=False, url=client._server.url)
    assert remote["digest"].tolist() == local["digest"].tolist()
    assert remote["goodput_bps"].tolist() == local["goodput_bps"].tolist()


def test_dask_spec_sweep_sends_the_files_from_here(client, tmp_path, monkeypatch):
    # The Dask worker runs where the cluster started, a directory with no
    # scenario or trace: the spec's scenario file and the traces its points
    # name (12 or 24 Mbps, as above) are read here and travel with them.
    distributed = pytest.importorskip("dask.distributed")
    raw = json.loads(subprocess.run([os.environ["CCSCOPE_BIN"], "scenarios", "--show", "pump"],
                                    capture_output=True, check=True).stdout)
    raw["links"][1]["ab"]["trace"] = {"file": "one.trace"}
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (here / "scn.json").write_text(json.dumps(raw))
    (here / "one.trace").write_text("1\n")
    (here / "two.trace").write_text("1\n1\n")
    monkeypatch.chdir(there)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        monkeypatch.chdir(here)
        with distributed.Client(cluster) as dc:
            assert dc.run(os.getcwd) == {w: str(there) for w in dc.scheduler_info()["workers"]}
            cat = ccscope.sweep({"scenario": "scn.json", "until": "2s"},
                                {"links.bottleneck.ab.trace.file": ["one.trace", "two.trace"]},
                                client=dc, progress=False, url=client._server.url)
    got = dict(zip(cat["links.bottleneck.ab.trace.file"], cat["goodput_bps"] / MBPS))
    assert got == pytest.approx({"one.trace": 12 * (2 - 0.021) / 2, "two.trace": 24 * (2 - 0.021) / 2}, rel=0.01)


def test_run_spec_sends_a_point_the_files_it_names(client):
    # Given three traces, a point is sent those the scenario and it name,
    # so the server has no unnamed file to note (a warning per point).
    raw = json.loads(subprocess.run([os.environ["CCSCOPE_BIN"], "scenarios", "--show", "pump"],
                                    capture_output=True, check=True).stdout)
    raw["links"][1]["ab"]["trace"] = {"file": "one.trace"}
    files = {"one.trace": "1\n", "two.trace": "1\n1\n", "three.trace": "1\n1\n1\n"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run_spec(client, {"scenario": raw, "until": "2s"}, {"links.bottleneck.ab.trace.file": "two.trace"},
                       files=files)
    assert got["flows"][0]["goodput_bps"] / MBPS == pytest.approx(24 * (2 - 0.021) / 2, rel=0.01)
