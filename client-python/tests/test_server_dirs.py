"""A private server's socket directory goes, also after its client was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from ccscope._server import LocalServer, _running

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(os.name != "posix", reason="the private server listens on TCP without Unix sockets"),
]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory (and a child's TMPDIR), for this test alone."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    monkeypatch.setenv("TMPDIR", str(d))
    return d


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_start_removes_the_directories_of_servers_that_are_gone(binary_env, private_tmp):
    gone, live, sweep, other = (private_tmp / n for n in ("ccscope-gone", "ccscope-live", "ccscope-sweep-x", "other"))
    for d in (gone, live, sweep, other):
        d.mkdir()
    (gone / "ccscope.sock").touch()
    (gone / "server.pid").write_text(str(_dead_pid()))
    (live / "server.pid").write_text(str(os.getpid()))
    (other / "server.pid").write_text(str(_dead_pid()))
    server = LocalServer()
    try:
        mine = Path(server.url.split("://", 1)[1].split("?")[0]).parent
        assert (mine / "server.pid").read_text() == str(server.proc.pid)
        assert sorted(p.name for p in private_tmp.iterdir()) == sorted(["ccscope-live", "ccscope-sweep-x", "other",
                                                                       mine.name])  # fmt: skip
    finally:
        server.stop()
    assert not mine.exists()


def test_a_killed_clients_directory_goes_at_the_next_start(binary_env, private_tmp):
    child = subprocess.Popen(
        [sys.executable, "-c", "import ccscope, sys, time\n"
         "c = ccscope.connect()\nprint(c._server.proc.pid, c._server._sockdir, flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        pid, sockdir = child.stdout.readline().split()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 10
    while _running(int(pid)) and time.monotonic() < deadline:  # it ends as its stderr pipe breaks
        time.sleep(0.05)
    assert Path(sockdir, "ccscope.sock").exists(), "the killed client's server removed its socket itself"
    LocalServer().stop()
    assert not Path(sockdir).exists(), f"{sockdir} outlived its server"
