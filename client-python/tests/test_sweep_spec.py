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
