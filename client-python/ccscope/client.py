"""The connection to a ccscope server: ``connect()`` and :class:`Client`."""

from __future__ import annotations

import collections
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import codec
from ._server import LocalServer
from ._version import __version__
from .codec import DataPush, ProgressPush, Response
from .errors import CcscopeError, ConnectionLost, InvalidConfig, ProtocolError, ProtocolVersionError, TooLarge
from .results import Checkpoint
from .session import Session, fork_actions
from .transport import CLOSE_IDLE, SocketTransport, Transport, WebSocketTransport

__all__ = ["connect", "Client", "DEFAULT_TIMEOUT"]

#: Seconds allowed to start a server, connect, and answer a quick request.
DEFAULT_TIMEOUT = 30.0

# How often a wait with a deadline, or for several responses, checks that
# the local server lives.
_POLL_S = 0.5


def connect(
    url: str | None = None, *, token: str | None = None, timeout: float = DEFAULT_TIMEOUT, transport: str = "socket"
) -> Client:
    """Connect to a ccscope server, starting a private one if no URL is given.

    With no ``url`` the server binary compiled into this package is started
    on a Unix-domain socket in a private directory (``ccscope serve --unix
    PATH``; ``--addr 127.0.0.1:0`` where there are none); the client reads
    the URL it prints and stops it again on :meth:`Client.close`, on leaving
    a ``with`` block, and at interpreter exit.

    Args:
        url: ``ws://HOST:PORT/`` or ``ws+unix://PATH`` of a running server
            (its ``?token=`` may be included), or None for a private local
            server.
        token: The server's token, sent as a bearer header (not needed for a
            URL that carries one, nor for a private server).
        timeout: Seconds allowed to start the server, to connect, and for each
            quick request (``open``, ``summary``, ...). ``step`` and ``run``
            take their own timeout, default unlimited.
        transport: ``"socket"`` (a websocket on a plain blocking socket,
            :class:`~ccscope.transport.SocketTransport`: the fast one) or
            ``"websockets"`` (the ``websockets`` library's sync client).

    Returns:
        A connected :class:`Client`, already past the ``hello`` handshake.

    Raises:
        BinaryNotFound: No url, and no server binary is installed.
        ServerDied: The private server could not start (its stderr is in the
            message).
        Unauthorized: The server refused the token.
        ConnectionLost: The server could not be reached.
        ProtocolVersionError: The server speaks another protocol version.
    """
    if transport not in ("socket", "websockets"):
        raise ValueError(f"ccscope.connect: transport is 'socket' or 'websockets', not {transport!r}")
    kind = SocketTransport if transport == "socket" else WebSocketTransport
    server = None
    if url is None:
        server = LocalServer(timeout=timeout)
        url = server.url
    try:
        conn = kind(url, token=token, timeout=timeout)
    except CcscopeError:
        if server is not None:
            server.stop()
        raise
    try:
        return Client(conn, timeout=timeout, server=server, url=url, token=token)
    except BaseException:
        conn.close()
        if server is not None:
            server.stop()
        raise


