"""Transports: move whole messages between the client and a server.

A transport sends and receives bytes and knows nothing of their meaning; the
:mod:`ccscope.codec` does the framing. :class:`WebSocketTransport` talks to a
real server; :class:`FakeTransport` answers from a Python function, for tests
that need no server.
"""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from . import codec
from .errors import ConnectionLost, ProtocolVersionError, Unauthorized

__all__ = ["Transport", "WebSocketTransport", "FakeTransport"]


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
        url: ``ws://HOST:PORT/`` (a ``?token=`` query is kept as given).
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
                    proxy=None,  # never route a simulator connection through an environment proxy
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


def _closed_error(e: Any) -> Exception:
    rcvd = getattr(e, "rcvd", None)
    if rcvd is not None and rcvd.code == CLOSE_VERSION:
        return ProtocolVersionError("version", rcvd.reason or "unsupported protocol version")
    return ConnectionLost(f"ccscope: connection closed: {_close_reason(e)}")


def _close_reason(e: Any) -> str:
    rcvd = getattr(e, "rcvd", None)
    if rcvd is None:
        return "no close frame (the peer went away)"
    return f"code {rcvd.code}" + (f": {rcvd.reason}" if rcvd.reason else "")


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
