"""Spec sweeps: what they leave behind."""

from __future__ import annotations

import tempfile

import ccscope
import pytest
from ccscope import errors

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.server

SPEC = {"scenario": "p-rtr-p", "until": "1s"}


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory, for this test alone."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_a_spec_sweep_leaves_no_temporary_directory(binary_env, private_tmp):
    cat = ccscope.sweep(SPEC, {"flows.f0.cc": ["cubic"]}, progress=False)
    assert cat["flows.f0.cc"].tolist() == ["cubic"]
    assert cat.path is None, "the catalog names a file that was removed"
    with pytest.raises(errors.InvalidConfig, match=r'^\[invalid_config\] ccscope: sweep spec: grid.seed: give seeds'):
        ccscope.sweep(SPEC, {"seed": [1, 2]}, progress=False)
    assert list(private_tmp.iterdir()) == []
