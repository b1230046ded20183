"""Fixtures: the server binary (built once if the package does not carry one) and clients."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import Future, ThreadPoolExecutor
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


# The notebooks (test_notebooks.py) run in the background from the session's
# start, CCSCOPE_NOTEBOOK_JOBS at a time (default 2), while the other tests
# run; their tests come last and wait for them. One after another and after
# the rest, they were two thirds of the suite's wall time, much of it spent
# waiting (kernel start-ups, the real-time emulation of 04 and 07) with a
# core idle. Each notebook's own wall time is still held to its budget.
# "Each notebook runs top to bottom in under a minute" (STYLE.md); override on slow machines.
NOTEBOOK_BUDGET_S = float(os.environ.get("CCSCOPE_NOTEBOOK_BUDGET_S", "60"))
NOTEBOOK_JOBS = max(1, int(os.environ.get("CCSCOPE_NOTEBOOK_JOBS", "2")))


def pytest_collection_modifyitems(items):
    """The notebook tests last (a stable sort): they wait for runs that started with the session."""
    items.sort(key=lambda item: item.get_closest_marker("notebook") is not None)


def notebook_not_run_here(path: Path) -> str | None:
    """Why notebook path cannot run on this machine, or None."""
    if path.name.startswith(("04-", "07-")):
        # 04 runs the scenario on the real kernel too, 07 captures a real transfer: Linux, root, /dev/net/tun.
        why = ccscope.emulation_available()
        if why is not None:
            return f"NOTEBOOK {path.name} NOT RUN: {why}"
    return None


def _execute_notebook(path: Path, workdir: Path):
    """Run path top to bottom in a fresh kernel; return (notebook, wall seconds)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=NOTEBOOK_BUDGET_S * 2, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    t0 = time.monotonic()
    client.execute()
    return nb, time.monotonic() - t0


@pytest.fixture(scope="session", autouse=True)
def notebook_runs(request, tmp_path_factory):
    """Per selected notebook: the Future of (notebook, wall seconds), or why it does not run here."""
    selected = [
        item.callspec.params["path"]
        for item in request.session.items
        if item.get_closest_marker("notebook") is not None and hasattr(item, "callspec")
    ]
    runs: dict[Path, Future | str] = {}
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        selected = []  # test_notebooks.py skips itself
    if not selected:
        yield runs
        return
    request.getfixturevalue("binary_env")  # the kernels' servers: CCSCOPE_BIN
    mp = pytest.MonkeyPatch()
    mp.setenv("CCSCOPE_NOTEBOOK_REDUCED", "1")  # the kernels inherit it
    pool = ThreadPoolExecutor(max_workers=NOTEBOOK_JOBS, thread_name_prefix="notebook")
    # Last first: the study notebooks (04-07) are the longest.
    for path in sorted(set(selected), reverse=True):
        why = notebook_not_run_here(path)
        runs[path] = why if why is not None else pool.submit(_execute_notebook, path, tmp_path_factory.mktemp(path.stem))
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)
    mp.undo()
