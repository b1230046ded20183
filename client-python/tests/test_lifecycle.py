"""The private server's life: start, failure to start, death mid-session, cleanup."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import ccscope
import pytest
from ccscope import errors

pytestmark = pytest.mark.server


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether process pid has exited (reaped or a zombie) within the time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def _script(tmp_path, body: str):
    p = tmp_path / "fake-ccscope"
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


def test_close_stops_the_server(binary_env):
    c = ccscope.connect()
    pid = c._server.proc.pid
    c.close()
    assert _gone(pid), f"server pid {pid} still running after close()"


def test_a_failing_block_still_stops_the_server(binary_env):
    pid = None
    with pytest.raises(RuntimeError):
        with ccscope.connect() as c:
            pid = c._server.proc.pid
            with c.open("pump"):
                raise RuntimeError("test body fails")
    assert _gone(pid), f"server pid {pid} survived a failing with-block"


def test_interpreter_exit_stops_a_forgotten_server(binary_env):
    # A script that connects, prints the server pid and exits by an uncaught
    # exception without closing anything: atexit must stop the server.
    code = textwrap.dedent(
        """
        import ccscope
        c = ccscope.connect()
        print(c._server.proc.pid, flush=True)
        raise SystemExit(3)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    pid = int(out.stdout.strip())
    assert _gone(pid), f"server pid {pid} outlived its Python process"


def test_server_killed_mid_session_raises_server_died(binary_env):
    with ccscope.connect() as c:
        s = c.open("pump")
        s.step("10ms")
        os.kill(c._server.proc.pid, signal.SIGKILL)
        with pytest.raises(errors.ServerDied) as e:
            s.run(progress=False)
        assert e.value.returncode == -signal.SIGKILL
        assert c.closed


def test_binary_that_exits_reports_its_stderr(tmp_path, monkeypatch):
    monkeypatch.setenv("CCSCOPE_BIN", str(_script(tmp_path, 'echo "listen tcp: address already in use" >&2\nexit 3\n')))
    t0 = time.monotonic()
    with pytest.raises(errors.ServerDied) as e:
        ccscope.connect(timeout=10)
    assert time.monotonic() - t0 < 5, "a dead server was waited for until the timeout"
    assert e.value.returncode == 3
    assert "address already in use" in e.value.stderr_tail
    assert "address already in use" in str(e.value)


def test_binary_that_never_announces_times_out(tmp_path, monkeypatch):
    monkeypatch.setenv("CCSCOPE_BIN", str(_script(tmp_path, 'echo "starting slowly" >&2\nexec sleep 60\n')))
    t0 = time.monotonic()
    with pytest.raises(errors.ServerDied) as e:
        ccscope.connect(timeout=1)
    assert 0.9 < time.monotonic() - t0 < 8
    assert "printed no URL line" in str(e.value) and "starting slowly" in str(e.value)


def test_missing_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("CCSCOPE_BIN", str(tmp_path / "absent"))
    with pytest.raises(errors.BinaryNotFound):
        ccscope.connect()


def test_the_package_carries_its_server_binary(monkeypatch):
    # `pip install .` compiles the server into ccscope/_bin (hatch_build.py),
    # so connect() needs nothing else.
    from pathlib import Path

    from ccscope._server import find_binary

    monkeypatch.delenv("CCSCOPE_BIN", raising=False)
    p = find_binary()
    assert p.parent == Path(ccscope.__file__).resolve().parent / "_bin", f"binary found at {p}, not in the package"
    assert os.access(p, os.X_OK)


@pytest.mark.skipif(not hasattr(__import__("socket"), "AF_UNIX"), reason="no Unix-domain sockets on this platform")
def test_private_server_listens_on_a_private_unix_socket(binary_env):
    from pathlib import Path

    c = ccscope.connect()
    try:
        assert c._url.startswith("ws+unix:///"), c._url
        sock = Path(c._url[len("ws+unix://") :].split("?")[0])
        # Only this user reaches it: the socket 0600 in a 0700 directory.
        assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        assert c.open("p-rtr-p").step("10ms").sim_time_ps == 10**10
    finally:
        c.close()
    assert not sock.parent.exists(), "the socket's directory outlived the server"


def test_private_server_on_tcp_when_asked(binary_env):
    from ccscope._server import LocalServer

    server = LocalServer(unix=False)
    try:
        assert server.url.startswith("ws://127.0.0.1:"), server.url
        with ccscope.connect(server.url) as c:
            assert c.open("p-rtr-p").step("10ms").sim_time_ps == 10**10
    finally:
        server.stop()


@pytest.mark.parametrize("transport", ["socket", "websockets"])
@pytest.mark.parametrize("unix", [True, False], ids=["unix", "tcp"])
def test_connection_closed_for_idling_is_opened_again(binary_env, transport, unix, monkeypatch):
    # The server closes a connection with no request and no session for its
    # idle timeout (code 4001, proto/README.md). The next request goes out on
    # a new connection, as if nothing had happened: nothing was lost with the
    # old one. The client saw the old one closed with 4001 and replaced it.
    if unix and not hasattr(__import__("socket"), "AF_UNIX"):
        pytest.skip("no Unix-domain sockets on this platform")
    from ccscope._server import LocalServer

    server = LocalServer(unix=unix, extra_args=("--idle-timeout", "300ms"))
    try:
        with ccscope.connect(server.url, transport=transport) as c:
            first = c.stats()["uptime_s"]
            old, codes, lost = c._transport, [], c._lost

            def record(e, context):
                codes.append(e.close_code)
                return lost(e, context)

            monkeypatch.setattr(c, "_lost", record)
            time.sleep(1.0)  # the server's idle check runs every 300 ms / 8
            s = c.open("p-rtr-p")
            assert codes == [4001] and c._transport is not old, (codes, c._transport, old)
            assert s.step("10ms").sim_time_ps == 10**10
            stats = c.stats()
            assert stats["connections"] == 1 and stats["sessions"] == 1, stats
            assert stats["uptime_s"] > first
            # A connection with a session open is never closed for idling
            # (the session itself is, after the same timeout): the session's
            # requests keep both alive.
            for _ in range(5):
                time.sleep(0.1)
                s.step("1ms")
    finally:
        server.stop()

