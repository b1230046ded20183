"""The exceptions ccscope raises, all in one tree.

::

    CcscopeError                      every error this package raises
    ├── ServerError                   the server refused or failed a request (.code, .message, .path)
    │   ├── InvalidRequest            malformed request ("bad_request")
    │   │   ├── UnknownOp             no such operation ("unknown_op")
    │   │   └── BadArguments          an argument is missing, unknown, mistyped or out of range ("bad_args")
    │   ├── InvalidConfig             the scenario or an override is invalid ("invalid_config")
    │   ├── NotFound                  no such session, scenario, table, flow or link ("not_found")
    │   ├── LimitExceeded             a server limit was reached: sessions, events, sim time ("limit")
    │   │   ├── TooLarge              a message exceeded the maximum size ("too_large")
    │   │   └── Busy                  the session's request queue is full ("busy")
    │   ├── ReplayMismatch            a restore did not reproduce the checkpoint's digest ("replay_mismatch")
    │   ├── ProtocolVersionError      the server does not speak this protocol version ("version")
    │   ├── Unauthorized              the server refused the token (HTTP 401 at connect; "unauthorized")
    │   └── InternalError             a server bug; the session that hit it is closed ("internal")
    ├── ProtocolError                 the server sent a frame the client cannot decode
    ├── ConnectionLost                the websocket closed or timed out mid-conversation
    ├── ServerDied                    the private local server exited (its stderr tail is attached)
    ├── BinaryNotFound                no ccscope server binary to start
    └── EmulationError                `ccscope compare` / emulation failed or cannot run here (.stderr)

Catch :class:`CcscopeError` to handle everything, :class:`ServerError` for
refusals (``err.code``, ``err.message``, ``err.path``), and the transport
errors (:class:`ConnectionLost`, :class:`ServerDied`) to retry or restart.
"""

from __future__ import annotations

__all__ = [
    "CcscopeError",
    "ServerError",
    "InvalidRequest",
    "InvalidConfig",
    "NotFound",
    "LimitExceeded",
    "ReplayMismatch",
    "ProtocolVersionError",
    "Unauthorized",
    "UnknownOp",
    "BadArguments",
    "TooLarge",
    "Busy",
    "InternalError",
    "ProtocolError",
    "ConnectionLost",
    "ServerDied",
    "BinaryNotFound",
    "EmulationError",
    "error_from_frame",
]


class CcscopeError(Exception):
    """Base class of every error raised by ccscope."""


class ServerError(CcscopeError):
    """The server refused or failed a request.

    Attributes:
        code: The protocol's error code (e.g. ``"invalid_config"``).
        message: The server's human-readable reason.
        path: Where the problem is, e.g. the config path
            ``"links.bottleneck.rate"``; empty when not applicable.
        details: Any further fields the error frame carried (e.g. the list of
            every config error).
    """

    #: The protocol error code this class stands for (subclasses set it).
    code_name: str = ""

    def __init__(self, code: str, message: str, path: str = "", details: dict | None = None) -> None:
        self.code = code
        self.message = message
        self.path = path
        self.details = dict(details or {})
        # Server messages usually start with the path already.
        where = f" (at {path})" if path and path not in message else ""
        super().__init__(f"[{code}] {message}{where}")

    def __reduce__(self):
        # Picklable with its fields, so sweeps can carry it out of a worker.
        return (type(self), (self.code, self.message, self.path, self.details))


class InvalidRequest(ServerError):
    """The request was malformed, named an unknown op or had a bad argument."""

    code_name = "bad_request"


class UnknownOp(InvalidRequest):
    """The operation is not part of the server's protocol version."""

    code_name = "unknown_op"


class BadArguments(InvalidRequest):
    """An argument is missing, unknown, of the wrong type or out of range.

    ``path`` names it (``"time"``, ``"action.rate"``).
    """

    code_name = "bad_args"


