"""SocketTransport against a minimal websocket peer on a Unix socket."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time

from ccscope.transport import SocketTransport


def _serve_slow_frame(path: str, payload: bytes, gap_s: float, ready: threading.Event) -> None:
    """Accept one connection, answer the upgrade, then send one binary
    frame of payload in 10 KB pieces gap_s apart."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    ready.set()
    conn, _ = srv.accept()
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += conn.recv(4096)
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    frame = bytes((0x82, 127)) + len(payload).to_bytes(8, "big") + payload
    for i in range(0, len(frame), 10_000):
        conn.sendall(frame[i : i + 10_000])
        time.sleep(gap_s)
    time.sleep(0.2)
    conn.close()
    srv.close()


def test_a_message_longer_than_the_wait_is_not_a_lost_connection():
    # The client's response loop reads with a short wait and loops while
    # recv returns None. A message still arriving when that wait ran out
    # used to reach recv() with a timeout of 0, a non-blocking socket, and
    # BlockingIOError, reported as a lost connection.
    payload = os.urandom(300_000)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ws.sock")
        ready = threading.Event()
        t = threading.Thread(target=_serve_slow_frame, args=(path, payload, 0.005, ready), daemon=True)
        t.start()
        ready.wait(5)
        tr = SocketTransport(f"ws+unix://{path}", timeout=5)
        nones, msg = 0, None
        deadline = time.monotonic() + 5
        while msg is None and time.monotonic() < deadline:
            msg = tr.recv(0.02)
            nones += msg is None
        t.join(5)
    assert msg == payload
    assert nones >= 1  # the wait ran out at least once mid-message