class Client:
    """One connection to a ccscope server; opens sessions.

    Use :func:`connect` rather than the constructor. A client is a context
    manager; leaving it closes the connection (and with it its sessions) and
    stops a private server. One client serves one thread at a time (calls
    from several threads are serialised).

    Args:
        transport: A connected :class:`~ccscope.transport.Transport`.
        timeout: Seconds for quick requests.
        server: The private server to stop on close, if any.
        url: The server's URL: for display, and to connect again when the
            server closes the connection for sitting idle.
        token: The server's token, for connecting again.

    Attributes:
        server_info: The ``hello`` result: ``version``, ``engine_version``,
            ``limits``.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        server: LocalServer | None = None,
        url: str | None = None,
        token: str | None = None,
    ) -> None:
        self._transport = transport
        self._token = token
        self._timeout = timeout
        self._server = server
        self._url = url
        self._lock = threading.RLock()
        self._next_id = 1
        self._abandoned: set[int] = set()
        self._pushes: dict[str, collections.deque[DataPush]] = collections.defaultdict(collections.deque)
        self._closed = False
        self._pack = codec.packer()  # used under the lock
        self._max_message_bytes: int | None = None  # hello's limit; none until it answers
        self.server_info: dict[str, Any] = self.call("hello", _hello_args())
        self._max_message_bytes = _message_limit(self.server_info)

    # -- context management -------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and stop a private server (idempotent).

        The server closes the connection's sessions with it.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._transport.close()
        finally:
            if self._server is not None:
                self._server.stop()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def engine_version(self) -> str:
        """The server's engine version (checkpoints replay only on the same one)."""
        return str(self.server_info.get("engine_version", ""))

    @property
    def limits(self) -> dict[str, Any]:
        """The server's limits (sessions, events, sim time, message size)."""
        return dict(self.server_info.get("limits", {}))

    def __repr__(self) -> str:
        where = "private local server" if self._server is not None else "server"
        url = self._url.split("?")[0] if self._url else "?"
        state = "closed" if self._closed else "open"
        return f"<ccscope.Client {state} {where} {url} engine {self.engine_version}>"

    # -- operations ---------------------------------------------------------

    def scenarios(self) -> list[dict[str, str]]:
        """The server's built-in scenarios.

        Returns:
            ``[{"name": ..., "description": ...}, ...]`` sorted by name.
        """
        return list(self.call("scenarios")["scenarios"])

    def ccs(self) -> list[str]:
        """The congestion controls a flow's ``cc`` may name on this server.

        Those compiled into its binary, sorted: the built-in ones and any of
        one's own (README, *Writing a congestion control*); the flow kinds
        ``pump`` and ``ping`` apart.

        Raises:
            ProtocolError: The server predates protocol 1.4, which added
                the list.
        """
        res = self.call("scenarios")
        if "ccs" not in res:
            raise ProtocolError("ccscope: this server does not list its congestion controls (protocol 1.4 added them)")
        return list(res["ccs"])

    def open(
        self,
        scenario_or_config: str | os.PathLike | Mapping[str, Any],
        *,
        seed: int | None = None,
        set: Mapping[str, Any] | Sequence[str] | None = None,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Session:
        """Open a simulation session.

        Args:
            scenario_or_config: A built-in scenario's name (``"p-rtr-p"``), a
                scenario as a dict (the JSON's shape), or the path of a
                scenario JSON file (a ``pathlib.Path``, or a ``str`` that
                ends in ``.json`` or holds a ``/``, as the command line
                tells a file from a built-in).
            seed: The run's master seed; None keeps the scenario's
                ``runtime.seed``. 0 is a seed like any other.
            set: Overrides, as ``{path: value}`` (``{"links.bottleneck.rate":
                "50Mbps", "trace.detail": "change"}``) or a list of
                ``"path=value"`` strings. An object value replaces the whole
                object: when that drops fields the scenario had, a
                ``UserWarning`` names them (``{"flows.f0.tcp": {"hz": 250}}``
                on ``wifi`` drops its ``gro_interval``; ``{"flows.f0.tcp.hz":
                250}`` changes the one field). One string is one override
                (``set="runtime.duration=5s"``).
            files: Trace and CDF file contents by the name the scenario
                gives them (``{"my.trace": text_or_bytes}``), for files
                made in memory or read elsewhere; these names are not
                looked for on disk.

        The trace and CDF files the scenario names (``"file"`` in the
        config or in ``set``) are read here, relative to the scenario file,
        or to the working directory for a dict or a built-in, and sent with
        it: the server reads no files of its own. Names that are no file
        here are left to the server's shipped traces and built-in
        distributions.

        Returns:
            The new :class:`Session`, at time 0.

        Raises:
            InvalidConfig: The scenario or an override is invalid (``path``
                names the first problem).
            NotFound: No built-in scenario of that name.
            LimitExceeded: The server has too many sessions.
            OSError: A scenario file, or a file it names, cannot be read.
            TypeError: ``set`` is not a map of paths nor a list of strings.
        """
        args: dict[str, Any] = {"seed": seed}
        base = Path.cwd()
        if isinstance(scenario_or_config, Mapping):
            args["config"] = dict(scenario_or_config)
        elif isinstance(scenario_or_config, (str, os.PathLike)) and _is_scenario_file(scenario_or_config):
            args["config"] = json.loads(Path(scenario_or_config).read_text())
            base = Path(scenario_or_config).parent
        elif isinstance(scenario_or_config, str):
            args["scenario"] = scenario_or_config
        else:
            raise TypeError(
                f"ccscope: open() takes a scenario name, a dict or a path, not {type(scenario_or_config).__name__}"
            )
        if set is not None:
            args["set"] = _overrides(set)
        if files is not None and not isinstance(files, Mapping):
            raise TypeError(f"ccscope: open(files=...) takes {{name: text or bytes}}, not {type(files).__name__}")
        given = dict(files or {})
        names = _file_names(args.get("config"), args.get("set"))
        if names or given:
            args["files"] = {**_scenario_files([n for n in names if n not in given], base), **given}
        try:
            opened = self.call("open", args)
        except InvalidConfig as e:
            missing = [str(base / n) for n in names if n not in args["files"]]
            if missing and "no file of that name was sent" in e.message:
                raise InvalidConfig(e.code, f"{e.message} (looked for {', '.join(missing)})", e.path, e.details) from None
            raise
        except TooLarge as e:
            if not args.get("files"):
                raise
            sizes = ", ".join(f"{n} {len(b) / 1e6:.1f} MB" for n, b in args["files"].items())
            raise TooLarge(e.code, f"{e.message}: the files the scenario names travel with it ({sizes}); "
                           "a server started with a larger --max-message-bytes takes them", e.path, e.details) from None
        for note in opened.get("notes") or []:
            warnings.warn(f"ccscope.open: {note}", UserWarning, stacklevel=2)
        return Session(self, opened)

    def restore(self, checkpoint: Checkpoint | Mapping[str, Any]) -> Session:
        """Open a new session by replaying a checkpoint.

        Args:
            checkpoint: A :class:`Checkpoint` (or its map).

        Returns:
            A session at the checkpoint's position.

        Raises:
            ReplayMismatch: The replay did not reproduce the checkpoint's
                digest, or it comes from another engine version.
            BadArguments: The checkpoint is malformed.
            TypeError: ``checkpoint`` is neither a Checkpoint nor a map.
        """
        return Session(self, self.call("restore", {"checkpoint": _checkpoint_map(checkpoint)}))

    def fork(self, checkpoint: Checkpoint | Mapping[str, Any], actions: Sequence[Mapping[str, Any]]) -> Session:
        """Restore a checkpoint and apply new actions at its position.

        Args:
            checkpoint: Where to branch.
            actions: One or more action maps with the keywords of
                :meth:`Session.act` (``{"link": "bottleneck", "queue_limit":
                100}``; ``dir`` defaults to ``"ab"`` for a link; a None value
                is left out, as an unset keyword). They are sent as given,
                and the server checks them. A fork needs at least one; to
                branch without actions, :meth:`restore` the checkpoint.

        Returns:
            The new session.

        Raises:
            ReplayMismatch: As for :meth:`restore`.
            BadArguments: An action is invalid (``path`` names it:
                ``actions[0].dir``).
            ValueError: No actions.
            TypeError: ``actions`` is not a list of maps.
        """
        args = {"checkpoint": _checkpoint_map(checkpoint), "actions": fork_actions(actions)}
        return Session(self, self.call("fork", args))

    def stats(self) -> dict[str, Any]:
        """Server statistics: sessions, connections, heap bytes, goroutines, uptime."""
        return self.call("stats")

    # -- the request loop ---------------------------------------------------

    def call(
        self,
        op: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None | object = ...,
        on_progress: Callable[[ProgressPush], None] | None = None,
    ) -> dict[str, Any]:
        """Send one request and wait for its response (the low-level API).

        Data pushes that arrive meanwhile are kept for their session
        (:meth:`take_pushes`); progress pushes for this request go to
        ``on_progress``.

        Args:
            op: The operation (see ``proto/README.md``).
            args: Its arguments; None values are left out.
            timeout: Seconds to wait for the response; None waits as long as
                the connection (and a private server) lives; default the
                client's timeout.
            on_progress: Called with each progress push of this request.

        Returns:
            The result map.

        Raises:
            ServerError: The server answered with an error (the subclass for
                its code).
            ConnectionLost: The connection closed, or no response came within
                ``timeout`` (the connection is then closed: its state is
                unknown).
            ServerDied: The private server exited.
            ProtocolError: The server sent something undecodable.
        """
        if timeout is ...:
            timeout = self._timeout
        request = dict(args or {})
        return self._serve(
            lambda: self._exchange(op, lambda rid: codec.encode_request(rid, op, request), timeout, on_progress)  # type: ignore[arg-type]
        )

    def _exchange(
        self,
        op: str,
        encode: Callable[[int], bytes],
        timeout: float | None,
        on_progress: Callable[[ProgressPush], None] | None = None,
    ) -> dict[str, Any]:
        """Send the request encode makes with the next id, and wait for its
        response (the lock held)."""
        return self._await(self._send_next(op, encode), op, timeout, on_progress)

    def _send_next(self, op: str, encode: Callable[[int], bytes]) -> int:
        """Send the request encode makes with the next id, within the
        server's message limit, and return the id (the lock held)."""
        data = encode(self._next_id)
        self._check_size(op, data)
        rid = self._next_id
        self._next_id += 1
        self._send(data)
        return rid

    def _check_size(self, op: str, data: bytes) -> None:
        """Refuse a request over the server's message limit before it is sent.

        The server answers an oversized message with ``too_large`` only up to
        4× its limit; beyond that it closes the connection (close code 1009),
        ending every session on it. Refusing here keeps the connection for
        any size, with the server's words.
        """
        limit = self._max_message_bytes
        if limit is not None and len(data) > limit:
            raise TooLarge(
                "too_large",
                f"message of {len(data)} bytes exceeds the limit of {limit} (hello's max_message_bytes); "
                f"the {op!r} request was not sent",
            )

    def call_cancellable(
        self,
        op: str,
        args: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: Callable[[ProgressPush], None] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """:meth:`call` for a session's ``step`` or ``run``, which Ctrl-C stops on the server.

        A KeyboardInterrupt while waiting sends ``cancel`` for
        ``args["session"]`` (a server of protocol 1.1 or later) and waits,
        up to the client's timeout, for the request's response: the server
        stops the request where it is and answers with that position.

        Args:
            op: ``"step"`` or ``"run"``.
            args: Its arguments, with ``session``.
            timeout: As for :meth:`call`; default unlimited.
            on_progress: As for :meth:`call`.

        Returns:
            The result, and whether a KeyboardInterrupt came meanwhile: the
            caller takes in the result, then raises KeyboardInterrupt.

        Raises:
            KeyboardInterrupt: Interrupted where nothing could be cancelled
                (an older server), or interrupted again while waiting.
            As for :meth:`call`.
        """
        request = dict(args)

        def attempt() -> tuple[dict[str, Any], bool]:
            rid = self._send_next(op, lambda i: codec.encode_request(i, op, request))
            try:
                return self._await(rid, op, timeout, on_progress), False
            except KeyboardInterrupt:
                if rid not in self._abandoned or not _serves_cancel(self.server_info):
                    raise  # answered meanwhile, or a server without cancel
            cancel = {"session": request["session"]}
            self._abandoned.add(self._send_next("cancel", lambda i: codec.encode_request(i, "cancel", cancel)))
            self._abandoned.discard(rid)
            return self._await(rid, op, self._timeout, None), True

        return self._serve(attempt)

    def call_encoded(self, op: str, template: codec.Template, *parts: bytes, timeout: float | None = None) -> dict[str, Any]:
        """Send a request encoded from a template and wait for its response.

        The fast form of :meth:`call` for a request sent over and over (a
        learning loop's step): the template holds the encoded request, hole
        0 its id (filled here), the other holes the values that change.

        Args:
            op: The operation, for messages.
            template: The request, with the id as hole 0.
            parts: The other holes' values, encoded (:func:`ccscope.codec.pack`).
            timeout: As for :meth:`call`; default unlimited.

        Returns:
            The result map.

        Raises:
            As for :meth:`call`.
        """
        return self._serve(lambda: self._exchange(op, lambda rid: template.fill(self._pack(rid), *parts), timeout))

    def call_ints(
        self, op: str, template: codec.IntTemplate, values: list[int], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request encoded from an integer template and wait for its response.

        The fastest form of :meth:`call`, for a learning loop's step: hole 0
        of ``template`` is the request id, the other holes integers (the
        actions) given in ``values``.

        Args:
            op: The operation, for messages.
            template: The request, with the id as hole 0.
            values: Every hole's value; ``values[0]`` is overwritten with
                the request id.
            timeout: As for :meth:`call`; default unlimited.

        Returns:
            The result map.

        Raises:
            As for :meth:`call`.
        """

        def fill(rid: int) -> bytes:
            values[0] = rid
            return template.fill(values)

        return self._serve(lambda: self._exchange(op, fill, timeout))

    def _await(
        self, rid: int, op: str, timeout: float | None, on_progress: Callable[[ProgressPush], None] | None
    ) -> dict[str, Any]:
        """Read frames until the response to ``rid`` (the lock held)."""
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        answered = False
        try:
            while True:
                # Without a deadline the read blocks: the connection ends
                # when the server does (its socket closes with the process),
                # and a timed read costs a poll() before every recv().
                wait = None if deadline is None else max(min(_POLL_S, deadline - time.monotonic()), 0.0)
                data = self._recv(wait, context=f"waiting for the response to {op!r}")
                if data is None:
                    if deadline is not None and time.monotonic() >= deadline:
                        self.close()
                        raise ConnectionLost(f"ccscope: no response to {op!r} within {timeout:g} s; connection closed")
                    continue
                if type(data) is str:
                    codec.decode_frame(data)  # raises: the protocol is binary
                msg = codec.decode(data)
                # The common case first: this request's success, read
                # without building a Response.
                if type(msg) is dict and msg.get("ok") is True and msg.get("id") == rid and type(msg["id"]) is int:
                    result = msg.get("result") or {}
                    if type(result) is dict:
                        answered = True
                        return result
                frame = codec.frame_from_map(msg)
                if isinstance(frame, Response):
                    if frame.id == rid or (frame.id is None and not frame.ok):
                        answered = True
                        if frame.ok:
                            return frame.result
                        exc = frame.exception()
                        if isinstance(exc, ProtocolVersionError):
                            self.close()  # the server closes the connection after refusing
                        raise exc
                    if frame.id in self._abandoned:
                        self._abandoned.discard(frame.id)
                        continue
                    raise ProtocolError(f"ccscope: response to request {frame.id}, expected {rid}")
                if isinstance(frame, ProgressPush):
                    if on_progress is not None and frame.request == rid:
                        on_progress(frame)
                    continue
                self._pushes[frame.session].append(frame)
        finally:
            # Interrupted (Ctrl-C in a notebook): the response still comes
            # later and must not be taken for the next request's.
            if not answered:
                self._abandoned.add(rid)

    def call_many(self, requests: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
        """Send several requests at once, then wait for all their responses.

        Requests to different sessions run concurrently on the server (each
        session has its own goroutine), so N sessions step in parallel in
        one round trip's time. Data pushes meanwhile are kept as for
        :meth:`call`.

        Args:
            requests: ``(op, args)`` pairs.

        Returns:
            The result maps, in the order of ``requests``.

        Raises:
            ServerError: One of the requests failed (the first failure in
                request order, after every response has arrived).
            ConnectionLost: The connection closed.
        """
        out = self._serve(lambda: self._call_many(requests))
        for f in out:
            if not f.ok:
                raise f.exception()
        return [f.result for f in out]

    def _call_many(self, requests: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Response]:
        """call_many's requests and responses (the lock held)."""
        first = self._next_id
        encoded = [codec.encode_request(first + i, op, dict(args)) for i, (op, args) in enumerate(requests)]
        for (op, _), data in zip(requests, encoded):
            self._check_size(op, data)  # all before any is sent: none is then half answered
        self._next_id += len(requests)
        for data in encoded:
            self._send(data)
        out: list[Any] = [None] * len(requests)
        pending = len(requests)
        try:
            while pending:
                data = self._recv(_POLL_S, context="waiting for responses")
                if data is None:
                    continue
                frame = codec.decode_frame(data)
                if isinstance(frame, Response):
                    i = -1 if frame.id is None else frame.id - first
                    if 0 <= i < len(requests) and out[i] is None:
                        out[i] = frame
                        pending -= 1
                        continue
                    if frame.id in self._abandoned:
                        self._abandoned.discard(frame.id)
                        continue
                    raise ProtocolError(f"ccscope: response to request {frame.id}, expected {first}…")
                if isinstance(frame, ProgressPush):
                    continue
                self._pushes[frame.session].append(frame)
        finally:
            if pending:
                self._abandoned.update(first + i for i, f in enumerate(out) if f is None)
        return out

    def take_pushes(self, session: str) -> list[DataPush]:
        """Remove and return the data pushes received so far for a session.

        Args:
            session: The session id.

        Returns:
            The pushes in arrival order.
        """
        with self._lock:
            q = self._pushes.pop(session, None)
        return list(q) if q else []

    def _send(self, data: bytes) -> None:
        try:
            self._transport.send(data)
        except ConnectionLost as e:
            raise self._lost(e, "sending a request") from e
        except ProtocolVersionError:
            self.close()
            raise

    def _recv(self, timeout: float | None, *, context: str) -> bytes | None:
        try:
            data = self._transport.recv(timeout)
        except ConnectionLost as e:
            raise self._lost(e, context) from e
        except ProtocolVersionError:
            self.close()
            raise
        if data is None and self._server is not None and not self._server.alive():
            err = self._server.died(context)
            self.close()
            raise err
        return data

    def _serve(self, attempt: Callable[[], Any]) -> Any:
        """Run attempt (requests and their responses) under the lock, on an
        open client, through the idle retry."""
        with self._lock:
            if self._closed:
                raise ConnectionLost("ccscope: the client is closed")
            return self._idle_retry(attempt)

    def _idle_retry(self, attempt: Callable[[], Any]) -> Any:
        """Run attempt (a request and its response; the lock held), once more
        on a new connection if the server had closed this one for sitting
        idle (close code 4001).

        The server closes a connection that had no request and no session
        for its idle timeout (30 min by default): a notebook left open over
        lunch. Nothing is lost with it (a connection's sessions close with
        it, and it had none), and the request was never served, so it is
        sent again.
        """
        try:
            return attempt()
        except _IdleClosed:
            self._reconnect()
        try:
            return attempt()
        except _IdleClosed as e:
            self.close()
            raise ConnectionLost(str(e), close_code=e.close_code) from e

    def _reconnect(self) -> None:
        """A new connection to the same server, past its hello."""
        self._transport.close()
        self._transport = type(self._transport)(self._url, token=self._token, timeout=self._timeout)  # type: ignore[call-arg]
        self._abandoned.clear()
        self._pushes.clear()
        self.server_info = self._exchange("hello", lambda rid: codec.encode_request(rid, "hello", _hello_args()), self._timeout)
        self._max_message_bytes = _message_limit(self.server_info)

    def _lost(self, e: ConnectionLost, context: str) -> CcscopeError:
        if e.close_code == CLOSE_IDLE and self._url is not None and (self._server is None or self._server.alive()):
            return _IdleClosed(str(e), close_code=e.close_code)
        err: CcscopeError = e
        if self._server is not None:
            # A connection lost because the private server died says so.
            for _ in range(20):
                if not self._server.alive():
                    err = self._server.died(context)
                    break
                time.sleep(0.025)
            else:
                # It lives and closed the connection: its log says why.
                tail = "\n".join(self._server.stderr_tail().splitlines()[-5:])
                err = ConnectionLost(f"{e} while {context}; the private server's last log lines:\n{tail}", close_code=e.close_code)
        self.close()
        return err


def _is_scenario_file(scenario: Any) -> bool:
    """Whether scenario names a scenario file, as the command line tells one
    from a built-in's name (run.go's isScenarioFile); its trace and CDF
    files are relative to it."""
    if isinstance(scenario, Mapping):
        return False
    s = os.fspath(scenario)
    return isinstance(scenario, os.PathLike) or s.endswith(".json") or "/" in s or "\\" in s


def _file_names(config: Any, set: Mapping[str, Any] | Sequence[str] | None = None) -> list[str]:
    """The file names a scenario gives: every ``"file"`` value in the config
    (a direction's trace, a group's size CDF) and in the overrides, in order."""
    names: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, Mapping):
            for k in sorted(v):
                if k == "file" and isinstance(v[k], str) and v[k] not in names:
                    names.append(v[k])
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(config)
    pairs: list[tuple[str, Any]] = []
    if isinstance(set, Mapping):
        pairs = list(set.items())
    elif set is not None:
        for o in set:
            path, _, text = str(o).partition("=")
            try:
                value: Any = json.loads(text)
            except ValueError:
                value = text
            pairs.append((path, value))
    for path, value in pairs:
        walk({path.rsplit(".", 1)[-1]: value})
    return names


def _scenario_files(names: Sequence[str], base: Path) -> dict[str, bytes]:
    """Those of a scenario's file names (:func:`_file_names`) that are files
    relative to ``base`` (the scenario file's directory, or the working
    directory for a dict), read, by the names the scenario gives them: the
    server reads none of its own disk (``open``'s ``files``). Other names are
    left to the server, which knows the shipped traces and built-in
    distributions, and says which it cannot find."""
    out: dict[str, bytes] = {}
    for name in names:
        p = base / name
        if p.is_file():
            out[name] = p.read_bytes()
    return out


def _serves_cancel(hello: Mapping[str, Any]) -> bool:
    """Whether a server's hello says it has the cancel op (protocol 1.1)."""
    try:
        major, minor = (int(p) for p in str(hello.get("version", "")).split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (1, 1)


def _hello_args() -> dict[str, Any]:
    return {"version": codec.PROTOCOL_VERSION, "client": f"ccscope-python/{__version__}"}


def _overrides(set: Any) -> dict[str, Any] | list[str]:
    """open's ``set`` as the server takes it: a map of paths, or a list of
    ``"path=value"`` strings, of which one string is one."""
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        bad = next((k for k in set if not isinstance(k, str)), None)
        if bad is not None:
            raise TypeError(f"ccscope: open(set=...) has the key {bad!r}; a key is a path such as 'runtime.duration'")
        return dict(set)
    if isinstance(set, (bytes, bytearray)) or not isinstance(set, Iterable):
        raise TypeError(
            f"ccscope: open(set=...) is {{path: value}} or a list of 'path=value' strings, not {type(set).__name__}"
        )
    out = list(set)
    for i, o in enumerate(out):
        if not isinstance(o, str):
            raise TypeError(f"ccscope: open(set=...)[{i}] is {o!r}, not a 'path=value' string")
    return out


def _message_limit(info: Mapping[str, Any]) -> int | None:
    """hello's ``max_message_bytes``, or None from a server that reports none."""
    limit = (info.get("limits") or {}).get("max_message_bytes")
    return limit if type(limit) is int and limit > 0 else None


def _checkpoint_map(c: Checkpoint | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(c, Checkpoint):
        return dict(c.data)
    if not isinstance(c, Mapping):
        raise TypeError(
            f"ccscope: checkpoint is a Checkpoint (Session.checkpoint()) or its map, not {type(c).__name__}"
        )
    return dict(c)


class _IdleClosed(ConnectionLost):
    """The server closed the connection for sitting idle; the client is still open."""
