"""A spec sweep builds each run the same way locally (ccscope sweep) and on Dask (run_spec)."""

from __future__ import annotations

import tempfile

import ccscope
import pytest
from ccscope import errors
from ccscope.sweeps import run_spec

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.server

SPEC = {"scenario": "p-rtr-p", "until": "1s"}
CCS = {"flows.f0.cc": ["cubic", "reno"]}
COLS = ["run", "config_hash", "digest", "sim_time_ps", "seed", "flows.f0.cc"]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory, for this test alone."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_a_spec_sweep_leaves_no_temporary_directory(binary_env, private_tmp):
    cat = ccscope.sweep(SPEC, {"flows.f0.cc": "cubic"}, progress=False)
    assert cat["flows.f0.cc"].tolist() == ["cubic"], "a single value is one value, as in a spec file's grid"
    assert cat.path is None, "the catalog names a file that was removed"
    with pytest.raises(errors.InvalidConfig, match=r'^\[invalid_config\] ccscope: sweep spec: grid.seed: give seeds'):
        ccscope.sweep(SPEC, {"seed": [1, 2]}, progress=False)
    assert list(private_tmp.iterdir()) == []


def test_run_spec_is_the_run_ccscope_sweep_makes(client):
    # until is the runs' duration (the config and its hash say so), not a
    # place to stop a longer run; a point's seed, or else the spec's, is the
    # run's seed.
    spec = {**SPEC, "seed": 5}
    points = [{"flows.f0.cc": "cubic", "seed": 2}, {"flows.f0.cc": "reno"}]
    cat = ccscope.sweep(spec, points, progress=False)
    for p, (_, row) in zip(points, cat.iterrows()):
        got = run_spec(client, spec, p)
        assert (got["config_hash"], got["digest"], got["sim_time_ps"], got["seed"]) == (
            row["config_hash"], row["digest"], row["sim_time_ps"], row["seed"]), f"point {p}"  # fmt: skip
    assert cat["seed"].tolist() == [2, 5]
    # A run whose changes come after until is refused as ccscope sweep refuses it.
    with pytest.raises(errors.InvalidConfig, match=r"sweep point flows.f0.cc=cubic: .*15s is after the run ends at 2s"):
        run_spec(client, {"scenario": "leo-handover", "until": "2s"}, {"flows.f0.cc": "cubic"})
    with pytest.raises(errors.InvalidConfig, match=r"15s is after the run ends at 2s"):
        ccscope.sweep({"scenario": "leo-handover", "until": "2s"}, [{"flows.f0.cc": "cubic"}], progress=False)


def test_a_dask_spec_sweep_gives_the_local_catalog(client):
    distributed = pytest.importorskip("dask.distributed")
    local = ccscope.sweep(SPEC, CCS, progress=False)
    bad = [
        ({"scenario": "leo-handover", "until": "2s"}, CCS, "15s is after the run ends at 2s"),
        (SPEC, {"seed": [1, 2]}, 'grid.seed: give seeds in "seeds"'),
        ({**SPEC, "set": {"runtime.seed": 3}}, CCS, 'set.runtime.seed: give seeds in "seeds"'),
        (SPEC, [{"flows.f0.cc": ["cubic", "reno"]}], r"points\[0\].flows.f0.cc: one value, not a list of 2"),
        (SPEC, [{"seed": 1.5}], r"points\[0\].seed: 1.5 is not a seed"),
    ]
    for spec, params, want in bad:  # refused here, as the Go sweep refuses them
        with pytest.raises(errors.InvalidConfig, match=want):
            ccscope.sweep(spec, params, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl:
        with distributed.Client(cl) as dc:
            remote = ccscope.sweep(SPEC, CCS, client=dc, progress=False, url=client._server.url)
            for spec, params, want in bad:
                with pytest.raises(errors.InvalidConfig, match=want):
                    ccscope.sweep(spec, params, client=dc, progress=False, url=client._server.url)
    assert remote[COLS].to_dict("records") == local[COLS].to_dict("records")
    assert (remote["sim_time_ps"] == 10**12).all()


def test_a_dask_spec_sweep_takes_axes_and_seeds(client):
    # The impairment axes of a spec, each varied alone, crossed with seeds:
    # the Dask catalog has the local one's rows, axis by axis. The 10 Mbps
    # point of the rate axis is the delay axis's 19 ms point (the scenario's
    # delay): one run, catalogued under both axes, as ccscope sweep does.
    distributed = pytest.importorskip("dask.distributed")
    spec = {"scenario": "pump", "until": "300ms", "set": {"links.bottleneck.rate": "10Mbps"}}
    axes = {"links.bottleneck.rate": ["10Mbps", "20Mbps"], "links.bottleneck.delay": ["5ms", "19ms"]}
    cols = ["axis", "links.bottleneck.rate", "links.bottleneck.delay", "seed", "config_hash", "digest", "goodput_bps"]
    local = ccscope.sweep(spec, axes=axes, seeds="1-2", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl:
        with distributed.Client(cl) as dc:
            remote = ccscope.sweep(spec, axes=axes, seeds="1-2", client=dc, progress=False, url=client._server.url)
            with pytest.raises(ValueError, match="catalog= and report_dir= are files a local sweep writes"):
                ccscope.sweep(spec, axes=axes, catalog="x.parquet", client=dc, progress=False)
            with pytest.raises(errors.InvalidConfig, match='seed 2 repeats'):
                ccscope.sweep(spec, axes=axes, seeds="1-2,2", client=dc, progress=False)

    def rows(cat):
        return cat[cols].astype(object).where(cat[cols].notna(), None).to_dict("records")

    assert rows(remote) == rows(local)
    assert len(remote) == 8 and remote["config_hash"].nunique() == 6
    assert remote[remote["axis"] == "links.bottleneck.rate"]["links.bottleneck.delay"].isna().all()
    # The pump's goodput is the bottleneck's rate less the first 20 ms: 20 Mbps twice 10.
    by_rate = remote[remote["axis"] == "links.bottleneck.rate"].groupby("links.bottleneck.rate")["goodput_bps"].mean()
    assert by_rate["20Mbps"] / by_rate["10Mbps"] == pytest.approx(2, rel=0.05)