class InvalidConfig(ServerError):
    """The scenario or an override (``set=``) is invalid.

    ``path`` is the first problem's path; ``details["details"]`` lists every
    problem as ``{"path", "reason"}``.
    """

    code_name = "invalid_config"


class NotFound(ServerError):
    """No such scenario, session, table, flow, link or signal."""

    code_name = "not_found"


class LimitExceeded(ServerError):
    """A server limit was reached (sessions, events, sim time); the message names it."""

    code_name = "limit"


class TooLarge(LimitExceeded):
    """A message exceeded the server's maximum message size."""

    code_name = "too_large"


class Busy(LimitExceeded):
    """The session's request queue is full."""

    code_name = "busy"


class ReplayMismatch(ServerError):
    """Restoring a checkpoint replayed to a different digest than recorded.

    The checkpoint comes from another engine version or a different config.
    """

    code_name = "replay_mismatch"


class ProtocolVersionError(ServerError):
    """The client and server speak incompatible protocol versions.

    Raised for a ``version`` error frame and for a connection the server
    closes with code 4000 after refusing the ``hello``.
    """

    code_name = "version"


class Unauthorized(ServerError):
    """The server refused the token (HTTP 401 before the websocket upgrade)."""

    code_name = "unauthorized"


class InternalError(ServerError):
    """A bug in the server; the session that hit it is closed, others go on."""

    code_name = "internal"


class ProtocolError(CcscopeError):
    """The server sent a frame this client cannot decode."""


class ConnectionLost(CcscopeError):
    """The websocket connection closed or timed out.

    Attributes:
        close_code: The code of the server's close frame (4001: the
            connection sat idle), or None when none was received.
    """

    def __init__(self, message: str, *, close_code: int | None = None) -> None:
        super().__init__(message)
        self.close_code = close_code


class ServerDied(CcscopeError):
    """The private local server process exited or could not start.

    Attributes:
        returncode: The process's exit status (None if it is still running
            but never announced its URL).
        stderr_tail: The last lines the server wrote to stderr.
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr_tail: str = "") -> None:
        self.message = message
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        text = message
        if stderr_tail:
            text += "\n--- server stderr (tail) ---\n" + stderr_tail
        super().__init__(text)

    def __reduce__(self):
        return (_server_died, (self.message, self.returncode, self.stderr_tail))


def _server_died(message: str, returncode: int | None, stderr_tail: str) -> ServerDied:
    return ServerDied(message, returncode=returncode, stderr_tail=stderr_tail)


class BinaryNotFound(CcscopeError):
    """No ccscope server binary to start for ``connect()`` without a URL."""


class EmulationError(CcscopeError):
    """An emulated run (``ccscope.compare``) failed or cannot run here.

    Attributes:
        returncode: The ``ccscope`` command's exit status (None: not run,
            e.g. not root or no TUN device).
        stderr: What the command wrote to stderr: every reason it gave.
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "") -> None:
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(message)

    def __reduce__(self):
        return (_emulation_error, (str(self), self.returncode, self.stderr))


def _emulation_error(message: str, returncode: int | None, stderr: str) -> EmulationError:
    return EmulationError(message, returncode=returncode, stderr=stderr)


_BY_CODE: dict[str, type[ServerError]] = {
    cls.code_name: cls
    for cls in (
        InvalidRequest,
        UnknownOp,
        BadArguments,
        InvalidConfig,
        NotFound,
        LimitExceeded,
        TooLarge,
        Busy,
        ReplayMismatch,
        ProtocolVersionError,
        Unauthorized,
        InternalError,
    )
}


def error_from_frame(code: str, message: str, path: str = "", details: dict | None = None) -> ServerError:
    """Build the ServerError subclass for an error frame's code.

    Args:
        code: The frame's error code.
        message: The frame's message.
        path: The frame's path, if any.
        details: Remaining fields of the error.

    Returns:
        An instance of the subclass registered for ``code``, or of
        :class:`ServerError` itself for a code this client does not know.
    """
    cls = _BY_CODE.get(code, ServerError)
    return cls(code, message, path, details)
