"""Fixtures: the server binary (built once if the package does not carry one) and clients."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import ccscope
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def server_binary(tmp_path_factory) -> Path:
    """The ccscope binary: $CCSCOPE_BIN, the packaged one, or freshly built from this checkout."""
    env = os.environ.get("CCSCOPE_BIN")
    if env:
        return Path(env)
    packaged = Path(ccscope.__file__).parent / "_bin" / "ccscope"
    if packaged.is_file():
        return packaged
    go = shutil.which("go")
    if go is None:
        pytest.fail("no ccscope binary: install the package with `pip install .` (needs Go) or set CCSCOPE_BIN")
    out = tmp_path_factory.mktemp("bin") / "ccscope"
    subprocess.run([go, "build", "-o", str(out), "./server/cmd/ccscope"], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="session")
def binary_env(server_binary, request):
    """Point connect() at the binary for the whole run (and child processes: notebooks, sweeps)."""
    old = os.environ.get("CCSCOPE_BIN")
    os.environ["CCSCOPE_BIN"] = str(server_binary)
    yield
    if old is None:
        os.environ.pop("CCSCOPE_BIN", None)
    else:
        os.environ["CCSCOPE_BIN"] = old


@pytest.fixture(scope="module")
def client(binary_env):
    """One private server and client shared by a test module."""
    with ccscope.connect() as c:
        yield c
