"""Sweeps on the local process pool against real servers."""

from __future__ import annotations

import ccscope
import pytest

pytestmark = pytest.mark.server

MBPS = 10**6


def test_grid_is_the_cartesian_product():
    assert ccscope.grid(a=[1, 2], b="xy") == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]


def test_spec_sweep_returns_summaries_in_order(binary_env):
    # A 120 Mbps pump through a bottleneck of rate R delivers min(120, R)
    # Mbps once the first packet has arrived, which takes 20 ms of
    # propagation plus its serialisation at 1 Gbps and at R; goodput counts
    # from the first send to the end of the 2 s run.
    rates = [30, 60, 90, 150]
    spec = {"scenario": "pump", "set": {"runtime.duration": "2s"}}
    res = ccscope.sweep(spec, {"links.bottleneck.rate": [f"{r}Mbps" for r in rates]}, processes=2, progress=False)
    assert [type(r) for r in res] == [ccscope.Summary] * 4
    got = [r.flow("f0")["goodput_bps"] / MBPS for r in res]
    want = [min(120, r) * (2 - 0.020 - 12000 / 1e9 - 12000 / (r * 1e6)) / 2 for r in rates]
    assert got == pytest.approx(want, rel=1e-4), f"goodputs {got}, want {want}"


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
    with pytest.raises(ccscope.errors.InvalidConfig):
        ccscope.sweep({"scenario": "pump"}, [{"links.bottleneck.rate": "lots"}], processes=1, progress=False)


def test_dask_sweep_matches_the_local_pool(client):
    distributed = pytest.importorskip("dask.distributed")
    spec = {"scenario": "pump", "set": {"runtime.duration": "1s"}}
    points = [{"links.bottleneck.rate": r} for r in ("20Mbps", "80Mbps")]
    local = ccscope.sweep(spec, points, processes=2, progress=False, url=client._server.url)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as dc:
            remote = ccscope.sweep(spec, points, client=dc, progress=False, url=client._server.url)
    assert [r["digest"] for r in remote] == [r["digest"] for r in local]
