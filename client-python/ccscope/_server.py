"""Start and stop a private local ``ccscope serve`` process."""

from __future__ import annotations

import atexit
import collections
import os
import queue
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path

from .errors import BinaryNotFound, ServerDied

__all__ = ["LocalServer", "find_binary"]

#: The private server's directory (``tempfile.mkdtemp``'s prefix) and the
#: file in it naming the server's pid.
_DIR_PREFIX = "ccscope-"
_PID_FILE = "server.pid"

_URL_LINE = re.compile(r"^ccscope serving at (ws(?:\+unix)?://\S+)\s*$")
_STDERR_TAIL_LINES = 40


def find_binary() -> Path:
    """Locate the ccscope server binary.

    Looks, in order, at ``$CCSCOPE_BIN``, the binary compiled into this
    package at install time (``ccscope/_bin/ccscope``), and ``ccscope`` on
    ``PATH``.

    Returns:
        The binary's path.

    Raises:
        BinaryNotFound: None of them exists.
    """
    env = os.environ.get("CCSCOPE_BIN")
    if env:
        p = Path(env)
        if not p.is_file():
            raise BinaryNotFound(f"ccscope: CCSCOPE_BIN={env} is not a file")
        return p
    name = "ccscope.exe" if os.name == "nt" else "ccscope"
    packaged = Path(__file__).resolve().parent / "_bin" / name
    if packaged.is_file():
        return packaged
    on_path = shutil.which("ccscope")
    if on_path:
        return Path(on_path)
    raise BinaryNotFound(
        f"ccscope: no server binary at {packaged} (it is compiled by `pip install .`, which needs Go), "
        "none in $CCSCOPE_BIN and none on PATH; or pass a URL: ccscope.connect('ws://host:port/?token=...')"
    )


class LocalServer:
    """A ``ccscope serve`` child process for this client alone.

    Where the platform has Unix-domain sockets it listens on one in a
    private temporary directory (``--unix``; URL ``ws+unix://PATH``), which
    spares each request and response the loopback TCP stack; elsewhere on
    ``--addr 127.0.0.1:0``.

    The server's stdout is read until its URL line; stderr is drained all the
    time (so the child never blocks on a full pipe) and its tail kept for
    error messages. The process is stopped by :meth:`stop`, and at
    interpreter exit if nobody stopped it; a start removes the directories
    of servers that outlived a killed client and are gone since.

    Args:
        binary: The server binary (default: :func:`find_binary`).
        timeout: Seconds to wait for the URL line.
        extra_args: More arguments for ``serve``.
        unix: Listen on a Unix-domain socket (default: where the platform
            has them); False listens on 127.0.0.1.

    Raises:
        BinaryNotFound: No binary.
        ServerDied: The process exited or stayed silent past ``timeout``.
    """

    def __init__(
        self,
        *,
        binary: Path | None = None,
        timeout: float = 30.0,
        extra_args: tuple[str, ...] = (),
        unix: bool | None = None,
    ) -> None:
        self.binary = binary or find_binary()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._lines: queue.Queue[str | None] = queue.Queue()
        if unix is None:
            unix = hasattr(socket, "AF_UNIX") and os.name == "posix"
        try:
            self._start(unix, extra_args, timeout)
        except ServerDied as e:
            # A binary older than --unix says so at once: listen on TCP.
            if not unix or "-unix" not in (e.stderr_tail or ""):
                raise
            self.stop()
            self._stderr.clear()
            self._lines = queue.Queue()
            self._start(False, extra_args, timeout)

    def _start(self, unix: bool, extra_args: tuple[str, ...], timeout: float) -> None:
        self._sockdir: str | None = None
        if unix:
            _remove_stale_dirs(tempfile.gettempdir())
            self._sockdir = tempfile.mkdtemp(prefix=_DIR_PREFIX)  # 0700: only this user reaches the socket
            listen = ["--unix", os.path.join(self._sockdir, "ccscope.sock")]
        else:
            listen = ["--addr", "127.0.0.1:0"]
        cmd = [str(self.binary), "serve", *listen, *extra_args]
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as e:
            if self._sockdir is not None:
                shutil.rmtree(self._sockdir, ignore_errors=True)
            raise ServerDied(f"ccscope: cannot start {' '.join(cmd)}: {e}") from e
        if self._sockdir is not None:
            # For the next start to remove the directory should this client
            # die without stopping the server (kill -9): the server goes
            # then too (its stderr pipe breaks), but leaves its socket.
            Path(self._sockdir, _PID_FILE).write_text(str(self.proc.pid))
        # atexit holds only a weak reference: an unreachable server is
        # stopped by its finalizer, a forgotten one at exit.
        self._finalizer = weakref.finalize(self, _terminate, self.proc, self._sockdir)
        atexit.register(self._finalizer)
        # The readers get the pipes, not self, so an abandoned LocalServer
        # can still be collected (and its finalizer stop the process).
        threading.Thread(
            target=_pump_stdout, args=(self.proc.stdout, self._lines), daemon=True, name="ccscope-server-stdout"
        ).start()
        threading.Thread(
            target=_pump_stderr, args=(self.proc.stderr, self._stderr), daemon=True, name="ccscope-server-stderr"
        ).start()
        self.url = self._wait_for_url(timeout)

    def _wait_for_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise ServerDied(
                    f"ccscope: {self.binary} serve printed no URL line within {timeout:g} s",
                    stderr_tail=self.stderr_tail(),
                )
            try:
                line = self._lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            if line is None:
                rc = self.proc.wait()
                time.sleep(0.05)  # let the stderr reader catch up with the last lines
                raise ServerDied(
                    f"ccscope: {self.binary} serve exited with status {rc} before announcing its URL",
                    returncode=rc,
                    stderr_tail=self.stderr_tail(),
                )
            m = _URL_LINE.match(line.strip())
            if m:
                return m.group(1)

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        return "\n".join(self._stderr)

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def died(self, context: str) -> ServerDied:
        """A :class:`ServerDied` describing the exited process.

        Args:
            context: What the client was doing.

        Returns:
            The exception (not raised).
        """
        rc = self.proc.poll()
        time.sleep(0.05)
        return ServerDied(
            f"ccscope: the local server (pid {self.proc.pid}) exited with status {rc} while {context}",
            returncode=rc,
            stderr_tail=self.stderr_tail(),
        )

    def stop(self) -> None:
        """Stop the process: SIGTERM, then SIGKILL after 5 s (idempotent)."""
        self._finalizer()
        atexit.unregister(self._finalizer)


