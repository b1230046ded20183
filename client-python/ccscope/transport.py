"""Transports: move whole messages between the client and a server.

A transport sends and receives bytes and knows nothing of their meaning; the
:mod:`ccscope.codec` does the framing. :class:`WebSocketTransport` talks to a
real server; :class:`FakeTransport` answers from a Python function, for tests
that need no server.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from . import codec
from .errors import ConnectionLost, ProtocolVersionError, Unauthorized

__all__ = ["Transport", "WebSocketTransport", "SocketTransport", "FakeTransport"]


class Transport(Protocol):
    """What the client needs from a connection."""

    def send(self, data: bytes) -> None:
        """Send one message.

        Raises:
            ConnectionLost: The connection is closed.
        """

    def recv(self, timeout: float | None) -> bytes | None:
        """Receive one message.

        Args:
            timeout: Seconds to wait; None waits indefinitely.

        Returns:
            The message, or None when ``timeout`` passed first.

        Raises:
            ConnectionLost: The connection closed.
        """

    def close(self) -> None:
        """Close the connection (idempotent)."""


class WebSocketTransport:
    """A websocket connection (``websockets.sync.client``).

    Args:
        url: ``ws://HOST:PORT/`` or ``ws+unix://PATH`` (a ``?token=`` query is kept as given).
        token: Sent as ``Authorization: Bearer TOKEN`` when given.
        timeout: Seconds allowed for the TCP connect and websocket handshake.

    Raises:
        Unauthorized: The server answered HTTP 401 (missing or wrong token).
        ConnectionLost: The server could not be reached or refused the upgrade.
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        from websockets.exceptions import InvalidStatus, WebSocketException
        from websockets.sync.client import connect

        headers = {"Authorization": f"Bearer {token}"} if token else None
        path, ws_url = _unix_target(url)
        if path is not None:
            from websockets.sync.client import unix_connect

            connect = functools.partial(unix_connect, path)  # type: ignore[assignment]
            url = ws_url
        # Entered as a context manager (websockets ≥ 17.1 deprecates bare
        # connections); close() leaves it.
        self._stack = contextlib.ExitStack()
        try:
            self._ws = self._stack.enter_context(
                connect(
                    url,
                    additional_headers=headers,
                    open_timeout=timeout,
                    close_timeout=2.0,
                    max_size=None,  # the server bounds message sizes; results can be large Arrow streams
                    compression=None,  # Arrow bodies are binary; deflate costs more than it saves on loopback
                    **({} if path is not None else {"proxy": None}),  # never through an environment proxy
                )
            )
        except InvalidStatus as e:
            status = getattr(getattr(e, "response", None), "status_code", None)
            if status == 401:
                raise Unauthorized("unauthorized", f"the server at {_redact(url)} refused the token (HTTP 401)") from e
            raise ConnectionLost(f"ccscope: websocket upgrade to {_redact(url)} refused: HTTP {status}") from e
        except (OSError, TimeoutError, WebSocketException) as e:
            raise ConnectionLost(f"ccscope: cannot connect to {_redact(url)}: {e}") from e

    def send(self, data: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(data)
        except ConnectionClosed as e:
            raise _closed_error(e) from e

    def recv(self, timeout: float | None) -> bytes | None:
        from websockets.exceptions import ConnectionClosed

        try:
            msg = self._ws.recv(timeout=timeout)
        except TimeoutError:
            return None
        except ConnectionClosed as e:
            raise _closed_error(e) from e
        return msg if isinstance(msg, bytes) else msg.encode()

    def close(self) -> None:
        self._stack.close()


#: The close code a server sends after refusing the client's protocol version.
CLOSE_VERSION = 4000
#: The close code of a connection left with no request and no session for
#: the server's idle timeout.
CLOSE_IDLE = 4001


def _closed_error(e: Any) -> Exception:
    rcvd = getattr(e, "rcvd", None)
    if rcvd is not None and rcvd.code == CLOSE_VERSION:
        return ProtocolVersionError("version", rcvd.reason or "unsupported protocol version")
    return ConnectionLost(f"ccscope: connection closed: {_close_reason(e)}", close_code=getattr(rcvd, "code", None))


def _close_reason(e: Any) -> str:
    rcvd = getattr(e, "rcvd", None)
    if rcvd is None:
        return "no close frame (the peer went away)"
    return f"code {rcvd.code}" + (f": {rcvd.reason}" if rcvd.reason else "")


def _unix_target(url: str) -> tuple[str | None, str]:
    """For a ``ws+unix://PATH?QUERY`` URL, the socket's path and the
    ``ws://localhost/?QUERY`` the handshake names; (None, url) for others."""
    if not url.startswith("ws+unix://"):
        return None, url
    path, sep, query = url[len("ws+unix://") :].partition("?")
    return path, "ws://localhost/" + sep + query


def _redact(url: str) -> str:
    """The URL without its token, for messages."""
    head, sep, query = url.partition("?")
    if not sep:
        return url
    parts = ["token=…" if p.startswith("token=") else p for p in query.split("&")]
    return head + "?" + "&".join(parts)


Handler = Callable[[dict[str, Any]], Iterable[dict[str, Any]]]


class FakeTransport:
    """A transport that answers requests from a function, with no server.

    The handler gets each decoded request map and returns the frames to send
    back (maps; encoded with the real codec), e.g. a few pushes then the
    response. Frames may also be queued with :meth:`feed`.

    Args:
        handler: ``request -> frames``; None answers nothing.

    Attributes:
        sent: Every request the client sent, decoded, in order.
    """

    def __init__(self, handler: Handler | None = None) -> None:
        self._handler = handler
        self._inbox: collections.deque[bytes] = collections.deque()
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    def feed(self, *frames: dict[str, Any] | bytes) -> None:
        """Queue frames (maps, or raw bytes) for the client to receive."""
        for f in frames:
            self._inbox.append(f if isinstance(f, bytes) else codec.encode(f))

    def send(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionLost("ccscope: fake transport is closed")
        req = codec.decode(data)
        self.sent.append(req)
        if self._handler is not None:
            self.feed(*self._handler(req))

    def recv(self, timeout: float | None) -> bytes | None:
        if self._inbox:
            return self._inbox.popleft()
        if self.closed:
            raise ConnectionLost("ccscope: fake transport is closed")
        if timeout is not None:
            time.sleep(min(timeout, 0.01))
            return None
        raise ConnectionLost("ccscope: fake transport has nothing more to say")

    def close(self) -> None:
        self.closed = True


class SocketTransport:
    """A websocket connection on a plain blocking socket: the fast transport.

    ``ws://HOST:PORT/`` is a TCP connection; ``ws+unix://PATH`` a
    Unix-domain socket (what a private local server listens on).

    The same protocol as :class:`WebSocketTransport` (RFC 6455 over TCP,
    binary messages), written for the request–response pace of a stepping
    loop: no background thread, no event loop, ``TCP_NODELAY``, and frames
    read straight from one reused buffer. A round trip costs tens of
    microseconds of Python instead of the ~200 µs of a thread hand-off.
    Client frames carry the all-zero masking key (RFC 6455 §5.3 requires a
    key, not a random one, of a non-browser client; the XOR is then a copy,
    which Python would otherwise do byte by byte).

    Args:
        url: ``ws://HOST:PORT/PATH?QUERY``.
        token: Sent as ``Authorization: Bearer TOKEN`` when given.
        timeout: Seconds allowed for the TCP connect and the handshake.

    Raises:
        Unauthorized: The server answered HTTP 401.
        ConnectionLost: The server could not be reached or refused the upgrade.
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        import base64
        import os
        from urllib.parse import urlsplit

        path, ws_url = _unix_target(url)
        u = urlsplit(ws_url)
        if u.scheme != "ws" or not u.hostname or (path is not None and not path):
            raise ConnectionLost(f"ccscope: {_redact(url)} is not a ws://host:port/ or ws+unix://PATH URL")
        port = u.port or 80
        target = (u.path or "/") + (f"?{u.query}" if u.query else "")
        try:
            if path is not None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    self._sock.settimeout(timeout)
                    self._sock.connect(path)
                except OSError:
                    self._sock.close()
                    raise
            else:
                self._sock = socket.create_connection((u.hostname, port), timeout=timeout)
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as e:
            raise ConnectionLost(f"ccscope: cannot connect to {_redact(url)}: {e}") from e
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {target} HTTP/1.1",
            f"Host: {u.hostname}" + (f":{port}" if path is None else ""),
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        self._buf = bytearray()
        self._closed = False
        try:
            self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            while b"\r\n\r\n" not in self._buf:
                chunk = self._sock.recv(4096)
                if not chunk:
                    raise ConnectionLost(f"ccscope: {_redact(url)} closed the connection during the handshake")
                self._buf += chunk
        except OSError as e:
            self._sock.close()
            raise ConnectionLost(f"ccscope: websocket handshake with {_redact(url)} failed: {e}") from e
        head, _, rest = bytes(self._buf).partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].split(b" ")
        code = int(status[1]) if len(status) > 1 and status[1].isdigit() else 0
        if code != 101:
            self._sock.close()
            if code == 401:
                raise Unauthorized("unauthorized", f"the server at {_redact(url)} refused the token (HTTP 401)")
            raise ConnectionLost(f"ccscope: websocket upgrade to {_redact(url)} refused: HTTP {code}")
        self._buf = bytearray(rest)
        self._sock.settimeout(None)
        self._timeout: float | None = None
        self._parts: list[bytes] = []

    def send(self, data: bytes) -> None:
        n = len(data)
        if n < 126:
            head = bytes((0x82, 0x80 | n, 0, 0, 0, 0))
        elif n < 65536:
            head = bytes((0x82, 0xFE)) + n.to_bytes(2, "big") + b"\0\0\0\0"
        else:
            head = bytes((0x82, 0xFF)) + n.to_bytes(8, "big") + b"\0\0\0\0"
        try:
            self._sock.sendall(head + data if n < 4096 else head)
            if n >= 4096:
                self._sock.sendall(data)
        except OSError as e:
            raise self._send_failed(e) from e

    def _send_failed(self, e: OSError) -> ConnectionLost:
        """Why a send failed: the server's close frame if it sent one
        before closing (its code tells an idle close from others), else e."""
        try:
            while True:
                if self._frame() is None:  # raises at a close frame
                    chunk = self._read(0.05)
                    if chunk is None:
                        break
                    self._buf += chunk
        except ConnectionLost as closed:
            return closed
        return ConnectionLost(f"ccscope: connection closed: {e}")

    def recv(self, timeout: float | None) -> bytes | None:
        if self._closed:
            raise ConnectionLost("ccscope: connection closed")
        if not self._buf and not self._parts:
            # The common case of a request–response loop: nothing buffered,
            # and the next read brings exactly one whole unmasked binary
            # frame, returned without going through the buffer.
            chunk = self._read(timeout)
            if chunk is None:
                return None
            n = len(chunk)
            if n > 2 and chunk[0] == 0x82:
                size = chunk[1]
                if size < 126:
                    if n == 2 + size:
                        return chunk[2:]
                elif size == 126:
                    if n >= 4 and n == 4 + int.from_bytes(chunk[2:4], "big"):
                        return chunk[4:]
            self._buf += chunk
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            msg = self._frame()
            if msg is not None:
                return msg
            chunk = self._read(timeout)
            if chunk is None:
                return None
            self._buf += chunk
            if deadline is not None:
                timeout = max(0.0, deadline - time.monotonic())

    def _read(self, timeout: float | None) -> bytes | None:
        """One read from the socket: None if the timeout passed first.

        A timeout of 0 (a deadline reached in the middle of a long message)
        makes the socket non-blocking, where nothing to read yet is
        BlockingIOError, not socket.timeout: the message's first part stays
        buffered for the next call."""
        if timeout != self._timeout:
            self._sock.settimeout(timeout)
            self._timeout = timeout
        try:
            chunk = self._sock.recv(1 << 16)
        except (socket.timeout, BlockingIOError):
            return None
        except OSError as e:
            raise ConnectionLost(f"ccscope: connection closed: {e}") from e
        if not chunk:
            self._closed = True
            raise ConnectionLost("ccscope: connection closed: no close frame (the peer went away)")
        return chunk

    def _frame(self) -> bytes | None:
        """Take one whole message out of the buffer, answering control frames."""
        buf = self._buf
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            n, off = b1 & 0x7F, 2
            if n == 126:
                if len(buf) < 4:
                    return None
                n, off = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return None
                n, off = int.from_bytes(buf[2:10], "big"), 10
            if b1 & 0x80:
                raise ConnectionLost("ccscope: the server sent a masked frame")
            if len(buf) < off + n:
                return None
            payload = bytes(buf[off : off + n])
            del buf[: off + n]
            op = b0 & 0x0F
            if op == 0x9:  # ping
                # A pong that cannot be sent is no error of its own: the
                # server has closed, and its close frame may follow.
                with contextlib.suppress(OSError):
                    self._control(0xA, payload)
                continue
            if op == 0xA:
                continue
            if op == 0x8:
                self._closed = True
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                reason = payload[2:].decode(errors="replace")
                with contextlib.suppress(OSError):
                    self._control(0x8, payload[:2])
                if code == CLOSE_VERSION:
                    raise ProtocolVersionError("version", reason or "unsupported protocol version")
                what = f"code {code}" + (f": {reason}" if reason else "") if code is not None else "no code"
                raise ConnectionLost(f"ccscope: connection closed: {what}", close_code=code)
            self._parts.append(payload)
            if b0 & 0x80:  # FIN
                parts, self._parts = self._parts, []
                return parts[0] if len(parts) == 1 else b"".join(parts)
        return None

    def _control(self, op: int, payload: bytes) -> None:
        self._sock.sendall(bytes((0x80 | op, 0x80 | len(payload), 0, 0, 0, 0)) + payload)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(OSError):
                self._control(0x8, (1000).to_bytes(2, "big"))
        with contextlib.suppress(OSError):
            self._sock.close()