def _remove_stale_dirs(parent: str) -> None:
    """Remove this user's private-server directories whose server is gone.

    A client that dies without stopping its server (``kill -9``, a crashed
    kernel) runs no finalizer, and its directory ``ccscope-XXXX/`` with the
    server's socket stays behind. Each names its server in ``server.pid``;
    a directory whose server no longer runs is removed here, when the next
    private server starts. A directory without that file (another client's
    just being made, or one of ``ccscope sweep``'s) is left alone, as is
    one whose pid is running, whatever runs under it.
    """
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    uid = os.getuid()
    for e in entries:
        if not e.name.startswith(_DIR_PREFIX):
            continue
        try:
            if not e.is_dir(follow_symlinks=False) or e.stat(follow_symlinks=False).st_uid != uid:
                continue
            pid = int(Path(e.path, _PID_FILE).read_text())
        except (OSError, ValueError):
            continue
        if pid > 0 and not _running(pid):
            shutil.rmtree(e.path, ignore_errors=True)


def _running(pid: int) -> bool:
    """Whether a process of this id exists (a zombie counts: its parent lives and reaps it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def _pump_stdout(pipe, lines: queue.Queue) -> None:
    # Lines after the URL line are kept too: the server writes nothing else
    # there, and the queue is only read until the URL appears.
    with pipe:
        for line in pipe:
            lines.put(line)
    lines.put(None)


def _pump_stderr(pipe, tail: collections.deque) -> None:
    with pipe:
        for line in pipe:
            tail.append(line.rstrip("\n"))


def _terminate(proc: subprocess.Popen, sockdir: str | None = None) -> None:
    # The reader threads close the pipes when the process's ends reach EOF.
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if sockdir is not None:
        shutil.rmtree(sockdir, ignore_errors=True)
